// Wrong postcondition: atomic_inc adds 1, atomic_add 3; not 5. (Twin of pass/atomic_local.cl.)
//:: flags --num_groups=1
/*@
  context_everywhere c != null ** c.length == get_local_size(0);
  context Perm(c[get_local_id(0)], 1);
  requires 0 <= c[get_local_id(0)] && c[get_local_id(0)] <= 1000;
  ensures c[get_local_id(0)] == \old(c[get_local_id(0)]) + 5; //~ ERROR verify::postcondition
@*/
__kernel void atomic_local(__global int *c) {
  int l = get_local_id(0);
  atomic_inc(&c[l]);
  atomic_add(&c[l], 3);
}
