// A shift by the width of the type or more is undefined: refused. (Twin of pass/wrap_unsigned.cu.)
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
  //@ assert back == 0;
  unsigned int h = (unsigned int)(-5);
  //@ assert h == 4294967291;
  unsigned int big = 65536u * 65536u + t;
  //@ assert big == threadIdx.x;
  unsigned int dbl = t << 32; //~ ERROR cfront::unsupported
  int sixteenth = (int)t >> 4;
  //@ assert dbl == 2 * threadIdx.x && sixteenth == threadIdx.x / 16;
  dbl >>= 1;
  //@ assert dbl == threadIdx.x;
}
