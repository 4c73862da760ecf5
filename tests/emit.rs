//! `alpine emit` (issue #8): the CUDA output of the GPU corpus compiles to PTX
//! with clang; the OpenCL output of the kernel-fusion and motivational programs
//! runs on PoCL and computes the interpreter's final arrays on seeded inputs that
//! meet the precondition; unsupported constructs are refused with a located
//! diagnostic. Each check skips with a notice when the corpus or a tool is absent.

mod common;

use alpine::diagnostics::SourceFile;
use alpine::emit::{emit, Target};
use alpine::interp::{Interp, Value};
use std::path::Path;
use std::process::Command;

fn have(tool: &str, arg: &str) -> bool {
    let ok = Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("NOTICE: `{tool}` not available; skipping");
    }
    ok
}

/// The corpus programs the emitter is tried on: `orig_`/`opt_` files and the
/// motivational example, checked by the front end (with companions).
fn programs(filter: impl Fn(&str) -> bool) -> Option<Vec<(String, alpine::ast::Program)>> {
    let dir = common::corpus_dir()?;
    let mut out = Vec::new();
    for (rel, text) in common::corpus_files()? {
        let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
        let wanted = name.starts_with("orig_") || name.starts_with("opt_") || rel.starts_with("motivational_example/");
        if !wanted || rel == common::MALFORMED || !filter(&rel) {
            continue;
        }
        let file = SourceFile::new(dir.join(&rel).to_string_lossy().into_owned(), text);
        if let Ok((p, _)) = alpine::frontend(&file) {
            out.push((rel, p));
        }
    }
    Some(out)
}

/// Declarations clang needs for the emitted `.cu` without a CUDA installation:
/// the qualifiers, the builtin variables, `dim3`, and the runtime calls the host
/// function makes (declared only: the test compiles device code).
const CUDA_PRELUDE: &str = r#"
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
typedef unsigned long size_t;
#define NULL 0
struct dim3 { unsigned x, y, z; __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {} };
typedef struct CUstream_st *cudaStream_t;
typedef int cudaError_t;
#define cudaSuccess 0
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerBlock = 1 };
extern "C" {
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k);
cudaError_t cudaGetDevice(int *d);
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t e);
unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t shmem = 0, cudaStream_t s = 0);
cudaError_t cudaConfigureCall(dim3 g, dim3 b, size_t shmem = 0, cudaStream_t s = 0);
int fprintf(struct _IO_FILE *f, const char *fmt, ...);
extern struct _IO_FILE *stderr;
}
extern "C" __device__ void __syncthreads(void) __asm__("llvm.nvvm.barrier0");
"#;

#[test]
fn cuda_output_of_the_corpus_compiles_to_ptx() {
    let Some(programs) = programs(|_| true) else { return };
    if !have("clang", "--version") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cuda_runtime.h"), CUDA_PRELUDE).unwrap();
    // The prelude declares what <stdio.h> would (host code only calls fprintf).
    std::fs::write(dir.path().join("stdio.h"), "").unwrap();
    let mut reasons: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut files = Vec::new();
    for (i, (rel, p)) in programs.iter().enumerate() {
        match emit(p, Target::Cuda) {
            Ok(code) => {
                let f = dir.path().join(format!("f{i}.cu"));
                std::fs::write(&f, code).unwrap();
                files.push((rel.clone(), f));
            }
            Err(d) => reasons.entry(d[0].message.clone()).or_default().push(rel.clone()),
        }
    }
    // One clang run for all files (PTX of each lands beside it).
    let mut cmd = Command::new("clang");
    cmd.current_dir(dir.path())
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib", "-S", "-I."])
        .args(files.iter().map(|(_, f)| f.file_name().unwrap().to_owned()));
    let out = cmd.output().expect("clang runs");
    assert!(out.status.success(), "clang failed:\n{}", String::from_utf8_lossy(&out.stderr));
    // clang names each output after its input (`f3.s`, or with the offload
    // triple in it): collect the PTX per input.
    let outputs: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".s"))
        .collect();
    for (rel, f) in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let ptx: String = outputs
            .iter()
            .filter(|n| n.strip_prefix(&stem).is_some_and(|r| r.starts_with('.') || r.starts_with('-')))
            .map(|n| std::fs::read_to_string(dir.path().join(n)).unwrap())
            .collect();
        assert!(ptx.contains(".entry"), "{rel}: no kernel in the PTX ({outputs:?})");
    }
    println!("CUDA: {} of {} corpus programs emitted and compiled to PTX", files.len(), programs.len());
    for (why, rels) in &reasons {
        println!("  refused ({}): {why}: {}", rels.len(), rels.join(", "));
    }
    // The GPU programs of the fusion and motivational folders are all supported.
    for (rel, _) in &programs {
        if rel.starts_with("kernel_fusion/") || rel.starts_with("motivational_example/") {
            assert!(files.iter().any(|(r, _)| r == rel), "{rel} was refused");
        }
    }
}

