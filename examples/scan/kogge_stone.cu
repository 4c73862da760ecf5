// Kogge-Stone inclusive prefix sum of one block's elements, staged through
// shared memory; N threads, one per element (N = the block size, e.g. -DN=1024).
// Certify: alpine scan examples/scan/kogge_stone.cu --n 1024 -DN=1024
#include <cuda.h>

__global__ void kogge_stone(int *a) {
  __shared__ int s[N];
  int t = threadIdx.x;
  s[t] = a[t];
  __syncthreads();
  for (int offset = 1; offset < N; offset = offset * 2) {
    int sum = s[t];
    if (t >= offset) {
      sum = s[t - offset] + sum;
    }
    __syncthreads();
    s[t] = sum;
    __syncthreads();
  }
  a[t] = s[t];
}
