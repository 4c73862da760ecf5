//! `alpine fmt [--check | --in-place] [FILE|DIR...]` — canonical layout.
//!
//! Formatting only needs a syntactically valid file (like rustfmt, it does not
//! type-check). The printed program always re-parses to the same tree, and
//! formatting is idempotent; comments are kept. A file is written back the way it
//! was stored (byte-order mark, CRLF line ends: `io::Encoding`).
//!
//! Named files are printed to standard output; a directory, or no argument at all
//! (the current directory, like `cargo fmt`), is formatted in place.

use super::io::{self, Encoding};
use super::progress::Summary;
use super::{Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::ast::Span;
use alpine::diagnostics::{codes, Diagnostic, SourceFile};
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct FmtArgs {
    /// Do not print: exit 1 if any file is not in canonical layout (for CI and pre-commit).
    #[arg(long, conflicts_with = "in_place")]
    check: bool,
    /// Rewrite the files in place (atomically; a file that does not parse is left
    /// untouched). Implied for directories and when no file is named.
    #[arg(long)]
    in_place: bool,
    /// PVL files (`-` reads standard input and cannot be combined with --in-place),
    /// or directories, whose PVL files are formatted in place (files ignored by
    /// `.gitignore` and hidden ones skipped). None: the current directory.
    files: Vec<String>,
}

/// The outcomes counted in the summary.
const REFORMATTED: &str = "reformatted";
const UNCHANGED: &str = "unchanged";
const NOT_CANONICAL: &str = "not in canonical layout";
const BAD_INPUT: &str = "bad input";

pub fn run(args: FmtArgs, reporter: &Reporter) -> i32 {
    let named = if args.files.is_empty() { vec![".".to_string()] } else { args.files.clone() };
    let (inputs, expanded) = reporter.inputs(&named);
    let in_place = !args.check && (args.in_place || inputs.walked_directory);
    if in_place && inputs.files.iter().any(|f| f == io::STDIN) {
        reporter.command_error(codes::USAGE, "`--in-place` cannot rewrite standard input");
        return EXIT_BAD_INPUT;
    }
    let mut status = if expanded { EXIT_OK } else { EXIT_BAD_INPUT };
    let outcomes: &[&str] = if args.check { &[UNCHANGED, NOT_CANONICAL, BAD_INPUT] } else { &[REFORMATTED, UNCHANGED, BAD_INPUT] };
    let mut summary = Summary::new("fmt", outcomes);
    for path in &inputs.files {
        let outcome = format_file(path, &args, in_place, reporter);
        summary.add(outcome);
        status = status.max(match outcome {
            NOT_CANONICAL => EXIT_CHECK_FAILED,
            BAD_INPUT => EXIT_BAD_INPUT,
            _ => EXIT_OK,
        });
    }
    // Standard output may carry the formatted text: the totals go to standard error.
    reporter.summary(&summary, true);
    status
}

/// Formats one file as asked; returns its outcome for the summary.
fn format_file(path: &str, args: &FmtArgs, in_place: bool, reporter: &Reporter) -> &'static str {
    let (file, encoding) = match io::read_source_encoded(path) {
        Ok(f) => f,
        Err(failure) => {
            let (f, d) = *failure;
            reporter.report(&f, &[d]);
            return BAD_INPUT;
        }
    };
    let program = match alpine::syntax::parse(&file.text) {
        Ok(p) => p,
        Err(diags) => {
            reporter.report(&file, &diags);
            return BAD_INPUT;
        }
    };
    let formatted = encoding.apply(&alpine::printer::print_program(&program));
    let original = Encoding { crlf: false, ..encoding }.apply(&file.text);
    let changed = formatted != original;
    if args.check {
        if !changed {
            return UNCHANGED;
        }
        reporter.report(&file, &[layout_difference(&file, &formatted)]);
        NOT_CANONICAL
    } else if in_place {
        if !changed {
            return UNCHANGED;
        }
        match io::write_atomically(Path::new(path), &formatted) {
            Ok(()) => REFORMATTED,
            Err(e) => {
                reporter.command_error(codes::IO, &format!("cannot write `{path}`: {e}"));
                BAD_INPUT
            }
        }
    } else {
        out!("{formatted}");
        if changed {
            REFORMATTED
        } else {
            UNCHANGED
        }
    }
}

/// `--check`'s finding: the first line of `file` that the canonical layout
/// (`formatted`, as it would be stored) writes differently.
fn layout_difference(file: &SourceFile, formatted: &str) -> Diagnostic {
    let formatted = formatted.trim_start_matches('\u{feff}');
    let mut start = 0;
    let mut expected = formatted.lines();
    for line in file.text.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        match expected.next() {
            Some(e) if e == text && (line.ends_with('\n') || !formatted.ends_with('\n')) => start += line.len(),
            other => {
                let label = match other {
                    Some(e) if e.trim().is_empty() => "the canonical layout has an empty line here".to_string(),
                    Some(e) if e.trim_end() == text.trim_end() => "the canonical layout has no spaces at the end of a line".to_string(),
                    Some(e) if e.trim() == text.trim() => {
                        format!("the canonical layout indents this line by {} spaces", e.len() - e.trim_start().len())
                    }
                    Some(e) => format!("the canonical layout has `{}` here", e.trim()),
                    None => "the canonical layout ends before this line".to_string(),
                };
                return not_canonical(file, Span::new(start, start + text.len()), label);
            }
        }
    }
    let label =
        if file.text.ends_with('\n') { "the canonical layout goes on after this" } else { "the canonical layout ends with a line end" };
    not_canonical(file, Span::new(file.text.len(), file.text.len()), label.to_string())
}

fn not_canonical(file: &SourceFile, span: Span, label: String) -> Diagnostic {
    Diagnostic::error(codes::FMT_LAYOUT, format!("`{}` is not in canonical layout", file.name), span)
        .with_label(label)
        .with_help(format!("`alpine fmt --in-place {}` rewrites it", file.name))
}
