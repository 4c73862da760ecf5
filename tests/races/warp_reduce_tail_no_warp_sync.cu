// flags: --blockDim=256 --gridDim=4
// expect: alpine::races::race
// line: 19
// Mutant: the warp-synchronous tail without --warp-sync. Lanes of one warp
// are not assumed to run in lock-step, so the tail races.
__global__ void reduce_tail(int *in, int *out) {
    __shared__ volatile int sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        sdata[tid] += sdata[tid + 32];
        sdata[tid] += sdata[tid + 16];
        sdata[tid] += sdata[tid + 8];
        sdata[tid] += sdata[tid + 4];
        sdata[tid] += sdata[tid + 2];
        sdata[tid] += sdata[tid + 1];
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
