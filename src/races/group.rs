//! OpenCL's asynchronous work-group copies (`async_work_group_copy`,
//! `async_work_group_strided_copy`) and `wait_group_events`, modelled as
//! GPUVerify models them (`RaceInstrumenter.cs`, `FindOrCreateAsyncWorkGroupCopy`
//! and the handling of `wait_group_events`).
//!
//! A copy is a work-group function: every work-item of the group calls it with
//! the same arguments, and the group (not one work-item) copies `n` elements
//! from the source to the destination at some time before the copy's event is
//! waited for. The model:
//!
//! 1. **Uniformity.** Both threads of one group reach the call together, with
//!    equal destination, source, count, stride and event (asserted, a located
//!    divergence error otherwise), as GPUVerify's preconditions say.
//! 2. **Who copies what.** Each element is copied by some work-item of the
//!    group: an arbitrary *owner* id, the same for two threads of one group,
//!    is chosen; a thread whose id is the owner reads `src[j]` and writes
//!    `dst[j]` for an arbitrary `j < n` (strided on the global side). These
//!    accesses go through the ordinary logs and checks (`memory.rs`), so a
//!    race of any work-item with any element of the copy is found: for an
//!    access of work-item T to element j of a copy of T's group, the pair
//!    (owner ≠ T, T) with that `j` is one of the pairs checked — which needs a
//!    group of at least two work-items, so that is asserted at the call (a
//!    group of one would hide races with its own copy); for another group's
//!    work-item, or two copies, the two owners are independent.
//! 3. **Pending until waited.** The copy's accesses are logged with its event.
//!    A barrier empties a log only if the logged access is not pending
//!    (`barrier_effect`); `wait_group_events` marks the logs of the events it
//!    waits for as no longer pending (its count must be a constant to name
//!    them; otherwise nothing is marked, which only keeps more logs). So the
//!    copied data may be used by other work-items after wait and barrier,
//!    exactly GPUVerify's rule; without the wait, the barrier orders nothing.
//!    `wait_group_events` is a work-group function too: reached by both
//!    threads of a group alike, with equal events.
//! 4. **Events.** `event_t` values are 64-bit values; a copy given the event
//!    0 returns a fresh non-zero event (the same in one group), otherwise the
//!    event it was given (chained copies share it). Two fresh events may be
//!    equal or not: both cases are checked, so a wait for one copy never
//!    hides another.
//! 5. **Values.** The destination's elements become unknown to the owner (and,
//!    after the barrier that makes them visible, to everyone), the written
//!    value is a fresh one for the logs (never a benign write-write pair).
//!    Source and destination are in different address spaces (the functions'
//!    types), so the copy's read and write never meet in one array.

use super::exec::{and2, Exec, R};
use super::report::Goal;
use super::value::{fresh_of, offset, resize, size_of, Val, OFFSET_BITS};
use super::vc::AccessKind;
use crate::ast::Span;
use crate::cfront::ir::{AddressSpace, Expr, Type};
use z3::ast::{Ast, Bool, BV};

/// The work-group functions this module models.
pub(crate) fn is_group_function(name: &str) -> bool {
    matches!(name, "async_work_group_copy" | "async_work_group_strided_copy" | "wait_group_events")
}

fn pointee(ty: &Type) -> Option<(&Type, AddressSpace)> {
    match ty {
        Type::Pointer { pointee, space } => Some((pointee, *space)),
        _ => None,
    }
}

