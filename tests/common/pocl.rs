//! Running emitted OpenCL on PoCL against `alpine::interp` (issue #8), shared by
//! `tests/emit.rs` (the corpus programs), `tests/emit_differential.rs` (original
//! and optimised programs) and `tests/host_rust.rs` (the Rust launchers): seeded
//! inputs that meet a method's precondition ([`inputs`]), the interpreter's final
//! arrays ([`interp_arrays`]), and one C program that calls emitted host functions
//! on such inputs and prints their final arrays ([`run_opencl`]).
#![allow(dead_code)]

use alpine::interp::{Interp, Value};
use std::path::Path;
use std::process::Command;

/// Whether `tool arg` runs; a [`super::skip`] when it does not.
pub fn have(tool: &str, arg: &str) -> bool {
    let ok = Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success());
    if !ok {
        super::skip(&format!("`{tool}` is not available"));
    }
    ok
}

/// Whether C programs on the OpenCL API can be built here (gcc and the headers).
pub fn can_build_opencl() -> bool {
    if !have("gcc", "--version") {
        return false;
    }
    if !Path::new("/usr/include/CL/cl.h").exists() {
        super::skip("the OpenCL headers (/usr/include/CL/cl.h) are missing: no PoCL runs");
        return false;
    }
    true
}

/// The conjuncts of a precondition (`&&` and `**`).
pub fn conjuncts(e: &alpine::ast::Expr) -> Vec<&alpine::ast::Expr> {
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
pub fn inputs(p: &alpine::ast::Program, m: &alpine::ast::Method, seed: u64) -> Option<Vec<Value>> {
    use alpine::ast::{BinOp, ExprKind, TypeKind};
    let pres: Vec<&alpine::ast::Expr> = m.contract.preconditions().flat_map(conjuncts).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    // Small values, plus the contract's integer literals and their successors
    // (`tcount >= 100` needs one of them).
    let mut pool = vec![0i64, 1, 2, 3, 4, 5, 7, 16, 33];
    for e in m.contract.exprs() {
        let text = alpine::printer::print_expr(e);
        for w in text.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()) {
            if let Ok(n) = w.parse::<i64>() {
                if (34..=4096).contains(&n) {
                    pool.extend([n, n + 1]);
                }
            }
        }
    }
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
            if lengths[i].is_none() && matches!(q.ty.kind, TypeKind::Array(..)) {
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

pub fn array(t: &alpine::ast::Type, n: usize, rng: &mut fastrand::Rng) -> Value {
    use alpine::ast::TypeKind;
    let bool_elems = matches!(&t.kind, TypeKind::Array(e, _) if e.kind == TypeKind::Boolean);
    let v = (0..n).map(|_| if bool_elems { Value::Bool(rng.bool()) } else { Value::Int(rng.i64(-50..=50)) }).collect();
    Value::Array(std::rc::Rc::new(std::cell::RefCell::new(v)))
}

pub fn ints(v: &Value) -> Vec<i64> {
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

/// A fresh copy of argument values (arrays are shared `Rc`s: a run must not
/// change the inputs another run starts from).
pub fn fresh(args: &[Value]) -> Vec<Value> {
    args.iter()
        .map(|a| match a {
            Value::Array(v) => Value::Array(std::rc::Rc::new(std::cell::RefCell::new(v.borrow().clone()))),
            other => other.clone(),
        })
        .collect()
}

/// The final contents of the array arguments after the interpreter ran
/// `class.method` on a copy of `args`, with thread order `seed`.
pub fn interp_arrays(p: &alpine::ast::Program, class: &str, method: &str, args: &[Value], seed: u64) -> Result<Vec<Vec<i64>>, String> {
    let args = fresh(args);
    let mut it = Interp::new(p, 50_000_000);
    it.seed = seed;
    it.call(class, method, None, args.clone()).map_err(|e| e.0)?;
    Ok(args.iter().filter(|a| matches!(a, Value::Array(_))).map(ints).collect())
}

/// The methods of `p` that `code` (an `alpine emit --target opencl` unit) has as
/// host functions, with their class and C name: methods with a body that are
/// neither pure functions nor predicates, defined at the start of a line as
/// `int Class_method(`. A pure function is emitted as `static int Class_f(`
/// (host copy) and inside the kernel source: it returns a value, not a status,
/// so calling it as a host function would misread its result as an error.
pub fn host_methods<'a>(p: &'a alpine::ast::Program, code: &str) -> Vec<(&'a alpine::ast::Class, &'a alpine::ast::Method, String)> {
    let mut out = Vec::new();
    for class in &p.classes {
        for member in &class.members {
            let alpine::ast::Member::Method(m) = member else { continue };
            if m.is_pure_function() || m.is_predicate() {
                continue;
            }
            let host = format!("{}_{}", class.name, m.name);
            if code.contains(&format!("\nint {host}(")) {
                out.push((class, m, host));
            }
        }
    }
    out
}

/// One call of an emitted host function: its C name and the PVL arguments.
pub struct Call {
    pub host: String,
    pub args: Vec<Value>,
}

/// Compiles `code` (an `alpine emit --target opencl` unit) with a `main` that
/// makes each call on its inputs, runs it, and returns each call's final arrays
/// (array arguments in order). `Ok(None)`: no OpenCL platform here (a notice is
/// printed). `Err`: it did not compile, a host function failed, or it crashed.
pub fn run_opencl(dir: &Path, tag: &str, code: &str, calls: &[Call]) -> Result<Option<Vec<Vec<Vec<i64>>>>, String> {
    let mut main = String::from("#include <stdio.h>\nint main(void) {\n    int r;\n");
    for (c, call) in calls.iter().enumerate() {
        let mut actual = Vec::new();
        let mut printed = Vec::new();
        for (i, a) in call.args.iter().enumerate() {
            let vs = ints(a);
            if matches!(a, Value::Array(_)) {
                let body: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
                let init = if body.is_empty() { "0".to_string() } else { body.join(", ") };
                main += &format!("    static int a{c}_{i}[{}] = {{ {init} }};\n", vs.len().max(1));
                actual.push(format!("a{c}_{i}, {}", vs.len()));
                printed.push((i, vs.len()));
            } else {
                actual.push(vs[0].to_string());
            }
        }
        main += &format!("    r = {}({});\n    if (r != 0) return 10 + r;\n", call.host, actual.join(", "));
        for (i, n) in printed {
            main += &format!("    printf(\"call {c}:\"); for (int i = 0; i < {n}; i++) printf(\" %d\", a{c}_{i}[i]); printf(\"\\n\");\n");
        }
    }
    main += "    return 0;\n}\n";
    let src = dir.join(format!("{tag}.c"));
    std::fs::write(&src, format!("{code}\n{main}")).unwrap();
    let exe = dir.join(tag);
    let out = Command::new("gcc").args(["-std=c99", "-O1", "-w", "-o"]).arg(&exe).arg(&src).arg("-lOpenCL").output().expect("gcc runs");
    if !out.status.success() {
        return Err(format!("gcc failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    let out = Command::new(&exe).output().expect("the program runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("clGetPlatformIDs failed") || stderr.contains("clGetDeviceIDs failed") {
        super::skip("no OpenCL platform (install pocl-opencl-icd): no PoCL runs");
        return Ok(None);
    }
    if !out.status.success() {
        return Err(format!("exit {:?}\n{stderr}", out.status.code()));
    }
    let mut result: Vec<Vec<Vec<i64>>> = calls.iter().map(|_| Vec::new()).collect();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (head, rest) = line.split_once(':').ok_or_else(|| format!("bad output line `{line}`"))?;
        let c: usize = head.trim_start_matches("call ").parse().map_err(|_| format!("bad output line `{line}`"))?;
        result[c].push(rest.split_whitespace().map(|v| v.parse().unwrap()).collect());
    }
    Ok(Some(result))
}