/// The conjuncts of a precondition (`&&` and `**`).
fn conjuncts(e: &alpine::ast::Expr) -> Vec<&alpine::ast::Expr> {
    use alpine::ast::{BinOp, ExprKind};
    match &e.kind {
        ExprKind::Binary { op: BinOp::And | BinOp::Star, lhs, rhs } => {
            let mut v = conjuncts(lhs);
            v.extend(conjuncts(rhs));
            v
        }
        _ => vec![e],
    }
}

/// Seeded arguments for `m` that meet its precondition (as far as the interpreter
/// can evaluate it): array lengths fixed by `a.length == E` conjuncts, the rest
/// drawn at random; inputs that violate a conjunct are redrawn.
fn inputs(p: &alpine::ast::Program, m: &alpine::ast::Method, seed: u64) -> Option<Vec<Value>> {
    use alpine::ast::{BinOp, ClauseKind, ExprKind, TypeKind};
    let pres: Vec<&alpine::ast::Expr> = m
        .contract
        .clauses
        .iter()
        .filter_map(|c| match &c.kind {
            ClauseKind::Requires(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) => Some(e),
            _ => None,
        })
        .flat_map(conjuncts)
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let pool = [0i64, 1, 2, 3, 4, 5, 7, 16, 33];
    for _ in 0..500 {
        let mut it = Interp::new(p, 100_000);
        let mut args: Vec<Value> = m
            .params
            .iter()
            .map(|q| match q.ty.kind {
                TypeKind::Int => Value::Int(pool[rng.usize(..pool.len())]),
                TypeKind::Boolean => Value::Bool(rng.bool()),
                _ => Value::Null,
            })
            .collect();
        // Lengths: `x.length == E` where E evaluates now; three passes for chains.
        let mut lengths: Vec<Option<usize>> = vec![None; m.params.len()];
        for pass in 0..3 {
            for e in &pres {
                let ExprKind::Binary { op: BinOp::Eq, lhs, rhs } = &e.kind else { continue };
                for (l, r) in [(lhs, rhs), (rhs, lhs)] {
                    // `n == E` for a scalar parameter n fixes it.
                    if let ExprKind::Var(v) = &l.kind {
                        if pass > 0 {
                            continue;
                        }
                        if let Some(i) = m.params.iter().position(|q| q.name.name == v.name && q.ty.kind == TypeKind::Int) {
                            if let Ok(x @ Value::Int(_)) = it.eval_in(m, None, &args, r) {
                                args[i] = x;
                            }
                        }
                        continue;
                    }
                    let ExprKind::Field { obj, field } = &l.kind else { continue };
                    if pass == 0 {
                        continue;
                    }
                    let ExprKind::Var(v) = &obj.kind else { continue };
                    let Some(i) = m.params.iter().position(|q| q.name.name == v.name) else { continue };
                    if &*field.name != "length" || lengths[i].is_some() {
                        continue;
                    }
                    if let Ok(Value::Int(n)) = it.eval_in(m, None, &args, r) {
                        if (0..=4096).contains(&n) {
                            lengths[i] = Some(n as usize);
                            args[i] = array(&m.params[i].ty, n as usize, &mut rng);
                        }
                    }
                }
            }
        }
        for (i, q) in m.params.iter().enumerate() {
            if lengths[i].is_none() && matches!(q.ty.kind, TypeKind::Array(_)) {
                args[i] = array(&q.ty, rng.usize(1..=40), &mut rng);
            }
        }
        // `(\forall int i; guard; a[i] == E)` with E free of `i`: every element is E.
        for e in &pres {
            let ExprKind::Quant { body, .. } = &e.kind else { continue };
            let ExprKind::Binary { op: BinOp::Eq, lhs, rhs } = &body.kind else { continue };
            let ExprKind::Index { base, .. } = &lhs.kind else { continue };
            let ExprKind::Var(v) = &base.kind else { continue };
            let Some(i) = m.params.iter().position(|q| q.name.name == v.name) else { continue };
            if let (Ok(x), Value::Array(a)) = (it.eval_in(m, None, &args, rhs), &args[i]) {
                a.borrow_mut().iter_mut().for_each(|y| *y = x.clone());
            }
        }
        if pres.iter().all(|e| it.holds("", m, None, &args, e).unwrap_or(true)) {
            return Some(args);
        }
    }
    None
}

