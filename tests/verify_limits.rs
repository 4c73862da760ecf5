//! `alpine verify` never hangs (issue #3, point 5): every Z3 query has a
//! wall-clock limit (`--timeout`, default 10 s) and can have a deterministic
//! resource limit (`--rlimit`). Both end in a failure at the goal, worded
//! "could not prove (…)", with exit code 1 — never a pass.
//!
//! The program is a cube-sum identity (Fermat, n = 3) that Z3's nonlinear
//! arithmetic cannot settle: it keeps searching until a limit stops it.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

const HARD: &str = "class Hard {
    requires x > 0 && y > 0 && z > 0;
    void fermat(int x, int y, int z) {
        assert x * x * x + y * y * y != z * z * z;
    }
}
";

fn verify(args: &[&str]) -> (Output, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hard.pvl");
    std::fs::write(&file, HARD).unwrap();
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .arg("verify")
        .args(args)
        .args(["--message-format", "json"])
        .arg(&file)
        .output()
        .expect("alpine runs");
    (out, start.elapsed())
}

/// The (line, code, message) of each diagnostic.
fn diagnostics(out: &Output) -> Vec<(u64, String, String)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["span"]["line"].as_u64().unwrap(), v["code"].as_str().unwrap().to_string(), v["message"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn a_query_past_the_time_limit_fails_at_its_goal() {
    let (out, took) = verify(&["--timeout", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let d = diagnostics(&out);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].0, d[0].1.as_str()), (4, "alpine::verify::unknown"));
    assert_eq!(d[0].2, "assertion may not hold: could not prove (timeout after 1 s)");
    // The limit is per query and this unit has one hard query; generous slack
    // for a loaded machine, but far below what an unbounded search takes.
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

#[test]
fn the_resource_limit_is_deterministic() {
    let runs: Vec<Vec<(u64, String, String)>> = (0..2)
        .map(|_| {
            let (out, _) = verify(&["--rlimit", "2000", "--timeout", "60"]);
            assert_eq!(out.status.code(), Some(1));
            diagnostics(&out)
        })
        .collect();
    assert_eq!(runs[0], runs[1], "two runs with the same resource limit differ");
    assert_eq!(runs[0].len(), 1);
    assert_eq!(runs[0][0].1, "alpine::verify::unknown");
    assert_eq!(runs[0][0].2, "assertion may not hold: could not prove (resource limit 2000 reached)");
}

#[test]
fn a_limit_large_enough_changes_nothing_for_an_easy_program() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("easy.pvl");
    std::fs::write(&file, "class E {\n    requires x > 0;\n    ensures \\result > 1;\n    int f(int x) {\n        return x + 1;\n    }\n}\n").unwrap();
    for args in [["--timeout", "1"], ["--rlimit", "1000000"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").args(args).arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
