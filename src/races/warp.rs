//! Warps: GPUVerify's `--warp-sync=N` (threads of one warp run in lock-step),
//! CUDA's `__syncwarp(mask)`, the warp-synchronous `*_sync` primitives, and
//! the block-wide reductions `__syncthreads_count/and/or` (Betts, Chong,
//! Deligiannis, Donaldson, Ketema, "Warps and atomics: beyond barrier
//! synchronization in the verification of GPU kernels", NFM 2014, §3).
//!
//! # Why a proof under `--warp-sync=N` means no race
//!
//! The flag states a hardware assumption, and the proof holds under it only:
//! the threads of a group are numbered by linear local id (x fastest) and cut
//! into warps of N; the threads of one warp share a program counter, and an
//! instruction completes for the whole warp before the next one starts (the
//! SIMT model of NVIDIA GPUs before Volta; on Volta and later, threads of a
//! warp are only in lock-step between `__syncwarp()`s, which is what kernels
//! written for them call). alpine's instructions are the memory accesses: each
//! read or write the two-thread program makes (`memory.rs`).
//!
//! 1. **Re-sync** (the paper's §3.1). After an access that both threads make
//!    (both predicates true) in one warp, every earlier access of either
//!    thread is ordered before every later one, so thread 1's logs of the
//!    arrays the instruction touched are emptied — *after* thread 2 checked
//!    its access of this instruction against them, so two writes of one
//!    instruction to one location are still a race (the only intra-warp race
//!    the paper leaves, e.g. `A[0] = tid`). Where only one thread executes the
//!    access (a divergent branch, which the warp serialises in an order the
//!    hardware does not promise), nothing is emptied, so divergent code is
//!    checked as ordinary concurrent code. Accesses of an asynchronous copy
//!    are not warp-synchronous and stay logged. Emptying a log only forgets
//!    pairs, so the check of threads in different warps is unchanged: it is
//!    the ordinary one.
//! 2. **Contents** (the paper's §3.3). A thread's view of an array holds its
//!    own writes (`memory.rs`); the other threads of its warp may now write
//!    between its instructions without a race. So at every write instruction
//!    — whatever the two threads' predicates, since a third thread of the
//!    warp may execute it — both views of every shared or global array the
//!    instruction may touch are havocked before the threads' own writes are
//!    stored (private memory is the thread's own). A loop
//!    that third threads keep iterating after both threads left is covered:
//!    the loop's invariants are checked for an iteration in which neither
//!    thread iterates too (`exec.rs`), and its write havocs the views there.
//!
//! # `__syncwarp(mask)`, the `*_sync` primitives, and block reductions
//!
//! These hold whatever `--warp-sync` says (a warp is 32 threads in CUDA).
//!
//! - A thread may call a warp-synchronous function only with a mask that
//!   names its own lane, and every thread a call's mask names must make the
//!   same call with the same mask (CUDA's rule); both are proved, as a
//!   divergence (`Goal::WarpCall`).
//! - `__syncwarp` is a barrier of the warp: thread 1's logs are emptied when
//!   the two threads are in one warp and both pass it, and each thread's view
//!   of memory is havocked (one fresh view for two threads of a warp), since
//!   the warp's other threads wrote before it.
//! - The values the vote functions (`__all_sync`, `__any_sync`,
//!   `__ballot_sync`) return are arbitrary, the same for two threads of one
//!   warp with one mask; a shuffle's, `__activemask()`'s and a match's are
//!   arbitrary (they are other lanes' values). None is a pure function of the
//!   thread's own arguments, which would be unsound (two threads of different
//!   warps may get different votes from the same predicate).
//! - `__syncthreads_count/and/or(p)` is the block's barrier (divergence
//!   checked, logs emptied, as `__syncthreads`) and returns an arbitrary value
//!   that is the same for the threads of a block.

use super::exec::{Exec, R};
use super::report::Goal;
use super::value::{fresh_of, Val};
use crate::ast::Span;
use crate::cfront::ir::{Barrier, Expr, Stmt, StmtKind};
use z3::ast::{Bool, BV};

