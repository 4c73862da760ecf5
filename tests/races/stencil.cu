// flags: --blockDim=128 --gridDim=8
// expect: verified
// Each thread stages one element, then reads its right neighbour.
#define N 128
__global__ void stencil(const float *in, float *out) {
    __shared__ float tile[N];
    unsigned tid = threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x + tid;
    tile[tid] = in[gid];
    __syncthreads();
    out[gid] = tile[tid] + tile[(tid + 1) % N];
}
