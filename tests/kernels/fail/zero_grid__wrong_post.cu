// zero_grid.cu claiming the wrong value.
//:: flags --no-race-check
#include <cuda.h>

/*@
  context_everywhere A != NULL && A.length == gridDim.x * blockDim.x;
  context Perm(A[blockIdx.x * blockDim.x + threadIdx.x], write);
  ensures A[blockIdx.x * blockDim.x + threadIdx.x] == 1; //~ ERROR verify::postcondition
@*/
__global__ void zero_grid(int *A) {
  A[blockIdx.x * blockDim.x + threadIdx.x] = 0;
}
