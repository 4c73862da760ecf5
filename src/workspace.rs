//! Programs that span several files.
//!
//! VerCors' test harness verifies together all files that carry the same
//! `//:: cases NAME` header; the corpus relies on it (MainWorkerQueue's `orig_Main.pvl`
//! uses the classes of `orig_Queue.pvl` and `orig_Worker.pvl`). alpine follows the
//! same rule: a file's *companions* are the other `.pvl` files of its directory whose
//! header names the same case. Their classes are visible to the file's resolver; they
//! are not checked, printed or rewritten as part of it.
//!
//! The verifier takes the companions' *declarations* too ([`Workspace`]): the file's
//! classes are verified against the fields, contracts, lock invariants, predicates
//! and pure functions of the companions' classes, whose method bodies are verified
//! when the companion itself is (a program of several files is verified when each of
//! its files is, as with any modular verifier). Spans of the companions are moved
//! past the file's own text, so a span still says which file it is in; [`Workspace::place`]
//! turns a diagnostic back into one about a single file.

use crate::ast::{visit, Program, Span};
use crate::diagnostics::{Diagnostic, SourceFile};
use std::path::Path;

/// The case name of a file's `//:: cases NAME` (or `//:: case NAME`) header line.
pub fn case_name(text: &str) -> Option<&str> {
    text.lines().map(str::trim).take_while(|l| l.is_empty() || l.starts_with("//")).find_map(|l| {
        let rest = l.strip_prefix("//::")?.trim_start();
        let rest = rest.strip_prefix("cases").or_else(|| rest.strip_prefix("case"))?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        rest.split_whitespace().next()
    })
}

