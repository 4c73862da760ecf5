//! Which files a command works on: the files named on the command line, `-` for
//! standard input, and every PVL file below a named directory.
//!
//! A directory is walked as ripgrep walks it (the `ignore` crate): files and
//! directories matched by `.gitignore`, `.ignore` or a global git excludes file are
//! skipped, and so are hidden ones; a `.gitignore` counts even outside a git
//! repository, because it is the author's list of what is not theirs. Only files
//! ending in `.pvl` are taken, in sorted order so that runs are reproducible. A file
//! named on the command line is always taken, whatever its name or ignore status.

use super::io::STDIN;
use std::path::Path;

/// The extension of the files a directory walk picks up.
const PVL_EXTENSION: &str = "pvl";

/// The inputs of a command, in command-line order with each directory replaced by
/// its PVL files; and one message per argument that could not be expanded (a
/// directory without PVL files, an unreadable directory entry).
pub struct Inputs {
    pub files: Vec<String>,
    pub errors: Vec<String>,
    /// Whether some argument was a directory (`alpine fmt DIR` rewrites in place).
    pub walked_directory: bool,
}

/// Expands the command-line arguments. A path that does not exist is kept as it is:
/// reading it reports the error, located like any other unreadable file.
pub fn expand(args: &[String]) -> Inputs {
    let mut inputs = Inputs { files: Vec::new(), errors: Vec::new(), walked_directory: false };
    for arg in args {
        if arg != STDIN && Path::new(arg).is_dir() {
            inputs.walked_directory = true;
            let before = inputs.files.len();
            walk(arg, &mut inputs);
            if inputs.files.len() == before {
                inputs.errors.push(format!("no PVL files (`*.{PVL_EXTENSION}`) in `{arg}`"));
            }
        } else {
            inputs.files.push(arg.clone());
        }
    }
    inputs
}

/// Every PVL file below `dir`, sorted, appended to `inputs.files`.
fn walk(dir: &str, inputs: &mut Inputs) {
    let mut found = Vec::new();
    for entry in ignore::WalkBuilder::new(dir).require_git(false).build() {
        match entry {
            Ok(e) if e.file_type().is_some_and(|t| t.is_file()) && e.path().extension().is_some_and(|x| x == PVL_EXTENSION) => {
                found.push(display(e.path(), dir));
            }
            Ok(_) => {}
            Err(e) => inputs.errors.push(format!("cannot walk `{dir}`: {e}")),
        }
    }
    found.sort();
    inputs.files.extend(found);
}

/// The path as the user will want to read it: `alpine fmt .` names `a/b.pvl`, not
/// `./a/b.pvl`.
fn display(path: &Path, dir: &str) -> String {
    let shown = if dir == "." { path.strip_prefix(".").unwrap_or(path) } else { path };
    shown.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "class A {}\n").unwrap();
    }

    #[test]
    fn walks_pvl_files_in_order_and_honours_gitignore() {
        let d = tempfile::tempdir().unwrap();
        for f in ["b.pvl", "a/z.pvl", "a/y.pvl", "notes.txt", "gen/skip.pvl", ".hidden/h.pvl", "keep/ignored.pvl"] {
            touch(&d.path().join(f));
        }
        std::fs::write(d.path().join(".gitignore"), "gen/\nignored.pvl\n").unwrap();
        let root = d.path().display().to_string();
        let got = expand(std::slice::from_ref(&root));
        let rel: Vec<String> = got.files.iter().map(|f| f.strip_prefix(&root).unwrap().to_string()).collect();
        assert_eq!(rel, ["/a/y.pvl", "/a/z.pvl", "/b.pvl"]);
        assert!(got.errors.is_empty() && got.walked_directory);
    }

    #[test]
    fn named_files_are_kept_and_empty_directories_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().display().to_string();
        let got = expand(&["x.txt".to_string(), "-".to_string(), root.clone()]);
        assert_eq!(got.files, ["x.txt", "-"]);
        assert_eq!(got.errors.len(), 1);
        assert!(got.errors[0].contains("no PVL files"), "{}", got.errors[0]);
    }
}
