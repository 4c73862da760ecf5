// Wrong postcondition: the kernel adds, the contract says it subtracts. (Twin of pass/vector_add.cu.)
//:: flags --gridDim=1
#include <cuda.h>

/*@
  context_everywhere a != null ** a.length == n;
  context_everywhere b != null ** b.length == n;
  context_everywhere c != null ** c.length == n;
  context_everywhere n == blockDim.x;
  context Perm(a[threadIdx.x], 1\2) ** Perm(b[threadIdx.x], 1\2);
  context Perm(c[threadIdx.x], 1);
  requires -1000 <= a[threadIdx.x] && a[threadIdx.x] <= 1000;
  requires -1000 <= b[threadIdx.x] && b[threadIdx.x] <= 1000;
  ensures c[threadIdx.x] == a[threadIdx.x] - b[threadIdx.x]; //~ ERROR verify::postcondition
@*/
__global__ void vector_add(int *a, int *b, int *c, int n) {
  int i = threadIdx.x;
  c[i] = a[i] + b[i];
}
