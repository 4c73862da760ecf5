// One block whose size the contract fixes (`context_everywhere gridDim.x == 1`,
// as `alpine emit` writes for a kernel with a barrier): the kernel is lowered
// for that launch, without --gridDim, so `blockIdx.x` is 0 and each thread's
// global index is its thread index.
//:: flags --blockDim=32
#include <cuda.h>

/*@
  context_everywhere gridDim.x == 1;
  context_everywhere a != null ** a.length == blockDim.x;
  context Perm(a[threadIdx.x], 1);
  ensures a[threadIdx.x] == threadIdx.x;
@*/
__global__ void pinned_grid(int *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = threadIdx.x;
}
