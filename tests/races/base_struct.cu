// flags: --blockDim=64 --gridDim=8
// expect: verified
// A pointer field of a struct kernel argument reached through C++'s
// derived-to-base conversion is the base's field: its own array.
struct s {
  float *p;
};
struct t : s {
  int n;
};
__global__ void k(t q) {
  q.p[threadIdx.x + blockIdx.x * blockDim.x] = 4.2f;
}
