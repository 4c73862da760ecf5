// flags: --local_size=64 --num_groups=16
// expect: verified
// A grid-stride loop: every work-item handles every (global size)-th element.
__kernel void scale(__global const float *in, __global float *out, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        out[i] = out[i] + in[i];
    }
}
