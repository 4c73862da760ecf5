// Brent-Kung inclusive prefix sum of one work-group's elements in local memory
// (N work-items, N a power of two, e.g. -DN=1024): up-sweep, then down-sweep.
// Certify: alpine scan examples/scan/brent_kung.cl --n 1024 -DN=1024
__kernel void brent_kung(__global int *a) {
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
  offset = offset / 4;
  while (offset >= 1) {
    if ((t + 1) % (2 * offset) == 0 && t + offset < N) {
      s[t + offset] = s[t] + s[t + offset];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    offset = offset / 2;
  }
  a[t] = s[t];
}
