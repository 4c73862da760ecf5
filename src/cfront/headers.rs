//! The headers alpine ships inside its binary and the clang command line of each
//! language.
//!
//! The headers live under a directory that exists nowhere on disk
//! ([`INCLUDE_DIR`]); libclang is handed their text as unsaved files, so a kernel
//! reads the same declarations on every machine, without CUDA's SDK or an
//! OpenCL implementation installed. CUDA is read in clang's CUDA device mode
//! (`--cuda-device-only -nocudainc -nocudalib`: no SDK headers, no libdevice),
//! OpenCL as OpenCL C 1.2 with clang's own built-in declarations
//! (`opencl-c.h`, through `-finclude-default-header`).

use super::ir::Language;

/// The directory of the built-in headers; `-I` points there, so `#include
/// <cuda.h>` and `#include "cuda.h"` find alpine's.
pub const INCLUDE_DIR: &str = "/__alpine__/include";

const CUDA_PRELUDE: &str = include_str!("include/cuda_prelude.h");
const CUDA_RUNTIME_API: &str = include_str!("include/cuda_runtime_api.h");
const CUDA_H: &str = include_str!("include/cuda.h");
const OPENCL_PRELUDE: &str = include_str!("include/opencl_prelude.h");
const GPUVERIFY: &str = include_str!("include/gpuverify.h");

/// Instantiations a `__barrier_invariant_N` may have (GPUVerify's kernels use up
/// to 19).
const MAX_BARRIER_INSTANTIATIONS: usize = 32;

/// (path, text) of every built-in header of `lang`; the first is the prelude
/// that is force-included before the user's file.
pub fn headers(lang: Language) -> Vec<(String, String)> {
    let prelude = match lang {
        // nvcc includes the runtime API before every .cu file, so host code
        // (`cudaMalloc`, `<<<…>>>`) needs no `#include` either.
        Language::Cuda => format!("{CUDA_PRELUDE}\n{CUDA_RUNTIME_API}\n{GPUVERIFY}\n{}", barrier_invariants(lang)),
        Language::OpenCl => format!("{OPENCL_PRELUDE}\n{GPUVERIFY}\n{}", barrier_invariants(lang)),
    };
    let mut out = vec![(format!("{INCLUDE_DIR}/alpine_prelude.h"), prelude)];
    if lang == Language::Cuda {
        out.push((format!("{INCLUDE_DIR}/cuda.h"), CUDA_H.to_string()));
        out.push((format!("{INCLUDE_DIR}/cuda_runtime.h"), CUDA_H.to_string()));
    }
    out
}

/// `__barrier_invariant_N(inv, i1, …, iN)` and `__barrier_invariant_binary_N(inv,
/// (a1, b1), …)`: the number of instantiations is in the name, so each N is a
/// function of its own.
fn barrier_invariants(lang: Language) -> String {
    let qualifier = match lang {
        Language::Cuda => "__device__",
        Language::OpenCl => "__attribute__((overloadable))",
    };
    let mut out = String::new();
    for n in 1..=MAX_BARRIER_INSTANTIATIONS {
        let unary: Vec<String> = (0..n).map(|i| format!("int i{i}")).collect();
        let binary: Vec<String> = (0..n).map(|i| format!("int a{i}, int b{i}")).collect();
        out += &format!("{qualifier} void __barrier_invariant_{n}(bool inv, {});\n", unary.join(", "));
        out += &format!("{qualifier} void __barrier_invariant_binary_{n}(bool inv, {});\n", binary.join(", "));
    }
    out
}

/// clang's arguments for `lang` (before the user's `-D`/`-I`).
pub fn arguments(lang: Language) -> Vec<String> {
    let mut args: Vec<String> = match lang {
        Language::Cuda => ["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_70", "-std=c++14"]
            .map(String::from)
            .to_vec(),
        // The host target: clang enables the OpenCL 1.2 extensions there (`atom_*`,
        // `double`), and finds its own headers (with `-target spir` clang 14's
        // driver does not put its resource directory on the include path).
        Language::OpenCl => ["-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header"].map(String::from).to_vec(),
    };
    // Warnings are clang's business, not the reader's: only errors matter here.
    args.push("-w".into());
    args.push(format!("-I{INCLUDE_DIR}"));
    args.push("-include".into());
    args.push(format!("{INCLUDE_DIR}/alpine_prelude.h"));
    args
}
