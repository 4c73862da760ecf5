// flags: --blockDim=64 --gridDim=8
// expect: alpine::races::pointer
// line: 10
// Mutant of fresh_array.cu: without `__requires_fresh_array` nothing says
// where the element points.
struct s {
  float *p[8];
};
__global__ void k(s q) {
  q.p[4][threadIdx.x + blockIdx.x * blockDim.x] = 4.2f;
}
