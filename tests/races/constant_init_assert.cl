// flags: --local_size=8 --num_groups=4
// expect: alpine::races::assert
// line: 11
// Mutant of constant_init.cl: the lane the initialiser leaves out is zero,
// not one.
__constant int perm[8] = {1, 0, 3, 2, 5, 4, 7, 6};
__constant int2 offs[2] = {{0, 1}};
__kernel void scatter(__global int *p) {
    int i = get_local_id(0);
    p[get_group_id(0) * 8 + perm[i]] = i;
    __assert(offs[1].y == 1);
}
