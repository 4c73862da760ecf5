// flags: --blockDim=32 --gridDim=1
// expect: verified
// Cooperative groups' thread-block group: `synchronize(this_thread_block())`
// is the block's barrier (and a struct returned by a call is copied into `t`).
#include <cuda.h>
using namespace cooperative_groups;
__global__ void shift(int *A) {
  thread_block t = this_thread_block();
  int temp = A[threadIdx.x + 1];
  synchronize(t);
  A[threadIdx.x] = temp;
}
