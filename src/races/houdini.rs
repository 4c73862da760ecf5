//! Loop invariants without annotations: Houdini (Flanagan and Leino 2001) over
//! GPUVerify's kinds of candidate invariants.
//!
//! At each loop a list of candidates is made from the loop's syntax and the
//! variables it changes: a variable equal in both threads (so a loop with a
//! barrier does not diverge), the threads' "still iterating" flags equal, a
//! counter that only grows or only shrinks, a power of two (strides halved or
//! doubled), a counter's residue modulo its stride (`i = tid; i += stride`),
//! the loop test made non-strict, no access logged (at all; for two threads
//! of one group; of one warp, `warp.rs`; where thread 1 did not enter a loop
//! without a barrier), a logged access at the
//! offset one of the body's accesses has at the head, or with that access's
//! residue modulo a stride, no logged access of an asynchronous copy pending —
//! and the user's `__candidate_invariant`s.
//!
//! The driver runs the two-thread program with every remaining candidate
//! assumed at its loop head and checked on entry and after an iteration; the
//! candidates that can fail are dropped and the program is run again, until a
//! run drops none. Dropping candidates is always sound (fewer assumptions); in
//! the last run every assumed candidate was proved on entry and preserved, so
//! it is an invariant, and that run's verdicts on the kernel's assertions are
//! the answer. A candidate that cannot be evaluated is dropped. A run that
//! learns that an array it kept across barriers is written drops nothing (its
//! refutations rest on that wrong premise): the next run tries the same
//! candidates. Strides and moduli are constants, or terms that what is assumed
//! before the loop fixes to one value (`__requires(sz == blockDim.x)`; Z3 gives
//! the value and proves it unique).

use super::exec::{Exec, LoopShape, R};
use super::expr::{has_effects, walk};
use super::state::{Binding, Geometry};
use super::value::{is_signed, offset, resize, size_of, Val, OFFSET_BITS};
use super::vc::{CandidateKey, Checker};
use super::Options;
use crate::cfront::ir::{BinaryOp, Expr, ExprKind, Function, Module, Stmt, StmtKind, Type, UnaryOp};
use crate::diagnostics::{codes, Diagnostic};
use std::collections::BTreeSet;
use std::time::Instant;
use z3::ast::{Ast, Bool, BV};

#[derive(Debug)]
pub(crate) enum Template {
    /// A variable equal in both threads (optionally: when they share a group).
    Uniform {
        slots: [usize; 2],
        same_group: bool,
    },
    /// Two threads of one group see the same contents of an array.
    MemUniform {
        mem: [usize; 2],
    },
    /// Both threads iterate, or neither.
    Iterating {
        same_group: bool,
    },
    /// One thread's counter stays on one side of its entry value.
    Order {
        slot: usize,
        thread: usize,
        entry: BV,
        signed: bool,
        up: bool,
    },
    PowerOfTwo {
        slot: usize,
        thread: usize,
    },
    Residue {
        slot: usize,
        thread: usize,
        modulus: BV,
        entry: BV,
    },
    /// The loop test, made non-strict, for one thread.
    Bound {
        test: Expr,
        thread: usize,
    },
    /// No access logged (when the threads share a group: logs of threads of
    /// different groups are not emptied by barriers; or a warp of the given
    /// size, whose re-syncs and `__syncwarp`s empty logs, `warp.rs`).
    NoAccess {
        has: usize,
        same_group: bool,
    },
    NoAccessInWarp {
        has: usize,
        size: u64,
    },
    /// No access logged where thread 1 did not enter the loop and the threads
    /// share a group (a loop under a thread-dependent condition, after a
    /// barrier: the threads outside keep their empty logs while the others'
    /// logs fill).
    NoAccessOutside {
        has: usize,
    },
    /// The logged access is not one of a pending asynchronous copy.
    NotPending {
        handle: usize,
    },
    /// A logged access has the size of one of the loop's accesses (the size
    /// slot is havocked with the rest of the log).
    LogSize {
        has: usize,
        size: usize,
        sizes: Vec<u64>,
    },
    AccessAt {
        has: usize,
        off: usize,
        address: Expr,
    },
    /// The logged write stored the value an assignment of the loop stores now
    /// (for benign write-write races in loops).
    LogValue {
        has: usize,
        value: usize,
        written: Expr,
    },
    AccessResidue {
        has: usize,
        off: usize,
        modulus: BV,
        entry: BV,
    },
    /// The logged offset lies between the access's offset on entry and its
    /// offset now (an access that moves up by a loop counter).
    AccessBetween {
        has: usize,
        off: usize,
        entry: BV,
        address: Expr,
    },
    User(Expr),
}

