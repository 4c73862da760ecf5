// The break comes one step too late: the invariant fails after the increment. (Twin of pass/control_flow.cl.)
//:: flags --local_size=64 --num_groups=1

/*@
  context_everywhere a != null ** b != null ** a.length == 64 ** b.length == 64;
  context Perm(a[get_local_id(0)], 1\2);
  context Perm(b[get_local_id(0)], 1);
  ensures 0 <= b[get_local_id(0)] && b[get_local_id(0)] <= 10;
@*/
__kernel void control_flow(__global const int *a, __global int *b) {
  int i = get_local_id(0);
  int count = 0;
  /*@
    loop_invariant 0 <= k && k <= 16;
    loop_invariant 0 <= count && count <= 10; //~ ERROR verify::invariant_preserved
  @*/
  for (int k = 0; k < 16; k++) {
    if (k % 2 == 1) {
      continue;
    }
    if (count == 11) {
      break;
    }
    count++;
  }
  int r;
  switch (a[i] % 3) {
  case 0:
    r = 1;
    break;
  case 1:
  case -1:
    r = 2;
    break;
  default:
    r = 3;
  }
  int steps = 0;
  //@ loop_invariant 1 <= steps && steps <= r && r <= 3;
  do {
    steps++;
  } while (steps < r);
  //@ assert steps == r;
  b[i] = count;
}
