// A work-group stencil in local memory with a barrier, vectors and atomics.
#define W 64

int clamp_index(int i) { return i < 0 ? 0 : (i >= W ? W - 1 : i); }

__kernel void stencil(__global const float *in, __global float *out, __local float *tile, __global int *count) {
  size_t l = get_local_id(0);
  size_t g = get_global_id(0);
  tile[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  int left = clamp_index((int)l - 1);
  out[g] = (tile[left] + tile[l]) / 2.0f;
  float4 v = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  v.xy = v.zw;
  out[g] += v.x + get_group_id(1) + get_local_size(2) + get_num_groups(0);
  atomic_inc(count);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

// A kernel whose `__kernel` comes from a macro, with a local array; and a
// function with another attribute libclang does not expose.
#define KERNEL __kernel
KERNEL void spelled_by_macro(__global int *a) {
  __local int cache[W];
  cache[get_local_id(0)] = a[get_global_id(0)];
}
__attribute__((overloadable)) int not_a_kernel(int kernel_size) { return kernel_size; }
