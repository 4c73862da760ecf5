//! What the optimisations buy on a real GPU (issue #37): `cargo bench --bench gpu`.
//!
//! For each [`CASE`], every [`Variant`] — the original program and its optimised
//! forms — is emitted as CUDA by the alpine binary itself (`alpine emit`, or
//! `alpine optimise … --emit cuda`, which re-verifies the optimised program
//! first), and gets a timing harness: a `main` that fills the arrays with seeded
//! pseudo-random values, calls the host function [`WARM_UPS`] + `reps` times on
//! the same inputs (restored before every call), and prints the median and the
//! minimum of the device time between the copies in and out (the emitted
//! `-DALPINE_TIME_DEVICE` events: launches and host statements, no PCIe
//! transfers) and a checksum of every array afterwards.
//!
//! Where `nvcc` and an NVIDIA GPU are present, `benches/gpu/run.sh` then builds
//! and runs every harness, measures the device's copy bandwidth in the same run
//! (`benches/gpu/copy_bandwidth.cu`), checks that all variants of a case end
//! with the same arrays, and prints the table (recorded in `docs/gpu-benchmarks.md`).
//! Elsewhere the bench says so and exits 0, leaving the emitted files for a GPU
//! machine: `bash benches/gpu/run.sh target/gpu-bench` there.
//!
//! Environment: `ALPINE_GPU_BENCH_DIR` (default `target/gpu-bench`),
//! `ALPINE_GPU_BENCH_LOG2N` (array length 2^N, default 26: 256 MiB per `int`
//! array, far beyond any L2 cache), `ALPINE_GPU_BENCH_REPS` (timed calls per
//! variant, default 20), `ALPINE_GPU_BENCH_ONLY` (`;`-separated `case/variant`
//! names: only these; the first of a case is its reference).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Untimed calls before the timed ones (module loading, first-touch costs).
const WARM_UPS: usize = 2;

/// One optimised (or original) form of a case.
struct Variant {
    /// Short name in the table (no spaces: the manifest is whitespace-separated).
    name: &'static str,
    /// Arguments of `alpine`, before `--emit cuda -o OUT FILE` (or `--target cuda -o OUT FILE`).
    alpine: &'static [&'static str],
}

/// A scalable program and its variants; the first variant is the reference.
struct Case {
    name: &'static str,
    /// The PVL file, relative to the repository.
    file: &'static str,
    /// The fewest bytes a call must move through device memory per array
    /// element: each array it reads once, each it writes once (4-byte `int`s).
    useful_bytes_per_element: u64,
    /// Values of scalar parameters other than the array length `n`.
    scalars: &'static [(&'static str, i64)],
    /// The arrays are this much shorter than 2^N: a length that is no multiple of
    /// a block's chunk runs the bounds-checked last block of packed kernels.
    shorter_by: u64,
    variants: &'static [Variant],
}

const EMIT: &[&str] = &["emit"];

