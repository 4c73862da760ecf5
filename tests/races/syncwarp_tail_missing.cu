// flags: --blockDim=128 --gridDim=2
// expect: alpine::races::race
// line: 21
// Mutant: the __syncwarp() between the read and the write of the loop removed.
__global__ void reduce_tail(int *in, int *out) {
    __shared__ int sdata[128];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    if (tid < 64) {
        sdata[tid] += sdata[tid + 64];
    }
    __syncthreads();
    if (tid < 32) {
        int v = sdata[tid] + sdata[tid + 32];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            v += sdata[tid + off];
            sdata[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