/// Every statement and expression under `s`.
pub(crate) fn exprs_of(s: &Stmt, out: &mut Vec<Expr>) {
    let mut add = |e: &Expr| walk(e, &mut |x| out.push(x.clone()));
    match &s.kind {
        StmtKind::Decl(v) => {
            if let Some(i) = &v.init {
                add(i)
            }
        }
        StmtKind::Expr(e) => add(e),
        StmtKind::Return(Some(e)) => add(e),
        StmtKind::Block(b) => b.iter().for_each(|s| exprs_of(s, out)),
        StmtKind::If { cond, then, otherwise } => {
            add(cond);
            exprs_of(then, out);
            if let Some(o) = otherwise {
                exprs_of(o, out);
            }
        }
        StmtKind::While { cond, body, .. } | StmtKind::DoWhile { cond, body, .. } => {
            add(cond);
            exprs_of(body, out);
        }
        StmtKind::For { init, cond, step, body, .. } => {
            init.iter().for_each(|s| exprs_of(s, out));
            if let Some(c) = cond {
                walk(c, &mut |x| out.push(x.clone()));
            }
            if let Some(c) = step {
                walk(c, &mut |x| out.push(x.clone()));
            }
            exprs_of(body, out);
        }
        StmtKind::Switch { scrutinee, arms } => {
            add(scrutinee);
            arms.iter().for_each(|a| a.body.iter().for_each(|s| exprs_of(s, out)));
        }
        _ => {}
    }
}

fn var_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Var { name, .. } => Some(name),
        ExprKind::Cast { operand, implicit: true } => var_name(operand),
        _ => None,
    }
}

/// `v` as a constant greater than 1 (a useful modulus), if it is one.
fn constant(v: &BV) -> Option<BV> {
    let c = v.simplify();
    c.as_u64().filter(|&n| n > 1).map(|_| c)
}

/// Whether `name` counts up (`+=`) in the loop.
fn step_direction(name: &str, exprs: &[Expr]) -> Option<bool> {
    exprs.iter().find_map(|e| match &e.kind {
        ExprKind::Assign { op: Some(op @ (BinaryOp::Add | BinaryOp::Sub)), target, .. } if var_name(target) == Some(name) => {
            Some(*op == BinaryOp::Add)
        }
        ExprKind::IncDec { increment, target, .. } if var_name(target) == Some(name) => Some(*increment),
        ExprKind::Assign { op: None, target, value } if var_name(target) == Some(name) => match &value.kind {
            ExprKind::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub), lhs, .. } if var_name(lhs) == Some(name) => {
                Some(*op == BinaryOp::Add)
            }
            _ => None,
        },
        _ => None,
    })
}

/// The strides of `name` in the loop: `name += e`, `name -= e`,
/// `name = name + e`, `name++` (a stride of 1).
fn strides(name: &str, exprs: &[Expr]) -> Vec<Expr> {
    let mut out = Vec::new();
    for e in exprs {
        match &e.kind {
            ExprKind::Assign { op: Some(BinaryOp::Add | BinaryOp::Sub), target, value } if var_name(target) == Some(name) => {
                out.push((**value).clone())
            }
            ExprKind::Assign { op: None, target, value } if var_name(target) == Some(name) => {
                if let ExprKind::Binary { op: BinaryOp::Add | BinaryOp::Sub, lhs, rhs } = &value.kind {
                    if var_name(lhs) == Some(name) {
                        out.push((**rhs).clone());
                    }
                }
            }
            ExprKind::IncDec { target, .. } if var_name(target) == Some(name) => {
                out.push(Expr { kind: ExprKind::Int(1), ty: target.ty.clone(), span: e.span });
            }
            _ => {}
        }
    }
    out.retain(|e| !has_effects(e));
    out
}

impl Exec<'_, '_> {
    /// `v` as a constant greater than 1 (a useful modulus), if it is one or
    /// what is assumed at this point fixes it (`__requires(sz == blockDim.x)`).
    fn forced_modulus(&mut self, v: &BV) -> Option<BV> {
        if let Some(c) = constant(v) {
            return Some(c);
        }
        let n = self.chk.forced(v).filter(|&n| n > 1)?;
        Some(BV::from_u64(n, v.get_size()))
    }

