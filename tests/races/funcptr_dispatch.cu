// flags: --blockDim=256 --gridDim=4
// expect: verified
// A kernel that picks an operation by a parameter and calls it through a
// pointer: each candidate is checked for the threads that call it.
typedef void (*op_t)(float *, unsigned int);
__device__ void scale(float *v, unsigned int i) { v[i] = v[i] * 2.0f; }
__device__ void clear(float *v, unsigned int i) { v[i] = 0.0f; }
__global__ void apply(float *v, int which) {
    op_t f = which == 0 ? scale : clear;
    (*f)(v, blockIdx.x * blockDim.x + threadIdx.x);
}
