// flags: --blockDim=64 --gridDim=4
// expect: verified
// Tree reduction in shared memory: race-free.
#define N 64
__global__ void reduce(float *in, float *out) {
    __shared__ float sdata[N];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
