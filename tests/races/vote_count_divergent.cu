// flags: --blockDim=128 --gridDim=4
// expect: alpine::races::barrier_divergence
// line: 8
// Mutant: __syncthreads_count is a barrier of the block, here under a
// thread-dependent condition.
__global__ void vote(const int *in, int *out) {
    unsigned int tid = threadIdx.x;
    int n = tid < 64 ? __syncthreads_count(in[tid] > 0) : 0;
    out[blockIdx.x * blockDim.x + tid] = n;
}
