//! Byte spans into a source text.

/// A half-open byte range `start..end` into the source text of one file.
///
/// Spans take part in `PartialEq` like any other field; to compare two trees while
/// ignoring where they came from, clear the spans first with
/// [`crate::ast::visit::strip_spans`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span of nodes that have no source position (made by a transformation).
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn start(self) -> usize {
        self.start as usize
    }
    pub fn end(self) -> usize {
        self.end as usize
    }
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
    pub fn is_dummy(self) -> bool {
        self == Span::DUMMY
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self.is_dummy() {
            return other;
        }
        if other.is_dummy() {
            return self;
        }
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
    pub fn contains(self, offset: usize) -> bool {
        self.start() <= offset && offset < self.end()
    }
}
