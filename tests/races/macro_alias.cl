// flags: --local_size=8 --num_groups=1
// expect: alpine::races::assert
// line: 8
// Two local arrays in a function whose macros make the front end lower it
// again from clang's printing (every node then has one span): they must stay
// two arrays. (They once shared a region, which proved this false assertion.)
#define twice(x) ((x) * 2)
__kernel void k(__global int *out) {
    __local int A[8];
    __local int B[8];
    A[get_local_id(0)] = 1;
    B[get_local_id(0)] = twice(get_local_id(0));
    __assert(A[get_local_id(0)] == twice(get_local_id(0)));
    out[get_global_id(0)] = A[get_local_id(0)];
}
