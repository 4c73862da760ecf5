//! `alpine verify FILE...` — prove every method and pure function.

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::diagnostics::{Diagnostic, Severity};
use alpine::verify::{self, Options};

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// PVL files to verify (`-` reads standard input).
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
    let mut status = EXIT_OK;
    for path in &args.files {
        let file = match io::read_source(path) {
            Ok(f) => f,
            Err(failure) => {
                let (f, d) = *failure;
                reporter.report(&f, &[d]);
                status = EXIT_BAD_INPUT;
                continue;
            }
        };
        let program = match alpine::frontend(&file) {
            Ok((p, warnings)) => {
                reporter.report(&file, &warnings);
                p
            }
            Err(diags) => {
                reporter.report(&file, &diags);
                status = EXIT_BAD_INPUT;
                continue;
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
        let reports = verify::verify_program_with(&program, &ws.programs(), &ws.text, &opts);
        if reports.is_empty() && !opts.only.is_empty() {
            errln!("error: {}: no method or function named {}", file.name, opts.only.join(", "));
            status = EXIT_BAD_INPUT;
            continue;
        }
        for r in &reports {
            if !reporter.json() {
                let mark = if r.proved() { "✓" } else { "✗" };
                outln!("{mark} {} ({:.2} s)", r.name, r.time.as_secs_f64());
            }
            for d in r.diagnostics() {
                let (f, d) = ws.place(&file, d);
                reporter.report(f, &[d]);
            }
            if !r.proved() && status == EXIT_OK {
                status = EXIT_CHECK_FAILED;
            }
            if let (Some(dir), Some(smt)) = (&args.dump_smt, &r.smt) {
                let _ = std::fs::create_dir_all(dir);
                let _ = std::fs::write(dir.join(format!("{}.smt2", r.name)), smt);
            }
        }
        if !reporter.json() {
            let failed = reports.iter().filter(|r| !r.proved()).count();
            outln!("{}: {} of {} verified", file.name, reports.len() - failed, super::count(reports.len(), "unit", "units"));
        }
    }
    status
}
