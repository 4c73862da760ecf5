// flags: --blockDim=64 --gridDim=1
// expect: alpine::races::unsupported
__device__ int twice(int x) { return 2 * x; }
__global__ void k(int *out) {
    int (*f)(int) = twice;
    out[threadIdx.x] = f(threadIdx.x);
}
