// What: the OpenCL Blelloch of examples/scan with the up-sweep's barrier moved into
// the work-item-dependent condition: barrier divergence.
//:: scan --n 16 -DN=16 --exclusive
//:: expect divergence
__kernel void blelloch(__global int *a) {
  __local int s[N];
  int t = get_local_id(0);
  s[t] = a[t];
  barrier(CLK_LOCAL_MEM_FENCE);
  int offset = 1;
  while (offset < N) {
    if ((t + 1) % (2 * offset) == 0) {
      s[t] = s[t - offset] + s[t];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
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
