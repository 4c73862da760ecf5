// flags: --blockDim=64 --gridDim=1 --warp-sync=32
// expect: alpine::races::race
// line: 9
// Mutant: lock-step does not order two lanes' writes of one instruction:
// lanes 2k and 2k+1 of one warp write the same element at once.
__global__ void pairs(int *out) {
    __shared__ int s[32];
    unsigned int tid = threadIdx.x;
    s[tid / 2] = tid;
    __syncthreads();
    out[tid] = s[tid / 2];
}
