// flags: --blockDim=64 --gridDim=8
// expect: alpine::races::race
// line: 11
// Mutant of fresh_array.cu: every thread writes its id to the same element.
struct s {
  float *p[8];
};
__global__ void k(s q) {
  __requires_fresh_array(q.p[4]);
  int i = threadIdx.x;
  q.p[4][0] = i;
}
