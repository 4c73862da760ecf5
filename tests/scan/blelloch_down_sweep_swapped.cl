// What: the OpenCL Blelloch of examples/scan adding the left subtree's sum before the
// prefix in the down-sweep: right only for a commutative operator.
//:: scan --n 16 -DN=16 --exclusive
//:: expect wrong
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
      s[t] = left + s[t];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    offset = offset / 2;
  }
  a[t] = s[t];
}
