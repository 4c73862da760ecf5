// A pure function over unsigned integers (they wrap in C, not in annotations): refused. (Twin of pass/pure_index.cu.)
//:: flags --gridDim=1
#include <cuda.h>

/*@ pure @*/
__device__ int idx(int w, unsigned row, int col) { return w * row + col; } //~ ERROR cfront::unsupported

/*@
  context_everywhere m != null ** m.length == 2 * n;
  context_everywhere n == blockDim.x && n <= 1000;
  context Perm(m[idx(2, threadIdx.x, 0)], write) ** Perm(m[idx(2, threadIdx.x, 1)], write);
  ensures m[idx(2, threadIdx.x, 0)] == threadIdx.x;
  ensures m[idx(2, threadIdx.x, 1)] == 0;
@*/
__global__ void pure_index(int *m, int n) {
  int t = threadIdx.x;
  m[idx(2, t, 0)] = t;
  m[idx(2, t, 1)] = 0;
}
