// Twin of pass/pinned_grid.cu: two blocks, so the threads of block 1 write
// past a.length, and the contract, which names no block, asks every block for
// the same cells.
//:: flags --blockDim=32
#include <cuda.h>

/*@
  context_everywhere gridDim.x == 2;
  context_everywhere a != null ** a.length == blockDim.x;
  context Perm(a[threadIdx.x], 1); //~ ERROR verify::permission //~ ERROR verify::unsupported
  ensures a[threadIdx.x] == threadIdx.x; //~ ERROR verify::permission
@*/
__global__ void pinned_grid(int *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = threadIdx.x; //~ ERROR verify::array_bounds
}
