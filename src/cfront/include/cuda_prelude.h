/* alpine's CUDA prelude, force-included before every .cu file (src/cfront).
 *
 * Written from the CUDA C++ Programming Guide: the function and variable
 * qualifiers (clang's own CUDA attributes), the built-in variables, the vector
 * types, synchronisation and atomic functions, and the device math functions
 * GPU kernels commonly call. Declarations only: alpine reads kernels, it does
 * not compile them, so no definition is needed and none would be correct for
 * every device. Nothing here comes from NVIDIA's SDK, which alpine does not need.
 */
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define CUDART_CB

typedef __SIZE_TYPE__ size_t;
/* The short names that the host headers a CUDA file always sees (glibc's
 * <sys/types.h>, through the runtime's <stdlib.h>) give the unsigned types. */
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#define NULL 0

/* Vector types (Programming Guide, "Built-in Vector Types"): structs with x, y,
 * z, w and make_<type>N constructors. */
#define __ALPINE_VECTORS(T, N)                                                            \
    struct N##1 { T x; };                                                                 \
    struct __attribute__((aligned(2 * sizeof(T)))) N##2 { T x, y; };                      \
    struct N##3 { T x, y, z; };                                                           \
    struct __attribute__((aligned(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T)))) N##4 { T x, y, z, w; }; \
    __host__ __device__ N##1 make_##N##1(T x);                                            \
    __host__ __device__ N##2 make_##N##2(T x, T y);                                       \
    __host__ __device__ N##3 make_##N##3(T x, T y, T z);                                  \
    __host__ __device__ N##4 make_##N##4(T x, T y, T z, T w);
__ALPINE_VECTORS(signed char, char)
__ALPINE_VECTORS(unsigned char, uchar)
__ALPINE_VECTORS(short, short)
__ALPINE_VECTORS(unsigned short, ushort)
__ALPINE_VECTORS(int, int)
__ALPINE_VECTORS(unsigned int, uint)
__ALPINE_VECTORS(long, long)
__ALPINE_VECTORS(unsigned long, ulong)
__ALPINE_VECTORS(long long, longlong)
__ALPINE_VECTORS(unsigned long long, ulonglong)
__ALPINE_VECTORS(float, float)
__ALPINE_VECTORS(double, double)
#undef __ALPINE_VECTORS

/* Built-in variables (Programming Guide, "Built-in Variables"). alpine's front
 * end turns every use of them into its own thread/block id nodes. `uint3`
 * is one of the vector types above. */
struct dim3 {
    unsigned int x, y, z;
    __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

/* Synchronisation ("Synchronization Functions", "Warp Vote Functions",
 * "Memory Fence Functions"). */
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int predicate);
__device__ int __syncthreads_and(int predicate);
__device__ int __syncthreads_or(int predicate);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
/* Cooperative groups, the thread-block group only ("Cooperative Groups":
 * `this_thread_block()` and `synchronize(g)` (the block's barrier), which alpine reads as `__syncthreads()`; grid and multi-grid
 * groups are not declared, so a kernel that uses them is refused). */
namespace cooperative_groups {
struct thread_block {
    unsigned int __alpine_group;
};
__device__ thread_block this_thread_block();
__device__ void synchronize(const thread_block &g);
}
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __threadfence_system(void);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ unsigned int __activemask(void);
/* Warp shuffle and match functions ("Warp Shuffle Functions", "Warp Match
 * Functions"), every type the guide lists. */
#define __ALPINE_SHFL(T)                                                                  \
    __device__ T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32);      \
    __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32); \
    __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32); \
    __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32); \
    __device__ unsigned int __match_any_sync(unsigned int mask, T value);                 \
    __device__ unsigned int __match_all_sync(unsigned int mask, T value, int *pred);
__ALPINE_SHFL(int)
__ALPINE_SHFL(unsigned int)
__ALPINE_SHFL(long)
__ALPINE_SHFL(unsigned long)
__ALPINE_SHFL(long long)
__ALPINE_SHFL(unsigned long long)
__ALPINE_SHFL(float)
__ALPINE_SHFL(double)
#undef __ALPINE_SHFL

/* Atomic functions ("Atomic Functions"), every integer and floating-point
 * overload the guide lists. */
#define __ALPINE_ATOMIC2(NAME, T) __device__ T NAME(T *address, T val);
#define __ALPINE_ATOMIC_INTS(NAME)                                                        \
    __ALPINE_ATOMIC2(NAME, int) __ALPINE_ATOMIC2(NAME, unsigned int)                      \
    __ALPINE_ATOMIC2(NAME, unsigned long long int) __ALPINE_ATOMIC2(NAME, long long int)
