#define W 16
#define IDX(i, j) ((i) * W + (j))
#define ADD(a, b) a - b

__global__ void transpose(float *out, const float *in) {
  out[IDX(threadIdx.x, threadIdx.y)] = in[ADD(threadIdx.y, threadIdx.x)];
}

__global__ void plain(int *a) { a[threadIdx.x] = W * 2; }

#define SUB(a, b) a - b
#define GID (blockIdx.x * blockDim.x + threadIdx.x)

// The comma before `x[2]` and the `+` before `GID` are not the operators of
// the nodes inside the macros.
__global__ void guarded(int *x) {
  x[0] = SUB(x[1], x[2]);
  x[1] = 3 + GID;
}
