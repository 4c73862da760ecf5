//! The command-line contract: exit codes (0 ok, 1 check failed, 2 bad input or
//! usage), `fmt --check`, atomic `fmt --in-place`, stdin, JSON diagnostics.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn alpine(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_alpine"));
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env("NO_COLOR", "1");
    let mut child = cmd.spawn().expect("alpine runs");
    {
        let mut sin = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            // A command that fails before reading its input (a usage error) closes
            // the pipe early; that is not a test failure.
            let _ = sin.write_all(s.as_bytes());
        }
    }
    child.wait_with_output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const GOOD: &str =
    "class A {\n    int x;\n\n    requires n >= 0;\n    ensures \\result == n;\n    int f(int n) {\n        return n;\n    }\n}\n";
const UGLY: &str = "class A { int x;\n requires n>=0; ensures \\result==n;\n int f(int n){ return n; } }";
const SYNTAX_ERROR: &str = "class A {\n    void f() {\n        int x = 1\n    }\n}\n";
const TYPE_ERROR: &str = "class A {\n    void f() {\n        int x = true;\n    }\n}\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn parse_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.pvl", GOOD);
    let bad = write(dir.path(), "bad.pvl", SYNTAX_ERROR);
    let ill = write(dir.path(), "ill.pvl", TYPE_ERROR);
    assert_eq!(code(&alpine(&["parse", &good], None)), 0);
    let o = alpine(&["parse", &bad], None);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("bad.pvl"), "{}", text(&o.stderr));
    assert_eq!(code(&alpine(&["parse", &ill], None)), 2);
    // One bad file among good ones fails the whole run.
    assert_eq!(code(&alpine(&["parse", &good, &bad], None)), 2);
    assert_eq!(code(&alpine(&["parse", "/nonexistent/x.pvl"], None)), 2);
    assert_eq!(code(&alpine(&["parse", "-"], Some(GOOD))), 0);
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    assert_eq!(code(&alpine(&["no-such-command"], None)), 2);
    assert_eq!(code(&alpine(&["parse"], None)), 2);
    assert_eq!(code(&alpine(&["fmt", "--check", "--in-place", "x.pvl"], None)), 2);
    assert_eq!(code(&alpine(&["--help"], None)), 0);
    assert_eq!(code(&alpine(&["fmt", "--in-place", "-"], Some(GOOD))), 2);
}

#[test]
fn fmt_prints_canonical_layout_and_check_detects_changes() {
    let dir = tempfile::tempdir().unwrap();
    let ugly = write(dir.path(), "ugly.pvl", UGLY);
    let o = alpine(&["fmt", &ugly], None);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let canonical = text(&o.stdout);
    assert_eq!(canonical, GOOD, "canonical layout changed");
    // --check: 1 for a file that would change, 0 for a canonical one.
    assert_eq!(code(&alpine(&["fmt", "--check", &ugly], None)), 1);
    let good = write(dir.path(), "good.pvl", GOOD);
    assert_eq!(code(&alpine(&["fmt", "--check", &good], None)), 0);
    // stdin works and formatting is idempotent.
    let again = alpine(&["fmt", "-"], Some(&canonical));
    assert_eq!(text(&again.stdout), canonical);
}

#[test]
fn fmt_keeps_a_trailing_comment_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "trailing.pvl", "class A {\n  void f(int n) {\n    int x = n; // copy\n  }\n}\n");
    let o = alpine(&["fmt", &file], None);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let formatted = text(&o.stdout);
    assert_eq!(formatted, "class A {\n    void f(int n) {\n        int x = n; // copy\n    }\n}\n");
    let canonical = write(dir.path(), "canonical.pvl", &formatted);
    assert_eq!(code(&alpine(&["fmt", "--check", &canonical], None)), 0);
}

