//! Comment collection and cheap pre-checks run before pest.
//!
//! A plain left-to-right scan that skips backtick identifiers and string literals
//! (which end on their line) finds every comment.

use crate::ast::{Comment, Span};
use crate::diagnostics::{codes, Diagnostic};

/// Every `//` and `/* */` comment of `src`, in order. A `//` comment's text ends
/// before its trailing whitespace and the line end. An unterminated `/*` is an
/// error. [`Comment::line_code_end`] is left `None` (`layout::line_code_ends` fills
/// it in).
#[allow(clippy::result_large_err)]
pub fn scan(src: &str) -> Result<Vec<Comment>, Diagnostic> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => i = skip_backtick(b, i),
            b'"' => i = skip_string(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = memchr(b, i, b'\n').unwrap_or(b.len());
                // Drop trailing whitespace (and the `\r` of a CRLF line end): the
                // builder trims a node's span back over whitespace and whole
                // comments, so a comment must end at its last visible character.
                let mut text_end = end;
                while text_end > i + 2 && matches!(b[text_end - 1], b' ' | b'\t' | b'\r') {
                    text_end -= 1;
                }
                out.push(Comment { text: src[i..text_end].to_string(), span: Span::new(i, text_end), line_code_end: None });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => match find(b, i + 2, b"*/") {
                Some(close) => {
                    let end = close + 2;
                    out.push(Comment { text: src[i..end].to_string(), span: Span::new(i, end), line_code_end: None });
                    i = end;
                }
                None => {
                    return Err(Diagnostic::error(codes::SYNTAX, "unterminated block comment", Span::new(i, i + 2))
                        .with_label("this comment is never closed")
                        .with_help("close it with `*/`"));
                }
            },
            _ => i += 1,
        }
    }
    Ok(out)
}

/// Brackets, parentheses and braces may nest at most this deep.
pub const MAX_NESTING: usize = 500;

/// Result of the bracket scan: the unmatched `{` positions (innermost last).
pub struct BracketInfo {
    pub unclosed_braces: Vec<usize>,
}

/// Scans brackets outside comments and backtick names. Fails when they nest deeper
/// than [`MAX_NESTING`] (so that the recursive-descent parser never gets near the end of
/// its stack on adversarial input).
#[allow(clippy::result_large_err)]
pub fn brackets(src: &str) -> Result<BracketInfo, Diagnostic> {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut braces: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                i = skip_backtick(b, i);
                continue;
            }
            b'"' => {
                i = skip_string(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr(b, i, b'\n').unwrap_or(b.len());
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = find(b, i + 2, b"*/").map_or(b.len(), |c| c + 2);
                continue;
            }
            c @ (b'(' | b'[' | b'{') => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Diagnostic::error(codes::SYNTAX, "nesting too deep", Span::new(i, i + 1))
                        .with_label(format!("more than {MAX_NESTING} nested brackets"))
                        .with_help("split the expression or statement into smaller parts"));
                }
                if c == b'{' {
                    braces.push(i);
                }
            }
            c @ (b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                if c == b'}' {
                    braces.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(BracketInfo { unclosed_braces: braces })
}

/// Index just after a backtick identifier starting at `i` (or `i + 1` for a lone backtick).
fn skip_backtick(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'`' && b[j] != b'\n' {
        j += 1;
    }
    if j < b.len() && b[j] == b'`' && j > i + 1 {
        j + 1
    } else {
        i + 1
    }
}

/// Past the string literal that starts at `i` (`"` .. `"`, `\` escaping the next
/// character, on one line); just past the `"` when it is not closed on its line
/// (the parser reports it).
fn skip_string(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'\n' {
        match b[j] {
            b'"' => return j + 1,
            b'\\' if b.get(j + 1).is_some_and(|&c| c != b'\n') => j += 2,
            _ => j += 1,
        }
    }
    i + 1
}

fn memchr(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b[from..].iter().position(|&x| x == c).map(|p| p + from)
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..].windows(pat.len()).position(|w| w == pat).map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_line_and_block_comments() {
        let src = "// a\nclass A { /* b\n c */ int x; } // end";
        let cs = scan(src).unwrap();
        let texts: Vec<_> = cs.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["// a", "/* b\n c */", "// end"]);
        assert_eq!(&src[cs[1].span.start()..cs[1].span.end()], "/* b\n c */");
    }

    #[test]
    fn line_comments_end_at_their_last_visible_character() {
        let src = "x; // a  \t\r\n//\r\n// b\r";
        let texts: Vec<_> = scan(src).unwrap().into_iter().map(|c| (c.text, c.span.len())).collect();
        assert_eq!(texts, [("// a".to_string(), 4), ("//".to_string(), 2), ("// b".to_string(), 4)]);
    }

    #[test]
    fn unterminated_block_comment_is_an_error() {
        let d = scan("class A { /* x").unwrap_err();
        assert_eq!(d.span, Span::new(10, 12));
    }

    #[test]
    fn backtick_names_are_not_comments() {
        assert!(scan("`a//b` x").unwrap().is_empty());
    }

    #[test]
    fn nesting_limit() {
        let deep = "(".repeat(MAX_NESTING + 1);
        assert!(brackets(&deep).is_err());
        let ok = "(".repeat(MAX_NESTING);
        assert!(brackets(&ok).is_ok());
        let info = brackets("class A { void f() { } ").unwrap();
        assert_eq!(info.unclosed_braces, vec![8]);
    }
}
