// packed_grid.cu with the elements one apart instead of a block-width: the
// second write is the next thread's first element, held by that thread.
//:: flags --no-race-check
#include <cuda.h>

/*@
  context_everywhere blockDim.x == 256;
  context_everywhere 4 * gridDim.x * blockDim.x <= 2147483647;
  context_everywhere A != NULL && A.length == 4 * gridDim.x * blockDim.x;
  context (\forall* int e; 0 <= e && e < 4; Perm(A[(blockIdx.x * 4 + e) * blockDim.x + threadIdx.x], write));
  ensures A[(blockIdx.x * 4 + 0) * blockDim.x + threadIdx.x] == 0;
  ensures A[(blockIdx.x * 4 + 1) * blockDim.x + threadIdx.x] == 1;
  ensures A[(blockIdx.x * 4 + 3) * blockDim.x + threadIdx.x] == 3;
@*/
__global__ void fill4(int *A) {
  int step = (int)blockDim.x;
  int i = 4 * (int)(blockIdx.x * blockDim.x) + (int)threadIdx.x;
  A[i] = 0;
  A[i + 1] = 1; //~ ERROR verify::permission
  A[i + 2 * step] = 2;
  A[i + 3 * step] = 3;
}
