// One block reverses a[0..64) through shared memory and a barrier.
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
  /*@
    context Perm(a[threadIdx.x], 1);
    requires Perm(s[threadIdx.x], 1);
    ensures Perm(s[63 - threadIdx.x], 1\2);
  @*/
  __syncthreads();
  a[t] = s[63 - t];
}