/// The companions of the file at `path` with contents `text` (see the module doc),
/// sorted by path. Unreadable files are skipped: they are not part of the program
/// the user asked about.
pub fn companions(path: &Path, text: &str) -> Vec<SourceFile> {
    let Some(case) = case_name(text) else { return Vec::new() };
    let Some(dir) = path.parent() else { return Vec::new() };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let me = path.canonicalize().ok();
    let mut out: Vec<SourceFile> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pvl"))
        .filter(|p| p.canonicalize().ok() != me)
        .filter_map(|p| {
            let t = std::fs::read_to_string(&p).ok()?;
            (case_name(&t) == Some(case)).then(|| SourceFile::new(p.to_string_lossy(), t))
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One companion file, checked, with its spans moved to `base`.
#[derive(Debug)]
pub struct Companion {
    pub file: SourceFile,
    /// Where the companion's text starts in [`Workspace::text`].
    pub base: usize,
    pub program: Program,
}

/// A file together with its companions, as the verifier sees it.
#[derive(Debug)]
pub struct Workspace {
    /// The file's text, then each companion's at its `base` (each followed by a line
    /// break): the text every span of the file and its companions points into.
    pub text: String,
    pub companions: Vec<Companion>,
    /// Companions that do not parse or check, with their first error: their classes
    /// are left out (a call into them is then reported as unsupported).
    pub broken: Vec<(SourceFile, Diagnostic)>,
}

impl Workspace {
    /// The companions of the file at `path` whose text is `text` and whose checked
    /// program is `program` (`path` need not be the file `text` was read from: the
    /// optimiser verifies a rewritten text of it). Each companion is checked with the
    /// file's and the other companions' classes visible, as the resolver does.
    pub fn load(path: &Path, text: &str, program: &Program) -> Workspace {
        let mut ws = Workspace { text: format!("{text}\n"), companions: Vec::new(), broken: Vec::new() };
        if !path.is_file() {
            return ws;
        }
        let files = companions(path, text);
        let parsed: Vec<(SourceFile, Result<Program, Vec<Diagnostic>>)> = files
            .into_iter()
            .map(|f| {
                let p = crate::syntax::parse(&f.text);
                (f, p)
            })
            .collect();
        for (i, (file, parsed_program)) in parsed.iter().enumerate() {
            let mut p = match parsed_program {
                Ok(p) => p.clone(),
                Err(d) => {
                    ws.broken.extend(d.first().map(|d| (file.clone(), d.clone())));
                    continue;
                }
            };
            let mut imports: Vec<&Program> = vec![program];
            imports.extend(parsed.iter().enumerate().filter(|(j, _)| *j != i).filter_map(|(_, (_, p))| p.as_ref().ok()));
            let diags = crate::resolve::check_program_with(&mut p, &imports);
            if let Some(d) = diags.into_iter().find(Diagnostic::is_error) {
                ws.broken.push((file.clone(), d));
                continue;
            }
            let base = ws.text.len();
            visit::shift_spans(&mut p, base as u32);
            ws.text.push_str(&file.text);
            ws.text.push('\n');
            ws.companions.push(Companion { file: file.clone(), base, program: p });
        }
        ws
    }

    /// The companions' programs, in order.
    pub fn programs(&self) -> Vec<&Program> {
        self.companions.iter().map(|c| &c.program).collect()
    }

    /// The companion whose text holds `span`, if any (else it is in the file itself).
    fn companion_of(&self, span: Span) -> Option<&Companion> {
        if span.is_dummy() {
            return None;
        }
        self.companions.iter().rev().find(|c| span.start() >= c.base)
    }

    /// A diagnostic about the workspace as one about a single file: the file its
    /// primary span is in (`main` or a companion), spans made relative to it. A
    /// related location in another file becomes a line of the help text
    /// (`message: FILE:LINE:COL`), since a diagnostic shows one file.
    pub fn place<'a>(&'a self, main: &'a SourceFile, mut d: Diagnostic) -> (&'a SourceFile, Diagnostic) {
        // A file is known by its base: 0 for `main`.
        let file_of = |s: Span| self.companion_of(s).map_or((0, main), |c| (c.base, &c.file));
        let local = |s: Span, base: usize| if s.is_dummy() { s } else { Span::new(s.start() - base, s.end() - base) };
        let (home, file) = file_of(d.span);
        let mut notes = Vec::new();
        for mut r in std::mem::take(&mut d.related) {
            let (base, other) = file_of(r.span);
            if base == home {
                r.span = local(r.span, base);
                d.related.push(r);
            } else {
                let (l, c) = other.line_col(r.span.start() - base);
                notes.push(format!("{}: {}:{l}:{c}", r.message, other.name));
            }
        }
        d.span = local(d.span, home);
        if !notes.is_empty() {
            let mut help: Vec<String> = d.help.take().into_iter().collect();
            help.extend(notes);
            d.help = Some(help.join("\n"));
        }
        (file, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_case_headers() {
        assert_eq!(case_name("//:: cases WaitNotify\n//:: tools silicon\nclass A {}"), Some("WaitNotify"));
        assert_eq!(case_name("// -*- mode -*-\n//:: case Foo\n"), Some("Foo"));
        assert_eq!(case_name("//:: casesX Foo\n"), None);
        assert_eq!(case_name("class A {}\n//:: cases Late\n"), None);
        assert_eq!(case_name("//:: tools silicon\n"), None);
    }

    #[test]
    fn finds_same_case_siblings_only() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
        w("main.pvl", "//:: cases Pair\nclass Main { Other o; }\n");
        w("other.pvl", "//:: cases Pair\nclass Other { }\n");
        w("stranger.pvl", "//:: cases Else\nclass Stranger { }\n");
        w("plain.pvl", "class Plain { }\n");
        let main = dir.path().join("main.pvl");
        let text = std::fs::read_to_string(&main).unwrap();
        let found: Vec<_> = companions(&main, &text).into_iter().map(|f| f.name).collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].ends_with("other.pvl"));
    }

    #[test]
    fn places_diagnostics_in_the_file_they_are_about() {
        let dir = tempfile::tempdir().unwrap();
        let main_text = "//:: cases Pair\nclass Main { void m(Lib l) { } }\n";
        let lib_text = "//:: cases Pair\nclass Lib { int v; }\n";
        std::fs::write(dir.path().join("main.pvl"), main_text).unwrap();
        std::fs::write(dir.path().join("lib.pvl"), lib_text).unwrap();
        let main = SourceFile::new(dir.path().join("main.pvl").to_string_lossy(), main_text);
        let (program, _) = crate::frontend(&main).expect("checks");
        let ws = Workspace::load(Path::new(&main.name), main_text, &program);
        assert!(ws.broken.is_empty());
        assert_eq!(ws.companions.len(), 1);
        let base = ws.companions[0].base;
        assert_eq!(&ws.text[base..base + lib_text.len()], lib_text);
        // The companion's spans point into the workspace text at its base.
        let lib_class = &ws.companions[0].program.classes[0];
        assert_eq!(&ws.text[lib_class.name.span.start()..lib_class.name.span.end()], "Lib");
        // A diagnostic in the companion, with a related location in the file.
        let at_v = base + lib_text.find("v;").unwrap();
        let at_m = main_text.find("m(").unwrap();
        let d = Diagnostic::error("x", "msg", Span::new(at_v, at_v + 1)).with_related(Span::new(at_m, at_m + 1), "here");
        let (f, d) = ws.place(&main, d);
        assert!(f.name.ends_with("lib.pvl"));
        assert_eq!(d.span.start(), lib_text.find("v;").unwrap());
        assert!(d.related.is_empty());
        assert_eq!(d.help.as_deref(), Some(format!("here: {}:2:19", main.name).as_str()));
        // A diagnostic in the file stays as it is.
        let d = Diagnostic::error("x", "msg", Span::new(at_m, at_m + 1));
        let (f, d2) = ws.place(&main, d.clone());
        assert_eq!((f.name.as_str(), &d2), (main.name.as_str(), &d));
    }
}
