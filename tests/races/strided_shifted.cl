// flags: --local_size=64 --num_groups=16
// expect: alpine::races::race
// Mutant of strided.cl: the read of `out` shifted by one element (it reads
// what the next work-item writes).
__kernel void scale(__global const float *in, __global float *out, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        out[i] = out[i + 1] + in[i];
    }
}
