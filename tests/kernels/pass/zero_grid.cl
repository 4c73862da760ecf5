// A[i] = i over an NDRange of work-groups of 64 work-items, indexed by
// get_global_id(0), with the postcondition over the whole array.
//:: flags --local_size=64

/*@
  context_everywhere A != NULL && A.length == get_num_groups(0) * 64;
  context Perm(A[get_global_id(0)], write);
  ensures A[get_global_id(0)] == get_global_id(0);
@*/
__kernel void zero_grid(__global int *A) {
  int i = get_global_id(0);
  A[i] = i;
}
