//! The interval test on a GPU (issue #36): the kernel emitted as CUDA by
//! alpine's own emitter (`emit`), its data over the interval-of-summands monoid
//! as pairs of integers, run once on the input `[0,0], …, [n−1,n−1]` by a
//! generated `main`, which compares every position with the expected interval
//! — the same test the interpreter runs (`scan::certify`), now of the code that
//! would run on the device.
//!
//! Which values are data is decided from the kernel's text (`data_typing`):
//! its `int[]` parameters (the interpreter gives all of them summands), and,
//! to a fixed point, every local assigned an expression that reads a data cell
//! or a data local, adds data, or calls the operator function. In a generic
//! kernel (which the interpreter's run has checked) data meets only the
//! operator, so this is a consistent typing of the code that runs; a kernel
//! that mixes data and integers where the run did not go fails to compile
//! (the C type converts to nothing), and the failure is reported, never taken
//! for agreement.
//!
//! A PVL barrier spans all threads of a par block, so the emitted kernel with
//! a barrier runs as one block and the device's block size bounds n; the
//! emitted host function says when it does not fit (status 2), and the run is
//! then reported as not done.
//!
//! The GPU run is a second execution of the same test, not part of the
//! theorem's argument: the certificate rests on the interpreter's run, which
//! also checks genericity and races. A GPU result that differs is an error
//! (the code alpine emits is not what it certified).

use super::{find, int_arg, Certificate, Request};
use crate::ast::visit::{walk_stmt, Visitor};
use crate::ast::{BinOp, Class, Expr, ExprKind, Member, Program, Stmt, StmtKind, TypeKind};
use crate::emit::{self, DataTyping, Options, Target};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// The C type of a data value in the emitted test.
pub const TYPE_NAME: &str = "alpine_summand";

/// The monoid in C++: `[lo, hi]` with `0 <= lo <= hi`, the identity `ε` as
/// `lo == -1`, the error element `⊤` as `lo == -2` (the operator of
/// `interp::generic::Summand::combine`).
const DEFINITION: &str = r#"// The interval-of-summands monoid of `alpine scan` (one test certifies a generic
// prefix sum): [lo, hi] (0 <= lo <= hi) is the sum of inputs lo..hi in order,
// lo == -1 the identity (the empty sum), lo == -2 the error element.
struct alpine_summand {
    int lo, hi;
    __host__ __device__ alpine_summand() : lo(-2), hi(-2) {}
    // The literal 0 written over data is the identity; no other integer is data.
    __host__ __device__ alpine_summand(int zero) : lo(zero == 0 ? -1 : -2), hi(zero == 0 ? -1 : -2) {}
    __host__ __device__ alpine_summand(int l, int h) : lo(l), hi(h) {}
};
__host__ __device__ static inline alpine_summand operator+(alpine_summand x, alpine_summand y) {
    if (x.lo == -1) return y;
    if (y.lo == -1) return x;
    if (x.lo >= 0 && y.lo >= 0 && x.hi + 1 == y.lo) return alpine_summand(x.lo, y.hi);
    return alpine_summand(-2, -2);
}
"#;

