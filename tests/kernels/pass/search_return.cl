// A `return` inside a loop: each work-item scans its row of 16 values and
// stops at the first zero, writing its position; a work-item whose row has no
// zero writes -1 after the loop. Every return sets a flag and leaves its
// loops; nothing runs after it.
//:: flags --local_size=16 --num_groups=1

/*@
  context_everywhere a != null ** pos != null ** a.length == 256 ** pos.length == 16;
  context (\forall* int j; 0 <= j && j < 16; Perm(a[get_local_id(0) * 16 + j], 1\2));
  context Perm(pos[get_local_id(0)], 1);
  ensures -1 <= pos[get_local_id(0)] && pos[get_local_id(0)] < 16;
@*/
__kernel void search_return(__global const int *a, __global int *pos) {
  int row = get_local_id(0);
  pos[row] = -1;
  /*@
    loop_invariant 0 <= j && j <= 16;
    loop_invariant (\forall* int k; 0 <= k && k < 16; Perm(a[get_local_id(0) * 16 + k], 1\2));
    loop_invariant Perm(pos[get_local_id(0)], 1);
    loop_invariant -1 <= pos[get_local_id(0)] && pos[get_local_id(0)] < 16;
  @*/
  for (int j = 0; j < 16; j++) {
    if (a[row * 16 + j] == 0) {
      pos[row] = j;
      return;
    }
  }
  pos[row] = -1;
}
