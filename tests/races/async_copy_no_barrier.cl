// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// line: 13
// Mutant of async_copy.cl: the work-items write the tile and the copy out
// reads it with no barrier between.
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float tile[N];
    event_t e = async_work_group_copy(tile, p + N * get_group_id(0), N, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[get_local_id(0)] = 2 * tile[get_local_id(0)];
    e = async_work_group_copy(q + N * get_group_id(0), tile, N, 0);
    wait_group_events(1, &e);
}
