//! Where the printer puts [`Program::comments`](crate::ast::Program::comments);
//! the rule is stated in the `# Comments` section of the printer's module
//! documentation.
//!
//! The comments are sorted by position and released strictly in that order, so
//! that none is lost, duplicated or reordered: `next_comment` is the first one not
//! yet printed. There are two ways out:
//!
//! * **Own line.** Before a node, every pending comment that ends before it starts
//!   ([`Printer::comments_before`]); before a closing `}`, those that end inside the
//!   construct, up to one that trails the `}` ([`Printer::comments_inside`]); at the
//!   end of the file, the rest.
//! * **Trailing.** While a line is printed, the printer notes the source end of
//!   every token it writes there that ends a construct ([`Printer::ended`]), or
//!   for a header's `)` or `{`, whose offsets the tree does not hold, the range of
//!   offsets between the header's last node and the node after it
//!   ([`Printer::header_ended`]: only the header's punctuation ends there). When
//!   the line ends ([`Printer::nl`]) and its last code is a noted token, the
//!   pending comments whose [`Comment::line_code_end`] is one of the noted ends are
//!   appended to it, after one space, for as long as they follow each other in
//!   that way; a `//` comment or one of several lines ends the run.
//!
//! Re-parsing the printed text gives each appended comment as `line_code_end` the
//! end of the last token of its printed line, which that line notes again, and the
//! nodes print the same lines: the placement is stable, so formatting stays
//! idempotent. A comment the trailing rule does not take (one on its own line,
//! after a token no construct or header ends with, or waiting behind one that
//! stays pending) is printed on its own line as before. As a trailing comment is
//! written before the line end, the node spans that [`super::print_respanned`]
//! records end at the last code ([`Printer::code_end`]), not at the output's end.

use super::Printer;
use crate::ast::{Barrier, Class, Comment, ParUnit, Span};

/// The tokens of the current output line that comments may trail.
#[derive(Default)]
pub(super) struct Trailing {
    /// Source end offsets (as ranges `lo..=hi`) of the tokens noted on the line.
    ends: Vec<(u32, u32)>,
    /// [`Printer::code_end`] when the last of `ends` was noted.
    code_end_at_last: usize,
    /// The span of a declaration with several declarators (statements with that
    /// span) of which more are still to be printed: its end is noted at the last.
    pub unfinished_decl: Option<Span>,
}

