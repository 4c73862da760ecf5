// flags: --blockDim=64 --gridDim=2
// expect: alpine::races::barrier_divergence
// Mutant: the barrier under a thread-dependent condition.
__global__ void k(int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 32) {
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[63 - threadIdx.x];
}
