// flags: --blockDim=64 --gridDim=4
// expect: alpine::races::race
// line: 10
// Mutant of counter_compaction.cu: each thread writes two cells but takes one
// index, so a thread's second cell is the next thread's first.
__global__ void compact(int *in, int *out, unsigned int *count) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int slot = atomicAdd(count, 1);
    out[slot + 1] = in[gid];
    out[slot] = in[gid];
}
