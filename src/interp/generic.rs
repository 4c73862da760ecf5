//! Generic runs: a kernel run once over the *interval-of-summands* monoid,
//! with every shared access logged per barrier phase (issue #36, `alpine scan`;
//! the paper is "A sound and complete abstraction for reasoning about parallel
//! prefix sums", Chong, Donaldson, Ketema, POPL 2014).
//!
//! In a generic run the kernel's data are [`Summand`]s instead of integers: the
//! input's cell `k` holds the interval `[k, k]`, every other data cell `⊤`. The
//! monoid's operator is `+` on two data values (the kernel is read as written
//! over an arbitrary monoid, `+` standing for its operator) or a call of the pure
//! function named as the operator; the literal `0` written over a data value is
//! the identity `ε`. Anything else a data value meets — a comparison, an index,
//! a condition, `-`, an integer operand — stops the run with an error: the
//! kernel is then not *generic* (it relies on more than associativity and
//! identity), and the theorem does not apply.
//!
//! **Why one run decides races and divergence for the given size.** In a
//! generic run no data value ever reaches a condition or an address (checked as
//! the run goes, above), so every branch taken and every address computed is a
//! function of the thread ids, the sizes and the values that are not data; none
//! of these depends on the input. So the threads' accesses per phase are the
//! same in every run of this size, for every input: recording them in this
//! one run and checking each phase for two threads that touch one cell, at
//! least one of them writing, decides race freedom exactly. A value that is not
//! data but shared (an integer array used for control) could make a thread's
//! path depend on the order of the threads within a phase — but only by one
//! thread reading what another writes in the same phase, which is itself a
//! conflict: the first conflict of a run is reached in every order of the
//! threads, since everything before it is order-independent. Barrier
//! divergence is decided the same way (the interpreter stops when threads
//! disagree on a condition around a barrier, `par.rs`).

use super::{Error, Frame, Interp, Value};
use crate::ast::{ExprKind, Span, Stmt, StmtKind};
use std::collections::HashMap;

/// An element of the interval-of-summands monoid: `ε` (the empty sum), the sum
/// of the inputs `i..=j` in order, or `⊤` (a sum that is not of consecutive
/// inputs in order, which no monoid law can make into one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summand {
    Empty,
    Interval(i64, i64),
    Top,
}

impl Summand {
    /// The monoid's operator: `ε` is the identity; `[i, j] ⊕ [j+1, l] = [i, l]`;
    /// everything else is `⊤`.
    pub fn combine(self, other: Summand) -> Summand {
        match (self, other) {
            (Summand::Empty, x) | (x, Summand::Empty) => x,
            (Summand::Interval(i, j), Summand::Interval(k, l)) if j.checked_add(1) == Some(k) => Summand::Interval(i, l),
            _ => Summand::Top,
        }
    }
}

impl std::fmt::Display for Summand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Summand::Empty => write!(f, "ε"),
            Summand::Interval(i, j) => write!(f, "[{i}, {j}]"),
            Summand::Top => write!(f, "⊤"),
        }
    }
}

/// Why `x ⊕ y` is `⊤` for two sums of inputs in order.
pub fn why_top(x: Summand, y: Summand) -> &'static str {
    match (x, y) {
        (Summand::Interval(i, _), Summand::Interval(_, l)) if l.checked_add(1) == Some(i) => {
            "the operands are swapped: the right one's inputs come first (right only for a commutative operator)"
        }
        (Summand::Interval(i, j), Summand::Interval(k, l)) if k <= j && i <= l => "the operands overlap: an input is counted twice",
        (Summand::Interval(_, j), Summand::Interval(k, _)) if j < k => "inputs between the operands are left out",
        _ => "the operands are not adjacent sums in order",
    }
}

/// One of the two accesses of a race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The thread, as its par iterators' values (`tid = 3`).
    pub thread: String,
    pub write: bool,
    pub span: Span,
}

/// Two threads touching one cell in one phase, at least one writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The array's name where the run knows it (a kernel parameter), else `None`.
    pub array: Option<String>,
    pub index: i64,
    pub first: Access,
    pub second: Access,
}

/// What a cell saw in the current phase: its writer, and up to two readers of
/// distinct threads (enough to find a reader other than any later writer).
#[derive(Default)]
struct CellLog {
    writer: Option<(usize, Span)>,
    readers: Vec<(usize, Span)>,
}

/// The state of a generic run (see the module doc); [`Interp::generic`].
#[derive(Default)]
pub struct GenericRun {
    /// The pure function standing for the operator, besides `+`.
    pub operator: Option<String>,
    /// Kernel arrays by identity, for reports.
    pub array_names: HashMap<usize, String>,
    /// The thread running now (an index into `thread_names`), inside a `par`.
    thread: Option<usize>,
    thread_names: Vec<String>,
    phase: HashMap<(usize, i64), CellLog>,
    /// The first race found (the run stops there).
    pub race: Option<Race>,
    /// The statement being run, to place an error.
    pub at: Option<Span>,
    /// The first combination of two sums that made `⊤`: the operands and the
    /// statement (the usual root of a wrong result, see [`why_top`]).
    pub first_top: Option<(Summand, Summand, Span)>,
    /// Ghost locals left out ([`Interp::skips_ghost`]), by name.
    ghost_locals: std::collections::HashSet<String>,
}

