//! Byte offsets (alpine's [`Span`]s) ⇄ LSP positions (line, UTF-16 code unit).
//!
//! alpine's spans are byte offsets into one file's text (docs/ARCHITECTURE.md,
//! "Spans"); `SourceFile::line_col` turns them into 1-based line/character
//! columns for people. LSP counts 0-based lines and, by default, UTF-16 code
//! units within the line, so the server keeps the line starts of each open
//! document and converts in both directions here.

use crate::ast::Span;
use lsp_types::{Position, Range};

/// The start offset of every line of a text.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts, len: text.len() }
    }

    /// The position of byte `offset` (clamped to the text, and to a character
    /// boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(self.len);
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let character = text[self.starts[line]..offset].encode_utf16().count();
        Position { line: line as u32, character: character as u32 }
    }

    /// The byte offset of a position (a character past the line's end means
    /// the line's end; a line past the text means the text's end).
    pub fn offset(&self, text: &str, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else { return self.len };
        let end = self.starts.get(p.line as usize + 1).map_or(self.len, |&e| e);
        let mut units = 0u32;
        for (i, c) in text[start..end].char_indices() {
            if units >= p.character || c == '\n' {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range { start: self.position(text, span.start()), end: self.position(text, span.end()) }
    }

    /// The range of the whole text (for whole-document edits).
    pub fn whole(&self, text: &str) -> Range {
        Range { start: Position { line: 0, character: 0 }, end: self.position(text, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_positions_round_trip() {
        let text = "ab\nc\u{1F600}d\n\nx";
        let ix = LineIndex::new(text);
        for off in [0, 1, 2, 3, 4, 8, 9, 10, 11, text.len()] {
            let p = ix.position(text, off);
            assert_eq!(ix.offset(text, p), off, "offset {off} → {p:?}");
        }
        // The emoji is two UTF-16 code units.
        assert_eq!(ix.position(text, 8), Position { line: 1, character: 3 });
        assert_eq!(ix.position(text, text.len()), Position { line: 3, character: 1 });
        // Past the end of a line: the line's end.
        assert_eq!(ix.offset(text, Position { line: 0, character: 99 }), 2);
        assert_eq!(ix.offset(text, Position { line: 99, character: 0 }), text.len());
    }
}
