// flags: --blockDim=128 --gridDim=4
// expect: verified
// __syncthreads_count's value is the same in every thread of the block, and
// __all_sync's in every lane of a warp: barriers under them are not divergent.
__global__ void vote(const int *in, int *out) {
    __shared__ int s[128];
    unsigned int tid = threadIdx.x;
    int n = __syncthreads_count(in[blockIdx.x * blockDim.x + tid] > 0);
    if (n > 0) {
        s[tid] = n;
        __syncthreads();
        out[blockIdx.x * blockDim.x + tid] = s[127 - tid];
    }
    if (__all_sync(0xffffffff, in[blockIdx.x * blockDim.x + tid] > 0)) {
        __syncwarp();
    }
}