impl Printer<'_> {
    /// Writes `c`'s text at the current position: each line without trailing
    /// whitespace, the lines after the first verbatim, no line end at the end. Not
    /// code: [`Printer::code_end`] stays.
    fn comment_text(&mut self, c: &Comment) {
        let mut first = true;
        for line in c.text.trim_end().split('\n') {
            if !first {
                self.out.push('\n');
            }
            first = false;
            self.out.push_str(line.trim_end());
        }
    }

    /// `c` on a line of its own at the current indentation.
    fn comment_line(&mut self, c: &Comment) {
        self.write_indent();
        self.comment_text(c);
        self.out.push('\n');
    }

    /// Print (at line start) every pending comment that ends before `span` starts.
    pub(super) fn comments_before(&mut self, span: Span) {
        if span.is_dummy() {
            return;
        }
        self.comments_until(span.start, None);
    }

    /// [`Printer::comments_before`] for a par unit written without a name or
    /// iterators, whose span starts after its keyword (`par`, `and`) on a line of
    /// its own: a comment that trails a token in `lo..span.start` (the keyword, or
    /// the `()` of VerCors 1's `par ()`) stays pending, to trail the keyword.
    pub(super) fn comments_before_keyword(&mut self, span: Span, lo: u32) {
        if span.is_dummy() {
            return;
        }
        while let Some(c) = self.comments.get(self.next_comment) {
            if c.span.end > span.start || c.line_code_end.is_some_and(|at| lo <= at && at < span.start) {
                break;
            }
            self.next_comment += 1;
            self.blank_line_before(c.span.start);
            self.comment_line(c);
            self.last_end = Some(c.span.end);
        }
    }

    /// [`Printer::ended`] for a keyword whose end lies in `lo..=hi` (a par unit's
    /// `par`/`and` before a unit without name or iterators, a region's `{`).
    pub(super) fn keyword_ended(&mut self, lo: u32, hi: u32) {
        if lo <= hi {
            self.ended_within(lo, hi);
        }
    }

    /// Print (at line start) every pending comment ending at or before `pos`, up to
    /// the first one that trails the token ending at `keep` (if any), which stays
    /// pending.
    fn comments_until(&mut self, pos: u32, keep: Option<u32>) {
        while let Some(c) = self.comments.get(self.next_comment) {
            if c.span.end > pos || (keep.is_some() && c.line_code_end == keep) {
                break;
            }
            self.next_comment += 1;
            self.blank_line_before(c.span.start);
            self.comment_line(c);
            self.last_end = Some(c.span.end);
        }
    }

    /// The pending comments inside a construct ending at `span.end` (with a `}`),
    /// printed one level deeper than the current indentation, before its closing
    /// `}`; those that trail the `}` itself stay for the line of the `}`.
    pub(super) fn comments_inside(&mut self, span: Span) {
        if span.is_dummy() {
            return;
        }
        self.indent += 1;
        self.comments_until(span.end, Some(span.end));
        self.indent -= 1;
    }

    pub(super) fn remaining_comments(&mut self) {
        self.comments_until(u32::MAX, None);
    }

    /// The node with source span `span` has just been printed up to its last token:
    /// comments that trailed that token may follow it on this line.
    pub(super) fn ended(&mut self, span: Span) {
        if !span.is_dummy() && self.trailing.unfinished_decl != Some(span) {
            self.ended_within(span.end, span.end);
        }
    }

    /// [`Printer::ended`] for the `{` that the block with span `span` starts with.
    pub(super) fn block_opened(&mut self, span: Span) {
        if !span.is_dummy() {
            self.ended_within(span.start + 1, span.start + 1);
        }
    }

    /// [`Printer::ended`] for a token whose end is only known to lie in `lo..=hi`:
    /// a comment that trailed any token ending there follows this one (the range
    /// holds only tokens of the header being printed).
    fn ended_within(&mut self, lo: u32, hi: u32) {
        // Nothing to look for once every comment is out (and always in fragments).
        if self.next_comment < self.comments.len() {
            self.trailing.ends.push((lo, hi));
            self.trailing.code_end_at_last = self.code_end;
        }
    }

    /// [`Printer::ended`] for the token that ends a header line, `)` or `{`: one of
    /// the tokens between `last`, the span of the header's last node, and `next`,
    /// that of the node after the header. (A comment after `last` on its line
    /// moves behind them.)
    pub(super) fn header_ended(&mut self, last: Span, next: Span) {
        if !last.is_dummy() && !next.is_dummy() {
            self.ended_within(last.end, next.start);
        }
    }

    /// [`Printer::header_ended`] for the line `class C {`.
    pub(super) fn class_header_ended(&mut self, c: &Class) {
        if !c.span.is_dummy() {
            let next = c.members.first().map_or(closing_brace(c.span), |m| m.span());
            self.header_ended(c.name.span, next);
        }
    }

    /// [`Printer::header_ended`] for `barrier(L; invariants)`, followed by `{` in
    /// form A.
    pub(super) fn barrier_header_ended(&mut self, b: &Barrier) {
        if !b.span.is_dummy() {
            let last = b.invariants.last().unwrap_or(&b.label).span;
            let next = match (b.contract.clauses.first(), &b.body) {
                (Some(c), _) => c.span,
                (None, Some(body)) => body.span,
                (None, None) => closing_brace(b.span),
            };
            self.header_ended(last, next);
        }
    }

    /// [`Printer::header_ended`] for a `par` unit's `name(iterators)`.
    pub(super) fn par_header_ended(&mut self, u: &ParUnit) {
        // The unit's span starts at its name or `(`.
        let last =
            u.iters.last().map(|it| it.span).or(u.name.as_ref().map(|n| n.span)).unwrap_or(Span::new(u.span.start(), u.span.start()));
        let next = u.contract.clauses.first().map_or(u.body.span, |c| c.span);
        if !u.span.is_dummy() {
            self.header_ended(last, next);
        }
    }

    /// Before the line end: appends the comments that trail the current line (see
    /// the module documentation) and forgets the tokens noted on it.
    pub(super) fn trailing_comments(&mut self) {
        if self.trailing.ends.is_empty() {
            return;
        }
        // Only where the line's last code is a noted token: a `//` comment after it
        // must be the last thing on the line, and the re-parse must see the comment
        // after that token.
        if self.code_end == self.trailing.code_end_at_last {
            while let Some(c) = self.comments.get(self.next_comment) {
                let Some(at) = c.line_code_end else { break };
                if !self.trailing.ends.iter().any(|&(lo, hi)| (lo..=hi).contains(&at)) {
                    break;
                }
                self.next_comment += 1;
                self.out.push(' ');
                self.comment_text(c);
                if c.text.starts_with("//") || c.text.trim_end().contains('\n') {
                    break;
                }
            }
        }
        self.trailing.ends.clear();
    }
}

/// The span of the `}` that ends a construct with span `span`.
fn closing_brace(span: Span) -> Span {
    Span::new(span.end() - 1, span.end())
}
