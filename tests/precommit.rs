//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real pre-commit
//! framework (PyPI `pre-commit`, installed by `.ci/setup` into
//! `target/pre-commit-venv`; `$ALPINE_PRE_COMMIT` names another) with
//! `pre-commit try-repo` in a scratch git repository holding a PVL file.
//!
//! try-repo clones the hook repository at HEAD plus its staged and modified
//! tracked files, so a working tree whose hook files are not committed yet would
//! not test them: the test commits copies of the two hook files into a scratch
//! hook repository instead. The hooks find `alpine` on PATH; the test puts the
//! binary under test first. Without pre-commit the test passes with a notice,
//! except in CI (`CI` set), where it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pre_commit() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("ALPINE_PRE_COMMIT").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pre-commit-venv/bin/pre-commit")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_file()).or_else(|| {
        Command::new("pre-commit").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| PathBuf::from("pre-commit"))
    });
    if found.is_none() {
        common::skip("pre-commit is not installed (run .ci/setup, or set ALPINE_PRE_COMMIT): no pre-commit hook test");
    }
    found
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=alpine test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A git repository holding this project's hook files, committed.
fn hook_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir(dir.path().join("pre-commit")).unwrap();
    for f in [".pre-commit-hooks.yaml", "pre-commit/alpine-optimise.sh"] {
        std::fs::copy(root.join(f), dir.path().join(f)).unwrap();
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "hooks"]);
    dir
}

/// `pre-commit try-repo HOOKS HOOK --files FILE` in `work`: status and output.
fn try_repo(pc: &Path, hooks: &Path, work: &Path, hook: &str, file: &str) -> (i32, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_alpine")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let Output { status, stdout, stderr } = Command::new(pc)
        .args(["try-repo", hooks.to_str().unwrap(), hook, "--files", file])
        .current_dir(work)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", work.join(".pre-commit-home"))
        .env_remove("ALPINE")
        .output()
        .expect("pre-commit runs");
    (status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&stderr)))
}

fn scratch_repo(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join(".gitignore"), ".pre-commit-home/\n").unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    git(dir.path(), &["add", "."]);
    dir
}

const FILE: &str = "loop_unroll/examples/plus/orig_loop_unroll_plus.pvl";

#[test]
fn optimise_hook_rewrites_an_applicable_directive_and_refuses_an_inapplicable_one() {
    let Some(pc) = pre_commit() else { return };
    let Some(corpus) = common::corpus_dir() else { return };
    let text = std::fs::read_to_string(corpus.join(FILE)).unwrap();
    assert!(text.contains("gpuopt loop_unroll i 5;"));
    let hooks = hook_repo();

    // Applicable: the file is rewritten (directive consumed, result verified).
    // pre-commit reports a hook that modified files as failed, so that the
    // rewritten file is staged before committing; the next run passes.
    let work = scratch_repo("kernel.pvl", &text);
    let (code, out) = try_repo(&pc, hooks.path(), work.path(), "alpine-optimise", "kernel.pvl");
    let rewritten = std::fs::read_to_string(work.path().join("kernel.pvl")).unwrap();
    assert_ne!(rewritten, text, "the hook rewrites the file:\n{out}");
    assert!(!rewritten.contains("gpuopt"), "the directive is consumed:\n{rewritten}");
    assert!(out.contains("files were modified by this hook"), "{out}");
    assert!(!out.contains("error"), "alpine reported no error:\n{out}");
    assert_eq!(code, 1, "pre-commit stops a commit whose files a hook changed:\n{out}");
    let v = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").arg(work.path().join("kernel.pvl")).output().unwrap();
    assert!(v.status.success(), "the rewritten file verifies:\n{}", String::from_utf8_lossy(&v.stdout));
    git(work.path(), &["add", "kernel.pvl"]);
    let (code, out) = try_repo(&pc, hooks.path(), work.path(), "alpine-optimise", "kernel.pvl");
    assert_eq!(code, 0, "the staged rewrite passes:\n{out}");

    // Inapplicable: the loop runs 5 times, so 6 iterations cannot be unrolled.
    let wrong = text.replace("gpuopt loop_unroll i 5;", "gpuopt loop_unroll i 6;");
    let work = scratch_repo("kernel.pvl", &wrong);
    let (code, out) = try_repo(&pc, hooks.path(), work.path(), "alpine-optimise", "kernel.pvl");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("alpine::optimise::trip_count"), "alpine's message is shown:\n{out}");
    assert!(!out.contains("files were modified"), "{out}");
    assert_eq!(std::fs::read_to_string(work.path().join("kernel.pvl")).unwrap(), wrong, "the file is left as it was");
}

#[test]
fn fmt_hook_checks_the_canonical_layout() {
    let Some(pc) = pre_commit() else { return };
    let Some(corpus) = common::corpus_dir() else { return };
    let text = std::fs::read_to_string(corpus.join(FILE)).unwrap();
    let hooks = hook_repo();
    let work = scratch_repo("kernel.pvl", &text);
    let (code, out) = try_repo(&pc, hooks.path(), work.path(), "alpine-fmt", "kernel.pvl");
    assert_eq!(code, 1, "the corpus layout is not canonical:\n{out}");
    assert!(out.contains("not in canonical layout"), "{out}");
    assert_eq!(std::fs::read_to_string(work.path().join("kernel.pvl")).unwrap(), text, "--check never writes");

    let formatted = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("fmt").arg(work.path().join("kernel.pvl")).output().unwrap();
    std::fs::write(work.path().join("kernel.pvl"), &formatted.stdout).unwrap();
    git(work.path(), &["add", "kernel.pvl"]);
    let (code, out) = try_repo(&pc, hooks.path(), work.path(), "alpine-fmt", "kernel.pvl");
    assert_eq!(code, 0, "{out}");
}
