//! GPUVerify's barrier invariants (Chong, Donaldson, Kelly, Ketema, Qadeer,
//! "Barrier invariants: a shared state abstraction for the analysis of
//! data-dependent GPU kernels", OOPSLA 2013): `__barrier_invariant_N(φ, e1,
//! …, eN)` written just before a barrier says that φ holds for every thread
//! of the group at the barrier; after the barrier, each thread may assume φ
//! as it holds for the threads `e1`, …, `eN` (evaluated by the thread), which
//! tells it about values other threads wrote.
//!
//! # Why this is sound
//!
//! 1. **What φ may say.** φ is evaluated "as thread u" by replacing the local
//!    id, so it may mention only what is the same for every thread or is
//!    derived from the id: the local and global ids, kernel parameters,
//!    shared and global arrays, constants, `__implies` and `__ite`. A thread's
//!    own variables (whose values for thread u are unknown), `__other_…` and
//!    the log functions are refused (`alpine::races::unsupported`). Groups
//!    must be one-dimensional (as in GPUVerify), so the instance is the x id.
//! 2. **The assertion.** At the barrier each thread proves φ for itself in
//!    its own view of memory. That view agrees with memory at the barrier on
//!    every element the thread accessed (not atomically) since the last
//!    barrier: any other thread's write of such an element is a race with the
//!    thread's access, which the pair (thread, writer) reports. So every
//!    element φ reads must have been accessed (GPUVerify's barrier access
//!    check; `__read_permission(T, X)` reads X for that purpose), which is
//!    proved too: each thread keeps, per array, the set of elements it
//!    accessed since the last barrier (`Region::acc`, only in kernels with
//!    barrier invariants). A set havocked by a loop is arbitrary, so the check
//!    then fails — incomplete, never unsound.
//! 3. **The instantiation.** After the barrier's havoc, memory is what every
//!    thread of the group sees (`memory.rs`), and φ held there for every
//!    thread; so for each instance `e` with `0 ≤ e < local size`, φ with the
//!    local id `e` is assumed, for the threads that passed the barrier. The
//!    barrier must fence every space φ reads (else views would keep stale
//!    values, which an assumption about the real contents could contradict).
//! 4. A barrier invariant must be followed by its barrier (other barrier
//!    invariants aside); binary invariants (`__barrier_invariant_binary_N`)
//!    are not supported.

use super::exec::{Exec, R};
use super::report::Goal;
use super::state::Binding;
use super::value::{offset, Val};
use crate::ast::Span;
use crate::cfront::ir::{AddressSpace, Expr, ExprKind, Module, Stmt, StmtKind, VarKind};
use z3::ast::{Array, Ast, Bool, BV};

/// What evaluating a barrier invariant checks at each memory read.
#[derive(Clone)]
pub(crate) enum InvariantRead {
    /// Asserting φ for the thread itself: the element was accessed (item 2).
    Accessed { span: Span },
    /// Assuming φ for other threads after the barrier: the space is fenced
    /// (item 3); `[shared, global]`.
    Fenced { fenced: [bool; 2], span: Span },
}

/// A barrier invariant waiting for its barrier.
#[derive(Clone)]
pub(crate) struct Pending {
    pub(crate) args: Vec<Expr>,
    pub(crate) span: Span,
}

/// Whether any function of `module` has a barrier invariant (only then are
/// accessed sets kept).
pub(crate) fn uses_barrier_invariants(module: &Module) -> bool {
    module.functions.iter().flat_map(|f| f.body.iter().flatten()).any(|s| {
        super::exec::any_stmt(s, &|s| {
            matches!(&s.kind, StmtKind::Annotation { kind: crate::cfront::ir::AnnotationKind::BarrierInvariant { .. }, .. })
        })
    })
}

/// The empty set of accessed elements.
pub(crate) fn no_access() -> Array {
    Array::const_array(&z3::Sort::bitvector(super::value::OFFSET_BITS), &Bool::from_bool(false))
}

