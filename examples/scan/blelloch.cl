// Blelloch exclusive prefix sum of one work-group's elements in local memory
// (N work-items, N a power of two, e.g. -DN=1024): up-sweep, clear, down-sweep.
// Certify: alpine scan examples/scan/blelloch.cl --n 1024 -DN=1024 --exclusive
__kernel void blelloch(__global int *a) {
  __local int s[N];
  int t = get_local_id(0);
  s[t] = a[t];
  barrier(CLK_LOCAL_MEM_FENCE);
  int offset = 1;
  while (offset < N) {
    if ((t + 1) % (2 * offset) == 0) {
      s[t] = s[t - offset] + s[t];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    offset = offset * 2;
  }
  if (t == N - 1) {
    s[t] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  offset = N / 2;
  while (offset >= 1) {
    if ((t + 1) % (2 * offset) == 0) {
      int left = s[t - offset];
      s[t - offset] = s[t];
      s[t] = s[t] + left;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    offset = offset / 2;
  }
  a[t] = s[t];
}
