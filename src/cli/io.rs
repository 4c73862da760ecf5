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

/// How a file's text was stored, beyond its characters: a UTF-8 byte-order mark
/// before it, and CRLF line ends. alpine works on the text without the mark and
/// reads CRLF like LF; what it writes back ([`Encoding::apply`]) is stored the way
/// the user's file was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Encoding {
    pub bom: bool,
    pub crlf: bool,
}

/// The UTF-8 byte-order mark.
const BOM: char = '\u{feff}';

impl Encoding {
    /// The encoding of `text` as read (mark included); a file is CRLF when its
    /// first line ends in CRLF.
    fn of(text: &str) -> Encoding {
        let crlf = text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
        Encoding { bom: text.starts_with(BOM), crlf }
    }

    /// `text` (LF line ends, no mark, as the printer makes it) stored this way.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 32 + 3);
        if self.bom {
            out.push(BOM);
        }
        if self.crlf {
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.push_str("\r\n");
                }
                out.push_str(line);
            }
        } else {
            out.push_str(text);
        }
        out
    }
}

/// Reads a file (or stdin for `-`) as UTF-8 text, without its byte-order mark.
/// On failure returns a diagnostic against an empty source named after the input.
pub fn read_source(path: &str) -> Result<SourceFile, ReadFailure> {
    read_source_encoded(path).map(|(file, _)| file)
}

/// [`read_source`], and how the file was stored (to write it back the same way).
pub fn read_source_encoded(path: &str) -> Result<(SourceFile, Encoding), ReadFailure> {
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
            Ok(mut text) => {
                let encoding = Encoding::of(&text);
                if encoding.bom {
                    text.drain(..BOM.len_utf8());
                }
                Ok((SourceFile::new(name, text), encoding))
            }
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
/// A symbolic link is followed: its target gets the new text and the link stays. A
/// new file gets the mode any program's new file gets (0666 less the umask).
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => resolve_link(path)?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".alpine-").suffix(".tmp");
    #[cfg(unix)]
    {
        // Created with 0666: the kernel takes the umask off, as for `>` in a shell
        // (tempfile's own default is 0600).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(&target) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// The file a symbolic link finally points to (which need not exist yet: a
/// dangling link is written through, as a shell's `>` does).
fn resolve_link(link: &Path) -> std::io::Result<std::path::PathBuf> {
    let mut path = link.to_path_buf();
    // Links to links, up to the limit Linux itself uses (40).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::other(format!("too many levels of symbolic links at `{}`", link.display())))
}

/// Writes to standard output for `out!`/`outln!`. A reader that went away (a
/// closed pipe: `alpine fmt big.pvl | head -1`) ends the run quietly, with the
/// status a shell reports for a process killed by SIGPIPE (128 + 13), as `cat`
/// does; any other failure (a full disk, `> /dev/full`) is an error, exit 2. Never
/// a panic, which is what `print!` does.
pub fn stdout_write(args: std::fmt::Arguments) {
    let written = super::progress::suspend(|| {
        let mut out = std::io::stdout().lock();
        out.write_fmt(args).and_then(|()| out.flush())
    });
    if let Err(e) = written {
        output_failed(&e);
    }
}

/// Writes to standard error for `err!`/`errln!`. When standard error itself
/// cannot be written there is nowhere to report it; a closed pipe ends the run as
/// for standard output, anything else is ignored.
pub fn stderr_write(args: std::fmt::Arguments) {
    if let Err(e) = super::progress::suspend(|| std::io::stderr().lock().write_fmt(args)) {
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

    #[cfg(unix)]
    #[test]
    fn atomic_write_through_a_symlink_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/a.pvl");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("a.pvl");
        std::os::unix::fs::symlink("real/a.pvl", &link).unwrap();
        write_atomically(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn encoding_round_trips_bom_and_crlf() {
        let raw = "\u{feff}class A {\r\n}\r\n";
        let e = Encoding::of(raw);
        assert_eq!(e, Encoding { bom: true, crlf: true });
        assert_eq!(e.apply("class A {\n}\n"), raw);
        assert_eq!(Encoding::of("a\nb\r\n"), Encoding { bom: false, crlf: false });
    }

    #[test]
    fn unreadable_file_is_a_diagnostic() {
        let (_, d) = *read_source("/nonexistent/definitely/missing.pvl").unwrap_err();
        assert_eq!(d.code, codes::IO);
    }
}
