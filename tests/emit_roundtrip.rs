//! Emission round trip (issue #33, item 6): the CUDA and OpenCL that `alpine
//! emit` writes for the corpus and the examples are read again by alpine's own
//! CUDA/OpenCL front end (`alpine::cfront`, what `alpine parse FILE.cu|.cl`
//! runs): the whole `.cu` unit (host code included) and the `.cl` kernels of
//! `--kernels-out`.
//!
//! That the emitted annotations verify again is `tests/emit_reverify.rs`.

mod common;

use alpine::cfront::ir::Language;
use alpine::diagnostics::SourceFile;
use alpine::emit::{emit, emit_kernels, Target};
use std::path::Path;
use std::process::Command;

/// Every emitted file, as (what it came from, file name, text).
fn emitted() -> Option<Vec<(String, String, String)>> {
    let mut out = Vec::new();
    for (rel, p) in common::emit_programs()? {
        let stem = rel.replace(['/', '.'], "_");
        if let Ok(cu) = emit(&p, Target::Cuda) {
            out.push((rel.clone(), format!("{stem}.cu"), cu));
        }
        if let Ok(cl) = emit_kernels(&p, Target::OpenCl) {
            out.push((rel.clone(), format!("{stem}.cl"), cl));
        }
    }
    Some(out)
}

#[test]
fn emitted_cuda_and_opencl_are_read_again() {
    let Some(files) = emitted() else { return };
    let (cu, cl) = (files.iter().filter(|f| f.1.ends_with(".cu")).count(), files.iter().filter(|f| f.1.ends_with(".cl")).count());
    // The corpus emits 46 programs to each target; the examples add more.
    assert!(cu >= 46 && cl >= 46, "{cu} .cu and {cl} .cl files emitted");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (rel, name, text) in &files {
        let path = dir.path().join(name).to_string_lossy().into_owned();
        let lang = Language::of_path(&path).unwrap();
        if let Err(ds) = alpine::cfront::read(&SourceFile::new(path, text.clone()), lang, &Default::default()) {
            let first: Vec<String> = ds.iter().take(3).map(|d| d.message.clone()).collect();
            failures.push(format!("{rel} ({name}): {first:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} emitted files are not read again:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// The command line says the same as the library, for one file of each target.
#[test]
fn alpine_parse_reads_emitted_files() {
    let dir = tempfile::tempdir().unwrap();
    let pvl = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shift_barrier.pvl");
    let (cu, cl_host, cl) = (dir.path().join("k.cu"), dir.path().join("k.c"), dir.path().join("k.cl"));
    let alpine = |args: &[&std::ffi::OsStr]| Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).output().unwrap();
    let o = alpine(&["emit".as_ref(), "--target".as_ref(), "cuda".as_ref(), pvl.as_os_str(), "-o".as_ref(), cu.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let opencl = ["emit", "--target", "opencl"].map(std::ffi::OsStr::new);
    let o =
        alpine(&[&opencl[..], &[pvl.as_os_str(), "-o".as_ref(), cl_host.as_os_str(), "--kernels-out".as_ref(), cl.as_os_str()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [&cu, &cl] {
        let o = alpine(&["parse".as_ref(), f.as_os_str()]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains(": ok ("), "{}", String::from_utf8_lossy(&o.stdout));
    }
    // The annotations are in the kernel's own terms: the annotation proof
    // alone (`--no-race-check`) verifies both (tests/emit_reverify.rs has the rest).
    for f in [&cu, &cl] {
        let o = alpine(&["verify".as_ref(), "--no-race-check".as_ref(), f.as_os_str()]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{}: {stdout}{}", f.display(), String::from_utf8_lossy(&o.stderr));
        assert!(stdout.contains("✓ Shift_shift_threads"), "{stdout}");
    }
}
