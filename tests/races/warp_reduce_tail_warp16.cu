// flags: --blockDim=256 --gridDim=4 --warp-sync=16
// expect: alpine::races::race
// line: 19
// Mutant: warps of 16 lanes. Lanes 0-15 and 16-31 are two warps, which are not
// in lock-step with each other: lane 5 reads sdata[21] as thread 21 writes it.
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