impl Exec<'_, '_> {
    /// Records a barrier invariant (item 4: its barrier must follow).
    pub(crate) fn barrier_invariant(&mut self, binary: bool, args: &[Expr], span: Span) -> R<()> {
        if binary {
            return Err(self.unsupported(span, "binary barrier invariants (`__barrier_invariant_binary_N`)"));
        }
        if args.len() < 2 {
            return Err(self.unsupported(span, "a barrier invariant without instances"));
        }
        self.check_invariant_terms(&args[0])?;
        self.pending_invariants.push(Pending { args: args.to_vec(), span });
        Ok(())
    }

    /// Item 1: only thread-independent terms and the thread's ids in φ.
    fn check_invariant_terms(&self, phi: &Expr) -> R<()> {
        let in_kernel = self.frames.len() <= 1;
        let mut bad: Option<(Span, String)> = None;
        super::expr::walk(phi, &mut |x| {
            if bad.is_some() {
                return;
            }
            match &x.kind {
                ExprKind::Var { name, kind } => {
                    let ok = match self.st.lookup(name) {
                        Some(Binding::Memory { scalar: false, .. }) => true,
                        Some(Binding::Scalar { .. }) => in_kernel && matches!(kind, VarKind::Param | VarKind::Global),
                        _ => false,
                    };
                    if !ok {
                        bad = Some((x.span, format!("a barrier invariant that mentions `{name}` (only the thread's ids, kernel parameters and shared or global arrays may appear: φ is read as other threads)")));
                    }
                }
                ExprKind::Spec { name, .. } if !matches!(name.as_str(), "__implies" | "__ite") => {
                    bad = Some((x.span, format!("`{name}` in a barrier invariant")));
                }
                ExprKind::Call { .. } | ExprKind::Assign { .. } | ExprKind::IncDec { .. } | ExprKind::Atomic { .. } => {
                    bad = Some((x.span, "a call or a side effect in a barrier invariant".to_string()));
                }
                _ => {}
            }
        });
        match bad {
            Some((span, what)) => Err(self.unsupported(span, &what)),
            None => Ok(()),
        }
    }

