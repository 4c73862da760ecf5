// OpenCL: a work-group of 32 shifts its slice right by one through __local
// memory; work-item 0 writes a zero.
//:: flags --local_size=32 --num_groups=8
/*@
  context_everywhere a != null ** a.length == 32 * get_num_groups(0);
  context Perm(a[get_group_id(0) * 32 + get_local_id(0)], 1);
  requires Perm(tmp[get_local_id(0)], 1);
@*/
__kernel void shift_local(__global int *a) {
  __local int tmp[32];
  int l = get_local_id(0);
  int g = get_group_id(0) * 32 + l;
  tmp[l] = a[g];
  /*@
    context Perm(a[get_group_id(0) * 32 + get_local_id(0)], 1);
    requires Perm(tmp[get_local_id(0)], 1);
    ensures get_local_id(0) > 0 ==> Perm(tmp[get_local_id(0) - 1], 1\2);
  @*/
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l > 0) {
    a[g] = tmp[l - 1];
  } else {
    a[g] = 0;
  }
}
