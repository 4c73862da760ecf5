// flags: --local_size=64 --num_groups=* --global_size=1000
// expect: alpine::races::assert
// line: 8
// Twin of global_size.cl with flags no launch satisfies (1000 is not a
// multiple of 64): no fact is drawn from them, so nothing is proved
// vacuously.
__kernel void k(__global int *p) {
    __assert(false);
}
