//! `alpine scan`: prefix sums certified by one run over the interval-of-summands
//! monoid (issue #36). The four classic kernels of `examples/scan/` (PVL, and
//! CUDA or OpenCL) at every power of two from 2^4 to 2^12; the seeded bugs of `tests/scan/` each
//! rejected as their header says (`//:: scan FLAGS`, `//:: expect
//! certified|wrong|race|divergence|not_applicable`, alternatives with `|`), at
//! a line of the kernel; the corpus' Kogge-Stone and Blelloch programs get their
//! defect named, and certified once the operands are in order.

mod common;

use common::CLANG_PTX;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// alpine with no nvcc to find: the GPU run is tested below with a stand-in
/// nvcc, and on a GPU by `benches/gpu/scan.sh`.
fn alpine(args: &[&str]) -> Output {
    alpine_with_nvcc(args, Path::new("/nonexistent/nvcc"))
}

fn alpine_with_nvcc(args: &[&str], nvcc: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).env("NO_COLOR", "1").env("NVCC", nvcc).output().expect("alpine runs")
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

/// `--gpu-test FILE` writes the GPU test: the kernel emitted as CUDA with its
/// data (and only its data) over the interval monoid as pairs of integers, and
/// a `main` that checks every position. It builds as CUDA device code for every
/// classic kernel (the run itself needs a GPU: `benches/gpu/scan.sh`).
#[test]
fn the_gpu_test_of_every_classic_kernel_types_its_data_and_builds_as_cuda() {
    let dir = tempfile::tempdir().unwrap();
    for (kernel, exclusive) in
        [("kogge_stone", false), ("sklansky", false), ("brent_kung", false), ("blelloch", true), ("kogge_stone_exclusive", true)]
    {
        let test = dir.path().join(format!("{kernel}.cu"));
        let path = example(kernel);
        let mut args = vec!["scan", path.as_str(), "--n", "64", "--no-gpu", "--gpu-test", test.to_str().unwrap()];
        if exclusive {
            args.push("--exclusive");
        }
        let o = alpine(&args);
        assert_eq!(o.status.code(), Some(0), "{kernel}: {}", text(&o.stderr));
        assert!(!text(&o.stdout).contains("GPU run"), "--no-gpu runs nothing: {}", text(&o.stdout));
        let code = std::fs::read_to_string(&test).unwrap();
        assert!(code.contains("struct alpine_summand {") && code.contains("int main(void) {"), "{code}");
        assert!(code.contains("alpine_summand *__restrict__ "), "{kernel}: data arrays over the monoid:\n{code}");
        assert!(code.contains("sizeof(alpine_summand)"), "{kernel}: buffers of the monoid's size");
        let expected = if exclusive { "want(k == 0 ? -1 : 0, k == 0 ? -1 : k - 1)" } else { "want(0, k)" };
        assert!(code.contains(expected), "{kernel}: {code}");
        let ptx = Command::new("clang")
            .current_dir(dir.path())
            .args(CLANG_PTX)
            .arg(&test)
            .arg("-o")
            .arg(format!("{kernel}.ptx"))
            .output()
            .unwrap();
        assert!(ptx.status.success(), "{kernel}: clang: {}", text(&ptx.stderr));
    }
    let ks = std::fs::read_to_string(dir.path().join("kogge_stone.cu")).unwrap();
    assert!(ks.contains("alpine_summand sum = a[tid];") && ks.contains("int offset = 1;"), "only data is retyped:\n{ks}");
    let bl = std::fs::read_to_string(dir.path().join("blelloch.cu")).unwrap();
    assert!(bl.contains("alpine_summand left = a[(tid - offset)];") && bl.contains("a[tid] = 0;"), "0 is the identity:\n{bl}");
}

