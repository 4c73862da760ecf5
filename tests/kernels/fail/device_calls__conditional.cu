// A call that C evaluates only under a condition is refused. (Twin of pass/device_calls.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

__device__ int clamp_below(int i, int n) {
  if (i >= n) {
    return n - 1;
  }
  return i;
}

__device__ int twice_plus_one(int x) {
  int y = 2 * x;
  return y + 1;
}

__device__ float pick(const float *src, int i) { return src[i]; }

__device__ void store(float *dst, int i, float v) { dst[i] = v; }

/*@
  context_everywhere a != null ** b != null ** c != null;
  context_everywhere a.length == 64 ** b.length == 64 ** c.length == 64;
  context Perm(a[threadIdx.x], 1\2);
  context Perm(b[threadIdx.x], 1);
  context Perm(c[threadIdx.x], 1);
  ensures b[threadIdx.x] == a[threadIdx.x];
  ensures c[threadIdx.x] == 2 * threadIdx.x + 1;
@*/
__global__ void device_calls(const float *a, float *b, int *c) {
  int t = threadIdx.x;
  store(b, t, pick(a, t));
  c[t] = t > 0 && clamp_below(t, 64) > 0; //~ ERROR cfront::unsupported
  store(b + t, 0, pick(a, t));
}
