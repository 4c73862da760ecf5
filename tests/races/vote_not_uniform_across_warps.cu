// flags: --blockDim=128 --gridDim=4
// expect: alpine::races::barrier_divergence
// line: 9
// Mutant: __all_sync's value is the same within a warp only; a block barrier
// under it may be reached by some warps and not others.
__global__ void vote(const int *in, int *out) {
    unsigned int tid = threadIdx.x;
    if (__all_sync(0xffffffff, in[blockIdx.x * blockDim.x + tid] > 0)) {
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + tid] = 1;
}
