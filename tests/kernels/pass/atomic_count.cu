// Each thread counts its hits in its own counter with atomicAdd; alpine treats
// an atomic update as a read-modify-write under write permission.
//:: flags --gridDim=1
#include <cuda.h>

/*@
  context_everywhere count != null ** count.length == blockDim.x;
  context Perm(count[threadIdx.x], 1);
  requires 0 <= count[threadIdx.x] && count[threadIdx.x] <= 100;
  ensures count[threadIdx.x] == \old(count[threadIdx.x]) + 2;
@*/
__global__ void atomic_count(int *count) {
  int t = threadIdx.x;
  int old = atomicAdd(&count[t], 1);
  //@ assert old + 1 == count[t];
  atomicAdd(&count[t], 1);
}
