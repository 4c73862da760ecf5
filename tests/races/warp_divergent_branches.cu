// flags: --blockDim=32 --gridDim=1 --warp-sync=32
// expect: alpine::races::race
// line: 13
// Mutant: the two branches of a divergent `if` run one after the other in an
// order the hardware does not promise, so lanes in different branches are not
// ordered (a "porting race"): lane 0 and lane 16 both write s[0].
__global__ void branches(int *out) {
    __shared__ int s[32];
    unsigned int tid = threadIdx.x;
    if (tid < 16) {
        s[tid] = 1;
    } else {
        s[tid - 16] = 2;
    }
    __syncthreads();
    out[tid] = s[tid % 16];
}
