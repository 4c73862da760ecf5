//! `alpine verify FILE...` — prove every method and pure function.

use super::kernel::{self, KernelArgs};
use super::progress::{Progress, Summary};
use super::{Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::diagnostics::{codes, Diagnostic, Severity, SourceFile};
use alpine::verify::{self, Options, UnitEvent};

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// PVL files to verify (`-` reads standard input); a directory stands for the
    /// PVL files below it (files ignored by `.gitignore` and hidden ones skipped).
    #[arg(required = true)]
    files: Vec<String>,
    /// Wall-clock limit per Z3 query, in seconds; a query that runs out is a
    /// failure ("could not prove").
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Z3's deterministic resource limit per query (0 = none).
    #[arg(long, default_value_t = 0)]
    rlimit: u32,
    /// Wall-clock budget of one proof unit (a method or pure function), in
    /// seconds (0 = none). A query gets at most what is left of it; obligations
    /// met after it ran out are failures reported as "not checked". After an
    /// obligation of a unit failed, its later queries get a third of --timeout
    /// (a tenth, at least 1 s, after a timeout), and the first of them that
    /// times out stops the unit.
    #[arg(long, value_name = "SECS", default_value_t = verify::DEFAULT_UNIT_TIMEOUT_SECS)]
    unit_timeout: u64,
    /// Also warn when a method's end or a loop body is unreachable (a vacuous
    /// contract).
    #[arg(long)]
    smoke: bool,
    /// Write the SMT-LIB sent to Z3 for each unit into this directory.
    #[arg(long, value_name = "DIR")]
    dump_smt: Option<std::path::PathBuf>,
    /// Verify only this unit (`Class.method`, or `method` in any class);
    /// repeatable. Naming no unit of a file is a usage error.
    #[arg(long, value_name = "UNIT")]
    only: Vec<String>,
    /// PVL files: check the par blocks for data races and barrier divergence
    /// without annotations (the GPUVerify method, as for CUDA/OpenCL files)
    /// instead of proving the contracts.
    #[arg(long)]
    races: bool,
    /// CUDA/OpenCL files: do not check for data races and barrier divergence
    /// (the annotation-free GPUVerify method); only prove the file's VerCors
    /// annotations (as `alpine optimise --no-race-check` skips its race
    /// check). A file without VerCors annotations then has nothing to check
    /// and is reported as such (exit 2), never ✓.
    #[arg(long, conflicts_with = "races")]
    no_race_check: bool,
    /// CUDA/OpenCL files: read signed integer arithmetic in the VerCors
    /// annotations' proof over the mathematical integers, without checking
    /// that it stays within its C type (PVL's `int`, over which `alpine emit`
    /// proved what it writes). The proof then covers the runs without signed
    /// overflow, as the note says; unsigned wrap-around and conversions stay
    /// exact and checked. The race checker always makes this assumption.
    #[arg(long)]
    assume_no_signed_overflow: bool,
    #[command(flatten)]
    kernel: KernelArgs,
}

pub fn run(args: VerifyArgs, reporter: &Reporter) -> i32 {
    let opts = Options {
        timeout_secs: args.timeout.max(1),
        rlimit: args.rlimit,
        unit_timeout_secs: args.unit_timeout,
        smoke: args.smoke,
        dump_smt: args.dump_smt.is_some(),
        only: args.only.clone(),
    };
    let (inputs, expanded) = reporter.inputs(&args.files);
    let mut status = if expanded { EXIT_OK } else { EXIT_BAD_INPUT };
    let mut summary = Summary::new("verify", &["verified", "failed", "bad input"]);
    let mut progress = reporter.progress("verifying", inputs.files.len());
    if inputs.files.iter().any(|p| kernel::language(p).is_some()) {
        args.kernel.verify_notices();
    }
    // PVL's `int` is unbounded already: the flag changes nothing there, say so.
    if args.assume_no_signed_overflow && inputs.files.iter().any(|p| kernel::language(p).is_none()) && !reporter.json() {
        errln!("note: --assume-no-signed-overflow applies to CUDA/OpenCL files (PVL integers are unbounded)");
    }
    for path in &inputs.files {
        progress.file(path);
        let outcome = match kernel::language(path) {
            Some(lang) => verify_kernel_file(path, lang, &opts, &args, reporter, &progress),
            None if args.races => check_pvl_races(path, &args, reporter),
            None => verify_file(path, &opts, &args, reporter, &progress),
        };
        progress.file_finished();
        summary.add(outcome);
        status = status.max(match outcome {
            VERIFIED => EXIT_OK,
            FAILED => EXIT_CHECK_FAILED,
            _ => EXIT_BAD_INPUT,
        });
    }
    drop(progress);
    reporter.summary(&summary, false);
    status
}

const VERIFIED: &str = "verified";
const FAILED: &str = "failed";
const BAD_INPUT: &str = "bad input";

