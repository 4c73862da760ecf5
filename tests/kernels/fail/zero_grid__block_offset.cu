// zero_grid.cu with the block offset left out of the write: each thread writes
// a cell of block 0, which it holds no permission for.
//:: flags --no-race-check
#include <cuda.h>

/*@
  context_everywhere A != NULL && A.length == gridDim.x * blockDim.x;
  context Perm(A[blockIdx.x * blockDim.x + threadIdx.x], write);
  ensures A[blockIdx.x * blockDim.x + threadIdx.x] == 0;
@*/
__global__ void zero_grid(int *A) {
  A[threadIdx.x] = 0; //~ ERROR verify::permission
}
