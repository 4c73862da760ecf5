// A kernel with its host code: the runtime API needs no #include (nvcc
// includes it), and <stdio.h> is the system's.
#include <stdio.h>

__device__ int twice(int x) { return 2 * x; }

__host__ __device__ int both(int x) { return x + 1; }

// constexpr functions are implicitly __host__ __device__ for clang.
constexpr int square(int x) { return x * x; }

__global__ void scale(int *a, int n) {
    int sized[4];
    int listed[2] = {1, 2};
    int counted = 3;
    sized[0] = listed[1] + counted;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = twice(a[i]) + sized[0];
}

static int run(int *host, int n) {
    int *device = NULL;
    int status = 0;
    if (cudaMalloc(&device, n * sizeof(int)) != cudaSuccess) goto done;
    cudaMemcpy(device, host, n * sizeof(int), cudaMemcpyHostToDevice);
    scale<<<(n + 255) / 256, 256>>>(device, n);
    if (cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        status = 1;
        goto done;
    }
    cudaMemcpy(host, device, n * sizeof(int), cudaMemcpyDeviceToHost);
done:
    cudaFree(device);
    return status;
}

int main(void) {
    int a[256] = {0};
    return run(a, 256);
}
