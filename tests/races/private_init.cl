// flags: --local_size=10 --num_groups=4
// expect: verified
// A private array's initialiser gives its elements (C's zero for those it
// leaves out), here a permutation of the work-items of a group.
__kernel void k(__global int *p) {
    int perm[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    int i = get_local_id(0);
    __assert(perm[10] == 0 && perm[11] == 0);
    p[get_group_id(0) * 10 + perm[i]] = i;
}