#[test]
fn fmt_in_place_rewrites_and_never_touches_a_broken_file() {
    let dir = tempfile::tempdir().unwrap();
    let ugly = write(dir.path(), "ugly.pvl", UGLY);
    assert_eq!(code(&alpine(&["fmt", "--in-place", &ugly], None)), 0);
    assert_eq!(std::fs::read_to_string(&ugly).unwrap(), GOOD);
    let bad = write(dir.path(), "bad.pvl", SYNTAX_ERROR);
    assert_eq!(code(&alpine(&["fmt", "--in-place", &bad], None)), 2);
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), SYNTAX_ERROR, "a file that does not parse is left as it was");
    // No temporary files are left in the directory.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn json_diagnostics_have_file_span_and_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.pvl", SYNTAX_ERROR);
    let o = alpine(&["--message-format", "json", "parse", &bad], None);
    assert_eq!(code(&o), 2);
    let out = text(&o.stdout);
    let first = out.lines().next().expect("one JSON line per diagnostic");
    let v: serde_json::Value = serde_json::from_str(first).expect("valid JSON");
    assert_eq!(v["file"], bad.as_str());
    assert_eq!(v["severity"], "error");
    assert_eq!(v["code"], "alpine::syntax");
    // The missing `;` is noticed at the `}` on line 4 or right after `1` on line 3.
    let line = v["span"]["line"].as_u64().unwrap();
    assert!(line == 3 || line == 4, "{out}");
    assert!(v["span"]["column"].as_u64().unwrap() >= 1);
    assert!(v["message"].as_str().unwrap().contains("expected"), "{out}");
}

#[test]
fn human_diagnostics_show_the_source_line() {
    let dir = tempfile::tempdir().unwrap();
    let ill = write(dir.path(), "ill.pvl", TYPE_ERROR);
    let o = alpine(&["parse", &ill], None);
    let err = text(&o.stderr);
    assert!(err.contains("int x = true;"), "{err}");
    assert!(err.contains("alpine::typeck::mismatch"), "{err}");
}

#[test]
fn examples_are_well_formed_and_canonical() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pvl") {
            let p = p.to_string_lossy().into_owned();
            let o = alpine(&["parse", &p], None);
            assert_eq!(code(&o), 0, "{p}: {}", text(&o.stderr));
            assert_eq!(code(&alpine(&["fmt", "--check", &p], None)), 0, "{p} is not in canonical layout");
            n += 1;
        }
    }
    assert!(n >= 3, "examples/ should hold at least three programs");
}

/// The SMT-LIB of a unit is the same in every run: a join's fresh constants are
/// made in name order, not in the order of a hash map (which Rust seeds per
/// process). Twelve variables assigned in both arms of an `if`: the chance that
/// two runs agree by accident in hash order is 1 in 12!.
#[test]
fn dumped_smt_is_the_same_in_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..12).map(|i| format!("v{i}")).collect();
    let decls: String = names.iter().map(|n| format!("        int {n} = 0;\n")).collect();
    let then: String = names.iter().map(|n| format!("            {n} = 1;\n")).collect();
    let els: String = names.iter().map(|n| format!("            {n} = 2;\n")).collect();
    let src = format!(
        "class J {{\n    void f(boolean b) {{\n{decls}        if (b) {{\n{then}        }} else {{\n{els}        }}\n        assert v0 > 0 && v11 > 0;\n    }}\n}}\n"
    );
    let file = write(dir.path(), "join.pvl", &src);
    let dump = |run: &str| {
        let out = dir.path().join(run);
        let o = alpine(&["verify", "--dump-smt", out.to_str().unwrap(), &file], None);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
        std::fs::read_to_string(out.join("J.f.smt2")).expect("the unit's dump")
    };
    let first = dump("a");
    assert!(first.contains("v11"), "the dump names the joined variables");
    for run in ["b", "c"] {
        assert_eq!(dump(run), first, "run {run} sent Z3 other SMT-LIB than the first");
    }
}

