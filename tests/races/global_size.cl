// flags: --local_size=* --global_size=1024
// expect: verified
// An unconstrained work-group size with a given global size: the two are
// related (size times groups is the global size).
__kernel void k(__global int *p) {
    __assert(get_local_size(0) <= 1024);
    __assert(get_global_size(0) == 1024);
    p[get_global_id(0)] = 0;
}
