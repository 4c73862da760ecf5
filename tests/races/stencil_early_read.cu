// flags: --blockDim=128 --gridDim=8
// expect: alpine::races::race
// Mutant of stencil.cu: the neighbour is read before the barrier.
#define N 128
__global__ void stencil(const float *in, float *out) {
    __shared__ float tile[N];
    unsigned tid = threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x + tid;
    tile[tid] = in[gid];
    float right = tile[(tid + 1) % N];
    __syncthreads();
    out[gid] = tile[tid] + right;
}
