// flags: --blockDim=128 --gridDim=2
// expect: verified
// The reduction tail as written for Volta and later: no lock-step assumed,
// the lanes of warp 0 are ordered by __syncwarp() between a read and a write.
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
            __syncwarp();
            sdata[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
