//! One run of libclang over one file: preprocess, parse and type-check it, turn
//! clang's errors into alpine diagnostics located in the user's text, and lower
//! the translation unit while it is alive.
//!
//! libclang allows one `Clang` instance per process at a time (the `clang`
//! crate enforces it), so runs are serialised by a process-wide lock; the lock
//! is held only while the translation unit is alive, which is while the caller
//! lowers it.

use super::ir::{Language, Launch, Module};
use super::{expand, headers, lower};
use crate::ast::Span;
use crate::diagnostics::{codes, Diagnostic, SourceFile};
use clang::source::{File, SourceLocation};
use clang::{Clang, Entity, Index, TranslationUnit, Unsaved};
use std::sync::Mutex;

static LIBCLANG: Mutex<()> = Mutex::new(());

/// Where the translation unit's locations are in the user's text.
pub struct SourceMap<'tu> {
    main: File<'tu>,
    /// The main file's path: libclang's `File`s compare by inode, and every file
    /// that exists only as unsaved text (ours, standard input) has the same.
    main_path: std::path::PathBuf,
    text: String,
    len: usize,
    /// The spans of the macro uses in the main file.
    macro_uses: Vec<Span>,
}

impl<'tu> SourceMap<'tu> {
    /// The byte offset in the main file of a location: its own if it is there,
    /// the place its macro was expanded if that is there; `None` for a location
    /// in a header.
    pub fn offset(&self, loc: SourceLocation<'tu>) -> Option<usize> {
        let l = loc.get_expansion_location();
        let file = l.file?;
        (file == self.main && file.get_path() == self.main_path).then(|| (l.offset as usize).min(self.len))
    }

    /// The span of an entity in the main file (`None` if it lies in a header).
    /// Whether `span` lies within one use of a macro (the text there is the
    /// macro's name and arguments, not the node's own tokens).
    pub fn in_macro(&self, span: Span) -> bool {
        self.macro_uses.iter().any(|m| m.start <= span.start && span.end <= m.end)
    }

    pub fn span(&self, e: &Entity<'tu>) -> Option<Span> {
        let r = e.get_range()?;
        let start = self.offset(r.get_start())?;
        let end = self.offset(r.get_end()).unwrap_or(start).max(start);
        Some(Span::new(start, end))
    }

    /// The user's text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The user's choices that reach clang: `-D` and `-I` (as written, without the
/// dash-letter), and extra arguments (GPUVerify's `--clang-opt=`).
#[derive(Clone, Debug, Default)]
pub struct ClangArgs {
    pub defines: Vec<String>,
    pub include_dirs: Vec<String>,
    pub extra: Vec<String>,
}

/// Parses `file` as `lang` and lowers it; clang's errors are returned instead
/// when there are any. Functions refused for an operator inside a macro are
/// lowered again from clang's printing of the file (`expand.rs`).
pub fn read_unit(file: &SourceFile, lang: Language, args: &ClangArgs, launch: Launch) -> Result<Module, Vec<Diagnostic>> {
    let _guard = LIBCLANG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let clang =
        Clang::new().map_err(|e| vec![Diagnostic::error(codes::CFRONT_LIBCLANG, format!("cannot start libclang: {e}"), Span::DUMMY)])?;
    let index = Index::new(&clang, false, false);
    let mut clang_args = headers::arguments(lang);
    clang_args.extend(args.include_dirs.iter().map(|d| format!("-I{d}")));
    clang_args.extend(args.defines.iter().map(|d| format!("-D{d}")));
    clang_args.extend(args.extra.iter().cloned());
    // The main file's text is what the user gave us (maybe standard input): hand
    // it to clang as unsaved, under a path in the file's own directory so that
    // `#include "x.h"` finds its neighbours.
    let path = main_path(&file.name, lang);
    let tu = parse(&index, &path, &file.text, lang, &clang_args)?;
    let map = source_map(&tu, &path, &file.text)?;
    let errors = clang_errors(&tu, &map);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut lowering = lower::lower_unit(&tu, &map, lang, launch);
    if expand::wanted(&lowering) {
        let printed = expand::printed_text(&tu, &map);
        let printed_path = path.with_extension(format!("alpine-printed.{}", if lang == Language::Cuda { "cu" } else { "cl" }));
        if let Ok(tu2) = parse(&index, &printed_path, &printed, lang, &clang_args) {
            if let Ok(map2) = source_map(&tu2, &printed_path, &printed) {
                if clang_errors(&tu2, &map2).is_empty() {
                    expand::relower(&tu2, &map2, lang, &mut lowering);
                }
            }
        }
    }
    lowering.finish()
}

/// One translation unit of `text` at `path` (with alpine's headers).
fn parse<'c>(
    index: &'c Index<'c>,
    path: &std::path::Path,
    text: &str,
    lang: Language,
    args: &[String],
) -> Result<TranslationUnit<'c>, Vec<Diagnostic>> {
    let mut unsaved = vec![Unsaved::new(path, text)];
    for (p, header) in headers::headers(lang) {
        unsaved.push(Unsaved::new(p, header));
    }
    index
        .parser(path)
        .arguments(args)
        .unsaved(&unsaved)
        .keep_going(true)
        // Macro uses are listed (`SourceMap::in_macro`).
        .detailed_preprocessing_record(true)
        .parse()
        .map_err(|e| vec![Diagnostic::error(codes::CFRONT_LIBCLANG, format!("libclang could not parse the file: {e}"), Span::DUMMY)])
}