const CASES: &[Case] = &[
    Case {
        name: "vector_add",
        file: "benches/gpu/vector_add.pvl",
        useful_bytes_per_element: 12,
        scalars: &[],
        shorter_by: 0,
        variants: &[
            Variant { name: "original", alpine: EMIT },
            Variant { name: "original,1-per-thread", alpine: &["emit", "--elements-per-thread", "1"] },
            Variant { name: "original,2-per-thread", alpine: &["emit", "--elements-per-thread", "2"] },
            Variant { name: "original,8-per-thread", alpine: &["emit", "--elements-per-thread", "8"] },
            Variant { name: "original,plain-pointers", alpine: &["emit", "--no-restrict"] },
            Variant { name: "original,16-per-thread", alpine: &["emit", "--elements-per-thread", "16"] },
            // Not packed: its loop's trip count depends on `n` (see emit::Options).
            Variant { name: "tile-inter-2^20", alpine: &["optimise", "--tile", "threads:inter:1048576"] },
            Variant { name: "tile-intra-4", alpine: &["optimise", "--tile", "threads:intra:4"] },
            Variant { name: "tile-intra-4,1-per-thread", alpine: &["optimise", "--tile", "threads:intra:4", "--elements-per-thread", "1"] },
            Variant { name: "prefetch-a,b", alpine: &["optimise", "--prefetch", "a[tid]", "--prefetch", "b[tid]"] },
        ],
    },
    Case {
        name: "scale_add",
        file: "examples/scale_add.pvl",
        useful_bytes_per_element: 8,
        scalars: &[("k", 3)],
        shorter_by: 0,
        variants: &[
            Variant { name: "original(2-kernels)", alpine: EMIT },
            Variant { name: "fused", alpine: &["optimise", "--fuse", "scale,add"] },
            Variant { name: "fused,1-per-thread", alpine: &["optimise", "--fuse", "scale,add", "--elements-per-thread", "1"] },
            Variant { name: "fused,2-per-thread", alpine: &["optimise", "--fuse", "scale,add", "--elements-per-thread", "2"] },
            Variant { name: "fused,8-per-thread", alpine: &["optimise", "--fuse", "scale,add", "--elements-per-thread", "8"] },
            Variant { name: "fused,16-per-thread", alpine: &["optimise", "--fuse", "scale,add", "--elements-per-thread", "16"] },
            Variant { name: "fused,plain-pointers", alpine: &["optimise", "--fuse", "scale,add", "--no-restrict"] },
        ],
    },
    Case {
        name: "scale_add_ragged",
        file: "examples/scale_add.pvl",
        useful_bytes_per_element: 8,
        scalars: &[("k", 3)],
        shorter_by: 3,
        variants: &[
            Variant { name: "original(2-kernels),1-per-thread", alpine: &["emit", "--elements-per-thread", "1"] },
            Variant { name: "fused", alpine: &["optimise", "--fuse", "scale,add"] },
        ],
    },
];

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A host function's parameters, from its definition line in the emitted file:
/// (C name, whether it is an array pointer).
fn host_signature(code: &str) -> Option<(String, Vec<(String, bool)>)> {
    let line = code.lines().find(|l| l.starts_with("extern \"C\" int ") && l.ends_with('{'))?;
    let rest = line.strip_prefix("extern \"C\" int ")?;
    let (name, params) = rest.split_once('(')?;
    let params = params.strip_suffix(") {")?;
    let params = params
        .split(", ")
        .map(|p| {
            let name = p.rsplit([' ', '*']).next().unwrap_or(p).to_string();
            (name, p.contains('*'))
        })
        .collect();
    Some((name.to_string(), params))
}

