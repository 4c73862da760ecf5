// flags: --local_size=[16,4] --num_groups=8
// expect: alpine::races::assert
// line: 6
// Mutant of launch_queries.cl: the launch has two dimensions, not one.
__kernel void k(__global int *p) {
    __assert(get_work_dim() == 1);
}
