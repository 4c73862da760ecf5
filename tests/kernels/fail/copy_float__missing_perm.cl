// An operand of a float product read without permission: the read is checked though its value is fresh. (Twin of pass/copy_float.cl.)
//:: flags --local_size=64 --num_groups=1

/*@
  context_everywhere a != null ** b != null ** c != null;
  context_everywhere a.length == 64 ** b.length == 64 ** c.length == 64;
  context Perm(a[get_local_id(0)], 1\2);
  context Perm(b[get_local_id(0)], 1);
  context Perm(c[get_local_id(0)], 1);
  ensures b[get_local_id(0)] == a[get_local_id(0)];
@*/
__kernel void copy_float(__global const float *a, __global float *b, __global float *c, float scale) {
  int i = get_local_id(0);
  //@ assume i < 63;
  float v = a[i];
  b[i] = v;
  if (a[i] > 0.0f) {
    c[i] = a[i + 1] * scale + 1.0f; //~ ERROR verify::permission
  } else {
    c[i] = sqrt(v);
  }
  c[i] += b[i];
}