/// Which values of `class.method` are data (module doc).
pub fn data_typing(class: &Class, method: &str, operator: Option<&str>) -> DataTyping {
    let mut typing = DataTyping {
        type_name: TYPE_NAME.to_string(),
        definition: DEFINITION.to_string(),
        functions: operator.map(str::to_string).into_iter().collect(),
        ..Default::default()
    };
    let Some(m) = class.members.iter().find_map(|m| match m {
        Member::Method(m) if m.name.as_str() == method => Some(m),
        _ => None,
    }) else {
        return typing;
    };
    for p in &m.params {
        if matches!(&p.ty.kind, TypeKind::Array(e, _) if matches!(e.kind, TypeKind::Int)) {
            typing.arrays.insert(p.name.to_string());
        }
    }
    let crate::ast::MethodBody::Block(body) = &m.body else { return typing };
    // Every (local, value) assignment of the body, then a fixed point.
    struct Assignments(Vec<(String, Expr)>);
    impl Visitor for Assignments {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::LocalDecl { name, init: Some(e), .. } => self.0.push((name.to_string(), e.clone())),
                StmtKind::Assign { target: Expr { kind: ExprKind::Var(x), .. }, value } => self.0.push((x.to_string(), value.clone())),
                _ => {}
            }
            walk_stmt(self, s);
        }
    }
    let mut assignments = Assignments(Vec::new());
    for s in &body.stmts {
        assignments.visit_stmt(s);
    }
    loop {
        let before = typing.locals.len();
        for (x, e) in &assignments.0 {
            if is_data(&typing, e) {
                typing.locals.insert(x.clone());
            }
        }
        if typing.locals.len() == before {
            return typing;
        }
    }
}

/// Whether `e` is a data value under `typing`.
fn is_data(typing: &DataTyping, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(x) => typing.locals.contains(x.as_str()),
        ExprKind::Index { base, .. } => matches!(&base.kind, ExprKind::Var(a) if typing.arrays.contains(a.as_str())),
        ExprKind::Binary { op: BinOp::Add, lhs, rhs } => is_data(typing, lhs) || is_data(typing, rhs),
        ExprKind::Call { receiver: None, method, .. } => typing.functions.contains(method.as_str()),
        ExprKind::Cond { then_expr, else_expr, .. } => is_data(typing, then_expr) || is_data(typing, else_expr),
        _ => false,
    }
}

/// The CUDA program of the test: the kernel's class with the kernel method
/// and its pure functions alone, emitted over [`TYPE_NAME`], and a `main` that
/// runs it once and prints `alpine-scan: ok`, or the first wrong position
/// (`alpine-scan: wrong K LO HI`), or the host function's nonzero status.
pub fn harness(program: &Program, req: &Request, certificate: &Certificate) -> Result<String, String> {
    let m = find(program, &req.class, &req.method).ok_or_else(|| format!("no method `{}.{}`", req.class, req.method))?;
    let class = program.classes.iter().find(|c| c.name.as_str() == req.class).expect("find found the method in it");
    let mut only = class.clone();
    only.members.retain(|x| match x {
        Member::Method(x) => x.name == m.name || x.is_pure_function(),
        _ => false,
    });
    let mut single = program.clone();
    single.classes = vec![only];
    let typing = data_typing(&single.classes[0], &req.method, req.operator.as_deref());
    let options = Options { data: Some(Arc::new(typing)), ..Options::default() };
    let code = emit::emit_with(&single, Target::Cuda, options).map_err(|d| d.first().map_or_else(String::new, |d| d.message.clone()))?;
    let n = req.n;
    let host = emit::host_name(&single.classes[0], m);
    let mut decls = String::new();
    let mut fill = String::new();
    let mut args = Vec::new();
    for p in &m.params {
        let name = emit::c_name(p.name.as_str());
        if matches!(p.ty.kind, TypeKind::Array(..)) {
            decls += &format!("static {TYPE_NAME} alpine_cells_{name}[{}];\n", n.max(1));
            let first = if p.name.as_str() == certificate.input { "alpine_summand(k, k)" } else { "alpine_summand(-2, -2)" };
            fill += &format!("        alpine_cells_{name}[k] = {first};\n");
            args.push(format!("alpine_cells_{name}"));
            args.push(n.to_string());
        } else {
            args.push(int_arg(p, req).map_err(|e| e.message)?.to_string());
        }
    }
    let out = emit::c_name(&certificate.output);
    let expected = if req.exclusive { "k == 0 ? -1 : 0, k == 0 ? -1 : k - 1" } else { "0, k" };
    Ok(format!(
        "{code}
// The interval test of `alpine scan` (generated): the input's cells start as
// [k, k], every other array's as the error element; after one call of the host
// function every cell of the output must be the expected interval.
#ifdef ALPINE_NO_CUDA_SDK
extern \"C\" int printf(const char *fmt, ...);
#endif
{decls}
int main(void) {{
    for (int k = 0; k < {n}; k++) {{
{fill}    }}
    int status = {host}({args});
    if (status != 0) {{
        printf(\"alpine-scan: status %d\\n\", status);
        return 2;
    }}
#ifndef ALPINE_NO_CUDA_SDK
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        printf(\"alpine-scan: device %s\\n\", prop.name);
#endif
    for (int k = 0; k < {n}; k++) {{
        {TYPE_NAME} want({expected});
        {TYPE_NAME} got = alpine_cells_{out}[k];
        if (got.lo != want.lo || got.hi != want.hi) {{
            printf(\"alpine-scan: wrong %d %d %d\\n\", k, got.lo, got.hi);
            return 1;
        }}
    }}
    printf(\"alpine-scan: ok\\n\");
    return 0;
}}
",
        args = args.join(", "),
    ))
}

/// What the GPU run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every position holds the expected interval, on the named device.
    Agrees { device: String },
    /// The first position that does not (`ε` and `⊤` as the interpreter prints them).
    Differs { device: String, position: usize, found: String },
    /// Not run, and why (no nvcc, no GPU, a barrier kernel larger than a block, …).
    NotRun(String),
}

/// `nvcc`: `$NVCC`, else on the `PATH`, else CUDA's default place.
pub fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVCC").map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("nvcc")).find(|p| p.is_file()));
    on_path.or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()))
}