fn array(t: &alpine::ast::Type, n: usize, rng: &mut fastrand::Rng) -> Value {
    use alpine::ast::TypeKind;
    let bool_elems = matches!(&t.kind, TypeKind::Array(e) if e.kind == TypeKind::Boolean);
    let v = (0..n).map(|_| if bool_elems { Value::Bool(rng.bool()) } else { Value::Int(rng.i64(-50..=50)) }).collect();
    Value::Array(std::rc::Rc::new(std::cell::RefCell::new(v)))
}

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(a) => a
            .borrow()
            .iter()
            .map(|x| match x {
                Value::Int(i) => *i,
                Value::Bool(b) => *b as i64,
                _ => 0,
            })
            .collect(),
        Value::Int(i) => vec![*i],
        Value::Bool(b) => vec![*b as i64],
        _ => vec![],
    }
}

#[test]
fn opencl_output_runs_on_pocl_like_the_interpreter() {
    let Some(programs) =
        programs(|rel| rel.starts_with("kernel_fusion/") || rel.starts_with("motivational_example/"))
    else {
        return;
    };
    if !have("gcc", "--version") || !Path::new("/usr/include/CL/cl.h").exists() {
        eprintln!("NOTICE: gcc or the OpenCL headers are missing; skipping the PoCL runs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (fi, (rel, p)) in programs.iter().enumerate() {
        let code = emit(p, Target::OpenCl).unwrap_or_else(|d| panic!("{rel}: refused: {}", d[0].message));
        // Every emitted host function, called on three inputs each.
        let mut main = String::from("int main(void) {\n    int r;\n");
        let mut expected = String::new();
        let mut runs = 0;
        for class in &p.classes {
            for member in &class.members {
                let alpine::ast::Member::Method(m) = member else { continue };
                let host = format!("{}_{}", class.name, m.name);
                if !code.contains(&format!("int {host}(")) {
                    continue;
                }
                for seed in 1..=3u64 {
                    let args = inputs(p, m, seed * 7919 + fi as u64).unwrap_or_else(|| panic!("{rel}: no input for {host}"));
                    let mut call = Vec::new();
                    for (i, (q, a)) in m.params.iter().zip(&args).enumerate() {
                        let vs = ints(a);
                        if matches!(a, Value::Array(_)) {
                            let body: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
                            main += &format!("    static int a{runs}_{i}[{}] = {{ {} }};\n", vs.len().max(1), if body.is_empty() { "0".into() } else { body.join(", ") });
                            call.push(format!("a{runs}_{i}, {}", vs.len()));
                        } else {
                            call.push(vs[0].to_string());
                            let _ = q;
                        }
                    }
                    main += &format!("    r = {host}({});\n    if (r != 0) return 10 + r;\n", call.join(", "));
                    let mut it = Interp::new(p, 50_000_000);
                    it.seed = seed;
                    it.call(&class.name.name, &m.name.name, None, args.clone())
                        .unwrap_or_else(|e| panic!("{rel}: interpreter: {}", e.0));
                    for (i, (q, a)) in m.params.iter().zip(&args).enumerate() {
                        if let Value::Array(_) = a {
                            let vs = ints(a);
                            main += &format!(
                                "    printf(\"run {runs} {}:\"); for (int i = 0; i < {}; i++) printf(\" %d\", a{runs}_{i}[i]); printf(\"\\n\");\n",
                                q.name,
                                vs.len()
                            );
                            let shown: String = vs.iter().map(|v| format!(" {v}")).collect();
                            expected += &format!("run {runs} {}:{shown}\n", q.name);
                        }
                    }
                    runs += 1;
                }
            }
        }
        main += "    return 0;\n}\n";
        assert!(runs >= 3, "{rel}: fewer than 3 runs");
        let src = dir.path().join(format!("p{fi}.c"));
        std::fs::write(&src, format!("{code}\n{main}")).unwrap();
        let exe = dir.path().join(format!("p{fi}"));
        let out = Command::new("gcc")
            .args(["-std=c99", "-O1", "-w", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lOpenCL")
            .output()
            .expect("gcc runs");
        assert!(out.status.success(), "{rel}: gcc failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let out = Command::new(&exe).output().expect("the program runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("clGetPlatformIDs failed") || stderr.contains("clGetDeviceIDs failed") {
            eprintln!("NOTICE: no OpenCL platform (install pocl-opencl-icd); skipping the PoCL runs");
            return;
        }
        assert!(out.status.success(), "{rel}: exit {:?}\n{stderr}", out.status.code());
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{rel}: PoCL and the interpreter differ");
        checked += runs;
    }
    println!("OpenCL on PoCL: {} programs, {checked} runs equal to the interpreter", programs.len());
    assert!(checked > 0);
}

/// Runs `alpine emit` on `text`; returns the exit code and the JSON diagnostics.
fn emit_cli(text: &str, target: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.pvl");
    std::fs::write(&f, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["--message-format", "json", "emit", "--target", target])
        .arg(&f)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

const HEAD: &str = "class C {\n  int x;\n  context_everywhere a != null;\n  requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));\n  void m(int[] a) {\n";

fn refused_at(body: &str, line: usize) {
    let text = format!("{HEAD}{body}  }}\n}}\n");
    for target in ["cuda", "opencl"] {
        let (code, json) = emit_cli(&text, target);
        assert_eq!(code, 2, "{target}: {text}\n{json}");
        assert!(json.contains("alpine::emit::unsupported"), "{json}");
        assert!(json.contains(&format!("\"line\":{line}")), "expected line {line}: {json}");
    }
}

#[test]
fn a_field_of_this_in_a_kernel_is_refused_at_its_line() {
    refused_at(
        "    par k(int t = 0 .. a.length)\n      context Perm(a[t], write) ** Perm(x, read);\n    {\n      a[t] = x;\n    }\n",
        9,
    );
}

#[test]
fn a_sequence_in_a_kernel_is_refused_at_its_line() {
    refused_at("    par k(int t = 0 .. a.length)\n      context Perm(a[t], write);\n    {\n      seq<int> s = seq<int>{ a[t] };\n    }\n", 9);
}

#[test]
fn host_array_access_and_kernel_assignment_to_a_host_variable_are_refused() {
    refused_at("    int s = 0;\n    par k(int t = 0 .. a.length)\n    {\n      s = 1;\n    }\n", 9);
    refused_at("    a[0] = 1;\n    par k(int t = 0 .. a.length)\n      context Perm(a[t], write);\n    { a[t] = 2; }\n", 6);
}

#[test]
fn a_file_without_par_is_refused_and_a_supported_one_is_accepted() {
    let (code, json) = emit_cli("class D {\n  int f(int x) = x + 1;\n}\n", "cuda");
    assert_eq!(code, 2, "{json}");
    let ok = format!("{HEAD}    par k(int t = 0 .. a.length)\n      context Perm(a[t], write);\n    {{ a[t] = t / 2 % 3; }}\n  }}\n}}\n");
    let (code, out) = emit_cli(&ok, "opencl");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("__kernel void C_m_k(__global int *a, int alpine_lo0, int alpine_n0)"), "{out}");
}
