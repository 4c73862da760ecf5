//! Reading inputs and writing outputs safely.

use alpine::ast::Span;
use alpine::diagnostics::{codes, Diagnostic, SourceFile};
use std::io::{Read, Write};
use std::path::Path;

/// `-` means standard input.
pub const STDIN: &str = "-";

/// An input that could not be read: the diagnostic, and the (possibly empty) source
/// it refers to.
pub type ReadFailure = Box<(SourceFile, Diagnostic)>;

/// Reads a file (or stdin for `-`) as UTF-8 text. On failure returns a diagnostic
/// against an empty source named after the input.
pub fn read_source(path: &str) -> Result<SourceFile, ReadFailure> {
    let (name, bytes) = if path == STDIN {
        let mut buf = Vec::new();
        let r = std::io::stdin().read_to_end(&mut buf).map(|_| buf);
        ("<stdin>".to_string(), r)
    } else {
        (path.to_string(), std::fs::read(path))
    };
    let fail = |msg: String| {
        let file = SourceFile::new(name.clone(), String::new());
        Box::new((file, Diagnostic::error(codes::IO, msg, Span::DUMMY)))
    };
    match bytes {
        Err(e) => Err(fail(format!("cannot read `{name}`: {e}"))),
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile::new(name, text)),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let file = SourceFile::new(name.clone(), text);
                let d = Diagnostic::error(codes::IO, format!("`{name}` is not valid UTF-8"), Span::new(at, at + 1))
                    .with_label("invalid byte here");
                Err(Box::new((file, d)))
            }
        },
    }
}

/// Replaces `path`'s contents with `text` atomically: the text is written to a
/// temporary file in the same directory, flushed, given the original file's
/// permissions, and renamed over the original. Readers see either the old or the
/// new file, never a half-written one, and a failure leaves the original untouched.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".alpine-").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes to standard output for `out!`/`outln!`. A reader that went away (a
/// closed pipe: `alpine fmt big.pvl | head -1`) ends the run quietly, with the
/// status a shell reports for a process killed by SIGPIPE (128 + 13), as `cat`
/// does; any other failure (a full disk, `> /dev/full`) is an error, exit 2. Never
/// a panic, which is what `print!` does.
pub fn stdout_write(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        output_failed(&e);
    }
}

/// Writes to standard error for `err!`/`errln!`. When standard error itself
/// cannot be written there is nowhere to report it; a closed pipe ends the run as
/// for standard output, anything else is ignored.
pub fn stderr_write(args: std::fmt::Arguments) {
    if let Err(e) = std::io::stderr().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(EXIT_SIGPIPE);
        }
    }
}

/// The exit status of a process killed by SIGPIPE, as a shell reports it.
const EXIT_SIGPIPE: i32 = 128 + 13;

fn output_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_SIGPIPE);
    }
    let _ = writeln!(std::io::stderr(), "error: cannot write to standard output: {e}");
    std::process::exit(super::EXIT_BAD_INPUT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_contents_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.pvl");
        std::fs::write(&p, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        write_atomically(&p, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn unreadable_file_is_a_diagnostic() {
        let (_, d) = *read_source("/nonexistent/definitely/missing.pvl").unwrap_err();
        assert_eq!(d.code, codes::IO);
    }
}
