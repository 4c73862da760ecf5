// zero_grid.cl writing the next work-item's cell (a race across work-groups at
// the edge of a group).
//:: flags --local_size=64

/*@
  context_everywhere A != NULL && A.length == get_num_groups(0) * 64 + 1;
  context Perm(A[get_global_id(0)], write);
  ensures A[get_global_id(0)] == get_global_id(0);
@*/
__kernel void zero_grid(__global int *A) {
  int i = get_global_id(0);
  A[i + 1] = i; //~ ERROR verify::permission
}
