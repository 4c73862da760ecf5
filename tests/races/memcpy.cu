// flags: --blockDim=64 --gridDim=4
// expect: verified
// memcpy of a constant size: the bytes each thread copies and clears are its
// own element's.
typedef struct {
  short x;
  short y;
} pair_t;
__global__ void k(pair_t *in, pair_t *out, pair_t *zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __builtin_memcpy(&out[i], &in[i], sizeof(pair_t));
  __builtin_memset(&zero[i], 0, sizeof(pair_t));
}
