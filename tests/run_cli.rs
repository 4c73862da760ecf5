//! `alpine run`: the reference interpreter from the command line — results,
//! seeded thread orders, run-time contract checks, and the exit codes (0 the
//! run ended normally, 1 a run-time error or violated contract, 2 bad input).

use std::process::{Command, Output};

fn alpine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).env("NO_COLOR", "1").output().expect("alpine runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SHIFT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/shift_barrier.pvl");

#[test]
fn runs_a_kernel_with_a_barrier_in_every_order() {
    for seed in ["1", "2", "3", "4", "5"] {
        let o = alpine(&[
            "run",
            SHIFT,
            "--method",
            "Shift.shift",
            "--arg",
            "a=new int[5]",
            "--arg",
            "b=[9, 9, 9, 9, 9]",
            "--arg",
            "n=5",
            "--seed",
            seed,
            "--check-contracts",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "a = [0,1,2,3,4]\nb = [1,2,3,4,0]\nn = 5\nthis = Shift{}\n");
    }
}

#[test]
fn a_removed_barrier_shows_in_some_order_and_breaks_a_thread_postcondition() {
    let src = std::fs::read_to_string(SHIFT).unwrap();
    let start = src.find("            barrier(threads)").unwrap();
    let end = start + src[start..].find("            }\n").unwrap() + "            }\n".len();
    let dir = std::env::temp_dir().join(format!("alpine-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("no_barrier.pvl");
    std::fs::write(&path, format!("{}{}", &src[..start], &src[end..])).unwrap();
    let path = path.to_string_lossy().into_owned();
    let mut failed = 0;
    for seed in 1..=10 {
        let seed = seed.to_string();
        let base = [
            "run",
            path.as_str(),
            "--method",
            "shift",
            "--arg",
            "a=new int[6]",
            "--arg",
            "b=new int[6]",
            "--arg",
            "n=6",
            "--seed",
            seed.as_str(),
        ];
        // Without checks every order ends normally; with them, an order in
        // which a thread reads before its neighbour wrote is caught.
        assert_eq!(alpine(&base).status.code(), Some(0));
        let o = alpine(&[&base[..], &["--check-contracts"]].concat());
        if o.status.code() == Some(1) {
            assert!(text(&o.stderr).contains("postcondition of a thread does not hold (line 16)"), "{}", text(&o.stderr));
            failed += 1;
        } else {
            assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        }
    }
    assert!(failed > 0, "no seed ran a thread before its neighbour");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn contract_violations_exit_1_with_the_line() {
    let o =
        alpine(&["run", SHIFT, "--method", "shift", "--arg", "a=new int[3]", "--arg", "b=new int[4]", "--arg", "n=3", "--check-contracts"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), "error: precondition of shift does not hold (line 6)\n");
    // Run-time errors too: unchecked, the mismatched lengths are an index out of bounds.
    let o = alpine(&["run", SHIFT, "--method", "shift", "--arg", "a=new int[4]", "--arg", "b=new int[3]", "--arg", "n=4"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("index out of bounds"), "{}", text(&o.stderr));
}

#[test]
fn bad_requests_exit_2() {
    let cases: [(&[&str], &str); 4] = [
        (&["--method", "shift", "--arg", "a=new int[3]"], "missing `--arg b=VALUE` (the parameters of shift: a=int[] b=int[] n=int)"),
        (&["--method", "nosuch"], "no method `nosuch`; the file has Shift.shift"),
        (&["--method", "shift", "--arg", "a=[1,", "--arg", "b=[]", "--arg", "n=0"], "`--arg a=[1,`"),
        (
            &["--method", "shift", "--arg", "a=[]", "--arg", "b=[]", "--arg", "n=0", "--arg", "m=1"],
            "`--arg m=1`: shift has no such parameter",
        ),
    ];
    for (args, msg) in cases {
        let o = alpine(&[&["run", SHIFT][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(msg), "{args:?}: {}", text(&o.stderr));
    }
}

/// Integers beyond 64 bits (issue #29): the interpreter's integers are i64
/// with checked arithmetic, so a result that fits is exact, and a literal or
/// a result beyond `i64::MAX` is a run-time error (exit 1), never a wrapped
/// or clamped value.
#[test]
fn big_integers_are_exact_or_an_error() {
    let dir = std::env::temp_dir().join(format!("alpine-run-ints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("class C {{\n  int f() {{\n{body}\n  }}\n}}\n")).unwrap();
        alpine(&["run", &path.to_string_lossy(), "--method", "f"])
    };
    let o = run("fits.pvl", "    return 9223372036854775807 - 1 + 1;");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("9223372036854775807"), "{}", text(&o.stdout));
    let o = run("literal.pvl", "    int x = 9223372036854775808;\n    return x;");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("integer literal 9223372036854775808"), "{}", text(&o.stderr));
    let o = run("u64.pvl", "    return 18446744073709551616 - 18446744073709551615;");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(!text(&o.stdout).contains("= 1"), "{}", text(&o.stdout));
    let o = run("sum.pvl", "    return 9223372036854775807 + 1;");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("integer overflow"), "{}", text(&o.stderr));
    let o = run("div.pvl", "    return (-9223372036854775807 - 1) / -1;");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("integer overflow"), "{}", text(&o.stderr));
}

/// Issue #29, hole 1: in contracts a parameter means its value at the call, also at
/// run time. The body's assignment to `n` does not change what `ensures` means, and
/// `\old(n)` is the argument too.
#[test]
fn contracts_see_parameters_at_entry() {
    let dir = std::env::temp_dir().join(format!("alpine-run-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("params.pvl");
    std::fs::write(
        &path,
        "class C {\n  ensures \\result == n + 1;\n  int wrong(int n) {\n    n = 0;\n    return 1;\n  }\n\n  \
         ensures \\result == n + 1 && \\old(n) == n;\n  int right(int n) {\n    int m = n;\n    n = 0;\n    return m + 1;\n  }\n}\n",
    )
    .unwrap();
    let file = path.to_string_lossy();
    let o = alpine(&["run", &file, "--method", "wrong", "--arg", "n=5", "--check-contracts"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert_eq!(text(&o.stderr), "error: postcondition of wrong does not hold (line 2)\n");
    let o = alpine(&["run", &file, "--method", "right", "--arg", "n=5", "--check-contracts"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("result = 6"), "{}", text(&o.stdout));
    // The verifier agrees on both.
    let o = Command::new(env!("CARGO_BIN_EXE_alpine")).args(["verify", "--message-format", "json", &file]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert_eq!(out.lines().filter(|l| l.contains("\"severity\":\"error\"")).count(), 1, "{out}");
    assert!(out.contains("\"line\":2"), "{out}");
    std::fs::remove_dir_all(dir).ok();
}
