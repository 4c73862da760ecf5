//! The refined abstraction of atomic counters (issue #35, item 3; the paper
//! "Warps and atomics: beyond barrier synchronization in the verification of
//! GPU kernels", and GPUVerify's refined atomic abstraction): the pattern
//! `i = atomic_inc(&count); out[i] = …` hands every thread its own cell.
//!
//! By default an atomic returns an arbitrary value (the coarse abstraction,
//! `expr.rs`), so two threads may seem to get the same index. Here, a
//! **counter** is a variable (a pointer parameter, or a global whose address
//! is taken) whose every use in the module is as the location of an
//! increment by one (`atomic_inc(p)`, `atomicAdd(p, 1)`, `atomic_add(p, 1)`).
//! Every value such increments return is returned once: each increment adds
//! one to what the previous one left, whatever the counter started at, so
//! two increments never see the same value — as long as fewer than 2^w of
//! them happen (w the counter's width: no wrap-around; an assumption, said in
//! the module doc of `races`). CUDA's `atomicInc(p, m)` wraps at `m` and is
//! not a counter's use.
//!
//! **Encoding.** The two threads run in lock-step, so each increment either
//! thread makes is seen in this run: each value a thread receives is assumed
//! different from every value the other thread has received from the same
//! counter so far, and from what the other receives in the same step. (A
//! value from an earlier loop iteration is not remembered: logs from such
//! iterations come from the loop's invariants, and are not helped, which is
//! only incomplete.) A counter in shared (`__local`) memory is one per group:
//! the facts are assumed only for two threads of the same group, since
//! threads of different groups draw from their own groups' counters. Facts
//! about a thread hold only where it runs the increment (its predicate).

use super::exec::Exec;
use super::expr::walk;
use super::value::Val;
use crate::cfront::ir::{AddressSpace, AtomicOp, Expr, ExprKind, Module, Type, UnaryOp};
use std::collections::HashMap;
use z3::ast::Bool;

/// The counter an atomic increments by one, if `e` is such an increment: the
/// variable's name.
fn incremented(e: &Expr) -> Option<&str> {
    let ExprKind::Atomic { op, args } = &e.kind else { return None };
    let by_one = match (op, args.as_slice()) {
        (AtomicOp::Inc, [_]) => true,
        (AtomicOp::Add, [_, step]) => matches!(strip(step).kind, ExprKind::Int(1)),
        _ => false,
    };
    if !by_one {
        return None;
    }
    match &strip(&args[0]).kind {
        ExprKind::Var { name, .. } => Some(name),
        ExprKind::Unary { op: UnaryOp::AddrOf, operand } => match &strip(operand).kind {
            ExprKind::Var { name, .. } => Some(name),
            _ => None,
        },
        _ => None,
    }
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast { operand, .. } => strip(operand),
        _ => e,
    }
}

/// The counters of `module` (see the module doc): names whose every
/// occurrence is the location of an increment by one.
pub(crate) fn counters(module: &Module) -> Vec<String> {
    let mut uses: HashMap<String, (usize, usize)> = HashMap::new();
    let mut count = |x: &Expr| match &x.kind {
        ExprKind::Var { name, .. } => uses.entry(name.clone()).or_default().0 += 1,
        _ => {
            if let Some(name) = incremented(x) {
                uses.entry(name.to_string()).or_default().1 += 1;
            }
        }
    };
    for f in &module.functions {
        for s in f.body.iter().flatten() {
            // Every subexpression of the statement, once each.
            let mut exprs = Vec::new();
            super::houdini::exprs_of(s, &mut exprs);
            exprs.iter().for_each(&mut count);
        }
    }
    for g in &module.globals {
        if let Some(init) = &g.init {
            walk(init, &mut count);
        }
    }
    let mut out: Vec<String> =
        uses.into_iter().filter(|(_, (all, increments))| *increments > 0 && all == increments).map(|(n, _)| n).collect();
    out.sort();
    out
}

impl Exec<'_, '_> {
    /// After the atomic `e` returned `values` to the two threads: where it
    /// increments a counter by one, the values differ from the other
    /// thread's (module doc).
    pub(crate) fn refine_counter(&mut self, e: &Expr, values: &[Val; 2]) {
        let Some(name) = incremented(e) else { return };
        if self.dry || !counters(self.chk.module).iter().any(|c| c == name) {
            return;
        }
        let ExprKind::Atomic { args, .. } = &e.kind else { return };
        let shared = matches!(args[0].ty, Type::Pointer { space: AddressSpace::Shared, .. });
        let (Val::Bits(v1), Val::Bits(v2)) = (&values[0], &values[1]) else { return };
        let now = [v1.clone(), v2.clone()];
        let seen = self.counter_values.entry(name.to_string()).or_default().clone();
        let mut facts = Vec::new();
        // This step's two values, and each against the other thread's earlier ones.
        facts.push(Bool::and(&[self.pred[0].clone(), self.pred[1].clone()]).implies(now[0].eq(&now[1]).not()));
        for t in 0..2 {
            for (ran, earlier) in &seen[1 - t] {
                facts.push(Bool::and(&[self.pred[t].clone(), ran.clone()]).implies(now[t].eq(earlier).not()));
            }
        }
        let mut fact = Bool::and(&facts);
        if shared {
            fact = self.chk.geometry.same_group().implies(&fact);
        }
        self.assume(&fact);
        let entry = self.counter_values.get_mut(name).expect("entered above");
        for (t, value) in now.into_iter().enumerate() {
            // Only where the thread ran the increment did it receive the value.
            entry[t].push((self.pred[t].clone(), value));
        }
    }
}
