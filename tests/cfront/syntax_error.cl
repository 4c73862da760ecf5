__kernel void broken(__global int *a) {
  a[get_local_id(0)] = 1
}
