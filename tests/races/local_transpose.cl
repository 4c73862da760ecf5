// flags: --local_size=[16,16] --num_groups=[4,4]
// expect: verified
// A tile transposed through local memory.
__kernel void transpose(__global const float *in, __global float *out, int width) {
    __requires(width == 64);
    __local float tile[16][17];
    int x = get_global_id(0), y = get_global_id(1);
    tile[get_local_id(1)][get_local_id(0)] = in[y * width + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int tx = get_group_id(1) * 16 + get_local_id(0);
    int ty = get_group_id(0) * 16 + get_local_id(1);
    out[ty * width + tx] = tile[get_local_id(0)][get_local_id(1)];
}
