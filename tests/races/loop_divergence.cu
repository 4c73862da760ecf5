// flags: --blockDim=64 --gridDim=1
// expect: alpine::races::barrier_divergence
// A loop whose trip count depends on the thread, with a barrier inside.
__global__ void k(int *out) {
    for (unsigned i = 0; i < threadIdx.x; i++) {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}
