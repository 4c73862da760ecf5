//! Issue #37, items 3 and 4: what the emitter knows about a program turns into
//! speed. Kernel array pointers are `__restrict__` / `restrict` (each array
//! parameter has its own device buffer), `const` where the kernel never writes
//! the array; the host code copies back only the arrays some kernel writes, and
//! its signature says so (`const int *` in C, `&[i32]` in Rust); a CUDA thread
//! runs several threads of a par block without a barrier. The PoCL differential
//! tests (`tests/emit.rs`, `tests/emit_differential.rs`, `tests/host_rust.rs`)
//! run the OpenCL code against the interpreter; `tests/emit.rs` compiles the
//! CUDA code of the corpus to PTX; the GPU benchmark (`benches/gpu.rs`) runs it.

use alpine::diagnostics::SourceFile;
use alpine::emit::{emit, emit_with, host_rust, Options, Target, ELEMENTS_PER_THREAD};

fn program(text: &str) -> alpine::ast::Program {
    alpine::frontend(&SourceFile::new("t.pvl", text)).map(|(p, _)| p).unwrap_or_else(|d| panic!("{d:?}"))
}

fn example(name: &str) -> alpine::ast::Program {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name);
    program(&std::fs::read_to_string(path).unwrap())
}

/// The host code's copies from the device (not the declarations of the prelude).
fn copies_back(code: &str) -> Vec<&str> {
    code.lines().filter(|l| l.contains("ALPINE_CHECK(cudaMemcpy(") && l.contains("cudaMemcpyDeviceToHost")).collect()
}

/// The lines of `code` that contain `needle`.
fn lines_with<'c>(code: &'c str, needle: &str) -> Vec<&'c str> {
    code.lines().filter(|l| l.contains(needle)).collect()
}

#[test]
fn read_only_arrays_are_const_restrict_and_only_written_arrays_come_back() {
    // scale_add: `a` is only read, `b` is written by both kernels.
    let p = example("scale_add.pvl");
    let cuda = emit(&p, Target::Cuda).unwrap();
    assert!(cuda.contains("void ScaleAdd_run_scale(int *__restrict__ b, int b_length, int k, const int *__restrict__ a,"), "{cuda}");
    assert!(cuda.contains("void ScaleAdd_run_add(int *__restrict__ b,"), "{cuda}");
    assert!(cuda.contains("int ScaleAdd_run(const int *a, int a_length, int *b, int b_length, int n, int k)"), "{cuda}");
    let back = copies_back(&cuda);
    assert_eq!(back.len(), 1, "{back:?}");
    assert!(back[0].contains("cudaMemcpy(b, alpine_d_b"), "{back:?}");
    assert!(cuda.contains("Kernel array pointers are `__restrict__`"), "the header says what a launcher must guarantee");

    let cl = emit(&p, Target::OpenCl).unwrap();
    assert!(
        cl.contains("__kernel void ScaleAdd_run_scale(__global int *restrict b, int b_length, int k, __global const int *restrict a,"),
        "{cl}"
    );
    assert!(cl.contains("int ScaleAdd_run(const int *a, int a_length, int *b, int b_length, int n, int k)"), "{cl}");
    let back = lines_with(&cl, "clEnqueueReadBuffer");
    assert_eq!(back.len(), 1, "{back:?}");
    assert!(back[0].contains("alpine_d_b"), "{back:?}");

    for target in [Target::Cuda, Target::OpenCl] {
        let rust = host_rust::emit(&p, target).unwrap();
        assert!(rust.contains("a: &[i32]") && rust.contains("b: &mut [i32]"), "{rust}");
        let reads = match target {
            Target::Cuda => "memcpy_dtoh",
            Target::OpenCl => "enqueue_read_buffer",
        };
        assert_eq!(lines_with(&rust, reads).len(), 1, "{rust}");
    }
}

#[test]
fn an_array_written_by_any_kernel_is_copied_back_and_const_only_where_not_written() {
    // `a` is read by `copy` and written by `clear`; `c` is written by `copy`.
    let p = program(
        "class T {
  context_everywhere a != null && c != null && a.length == n && c.length == n;
  context (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  context (\\forall* int i; 0 <= i && i < n; Perm(c[i], write));
  void m(int[] a, int[] c, int n) {
    par copy(int t = 0 .. n)
      context Perm(a[t], 1\\2) ** Perm(c[t], write);
    { c[t] = a[t]; }
    par clear(int t = 0 .. n)
      context Perm(a[t], write);
    { a[t] = 0; }
  }
}
",
    );
    let cuda = emit(&p, Target::Cuda).unwrap();
    assert!(cuda.contains("void T_m_copy(int *__restrict__ c, int c_length, const int *__restrict__ a, int a_length,"), "{cuda}");
    assert!(cuda.contains("void T_m_clear(int *__restrict__ a,"), "{cuda}");
    assert!(cuda.contains("int T_m(int *a, int a_length, int *c, int c_length, int n)"), "{cuda}");
    assert_eq!(copies_back(&cuda).len(), 2, "{cuda}");
}

