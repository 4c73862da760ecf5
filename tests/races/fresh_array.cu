// flags: --blockDim=64 --gridDim=8
// expect: verified
// `__requires_fresh_array` on an element of a pointer array inside a struct
// argument: that element points to an array of its own.
struct s {
  float *p[8];
};
__global__ void k(s q) {
  __requires_fresh_array(q.p[4]);
  q.p[4][threadIdx.x + blockIdx.x * blockDim.x] = 4.2f;
}
