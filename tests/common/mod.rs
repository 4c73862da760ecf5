//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The file of the corpus that is genuinely malformed: a stray backtick follows the
/// final `}`. Every other corpus file must parse and type-check.
pub const MALFORMED: &str = "matrix_linearization/parallel/ZeroMany/opt_zero-many.pvl";

/// The Alpinist corpus: `$ALPINE_CORPUS`, else `../shared/corpus/alpinist` beside the
/// project. `None` (after printing a notice) when it is absent, so tests can skip.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ALPINE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/alpinist"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("NOTICE: corpus not found at {} (set ALPINE_CORPUS); skipping corpus checks", dir.display());
        None
    }
}

/// Every `.pvl` file of the corpus, as (path relative to the corpus, text), sorted.
pub fn corpus_files() -> Option<Vec<(String, String)>> {
    let dir = corpus_dir()?;
    let mut out = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("corpus directory is readable") {
            let p = entry.expect("corpus entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "pvl") {
                let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&p).expect("corpus file is UTF-8");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    Some(out)
}

/// Renders diagnostics as plain text for assertion messages.
pub fn show(name: &str, text: &str, diags: &[alpine::diagnostics::Diagnostic]) -> String {
    let file = alpine::diagnostics::SourceFile::new(name, text);
    diags.iter().map(|d| alpine::diagnostics::render(d, &file, false)).collect()
}
