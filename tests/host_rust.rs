//! Issue #8, acceptance point 4: the Rust launchers of `alpine emit --host rust`.
//!
//! For three example programs (and the fused version of one of them), the
//! OpenCL and the CUDA launcher modules are generated with alpine's library,
//! together with `#[test]`s that call each OpenCL launcher on seeded inputs
//! meeting the method's precondition and compare the final arrays with
//! `alpine::interp`'s. Then `cargo test` builds the crate `tests/host-rust`
//! (which `include!`s them; target dir `target/host-rust`) and runs those tests
//! on PoCL. The CUDA modules are compiled there too (type-checked against
//! `cudarc`), not run: there is no GPU. Skipped with a notice where no OpenCL
//! platform is installed or crates.io cannot be reached for the launcher crates.

mod common;

use alpine::diagnostics::SourceFile;
use alpine::emit::{host_rust, Target};
use alpine::interp::Value;
use common::pocl;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The programs: (module name, PVL text).
fn examples() -> Vec<(&'static str, String)> {
    let read = |f: &str| std::fs::read_to_string(root().join("examples").join(f)).unwrap();
    let fused = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["optimise", "--fuse", "scale,add"])
        .arg(root().join("examples/scale_add.pvl"))
        .output()
        .unwrap();
    assert!(fused.status.success(), "{}", String::from_utf8_lossy(&fused.stderr));
    vec![
        ("vector_add", read("vector_add.pvl")),
        ("shift_barrier", read("shift_barrier.pvl")),
        ("scale_add", read("scale_add.pvl")),
        ("scale_add_fused", String::from_utf8(fused.stdout).unwrap()),
    ]
}

/// A Rust expression for an argument value (`vec![..]` for arrays).
fn rust_value(v: &Value, bools: bool) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(_) if bools => {
            format!("vec![{}]", pocl::ints(v).iter().map(|x| (*x != 0).to_string()).collect::<Vec<_>>().join(", "))
        }
        Value::Array(_) => format!("vec![{}]", pocl::ints(v).iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
        _ => panic!("unsupported argument {v:?}"),
    }
}

/// The generated crate body: the modules and one test per (host method, seed).
fn generate(gen: &Path) -> usize {
    let mut lib = String::new();
    let mut checks = 0;
    for (name, text) in examples() {
        let (p, _) = alpine::frontend(&SourceFile::new(format!("{name}.pvl"), text)).expect("example checks");
        for (target, suffix) in [(Target::OpenCl, "cl"), (Target::Cuda, "cuda")] {
            let code = host_rust::emit(&p, target).unwrap_or_else(|d| panic!("{name}: refused: {}", d[0].message));
            let file = gen.join(format!("{name}_{suffix}.rs"));
            std::fs::write(&file, code).unwrap();
            lib += &format!("pub mod {name}_{suffix} {{\n    include!({:?});\n}}\n", file.display().to_string());
        }
        for class in &p.classes {
            for member in &class.members {
                let alpine::ast::Member::Method(m) = member else { continue };
                let alpine::ast::MethodBody::Block(_) = &m.body else { continue };
                if m.is_pure_function() || m.is_predicate() {
                    continue;
                }
                for seed in 1..=3u64 {
                    let args = pocl::inputs(&p, m, seed * 31 + checks as u64).unwrap_or_else(|| panic!("{name}: no input"));
                    let want = pocl::interp_arrays(&p, &class.name.name, &m.name.name, &args, seed).unwrap();
                    let mut body = String::new();
                    let mut call = Vec::new();
                    let mut arrays = Vec::new();
                    for (i, (q, a)) in m.params.iter().zip(&args).enumerate() {
                        let bools = matches!(&q.ty.kind, alpine::ast::TypeKind::Array(e, _) if e.kind == alpine::ast::TypeKind::Boolean);
                        if matches!(a, Value::Array(_)) {
                            body += &format!("    let mut a{i} = {};\n", rust_value(a, bools));
                            call.push(format!("&mut a{i}"));
                            arrays.push(i);
                        } else {
                            call.push(rust_value(a, false));
                        }
                    }
                    body +=
                        &format!("    super::{name}_cl::{}_{}({}).expect(\"the launcher runs\");\n", class.name, m.name, call.join(", "));
                    for (i, w) in arrays.iter().zip(&want) {
                        body += &format!("    assert_eq!(a{i}.iter().map(|&x| x as i64).collect::<Vec<i64>>(), vec!{w:?});\n");
                    }
                    lib += &format!(
                        "#[cfg(test)]\nmod check_{name}_{}_{seed} {{\n#[test]\nfn equals_the_interpreter() {{\n{body}}}\n}}\n",
                        m.name
                    );
                    checks += 1;
                }
            }
        }
    }
    std::fs::write(gen.join("lib.rs"), lib).unwrap();
    checks
}

/// Whether an OpenCL platform runs here: the C launcher of one example on PoCL.
fn opencl_available(dir: &Path) -> bool {
    if !pocl::can_build_opencl() {
        return false;
    }
    let text = std::fs::read_to_string(root().join("examples/vector_add.pvl")).unwrap();
    let (p, _) = alpine::frontend(&SourceFile::new("vector_add.pvl", text)).unwrap();
    let code = alpine::emit::emit(&p, Target::OpenCl).unwrap();
    let one = |v: i64| Value::Array(std::rc::Rc::new(std::cell::RefCell::new(vec![Value::Int(v)])));
    let call = pocl::Call { host: "VectorAdd_add".into(), args: vec![one(1), one(2), one(0), Value::Int(1)] };
    pocl::run_opencl(dir, "probe", &code, &[call]).expect("the C launcher runs").is_some()
}

#[test]
fn rust_launchers_compile_and_run_on_pocl_like_the_interpreter() {
    // Generated into the target directory, where a failing check can be read.
    let gen_dir = root().join("target/host-rust/gen");
    let _ = std::fs::remove_dir_all(&gen_dir);
    std::fs::create_dir_all(&gen_dir).unwrap();
    if !opencl_available(&gen_dir) {
        return;
    }
    let checks = generate(&gen_dir);
    assert!(checks >= 9, "{checks} checks");
    let out = Command::new(env!("CARGO"))
        .args(["test", "--quiet", "--manifest-path"])
        .arg(root().join("tests/host-rust/Cargo.toml"))
        .env("CARGO_TARGET_DIR", root().join("target/host-rust"))
        .env("ALPINE_HOST_RUST_GEN", &gen_dir)
        .output()
        .expect("cargo runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let offline = ["failed to download", "Unable to update registry", "failed to query replaced source", "Couldn't resolve host"];
    if !out.status.success() && offline.iter().any(|s| stderr.contains(s)) {
        common::skip(&format!("the launcher crates cannot be fetched (offline?)\n{stderr}"));
        return;
    }
    assert!(out.status.success(), "cargo test in tests/host-rust failed:\n{stdout}\n{stderr}");
    let passed: usize = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(passed, checks, "every generated check ran and passed:\n{stdout}");
    println!("Rust launchers: {checks} runs on PoCL equal to the interpreter (4 programs; CUDA launchers compiled)");
}
