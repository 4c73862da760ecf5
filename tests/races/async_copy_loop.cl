// flags: --local_size=64 --num_groups=16
// expect: verified
// Asynchronous copies in a loop: each tile is copied in, waited for, used
// after a barrier, and the next copy starts after another barrier.
#define N 64
__kernel void sum(__global float *p, __global float *q, int tiles) {
    __local float tile[N];
    float acc = 0;
    for (int i = 0; i < tiles; i++) {
        event_t e = async_work_group_copy(tile, p + N * (i * get_num_groups(0) + get_group_id(0)), N, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += tile[get_local_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    q[get_global_id(0)] = acc;
}
