// Unsigned arithmetic wraps around (C's definition: modulo 2^32), and a
// conversion to an unsigned type is modulo too; signed overflow stays an error.
// Shifts by constants are products and quotients by powers of two.
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
  unsigned int dbl = t << 1;
  int sixteenth = (int)t >> 4;
  //@ assert dbl == 2 * threadIdx.x && sixteenth == threadIdx.x / 16;
  dbl >>= 1;
  //@ assert dbl == threadIdx.x;
}
