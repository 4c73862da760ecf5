// Sklansky inclusive prefix sum of one block's elements in shared memory; N
// threads, one per element (e.g. -DN=1024). One barrier per round: the element
// read (the last of a lower half) is not written in that round.
// Certify: alpine scan examples/scan/sklansky.cu --n 1024 -DN=1024
#include <cuda.h>

__global__ void sklansky(int *a) {
  __shared__ int s[N];
  int t = threadIdx.x;
  s[t] = a[t];
  __syncthreads();
  for (int offset = 1; offset < N; offset = offset * 2) {
    if ((t / offset) % 2 == 1) {
      s[t] = s[t / (2 * offset) * (2 * offset) + offset - 1] + s[t];
    }
    __syncthreads();
  }
  a[t] = s[t];
}
