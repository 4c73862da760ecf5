//! The race checker on alpine's own fixtures (`tests/races/`): race-free
//! kernels, CUDA and OpenCL, and their mutated twins (barrier removed, index
//! shifted by one, read moved before the barrier, barrier under a
//! thread-dependent condition), each of which must be rejected with the right
//! diagnostic. A fixture says what it expects in its header:
//! `// flags: …` (GPUVerify's flags) and `// expect: verified` or
//! `// expect: CODE` (the first error's code, exit 1), optionally with
//! `// line: N` (the line the first error is reported at).

use std::path::Path;
use std::process::Command;

fn header<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.strip_prefix(&format!("// {key}: ")))
}

#[test]
fn fixtures_are_proved_or_rejected_as_their_headers_say() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("tests/races exists").filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut failures = Vec::new();
    let mut mutants = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a fixture is readable");
        let flags: Vec<&str> = header(&text, "flags").unwrap_or("").split_whitespace().collect();
        let expect = header(&text, "expect").expect("a fixture says what it expects");
        let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
            .args(["--message-format", "json", "verify"])
            .args(&flags)
            .arg(path)
            .output()
            .expect("alpine runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let errors: Vec<serde_json::Value> = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "diagnostic" && v["severity"] == "error")
            .collect();
        let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
        let line = header(&text, "line").map(|l| l.trim().parse::<u64>().expect("a line number"));
        let ok = if expect == "verified" {
            out.status.code() == Some(0) && errors.is_empty()
        } else {
            mutants += 1;
            // A rejection is located (a span inside the file) and exits 1.
            out.status.code() == Some(1)
                && errors.first().is_some_and(|d| {
                    d["code"] == expect
                        && d["span"]["end"].as_u64() > d["span"]["start"].as_u64()
                        && line.is_none_or(|l| d["span"]["line"].as_u64() == Some(l))
                })
        };
        if !ok {
            failures.push(format!("{name}: expected {expect}, got exit {:?}: {stdout}", out.status.code()));
        }
    }
    assert!(mutants >= 8, "only {mutants} rejected fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A race report names both accesses and both threads with concrete ids.
#[test]
fn a_race_names_both_threads_and_both_accesses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races/stencil_early_read.cu");
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["verify", "--blockDim=128", "--gridDim=8"])
        .arg(&path)
        .env("NO_COLOR", "1")
        .output()
        .expect("alpine runs");
    let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("race on tile["), "the array and element are named: {text}");
    let threads = text.matches(" of block ").count();
    assert!(threads >= 2, "both threads are named with their block: {text}");
    assert!(text.contains("write by thread") && text.contains("read by thread"), "both kinds are named: {text}");
}

/// Bad input is exit 2 with a located diagnostic, never a panic.
#[test]
fn a_kernel_clang_rejects_is_bad_input() {
    let dir = std::env::temp_dir().join(format!("alpine-races-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("broken.cu");
    std::fs::write(&path, "__global__ void k(int *a) { a[threadIdx.x] = ; }\n").expect("written");
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["verify", "--blockDim=32", "--gridDim=1"])
        .arg(&path)
        .output()
        .expect("alpine runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

fn verify_text(args: &[&str], fixture: &str) -> (Option<i32>, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races").join(fixture);
    let out =
        Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").args(args).arg(&path).env("NO_COLOR", "1").output().expect("alpine runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout))
}

/// Issue #35 item 4: a race between two lanes of one warp names the warp, both
/// lanes and the statement; `--warp-sync` is honoured, not ignored.
#[test]
fn a_warp_race_names_the_warp_and_both_lanes() {
    let (code, text) = verify_text(&["--blockDim=64", "--gridDim=1", "--warp-sync=32"], "warp_same_instruction.cu");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("within warp 0: lanes "), "the warp and the lanes are named: {text}");
    assert!(text.contains("s[tid / 2] = tid"), "the statement is shown: {text}");
    assert!(!text.contains("does not apply"), "--warp-sync is not ignored: {text}");
}

/// A warp size that is not a power of two up to 1024 is a usage error (exit 2).
#[test]
fn a_bad_warp_size_is_a_usage_error() {
    for bad in ["--warp-sync=3", "--warp-sync=x", "--warp-sync=2048"] {
        let (code, text) = verify_text(&["--blockDim=64", bad], "warp_reduce_tail.cu");
        assert_eq!(code, Some(2), "{bad}: {text}");
        assert!(text.contains("power of two"), "{bad}: {text}");
    }
}

/// The ✓ under `--warp-sync` states the hardware assumption it rests on.
#[test]
fn a_proof_under_warp_sync_states_its_assumption() {
    let (code, text) = verify_text(&["--blockDim=256", "--gridDim=4", "--warp-sync=32"], "warp_reduce_tail.cu");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("the 32 threads of each warp in lock-step"), "{text}");
}
