// OpenCL atomics: each work-item bumps its own counter twice (atomic_inc and
// atomic_add), under write permission; one work-group.
//:: flags --num_groups=1
/*@
  context_everywhere c != null ** c.length == get_local_size(0);
  context Perm(c[get_local_id(0)], 1);
  requires 0 <= c[get_local_id(0)] && c[get_local_id(0)] <= 1000;
  ensures c[get_local_id(0)] == \old(c[get_local_id(0)]) + 4;
@*/
__kernel void atomic_local(__global int *c) {
  int l = get_local_id(0);
  atomic_inc(&c[l]);
  atomic_add(&c[l], 3);
}
