// flags: --blockDim=8 --gridDim=4
// expect: alpine::races::race
// line: 10
// Twin of constant_init.cl in CUDA: the host may overwrite a `__constant__`
// variable before the launch (cudaMemcpyToSymbol), so its initialiser says
// nothing about the values the kernel reads, and the writes may collide.
__constant__ int perm[8] = {1, 0, 3, 2, 5, 4, 7, 6};
__global__ void scatter(int *p) {
    int i = threadIdx.x;
    p[blockIdx.x * 8 + perm[i]] = i;
}
