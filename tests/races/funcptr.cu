// flags: --blockDim=64 --gridDim=1
// expect: verified
// A call through a function pointer: the checker follows it into `twice`.
__device__ int twice(int x) { return 2 * x; }
__global__ void k(int *out) {
    int (*f)(int) = twice;
    out[threadIdx.x] = f(threadIdx.x);
}
