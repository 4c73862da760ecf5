// flags: --blockDim=1024 --gridDim=1
// expect: verified
// A loop whose stride is a parameter that a precondition fixes to the block
// size: each thread keeps its own residue class.
__global__ void k(float *A, int sz) {
  __requires(sz == blockDim.x);
  for (int i = threadIdx.x; i < 100 * sz; i += sz) {
    A[i] *= 2.0f;
  }
}
