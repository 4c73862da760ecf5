//! Programs that span several files.
//!
//! VerCors' test harness verifies together all files that carry the same
//! `//:: cases NAME` header; the corpus relies on it (MainWorkerQueue's `orig_Main.pvl`
//! uses the classes of `orig_Queue.pvl` and `orig_Worker.pvl`). alpine follows the
//! same rule: a file's *companions* are the other `.pvl` files of its directory whose
//! header names the same case. Their classes are visible to the file's resolver; they
//! are not checked, printed or rewritten as part of it.

use crate::diagnostics::SourceFile;
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
}
