// flags: --blockDim=64 --gridDim=8
// expect: alpine::races::race
// line: 12
// Mutant of base_struct.cu: every block writes its own id to the same elements.
struct s {
  float *p;
};
struct t : s {
  int n;
};
__global__ void k(t q) {
  q.p[threadIdx.x] = blockIdx.x;
}
