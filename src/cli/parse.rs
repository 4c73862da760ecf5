//! `alpine parse FILE|DIR...` — parse, resolve and type-check (files in parallel).

use super::progress::Summary;
use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_OK};
use alpine::ast::Member;

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// PVL files to check (`-` reads standard input); a directory stands for the
    /// PVL files below it (files ignored by `.gitignore` and hidden ones skipped).
    #[arg(required = true)]
    files: Vec<String>,
}

const OK: &str = "ok";
const BAD_INPUT: &str = "bad input";

pub fn run(args: ParseArgs, reporter: &Reporter) -> i32 {
    let (inputs, expanded) = reporter.inputs(&args.files);
    let mut status = if expanded { EXIT_OK } else { EXIT_BAD_INPUT };
    let mut summary = Summary::new("parse", &[OK, BAD_INPUT]);
    let mut files = Vec::new();
    for path in &inputs.files {
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
