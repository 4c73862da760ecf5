// flags: --local_size=64 --num_groups=16
// expect: verified
// Asynchronous work-group copies: global to local, waited for and followed by
// a barrier before the tile is used; local to global after a barrier; a
// strided copy on the global side (each group its own residue class).
#define N 64
__kernel void scale(__global float *p, __global float *q, __global float *r) {
    __local float tile[N];
    event_t e = async_work_group_copy(tile, p + N * get_group_id(0), N, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[get_local_id(0)] = 2 * tile[get_local_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t out[2];
    out[0] = async_work_group_copy(q + N * get_group_id(0), tile, N, 0);
    out[1] = async_work_group_strided_copy(r + get_group_id(0), tile, N, get_num_groups(0), 0);
    wait_group_events(2, out);
}
