//! Layout facts the printer keeps: where the author left blank lines.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Span;

    #[test]
    fn finds_blank_lines_outside_comments() {
        let src = "a\n\nb\n  \n/* x\n\n y */\nc\n";
        let comments = vec![Comment { text: "/* x\n\n y */".into(), span: Span::new(9, 20) }];
        assert_eq!(blank_lines(src, &comments), vec![2, 5]);
    }
}
