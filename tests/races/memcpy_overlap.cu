// flags: --blockDim=64 --gridDim=4
// expect: alpine::races::race
// line: 12
// Mutant of memcpy.cu: each thread copies two elements, so neighbours
// overlap.
typedef struct {
  short x;
  short y;
} pair_t;
__global__ void k(pair_t *in, pair_t *out, pair_t *zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __builtin_memcpy(&out[i], &in[i], 2 * sizeof(pair_t));
}
