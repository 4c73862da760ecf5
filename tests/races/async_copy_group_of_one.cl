// flags: --local_size=1 --num_groups=16
// expect: alpine::races::barrier_divergence
// line: 9
// Mutant of async_copy.cl: groups of one work-item, which reads the tile
// while its group's copy may still write it (not modelled: refused).
#define N 64
__kernel void scale(__global float *p, __global float *q) {
    __local float tile[N];
    event_t e = async_work_group_copy(tile, p + N * get_group_id(0), N, 0);
    q[get_global_id(0)] = tile[0];
}