/// Issue #31, point 1: output errors never panic. A reader that goes away (a closed
/// pipe, `alpine fmt big.pvl | head -1`) ends the run quietly with SIGPIPE's shell
/// status 141, like `cat`; a full disk (`> /dev/full`) is an error, exit 2.
#[test]
fn output_errors_end_the_run_without_a_panic() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("alpine-cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Far more than a pipe buffer (64 KiB) of formatted output.
    let big = dir.join("big.pvl");
    let text_of_big: String = (0..5000).map(|i| format!("class A{i} {{ int f(int x) {{ return x + {i}; }} }}\n")).collect();
    std::fs::write(&big, text_of_big).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["fmt", &big.to_string_lossy()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("alpine runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "class A0 {\n");
    // The reader is dropped here: the rest of the output meets a closed pipe.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(141), "stderr: {}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");

    if Path::new("/dev/full").exists() {
        let small = dir.join("small.pvl");
        std::fs::write(&small, "class A {\n  int f(int x) = x;\n}\n").unwrap();
        let s = small.to_string_lossy().into_owned();
        for args in [vec!["fmt", &s], vec!["parse", &s], vec!["run", &s, "--method", "f", "--arg", "x=1"]] {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_alpine")).args(&args).stdout(full).stderr(Stdio::piped()).output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
            assert_eq!(text(&o.stderr), "error: cannot write to standard output: No space left on device (os error 28)\n", "{args:?}");
        }
    } else {
        common::skip("no /dev/full here: the full-disk half of the test");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// Issue #31, point 2: every shipped example verifies (`alpine verify examples/*.pvl`).
#[test]
fn every_example_verifies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pvl"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let args: Vec<&str> = std::iter::once("verify").chain(files.iter().map(String::as_str)).collect();
    let o = alpine(&args, None);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
}

/// Issue #31, point 6: shell completions and a man page, generated from the clap
/// definitions, name every subcommand and the flags of `optimise`.
#[test]
fn completions_and_man_page_list_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let o = alpine(&["completions", shell], None);
        assert_eq!(code(&o), 0, "{shell}: {}", text(&o.stderr));
        let script = text(&o.stdout);
        for word in ["parse", "fmt", "verify", "optimise", "run", "emit", "lsp", "unroll", "message-format"] {
            assert!(script.contains(word), "{shell} completions lack `{word}`");
        }
        if shell == "bash" {
            // The script is valid bash.
            let dir = std::env::temp_dir().join(format!("alpine-completions-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let f = dir.join("alpine.bash");
            std::fs::write(&f, &script).unwrap();
            let check = Command::new("bash").arg("-n").arg(&f).output().expect("bash runs");
            assert!(check.status.success(), "{}", text(&check.stderr));
            std::fs::remove_dir_all(dir).ok();
        }
    }
    let o = alpine(&["completions", "tcsh"], None);
    assert_eq!(code(&o), 2, "an unknown shell is a usage error");
    let o = alpine(&["man"], None);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let page = text(&o.stdout);
    assert!(page.contains(".TH alpine 1"), "{page}");
    for word in ["optimise", "verify", "completions", "\\-\\-message\\-format"] {
        assert!(page.contains(word), "the man page lacks `{word}`");
    }
}

/// Issue #31, point 10: small things people noticed.
#[test]
fn small_things_read_well() {
    let dir = std::env::temp_dir().join(format!("alpine-cli-small-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("one.pvl");
    std::fs::write(&one, "class A {\n    void f() { }\n}\n").unwrap();
    let one = one.to_string_lossy().into_owned();
    // "1 class", "1 unit", not "1 classes", "1 units".
    let o = alpine(&["parse", &one], None);
    assert!(text(&o.stdout).ends_with(": ok (1 class, 1 method)\n"), "{}", text(&o.stdout));
    let o = alpine(&["verify", &one], None);
    assert!(text(&o.stdout).ends_with(": 1 of 1 unit verified\n"), "{}", text(&o.stdout));
    // `run` on a file without methods ends its sentence.
    let empty = dir.join("empty.pvl");
    std::fs::write(&empty, "").unwrap();
    let o = alpine(&["run", &empty.to_string_lossy(), "--method", "f"], None);
    assert_eq!(code(&o), 2);
    assert_eq!(text(&o.stderr), "error: no method `f`: the file declares no methods\n");
    // An unreadable file: the message, without an empty source box under it.
    let missing = dir.join("missing.pvl");
    let o = alpine(&["parse", &missing.to_string_lossy()], None);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(err.contains("cannot read"), "{err}");
    assert!(!err.contains('╭') && !err.contains('╰'), "{err}");
    // A negative factor reaches alpine's own check instead of clap's `-- -1` tip.
    let looped = dir.join("loop.pvl");
    std::fs::write(&looped, "class C {\n    void m(int n) {\n        int i = 0;\n        while (i < n) { i = i + 1; }\n    }\n}\n")
        .unwrap();
    let o = alpine(&["optimise", "--unroll", "-1", &looped.to_string_lossy()], None);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(err.contains("the factor must be at least 1") && !err.contains("-- -1"), "{err}");
    // Nesting too deep on a 200 KB line: the position, not the line.
    let deep = dir.join("deep.pvl");
    let line = format!("class A {{ void f() {{ int x = {}1{}; }} }}{}\n", "(".repeat(600), ")".repeat(600), " ".repeat(200_000));
    std::fs::write(&deep, line).unwrap();
    let o = alpine(&["parse", &deep.to_string_lossy()], None);
    assert_eq!(code(&o), 2);
    let err = text(&o.stderr);
    assert!(err.len() < 2000 && err.contains("deep.pvl:1:") && err.contains("nesting too deep"), "{} bytes: {}", err.len(), &err[..300]);
    // A trip-count hint never suggests a clause the file's facts contradict.
    let pinned = dir.join("pinned.pvl");
    std::fs::write(&pinned, "class C {\n    requires n == 5;\n    void m(int n) {\n        int i = 0;\n        loop_invariant 0 <= i && i <= n;\n        while (i < n) { i = i + 1; }\n    }\n}\n").unwrap();
    let o = alpine(&["optimise", "--unroll", "6", &pinned.to_string_lossy()], None);
    assert_eq!(code(&o), 1);
    let err = text(&o.stderr);
    assert!(err.contains("rule out `n >= 6`") && !err.contains("requires n >= 6"), "{err}");
    std::fs::remove_dir_all(dir).ok();
}

/// `alpine fmt`, `verify` and `parse` on directories: the PVL files below, in
/// order, `.gitignore` and hidden files honoured; no file means the current
/// directory for `fmt`, which then rewrites in place like `cargo fmt`.
#[test]
fn directories_are_walked_for_pvl_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(root.join("gen")).unwrap();
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    write(root, "a.pvl", UGLY);
    write(root, "sub/b.pvl", UGLY);
    write(root, "gen/skipped.pvl", SYNTAX_ERROR);
    write(root, ".cache/hidden.pvl", SYNTAX_ERROR);
    write(root, "notes.txt", SYNTAX_ERROR);
    write(root, ".gitignore", "gen/\n");
    let r = root.to_str().unwrap();

    let o = alpine(&["parse", r], None);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let a = out.find("a.pvl: ok").expect("a.pvl parsed");
    let b = out.find("b.pvl: ok").expect("sub/b.pvl parsed");
    assert!(a < b, "sorted order:\n{out}");
    assert!(out.lines().last().unwrap().starts_with("2 ok, 0 bad input in "), "{out}");

    // `fmt --check DIR`: both ugly files are reported, the ignored ones are not read.
    let o = alpine(&["fmt", "--check", r], None);
    assert_eq!(code(&o), 1);
    let err = text(&o.stderr);
    assert!(err.contains("a.pvl` is not in canonical layout") && err.contains("b.pvl` is not in canonical layout"), "{err}");
    assert!(err.contains("0 unchanged, 2 not in canonical layout, 0 bad input in "), "{err}");

    // `alpine fmt` with no file: the current directory, in place.
    let o = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("fmt").current_dir(root).output().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(text(&o.stdout).is_empty(), "nothing printed: in place");
    assert!(text(&o.stderr).contains("2 reformatted, 0 unchanged, 0 bad input"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(root.join("sub/b.pvl")).unwrap(), GOOD);
    assert_eq!(std::fs::read_to_string(root.join("gen/skipped.pvl")).unwrap(), SYNTAX_ERROR, "ignored file untouched");

    // A directory without PVL files is a usage problem, located by name.
    let empty = tempfile::tempdir().unwrap();
    let o = alpine(&["verify", empty.path().to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("no PVL files"), "{}", text(&o.stderr));
}

/// Every run over several files ends with one summary line; JSON has a record per
/// unit, a plan per file and a closing summary.
#[test]
fn verify_reports_totals_and_json_records() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.pvl", GOOD);
    let wrong = write(dir.path(), "wrong.pvl", &GOOD.replace("\\result == n", "\\result == n + 1"));
    let bad = write(dir.path(), "bad.pvl", SYNTAX_ERROR);
    let o = alpine(&["verify", &good, &wrong, &bad], None);
    assert_eq!(code(&o), 2, "bad input outranks a failed proof");
    let out = text(&o.stdout);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("1 verified, 1 failed, 1 bad input in ") && last.ends_with(" s"), "{out}");
    // One file: no summary line (its own line says it all).
    let o = alpine(&["verify", &good], None);
    assert!(!text(&o.stdout).contains("in 0."), "{}", text(&o.stdout));

    let o = alpine(&["--message-format", "json", "verify", &good, &wrong], None);
    assert_eq!(code(&o), 1);
    let records: Vec<serde_json::Value> = text(&o.stdout).lines().map(|l| serde_json::from_str(l).expect(l)).collect();
    let of = |t: &str| records.iter().filter(|r| r["type"] == t).collect::<Vec<_>>();
    assert_eq!(of("plan").len(), 2);
    let units = of("unit");
    assert_eq!(units.len(), 2, "{records:?}");
    assert_eq!(units[0]["unit"], "A.f");
    assert_eq!(units[0]["verdict"], "verified");
    assert_eq!(units[1]["verdict"], "failed");
    assert!(units[1]["file"].as_str().unwrap().ends_with("wrong.pvl"));
    assert_eq!(of("diagnostic").len(), 1, "the failed postcondition");
    let summary = records.last().unwrap();
    assert_eq!((summary["type"].as_str(), summary["verified"].as_u64(), summary["failed"].as_u64()), (Some("summary"), Some(1), Some(1)));
    assert!(summary["seconds"].as_f64().unwrap() >= 0.0);
}

/// `fmt --check`, flag errors and `run` errors follow `--message-format json`.
#[test]
fn every_error_follows_the_message_format() {
    let dir = tempfile::tempdir().unwrap();
    let ugly = write(dir.path(), "ugly.pvl", UGLY);
    let json_lines = |o: &Output| -> Vec<serde_json::Value> {
        assert!(text(&o.stderr).is_empty(), "nothing on stderr in JSON mode: {}", text(&o.stderr));
        text(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    };
    let o = alpine(&["--message-format", "json", "fmt", "--check", &ugly], None);
    assert_eq!(code(&o), 1);
    let r = json_lines(&o);
    assert_eq!(r[0]["code"], "alpine::fmt::layout");
    assert_eq!(r[0]["span"]["line"], 1, "the first line differs: {}", r[0]);

    let o = alpine(&["verify", "--message-format=json", "--no-such-flag", &ugly], None);
    assert_eq!(code(&o), 2);
    let r = json_lines(&o);
    assert_eq!(r[0]["code"], "alpine::usage");
    assert!(r[0]["message"].as_str().unwrap().contains("--no-such-flag"), "{}", r[0]);

    let run = write(dir.path(), "run.pvl", "class A {\n    void f(int n) {\n        assert n > 0;\n    }\n}\n");
    let o = alpine(&["--message-format", "json", "run", &run, "--method", "f", "--arg", "n=0", "--check-contracts"], None);
    assert_eq!(code(&o), 1);
    let r = json_lines(&o);
    let failure = r.iter().find(|x| x["type"] == "diagnostic").unwrap_or_else(|| panic!("{r:?}"));
    assert_eq!(failure["code"], "alpine::run");
    assert!(failure["file"].as_str().unwrap().ends_with("run.pvl"));
    let state = r.iter().find(|x| x["type"] == "state").unwrap_or_else(|| panic!("the final state: {r:?}"));
    assert_eq!(state["values"]["n"], "0");
    let o = alpine(&["--message-format", "json", "run", &run, "--method", "g"], None);
    assert_eq!(code(&o), 2);
    assert_eq!(json_lines(&o)[0]["code"], "alpine::usage");
}

/// On a terminal (a pseudo-terminal made by `script`), verifying several files
/// shows a progress bar naming the file; through a pipe it does not.
#[test]
fn progress_bar_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "first.pvl", GOOD);
    let b = write(dir.path(), "second.pvl", GOOD);
    let piped = alpine(&["verify", &a, &b], None);
    assert!(!text(&piped.stderr).contains("verifying ["), "{}", text(&piped.stderr));
    let script = Command::new("script").arg("--version").output();
    if script.is_err() {
        // `script` is util-linux's (Debian's bsdutils, an essential package).
        common::skip("`script` (util-linux) is missing: cannot make a terminal for the progress bar");
        return;
    }
    let cmd = format!("{} verify {a} {b}", env!("CARGO_BIN_EXE_alpine"));
    let o = Command::new("script").args(["-qec", &cmd, "/dev/null"]).env("NO_COLOR", "1").env("COLUMNS", "200").output().unwrap();
    let shown = text(&o.stdout);
    assert!(shown.contains("verifying [") && shown.contains("first.pvl"), "{shown}");
    assert!(shown.contains("2 verified, 0 failed, 0 bad input in "), "{shown}");
}

/// Files as users keep them: `-o` honours the umask, `--in-place` writes through
/// a symbolic link, and a byte-order mark and CRLF line ends survive formatting.
#[cfg(unix)]
#[test]
fn files_keep_their_mode_link_and_encoding() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ugly = write(dir.path(), "ugly.pvl", UGLY);

    // `-o` on a new file: 0666 less the umask (022 here, set by the shell).
    let out = dir.path().join("new.pvl");
    let cmd = format!("umask 022 && {} optimise {ugly} -o {}", env!("CARGO_BIN_EXE_alpine"), out.display());
    let o = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o644);

    // `--in-place` on a link rewrites the target and keeps the link.
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let target = write(dir.path(), "real/t.pvl", UGLY);
    let link = dir.path().join("link.pvl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = alpine(&["fmt", "--in-place", link.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), GOOD);

    // A BOM and CRLF: parsed, and kept by fmt (stdout and in place) and --check.
    let crlf = format!("\u{feff}{}", UGLY.replace('\n', "\r\n"));
    let p = write(dir.path(), "crlf.pvl", &crlf);
    assert_eq!(code(&alpine(&["parse", &p], None)), 0);
    let o = alpine(&["fmt", &p], None);
    let expected = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
    assert_eq!(text(&o.stdout), expected);
    assert_eq!(code(&alpine(&["fmt", "--in-place", &p], None)), 0);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), expected);
    assert_eq!(code(&alpine(&["fmt", "--check", &p], None)), 0, "canonical as stored");
    assert_eq!(code(&alpine(&["verify", &p], None)), 0);
}