/// Builds `harness` with `nvcc` in a fresh directory and runs it.
pub fn run(harness: &str, nvcc: &Path) -> Outcome {
    let not_run = |why: String| Outcome::NotRun(why);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return not_run(format!("no temporary directory: {e}")),
    };
    let (source, binary) = (dir.path().join("scan.cu"), dir.path().join("scan"));
    if let Err(e) = std::fs::write(&source, harness) {
        return not_run(format!("writing {}: {e}", source.display()));
    }
    // For this machine's GPU; an nvcc that does not know `native` builds for its default.
    let build = |arch: &[&str]| Command::new(nvcc).arg("-O2").args(arch).arg("-o").arg(&binary).arg(&source).output();
    let built = match build(&["-arch=native"]) {
        Ok(o) if !o.status.success() => build(&[]),
        other => other,
    };
    match built {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let first = err.lines().find(|l| l.contains("error")).unwrap_or_else(|| err.lines().next().unwrap_or(""));
            return not_run(format!("nvcc did not build the emitted test: {}", first.trim()));
        }
        Err(e) => return not_run(format!("running {}: {e}", nvcc.display())),
    }
    let ran = match Command::new(&binary).output() {
        Ok(o) => o,
        Err(e) => return not_run(format!("running the emitted test: {e}")),
    };
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    let line =
        |key: &str| stdout.lines().find_map(|l| l.strip_prefix("alpine-scan: ")?.strip_prefix(key).map(str::trim).map(str::to_string));
    let device = line("device").unwrap_or_else(|| "the GPU".into());
    if line("ok").is_some() {
        return Outcome::Agrees { device };
    }
    if let Some(w) = line("wrong") {
        let v: Vec<i64> = w.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if let [k, lo, hi] = v[..] {
            let found = match lo {
                -1 => "ε".to_string(),
                -2 => "⊤".to_string(),
                _ => format!("[{lo}, {hi}]"),
            };
            return Outcome::Differs { device, position: k as usize, found };
        }
    }
    // The emitted host function reports CUDA errors and oversized blocks on stderr.
    let why = stderr.lines().find(|l| l.starts_with("alpine: ")).map(|l| l.trim_start_matches("alpine: ").to_string());
    not_run(why.unwrap_or_else(|| format!("the emitted test exited with {} and printed no verdict", ran.status)))
}
