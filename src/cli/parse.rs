//! `alpine parse FILE|DIR...` — parse, resolve and type-check (files in parallel);
//! CUDA and OpenCL files are read through clang (`super::kernel`).

use super::kernel::{self, KernelArgs};
use super::progress::Summary;
use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_OK};
use alpine::ast::Member;

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// PVL files to check (`-` reads standard input); a directory stands for the
    /// PVL files below it (files ignored by `.gitignore` and hidden ones skipped).
    /// `.cu` (CUDA) and `.cl` (OpenCL) files are read through clang.
    #[arg(required = true)]
    files: Vec<String>,
    #[command(flatten)]
    kernel: KernelArgs,
}

const OK: &str = "ok";
const BAD_INPUT: &str = "bad input";

pub fn run(args: ParseArgs, reporter: &Reporter) -> i32 {
    let (inputs, expanded) = reporter.inputs(&args.files);
    let mut status = if expanded { EXIT_OK } else { EXIT_BAD_INPUT };
    let mut summary = Summary::new("parse", &[OK, BAD_INPUT]);
    let (kernel_files, pvl_files): (Vec<&String>, Vec<&String>) = inputs.files.iter().partition(|p| kernel::language(p).is_some());
    if !kernel_files.is_empty() {
        status = status.max(parse_kernels(&kernel_files, &args.kernel, reporter, &mut summary));
    }
    let mut files = Vec::new();
    for path in pvl_files {
        match io::read_source(path) {
            Ok(f) => files.push(f),
            Err(failure) => {
                let (f, d) = *failure;
                reporter.report(&f, &[d]);
                summary.add(BAD_INPUT);
                status = EXIT_BAD_INPUT;
            }
        }
    }
    // The files are independent: check them in parallel, report in order.
    for (file, result) in files.iter().zip(alpine::frontend_all(&files)) {
        match result {
            Ok((program, warnings)) => {
                reporter.report(file, &warnings);
                summary.add(OK);
                if !reporter.json() {
                    let methods = program.classes.iter().flat_map(|c| &c.members).filter(|m| matches!(m, Member::Method(_))).count();
                    outln!(
                        "{}: ok ({}, {})",
                        file.name,
                        super::count(program.classes.len(), "class", "classes"),
                        super::count(methods, "method", "methods")
                    );
                }
            }
            Err(diags) => {
                reporter.report(file, &diags);
                summary.add(BAD_INPUT);
                status = EXIT_BAD_INPUT;
            }
        }
    }
    reporter.summary(&summary, false);
    status
}

/// Reads the CUDA/OpenCL files; returns the exit status they call for.
fn parse_kernels(paths: &[&String], args: &KernelArgs, reporter: &Reporter, summary: &mut Summary) -> i32 {
    args.notices();
    let options = match args.options() {
        Ok(o) => o,
        Err(e) => {
            kernel::usage_error(reporter, &e);
            return EXIT_BAD_INPUT;
        }
    };
    let mut status = EXIT_OK;
    for path in paths {
        let lang = kernel::language(path).expect("only kernel files are passed here");
        match kernel::read(path, lang, &options, reporter) {
            Some((file, module)) => {
                summary.add(OK);
                if !reporter.json() {
                    outln!("{}: ok ({})", file.name, kernel::describe(&module));
                }
            }
            None => {
                summary.add(BAD_INPUT);
                status = EXIT_BAD_INPUT;
            }
        }
    }
    status
}