/// A CUDA/OpenCL file: read through clang (so its errors are reported), then
/// checked for data races, barrier divergence and its GPUVerify annotations
/// (`alpine::races`, issue #34); a file with VerCors annotations is also
/// lowered into PVL (`alpine::kernels`) and verified like a PVL file, its
/// diagnostics in the kernel's text. The file's outcome is the worse of the two.
fn verify_kernel_file(
    path: &str,
    lang: alpine::cfront::ir::Language,
    opts: &Options,
    args: &VerifyArgs,
    reporter: &Reporter,
    progress: &Progress,
) -> &'static str {
    let options = match args.kernel.options() {
        Ok(o) => o,
        Err(e) => {
            kernel::usage_error(reporter, &e);
            return BAD_INPUT;
        }
    };
    let Some((file, module)) = kernel::read(path, lang, &options, reporter) else {
        return BAD_INPUT;
    };
    let annotated = alpine::kernels::has_annotations(&file.text);
    if args.no_race_check && !annotated {
        reporter
            .command_error(codes::USAGE, &format!("{}: no VerCors annotations, so `--no-race-check` leaves nothing to check", file.name));
        return BAD_INPUT;
    }
    // `--no-race-check`: the annotation proof alone decides.
    let races = if args.no_race_check { VERIFIED } else { check_races(&file, &module, &args.kernel, reporter) };
    if args.no_race_check && !reporter.json() {
        errln!("note: {}: data races and barrier divergence not checked (--no-race-check)", file.name);
    }
    if !annotated {
        return races;
    }
    let lower_opts = alpine::kernels::Options { assume_no_signed_overflow: args.assume_no_signed_overflow };
    let lowered = match alpine::kernels::lower(&file.text, &module, &lower_opts) {
        Ok(l) => l,
        Err(diags) => {
            reporter.report(&file, &diags);
            return BAD_INPUT;
        }
    };
    if !reporter.json() {
        errln!("note: {}", lowered.launch);
    }
    // `ALPINE_PRINT_LOWERED=1`: the PVL program the kernels were lowered to, on
    // stderr (for debugging the lowering or a proof; spans still point at FILE).
    if std::env::var_os("ALPINE_PRINT_LOWERED").is_some_and(|v| v != "0") {
        errln!("{}", alpine::printer::print_program(&lowered.program));
    }
    // An integer check that fails is reported in C's words, not as an `assert`.
    let reword = |d: Diagnostic| match lowered.checks.iter().find(|c| c.span == d.span && d.code == codes::ASSERT_FAILED) {
        Some(c) => Diagnostic { message: c.message.clone(), ..d },
        None => d,
    };
    let proof = prove(&file, &lowered.program, &[], &file.text, opts, args, reporter, progress, &|d| (&file, reword(d)));
    [races, proof].into_iter().max_by_key(|o| [VERIFIED, FAILED, BAD_INPUT].iter().position(|x| x == o)).unwrap_or(BAD_INPUT)
}

/// The race and divergence check of a kernel file, with its verdict line.
fn check_races(file: &SourceFile, module: &alpine::cfront::ir::Module, args: &KernelArgs, reporter: &Reporter) -> &'static str {
    let failures = kernel::check_races(module, args);
    reporter.report(file, &failures);
    let failed = failures.iter().any(|d| d.is_error());
    if !reporter.json() {
        let errors = failures.iter().filter(|d| d.is_error()).count();
        if failed {
            outln!("✗ {}: not proved ({})", file.name, super::count(errors, "error", "errors"));
        } else {
            // GPUVerify's assumptions, said out loud.
            let pointers = |f: &alpine::cfront::ir::Function| {
                f.params.iter().filter(|p| matches!(p.ty, alpine::cfront::ir::Type::Pointer { .. })).count()
            };
            let aliasing = if module.kernels().any(|k| pointers(k) > 1) { ", distinct pointer arguments do not alias" } else { "" };
            // `--vcgen-opt=/checkArrays:…` narrows what "no data race" covers.
            let only = args.vcgen_check_arrays().map(|l| format!(", races checked on {} only", l.join(", "))).unwrap_or_default();
            // `--warp-sync=N` is a hardware assumption the proof rests on.
            let warps = kernel::race_options(args)
                .warp_size
                .map(|n| format!(", the {n} threads of each warp in lock-step (--warp-sync)"))
                .unwrap_or_default();
            outln!(
                "✓ {}: no data race, no barrier divergence, annotations hold (assuming no signed overflow{aliasing}{warps}{only})",
                file.name
            );
        }
    }
    if failed {
        FAILED
    } else {
        VERIFIED
    }
}

