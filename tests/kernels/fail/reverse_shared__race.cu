// A race: no barrier between the writes and the reads of shared memory. (Twin of pass/reverse_shared.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

/*@
  context_everywhere a != null ** a.length == 64;
  context Perm(a[threadIdx.x], 1);
  requires Perm(s[threadIdx.x], 1);
@*/
__global__ void reverse_shared(int *a) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = a[t];
  a[t] = s[63 - t]; //~ ERROR verify::permission
}
