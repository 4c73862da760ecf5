// The device's copy bandwidth, for the GPU benchmark (benches/gpu/run.sh): the
// median of 20 device-to-device copies of 1 GiB (after 3 untimed ones), timed
// with CUDA events, counting the bytes read plus the bytes written.
#include <cuda_runtime.h>
#include <stdio.h>
#include <algorithm>
#include <vector>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e = (call);                                                       \
        if (e != cudaSuccess) {                                                       \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));         \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main() {
    const size_t bytes = (size_t)1 << 30;
    void *src = NULL, *dst = NULL;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 0x5a, bytes));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    std::vector<float> ms;
    for (int r = -3; r < 20; r++) {
        CHECK(cudaEventRecord(t0, 0));
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(t1, 0));
        CHECK(cudaEventSynchronize(t1));
        float m = 0;
        CHECK(cudaEventElapsedTime(&m, t0, t1));
        if (r >= 0) ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    float median = ms[ms.size() / 2];
    printf("ALPINE_COPY median_us=%.1f gbps=%.1f\n", 1000.0 * median, 2.0 * bytes / (median * 1e-3) / 1e9);
    return 0;
}
