// b = a over a 2-D grid of 2-D blocks (4 x 4 threads, 2 x 3 blocks): the
// element of thread (x, y) of block (bx, by) is row by*4+y, column bx*4+x of an
// 12 x 8 matrix stored by rows.
//:: flags --blockDim=[4,4] --gridDim=[2,3]
#include <cuda.h>

/*@
  context_everywhere a != null ** b != null ** a.length == 96 ** b.length == 96;
  context Perm(a[((blockIdx.y * 4 + threadIdx.y) * 8) + blockIdx.x * 4 + threadIdx.x], 1\2);
  context Perm(b[((blockIdx.y * 4 + threadIdx.y) * 8) + blockIdx.x * 4 + threadIdx.x], 1);
@*/
__global__ void copy_2d(int *a, int *b) {
  int col = blockIdx.x * 4 + threadIdx.x;
  int row = blockIdx.y * 4 + threadIdx.y;
  b[row * 8 + col] = a[row * 8 + col];
}
