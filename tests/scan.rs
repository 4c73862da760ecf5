//! `alpine scan`: prefix sums certified by one run over the interval-of-summands
//! monoid (issue #36). The four classic kernels of `examples/scan/` (PVL, and
//! CUDA or OpenCL) at every power of two from 2^4 to 2^12; the seeded bugs of `tests/scan/` each
//! rejected as their header says (`//:: scan FLAGS`, `//:: expect
//! certified|wrong|race|divergence|not_applicable`, alternatives with `|`), at
//! a line of the kernel; the corpus' Kogge-Stone and Blelloch programs get their
//! defect named, and certified once the operands are in order.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn alpine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).env("NO_COLOR", "1").output().expect("alpine runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn example(name: &str) -> String {
    format!("{}/examples/scan/{name}.pvl", env!("CARGO_MANIFEST_DIR"))
}

/// The JSON diagnostics of a run (stdout lines of type `diagnostic`).
fn diagnostics(o: &Output) -> Vec<serde_json::Value> {
    text(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "diagnostic")
        .collect()
}

#[test]
fn the_classic_kernels_are_certified_at_every_power_of_two_up_to_2_to_the_12() {
    for (kernel, exclusive) in
        [("kogge_stone", false), ("sklansky", false), ("brent_kung", false), ("blelloch", true), ("kogge_stone_exclusive", true)]
    {
        for log2 in 4..=12 {
            let n = (1usize << log2).to_string();
            let path = example(kernel);
            let mut args = vec!["scan", path.as_str(), "--n", n.as_str(), "--message-format", "json"];
            if exclusive {
                args.push("--exclusive");
            }
            let o = alpine(&args);
            assert_eq!(o.status.code(), Some(0), "{kernel} n={n}: {}{}", text(&o.stdout), text(&o.stderr));
            let record: serde_json::Value = serde_json::from_str(text(&o.stdout).lines().last().unwrap()).unwrap();
            assert_eq!(record["verdict"], "certified", "{kernel} n={n}");
            assert_eq!(record["kind"], if exclusive { "exclusive" } else { "inclusive" });
        }
    }
}

