// OpenCL: a plain (non-kernel) function with a contract is verified on its
// own and called modularly; `scale_at` returns the old value. One work-group.
//:: flags --num_groups=1

/*@
  context a != null ** 0 <= i ** i < a.length;
  context Perm(a[i], write);
  requires -100 <= a[i] && a[i] <= 100;
  ensures a[i] == 3 * \old(a[i]);
  ensures \result == \old(a[i]);
@*/
int scale_at(__global int *a, int i) {
  int old = a[i];
  a[i] = 3 * old;
  return old;
}

/*@
  context_everywhere a != null ** a.length == n;
  context_everywhere b != null ** b.length == n;
  context_everywhere n == get_local_size(0);
  context Perm(a[get_local_id(0)], write) ** Perm(b[get_local_id(0)], write);
  requires -100 <= a[get_local_id(0)] && a[get_local_id(0)] <= 100;
  ensures a[get_local_id(0)] == 3 * b[get_local_id(0)];
@*/
__kernel void device_contract(__global int *a, __global int *b, int n) {
  int i = get_local_id(0);
  b[i] = scale_at(a, i);
}
