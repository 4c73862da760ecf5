// flags: --blockDim=64 --gridDim=4
// expect: alpine::races::race
// line: 13
// Mutant of memcpy.cu: a thread copies from the element its neighbour
// clears, with no barrier between.
typedef struct {
  short x;
  short y;
} pair_t;
__global__ void k(pair_t *in, pair_t *out, pair_t *zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __builtin_memcpy(&out[i], &zero[i + 1], sizeof(pair_t));
  __builtin_memset(&zero[i], 0, sizeof(pair_t));
}
