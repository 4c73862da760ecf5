//! Layout facts the printer keeps: where the author left blank lines, and which
//! comments trail code on their line.

use crate::ast::Comment;

/// Byte offsets of the blank lines of `src` (lines holding only whitespace) that do
/// not lie inside a block comment, in order.
pub fn blank_lines(src: &str, comments: &[Comment]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut next_comment = 0;
    for line in src.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if !line.trim().is_empty() {
            continue;
        }
        // Skip comments that end before this line; is the line inside one?
        while comments.get(next_comment).is_some_and(|c| c.span.end() <= start) {
            next_comment += 1;
        }
        let inside = comments.get(next_comment).is_some_and(|c| c.span.start() < start);
        if !inside {
            out.push(start as u32);
        }
    }
    out
}

/// Fills in [`Comment::line_code_end`] of `comments` (those of `src`, in order):
/// the end of the last token on the line where each comment starts. A line ends
/// at a `\n` outside comments or at the first `\n` inside a `/* */` comment.
pub fn line_code_ends(src: &str, comments: &mut [Comment]) {
    let b = src.as_bytes();
    // End of the last token seen on the current line.
    let mut code_end: Option<u32> = None;
    // The comments that started on the current line: `line_first..next`.
    let mut line_first = 0;
    let mut next = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(c) = comments.get(next).filter(|c| c.span.start() == i) {
            let end = c.span.end();
            let breaks_line = b[i..end].contains(&b'\n');
            next += 1;
            if breaks_line {
                // Its first line ends inside it; it ends on a line of its own so far.
                for c in &mut comments[line_first..next] {
                    c.line_code_end = code_end;
                }
                code_end = None;
                line_first = next;
            }
            i = end;
            continue;
        }
        match b[i] {
            b'\n' => {
                for c in &mut comments[line_first..next] {
                    c.line_code_end = code_end;
                }
                code_end = None;
                line_first = next;
            }
            c if !c.is_ascii_whitespace() => code_end = Some(i as u32 + 1),
            _ => {}
        }
        i += 1;
    }
    for c in &mut comments[line_first..next] {
        c.line_code_end = code_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Span;

    #[test]
    fn finds_blank_lines_outside_comments() {
        let src = "a\n\nb\n  \n/* x\n\n y */\nc\n";
        let comments = vec![Comment { text: "/* x\n\n y */".into(), span: Span::new(9, 20), line_code_end: None }];
        assert_eq!(blank_lines(src, &comments), vec![2, 5]);
    }

    /// `(text, line_code_end)` of every comment of `src`.
    fn code_ends(src: &str) -> Vec<(String, Option<u32>)> {
        let mut comments = crate::syntax::comments::scan(src).unwrap();
        line_code_ends(src, &mut comments);
        comments.into_iter().map(|c| (c.text, c.line_code_end)).collect()
    }

    #[test]
    fn finds_the_last_token_on_the_line_a_comment_starts() {
        let pair = |t: &str, e: Option<u32>| (t.to_string(), e);
        // After code; before code; on a line of its own; after another comment.
        assert_eq!(
            code_ends("x; // a\ny /* b */ z;\n  // c\nw; /* d */ // e\n"),
            [pair("// a", Some(2)), pair("/* b */", Some(20)), pair("// c", None), pair("/* d */", Some(30)), pair("// e", Some(30))]
        );
        // A multi-line comment: its first line counts; code after it is on a later
        // line, as is a comment that starts after it.
        assert_eq!(
            code_ends("x; /* a\n b */ y; // c\n/* d\n */"),
            [pair("/* a\n b */", Some(2)), pair("// c", Some(16)), pair("/* d\n */", None)]
        );
        // The last line need not end with a line end; backtick names are code.
        assert_eq!(code_ends("`a//b` // c"), [pair("// c", Some(6))]);
    }
}
