//! VerCors annotations in a CUDA/OpenCL text: `/*@ … @*/` and `//@ …`
//! comments, found in the raw text (libclang does not report comments) and
//! handed out by position.
//!
//! Invariants: an annotation's [`Annotation::text`] has exactly the length of
//! the file region it covers, the delimiters (`/*@`, `@*/`, `//@`) replaced by
//! spaces, so a parse of it gives spans that are offsets into the file once
//! shifted by [`Annotation::start`]. Every annotation is taken exactly once
//! ([`Annotations::take_before`]); what is left at the end is reported by the
//! caller as not attached to anything (never silently ignored).

use crate::ast::Span;

/// One annotation region: a run of annotation comments with only whitespace
/// between them (consecutive `//@` lines are one annotation).
#[derive(Clone, Debug)]
pub struct Annotation {
    /// Byte offset of the region's first byte in the file.
    pub start: usize,
    /// The region with every byte that is not annotation content replaced by a
    /// space (newlines kept).
    pub text: String,
}

impl Annotation {
    pub fn span(&self) -> Span {
        Span::new(self.start, self.start + self.text.len())
    }
}

/// The annotations of a file not yet attached, in text order.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    pending: Vec<Annotation>,
}

/// A comment found in the text: its byte range and whether it is an
/// annotation (`/*@`, `//@`), with its content range.
struct Comment {
    start: usize,
    end: usize,
    content: Option<(usize, usize)>,
}

/// The comments of a C text, skipping string and character literals.
fn comments(text: &str) -> Vec<Comment> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let quote = b[i];
                i += 1;
                while i < b.len() && b[i] != quote && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                let content = (b.get(i + 2) == Some(&b'@')).then_some((i + 3, end));
                out.push(Comment { start: i, end, content });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                let content = (b.get(i + 2) == Some(&b'@')).then(|| {
                    let close = end.saturating_sub(2);
                    let close = if close > i + 3 && b[close - 1] == b'@' { close - 1 } else { close };
                    (i + 3, close.max(i + 3))
                });
                out.push(Comment { start: i, end, content });
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the text has any VerCors annotation.
pub fn has_annotations(text: &str) -> bool {
    comments(text).iter().any(|c| c.content.is_some())
}

impl Annotations {
    /// The annotation regions of `text`.
    pub fn scan(text: &str) -> Annotations {
        let mut pending: Vec<Annotation> = Vec::new();
        let mut last_end = 0usize;
        for c in comments(text).into_iter().filter(|c| c.content.is_some()) {
            let (cs, ce) = c.content.unwrap_or((c.start, c.start));
            let joins = !pending.is_empty() && text[last_end..c.start].trim().is_empty();
            if !joins {
                pending.push(Annotation { start: c.start, text: String::new() });
            }
            let region = pending.last_mut().expect("pushed above");
            // Whitespace between two joined comments, then this comment with its
            // delimiters blanked.
            let from = region.start + region.text.len();
            region.text.push_str(&blank(&text[from..c.start]));
            region.text.push_str(&blank(&text[c.start..cs]));
            region.text.push_str(&text[cs..ce]);
            region.text.push_str(&blank(&text[ce..c.end]));
            last_end = c.end;
        }
        Annotations { pending }
    }

    /// Takes the annotations that end at or before `pos` and start at or after
    /// `from`, joined into one (their text and the gap between them).
    pub fn take_between(&mut self, from: usize, pos: usize, file: &str) -> Option<Annotation> {
        let (taken, kept): (Vec<Annotation>, Vec<Annotation>) =
            std::mem::take(&mut self.pending).into_iter().partition(|a| a.start >= from && a.start + a.text.len() <= pos);
        self.pending = kept;
        let first = taken.first()?.start;
        let mut text = String::new();
        for a in &taken {
            let at = first + text.len();
            text.push_str(&blank(&file[at..a.start]));
            text.push_str(&a.text);
        }
        Some(Annotation { start: first, text })
    }

    /// The annotations nobody took.
    pub fn leftover(self) -> Vec<Annotation> {
        self.pending
    }
}

/// `s` with every character but a newline replaced by spaces, byte for byte.
fn blank(s: &str) -> String {
    s.bytes().map(|c| if c == b'\n' { '\n' } else { ' ' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_consecutive_line_annotations_and_keeps_offsets() {
        let text = "int x;\n//@ requires a;\n//@ ensures b;\nvoid f();\n/*@ assert c; @*/ // plain\n";
        let mut anns = Annotations::scan(text);
        let a = anns.take_between(0, text.find("void").unwrap(), text).unwrap();
        assert_eq!(a.start, 7);
        assert_eq!(&text[a.start + 4..a.start + 15], "requires a;");
        assert_eq!(&a.text[4..15], "requires a;");
        assert!(a.text.contains("ensures b;"));
        let b = anns.take_between(0, text.len(), text).unwrap();
        assert_eq!(b.text.trim(), "assert c;");
        assert!(anns.leftover().is_empty());
    }

    #[test]
    fn strings_and_plain_comments_are_not_annotations() {
        assert!(!has_annotations("char *s = \"//@ no\"; /* @ no */ // @ no"));
        assert!(has_annotations("/*@ requires true; @*/"));
    }
}
