// Signed overflow: without a bound on the element, `3 * a[i]` may overflow. (Twin of pass/scale.cl.)
//:: flags --num_groups=1
/*@
  context_everywhere a != null ** a.length == n;
  context get_global_id(0) < n ==> Perm(a[get_global_id(0)], 1);
@*/
__kernel void scale(__global int *a, int n) {
  /* plain comments are not annotations */
  int i = get_global_id(0);
  if (i < n) {
    a[i] = 3 * a[i]; //~ ERROR verify::assert
  }
}
