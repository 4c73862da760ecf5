//! The optimisation steps do not parse their output (`transforms::Rewriter::rewrite`):
//! they give the rewritten tree the spans of its printed text
//! (`printer::print_respanned`) and type-check it in place. This is sound only if
//! that tree is exactly the one the front end makes of the printed text, which
//! this test checks, spans, comments, blank lines and types included, for every
//! step of every corpus file with `gpuopt` directives (all six passes, applied
//! one by one as `alpine optimise` applies them; a directive whose applicability
//! check fails ends that file's steps, as it ends `alpine optimise`).
//!
//! The directives of the files `alpine optimise` is tested on
//! (`common::OPTIMISE_CORPUS_DIRS`) must all be applied, so that the test cannot
//! pass by checking nothing.

mod common;

use alpine::ast::Program;
use alpine::diagnostics::SourceFile;
use alpine::transforms::{step, Context, PipelineError, Rewriter};

/// Where the debug dumps of two trees first differ.
fn tree_diff(parsed: &Program, respanned: &Program) -> String {
    let (a, b) = (format!("{parsed:#?}"), format!("{respanned:#?}"));
    let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
    let ctx = |s: &str| s.lines().skip(line.saturating_sub(15)).take(25).collect::<Vec<_>>().join("\n");
    format!("trees differ (debug line {line}):\n--- parsed ---\n{}\n--- respanned ---\n{}", ctx(&a), ctx(&b))
}

/// Applies the directives of one file step by step; returns the number of steps
/// and whether directives were left (a check refused one). Failures are pushed.
fn steps_of(path: &std::path::Path, text: &str, failures: &mut Vec<String>) -> (usize, bool) {
    let file = SourceFile::new(path.to_string_lossy(), text.to_string());
    let Ok((mut program, _)) = alpine::frontend(&file) else { return (0, true) };
    let rw = Rewriter::new(&file.name, path, &file.text);
    let mut steps = 0;
    let mut last: Option<SourceFile> = None;
    let mut text = file.text.clone();
    while let Some(step) = step::next_directive(&program, None) {
        let Ok(plan) = step.check(&program, &Context::z3_only(&text)) else { return (steps, true) };
        // The step must not fall back to parsing its text.
        let mut probe = program.clone();
        plan.clone().apply(&mut probe);
        if alpine::printer::print_respanned(&mut probe).is_err() {
            failures.push(format!("{} step {steps} ({}): the printer refused to respan the tree", file.name, step.name()));
        }
        let (src, next) = match rw.rewrite(program, plan) {
            Ok(stage) => (stage.source, stage.program),
            Err(e) => {
                let l = e.located().expect("a rewrite's error has diagnostics");
                failures.push(format!("{}: {}", l.source.name, common::show(&l.source.name, &l.source.text, &l.diagnostics)));
                return (steps, true);
            }
        };
        match alpine::frontend_in(&src, path) {
            Ok((parsed, _)) if parsed == next => {}
            Ok((parsed, _)) => failures.push(format!("{}: {}", src.name, tree_diff(&parsed, &next))),
            Err(d) => failures.push(format!("{}: {}", src.name, common::show(&src.name, &src.text, &d))),
        }
        steps += 1;
        program = next;
        text = src.text.clone();
        last = Some(src);
    }
    if let Some(src) = last {
        if let Err(PipelineError::OutputDoesNotCheck(l)) = rw.check_output(&src, &program) {
            failures.push(format!("{}: output check: {}", l.source.name, common::show(&l.source.name, &l.source.text, &l.diagnostics)));
        }
    }
    (steps, false)
}

#[test]
fn every_corpus_step_is_respanned_as_parsed() {
    let Some(dir) = common::corpus_dir() else { return };
    let Some(files) = common::corpus_files() else { return };
    let mut failures = Vec::new();
    let (mut steps, mut files_done) = (0, 0);
    let mut incomplete = Vec::new();
    for (rel, text) in &files {
        if rel == common::MALFORMED || !text.contains("gpuopt") {
            continue;
        }
        let (n, left) = steps_of(&dir.join(rel), text, &mut failures);
        steps += n;
        files_done += 1;
        let name = std::path::Path::new(rel).file_name().unwrap().to_string_lossy();
        let tested = common::OPTIMISE_CORPUS_DIRS.iter().any(|d| rel.starts_with(&format!("{d}/")) && name.starts_with("orig_"));
        if left && tested {
            incomplete.push(rel.clone());
        }
    }
    println!("optimise_respan: {steps} steps of {files_done} corpus files compared with the parse of their text");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    assert!(incomplete.is_empty(), "directives left in files `alpine optimise` is tested on: {incomplete:?}");
    assert!(steps >= common::OPTIMISE_CORPUS_DIRS.len(), "only {steps} steps");
}