fn source_map<'tu>(tu: &'tu TranslationUnit<'tu>, path: &std::path::Path, text: &str) -> Result<SourceMap<'tu>, Vec<Diagnostic>> {
    let main =
        tu.get_file(path).ok_or_else(|| vec![Diagnostic::error(codes::CFRONT_LIBCLANG, "libclang lost the main file", Span::DUMMY)])?;
    let mut map = SourceMap { main, main_path: path.to_path_buf(), text: text.to_string(), len: text.len(), macro_uses: Vec::new() };
    let uses: Vec<Span> = tu
        .get_entity()
        .get_children()
        .iter()
        .filter(|e| e.get_kind() == clang::EntityKind::MacroExpansion)
        .filter_map(|e| map.span(e))
        .collect();
    map.macro_uses = uses;
    Ok(map)
}

/// The path clang is told the main file has.
fn main_path(name: &str, lang: Language) -> std::path::PathBuf {
    if name.is_empty() || name == "-" || name.starts_with('<') {
        let ext = if lang == Language::Cuda { "cu" } else { "cl" };
        return std::env::current_dir().unwrap_or_default().join(format!("stdin.{ext}"));
    }
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// clang's errors (warnings are off), each at its place in the main file, or at
/// the `#include` that led to a header with the error.
fn clang_errors<'tu>(tu: &'tu TranslationUnit<'tu>, map: &SourceMap<'tu>) -> Vec<Diagnostic> {
    use clang::diagnostic::Severity;
    let mut out = Vec::new();
    for d in tu.get_diagnostics() {
        if !matches!(d.get_severity(), Severity::Error | Severity::Fatal) {
            continue;
        }
        let loc = d.get_location();
        let text = d.get_text();
        let (span, where_) = match map.offset(loc) {
            Some(o) => (token_span(map, loc, o), None),
            None => {
                let f = loc.get_file_location();
                let place = f.file.map(|file| format!("{}:{}:{}", file.get_path().display(), f.line, f.column));
                (Span::DUMMY, place)
            }
        };
        let message = match where_ {
            Some(place) => format!("{text} (in {place})"),
            None => text,
        };
        out.push(Diagnostic::error(codes::CFRONT_CLANG, message, span).with_label("clang reports this"));
    }
    out
}

/// A one-token span at `offset` (clang reports points, miette wants ranges).
fn token_span<'tu>(map: &SourceMap<'tu>, loc: SourceLocation<'tu>, offset: usize) -> Span {
    let l = loc.get_expansion_location();
    let len = l
        .file
        .and_then(|f| f.get_contents())
        .map(|text| text.as_bytes()[offset.min(text.len())..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count())
        .unwrap_or(0)
        .max(1);
    Span::new(offset, (offset + len).min(map.len.max(offset)))
}
