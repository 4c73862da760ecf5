//! The command-line contract of `alpine optimise`: where the result goes
//! (stdout, `-o`, `--in-place`, `--check`), that nothing is written when
//! re-verification fails, command-line order of requests, notes for directives
//! of later issues, and usage errors.

use std::path::Path;
use std::process::{Command, Output};

fn alpine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).output().expect("runs alpine")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Runs 9 times; `n >= 2` makes two unrolled iterations safe.
const LOOP: &str = "class C {
    requires n >= 2;
    void m(int n) {
        int i = 0;
        loop_invariant 0 <= i && i <= 9;
        while (i < 9) {
            i = i + 1;
        }
    }
}
";

#[test]
fn prints_to_stdout_and_verifies() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", LOOP);
    let o = alpine(&["optimise", "--unroll", "2", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("i = i + 1;").count(), 3, "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("verified"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), LOOP, "stdout mode does not touch the file");
}

#[test]
fn output_in_place_and_check() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", LOOP);
    let out = d.path().join("out.pvl");
    let o = alpine(&["optimise", "--unroll", "i=1", "-o", out.to_str().unwrap(), &f]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&out).unwrap().matches("i = i + 1;").count(), 2);

    assert_eq!(alpine(&["optimise", "--check", "--unroll", "1", &f]).status.code(), Some(1));
    // The loop named by its line (the guard's, 6, or the first invariant's, 5).
    for line in ["5=1", "6=1"] {
        let o = alpine(&["optimise", "--no-verify", "--unroll", line, &f]);
        assert_eq!(o.status.code(), Some(0), "{line}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let o = alpine(&["optimise", "--in-place", "--unroll", "m:i=1", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let now = std::fs::read_to_string(&f).unwrap();
    assert_eq!(now, std::fs::read_to_string(&out).unwrap());
    // Nothing left to do: the file is canonical and has no directive.
    assert_eq!(alpine(&["optimise", "--check", &f]).status.code(), Some(0));
}

#[test]
fn a_result_that_does_not_verify_is_not_written() {
    let d = tempfile::tempdir().unwrap();
    // The postcondition is wrong, so no rewrite of this method can verify.
    let bad = LOOP.replace("requires n >= 2;", "requires n >= 2;\n    ensures false;");
    let f = write(d.path(), "a.pvl", &bad);
    let out = d.path().join("out.pvl");
    let o = alpine(&["optimise", "--unroll", "1", "-o", out.to_str().unwrap(), &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("alpine::verify::postcondition"), "{err}");
    // The input fails the same way, and the user is told so first, in one line
    // (not "a bug in alpine").
    assert!(err.starts_with("error: the input does not verify (C.m): run `alpine verify "), "{err}");
    // Nor printed to standard output.
    let o = alpine(&["optimise", "--unroll", "1", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!out.exists());
    assert_eq!(alpine(&["optimise", "--unroll", "1", "--in-place", &f]).status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), bad);
    // Without re-verification the rewrite itself goes through.
    assert_eq!(alpine(&["optimise", "--no-verify", "--unroll", "1", &f]).status.code(), Some(0));
}

#[test]
fn requests_apply_in_command_line_order() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", LOOP);
    let counters = |args: &[&str]| {
        let mut a = vec!["optimise"];
        a.extend_from_slice(args);
        a.push(&f);
        let o = alpine(&a);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).matches("vct_mi_l = vct_mi_l + 1;").count()
    };
    // Unroll 1 then merge the remaining 8 iterations in pairs: 2 copies.
    assert_eq!(counters(&["--unroll", "1", "--merge", "2"]), 2);
    // The other way round, the merged loop updates `i` twice per iteration and no
    // longer fits the unrolling template.
    let o = alpine(&["optimise", "--merge", "2", "--unroll", "1", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("alpine::optimise::update_form"));
}

#[test]
fn usage_errors_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", LOOP);
    assert_eq!(alpine(&["optimise", "--unroll", "i=abc", &f]).status.code(), Some(2));
    assert_eq!(alpine(&["optimise", "--unroll", "a-b=2", &f]).status.code(), Some(2));
    assert_eq!(alpine(&["optimise", "--in-place", "-"]).status.code(), Some(2));
    assert_eq!(alpine(&["optimise", "--check", "--in-place", &f]).status.code(), Some(2));
    let broken = write(d.path(), "b.pvl", "class C { void m( }");
    assert_eq!(alpine(&["optimise", &broken]).status.code(), Some(2));
    assert_eq!(alpine(&["optimise", "/nonexistent/x.pvl"]).status.code(), Some(2));
}