#[test]
fn an_atomic_update_writes_its_array() {
    let p = program(
        "class H {
  context_everywhere a != null && s != null && s.length == 1;
  requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\\2));
  requires Perm(s[0], write);
  void m(int[] a, int[] s) {
    invariant inv(Perm(s[0], write)) {
      par k(int t = 0 .. a.length)
        context Perm(a[t], 1\\4);
      {
        atomic(inv) { s[0] = s[0] + a[t]; }
      }
    }
  }
}
",
    );
    let cuda = emit(&p, Target::Cuda).unwrap();
    assert!(cuda.contains("int *__restrict__ s") && cuda.contains("const int *__restrict__ a"), "{cuda}");
    let back = copies_back(&cuda);
    assert_eq!(back.len(), 1, "{back:?}");
    assert!(back[0].contains("cudaMemcpy(s, alpine_d_s"), "{back:?}");
}

#[test]
fn without_qualifiers_the_pointers_are_plain() {
    let p = example("vector_add.pvl");
    let plain = emit_with(&p, Target::Cuda, Options { qualify_pointers: false, ..Options::default() }).unwrap();
    assert!(plain.contains("void VectorAdd_add_threads(int *c, int c_length, int *a, int a_length, int *b, int b_length,"), "{plain}");
    assert!(
        plain.contains(
            "void VectorAdd_add_threads_thread(int *c, int c_length, int *a, int a_length, int *b, int b_length, int n, int tid)"
        ),
        "{plain}"
    );
    assert!(!plain.contains("__restrict__"), "{plain}");
    let qualified = emit(&p, Target::Cuda).unwrap();
    assert!(qualified.contains(
        "void VectorAdd_add_threads(int *__restrict__ c, int c_length, const int *__restrict__ a, int a_length, const int *__restrict__ b, int b_length,"
    ));
    // The host side does not depend on the option.
    let host = |code: &str| code[code.find("extern \"C\" int VectorAdd_add(").unwrap()..].to_string();
    assert_eq!(host(&plain), host(&qualified));
}

#[test]
fn device_timing_is_compiled_in_only_on_request() {
    let cuda = emit(&example("vector_add.pvl"), Target::Cuda).unwrap();
    // Every timing line is inside `#ifdef ALPINE_TIME_DEVICE` (after the
    // prelude, which declares the runtime's event calls for clang alone).
    let mut inside = false;
    for line in cuda[cuda.find("#define ALPINE_CHECK").unwrap()..].lines() {
        match line.trim() {
            "#ifdef ALPINE_TIME_DEVICE" => inside = true,
            "#endif" => inside = false,
            l if l.contains("cudaEvent") || l.contains("alpine_device_ms") => assert!(inside, "outside the #ifdef: {line}"),
            _ => {}
        }
    }
    // The events bracket the launches, after the copies in and before the copy back.
    let at = |s: &str| cuda.find(s).unwrap_or_else(|| panic!("{s} missing"));
    assert!(cuda.rfind("cudaMemcpyHostToDevice));").unwrap() < at("cudaEventRecord(alpine_t0"));
    assert!(at("cudaEventRecord(alpine_t0") < at("VectorAdd_add_threads<<<"));
    assert!(at("VectorAdd_add_threads<<<") < at("cudaEventRecord(alpine_t1"));
    assert!(at("cudaEventElapsedTime(&alpine_device_ms") < at("cudaMemcpyDeviceToHost));"));
}

/// The kernel named `name` in `code`, from its `extern "C"` line to its closing brace.
fn kernel<'c>(code: &'c str, name: &str) -> &'c str {
    let start = code.find(&format!("extern \"C\" __global__ void {name}(")).unwrap_or_else(|| panic!("no kernel {name}:\n{code}"));
    let end = start + code[start..].find("\n}\n").unwrap();
    &code[start..end]
}

