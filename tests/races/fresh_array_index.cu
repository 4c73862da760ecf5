// flags: --blockDim=64 --gridDim=8
// expect: alpine::races::unsupported
// line: 11
// Mutant of fresh_array.cu: the array is also reached at a computed index,
// which could be 4 (refused: it would bypass the fresh element).
struct s {
  float *p[8];
};
__global__ void k(s q, int j) {
  __requires_fresh_array(q.p[4]);
  q.p[j] = q.p[0];
  q.p[4][threadIdx.x + blockIdx.x * blockDim.x] = 4.2f;
}