/// Whether `e` reads one of `names`.
fn mentions_any(e: &crate::ast::Expr, names: &std::collections::HashSet<String>) -> bool {
    struct Find<'a>(&'a std::collections::HashSet<String>, bool);
    impl crate::ast::visit::Visitor for Find<'_> {
        fn visit_expr(&mut self, e: &crate::ast::Expr) {
            if let ExprKind::Var(x) = &e.kind {
                self.1 |= self.0.contains(x.as_str());
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let mut f = Find(names, false);
    crate::ast::visit::Visitor::visit_expr(&mut f, e);
    f.1
}

/// The address of an array, its identity in the logs.
pub fn array_id(a: &std::rc::Rc<std::cell::RefCell<Vec<Value>>>) -> usize {
    std::rc::Rc::as_ptr(a) as *const () as usize
}

impl GenericRun {
    /// A generic run; `operator` is the pure function that stands for the
    /// monoid's operator besides `+`.
    pub fn new(operator: Option<String>) -> GenericRun {
        GenericRun { operator, ..GenericRun::default() }
    }

    /// A `par` unit starts: its threads' names, in thread order.
    pub(super) fn enter_par(&mut self, names: Vec<String>) -> Result<(), Error> {
        if !self.thread_names.is_empty() {
            return Err(Error("a `par` block inside a `par` block is not supported in a generic run".into()));
        }
        self.thread_names = names;
        self.phase.clear();
        Ok(())
    }

    /// The `par` unit ended (its threads joined): the last phase is over.
    pub(super) fn leave_par(&mut self) {
        self.thread_names.clear();
        self.thread = None;
        self.phase.clear();
    }

    pub(super) fn set_thread(&mut self, t: usize) {
        self.thread = Some(t);
    }

    /// A barrier: every thread has reached it, a new phase begins.
    pub(super) fn end_phase(&mut self) {
        self.phase.clear();
    }

    /// Records an access of the running thread to cell `index` of array `id`;
    /// an error (and [`GenericRun::race`]) when it conflicts with another
    /// thread's access in this phase. Outside `par` nothing is logged.
    pub(super) fn access(&mut self, id: usize, index: i64, write: bool, span: Span) -> Result<(), Error> {
        let Some(t) = self.thread else { return Ok(()) };
        let log = self.phase.entry((id, index)).or_default();
        let other = match log.writer {
            Some((w, ws)) if w != t => Some((w, ws, true)),
            _ if write => log.readers.iter().find(|r| r.0 != t).map(|&(r, rs)| (r, rs, false)),
            _ => None,
        };
        if let Some((o, os, o_writes)) = other {
            let name = |k: usize| self.thread_names.get(k).cloned().unwrap_or_else(|| format!("thread {k}"));
            let race = Race {
                array: self.array_names.get(&id).cloned(),
                index,
                first: Access { thread: name(o), write: o_writes, span: os },
                second: Access { thread: name(t), write, span },
            };
            let kind = if write && o_writes { "write-write" } else { "read-write" };
            self.race = Some(race);
            return Err(Error(format!("data race ({kind})")));
        }
        if write {
            log.writer = Some((t, span));
        } else if log.readers.len() < 2 && log.readers.iter().all(|r| r.0 != t) {
            log.readers.push((t, span));
        }
        Ok(())
    }
}

impl Interp<'_> {
    /// `op` on two values in a generic run: `Some` when a data value is involved
    /// (the monoid's operator for `+` on two data values, else the error that
    /// the kernel is not generic), `None` when neither is data.
    pub(super) fn generic_binary(&mut self, op: crate::ast::BinOp, a: &Value, b: &Value) -> Option<Result<Value, Error>> {
        self.generic.as_ref()?;
        match (op, a, b) {
            (crate::ast::BinOp::Add, Value::Summand(x), Value::Summand(y)) => Some(Ok(self.combine(*x, *y))),
            (_, Value::Summand(_), _) | (_, _, Value::Summand(_)) => Some(Err(Error(format!(
                "a data value meets `{}` with {} and {}: a generic kernel combines data only with the operator",
                op.symbol(),
                a.deep(),
                b.deep()
            )))),
            _ => None,
        }
    }

    /// A call of the operator function on two data values, in a generic run.
    pub(super) fn generic_call(&mut self, name: &str, args: &[Value]) -> Option<Value> {
        let g = self.generic.as_ref()?;
        match args {
            [Value::Summand(x), Value::Summand(y)] if g.operator.as_deref() == Some(name) => Some(self.combine(*x, *y)),
            _ => None,
        }
    }

    /// The monoid's operator, remembering where `⊤` was first made.
    fn combine(&mut self, x: Summand, y: Summand) -> Value {
        let r = x.combine(y);
        if let Some(g) = &mut self.generic {
            if r == Summand::Top && x != Summand::Top && y != Summand::Top && g.first_top.is_none() {
                g.first_top = Some((x, y, g.at.unwrap_or(Span::DUMMY)));
            }
        }
        Value::Summand(r)
    }

    /// What a store of `v` over `old` writes in a generic run: the literal `0`
    /// over a data value is the identity; another integer over a data value is
    /// not generic.
    pub(super) fn generic_store(&self, old: &Value, v: Value) -> Result<Value, Error> {
        match (&self.generic, old, &v) {
            (Some(_), Value::Summand(_), Value::Int(0)) => Ok(Value::Summand(Summand::Empty)),
            (Some(_), Value::Summand(_), Value::Int(k)) => {
                Err(Error(format!("the integer {k} is written over a data value: a generic kernel writes only data (or 0, the identity)")))
            }
            _ => Ok(v),
        }
    }

    /// Whether `s` is ghost code a generic run leaves out: a local of a
    /// mathematical type (`seq`, `set`, `bag`, `map`, `option`, tuple) and
    /// assignments to it, and an `if` on such a local whose branches hold only
    /// ghost code (specification statements, lemma calls, such locals). These
    /// describe the data for the proof (VerCors programs keep the input as a
    /// `seq<int>`), and over summands they would not compute. Leaving them out
    /// is safe: a statement that is run and reads such a local fails (an
    /// unknown name), which refuses the kernel.
    pub(super) fn skips_ghost(&mut self, f: &mut Frame, s: &Stmt) -> Result<bool, Error> {
        let Some(g) = &mut self.generic else { return Ok(false) };
        match &s.kind {
            StmtKind::LocalDecl { ty, name, .. } if ty.kind.is_mathematical() => {
                g.ghost_locals.insert(name.name.to_string());
                Ok(true)
            }
            StmtKind::Assign { target, .. } => Ok(matches!(&target.kind, ExprKind::Var(x) if g.ghost_locals.contains(x.as_str()))),
            StmtKind::If { cond, then_branch, else_branch } if mentions_any(cond, &g.ghost_locals) => {
                let mut ghost = self.ghost_only(f, then_branch)?;
                if let Some(e) = else_branch {
                    ghost = ghost && self.ghost_only(f, e)?;
                }
                Ok(ghost)
            }
            _ => Ok(false),
        }
    }

    /// Whether `s` only does what a proof does: specification statements,
    /// lemma calls, ghost locals.
    fn ghost_only(&mut self, f: &mut Frame, s: &Stmt) -> Result<bool, Error> {
        Ok(match &s.kind {
            StmtKind::Spec { .. } => true,
            StmtKind::Block(b) => {
                for s in &b.stmts {
                    if !self.ghost_only(f, s)? {
                        return Ok(false);
                    }
                }
                true
            }
            StmtKind::Expr(e) => match &e.kind {
                ExprKind::Call { receiver, method, .. } => {
                    let (class, _) = self.callee(f, receiver.as_deref(), method.as_str())?;
                    self.is_lemma(&class, method.as_str())?
                }
                _ => false,
            },
            StmtKind::If { then_branch, else_branch, .. } => {
                self.ghost_only(f, then_branch)? && else_branch.as_ref().map_or(Ok(true), |e| self.ghost_only(f, e))?
            }
            StmtKind::LocalDecl { ty, .. } => ty.kind.is_mathematical(),
            StmtKind::Assign { target, .. } => {
                matches!(&target.kind, ExprKind::Var(x) if self.generic.as_ref().is_some_and(|g| g.ghost_locals.contains(x.as_str())))
            }
            _ => false,
        })
    }

    /// Logs an access to cell `index` of array `a` (see [`GenericRun::access`]).
    pub(super) fn log_access(&mut self, a: &Value, index: i64, write: bool, span: Span) -> Result<(), Error> {
        match (&mut self.generic, a) {
            (Some(g), Value::Array(arr)) => g.access(array_id(arr), index, write, span),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Summand::{self, *};

    #[test]
    fn the_interval_monoid() {
        assert_eq!(Interval(0, 2).combine(Interval(3, 5)), Interval(0, 5));
        assert_eq!(Interval(3, 5).combine(Interval(0, 2)), Top, "order matters");
        assert_eq!(Interval(0, 2).combine(Interval(2, 5)), Top, "overlap");
        assert_eq!(Interval(0, 1).combine(Interval(3, 5)), Top, "gap");
        assert_eq!(Empty.combine(Interval(1, 1)), Interval(1, 1));
        assert_eq!(Interval(1, 1).combine(Empty), Interval(1, 1));
        assert_eq!(Top.combine(Empty), Top);
        assert_eq!(Top.combine(Interval(0, 0)), Top);
        assert_eq!(Interval(0, 0).combine(Top), Top);
        // Associative on a sample of elements.
        let xs: Vec<Summand> = vec![Empty, Top, Interval(0, 0), Interval(1, 1), Interval(0, 1), Interval(2, 3), Interval(1, 3)];
        for &a in &xs {
            for &b in &xs {
                for &c in &xs {
                    assert_eq!(a.combine(b).combine(c), a.combine(b.combine(c)), "{a} {b} {c}");
                }
            }
        }
    }
}
