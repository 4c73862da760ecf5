// flags: --blockDim=64 --gridDim=4
// expect: alpine::races::race
// line: 10
// Mutant of counter_compaction.cu: the atomic increment replaced by a plain
// read-modify-write of the counter.
__global__ void compact(int *in, int *out, unsigned int *count) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[gid] > 0) {
        unsigned int slot = *count;
        *count = slot + 1;
        out[slot] = in[gid];
    }
}
