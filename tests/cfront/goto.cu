__global__ void jumps(int *a) {
  if (a[0] > 0)
    goto done;
  a[threadIdx.x] = 1;
done:
  return;
}
