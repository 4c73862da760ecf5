// OpenCL: work-item i counts the non-zero entries of row i of an n x 8 matrix
// into out[i], with loop invariants; one work-group.
//:: flags --num_groups=1
/*@
  context_everywhere m != null ** out != null ** out.length == n ** m.length == n * 8;
  context_everywhere n == get_local_size(0) && n <= 1024;
  context (\forall* int j; 0 <= j && j < 8; Perm(m[get_local_id(0) * 8 + j], 1\2));
  context Perm(out[get_local_id(0)], 1);
  ensures 0 <= out[get_local_id(0)] && out[get_local_id(0)] <= 8;
@*/
__kernel void row_sum(__global int *m, __global int *out, int n) {
  int i = get_local_id(0);
  int s = 0;
  /*@
    loop_invariant 0 <= j && j <= 8;
    loop_invariant (\forall* int k; 0 <= k && k < 8; Perm(m[i * 8 + k], 1\2));
    loop_invariant 0 <= s && s <= j;
    loop_invariant i == get_local_id(0);
  @*/
  for (int j = 0; j < 8; j++) {
    if (m[i * 8 + j] != 0) {
      s++;
    }
  }
  out[i] = s;
}
