// flags: --local_size=* --global_size=1024
// expect: alpine::races::assert
// line: 7
// Mutant of global_size.cl: a group may hold all 1024 work-items.
__kernel void k(__global int *p) {
    __assert(get_local_size(0) <= 1024);
    __assert(get_local_size(0) < 1024);
}
