//! The whole Alpinist corpus through the front end: every well-formed file parses
//! and type-checks, and every expression gets a type; the malformed one gets a
//! diagnostic at the right place. (Printing round-trips: tests/printer_roundtrip.rs.)

mod common;

use alpine::ast::visit::{walk_directive, walk_expr, Visitor};
use alpine::ast::{Directive, Expr, Ty};
use alpine::diagnostics::SourceFile;
use alpine::syntax;

/// Counts expressions whose type is still `Ty::Unknown` after checking.
#[derive(Default)]
struct UnknownCounter {
    count: usize,
    /// Directive arguments are checked for types only (they may mention par
    /// iterators declared further down, e.g. `gpuopt glob_to_reg a tid;`), so they
    /// may legitimately stay `Unknown`; they are counted separately.
    in_directive: usize,
    directive_count: usize,
}

impl Visitor for UnknownCounter {
    fn visit_directive(&mut self, d: &Directive) {
        self.in_directive += 1;
        walk_directive(self, d);
        self.in_directive -= 1;
    }
    fn visit_expr(&mut self, e: &Expr) {
        if e.ty == Ty::Unknown {
            if self.in_directive > 0 {
                self.directive_count += 1;
            } else {
                self.count += 1;
            }
        }
        walk_expr(self, e);
    }
}

#[test]
fn corpus_parses_and_type_checks() {
    let Some(files) = common::corpus_files() else { return };
    assert_eq!(files.len(), 144, "the corpus should hold 144 programs");
    let mut failures = Vec::new();
    let mut unknown = UnknownCounter::default();
    for (rel, text) in &files {
        if rel == common::MALFORMED {
            continue;
        }
        // The real path, so that companion files (`//:: cases`) are found.
        let path = common::corpus_dir().unwrap().join(rel);
        match alpine::frontend(&SourceFile::new(path.to_string_lossy(), text.clone())) {
            Ok((program, _warnings)) => {
                let before = unknown.count;
                unknown.visit_program(&program);
                if unknown.count > before {
                    failures.push(format!("{rel}: {} expressions of unknown type", unknown.count - before));
                }
            }
            Err(diags) => failures.push(common::show(rel, text, &diags)),
        }
    }
    assert!(failures.is_empty(), "{} corpus files rejected:\n{}", failures.len(), failures.join("\n"));
    println!(
        "{} of {} corpus files parse and type-check; every expression has a type \
         ({} gpuopt directive arguments are checked for types only)",
        files.len() - 1,
        files.len(),
        unknown.directive_count
    );
}

#[test]
fn malformed_corpus_file_is_reported_at_the_stray_backtick() {
    let Some(files) = common::corpus_files() else { return };
    let (rel, text) = files.iter().find(|(r, _)| r == common::MALFORMED).expect("malformed file present");
    let diags = syntax::parse(text).expect_err("the stray backtick must be rejected");
    let file = SourceFile::new(rel.clone(), text.clone());
    let tick = text.rfind('`').unwrap();
    assert_eq!(diags[0].code, alpine::diagnostics::codes::SYNTAX);
    assert_eq!(file.line_col(diags[0].span.start()), file.line_col(tick), "{}", common::show(rel, text, &diags));
}

/// The malformed file is Alpinist's linearised ZeroMany with one stray character;
/// without it, the program (which states `\array(matrix, M * N)`) verifies.
#[test]
fn malformed_corpus_file_verifies_without_its_stray_backtick() {
    let Some(files) = common::corpus_files() else { return };
    let (rel, text) = files.iter().find(|(r, _)| r == common::MALFORMED).expect("malformed file present");
    let mut text = text.clone();
    text.remove(text.rfind('`').expect("the stray backtick"));
    let file = SourceFile::new(rel.clone(), text.clone());
    let (program, _) = alpine::frontend(&file).unwrap_or_else(|d| panic!("{}", common::show(rel, &text, &d)));
    let reports = alpine::verify::verify_program(&program, &text, &alpine::verify::Options::default());
    assert!(!reports.is_empty());
    for r in &reports {
        assert!(r.proved(), "{}: {:?}", r.name, r.failures);
    }
}
