// flags: --local_size=64 --num_groups=4
// expect: alpine::races::assert
// line: 14
// Mutant of spec_functions.cl: the pointer passed is one element further than
// the precondition says.
int __spec_next(int x) {
    __ensures(__return_val_int() == x + 1);
}
void inc(__global int *p) {
    __ensures(p[get_global_id(0)] == __old_int(p[get_global_id(0)]) + 1);
    p[get_global_id(0)] = p[get_global_id(0)] + 1;
}
void at(__global int *p) {
    __requires(__ptr_offset_bytes(p) == 4 * get_global_id(0));
    *p = 0;
}
__kernel void k(__global int *a, unsigned x, unsigned y) {
    unsigned z = __add_noovfl_unsigned_int(x, y);
    __assert(z >= x);
    at(a + get_global_id(0) + 1);
    inc(a);
    __assert(__spec_next(3) == 4);
}
