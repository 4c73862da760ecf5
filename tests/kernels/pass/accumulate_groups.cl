// a[i] += n * b[i] by a loop in each work-item, over work-groups of any size
// (signed arithmetic read over the integers: --assume-no-signed-overflow);
// the loop invariant reads `\old(a[tid])`, the kernel's pre-state, where the
// permission is the kernel's over all work-items, `a[group * size + local]`,
// a quantified permission inverted by group = x div size (symbolic size).
//:: flags --no-race-check --assume-no-signed-overflow

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
    a[tid] = a[tid] + b[tid];
    k = k + 1;
  }
}
