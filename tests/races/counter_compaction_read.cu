// flags: --blockDim=64 --gridDim=4
// expect: alpine::races::race
// line: 9
// Mutant of counter_compaction.cu: the counter is also read plainly, so it is
// not a counter whose every use is an increment, and the indices may collide.
__global__ void compact(int *in, int *out, unsigned int *count) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[gid] > 0) {
        unsigned int slot = atomicAdd(count, 1) + (*count & 0);
        out[slot] = in[gid];
    }
}
