// flags: --local_size=[16,4] --num_groups=8 --global_offset=[32,0]
// expect: verified
// OpenCL's launch queries answered by GPUVerify's flags: the global offset
// shifts global ids, and two axes given make a two-dimensional launch.
__kernel void k(__global int *p) {
    __assert(get_work_dim() == 2);
    __assert(get_global_offset(0) == 32 && get_global_offset(1) == 0);
    __assert(get_global_id(0) >= 32);
    p[get_global_id(1) * 1024 + get_global_id(0) - get_global_offset(0)] = 1;
}
