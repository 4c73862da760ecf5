// A pointer argument two past the end of its buffer is undefined in C. (Twin of pass/device_calls.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

__device__ float pick(const float *src, int i) { return src[i]; }

__device__ void store(float *dst, int i, float v) { dst[i] = v; }

/*@
  context_everywhere a != null ** b != null ** c != null;
  context_everywhere a.length == 64 ** b.length == 64 ** c.length == 64;
  context Perm(a[threadIdx.x], 1\2);
  context Perm(b[threadIdx.x], 1);
  context Perm(c[threadIdx.x], 1);
@*/
__global__ void device_calls(const float *a, float *b, int *c) {
  int t = threadIdx.x;
  store(b + 66, t - 66, pick(a, t)); //~ ERROR verify::assert
}
