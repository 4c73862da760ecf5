// flags: --blockDim=64 --gridDim=4
// expect: verified
// Stream compaction with an atomic counter: each thread that keeps its element
// takes a fresh index from the counter, so no two threads write one cell.
__global__ void compact(int *in, int *out, unsigned int *count) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[gid] > 0) {
        unsigned int slot = atomicAdd(count, 1);
        out[slot] = in[gid];
    }
}
