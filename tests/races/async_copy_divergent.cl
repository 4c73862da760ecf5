// flags: --local_size=64 --num_groups=16
// expect: alpine::races::barrier_divergence
// line: 10
// Mutant of async_copy.cl: the copy is made by some work-items of a group
// only (it is a work-group function).
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float tile[N];
    if (get_local_id(0) < 32) {
        event_t e = async_work_group_copy(tile, p + N * get_group_id(0), N, 0);
        wait_group_events(1, &e);
    }
}
