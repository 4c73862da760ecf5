// A pointer two past the end of its array is undefined in C. (Twin of pass/pointer_offset.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

/*@
  context_everywhere a != null ** b != null ** a.length == 128 ** b.length == 64;
  context Perm(a[64 + threadIdx.x], 1\2);
  context Perm(b[threadIdx.x], 1);
  ensures b[threadIdx.x] == a[64 + threadIdx.x];
@*/
__global__ void pointer_offset(const int *a, int *b) {
  const int *upper = a + 64;
  int *mine = &b[threadIdx.x];
  *mine = upper[threadIdx.x];
  const int *end = a + 129; //~ ERROR verify::assert
}
