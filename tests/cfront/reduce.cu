// A block-wise sum in shared memory: 2-D ids, a barrier, an atomic, a device
// function, GPUVerify annotations.
#include <cuda.h>

#define N 256

__device__ int twice(int x) { return x * 2; }

__global__ void reduce(const int *__restrict__ in, int *out, unsigned n) {
  __requires(n == N);
  __shared__ int partial[N];
  unsigned tid = threadIdx.x;
  unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = gid < n ? in[gid] : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; __invariant(s <= N), s > 0; s >>= 1) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    atomicAdd(out, twice(partial[0]));
  }
  int y = threadIdx.y + gridDim.z;
  do {
    y--;
    if (y == 3) continue;
    if (y == 7) break;
  } while (y > 0);
  switch (y) {
  case 0:
  case 1:
    y = 2;
    break;
  default:
    return;
  }
  float4 f = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  out[1] = (int)f.w;
}
