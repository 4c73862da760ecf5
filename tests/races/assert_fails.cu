// flags: --blockDim=64 --gridDim=1
// expect: alpine::races::assert
__global__ void k(int *out) {
    __assert(threadIdx.x < 32);
    out[threadIdx.x] = 0;
}
