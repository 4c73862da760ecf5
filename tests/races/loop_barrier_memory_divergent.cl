// flags: --local_size=16 --num_groups=16
// expect: alpine::races::barrier_divergence
// line: 13
// Mutant of loop_barrier_memory.cl: the condition reads the thread's own
// element, which differs between the threads.
__kernel void k(__local int *p) {
    for (int i = 0; i < 100; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        p[get_local_id(0)] = get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (p[get_local_id(0)] == 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
