//! The whole Alpinist corpus through the front end: every well-formed file parses
//! and type-checks; the malformed one gets a diagnostic at the right place; printing
//! round-trips (same tree, ignoring spans) and is idempotent; comments survive.

mod common;

use alpine::ast::visit::strip_spans;
use alpine::diagnostics::SourceFile;
use alpine::{printer, syntax};

#[test]
fn corpus_parses_and_type_checks() {
    let Some(files) = common::corpus_files() else { return };
    assert_eq!(files.len(), 144, "the corpus should hold 144 programs");
    let mut failures = Vec::new();
    for (rel, text) in &files {
        if rel == common::MALFORMED {
            continue;
        }
        // The real path, so that companion files (`//:: cases`) are found.
        let path = common::corpus_dir().unwrap().join(rel);
        if let Err(diags) = alpine::frontend(&SourceFile::new(path.to_string_lossy(), text.clone())) {
            failures.push(common::show(rel, text, &diags));
        }
    }
    assert!(failures.is_empty(), "{} corpus files rejected:\n{}", failures.len(), failures.join("\n"));
    println!("{} of {} corpus files parse and type-check", files.len() - 1, files.len());
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

#[test]
fn corpus_round_trips_through_the_printer() {
    let Some(files) = common::corpus_files() else { return };
    let mut checked = 0;
    for (rel, text) in &files {
        let Ok(mut tree) = syntax::parse(text) else { continue };
        let printed = printer::print_program(&tree);
        let mut reparsed = match syntax::parse(&printed) {
            Ok(t) => t,
            Err(d) => panic!("printed {rel} does not parse:\n{}\n--- printed ---\n{printed}", common::show(rel, &printed, &d)),
        };
        assert_eq!(tree.comments.len(), reparsed.comments.len(), "{rel}: comments lost by the printer");
        let again = printer::print_program(&reparsed);
        assert!(again == printed, "{rel}: printing is not idempotent");
        strip_spans(&mut tree);
        strip_spans(&mut reparsed);
        assert!(tree == reparsed, "{rel}: print(parse(f)) parses to a different tree");
        checked += 1;
    }
    assert_eq!(checked, files.len() - 1);
    println!("{checked} corpus files round-trip");
}
