// flags: --local_size=16 --num_groups=16
// expect: verified
// After a loop whose body ends with a barrier, the threads of a group see the
// same local memory, so a condition on it is uniform (no divergence).
__kernel void k(__local int *p) {
    for (int i = 0; i < 100; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        p[get_local_id(0)] = get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (p[0] == 22) {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
