// flags: --blockDim=256 --gridDim=4 --warp-sync=32
// expect: alpine::races::race
// line: 18
// Mutant: the tail started with 64 threads, which cross from warp 0 into warp 1:
// thread 8 reads sdata[40] while thread 40, in another warp, writes it.
__global__ void reduce_tail(int *in, int *out) {
    __shared__ volatile int sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 64; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 64) {
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
