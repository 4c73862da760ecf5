// Pointers into arrays: a pointer local is its array and an offset fixed at
// its declaration (`upper[i]` is `a[64 + i]`, `*mine` is `b[threadIdx.x]`);
// a pointer must stay within its array (one past the end allowed). A pointer
// local is not a name in annotations: they name the arrays.
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
  const int *end = a + 128;
}
