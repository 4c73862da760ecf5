// x >= y does not make x > y: equal values (0.0 and -0.0) may have different bits. (Twin of pass/compare_float.cl.)
//:: flags --local_size=64 --num_groups=1

/*@
  context_everywhere a != null ** b != null ** m != null;
  context_everywhere a.length == 64 ** b.length == 64 ** m.length == 64;
  context Perm(a[get_local_id(0)], 1\2) ** Perm(b[get_local_id(0)], 1\2);
  context Perm(m[get_local_id(0)], 1);
  ensures m[get_local_id(0)] == a[get_local_id(0)] || m[get_local_id(0)] == b[get_local_id(0)];
@*/
__kernel void compare_float(__global const float *a, __global const float *b, __global float *m) {
  int i = get_local_id(0);
  float x = a[i];
  float y = b[i];
  m[i] = x > y ? x : y;
  if (x >= y) {
    //@ assert m[i] == a[i]; //~ ERROR verify::assert
  } else {
    //@ assert m[i] == a[i] || m[i] == b[i];
  }
}
