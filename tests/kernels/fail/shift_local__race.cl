// A race: the barrier is gone, and a work-item reads its neighbour's cell. (Twin of pass/shift_local.cl.)
//:: flags --local_size=32
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
  if (l > 0) {
    a[g] = tmp[l - 1]; //~ ERROR verify::permission
  } else {
    a[g] = 0;
  }
}
