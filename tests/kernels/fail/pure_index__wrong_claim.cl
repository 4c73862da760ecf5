// A wrong claim through the pure function. (Twin of pass/pure_index.cl.)
// work-group; work-item i writes the last cell of the first i + 1.
//:: flags --num_groups=1

/*@
  requires n > 0;
  pure
@*/
int last_below(int i, int n) { return i < n ? i : n - 1; }

/*@
  context_everywhere a != null ** a.length == n;
  context_everywhere n == get_local_size(0);
  context Perm(a[last_below(get_local_id(0), n)], write);
  ensures a[last_below(get_local_id(0), n)] == 8; //~ ERROR verify::postcondition
@*/
__kernel void pure_index(__global int *a, int n) {
  int i = get_local_id(0);
  a[last_below(i, n)] = 7;
}
