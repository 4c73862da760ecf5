// What: the CUDA Kogge-Stone of examples/scan without the barrier between a round's
// reads of shared memory and its writes.
//:: scan --n 32 -DN=32
//:: expect race
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
    s[t] = sum;
    __syncthreads();
  }
  a[t] = s[t];
}