#[test]
fn a_cuda_thread_runs_several_threads_of_a_par_block_without_a_barrier() {
    assert_eq!(ELEMENTS_PER_THREAD, 4);
    let cuda = emit(&example("vector_add.pvl"), Target::Cuda).unwrap();
    // The body, once, as a device function of the thread id, keeping the qualifiers
    // (and taking what its contract names: the lengths and `n`).
    assert!(cuda.contains(
        "__device__ static inline void VectorAdd_add_threads_thread(int *__restrict__ c, int c_length, const int *__restrict__ a, int a_length, const int *__restrict__ b, int b_length, int n, int tid) {\n    c[tid] = (a[tid] + b[tid]);\n}"
    ), "{cuda}");
    let k = kernel(&cuda, "VectorAdd_add_threads");
    // Whole chunks without bounds checks, the last one with them; block-width steps.
    assert!(k.contains("int alpine_first = 4 * (int)(blockIdx.x * blockDim.x);"), "{k}");
    assert!(k.contains("if (alpine_first <= alpine_n0 - 4 * alpine_b) {"), "{k}");
    assert_eq!(k.matches("VectorAdd_add_threads_thread(").count(), 8, "{k}");
    let call = |offset: &str| {
        format!("VectorAdd_add_threads_thread(c, c_length, a, a_length, b, b_length, n, alpine_lo0 + alpine_first + {offset});")
    };
    assert!(k.contains(&format!("        {}\n    }} else {{", call("3 * alpine_b + alpine_t"))), "{k}");
    assert!(
        k.contains(&format!("if (3 * alpine_b + alpine_t < alpine_n0 - alpine_first)\n            {}", call("3 * alpine_b + alpine_t"))),
        "{k}"
    );
    // The launch covers 256 × 4 threads of the range per block.
    assert!(cuda.contains("VectorAdd_add_threads<<<(alpine_n0 - 1) / 1024 + 1, 256>>>"), "{cuda}");
    // The Rust launcher launches the same grid for the same kernel source.
    let rust = host_rust::emit(&example("vector_add.pvl"), Target::Cuda).unwrap();
    assert!(rust.contains("alpine_n0 as u32 + 1024u32 - 1"), "{rust}");
}

#[test]
fn one_element_per_thread_is_the_plain_kernel() {
    let p = example("vector_add.pvl");
    let cuda = emit_with(&p, Target::Cuda, Options { elements_per_thread: 1, ..Options::default() }).unwrap();
    let k = kernel(&cuda, "VectorAdd_add_threads");
    assert!(!cuda.contains("_thread(") && !k.contains("alpine_first"), "{k}");
    assert!(k.contains("int alpine_g0 = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n    if (alpine_g0 < alpine_n0) {"), "{k}");
    assert!(cuda.contains("<<<(alpine_n0 - 1) / 256 + 1, 256>>>"), "{cuda}");
}

#[test]
fn kernels_with_a_barrier_two_dimensions_or_in_opencl_are_not_packed() {
    // A barrier spans every thread of the par block: each GPU thread is one of them.
    let barrier = emit(&example("shift_barrier.pvl"), Target::Cuda).unwrap();
    assert!(barrier.contains("__syncthreads()") && !barrier.contains("_thread("), "{barrier}");
    let two_d = program(
        "class M {
  context_everywhere a != null && a.length == w * h && w > 0 && h > 0;
  context (\\forall* int i; 0 <= i && i < w * h; Perm(a[i], write));
  void m(int[] a, int w, int h) {
    par k(int y = 0 .. h, int x = 0 .. w)
      context Perm(a[y * w + x], write);
    { a[y * w + x] = x + y; }
  }
}
",
    );
    let cuda = emit(&two_d, Target::Cuda).unwrap();
    assert!(!cuda.contains("_thread(") && cuda.contains("dim3(16, 16)"), "{cuda}");
    let cl = emit(&example("vector_add.pvl"), Target::OpenCl).unwrap();
    assert!(!cl.contains("_thread("), "{cl}");
}

#[test]
fn a_par_body_with_a_loop_of_unknown_trip_count_is_not_packed() {
    // Tiling: `inter` loops while `tid + k * T < n` (a trip count that depends on
    // `n`), `intra` over exactly 4 cells; only the second is packed (both forms
    // measured, docs/gpu-benchmarks.md).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/gpu/vector_add.pvl");
    let packed = |tile: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_alpine"))
            .args(["optimise", "--no-verify", "--tile", tile, "--emit", "cuda"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).contains("_thread(")
    };
    assert!(!packed("threads:inter:1048576"));
    assert!(packed("threads:intra:4"));
}
