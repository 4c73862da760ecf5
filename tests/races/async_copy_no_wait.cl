// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// line: 12
// Mutant of async_copy.cl: the copy is not waited for, so the barrier does not
// order it before the tile is read.
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float tile[N];
    event_t e = async_work_group_copy(tile, p + N * get_group_id(0), N, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    float x = 0;
    x = tile[get_local_id(0)];
    q[get_global_id(0)] = x;
}
