// flags: --blockDim=256 --gridDim=4 --warp-sync=32
// expect: verified
// The warp-synchronous tail of a tree reduction (the CUDA samples' reduce4,
// written for GPUs before Volta): the last 64 partial sums are added by the
// 32 lanes of warp 0 without barriers, relying on lock-step execution.
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
