// A write to the neighbour after the early return. (Twin of pass/early_return.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

/*@
  context_everywhere a != null ** a.length == 64;
  context Perm(a[threadIdx.x], 1);
  ensures threadIdx.x % 2 == 0 ==> a[threadIdx.x] == 2;
  ensures threadIdx.x % 2 == 1 ==> a[threadIdx.x] == 1;
@*/
__global__ void early_return(int *a) {
  int t = threadIdx.x;
  if (t % 2 == 0) {
    a[t] = 0;
  } else {
    a[t] = 1;
    return;
  }
  if (t == 0) {
    a[t + 1] = 0; //~ ERROR verify::permission
  }
  //@ assert t % 2 == 0;
  a[t] = a[t] + 2;
}
