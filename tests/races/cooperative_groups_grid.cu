// flags: --blockDim=32 --gridDim=2
// expect: alpine::races::race
// line: 12
// Mutant of cooperative_groups.cu: two blocks; the block's barrier does not
// order the first block's write of A[32] after the second block's read.
#include <cuda.h>
using namespace cooperative_groups;
__global__ void shift(int *A) {
  thread_block t = this_thread_block();
  int temp = A[blockIdx.x * blockDim.x + threadIdx.x + 1];
  synchronize(t);
  A[blockIdx.x * blockDim.x + threadIdx.x] = temp;
}
