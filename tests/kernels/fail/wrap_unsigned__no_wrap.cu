// UINT_MAX + 1 is 0, not 2^32. (Twin of pass/wrap_unsigned.cu.)
//:: flags --blockDim=64 --gridDim=1
#include <cuda.h>

/*@
  context_everywhere a != null ** a.length == 64;
  context Perm(a[threadIdx.x], 1);
  ensures a[threadIdx.x] == 4294967295;
@*/
__global__ void wrap_unsigned(unsigned int *a) {
  unsigned int t = threadIdx.x;
  unsigned int zero = t - t;
  a[t] = zero - 1u;
  unsigned int back = a[t] + 1u;
  //@ assert back == 4294967296; //~ ERROR verify::assert
  unsigned int h = (unsigned int)(-5);
  //@ assert h == 4294967291;
  unsigned int big = 65536u * 65536u + t;
  //@ assert big == threadIdx.x;
  unsigned int dbl = t << 1;
  int sixteenth = (int)t >> 4;
  //@ assert dbl == 2 * threadIdx.x && sixteenth == threadIdx.x / 16;
  dbl >>= 1;
  //@ assert dbl == threadIdx.x;
}
