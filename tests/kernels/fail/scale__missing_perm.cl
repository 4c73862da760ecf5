// Missing permission: the contract gives read permission, the kernel writes. (Twin of pass/scale.cl.)
//:: flags --num_groups=1
/*@
  context_everywhere a != null ** a.length == n;
  context get_global_id(0) < n ==> Perm(a[get_global_id(0)], 1\2);
  requires get_global_id(0) < n ==> -100 <= a[get_global_id(0)] && a[get_global_id(0)] <= 100;
@*/
__kernel void scale(__global int *a, int n) {
  /* plain comments are not annotations */
  int i = get_global_id(0);
  if (i < n) {
    a[i] = 3 * a[i]; //~ ERROR verify::permission
  }
}