impl Exec<'_, '_> {
    /// A call of a work-group function, its arguments evaluated.
    pub(crate) fn group_call(&mut self, callee: &str, args: &[Expr], vals: &[[Val; 2]], span: Span) -> R<[Val; 2]> {
        if callee == "wait_group_events" {
            return self.wait_group_events(args, vals, span);
        }
        let strided = callee == "async_work_group_strided_copy";
        if args.len() != if strided { 5 } else { 4 } {
            return Err(self.unsupported(span, &format!("this call of `{callee}`")));
        }
        let (Some((dst_elem, dst_space)), Some((src_elem, _))) = (pointee(&args[0].ty), pointee(&args[1].ty)) else {
            return Err(self.unsupported(span, &format!("this call of `{callee}`")));
        };
        let module = self.chk.module;
        let size = size_of(module, dst_elem).filter(|s| Some(*s) == size_of(module, src_elem));
        let Some(size) = size else { return Err(self.unsupported(span, "a copy between elements of different sizes")) };
        let elem = dst_elem.clone();
        self.group_entry(span, vals, "a work-group copy")?;
        let g = self.chk.geometry.clone();
        // A group of one would copy to itself unchecked (see the module doc).
        let two = g.block[0].bvmul(&g.block[1]).bvmul(&g.block[2]).bvuge(offset(2));
        for t in 0..2 {
            let goal = self.pred[t].implies(&two);
            self.prove(goal, Goal::GroupCall { span, what: "an asynchronous copy needs work-groups of at least two work-items" });
        }
        let count = |v: &Val| match v {
            Val::Bits(b) => Some(resize(b, OFFSET_BITS, false)),
            _ => None,
        };
        let n: Option<Vec<BV>> = (0..2).map(|t| count(&vals[2][t])).collect();
        let Some(n) = n else { return Err(self.unsupported(span, "a copy of an untracked number of elements")) };
        let stride: Vec<BV> = if strided {
            let s: Option<Vec<BV>> = (0..2).map(|t| count(&vals[3][t])).collect();
            s.ok_or_else(|| self.unsupported(span, "a copy with an untracked stride"))?
        } else {
            vec![offset(1), offset(1)]
        };
        // The event: the one given, or a fresh one for the group.
        let event = &vals[if strided { 4 } else { 3 }];
        let fresh = [BV::fresh_const("event", 64), BV::fresh_const("event", 64)];
        let zero = BV::from_u64(0, 64);
        let same_group = g.same_group();
        self.assume(&same_group.implies(fresh[0].eq(&fresh[1])));
        let mut handle: Vec<BV> = Vec::new();
        for (t, f) in fresh.iter().enumerate() {
            self.assume(&f.eq(&zero).not());
            let h = match &event[t] {
                Val::Bits(e) if e.get_size() == 64 => e.eq(&zero).ite(f, e),
                _ => f.clone(),
            };
            handle.push(h);
        }
        let handle: [BV; 2] = [handle[0].clone(), handle[1].clone()];
        // The owner of the elements (one work-item id per group) and the
        // element each thread copies when it is the owner.
        let owner: [[BV; 3]; 2] = std::array::from_fn(|_| std::array::from_fn(|_| BV::fresh_const("copy_owner", 64)));
        for (a, b) in owner[0].iter().zip(&owner[1]) {
            self.assume(&same_group.implies(a.eq(b)));
        }
        let index = [BV::fresh_const("copy_index", OFFSET_BITS), BV::fresh_const("copy_index", OFFSET_BITS)];
        let owns: [Bool; 2] = std::array::from_fn(|t| {
            let mine = Bool::and(&(0..3).map(|i| owner[t][i].eq(&g.local[t][i])).collect::<Vec<_>>());
            Bool::and(&[mine, index[t].bvult(&n[t])])
        });
        // The global side is the strided one.
        let dst_strided = dst_space == AddressSpace::Global;
        let at = |p: &Val, t: usize, strided_side: bool| -> Val {
            let step = if strided_side { index[t].bvmul(&stride[t]) } else { index[t].clone() };
            match p {
                Val::Ptr { base, off } => Val::Ptr { base: base.clone(), off: off.bvadd(step.bvmul(offset(size))) },
                other => other.clone(),
            }
        };
        let src: [Val; 2] = std::array::from_fn(|t| at(&vals[1][t], t, !dst_strided));
        let dst: [Val; 2] = std::array::from_fn(|t| at(&vals[0][t], t, dst_strided));
        let entry = self.pred.clone();
        self.pred = and2(&entry, &owns);
        self.copy_handle = Some(handle.clone());
        let r = self.access(&src, &elem, AccessKind::Read, None, span).and_then(|_| {
            let unknown = [fresh_of(&elem, "copied"), fresh_of(&elem, "copied")];
            let written = if matches!(unknown[0], Val::Opaque) { None } else { Some(&unknown) };
            self.access(&dst, &elem, AccessKind::Write, written, span)
        });
        self.copy_handle = None;
        self.pred = entry;
        r?;
        Ok(handle.map(Val::Bits))
    }

    /// The checks of a work-group function's entry: both threads of a group
    /// call it, with equal arguments.
    fn group_entry(&mut self, span: Span, vals: &[[Val; 2]], what: &'static str) -> R<()> {
        let same_group = self.chk.geometry.same_group();
        let goal = same_group.implies(self.pred[0].eq(&self.pred[1]));
        self.prove(goal, Goal::GroupCall { span, what: "threads of one work-group may not all reach this work-group function" });
        let both = Bool::and(&[same_group, self.pred[0].clone(), self.pred[1].clone()]);
        for v in vals {
            let Some(eq) = v[0].same(&v[1]) else { return Err(self.unsupported(span, &format!("an untracked argument of {what}"))) };
            self.prove(both.implies(&eq), Goal::GroupCall { span, what: "the arguments may differ between threads of one work-group" });
        }
        Ok(())
    }

    fn wait_group_events(&mut self, args: &[Expr], vals: &[[Val; 2]], span: Span) -> R<[Val; 2]> {
        if args.len() != 2 {
            return Err(self.unsupported(span, "this call of `wait_group_events`"));
        }
        self.group_entry(span, &vals[..1], "`wait_group_events`")?;
        let none = [Val::Opaque, Val::Opaque];
        // Without a constant count the events waited for are not named:
        // nothing is marked as waited (sound: logs only stay longer).
        let Some(count) = vals[0][0].bits().and_then(|b| b.simplify().as_u64()).filter(|&c| c <= 64) else { return Ok(none) };
        let Some((ety, _)) = pointee(&args[1].ty) else { return Err(self.unsupported(span, "this call of `wait_group_events`")) };
        let ety = ety.clone();
        let esize = size_of(self.chk.module, &ety).unwrap_or(8);
        for i in 0..count {
            let ptrs: [Val; 2] = std::array::from_fn(|t| match &vals[1][t] {
                Val::Ptr { base, off } => Val::Ptr { base: base.clone(), off: off.bvadd(offset(i * esize)) },
                other => other.clone(),
            });
            let ev = self.access(&ptrs, &ety, AccessKind::Read, None, span)?;
            self.group_entry(span, std::slice::from_ref(&ev), "`wait_group_events`")?;
            let Val::Bits(e) = &ev[0] else { continue };
            if e.get_size() != 64 {
                continue;
            }
            // Thread 1's logged accesses of this copy are no longer pending.
            let zero = BV::from_u64(0, 64);
            for r in 0..self.st.regions.len() {
                let Some(logs) = self.st.regions[r].logs else { continue };
                for log in logs {
                    let h = self.st.bv(log.handle);
                    let done = Bool::and(&[self.pred[0].clone(), h.eq(e)]);
                    self.st.slots[log.handle] = Val::Bits(done.ite(&zero, &h));
                }
            }
        }
        Ok(none)
    }
}
