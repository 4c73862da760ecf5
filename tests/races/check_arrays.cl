// flags: --local_size=64 --num_groups=2 --vcgen-opt=/checkArrays:B
// expect: verified
// GPUVerify's `/checkArrays:B`: only B is race-checked (A races, unchecked,
// and keeps no log).
__kernel void k(__global int *A, __global int *B) {
    A[get_global_id(0) + 1] = B[get_global_id(0)];
    B[get_global_id(0)] += A[get_global_id(0)];
    __assert(__no_write(A));
}