/// The harness of one emitted variant (see the module documentation).
fn harness(emitted: &str, case: &Case, code: &str, log2n: u64, reps: u64) -> Result<String, String> {
    let (function, params) = host_signature(code).ok_or("no host function in the emitted code")?;
    let arrays: Vec<&str> = params.iter().filter(|(_, a)| *a).map(|(n, _)| n.as_str()).collect();
    let mut args = Vec::new();
    for (name, is_array) in &params {
        if *is_array {
            args.push(name.clone());
        } else if name == "n" || arrays.iter().any(|a| *name == format!("{a}_length")) {
            args.push("n".into());
        } else {
            let v = case.scalars.iter().find(|(s, _)| s == name).ok_or(format!("no value for the scalar `{name}`"))?.1;
            args.push(v.to_string());
        }
    }
    let shorter_by = case.shorter_by;
    let mut out = format!(
        "// Generated by `cargo bench --bench gpu`: the timing harness of {emitted}.\n\
         #define ALPINE_TIME_DEVICE\n\
         #include \"{emitted}\"\n\
         #include <stdlib.h>\n#include <string.h>\n\n\
         // Seeded xorshift: values in [-1000, 1000], the same for every variant.\n\
         static unsigned long long alpine_rng = 0x9E3779B97F4A7C15ull;\n\
         static int alpine_next() {{\n    alpine_rng ^= alpine_rng << 13; alpine_rng ^= alpine_rng >> 7; alpine_rng ^= alpine_rng << 17;\n    return (int)(alpine_rng % 2001) - 1000;\n}}\n\n\
         int main() {{\n    const int n = (1 << {log2n}) - {shorter_by};\n    const int reps = {reps};\n    const size_t bytes = sizeof(int) * (size_t)n;\n"
    );
    for a in &arrays {
        out += &format!(
            "    int *{a} = (int *)malloc(bytes), *{a}_input = (int *)malloc(bytes);\n    if (!{a} || !{a}_input) {{ fprintf(stderr, \"out of host memory\\n\"); return 1; }}\n    for (int i = 0; i < n; i++) {a}_input[i] = alpine_next();\n"
        );
    }
    out += &format!("    float *times = (float *)malloc(sizeof(float) * reps);\n    for (int r = -{WARM_UPS}; r < reps; r++) {{\n");
    for a in &arrays {
        out += &format!("        memcpy({a}, {a}_input, bytes);\n");
    }
    out += &format!(
        "        int status = {function}({});\n        if (status != 0) {{ fprintf(stderr, \"{function} returned %d\\n\", status); return 1; }}\n        if (r >= 0) times[r] = alpine_device_ms;\n    }}\n",
        args.join(", ")
    );
    out += "    // Insertion sort: `reps` is small.\n    for (int i = 1; i < reps; i++)\n        for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {\n            float t = times[j]; times[j] = times[j - 1]; times[j - 1] = t;\n        }\n    // FNV-1a over every array's final contents.\n    unsigned long long h = 0xcbf29ce484222325ull;\n";
    for a in &arrays {
        out += &format!("    for (int i = 0; i < n; i++) {{ h ^= (unsigned)({a}[i]); h *= 0x100000001b3ull; }}\n");
    }
    out += "    printf(\"ALPINE_BENCH median_us=%.1f min_us=%.1f checksum=%016llx\\n\", 1000.0 * times[reps / 2], 1000.0 * times[0], h);\n    return 0;\n}\n";
    Ok(out)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("ALPINE_GPU_BENCH_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/gpu-bench"));
    let log2n = env_or("ALPINE_GPU_BENCH_LOG2N", 26).clamp(10, 29);
    let reps = env_or("ALPINE_GPU_BENCH_REPS", 20).max(1);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cannot create the benchmark's folder");
    let mut manifest = format!("# case variant harness useful_bytes\t(n = 2^{log2n}, {reps} timed calls)\n");
    let only: Option<Vec<String>> = std::env::var("ALPINE_GPU_BENCH_ONLY").ok().map(|v| v.split(';').map(str::to_string).collect());
    let wanted = |case: &Case, v: &Variant| only.as_ref().is_none_or(|o| o.contains(&format!("{}/{}", case.name, v.name)));
    let mut failures = 0;
    let mut emitted_count = 0;
    for case in CASES {
        for (i, v) in case.variants.iter().enumerate().filter(|(_, v)| wanted(case, v)) {
            emitted_count += 1;
            let stem = format!("{}_{i}", case.name);
            let emitted = dir.join(format!("{stem}.cu"));
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_alpine"));
            cmd.current_dir(root).args(v.alpine);
            if v.alpine[0] == "emit" {
                cmd.args(["--target", "cuda"]);
            } else {
                cmd.args(["--emit", "cuda"]);
            }
            let out = cmd.arg("-o").arg(&emitted).arg(case.file).output().expect("the alpine binary runs");
            if !out.status.success() {
                eprintln!("{} {}: alpine failed:\n{}", case.name, v.name, String::from_utf8_lossy(&out.stderr));
                failures += 1;
                continue;
            }
            let code = std::fs::read_to_string(&emitted).expect("alpine wrote its output");
            match harness(&format!("{stem}.cu"), case, &code, log2n, reps) {
                Ok(h) => {
                    std::fs::write(dir.join(format!("{stem}_main.cu")), h).expect("cannot write a harness");
                    let useful = case.useful_bytes_per_element * ((1u64 << log2n) - case.shorter_by);
                    manifest += &format!("{} {} {stem}_main.cu {useful}\n", case.name, v.name);
                }
                Err(e) => {
                    eprintln!("{} {}: {e}", case.name, v.name);
                    failures += 1;
                }
            }
        }
    }
    std::fs::write(dir.join("manifest.tsv"), manifest).expect("cannot write the manifest");
    if failures > 0 {
        eprintln!("gpu bench: {failures} variants could not be emitted");
        std::process::exit(1);
    }
    println!("gpu bench: {emitted_count} variants of {} programs emitted and verified into {}", CASES.len(), dir.display());
    let have = |tool: &str, arg: &str| Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success());
    if !have("nvcc", "--version") || !have("nvidia-smi", "-L") {
        println!(
            "gpu bench: no nvcc or no NVIDIA GPU here, so nothing was run; on a GPU machine: bash benches/gpu/run.sh {}",
            dir.display()
        );
        return;
    }
    let status = Command::new("bash").arg(root.join("benches/gpu/run.sh")).arg(&dir).status().expect("bash runs");
    std::process::exit(status.code().unwrap_or(1));
}