    fn pure<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> Option<T> {
        let was = std::mem::replace(&mut self.pure_eval, true);
        let r = f(self);
        self.pure_eval = was;
        r.ok()
    }

    /// The candidates of one loop, made at its entry (before the havoc).
    pub(crate) fn templates(&mut self, lp: &LoopShape, modified: &[usize], invariants: &[Stmt], _entered: &[Bool; 2]) -> R<Vec<Template>> {
        let mut exprs = Vec::new();
        exprs_of(lp.body, &mut exprs);
        for e in lp.cond.iter().chain(lp.step.iter()) {
            walk(e, &mut |x| exprs.push(x.clone()));
        }
        let mut out = Vec::new();
        out.push(Template::Iterating { same_group: false });
        out.push(Template::Iterating { same_group: true });
        if let Some(f) = self.frames.last() {
            if modified.contains(&f.returned[0]) {
                out.push(Template::Uniform { slots: f.returned, same_group: false });
                out.push(Template::Uniform { slots: f.returned, same_group: true });
            }
        }
        let scalars: Vec<(String, [usize; 2], Type)> = self
            .st
            .scopes
            .iter()
            .flat_map(|s| s.iter())
            .filter_map(|(n, b)| match b {
                Binding::Scalar { slots, ty } if modified.contains(&slots[0]) || modified.contains(&slots[1]) => {
                    Some((n.clone(), *slots, ty.clone()))
                }
                _ => None,
            })
            .collect();
        for (name, slots, ty) in &scalars {
            out.push(Template::Uniform { slots: *slots, same_group: false });
            out.push(Template::Uniform { slots: *slots, same_group: true });
            let Type::Int { .. } = ty else { continue };
            let steps: Vec<Expr> = strides(name, &exprs);
            for t in 0..2 {
                let Val::Bits(entry) = self.st.slots[slots[t]].clone() else { continue };
                for up in [true, false] {
                    out.push(Template::Order { slot: slots[t], thread: t, entry: entry.clone(), signed: is_signed(ty), up });
                }
                out.push(Template::PowerOfTwo { slot: slots[t], thread: t });
                for step in &steps {
                    let Some(v) = self.pure(|x| x.eval(step)) else { continue };
                    let Val::Bits(m) = &v[t] else { continue };
                    let m = resize(m, entry.get_size(), is_signed(&step.ty));
                    // A residue modulo a term that is not a constant costs Z3
                    // a division circuit per check: only constant strides.
                    let Some(m) = self.forced_modulus(&m) else { continue };
                    out.push(Template::Residue { slot: slots[t], thread: t, modulus: m, entry: entry.clone() });
                }
            }
        }
        if let Some(ExprKind::Binary { op: BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge, .. }) = lp.cond.map(|c| &c.kind) {
            let test = lp.cond.cloned().map(|mut c| {
                if let ExprKind::Binary { op, .. } = &mut c.kind {
                    *op = match *op {
                        BinaryOp::Lt => BinaryOp::Le,
                        BinaryOp::Gt => BinaryOp::Ge,
                        other => other,
                    };
                }
                c
            });
            if let Some(test) = test.filter(|c| !has_effects(c)) {
                for thread in 0..2 {
                    out.push(Template::Bound { test: test.clone(), thread });
                }
            }
        }
        // Access logs.
        let mut sizes: Vec<u64> = exprs
            .iter()
            .filter(|e| match e.kind {
                ExprKind::Index { .. }
                | ExprKind::Unary { op: UnaryOp::Deref, .. }
                | ExprKind::Member { .. }
                | ExprKind::Swizzle { .. } => true,
                // A scalar variable that lives in memory (`__shared__ int x;`).
                ExprKind::Var { .. } => super::value::bits_of(&e.ty).is_some(),
                _ => false,
            })
            .filter_map(|e| size_of(self.chk.module, &e.ty))
            .collect();
        for e in &exprs {
            if let ExprKind::Atomic { args, .. } = &e.kind {
                if let Some(Type::Pointer { pointee, .. }) = args.first().map(|a| &a.ty) {
                    sizes.extend(size_of(self.chk.module, pointee));
                }
            }
        }
        sizes.sort_unstable();
        sizes.dedup();
        let warp_scopes = super::warp::log_scopes(lp.body, self.options);
        // A loop with a block barrier is entered alike by a group's threads.
        let block_barrier = super::warp::has_barrier(lp.body, &|b| !matches!(b, crate::cfront::ir::Barrier::Warp { .. }));
        let regions = self.st.regions.clone();
        for region in &regions {
            if let Some(mem) = region.mem.filter(|m| region.logs.is_some() && (modified.contains(&m[0]) || modified.contains(&m[1]))) {
                out.push(Template::MemUniform { mem });
            }
            let Some(logs) = region.logs else { continue };
            for log in logs {
                if modified.contains(&log.has) {
                    out.push(Template::LogSize { has: log.has, size: log.size, sizes: sizes.clone() });
                    out.push(Template::NoAccess { has: log.has, same_group: false });
                    out.push(Template::NoAccess { has: log.has, same_group: true });
                    if !block_barrier {
                        out.push(Template::NoAccessOutside { has: log.has });
                    }
                    for &size in &warp_scopes {
                        out.push(Template::NoAccessInWarp { has: log.has, size });
                    }
                }
                if modified.contains(&log.handle) {
                    out.push(Template::NotPending { handle: log.handle });
                }
            }
        }
        // The body's accesses, with its once-defined locals put in place (so
        // that `C[index]` after `int index = i + 20;` can be evaluated here).
        let defs = single_definitions(lp.body, &exprs);
        let accesses: Vec<Expr> = exprs
            .iter()
            .filter(|e| {
                matches!(e.kind, ExprKind::Index { .. } | ExprKind::Unary { op: UnaryOp::Deref, .. } | ExprKind::Member { arrow: true, .. })
            })
            .filter(|e| !has_effects(e))
            .map(|e| inline_definitions(e, &defs, 0))
            .collect();
        let accesses: Vec<&Expr> = accesses.iter().collect();
        // Strides of every counter of the loop (nested loops' too), on entry.
        let mut all_steps: Vec<BV> = Vec::new();
        for e in &exprs {
            if let ExprKind::Assign { target, .. } | ExprKind::IncDec { target, .. } = &e.kind {
                if let Some(name) = var_name(target) {
                    for step in strides(name, &exprs) {
                        if let Some(v) = self.pure(|x| x.eval(&step)) {
                            if let Val::Bits(m) = &v[0] {
                                all_steps.push(resize(m, OFFSET_BITS, is_signed(&step.ty)));
                            }
                        }
                    }
                }
            }
        }
        // Residues of the thread's own id, for every array the loop logs (an
        // access through a variable of the body cannot be evaluated here).
        {
            let g = self.chk.geometry.clone();
            let steps: Vec<u64> = all_steps.iter().filter_map(|m| constant(m).and_then(|c| c.as_u64())).collect();
            for region in &regions {
                let Some(logs) = region.logs else { continue };
                for size in &sizes {
                    for step in &steps {
                        let Some(m) = step.checked_mul(*size) else { continue };
                        let ids = [
                            g.local[0][0].bvmul(offset(*size)),
                            g.group[0][0].bvmul(&g.block[0]).bvadd(&g.local[0][0]).bvmul(offset(*size)),
                        ];
                        for log in logs.iter().filter(|l| modified.contains(&l.has)) {
                            for id in &ids {
                                out.push(Template::AccessResidue { has: log.has, off: log.off, modulus: offset(m), entry: id.clone() });
                            }
                        }
                    }
                }
            }
        }
        let mut seen: Vec<String> = Vec::new();
        for a in accesses {
            let key = format!("{:?}", a.kind);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let Some(addr) = self.pure(|x| x.address(a)) else {
                if std::env::var_os("ALPINE_RACES_DEBUG").is_some() {
                    eprintln!("races: no address at entry for {:?}", a.span);
                }
                continue;
            };
            let Val::Ptr { base, off: entry_off } = &addr[0] else { continue };
            let targets = self.regions_of(base);
            let [(r, cond)] = targets.as_slice() else { continue };
            if cond.as_bool() != Some(true) {
                continue;
            }
            let Some(logs) = self.st.regions[*r].logs else { continue };
            let size = size_of(self.chk.module, &a.ty).unwrap_or(1);
            for e in &exprs {
                if let ExprKind::Assign { op: None, target, value } = &e.kind {
                    if (std::ptr::eq(&**target, a) || format!("{:?}", target.kind) == format!("{:?}", a.kind))
                        && !has_effects(value)
                        && modified.contains(&logs[1].has)
                    {
                        out.push(Template::LogValue { has: logs[1].has, value: logs[1].value, written: (**value).clone() });
                    }
                }
            }
            // How far the access moves when one counter takes one step.
            let mut moduli: Vec<BV> = all_steps.iter().map(|m| m.bvmul(offset(size))).collect();
            for (name, slots, ty) in &scalars {
                let Val::Bits(now) = self.st.slots[slots[0]].clone() else { continue };
                for step in strides(name, &exprs) {
                    let Some(v) = self.pure(|x| x.eval(&step)) else { continue };
                    let Val::Bits(m) = &v[0] else { continue };
                    let m = resize(m, now.get_size(), is_signed(&step.ty));
                    let up = matches!(step_direction(name, &exprs), Some(true));
                    let moved = if up { now.bvadd(&m) } else { now.bvsub(&m) };
                    self.st.slots[slots[0]] = Val::Bits(moved);
                    let shifted = self.pure(|x| x.address(a));
                    self.st.slots[slots[0]] = Val::Bits(now.clone());
                    if let Some([Val::Ptr { off: moved_off, .. }, _]) = shifted {
                        moduli.push(moved_off.bvsub(entry_off));
                    }
                }
                let _ = ty;
            }
            let g = self.chk.geometry.clone();
            let ids: Vec<BV> =
                vec![g.local[0][0].bvmul(offset(size)), g.group[0][0].bvmul(&g.block[0]).bvadd(&g.local[0][0]).bvmul(offset(size))];
            let mut moduli: Vec<BV> = moduli.iter().filter_map(|m| self.forced_modulus(m)).collect();
            moduli.dedup_by(|a, b| a.as_u64() == b.as_u64());
            for log in logs {
                if !modified.contains(&log.has) {
                    continue;
                }
                out.push(Template::AccessAt { has: log.has, off: log.off, address: a.clone() });
                out.push(Template::AccessBetween { has: log.has, off: log.off, entry: entry_off.clone(), address: a.clone() });
                for m in &moduli {
                    out.push(Template::AccessResidue { has: log.has, off: log.off, modulus: m.clone(), entry: entry_off.clone() });
                    for id in &ids {
                        out.push(Template::AccessResidue { has: log.has, off: log.off, modulus: m.clone(), entry: id.clone() });
                    }
                }
            }
        }
        for s in invariants {
            if let StmtKind::Annotation { kind, args } = &s.kind {
                if super::exec::is_candidate(*kind) {
                    if let Some(e) = args.first() {
                        out.push(Template::User(e.clone()));
                    }
                }
            }
        }
        Ok(out)
    }