    /// Before the statement `s` runs: a pending barrier invariant may only be
    /// followed by its barrier or by more barrier invariants.
    pub(crate) fn check_pending(&self, s: &Stmt) -> R<()> {
        let Some(p) = self.pending_invariants.first() else { return Ok(()) };
        let ok = match &s.kind {
            StmtKind::Barrier(b) => !matches!(b, crate::cfront::ir::Barrier::Warp { .. }),
            StmtKind::Annotation { kind, .. } => matches!(kind, crate::cfront::ir::AnnotationKind::BarrierInvariant { .. }),
            StmtKind::Empty => true,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.unsupported(p.span, "a barrier invariant that is not followed by a block barrier"))
        }
    }

    /// Item 2, at the barrier before its effect: each thread proves φ for
    /// itself, reading only elements it accessed.
    pub(crate) fn assert_barrier_invariants(&mut self, pending: &[Pending]) -> R<()> {
        for p in pending {
            let was = self.invariant_read.replace(InvariantRead::Accessed { span: p.span });
            let v = self.eval_annotation(&p.args[0]);
            self.invariant_read = was;
            for (t, v) in v?.iter().enumerate() {
                let goal = self.pred[t].implies(v);
                self.prove(goal, Goal::Assert { span: p.span, what: "barrier invariant", thread: t });
            }
        }
        Ok(())
    }

    /// Item 3, after the barrier's effect: φ for each instance.
    pub(crate) fn assume_barrier_invariants(&mut self, pending: &[Pending], fenced: [bool; 2], span: Span) -> R<()> {
        let g = &self.chk.geometry;
        let one_dimensional = g.block[1].simplify().as_u64() == Some(1) && g.block[2].simplify().as_u64() == Some(1);
        if !pending.is_empty() && !one_dimensional {
            return Err(self.unsupported(pending[0].span, "a barrier invariant in a group of more than one dimension"));
        }
        for p in pending {
            for inst in &p.args[1..] {
                let at = self.eval(inst)?;
                let ids: [BV; 2] = std::array::from_fn(|t| match &at[t] {
                    Val::Bits(b) => super::value::resize(b, 64, false),
                    _ => BV::fresh_const("instance", 64),
                });
                let saved = [self.chk.geometry.local[0][0].clone(), self.chk.geometry.local[1][0].clone()];
                for (t, id) in ids.iter().enumerate() {
                    self.chk.geometry.local[t][0] = id.clone();
                }
                let was = self.invariant_read.replace(InvariantRead::Fenced { fenced, span });
                let v = self.eval_annotation(&p.args[0]);
                self.invariant_read = was;
                for (t, id) in saved.into_iter().enumerate() {
                    self.chk.geometry.local[t][0] = id;
                }
                let block = self.chk.geometry.block[0].clone();
                for (t, v) in v?.iter().enumerate() {
                    let fact = Bool::and(&[self.pred[t].clone(), ids[t].bvult(&block)]).implies(v);
                    self.assume(&fact);
                }
            }
        }
        Ok(())
    }

    /// A read while evaluating a barrier invariant (see [`InvariantRead`]).
    pub(crate) fn invariant_read_check(&mut self, r: usize, t: usize, off: &BV, size: u64, guard: &Bool) -> R<()> {
        let Some(mode) = self.invariant_read.clone() else { return Ok(()) };
        let region = self.st.regions[r].clone();
        if region.init.is_some() || region.space == AddressSpace::Constant {
            return Ok(());
        }
        match mode {
            InvariantRead::Fenced { fenced, span } => {
                let ok = match region.space {
                    AddressSpace::Shared => fenced[0],
                    AddressSpace::Global => fenced[1],
                    _ => false,
                };
                if !ok {
                    return Err(
                        self.unsupported(span, &format!("a barrier invariant about `{}`, which its barrier does not fence", region.name))
                    );
                }
            }
            InvariantRead::Accessed { span } => {
                if region.space == AddressSpace::Private {
                    return Err(self.unsupported(span, "a barrier invariant that reads private memory"));
                }
                let accessed = match (region.acc, &region.elem) {
                    (Some(acc), Some((_, esize))) if *esize == size => match &self.st.slots[acc[t]] {
                        Val::Mem(set) => {
                            let hit = set.select(&off.bvudiv(offset(size))).as_bool().unwrap_or(Bool::from_bool(false));
                            Bool::and(&[hit, off.bvurem(offset(size)).eq(offset(0))])
                        }
                        _ => Bool::from_bool(false),
                    },
                    _ => Bool::from_bool(false),
                };
                self.chk.prove(guard.implies(&accessed), Goal::BarrierInvariantAccess { span, array: region.name.clone() });
            }
        }
        Ok(())
    }

    /// Thread `t` accessed `[off, off + size)` of region `r` (not atomically).
    pub(crate) fn mark_accessed(&mut self, r: usize, t: usize, off: &BV, size: u64, guard: &Bool) {
        let region = &self.st.regions[r];
        let (Some(acc), Some((_, esize))) = (region.acc, &region.elem) else { return };
        if *esize != size {
            return; // nothing recorded: a later check fails, which is safe
        }
        let Val::Mem(set) = self.st.slots[acc[t]].clone() else { return };
        let aligned = off.bvurem(offset(size)).eq(offset(0));
        let marked = set.store(&off.bvudiv(offset(size)), &Bool::from_bool(true));
        let g = Bool::and(&[guard.clone(), aligned]);
        self.st.slots[acc[t]] = Val::Mem(g.ite(&marked, &set));
    }
}