/// CUDA and OpenCL kernels go through clang and the same lowering as `alpine
/// verify` (one block of N threads unless the flags say otherwise).
#[test]
fn the_cuda_and_opencl_kernels_are_certified_at_every_power_of_two_up_to_2_to_the_12() {
    for (file, exclusive) in [("kogge_stone.cu", false), ("sklansky.cu", false), ("brent_kung.cl", false), ("blelloch.cl", true)] {
        let path = format!("{}/examples/scan/{file}", env!("CARGO_MANIFEST_DIR"));
        for log2 in 4..=12 {
            let n = (1usize << log2).to_string();
            let define = format!("-DN={n}");
            let mut args = vec!["scan", path.as_str(), "--n", n.as_str(), define.as_str()];
            if exclusive {
                args.push("--exclusive");
            }
            let o = alpine(&args);
            assert_eq!(o.status.code(), Some(0), "{file} n={n}: {}{}", text(&o.stdout), text(&o.stderr));
        }
    }
    // A launch that does not cover the array is refused, not certified.
    let path = format!("{}/examples/scan/kogge_stone.cu", env!("CARGO_MANIFEST_DIR"));
    let o = alpine(&["scan", &path, "--n", "32", "-DN=32", "--blockDim=16", "--gridDim=1"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn kogge_stone_and_sklansky_are_certified_for_lengths_that_are_not_powers_of_two() {
    for kernel in ["kogge_stone", "sklansky"] {
        for n in ["1", "3", "5", "12", "100"] {
            let o = alpine(&["scan", &example(kernel), "--n", n]);
            assert_eq!(o.status.code(), Some(0), "{kernel} n={n}: {}", text(&o.stderr));
        }
    }
}

#[test]
fn an_inclusive_kernel_is_not_an_exclusive_one() {
    let o = alpine(&["scan", &example("kogge_stone"), "--n", "16", "--exclusive", "--message-format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let d = diagnostics(&o);
    assert_eq!(d[0]["code"], "alpine::scan::wrong", "{d:?}");
    assert!(d[0]["message"].as_str().unwrap().contains("`a[0]` ends as [0, 0], expected ε"), "{d:?}");
}

/// `//:: NAME rest` header lines of a fixture.
fn header<'a>(src: &'a str, name: &str) -> &'a str {
    let prefix = format!("//:: {name} ");
    src.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or_else(|| panic!("missing `{prefix}` header"))
}

#[test]
fn every_seeded_bug_is_rejected_at_a_line_of_the_kernel() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scan");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pvl" || e == "cu" || e == "cl"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the seeded bugs are missing");
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let flags: Vec<&str> = header(&src, "scan").split_whitespace().collect();
        let expect: Vec<&str> = header(&src, "expect").split('|').map(str::trim).collect();
        let p = path.to_string_lossy().into_owned();
        let mut args = vec!["scan", p.as_str(), "--message-format", "json"];
        args.extend(&flags);
        let o = alpine(&args);
        let d = diagnostics(&o);
        let code = match o.status.code() {
            Some(1) | Some(2) => {
                d.first().and_then(|d| d["code"].as_str()).unwrap_or("none").trim_start_matches("alpine::scan::").to_string()
            }
            _ => "certified".to_string(),
        };
        assert!(expect.contains(&code.as_str()), "{p}: expected {expect:?}, got {code} ({})", text(&o.stdout));
        let want_exit = if code == "not_applicable" { 2 } else { 1 };
        assert_eq!(o.status.code(), Some(want_exit), "{p}");
        // Located: a line inside the class, never the whole file.
        let line = d[0]["span"]["line"].as_u64().unwrap_or(0) as usize;
        let first_code = src.lines().position(|l| l.starts_with("class") || l.starts_with("__")).unwrap() + 1;
        assert!(line >= first_code && line <= src.lines().count(), "{p}: line {line}");
        if code == "race" {
            let m = d[0]["message"].as_str().unwrap();
            assert!(m.contains(" = ") && m.contains("writes"), "{p}: a race names both threads: {m}");
        }
    }
}

#[test]
fn a_kernel_that_compares_data_is_refused_as_not_generic() {
    let o = alpine(&["scan", &format!("{}/tests/scan/kogge_stone_compares_data.pvl", env!("CARGO_MANIFEST_DIR")), "--n", "16"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(e.contains("a data value meets `!=`"), "{e}");
}

#[test]
fn bad_input_is_a_usage_error() {
    let o = alpine(&["scan", &example("blelloch"), "--n", "16", "--input", "b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no `int[]` parameter `b`"), "{}", text(&o.stderr));
    let o = alpine(&["scan", &example("blelloch"), "--n", "16", "--kernel", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    // A CUDA launch must be concrete: a grid without a block size is refused.
    let cuda = format!("{}/examples/scan/sklansky.cu", env!("CARGO_MANIFEST_DIR"));
    let o = alpine(&["scan", &cuda, "--n", "64", "-DN=64", "--gridDim=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("give the block size"), "{}", text(&o.stderr));
    // The block size alone means one block, and the output says so.
    let o = alpine(&["scan", &cuda, "--n", "64", "-DN=64", "--blockDim=64"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("launch: blocks of [64, 1, 1] threads, a grid of [1, 1, 1] blocks"), "{}", text(&o.stdout));
}

/// The corpus' prefix sums add the left neighbour's sum on the right: correct
/// for integers, wrong for a non-commutative operator. The run names the first
/// swapped combination; with the operands in order the same program is
/// certified (Kogge-Stone inclusive, Blelloch exclusive, at 2^2 … 2^8).
#[test]
fn the_corpus_prefix_sums_have_their_defect_named_and_are_certified_when_fixed() {
    let Some(corpus) = common::corpus_dir() else { return };
    let cases = [
        (
            "loop_unroll/PrefixSumKoggeStone/orig_Kogge-Stone.pvl",
            false,
            "temp = temp + output [ (tid - offset) ];",
            "temp = output [ (tid - offset) ] + temp;",
        ),
        (
            "loop_unroll/PrefixSumBlelloch/orig_Blelloch.pvl",
            true,
            "output [ indicator ] = output [ indicator ] + output [ (indicator - stride) ];",
            "output [ indicator ] = output [ (indicator - stride) ] + output [ indicator ];",
        ),
    ];
    let dir = std::env::temp_dir().join(format!("alpine-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, exclusive, swapped, in_order) in cases {
        let path = corpus.join(file);
        let p = path.to_string_lossy().into_owned();
        let mut args = vec!["scan", p.as_str(), "--n", "16", "--input", "output", "--output", "output", "--message-format", "json"];
        if exclusive {
            args.push("--exclusive");
        }
        let o = alpine(&args);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", text(&o.stdout));
        let d = diagnostics(&o);
        assert_eq!(d[0]["code"], "alpine::scan::wrong", "{file}");
        let related = d[0]["related"].to_string();
        assert!(related.contains("the operands are swapped"), "{file}: {related}");
        // The first swapped combination is the up-sweep's (Blelloch's down-sweep
        // has the same text with the operands rightly in this order).
        let src = std::fs::read_to_string(&path).unwrap();
        let line = d[0]["related"][0]["span"]["line"].as_u64().unwrap() as usize;
        assert!(src.lines().nth(line - 1).unwrap().contains(swapped), "{file}: line {line}");
        let fixed = src.replacen(swapped, in_order, 1);
        assert_ne!(fixed, src);
        let fixed_path = dir.join(Path::new(file).file_name().unwrap());
        std::fs::write(&fixed_path, fixed).unwrap();
        let fp = fixed_path.to_string_lossy().into_owned();
        for n in ["4", "16", "256"] {
            let mut args = vec!["scan", fp.as_str(), "--n", n, "--input", "output", "--output", "output"];
            if exclusive {
                args.push("--exclusive");
            }
            let o = alpine(&args);
            assert_eq!(o.status.code(), Some(0), "fixed {file} n={n}: {}", text(&o.stderr));
        }
    }
}
