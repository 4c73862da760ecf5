// flags: --blockDim=64 --gridDim=2
// expect: verified
// A barrier under a condition that is the same for a whole block.
__global__ void k(int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (blockIdx.x < 1) {
        __syncthreads();
        out[blockIdx.x * blockDim.x + threadIdx.x] = s[63 - threadIdx.x];
    }
}