    /// A candidate's formula in the current state, with `iterating` the
    /// threads' iterating flags and `entered` their predicates at the loop.
    pub(crate) fn eval_template(&mut self, tpl: &Template, iterating: &[Bool; 2], entered: &[Bool; 2]) -> Option<Bool> {
        let both = Bool::and(&[entered[0].clone(), entered[1].clone()]);
        let grouped = |g: bool, f: Bool| {
            let mut guard = vec![both.clone()];
            if g {
                guard.push(self.chk.geometry.same_group());
            }
            Bool::and(&guard).implies(&f)
        };
        let bits = |x: &Self, slot: usize| x.st.slots[slot].bits().cloned();
        Some(match tpl {
            Template::Uniform { slots, same_group } => grouped(*same_group, self.st.slots[slots[0]].same(&self.st.slots[slots[1]])?),
            Template::MemUniform { mem } => {
                let same = self.st.slots[mem[0]].same(&self.st.slots[mem[1]])?;
                self.chk.geometry.same_group().implies(&same)
            }
            Template::Iterating { same_group } => grouped(*same_group, iterating[0].eq(&iterating[1])),
            Template::Order { slot, thread, entry, signed, up } => {
                let v = bits(self, *slot)?;
                let f = match (signed, up) {
                    (true, true) => v.bvsge(entry),
                    (true, false) => v.bvsle(entry),
                    (false, true) => v.bvuge(entry),
                    (false, false) => v.bvule(entry),
                };
                entered[*thread].implies(&f)
            }
            Template::PowerOfTwo { slot, thread } => {
                let v = bits(self, *slot)?;
                let w = v.get_size();
                entered[*thread].implies(v.bvand(v.bvsub(BV::from_u64(1, w))).eq(BV::from_u64(0, w)))
            }
            Template::Residue { slot, thread, modulus, entry } => {
                let v = bits(self, *slot)?;
                entered[*thread].implies(v.bvurem(modulus).eq(entry.bvurem(modulus)))
            }
            Template::Bound { test, thread } => {
                let v = self.pure(|x| x.eval_cond(test))?;
                entered[*thread].implies(&v[*thread])
            }
            Template::NoAccess { has, same_group: false } => self.st.flag(*has).not(),
            Template::NotPending { handle } => bits(self, *handle)?.eq(BV::from_u64(0, 64)),
            Template::NoAccess { has, same_group: true } => self.chk.geometry.same_group().implies(self.st.flag(*has).not()),
            Template::NoAccessOutside { has } => {
                self.chk.geometry.same_group().implies(Bool::or(&[entered[0].clone(), self.st.flag(*has).not()]))
            }
            Template::NoAccessInWarp { has, size } => self.chk.geometry.same_warp(*size).implies(self.st.flag(*has).not()),
            Template::AccessAt { has, off, address } => {
                let a = self.pure(|x| x.address(address))?;
                let Val::Ptr { off: at, .. } = &a[0] else { return None };
                self.st.flag(*has).implies(bits(self, *off)?.eq(at))
            }
            Template::LogValue { has, value, written } => {
                let v = self.pure(|x| x.eval(written))?;
                let Val::Bits(w) = &v[0] else { return None };
                if w.get_size() > 64 {
                    return None;
                }
                self.st.flag(*has).implies(bits(self, *value)?.eq(resize(w, 64, false)))
            }
            Template::LogSize { has, size, sizes } => {
                let v = bits(self, *size)?;
                let any: Vec<Bool> = sizes.iter().map(|s| v.eq(offset(*s))).collect();
                self.st.flag(*has).implies(Bool::or(&any))
            }
            Template::AccessBetween { has, off, entry, address } => {
                let a = self.pure(|x| x.address(address))?;
                let Val::Ptr { off: now, .. } = &a[0] else { return None };
                let o = bits(self, *off)?;
                self.st.flag(*has).implies(o.bvsub(entry).bvult(now.bvsub(entry)))
            }
            Template::AccessResidue { has, off, modulus, entry } => {
                let o = bits(self, *off)?;
                self.st.flag(*has).implies(o.bvurem(modulus).eq(entry.bvurem(modulus)))
            }
            Template::User(e) => {
                let v = self.pure(|x| x.eval_annotation(e))?;
                Bool::and(&[entered[0].implies(&v[0]), entered[1].implies(&v[1])])
            }
        })
    }
}

