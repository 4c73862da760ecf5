// c = a + b, one element per thread, over a grid of blocks.
//   alpine parse examples/vector_add.cu --blockDim=256 --gridDim=4
#include <cuda.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  __requires(n == blockDim.x * gridDim.x);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}
