// A[i] = 0 over a grid of blocks of any size, one element per thread indexed by
// the global id, with the functional postcondition over the whole array (the
// method's contract quantifies over blocks and threads: b = i div blockDim.x).
// Sizes stay symbolic, so the race checker is left out: for it `blockIdx.x *
// blockDim.x` is C's unsigned product, which wraps past 2^32 threads (a real race
// there); the permission proof assumes the launch bound gridDim × blockDim ≤ INT_MAX.
//:: flags --no-race-check
#include <cuda.h>

/*@
  context_everywhere A != NULL && A.length == gridDim.x * blockDim.x;
  context Perm(A[blockIdx.x * blockDim.x + threadIdx.x], write);
  ensures A[blockIdx.x * blockDim.x + threadIdx.x] == 0;
@*/
__global__ void zero_grid(int *A) {
  A[blockIdx.x * blockDim.x + threadIdx.x] = 0;
}
