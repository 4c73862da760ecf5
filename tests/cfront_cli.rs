//! `alpine parse|verify FILE.cu|FILE.cl` on the command line: GPUVerify's flags
//! taken verbatim, notices for the ones that do not apply, exit statuses.

use std::path::Path;
use std::process::{Command, Output};

fn alpine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).env("NO_COLOR", "1").output().expect("alpine runs")
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name).to_string_lossy().into_owned()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cfront").join(name).to_string_lossy().into_owned()
}

#[test]
fn a_gpuverify_command_line_works_and_its_own_flags_get_a_notice() {
    let cu = example("vector_add.cu");
    let o = alpine(&["parse", "--blockDim=[256,1,1]", "--gridDim=4", "--no-inline", "--warp-sync=32", "-DUNUSED=1", &cu]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("vector_add.cu: ok (1 kernel, 0 device functions)"), "{stdout}");
    assert!(stderr.contains("`--no-inline` is a GPUVerify flag that does not apply to alpine; ignored"), "{stderr}");
    assert!(stderr.contains("`--warp-sync=32`"), "{stderr}");
    let cl = fixture("stencil.cl");
    let o = alpine(&["parse", "--local_size=64", "--global_size=[256]", "--equality-abstraction", &cl, &example("zero_array.pvl")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_geometry_is_a_usage_error() {
    let cu = example("vector_add.cu");
    for bad in [&["--blockDim=[2,x]"][..], &["--blockDim=0"], &["--local_size=60", "--global_size=256"]] {
        let mut args = vec!["parse"];
        args.extend_from_slice(bad);
        args.push(&cu);
        let o = alpine(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn refusals_are_located_and_exit_2() {
    let o = alpine(&["--message-format", "json", "parse", &fixture("goto.cu")]);
    assert_eq!(o.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let d: serde_json::Value = stdout.lines().find_map(|l| serde_json::from_str(l).ok()).expect("a JSON diagnostic");
    assert_eq!(d["code"], "alpine::cfront::unsupported");
    assert_eq!((d["span"]["line"].as_u64(), d["span"]["column"].as_u64()), (Some(3), Some(5)), "{d}");
}

#[test]
fn verify_checks_a_kernel_for_races_and_honours_the_race_checkers_flags() {
    let o = alpine(&["verify", "--blockDim=256", "--gridDim=4", "--only-intra-group", "--no-inline", &example("vector_add.cu")]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert!(!stderr.contains("`--only-intra-group` is a GPUVerify flag that does not apply"), "{stderr}");
    assert!(stderr.contains("`--no-inline` is a GPUVerify flag that does not apply to alpine; ignored"), "{stderr}");
    // A clang error is reported by verify too.
    let o = alpine(&["verify", &fixture("syntax_error.cl")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("alpine::cfront::clang"));
}
