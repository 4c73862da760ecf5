// flags: --blockDim=256 --gridDim=4
// expect: alpine::races::race
// line: 7
// Mutant: one of the operations the pointer may call writes its neighbour.
typedef void (*op_t)(float *, unsigned int);
__device__ void scale(float *v, unsigned int i) { v[i] = v[i] * 2.0f; }
__device__ void clear(float *v, unsigned int i) { v[i + 1] = v[i]; }
__global__ void apply(float *v, int which) {
    op_t f = which == 0 ? scale : clear;
    (*f)(v, blockIdx.x * blockDim.x + threadIdx.x);
}
