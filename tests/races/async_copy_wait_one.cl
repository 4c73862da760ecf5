// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// line: 15
// Mutant of async_copy.cl: two copies, only the first waited for; the second
// tile is read after the barrier while its copy may still run.
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float a[N];
    __local float b[N];
    event_t e[2];
    e[0] = async_work_group_copy(a, p + N * get_group_id(0), N, 0);
    e[1] = async_work_group_copy(b, q + N * get_group_id(0), N, 0);
    wait_group_events(1, e);
    barrier(CLK_LOCAL_MEM_FENCE);
    p[get_global_id(0)] = a[get_local_id(0)] + b[get_local_id(0)];
}