/// The body's locals defined once by a side-effect-free initialiser and never
/// assigned again (`int index = i + 20;`), by name.
fn single_definitions(s: &Stmt, exprs: &[Expr]) -> std::collections::HashMap<String, Expr> {
    fn decls(s: &Stmt, out: &mut Vec<(String, Expr)>) {
        match &s.kind {
            StmtKind::Decl(v) => {
                if let Some(init) = &v.init {
                    out.push((v.name.clone(), init.clone()));
                }
            }
            StmtKind::Block(b) => b.iter().for_each(|s| decls(s, out)),
            StmtKind::If { then, otherwise, .. } => {
                decls(then, out);
                if let Some(o) = otherwise {
                    decls(o, out);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    decls(s, &mut found);
    let assigned = |name: &str| {
        exprs
            .iter()
            .any(|e| matches!(&e.kind, ExprKind::Assign { target, .. } | ExprKind::IncDec { target, .. } if var_name(target) == Some(name)))
    };
    let mut out = std::collections::HashMap::new();
    for (name, init) in found {
        if !has_effects(&init) && !assigned(&name) && !out.contains_key(&name) {
            out.insert(name, init);
        } else {
            out.remove(&name);
        }
    }
    out
}

/// `e` with the body's single definitions put in place of their names.
fn inline_definitions(e: &Expr, defs: &std::collections::HashMap<String, Expr>, depth: u32) -> Expr {
    let mut out = e.clone();
    if depth > 4 {
        return out;
    }
    match &mut out.kind {
        ExprKind::Var { name, kind: crate::cfront::ir::VarKind::Local } => {
            if let Some(d) = defs.get(name.as_str()) {
                let mut d = inline_definitions(d, defs, depth + 1);
                if d.ty != e.ty {
                    d = Expr { kind: ExprKind::Cast { operand: Box::new(d), implicit: true }, ty: e.ty.clone(), span: e.span };
                }
                return d;
            }
        }
        ExprKind::Unary { operand, .. } | ExprKind::Cast { operand, .. } => **operand = inline_definitions(operand, defs, depth),
        ExprKind::Binary { lhs, rhs, .. } => {
            **lhs = inline_definitions(lhs, defs, depth);
            **rhs = inline_definitions(rhs, defs, depth);
        }
        ExprKind::Index { base, index } => {
            **base = inline_definitions(base, defs, depth);
            **index = inline_definitions(index, defs, depth);
        }
        ExprKind::Member { base, .. } | ExprKind::Swizzle { base, .. } => **base = inline_definitions(base, defs, depth),
        ExprKind::Conditional { cond, then, otherwise } => {
            **cond = inline_definitions(cond, defs, depth);
            **then = inline_definitions(then, defs, depth);
            **otherwise = inline_definitions(otherwise, defs, depth);
        }
        _ => {}
    }
    out
}

/// The variables whose address `s` takes (`&x`, `&x.f`, `&x[i]`).
pub(crate) fn address_taken_in(s: &Stmt, out: &mut std::collections::HashSet<String>) {
    fn root(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Var { name, .. } => Some(name),
            ExprKind::Member { base, arrow: false, .. } | ExprKind::Swizzle { base, .. } => root(base),
            ExprKind::Cast { operand, .. } => root(operand),
            _ => None,
        }
    }
    let mut exprs = Vec::new();
    exprs_of(s, &mut exprs);
    for e in exprs {
        if let ExprKind::Unary { op: UnaryOp::AddrOf, operand } = &e.kind {
            if let Some(name) = root(operand) {
                out.insert(name.to_string());
            }
        }
    }
}

/// The functions `s` calls, by name.
pub(crate) fn calls_in(s: &Stmt, out: &mut std::collections::HashSet<String>) {
    let mut exprs = Vec::new();
    exprs_of(s, &mut exprs);
    if let StmtKind::Annotation { args, .. } = &s.kind {
        args.iter().for_each(|a| walk(a, &mut |x| exprs.push(x.clone())));
    }
    for e in exprs {
        // A function whose address is taken is called where a pointer is.
        if let ExprKind::Call { callee, .. } | ExprKind::FunctionRef(callee) = &e.kind {
            out.insert(callee.clone());
        }
    }
}

/// Checks one kernel: Houdini's runs until no candidate fails; the last run's
/// failures (empty: proved).
pub(crate) fn check_kernel(module: &Module, kernel: &Function, options: &Options) -> Vec<Diagnostic> {
    let deadline = Instant::now() + options.kernel_limit;
    let mut dropped: BTreeSet<CandidateKey> = BTreeSet::new();
    let mut written: BTreeSet<u32> = BTreeSet::new();
    loop {
        let offset = if module.language == crate::cfront::ir::Language::OpenCl { options.global_offset } else { Some([Some(0); 3]) };
        let geometry = Geometry { warp_size: options.warp_size, ..Geometry::new(&module.launch, offset, options.global_size) };
        let mut chk = Checker::new(module, &dropped, &written, geometry, options.check_limit, deadline);
        let mut exec = Exec::new(&mut chk, options);
        if let Err(d) = exec.run_kernel(kernel) {
            return vec![d];
        }
        if std::env::var_os("ALPINE_RACES_DEBUG").is_some() {
            eprintln!(
                "races: `{}` run with {} dropped: {} refuted, {} queries",
                kernel.name,
                dropped.len(),
                chk.refuted.len(),
                chk.queries
            );
        }
        let new_writes: Vec<u32> = chk.writes_seen.difference(&written).copied().collect();
        if chk.refuted.is_empty() && new_writes.is_empty() {
            return chk.failures;
        }
        if chk.timed_out {
            let d = Diagnostic::error(codes::RACES_UNKNOWN, format!("could not finish checking `{}` in time", kernel.name), kernel.span)
                .with_label("not proved")
                .with_help(format!("the checker's time limit is {} s per kernel", options.kernel_limit.as_secs()));
            return vec![d];
        }
        let refuted = std::mem::take(&mut chk.refuted);
        drop(chk);
        // A run that treated a written array as read-only refutes candidates
        // on wrong grounds (its contents were kept across barriers): only the
        // writes are learnt, and the same candidates are tried again.
        if new_writes.is_empty() {
            dropped.extend(refuted);
        }
        written.extend(new_writes);
    }
}