__ALPINE_ATOMIC_INTS(atomicAdd)
__ALPINE_ATOMIC2(atomicAdd, float)
__ALPINE_ATOMIC2(atomicAdd, double)
__ALPINE_ATOMIC_INTS(atomicSub)
__ALPINE_ATOMIC_INTS(atomicExch)
__ALPINE_ATOMIC2(atomicExch, float)
__ALPINE_ATOMIC_INTS(atomicMin)
__ALPINE_ATOMIC_INTS(atomicMax)
__ALPINE_ATOMIC_INTS(atomicAnd)
__ALPINE_ATOMIC_INTS(atomicOr)
__ALPINE_ATOMIC_INTS(atomicXor)
__device__ unsigned int atomicInc(unsigned int *address, unsigned int val);
__device__ unsigned int atomicDec(unsigned int *address, unsigned int val);
__device__ int atomicCAS(int *address, int compare, int val);
__device__ unsigned int atomicCAS(unsigned int *address, unsigned int compare, unsigned int val);
__device__ unsigned long long int atomicCAS(unsigned long long int *address, unsigned long long int compare,
                                            unsigned long long int val);
#undef __ALPINE_ATOMIC_INTS
#undef __ALPINE_ATOMIC2

/* Integer intrinsics and the device math library ("Mathematical Functions",
 * "Intrinsic Functions"), single and double precision. */
__device__ int min(int a, int b);
__device__ unsigned int min(unsigned int a, unsigned int b);
__device__ long long min(long long a, long long b);
__device__ float min(float a, float b);
__device__ double min(double a, double b);
__device__ int max(int a, int b);
__device__ unsigned int max(unsigned int a, unsigned int b);
__device__ long long max(long long a, long long b);
__device__ float max(float a, float b);
__device__ double max(double a, double b);
__device__ int abs(int a);
__device__ int __mul24(int x, int y);
__device__ unsigned int __umul24(unsigned int x, unsigned int y);
__device__ int __mulhi(int x, int y);
__device__ unsigned int __umulhi(unsigned int x, unsigned int y);
__device__ int __popc(unsigned int x);
__device__ int __clz(int x);
__device__ int __ffs(int x);
__device__ unsigned int __brev(unsigned int x);
__device__ float __fdividef(float x, float y);
__device__ float __int_as_float(int x);
__device__ int __float_as_int(float x);
__device__ float __saturatef(float x);
#define __ALPINE_MATH1(F) __device__ float F##f(float x); __device__ double F(double x); __device__ float __##F##f(float x);
#define __ALPINE_MATH2(F) __device__ float F##f(float x, float y); __device__ double F(double x, double y);
__ALPINE_MATH1(sqrt) __ALPINE_MATH1(rsqrt) __ALPINE_MATH1(cbrt) __ALPINE_MATH1(exp) __ALPINE_MATH1(exp2)
__ALPINE_MATH1(exp10) __ALPINE_MATH1(expm1) __ALPINE_MATH1(log) __ALPINE_MATH1(log2) __ALPINE_MATH1(log10)
__ALPINE_MATH1(log1p) __ALPINE_MATH1(sin) __ALPINE_MATH1(cos) __ALPINE_MATH1(tan) __ALPINE_MATH1(asin)
__ALPINE_MATH1(acos) __ALPINE_MATH1(atan) __ALPINE_MATH1(sinh) __ALPINE_MATH1(cosh) __ALPINE_MATH1(tanh)
__ALPINE_MATH1(fabs) __ALPINE_MATH1(floor) __ALPINE_MATH1(ceil) __ALPINE_MATH1(round) __ALPINE_MATH1(trunc)
__ALPINE_MATH1(rint) __ALPINE_MATH1(erf) __ALPINE_MATH1(erfc) __ALPINE_MATH1(lgamma) __ALPINE_MATH1(tgamma)
__ALPINE_MATH1(normcdf)
__ALPINE_MATH2(pow) __ALPINE_MATH2(fmin) __ALPINE_MATH2(fmax) __ALPINE_MATH2(fmod) __ALPINE_MATH2(atan2)
__ALPINE_MATH2(hypot) __ALPINE_MATH2(fdim) __ALPINE_MATH2(copysign) __ALPINE_MATH2(remainder)
__device__ float fmaf(float x, float y, float z);
__device__ double fma(double x, double y, double z);
__device__ void sincosf(float x, float *s, float *c);
__device__ void sincos(double x, double *s, double *c);
__device__ int isnan(double x);
__device__ int isinf(double x);
#undef __ALPINE_MATH1
#undef __ALPINE_MATH2

extern "C" {
__device__ int printf(const char *format, ...);
__device__ void *malloc(size_t size);
__device__ void free(void *p);
__device__ void *memcpy(void *dst, const void *src, size_t n);
__device__ void *memset(void *dst, int c, size_t n);
}
