// flags: --local_size=64 --num_groups=4
// expect: alpine::races::unsupported
// line: 11
// Refused: the barrier invariant mentions a work-item's own variable, whose value
// for the work-items it is assumed of is unknown.
#define N 64
__kernel void reverse(__global int *out) {
    __local int A[N];
    int tid = get_local_id(0);
    A[tid] = 2 * tid;
    __barrier_invariant_1(A[tid] == 2 * tid, N - 1 - tid);
    barrier(CLK_LOCAL_MEM_FENCE);
    int mirror = A[N - 1 - tid];
    __assert(mirror == 2 * (N - 1 - tid));
    out[get_global_id(0)] = mirror;
}
