// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// line: 11
// Mutant of async_copy.cl: consecutive groups copy out to overlapping halves
// of q (a write-write race between two groups' copies).
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float tile[N];
    tile[get_local_id(0)] = p[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(q + (N / 2) * get_group_id(0), tile, N, 0);
    wait_group_events(1, &e);
}
