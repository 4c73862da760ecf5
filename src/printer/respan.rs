//! Printing a tree together with the spans that parsing the printed text gives it
//! (the optimisation steps, `transforms::Rewriter`).
//!
//! After a rewrite the next pass needs spans into the printed text of the step:
//! its diagnostics point there, and they must be unique, as a parse makes them
//! (`transforms::LoopId` is keyed by a loop's span, and a pass that copies a loop
//! copies its span). Parsing the printed text again gives them, but the parser
//! costs about 8 µs a line, most of an optimisation step. So the printer records
//! where the text of every node starts and ends, and [`print_respanned`] writes
//! those spans into the tree.
//!
//! The parser's span of a node runs from its first token to the end of its last
//! one (`crate::syntax`: trailing whitespace and comments are trimmed; a
//! parenthesised expression includes its parentheses; a loop, `par` or barrier
//! statement the directives and contract written before it, as does a method; a
//! `par` unit starts after its `par`/`and`). The printer marks each node at the
//! same places: from where it starts printing the node, moved past indentation and
//! comments, to the end of the last code printed when the node is done (not the
//! end of the output: a trailing comment may follow on the line). A tree the
//! printer prints lossily (the shapes listed in the printer's module
//! documentation, which the parser never produces) is refused: its text must be
//! parsed.
//!
//! Nodes are identified by the address of their `span` field: the tree is not
//! changed between printing and assigning the spans (the one takes `&Program`, the
//! other then `&mut Program`), so every span field keeps its address, and distinct
//! fields have distinct addresses. `tests/printer_roundtrip.rs` and
//! `tests/optimise_corpus.rs` check the result against the parser, spans included.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{finish, Printer};
use crate::ast::visit::{walk_expr_mut, VisitMut};
use crate::ast::*;

/// [`super::print_program`], which also gives `p` what parsing the printed text
/// gives: every node the span of its printed text, the comments and blank lines of
/// that text, and no computed types (`Expr::ty` is [`Ty::Unknown`], as after
/// parsing).
///
/// `Ok(text)`: `p` now equals `syntax::parse(&text)`. `Err(text)`: `p` has a shape
/// the printer normalises (its text parses to another tree) or a node it did not
/// record; the text is the same as [`super::print_program`]'s, but `p`'s spans
/// are then unspecified: parse the text instead.
pub fn print_respanned(p: &mut Program) -> Result<String, String> {
    let mut comments = p.comments.clone();
    comments.sort_by_key(|c| (c.span.start, c.span.end));
    let mut pr = Printer::new(&comments);
    pr.blank_lines = &p.blank_lines;
    // About one span per 4 bytes of output; the previous text is a good guess.
    pr.rec = Some(Recorder::with_capacity(p.span.len() / 4));
    pr.program(p);
    let rec = pr.rec.take().expect("recorder");
    let text = finish(pr.out);
    if !rec.exact {
        return Err(text);
    }
    let Some((comments, blank_lines)) = crate::syntax::layout(&text) else { return Err(text) };
    let mut assign = Assign { spans: &rec.spans, missing: false };
    for c in &mut p.classes {
        assign.visit_class_mut(c);
    }
    if assign.missing {
        return Err(text);
    }
    // The program's span runs from offset 0 (leading comments included) to the end
    // of its last token (trailing comments excluded), as the parser's.
    p.span = Span::new(0, p.classes.last().map_or(0, |c| c.span.end()));
    p.comments = comments;
    p.blank_lines = blank_lines;
    Ok(text)
}

/// The spans recorded while printing, by span-field address.
pub(super) struct Recorder {
    spans: HashMap<usize, Span, BuildHasherDefault<AddrHasher>>,
    /// Cleared when the printer prints a shape that does not parse back to itself.
    pub exact: bool,
}

impl Recorder {
    fn with_capacity(n: usize) -> Recorder {
        Recorder { spans: HashMap::with_capacity_and_hasher(n, Default::default()), exact: true }
    }

    /// Records the node printed from `begin` to `code_end`, the end of the last
    /// code in `out` (see `Printer::mark`), and returns its span.
    pub fn mark(&mut self, out: &str, code_end: usize, span: &Span, begin: usize) -> Span {
        let start = skip_layout(out.as_bytes(), begin);
        let at = Span::new(start, code_end.max(start));
        self.put(span, at);
        at
    }

    /// Records `at` for the node whose span field is `span` (a later record of the
    /// same node wins).
    pub fn put(&mut self, span: &Span, at: Span) {
        self.spans.insert(key(span), at);
    }
}

fn key(span: &Span) -> usize {
    span as *const Span as usize
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | b'\r')
}

/// The offset of the first token at or after `i`: whitespace and comments skipped,
/// as the grammar's `ws` does.
fn skip_layout(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            i += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            i += rest[2..].windows(2).position(|w| w == b"*/").map_or(rest.len(), |k| k + 4);
        } else {
            return i;
        }
    }
}

/// Writes the recorded spans into the tree and resets the computed types.
struct Assign<'a> {
    spans: &'a HashMap<usize, Span, BuildHasherDefault<AddrHasher>>,
    /// A span field that was not recorded (a node the printer does not mark).
    missing: bool,
}

impl Assign<'_> {
    fn set(&mut self, s: &mut Span) {
        match self.spans.get(&key(s)) {
            Some(&at) => *s = at,
            None => self.missing = true,
        }
    }
}

impl VisitMut for Assign<'_> {
    fn visit_span_mut(&mut self, s: &mut Span) {
        self.set(s);
    }
    fn visit_ident_mut(&mut self, i: &mut Ident) {
        self.set(&mut i.span);
    }
    fn visit_num_mut(&mut self, n: &mut Num) {
        self.set(&mut n.span);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        e.ty = Ty::Unknown;
        walk_expr_mut(self, e);
    }
}

/// Hashes an address: the keys are distinct aligned pointers, so a multiplication
/// (with the high bits folded down, as the table indexes by the low ones) spreads
/// them well, much faster than SipHash.
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        let x = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_skipped_like_the_grammar_does() {
        let b = b"  // a\n  /* b\n */ x";
        assert_eq!(skip_layout(b, 0), b.len() - 1);
        assert_eq!(skip_layout(b"x", 0), 0);
        assert_eq!(skip_layout(b"  ", 0), 2);
    }
}
