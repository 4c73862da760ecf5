// flags: --local_size=[16,4] --num_groups=8 --global_offset=[32,0]
// expect: alpine::races::assert
// line: 7
// Mutant of launch_queries.cl: global ids start at the offset, not at 0.
__kernel void k(__global int *p) {
    __assert(get_work_dim() == 2);
    __assert(get_global_id(0) < 128);
}
