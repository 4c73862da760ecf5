// Missing permission: a thread writes the transposed element, which it does not hold. (Twin of pass/tile_2d.cu.)
//:: flags --blockDim=[4,4] --gridDim=1
#include <cuda.h>

/*@
  context_everywhere m != null ** m.length == 16;
  context Perm(m[threadIdx.y * 4 + threadIdx.x], 1);
@*/
__global__ void tile_2d(int *m) {
  int k = threadIdx.y * 4 + threadIdx.x;
  m[threadIdx.x * 4 + threadIdx.y] = k; //~ ERROR verify::permission
}
