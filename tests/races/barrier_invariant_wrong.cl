// flags: --local_size=64 --num_groups=4
// expect: alpine::races::assert
// line: 10
// Mutant: the barrier invariant does not hold (each work-item wrote 2 * tid).
#define N 64
__kernel void reverse(__global int *out) {
    __local int A[N];
    int tid = get_local_id(0);
    A[tid] = 2 * tid;
    __barrier_invariant_1(A[get_local_id(0)] == 2 * get_local_id(0) + 1, N - 1 - tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    int mirror = A[N - 1 - tid];
    __assert(mirror == 2 * (N - 1 - tid));
    out[get_global_id(0)] = mirror;
}
