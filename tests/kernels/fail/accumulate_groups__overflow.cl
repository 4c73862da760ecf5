// accumulate_groups.cl without --assume-no-signed-overflow: a[tid] + b[tid] may overflow C's int.
//:: flags --no-race-check --local_size=64

/*@
  context_everywhere a != NULL && b != NULL && a.length == get_global_size(0) && b.length == a.length;
  context_everywhere n >= 0;
  context Perm(a[get_global_id(0)], write) ** Perm(b[get_global_id(0)], 1\2);
  ensures a[get_global_id(0)] == \old(a[get_global_id(0)]) + n * b[get_global_id(0)];
@*/
__kernel void accumulate(__global int *a, __global const int *b, int n) {
  int tid = get_global_id(0);
  int k = 0;
  /*@
    loop_invariant 0 <= k && k <= n;
    loop_invariant Perm(a[tid], write) ** Perm(b[tid], 1\2);
    loop_invariant a[tid] == \old(a[tid]) + k * b[tid];
  @*/
  while (k < n) {
    a[tid] = a[tid] + b[tid]; //~ ERROR verify::assert
    k = k + 1;
  }
}
