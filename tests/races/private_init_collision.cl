// flags: --local_size=10 --num_groups=4
// expect: alpine::races::race
// line: 8
// Mutant of private_init.cl: two work-items map to the same element.
__kernel void k(__global int *p) {
    int perm[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 1};
    int i = get_local_id(0);
    p[get_group_id(0) * 10 + perm[i]] = i;
}
