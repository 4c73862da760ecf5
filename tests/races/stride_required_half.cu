// flags: --blockDim=1024 --gridDim=1
// expect: alpine::races::race
// line: 9
// Mutant of stride_required.cu: the stride is half the block, so thread t and
// thread t + 512 meet.
__global__ void k(float *A, int sz) {
  __requires(sz == blockDim.x / 2);
  for (int i = threadIdx.x; i < 100 * sz; i += sz) {
    A[i] *= 2.0f;
  }
}
