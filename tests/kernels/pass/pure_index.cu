// A function marked `/*@ pure @*/` whose body is one `return` is a pure
// function in annotations (over mathematical integers, as annotations are)
// and is inlined with C's semantics in code: thread t owns the two cells of
// row t of an n x 2 matrix, indexed through `idx`. One block.
//:: flags --gridDim=1
#include <cuda.h>

/*@ pure @*/
__device__ int idx(int w, int row, int col) { return w * row + col; }

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
