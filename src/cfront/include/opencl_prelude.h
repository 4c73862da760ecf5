/* alpine's OpenCL prelude, force-included before every .cl file (src/cfront),
 * after clang's own OpenCL C built-in declarations (opencl-c.h, through
 * -finclude-default-header), which give the work-item functions, barrier,
 * atomics, vector types and the math library of the OpenCL C specification.
 * This file only adds what kernels written for other OpenCL front ends expect
 * from theirs. */
#ifndef NULL
#define NULL ((void *)0)
#endif
