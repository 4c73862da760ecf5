// A loop whose condition calls a device function of one `return` with variables and
// literals as arguments (tiled kernels are emitted so): the call is that expression,
// evaluated again on every iteration, with C's semantics. Work-item i clears row i of
// an n x 8 matrix.
//:: flags --num_groups=1
int row_end(int row, int width) {
  return (row + 1) * width;
}

/*@
  context_everywhere m != null ** m.length == n * 8;
  context_everywhere n == get_local_size(0) && n <= 1024;
  context (\forall* int j; 0 <= j && j < 8; Perm(m[get_local_id(0) * 8 + j], write));
  ensures (\forall int j; 0 <= j && j < 8; m[get_local_id(0) * 8 + j] == 0);
@*/
__kernel void clear_rows(__global int *m, int n) {
  int i = get_local_id(0);
  /*@
    loop_invariant i * 8 <= k && k <= i * 8 + 8;
    loop_invariant (\forall* int j; 0 <= j && j < 8; Perm(m[i * 8 + j], write));
    loop_invariant (\forall int j; i * 8 <= j && j < k; m[j] == 0);
    loop_invariant i == get_local_id(0);
  @*/
  for (int k = i * 8; k < row_end(i, 8); k++) {
    m[k] = 0;
  }
}
