// flags: --local_size=64 --num_groups=2 --vcgen-opt=/checkArrays:B
// expect: alpine::races::race
// line: 7
// Mutant of check_arrays.cl: B races now, and B is checked.
__kernel void k(__global int *A, __global int *B) {
    A[get_global_id(0) + 1] = B[get_global_id(0)];
    B[get_global_id(0)] += B[get_global_id(0) + 1];
}
