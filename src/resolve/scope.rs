//! Lexical scopes of variables (the value namespace) inside one method.
//!
//! Methods live in a separate namespace (see [`super::env`]); fields are looked up
//! in the class table only when no variable of that name is in scope, so a local or
//! parameter may shadow a field.

use crate::ast::{Name, Span, Ty};

/// What kind of name a variable is; decides whether it may be assigned and whether
/// declaring another variable of the same name is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    Local,
    Param,
    /// A `given` ghost parameter of the current method.
    Given,
    /// A `yields` ghost parameter of the current method.
    Yields,
    /// A quantifier, `\let` or `signals` binder.
    Binder,
    /// The iteration variable of a par unit.
    ParIter,
    /// A `given`/`yields` parameter of the callee inside a `with`/`then` block.
    CalleeGhost,
}

impl VarKind {
    /// Whether `x = e` may assign this variable.
    pub fn is_assignable(self) -> bool {
        matches!(self, VarKind::Local | VarKind::Param | VarKind::Given | VarKind::Yields | VarKind::CalleeGhost)
    }
    /// Variables that a nested local declaration may not shadow (VerCors rejects
    /// redeclaring a name that is still in scope inside one method).
    fn blocks_shadowing(self) -> bool {
        matches!(self, VarKind::Local | VarKind::Param | VarKind::Given | VarKind::Yields | VarKind::ParIter)
    }
    pub fn describe(self) -> &'static str {
        match self {
            VarKind::Local => "local variable",
            VarKind::Param => "parameter",
            VarKind::Given => "`given` parameter",
            VarKind::Yields => "`yields` parameter",
            VarKind::Binder => "bound variable",
            VarKind::ParIter => "par iteration variable",
            VarKind::CalleeGhost => "ghost parameter of the callee",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarInfo {
    pub name: Name,
    pub ty: Ty,
    pub kind: VarKind,
    /// Where the name was declared.
    pub span: Span,
}

/// How a frame takes part in lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// An ordinary block, binder or method frame: visible to reads and writes.
    Plain,
    /// The callee's `given`/`yields` inside a `with { … }` block: the *targets* of
    /// assignments (`P = e` binds the callee's `P`); reads see the caller's names.
    With,
    /// The callee's `yields` inside a `then { … }` block: visible to *reads*
    /// (`x = P` copies the callee's result `P`); targets are the caller's names.
    Then,
}

#[derive(Clone, Debug)]
struct Frame {
    kind: FrameKind,
    vars: Vec<VarInfo>,
}

/// A stack of frames, innermost last.
#[derive(Clone, Debug, Default)]
pub struct Scopes {
    frames: Vec<Frame>,
}

impl Scopes {
    pub fn new() -> Scopes {
        Scopes::default()
    }
    pub fn push(&mut self) {
        self.push_kind(FrameKind::Plain)
    }
    pub fn push_kind(&mut self, kind: FrameKind) {
        self.frames.push(Frame { kind, vars: Vec::new() });
    }
    pub fn pop(&mut self) {
        self.frames.pop();
    }
    pub fn clear(&mut self) {
        self.frames.clear();
    }

    /// Declares `var` in the innermost frame. On a conflict returns the earlier
    /// declaration: the same name in the same frame, or (for locals and parameters)
    /// a local, parameter or par iterator of an enclosing frame. Binders, par
    /// iterators and callee ghost names may shadow outer names. The variable is declared even on a conflict, so later uses resolve.
    pub fn declare(&mut self, var: VarInfo) -> Result<(), VarInfo> {
        let mut conflict = None;
        if let Some(top) = self.frames.last() {
            conflict = top.vars.iter().rev().find(|v| v.name == var.name).cloned();
        }
        let checks_outer = matches!(var.kind, VarKind::Local | VarKind::Param | VarKind::Given | VarKind::Yields);
        if conflict.is_none() && checks_outer {
            conflict = self
                .frames
                .iter()
                .rev()
                .filter(|f| f.kind == FrameKind::Plain)
                .flat_map(|f| f.vars.iter().rev())
                .find(|v| v.name == var.name && v.kind.blocks_shadowing())
                .cloned();
        }
        if self.frames.is_empty() {
            self.push();
        }
        if let Some(top) = self.frames.last_mut() {
            top.vars.push(var);
        }
        match conflict {
            Some(c) => Err(c),
            None => Ok(()),
        }
    }

    /// Finds the innermost variable `name`. `for_write` selects the assignment-target
    /// view (see [`FrameKind`]).
    pub fn lookup(&self, name: &str, for_write: bool) -> Option<&VarInfo> {
        for f in self.frames.iter().rev() {
            let visible = match f.kind {
                FrameKind::Plain => true,
                FrameKind::With => for_write,
                FrameKind::Then => !for_write,
            };
            if !visible {
                continue;
            }
            if let Some(v) = f.vars.iter().rev().find(|v| &*v.name == name) {
                return Some(v);
            }
        }
        None
    }

    /// Every variable name visible to reads (for "did you mean" suggestions).
    pub fn visible_names(&self) -> Vec<Name> {
        self.frames.iter().filter(|f| f.kind != FrameKind::With).flat_map(|f| f.vars.iter().map(|v| v.name.clone())).collect()
    }
}

/// Levenshtein distance between two short strings.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn suggest<'a, I: IntoIterator<Item = &'a str>>(name: &str, candidates: I) -> Option<String> {
    // One edit per three characters (rounded up from 2); nothing for names of one
    // or two characters, where every other short name is "close".
    let len = name.chars().count();
    if len <= 2 {
        return None;
    }
    let limit = ((len + 1) / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, kind: VarKind) -> VarInfo {
        VarInfo { name: name.into(), ty: Ty::Int, kind, span: Span::DUMMY }
    }

    #[test]
    fn nested_local_cannot_shadow_local_but_binder_can() {
        let mut s = Scopes::new();
        s.push();
        assert!(s.declare(var("x", VarKind::Param)).is_ok());
        s.push();
        assert!(s.declare(var("x", VarKind::Local)).is_err());
        assert!(s.declare(var("y", VarKind::Local)).is_ok());
        s.push();
        assert!(s.declare(var("y", VarKind::Binder)).is_ok());
        assert_eq!(s.lookup("y", false).unwrap().kind, VarKind::Binder);
        s.pop();
        assert_eq!(s.lookup("y", false).unwrap().kind, VarKind::Local);
        s.pop();
        assert!(s.lookup("y", false).is_none());
    }

    #[test]
    fn with_frames_only_serve_targets_and_then_frames_only_reads() {
        let mut s = Scopes::new();
        s.push();
        s.declare(var("P", VarKind::Yields)).unwrap();
        s.push_kind(FrameKind::With);
        s.declare(var("P", VarKind::CalleeGhost)).unwrap();
        assert_eq!(s.lookup("P", true).unwrap().kind, VarKind::CalleeGhost);
        assert_eq!(s.lookup("P", false).unwrap().kind, VarKind::Yields);
        s.pop();
        s.push_kind(FrameKind::Then);
        s.declare(var("d", VarKind::CalleeGhost)).unwrap();
        assert!(s.lookup("d", true).is_none());
        assert!(s.lookup("d", false).is_some());
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("lenght", "length"), 2);
        assert_eq!(suggest("lengt", ["length", "x"]), Some("length".into()));
        assert_eq!(suggest("q", ["length"]), None);
        assert_eq!(suggest("y", ["x"]), None);
        assert_eq!(suggest("cuont", ["count"]), Some("count".into()));
    }
}
