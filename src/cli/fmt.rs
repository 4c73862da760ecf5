//! `alpine fmt [--check | --in-place] FILE...|-` — canonical layout.
//!
//! Formatting only needs a syntactically valid file (like rustfmt, it does not
//! type-check). The printed program always re-parses to the same tree, and
//! formatting is idempotent; comments are kept.

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct FmtArgs {
    /// Do not print: exit 1 if any file is not in canonical layout (for CI and pre-commit).
    #[arg(long, conflicts_with = "in_place")]
    check: bool,
    /// Rewrite the files in place (atomically; a file that does not parse is left untouched).
    #[arg(long)]
    in_place: bool,
    /// PVL files (`-` reads standard input and cannot be combined with --in-place).
    #[arg(required = true)]
    files: Vec<String>,
}

pub fn run(args: FmtArgs, reporter: &Reporter) -> i32 {
    if args.in_place && args.files.iter().any(|f| f == io::STDIN) {
        errln!("error: `--in-place` cannot rewrite standard input");
        return EXIT_BAD_INPUT;
    }
    let mut status = EXIT_OK;
    for path in &args.files {
        let file = match io::read_source(path) {
            Ok(f) => f,
            Err(failure) => {
                let (f, d) = *failure;
                reporter.report(&f, &[d]);
                status = status.max(EXIT_BAD_INPUT);
                continue;
            }
        };
        let program = match alpine::syntax::parse(&file.text) {
            Ok(p) => p,
            Err(diags) => {
                reporter.report(&file, &diags);
                status = status.max(EXIT_BAD_INPUT);
                continue;
            }
        };
        let formatted = alpine::printer::print_program(&program);
        if args.check {
            if formatted != file.text {
                let line = first_difference(&file.text, &formatted);
                errln!("{}: not in canonical layout (first difference at line {line})", file.name);
                status = status.max(EXIT_CHECK_FAILED);
            }
        } else if args.in_place {
            if formatted != file.text {
                if let Err(e) = io::write_atomically(Path::new(path), &formatted) {
                    errln!("error: cannot write `{path}`: {e}");
                    status = status.max(EXIT_BAD_INPUT);
                }
            }
        } else {
            out!("{formatted}");
        }
    }
    status
}

/// 1-based number of the first line that differs.
fn first_difference(a: &str, b: &str) -> usize {
    let mut la = a.lines();
    let mut lb = b.lines();
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            (None, None) => return n,
            _ => return n,
        }
    }
}
