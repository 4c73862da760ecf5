// A float converted to an integer (undefined outside its range) is refused at its place, never verified. (Twin of pass/rotate_shared.cu.)
//:: flags --blockDim=64
#include <cuda.h>

/*@
  context_everywhere a != null ** a.length == 64 * gridDim.x;
  context Perm(a[blockIdx.x * 64 + threadIdx.x], 1);
  requires Perm(s[threadIdx.x], 1);
@*/
__global__ void rotate_shared(int *a) {
  __shared__ int s[64];
  int t = threadIdx.x;
  int f = (int)1.5f; //~ ERROR cfront::unsupported
  s[t] = a[blockIdx.x * 64 + t];
  /*@
    context Perm(a[blockIdx.x * 64 + threadIdx.x], 1);
    requires Perm(s[threadIdx.x], 1);
    requires s[threadIdx.x] == a[blockIdx.x * 64 + threadIdx.x];
    ensures Perm(s[(threadIdx.x + 1) % 64], 1\2);
  @*/
  __syncthreads();
  a[blockIdx.x * 64 + t] = s[(t + 1) % 64];
}