/// A file of a program of several files (same `//:: cases` header in one
/// directory) uses a class of another: the rewritten program is checked and
/// re-verified as that file, with its companions' classes known.
#[test]
fn a_file_of_a_program_of_several_files_optimises() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "counter.pvl", "//:: cases Two\nclass Counter {\n    int n;\n}\n");
    let user = write(
        d.path(),
        "user.pvl",
        "//:: cases Two\nclass User {\n    context Perm(c.n, write);\n    ensures c.n == \\old(c.n) + 4;\n    void add(Counter c) {\n        int i = 0;\n        gpuopt loop_unroll i 2;\n        loop_invariant 0 <= i && i <= 4;\n        loop_invariant Perm(c.n, write) ** c.n == \\old(c.n) + i;\n        while (i < 4) {\n            c.n = c.n + 1;\n            i = i + 1;\n        }\n    }\n}\n",
    );
    let o = alpine(&["optimise", &user]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("c.n = c.n + 1;").count(), 3, "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("verified"));
}

/// Written away from its companions, the result of a file of a program of
/// several files does not verify on its own there: `-o` says so (and writes it);
/// beside them, or with the companions copied along, it says nothing.
#[test]
fn a_result_written_away_from_its_companions_is_noted() {
    let d = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    write(d.path(), "counter.pvl", "//:: cases Two\nclass Counter {\n    int n;\n}\n");
    let user = write(d.path(), "user.pvl", "//:: cases Two\nclass User {\n    context Perm(c.n, write);\n    void fill(Counter c) {\n        int i = 0;\n        gpuopt loop_unroll i 1;\n        loop_invariant 0 <= i && i <= 2;\n        loop_invariant Perm(c.n, write);\n        while (i < 2) {\n            c.n = i;\n            i = i + 1;\n        }\n    }\n}\n");
    let away = elsewhere.path().join("user.pvl").to_string_lossy().into_owned();
    let o = alpine(&["optimise", &user, "-o", &away]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("note:") && err.contains("`counter.pvl`") && err.contains("program `Two`"), "{err}");
    // The note is right: there the result does not check on its own.
    assert_eq!(alpine(&["verify", &away]).status.code(), Some(2));

    // Beside the input: no note, and the result verifies.
    let beside = d.path().join("user_opt.pvl").to_string_lossy().into_owned();
    let o = alpine(&["optimise", &user, "-o", &beside]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"), "{}", String::from_utf8_lossy(&o.stderr));

    // Away, with the companion copied along: no note (the result written
    // beside the input is a file of the program too; it goes first).
    std::fs::remove_file(&beside).unwrap();
    std::fs::copy(d.path().join("counter.pvl"), elsewhere.path().join("counter.pvl")).unwrap();
    let o = alpine(&["optimise", &user, "-o", &away]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(alpine(&["verify", &away]).status.code(), Some(0));
}

/// The loop runs once only because `flat(segs) == xs` and `|xs| > 0`: the Z3
/// check unfolds `flat` once and proves it alone (VerifyThis 2019 challenge 1
/// in small), so `--no-verify` needs no verifier fallback.
const FLAT: &str = "class C {
    pure seq<int> flat(seq<seq<int>> xs) = 0 < |xs| ? head(xs) + flat(tail(xs)) : seq<int>{};

    requires |xs| > 0;
    requires flat(segs) == xs;
    void m(seq<int> xs, seq<seq<int>> segs) {
        int x = 0;
        gpuopt loop_unroll x 1;
        loop_invariant 0 <= x && x <= |segs|;
        while (x < |segs|) {
            x = x + 1;
        }
    }
}
";

/// The same, but `shrink` is known only by its postcondition, which the Z3
/// check does not use: the verifier fallback proves the trip count.
const SHRINK: &str = "class C {
    ensures |\\result| <= |xs|;
    pure seq<int> shrink(seq<int> xs);

    requires |shrink(segs)| > 0;
    void m(seq<int> segs) {
        int x = 0;
        gpuopt loop_unroll x 1;
        loop_invariant 0 <= x && x <= |segs|;
        while (x < |segs|) {
            x = x + 1;
        }
    }
}
";

