// flags: --local_size=8 --num_groups=4
// expect: alpine::races::race
// line: 9
// Mutant of constant_init.cl: `perm` maps two work-items to the same element.
__constant int perm[8] = {1, 0, 3, 2, 5, 4, 7, 7};
__constant int2 offs[2] = {{0, 1}};
__kernel void scatter(__global int *p) {
    int i = get_local_id(0);
    p[get_group_id(0) * 8 + perm[i]] = i;
    __assert(offs[0].y == 1);
    __assert(offs[1].y == 0);
}
