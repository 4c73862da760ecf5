// flags: --blockDim=128 --gridDim=8
// expect: alpine::races::race
// Mutant of stencil.cu: the staging write shifted by one (two threads write
// the same element with different values).
#define N 128
__global__ void stencil(const float *in, float *out) {
    __shared__ float tile[N + 1];
    unsigned tid = threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x + tid;
    tile[tid] = in[gid];
    tile[tid + 1] = in[gid];
    __syncthreads();
    out[gid] = tile[tid] + tile[(tid + 1) % N];
}