/// CUDA's warp size (`warpSize`), which `__syncwarp` and the `*_sync`
/// primitives are defined over whatever `--warp-sync` says.
pub(crate) const CUDA_WARP: u64 = 32;

/// What a call of a warp-level or block-reduction function is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WarpFn {
    /// `__all_sync`, `__any_sync`, `__ballot_sync`: warp-uniform values.
    Vote,
    /// `__shfl*_sync`, `__match_*_sync`: another lane's value.
    Exchange,
    /// `__activemask()`: no mask argument, an arbitrary value.
    ActiveMask,
    /// `__syncthreads_count/and/or`: the block's barrier, a block-uniform value.
    BlockReduce,
}

fn warp_fn(name: &str) -> Option<WarpFn> {
    Some(match name {
        "__all_sync" | "__any_sync" | "__ballot_sync" => WarpFn::Vote,
        "__shfl_sync" | "__shfl_up_sync" | "__shfl_down_sync" | "__shfl_xor_sync" | "__match_any_sync" => WarpFn::Exchange,
        "__activemask" => WarpFn::ActiveMask,
        "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => WarpFn::BlockReduce,
        _ => return None,
    })
}

/// The warp sizes whose threads a loop's logs may be emptied for (Houdini
/// proposes "no access logged when the threads are in one warp" for each):
/// `--warp-sync`'s, and CUDA's 32 when the body calls `__syncwarp`.
pub(crate) fn log_scopes(body: &Stmt, options: &super::Options) -> Vec<u64> {
    let mut out: Vec<u64> = options.warp_size.into_iter().collect();
    if has_barrier(body, &|b| matches!(b, Barrier::Warp { .. })) && !out.contains(&CUDA_WARP) {
        out.push(CUDA_WARP);
    }
    out
}

/// Whether a barrier that `which` selects is written in `s` (calls not followed).
pub(crate) fn has_barrier(s: &Stmt, which: &dyn Fn(&Barrier) -> bool) -> bool {
    match &s.kind {
        StmtKind::Barrier(b) => which(b),
        StmtKind::Block(b) => b.iter().any(|s| has_barrier(s, which)),
        StmtKind::If { then, otherwise, .. } => has_barrier(then, which) || otherwise.as_deref().is_some_and(|o| has_barrier(o, which)),
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::For { body, .. } => has_barrier(body, which),
        StmtKind::Switch { arms, .. } => arms.iter().any(|a| a.body.iter().any(|s| has_barrier(s, which))),
        _ => false,
    }
}

/// Bit `lane` of a 32-bit mask (lane in 128 bits, below 32).
fn names(mask: &BV, lane: &BV) -> Bool {
    let m = super::value::resize(mask, 128, false);
    m.bvlshr(lane).extract(0, 0).eq(BV::from_u64(1, 1))
}

impl Exec<'_, '_> {
    /// The arrays an access through `ptrs` may touch, under `--warp-sync`
    /// (empty otherwise: nothing else needs them).
    pub(crate) fn warp_touched(&self, ptrs: &[Val; 2]) -> Vec<usize> {
        if self.options.warp_size.is_none() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for p in ptrs {
            if let Val::Ptr { base, .. } = p {
                for (r, _) in self.regions_of(base) {
                    if !out.contains(&r) {
                        out.push(r);
                    }
                }
            }
        }
        out
    }

    /// Item 2 of the module doc: a write instruction of the warp havocs both
    /// threads' views of the arrays it may touch.
    pub(crate) fn warp_write_havoc(&mut self, touched: &[usize]) {
        for &r in touched {
            // Only the thread itself writes its private memory.
            if self.st.regions[r].space == crate::cfront::ir::AddressSpace::Private {
                continue;
            }
            let Some(mem) = self.st.regions[r].mem else { continue };
            for slot in mem {
                self.st.slots[slot] = self.st.slots[slot].havoc("warp");
            }
        }
    }

