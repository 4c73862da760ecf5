// A 2-D block of 4x4 threads: each thread writes its linear index into its
// element of a 4x4 matrix stored row by row.
//:: flags --blockDim=[4,4] --gridDim=1
#include <cuda.h>

/*@
  context_everywhere m != null ** m.length == 16;
  context Perm(m[threadIdx.y * 4 + threadIdx.x], 1);
@*/
__global__ void tile_2d(int *m) {
  int k = threadIdx.y * 4 + threadIdx.x;
  m[k] = k;
  //@ assert m[threadIdx.y * 4 + threadIdx.x] == k;
}
