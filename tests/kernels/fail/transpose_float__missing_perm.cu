// Reads its own staged cell, which the barrier handed to another thread. (Twin of pass/transpose_float.cu.)
//:: flags --blockDim=[8,8] --gridDim=1
#include <cuda.h>

/*@
  context_everywhere src != null ** out != null ** src.length == 64 ** out.length == 64;
  context Perm(src[threadIdx.y * 8 + threadIdx.x], 1\2);
  context Perm(out[threadIdx.y * 8 + threadIdx.x], 1);
  requires Perm(stage[threadIdx.y * 8 + threadIdx.x], 1);
@*/
__global__ void transpose_float(const float *src, float *out) {
  __shared__ float stage[64];
  int x = threadIdx.x;
  int y = threadIdx.y;
  stage[y * 8 + x] = src[y * 8 + x];
  /*@
    context Perm(src[threadIdx.y * 8 + threadIdx.x], 1\2);
    context Perm(out[threadIdx.y * 8 + threadIdx.x], 1);
    requires Perm(stage[threadIdx.y * 8 + threadIdx.x], 1);
    ensures Perm(stage[threadIdx.x * 8 + threadIdx.y], 1\2);
  @*/
  __syncthreads();
  float v = stage[y * 8 + x]; //~ ERROR verify::permission
  out[y * 8 + x] = v;
  //@ assert out[threadIdx.y * 8 + threadIdx.x] == stage[threadIdx.y * 8 + threadIdx.x];
}
