// flags: --blockDim=256 --gridDim=8
// expect: verified
// A warp reduction by shuffles (no shared memory), one atomic per warp. The
// shuffles' values are other lanes' registers: arbitrary to the race checker.
__global__ void shfl_reduce(const int *in, int *out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int off = 16; off > 0; off /= 2) {
        v += __shfl_down_sync(0xffffffff, v, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, v);
    }
}
