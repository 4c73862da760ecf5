// flags: --blockDim=256 --gridDim=4
// expect: alpine::races::pointer
// line: 10
// Mutant: the pointer is null for some parameter values (no function to call).
typedef void (*op_t)(float *, unsigned int);
__device__ void scale(float *v, unsigned int i) { v[i] = v[i] * 2.0f; }
__device__ void clear(float *v, unsigned int i) { v[i] = 0.0f; }
__global__ void apply(float *v, int which) {
    op_t f = which == 0 ? scale : which == 1 ? clear : (op_t)0;
    (*f)(v, blockIdx.x * blockDim.x + threadIdx.x);
}
