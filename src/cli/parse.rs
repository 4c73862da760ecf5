//! `alpine parse FILE...` — parse, resolve and type-check (files in parallel).

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_OK};
use alpine::ast::Member;

#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// PVL files to check (`-` reads standard input).
    #[arg(required = true)]
    files: Vec<String>,
}

pub fn run(args: ParseArgs, reporter: &Reporter) -> i32 {
    let mut status = EXIT_OK;
    let mut files = Vec::new();
    for path in &args.files {
        match io::read_source(path) {
            Ok(f) => files.push(f),
            Err(failure) => {
                let (f, d) = *failure;
                reporter.report(&f, &[d]);
                status = EXIT_BAD_INPUT;
            }
        }
    }
    // The files are independent: check them in parallel, report in order.
    for (file, result) in files.iter().zip(alpine::frontend_all(&files)) {
        match result {
            Ok((program, warnings)) => {
                reporter.report(file, &warnings);
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
                status = EXIT_BAD_INPUT;
            }
        }
    }
    status
}
