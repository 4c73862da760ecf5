// A call that does not meet the precondition: the kernel bounds no value of b. (Twin of pass/device_contract.cu.)
//:: flags --gridDim=1
#include <cuda.h>

/*@
  context c != null ** a != null ** b != null;
  context 0 <= i && i < c.length && i < a.length && i < b.length;
  context Perm(c[i], write) ** Perm(a[i], 1\2) ** Perm(b[i], 1\2);
  requires -1000 <= a[i] && a[i] <= 1000 && -1000 <= b[i] && b[i] <= 1000;
  ensures a[i] == \old(a[i]) && b[i] == \old(b[i]);
  ensures c[i] == a[i] + b[i];
@*/
__device__ void add(int *c, const int *a, const int *b, int i) {
  c[i] = a[i] + b[i];
}

/*@
  requires 0 <= k && k <= 1000;
  ensures \result == 2 * k;
@*/
__device__ int twice_by_loop(int k) {
  int s = 0;
  /*@
    loop_invariant 0 <= j && j <= k;
    loop_invariant s == 2 * j;
  @*/
  for (int j = 0; j < k; j++) {
    s += 2;
  }
  return s;
}

/*@
  context_everywhere a != null ** a.length == n;
  context_everywhere b != null ** b.length == n;
  context_everywhere c != null ** c.length == n;
  context_everywhere d != null ** d.length == n;
  context_everywhere n == blockDim.x && n <= 1000;
  context Perm(a[threadIdx.x], 1\2) ** Perm(b[threadIdx.x], 1\2);
  context Perm(c[threadIdx.x], write) ** Perm(d[threadIdx.x], write);
  requires -1000 <= a[threadIdx.x] && a[threadIdx.x] <= 1000;
  ensures c[threadIdx.x] == a[threadIdx.x] + b[threadIdx.x];
  ensures d[threadIdx.x] == 2 * threadIdx.x + 1;
@*/
__global__ void device_contract(int *a, int *b, int *c, int *d, int n) {
  int gid = threadIdx.x;
  add(c, a, b, gid); //~ ERROR verify::precondition
  d[gid] = twice_by_loop(gid) + 1;
}