/// `--races` on a PVL file: each par unit checked as a kernel of one group
/// (`alpine::races::pvl`), with one verdict line for the file.
fn check_pvl_races(path: &str, args: &VerifyArgs, reporter: &Reporter) -> &'static str {
    let Some((file, program)) = super::read_program(path, reporter) else {
        return BAD_INPUT;
    };
    let check = alpine::races::program::check_program(&program, &kernel::race_options(&args.kernel));
    let (failures, units, arrays) = (check.failures, check.units, check.assumes_no_aliasing);
    reporter.report(&file, &failures);
    let errors = failures.iter().filter(|d| d.is_error()).count();
    if !reporter.json() {
        let blocks = super::count(units, "par block", "par blocks");
        if errors > 0 {
            outln!("✗ {}: not proved ({})", file.name, super::count(errors, "error", "errors"));
        } else {
            let aliasing = if arrays { ", distinct array variables do not alias" } else { "" };
            outln!(
                "✓ {}: {blocks}, no data race, no barrier divergence (assuming no signed overflow of 64-bit integers{aliasing})",
                file.name
            );
        }
    }
    if errors > 0 {
        FAILED
    } else {
        VERIFIED
    }
}

/// Verifies one file and reports on it; returns its outcome for the summary.
fn verify_file(path: &str, opts: &Options, args: &VerifyArgs, reporter: &Reporter, progress: &Progress) -> &'static str {
    let Some(file) = super::read_reported(path, reporter) else {
        return BAD_INPUT;
    };
    let program = match alpine::frontend(&file) {
        Ok((p, warnings)) => {
            reporter.report(&file, &warnings);
            p
        }
        Err(diags) => {
            reporter.report(&file, &diags);
            return BAD_INPUT;
        }
    };
    // A program of several files: the classes of the file's companions are
    // known through their declarations (see `alpine::workspace`).
    let ws = alpine::workspace::Workspace::load(std::path::Path::new(&file.name), &file.text, &program);
    for (companion, d) in &ws.broken {
        let note = Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(
                d.code,
                format!("this companion of `{}` does not check; the verifier leaves its classes out: {}", file.name, d.message),
                d.span,
            )
        };
        reporter.report(companion, &[note]);
    }
    prove(&file, &program, &ws.programs(), &ws.text, opts, args, reporter, progress, &|d| ws.place(&file, d))
}

/// Proves a checked program and reports on it; `place` puts a verifier
/// diagnostic in the file it is about.
#[allow(clippy::too_many_arguments)]
fn prove<'f>(
    file: &'f SourceFile,
    program: &alpine::ast::Program,
    companions: &[&alpine::ast::Program],
    text: &str,
    opts: &Options,
    args: &VerifyArgs,
    reporter: &Reporter,
    progress: &Progress,
    place: &dyn Fn(Diagnostic) -> (&'f SourceFile, Diagnostic),
) -> &'static str {
    // Progress as the units go; in JSON, a record for the plan and for each unit as
    // it ends (in the order they end: units run in parallel), so that a client can
    // show progress before the file is done.
    let observe = |event: UnitEvent| match event {
        UnitEvent::Planned(n) => {
            progress.units(n);
            if reporter.json() {
                outln!("{}", serde_json::json!({ "type": "plan", "file": file.name, "units": n }));
            }
        }
        UnitEvent::Started(unit) => progress.unit_started(unit),
        UnitEvent::Finished(r) => {
            progress.unit_finished();
            if reporter.json() {
                let verdict = if r.proved() { VERIFIED } else { FAILED };
                let record = serde_json::json!({
                    "type": "unit", "file": file.name, "unit": r.name, "verdict": verdict,
                    "failures": r.failures.len(), "seconds": r.time.as_secs_f64(),
                });
                outln!("{record}");
            }
        }
    };
    let reports = verify::verify_program_observed(program, companions, text, opts, &observe);
    if reports.is_empty() && !opts.only.is_empty() {
        reporter.command_error(codes::USAGE, &format!("{}: no method or function named {}", file.name, opts.only.join(", ")));
        return BAD_INPUT;
    }
    for r in &reports {
        if !reporter.json() {
            let mark = if r.proved() { "✓" } else { "✗" };
            outln!("{mark} {} ({:.2} s)", r.name, r.time.as_secs_f64());
        }
        for d in r.diagnostics() {
            let (f, d) = place(d);
            reporter.report(f, &[d]);
        }
        if let (Some(dir), Some(smt)) = (&args.dump_smt, &r.smt) {
            let _ = std::fs::create_dir_all(dir);
            let _ = std::fs::write(dir.join(format!("{}.smt2", r.name)), smt);
        }
    }
    let failed = reports.iter().filter(|r| !r.proved()).count();
    if !reporter.json() {
        outln!("{}: {} of {} verified", file.name, reports.len() - failed, super::count(reports.len(), "unit", "units"));
    }
    if failed == 0 {
        VERIFIED
    } else {
        FAILED
    }
}
