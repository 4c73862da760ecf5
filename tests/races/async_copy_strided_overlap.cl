// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// line: 11
// Mutant of async_copy.cl: the strided copy's stride is half the number of
// groups, so the elements of groups g and g + 8 interleave on r.
#define N 64
__kernel void scale(__global float *p, __global float *r) {
    __local float tile[N];
    tile[get_local_id(0)] = p[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_strided_copy(r + get_group_id(0), tile, N, get_num_groups(0) / 2, 0);
    wait_group_events(1, &e);
}