/// A stand-in for nvcc: "builds" a program that prints what `$FAKE_GPU_SAYS`
/// holds (`ok`, or `wrong K LO HI`), as the emitted test does on a GPU.
fn fake_nvcc(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let nvcc = dir.join("nvcc");
    std::fs::write(
        &nvcc,
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
         printf '#!/bin/sh\\necho \"alpine-scan: device Stand-in GPU\"\\necho \"alpine-scan: %s\"\\n' \"$FAKE_GPU_SAYS\" >\"$out\"\n\
         chmod +x \"$out\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    nvcc
}

fn scan_on_fake_gpu(file: &str, flags: &[&str], says: &str, nvcc: &Path) -> Output {
    let mut args = vec!["scan", file, "--message-format", "json"];
    args.extend(flags);
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(&args).env("NVCC", nvcc).env("FAKE_GPU_SAYS", says).output().expect("alpine runs")
}

/// The GPU run's result is compared with the interpreter's: agreement is
/// reported with the device; a GPU run that ends otherwise (a wrong position
/// where the interpreter certified, no wrong position or another one where it
/// did not) is an error; `--gpu` without nvcc is exit 2, and without `--gpu`
/// the run is reported as not done.
#[test]
fn the_gpu_run_is_compared_with_the_interpreters() {
    let dir = tempfile::tempdir().unwrap();
    let nvcc = fake_nvcc(dir.path());
    let ks = example("kogge_stone");
    let o = scan_on_fake_gpu(&ks, &["--n", "16"], "ok", &nvcc);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let record: serde_json::Value = serde_json::from_str(text(&o.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(record["gpu"]["result"], "agrees", "{record}");
    assert_eq!(record["gpu"]["device"], "Stand-in GPU", "{record}");

    let o = scan_on_fake_gpu(&ks, &["--n", "16"], "wrong 3 -2 -2", &nvcc);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let d = diagnostics(&o);
    assert_eq!(d[0]["code"], "alpine::scan::gpu", "{d:?}");
    assert!(d[0]["message"].as_str().unwrap().contains("ends with ⊤ at `a[3]` first on Stand-in GPU"), "{d:?}");

    // A seeded bug: the GPU must find the interpreter's first wrong position and value.
    let bug = format!("{}/tests/scan/kogge_stone_commuted.pvl", env!("CARGO_MANIFEST_DIR"));
    let o = scan_on_fake_gpu(&bug, &["--n", "16"], "wrong 1 -2 -2", &nvcc);
    let d = diagnostics(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(d.iter().map(|d| d["code"].as_str().unwrap()).collect::<Vec<_>>(), ["alpine::scan::wrong"], "{d:?}");
    for says in ["ok", "wrong 2 -2 -2", "wrong 1 0 1"] {
        let o = scan_on_fake_gpu(&bug, &["--n", "16"], says, &nvcc);
        let d = diagnostics(&o);
        assert_eq!(o.status.code(), Some(1));
        assert!(d.iter().any(|d| d["code"] == "alpine::scan::gpu"), "GPU says {says}: {d:?}");
    }

    let o = alpine(&["scan", &ks, "--n", "16", "--gpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("nvcc not found"), "{}", text(&o.stderr));
    let o = alpine(&["scan", &ks, "--n", "16"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("GPU run: not done (nvcc not found"), "{}", text(&o.stdout));
}

/// A kernel over a named operator (`--op`): the interpreter reads its calls as
/// the monoid's operator, and the GPU test emits it as that operator whatever
/// its body (here a maximum: an associative operator like any other).
#[test]
fn a_kernel_over_a_named_operator_is_certified_and_its_gpu_test_builds() {
    let dir = tempfile::tempdir().unwrap();
    let src = PathBuf::from(example("kogge_stone_max"));
    let test = dir.path().join("max.cu");
    let o = alpine(&["scan", src.to_str().unwrap(), "--n", "32", "--op", "op", "--gpu-test", test.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let code = std::fs::read_to_string(&test).unwrap();
    assert!(code.contains("alpine_summand Scan_op(alpine_summand x, alpine_summand y) {\n    return (x + y);"), "{code}");
    assert!(code.contains("alpine_summand acc = a[tid];"), "{code}");
    let ptx = Command::new("clang").current_dir(dir.path()).args(CLANG_PTX).arg(&test).arg("-o").arg("max.ptx").output().unwrap();
    assert!(ptx.status.success(), "clang: {}", text(&ptx.stderr));
    // Without --op the call is not the operator: the kernel is not generic.
    let o = alpine(&["scan", src.to_str().unwrap(), "--n", "32"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
}
