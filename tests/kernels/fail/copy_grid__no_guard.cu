// Missing permission: without the early exit, threads past the end access a. (Twin of pass/copy_grid.cu.)
//:: flags --blockDim=32 --gridDim=8
#include <cuda.h>

/*@
  context_everywhere a != null ** b != null ** a.length == b.length;
  context_everywhere a.length <= blockDim.x * gridDim.x;
  context blockIdx.x * blockDim.x + threadIdx.x < a.length ==> Perm(a[blockIdx.x * blockDim.x + threadIdx.x], 1\2);
  context blockIdx.x * blockDim.x + threadIdx.x < a.length ==> Perm(b[blockIdx.x * blockDim.x + threadIdx.x], 1);
@*/
__global__ void copy_grid(int *a, int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  //@ assume n == a.length;
  b[i] = a[i]; //~ ERROR verify::array_bounds
  //@ assert b[i] == a[i];
}
