// A kernel with its host code, as nvcc compiles it: the host side (runtime
// API, <<<…>>> launch, goto) is type-checked by clang and not verified; the
// kernel is.
//:: flags --blockDim=256 --gridDim=8
#include <cuda_runtime.h>
#include <stdio.h>

/*@
  context_everywhere a != null ** b != null ** a.length == b.length;
  context blockIdx.x * blockDim.x + threadIdx.x < a.length ==> Perm(a[blockIdx.x * blockDim.x + threadIdx.x], 1\2);
  context blockIdx.x * blockDim.x + threadIdx.x < a.length ==> Perm(b[blockIdx.x * blockDim.x + threadIdx.x], 1);
@*/
__global__ void copy(const int *a, int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  //@ assume n == a.length;
  if (i < n) {
    b[i] = a[i];
  }
}

int run(const int *host_a, int *host_b, int n) {
  int *a = NULL, *b = NULL;
  int status = 1;
  if (cudaMalloc(&a, n * sizeof(int)) != cudaSuccess || cudaMalloc(&b, n * sizeof(int)) != cudaSuccess) goto done;
  cudaMemcpy(a, host_a, n * sizeof(int), cudaMemcpyHostToDevice);
  copy<<<(n + 255) / 256, 256>>>(a, b, n);
  if (cudaGetLastError() != cudaSuccess) {
    fprintf(stderr, "launch failed\n");
    goto done;
  }
  cudaMemcpy(host_b, b, n * sizeof(int), cudaMemcpyDeviceToHost);
  status = 0;
done:
  cudaFree(a);
  cudaFree(b);
  return status;
}
