// flags: --blockDim=256 --gridDim=8
// expect: alpine::races::barrier_divergence
// line: 10
// Mutant: the shuffle (its mask names all 32 lanes) reached by half a warp.
__global__ void shfl_reduce(const int *in, int *out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned int lane = threadIdx.x & 31;
    for (int off = 16; off > 0; off /= 2) {
        if (lane < 16) {
            v += __shfl_down_sync(0xffffffff, v, off);
        }
    }
    if (lane == 0) {
        atomicAdd(out, v);
    }
}
