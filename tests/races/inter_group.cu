// flags: --blockDim=32 --gridDim=2
// expect: alpine::races::race
// Threads of different blocks write the same elements of global memory.
__global__ void k(int *out) {
    out[threadIdx.x] = blockIdx.x;
}
