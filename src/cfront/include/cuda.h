/* alpine: <cuda.h> is empty; the declarations kernels need are in the prelude force-included before every .cu file. */