    /// Item 1 of the module doc: after an access both threads of one warp
    /// made, thread 1's logs of the touched arrays are emptied.
    pub(crate) fn warp_resync(&mut self, touched: &[usize]) {
        let Some(size) = self.options.warp_size else { return };
        if touched.is_empty() {
            return;
        }
        let reset = Bool::and(&[self.chk.geometry.same_warp(size), self.pred[0].clone(), self.pred[1].clone()]);
        for &r in touched {
            let Some(logs) = self.st.regions[r].logs else { continue };
            for log in logs {
                let waited = self.st.bv(log.handle).eq(BV::from_u64(0, 64));
                let has = self.st.flag(log.has);
                self.st.slots[log.has] = Val::Flag(Bool::and(&[has, Bool::and(&[reset.clone(), waited]).not()]));
            }
        }
    }

    /// CUDA's rule for a warp-synchronous call with per-thread masks `mask`:
    /// a caller names itself, and a thread a caller names makes the call too,
    /// with the same mask.
    fn warp_convergence(&mut self, mask: &[BV; 2], span: Span, what: &'static str) {
        let g = &self.chk.geometry;
        let lanes = [g.lane_of(0, CUDA_WARP), g.lane_of(1, CUDA_WARP)];
        let same_warp = g.same_warp(CUDA_WARP);
        for t in 0..2 {
            let named_self = self.pred[t].implies(names(&mask[t], &lanes[t]));
            self.prove(named_self, Goal::WarpCall { span, what, lanes: true });
        }
        let names_other = Bool::and(&[same_warp, self.pred[0].clone(), names(&mask[0], &lanes[1])]);
        let joins = Bool::and(&[self.pred[1].clone(), mask[1].eq(&mask[0])]);
        self.prove(names_other.implies(&joins), Goal::WarpCall { span, what, lanes: false });
    }

    /// `__syncwarp(mask)`.
    pub(crate) fn exec_warp_barrier(&mut self, b: &Barrier, span: Span) -> R<()> {
        let Barrier::Warp { mask: Some(mask) } = b else {
            return Err(self.unsupported(span, "`__syncwarp` with a mask computed at run time"));
        };
        let mask = BV::from_u64(u64::from(*mask), 32);
        self.warp_convergence(&[mask.clone(), mask.clone()], span, "`__syncwarp`");
        let g = &self.chk.geometry;
        let scope = Bool::and(&[g.same_warp(CUDA_WARP), names(&mask, &g.lane_of(0, CUDA_WARP)), names(&mask, &g.lane_of(1, CUDA_WARP))]);
        let yes = Bool::from_bool(true);
        self.barrier_effect(&yes, &yes, &scope);
        Ok(())
    }

    /// A call of a warp-level primitive or a block reduction, if `callee` is
    /// one (arguments already evaluated).
    pub(crate) fn warp_call(&mut self, callee: &str, vals: &[[Val; 2]], e: &Expr) -> Option<R<[Val; 2]>> {
        let kind = warp_fn(callee)?;
        let fresh: [Val; 2] = [fresh_of(&e.ty, callee), fresh_of(&e.ty, callee)];
        let equal = fresh[0].same(&fresh[1]);
        match kind {
            WarpFn::BlockReduce => {
                let barrier = Barrier::Block { shared: true, global: true };
                if let Err(d) = self.exec_barrier(&barrier, e.span) {
                    return Some(Err(d));
                }
                if let Some(eq) = equal {
                    let fact = self.chk.geometry.same_group().implies(&eq);
                    self.assume(&fact);
                }
            }
            WarpFn::ActiveMask => {}
            WarpFn::Vote | WarpFn::Exchange => {
                let mask = match vals.first() {
                    Some([Val::Bits(a), Val::Bits(b)]) => [super::value::resize(a, 32, false), super::value::resize(b, 32, false)],
                    _ => return Some(Err(self.unsupported(e.span, &format!("`{callee}` with a mask alpine does not track")))),
                };
                self.warp_convergence(&mask, e.span, "a warp-synchronous function");
                if let (WarpFn::Vote, Some(eq)) = (kind, equal) {
                    let fact = Bool::and(&[self.chk.geometry.same_warp(CUDA_WARP), mask[0].eq(&mask[1])]).implies(&eq);
                    self.assume(&fact);
                }
            }
        }
        Some(Ok(fresh))
    }
}