#[test]
fn z3_unfolds_a_pure_function_for_a_trip_count() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", FLAT);
    for args in [vec!["optimise", &f], vec!["optimise", "--no-verify", &f]] {
        let o = alpine(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.matches("x = x + 1;").count(), 2, "one copy and the loop: {out}");
        assert!(out.contains("assert x <= |segs|;"), "{out}");
    }
    // Without `|xs| > 0` the loop may not run: refused, by the verifier too.
    let f = write(d.path(), "b.pvl", &FLAT.replace("requires |xs| > 0;", ""));
    let o = alpine(&["optimise", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot prove that this loop runs at least once"), "{err}");
    assert!(err.contains("alpine's verifier could not prove it either"), "{err}");
}

#[test]
fn the_verifier_proves_a_trip_count_z3_alone_cannot() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.pvl", SHRINK);
    let o = alpine(&["optimise", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("x = x + 1;").count(), 2, "one copy and the loop: {out}");
    assert!(out.contains("assert x <= |segs|;"), "{out}");
    let o = alpine(&["optimise", "--no-verify", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the fallback to alpine's verifier was skipped: `--no-verify`"), "{err}");
    // Two iterations do not follow: refused with the verifier's help.
    let f = write(d.path(), "b.pvl", &SHRINK.replace("loop_unroll x 1", "loop_unroll x 2"));
    let o = alpine(&["optimise", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot prove that this loop runs at least 2 times"), "{err}");
    assert!(err.contains("alpine's verifier could not prove it either"), "{err}");
}

/// Issue #31, point 9: a request the program's facts rule out is *not applicable*
/// (exit 1) for merging as for unrolling; `--check` looks for pending
/// optimisations only, not for layout.
#[test]
fn facts_that_rule_a_request_out_exit_1_and_check_ignores_layout() {
    let d = tempfile::tempdir().unwrap();
    for (pass, code) in [("iter_merge", "alpine::optimise::trip_count"), ("loop_unroll", "alpine::optimise::trip_count")] {
        let src = format!(
            "class C {{\n    void m() {{\n        int i = 0;\n        gpuopt {pass} i 67;\n        loop_invariant 0 <= i && i <= 64;\n        \
             while (i < 64) {{ i = i + 1; }}\n    }}\n}}\n"
        );
        let f = write(d.path(), &format!("{pass}.pvl"), &src);
        let o = alpine(&["optimise", &f]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{pass}: {err}");
        assert!(err.contains(code), "{pass}: {err}");
    }
    // No directive, no request, odd layout: nothing to optimise.
    let f = write(d.path(), "layout.pvl", "class A {\n  void f() {   }\n}\n");
    let o = alpine(&["optimise", "--check", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // With a pending directive it is still reported.
    let f = write(d.path(), "pending.pvl", &LOOP.replace("int i = 0;", "int i = 0;\n        gpuopt loop_unroll i 1;"));
    let o = alpine(&["optimise", "--check", &f]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}
