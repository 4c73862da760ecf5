//! Memory accesses of the two threads: GPUVerify's access logs.
//!
//! Each array has, for thread 1 only, one log per kind of access (read, write,
//! atomic): a flag "an access happened", its byte offset, its size and its
//! site. Thread 1 *may* record an access (a fresh Boolean chooses), so the log
//! stands for any one of thread 1's accesses since the last barrier; thread 2
//! asserts at each of its accesses that no conflicting access of thread 1 is
//! logged at an overlapping offset. Since the two thread ids are arbitrary
//! distinct ids, the pair (t2, t1) is checked as well as (t1, t2), so a race
//! between an earlier access of thread 2 and a later one of thread 1 is found
//! with the roles swapped (GPUVerify's argument, Betts et al. 2012, §4).
//! Thread 1 logs before thread 2 checks, so the accesses of one statement are
//! compared too.
//!
//! A pointer is an array id and a byte offset. An access is made to every array
//! the id may name (a case split); that the id names one of the kernel's arrays
//! at all is an assertion ("access through a pointer alpine cannot track"), so
//! an access alpine cannot place is never silently ignored. Null is id 0.
//!
//! Contents: each thread has its own view of each array (element index →
//! element bits), written by its own writes, havocked at barriers (the same
//! fresh value for both threads of one group). A read of a location written by
//! a third thread since the last barrier sees the old value: that is a race
//! with the third thread, which the pair (reader, third) reports, so in a
//! race-free kernel every value read is the real one.

use super::exec::{Exec, R};
use super::report::{Goal, RaceReport};
use super::value::{bits_of, fresh_of, offset, resize, size_of, Val};
use super::vc::AccessKind;
use crate::ast::Span;
use crate::cfront::ir::Type;
use z3::ast::{Ast, Bool, BV};

fn conflicts(kind: AccessKind) -> &'static [AccessKind] {
    match kind {
        AccessKind::Read => &[AccessKind::Write, AccessKind::Atomic],
        AccessKind::Write => &[AccessKind::Read, AccessKind::Write, AccessKind::Atomic],
        AccessKind::Atomic => &[AccessKind::Read, AccessKind::Write],
    }
}

/// `[o1, o1 + s1)` and `[o2, o2 + s2)` overlap (exact modulo 2^64).
fn overlap(o1: &BV, s1: &BV, o2: &BV, s2: &BV) -> Bool {
    Bool::or(&[o2.bvsub(o1).bvult(s1), o1.bvsub(o2).bvult(s2)])
}

impl Exec<'_, '_> {
    /// The arrays a pointer base may name, each with the condition that it does.
    pub(crate) fn regions_of(&self, base: &BV) -> Vec<(usize, Bool)> {
        let mut out = Vec::new();
        for (i, r) in self.st.regions.iter().enumerate() {
            let cond = base.eq(r.base()).simplify();
            if cond.as_bool() != Some(false) {
                out.push((i, cond));
            }
        }
        out
    }

    /// One access by both threads (thread 1 logs, thread 2 checks); returns the
    /// values read (for a write, the values written; for an atomic, fresh ones).
    pub(crate) fn access(&mut self, ptrs: &[Val; 2], ty: &Type, kind: AccessKind, written: Option<&[Val; 2]>, span: Span) -> R<[Val; 2]> {
        let size =
            size_of(self.chk.module, ty).ok_or_else(|| self.unsupported(span, "an access of a type whose size alpine does not know"))?;
        let site = self.chk.site(span, kind);
        let touched = self.warp_touched(ptrs);
        if kind != AccessKind::Read && !self.pure_eval {
            self.warp_write_havoc(&touched);
        }
        let mut out = [Val::Opaque, Val::Opaque];
        for t in 0..2 {
            let Val::Ptr { base, off } = &ptrs[t] else {
                return Err(self.unsupported(span, "an access through a value alpine does not track as a pointer"));
            };
            let targets = self.regions_of(base);
            if !self.dry && !self.pure_eval {
                let known = Bool::or(&targets.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>());
                self.chk.prove(self.pred[t].implies(&known), Goal::Untracked { span });
                if self.options.check_array_bounds {
                    self.bounds(t, &targets, off, size, span);
                }
            }
            let mut value = fresh_of(ty, "read");
            for (r, cond) in &targets {
                let (r, cond) = (*r, cond.clone());
                let guard = Bool::and(&[self.pred[t].clone(), cond.clone()]);
                if self.pure_eval {
                    self.invariant_read_check(r, t, off, size, &guard)?;
                } else if kind != AccessKind::Atomic {
                    self.mark_accessed(r, t, off, size, &guard);
                }
                if !self.pure_eval {
                    let stored = written.map(|w| &w[t]);
                    if t == 0 {
                        self.log(r, kind, off, size, site, stored, &guard);
                    } else {
                        self.check(r, kind, off, size, stored, span, &guard);
                    }
                }
                let here = match self.st.regions[r].init.clone() {
                    Some(init) => super::constants::read_init(&init, off, ty, size),
                    None => self.read_element(r, t, off, ty, size),
                };
                value = Val::ite(&cond, &here, &value);
                if kind != AccessKind::Read && !self.pure_eval {
                    self.chk.writes_seen.insert(self.st.regions[r].span.start);
                }
                if kind != AccessKind::Read && self.st.regions[r].space == crate::cfront::ir::AddressSpace::Constant && !self.dry {
                    self.chk.prove(guard.not(), Goal::ConstantWrite { span });
                }
                if kind != AccessKind::Read && !self.pure_eval {
                    self.write_element(r, t, off, ty, size, written.map(|w| &w[t]), &guard);
                }
            }
            out[t] = match (kind, written) {
                (AccessKind::Write, Some(w)) => w[t].clone(),
                (AccessKind::Atomic, _) => fresh_of(ty, "atomic"),
                _ => value,
            };
        }
        if !self.pure_eval {
            self.warp_resync(&touched);
        }
        Ok(out)
    }

    fn bounds(&mut self, t: usize, targets: &[(usize, Bool)], off: &BV, size: u64, span: Span) {
        for (r, cond) in targets {
            let region = &self.st.regions[*r];
            let Some(len) = region.len_bytes else { continue };
            let name = region.name.clone();
            let inside = Bool::and(&[off.bvsge(offset(0)), off.bvadd(offset(size)).bvsle(offset(len))]);
            let goal = Bool::and(&[self.pred[t].clone(), cond.clone()]).implies(&inside);
            self.chk.prove(goal, Goal::Bounds { span, array: name });
        }
    }

    /// The bits a write stores, as the 64-bit value its log keeps.
    fn logged_value(v: Option<&Val>) -> BV {
        match v {
            Some(Val::Bits(b)) if b.get_size() <= 64 => resize(b, 64, false),
            _ => BV::fresh_const("written", 64),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn log(&mut self, r: usize, kind: AccessKind, off: &BV, size: u64, site: u64, written: Option<&Val>, guard: &Bool) {
        let Some(log) = self.st.regions[r].log(kind) else { return };
        let chosen = Bool::and(&[guard.clone(), Bool::fresh_const("log")]);
        let has = self.st.flag(log.has);
        self.st.slots[log.has] = Val::Flag(Bool::or(&[chosen.clone(), has]));
        self.st.slots[log.off] = Val::Bits(chosen.ite(off, &self.st.bv(log.off)));
        self.st.slots[log.size] = Val::Bits(chosen.ite(&offset(size), &self.st.bv(log.size)));
        let sizes = self.log_sizes.entry(log.size).or_default();
        if !sizes.contains(&size) {
            sizes.push(size);
        }
        self.st.slots[log.site] = Val::Bits(chosen.ite(&BV::from_u64(site, 32), &self.st.bv(log.site)));
        let handle = self.copy_handle.as_ref().map_or_else(|| BV::from_u64(0, 64), |h| h[0].clone());
        let old = self.st.bv(log.handle);
        // (An ordinary access over a log that never held a copy changes nothing.)
        if self.copy_handle.is_some() || old.simplify().as_u64() != Some(0) {
            self.st.slots[log.handle] = Val::Bits(chosen.ite(&handle, &old));
        }
        if kind == AccessKind::Write {
            let value = Self::logged_value(written);
            self.st.slots[log.value] = Val::Bits(chosen.ite(&value, &self.st.bv(log.value)));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check(&mut self, r: usize, kind: AccessKind, off: &BV, size: u64, written: Option<&Val>, span: Span, guard: &Bool) {
        if self.dry || self.options.skip_race_checks {
            return;
        }
        let region = self.st.regions[r].clone();
        for &first in conflicts(kind) {
            let Some(log) = region.log(first) else { continue };
            let has = self.st.flag(log.has);
            if has.as_bool() == Some(false) {
                continue;
            }
            let (off1, size1) = (self.st.bv(log.off), self.st.bv(log.size));
            let mut race = vec![guard.clone(), has, overlap(&off1, &size1, off, &offset(size))];
            if region.per_group() || self.options.only_intra_group {
                race.push(self.chk.geometry.same_group());
            }
            if kind == AccessKind::Write && first == AccessKind::Write {
                // Benign (GPUVerify's default): the same bits written to the
                // same bytes leave memory as either order would.
                let same = Bool::and(&[off1.eq(off), size1.eq(offset(size)), self.st.bv(log.value).eq(Self::logged_value(written))]);
                race.push(same.not());
            }
            let report = RaceReport {
                array: region.name.clone(),
                elem_size: region.elem.as_ref().map_or(size, |(_, s)| *s),
                first,
                second: kind,
                site1: self.st.bv(log.site),
                off1,
                off2: off.clone(),
                span2: span,
            };
            self.chk.prove(Bool::and(&race).not(), Goal::Race(Box::new(report)));
        }
    }

    /// Thread `t`'s value at `off` (a fresh one where the element is not tracked).
    fn read_element(&self, r: usize, t: usize, off: &BV, ty: &Type, size: u64) -> Val {
        let region = &self.st.regions[r];
        let (Some((_, esize)), Some(mem)) = (&region.elem, region.mem) else { return fresh_of(ty, "read") };
        if *esize != size || bits_of(ty).map(u64::from) != Some(size * 8) {
            return fresh_of(ty, "read");
        }
        let Val::Mem(array) = &self.st.slots[mem[t]] else { return fresh_of(ty, "read") };
        let Some(sel) = array.select(&off.bvudiv(offset(size))).as_bv() else { return fresh_of(ty, "read") };
        let aligned = off.bvurem(offset(size)).eq(offset(0));
        Val::ite(&aligned, &Val::Bits(sel), &fresh_of(ty, "read"))
    }

    #[allow(clippy::too_many_arguments)]
    fn write_element(&mut self, r: usize, t: usize, off: &BV, ty: &Type, size: u64, value: Option<&Val>, guard: &Bool) {
        let region = &self.st.regions[r];
        let (Some((_, esize)), Some(mem)) = (region.elem.clone(), region.mem) else { return };
        let Val::Mem(array) = self.st.slots[mem[t]].clone() else { return };
        let fresh = Val::Mem(array.clone()).havoc("mem");
        let stored = match value {
            Some(Val::Bits(v)) if esize == size && u64::from(v.get_size()) == size * 8 => {
                let aligned = off.bvurem(offset(size)).eq(offset(0));
                Val::ite(&aligned, &Val::Mem(array.store(&off.bvudiv(offset(size)), v)), &fresh)
            }
            // An atomic, a value not tracked, or a write of another size: the
            // element (or, for a mismatched size, the array) becomes unknown.
            _ if esize == size && bits_of(ty).is_some() => {
                let unknown = BV::fresh_const("atomic", (esize * 8) as u32);
                Val::Mem(array.store(&off.bvudiv(offset(size)), &unknown))
            }
            _ => fresh,
        };
        self.st.slots[mem[t]] = Val::ite(guard, &stored, &Val::Mem(array));
    }

    /// A barrier reached by the threads whose predicate holds: thread 1's logs
    /// of the fenced arrays are emptied when both threads are in the barrier's
    /// `scope` (one group; one warp for `__syncwarp`), and each thread's view
    /// of fenced memory is havocked (one fresh view for both threads of a
    /// scope: what is read after a barrier is what the scope wrote).
    pub(crate) fn barrier_effect(&mut self, shared: &Bool, global: &Bool, scope: &Bool) {
        let both = Bool::and(&[self.pred[0].clone(), self.pred[1].clone(), scope.clone()]);
        for r in 0..self.st.regions.len() {
            let region = self.st.regions[r].clone();
            let fence = match region.space {
                crate::cfront::ir::AddressSpace::Shared => shared.clone(),
                crate::cfront::ir::AddressSpace::Global => global.clone(),
                _ => continue,
            };
            if let Some(logs) = region.logs {
                let reset = Bool::and(&[self.pred[0].clone(), scope.clone(), fence.clone()]);
                for log in logs {
                    // An access of an asynchronous copy not yet waited for stays.
                    let waited = self.st.bv(log.handle).eq(BV::from_u64(0, 64));
                    let reset = Bool::and(&[reset.clone(), waited]);
                    let has = self.st.flag(log.has);
                    self.st.slots[log.has] = Val::Flag(Bool::and(&[reset.not(), has]));
                }
            }
            if let Some(acc) = region.acc {
                for (t, slot) in acc.into_iter().enumerate() {
                    let g = Bool::and(&[self.pred[t].clone(), fence.clone()]);
                    let now = self.st.slots[slot].clone();
                    self.st.slots[slot] = Val::ite(&g, &Val::Mem(super::barrier_inv::no_access()), &now);
                }
            }
            // Nothing writes a read-only array: its contents stay.
            let written = self.chk.written.contains(&region.span.start);
            if let Some(mem) = region.mem.filter(|_| written) {
                let fresh: [Val; 2] = std::array::from_fn(|t| self.st.slots[mem[t]].havoc("barrier"));
                if !self.dry {
                    if let Some(eq) = fresh[0].same(&fresh[1]) {
                        self.chk.assume(&Bool::and(&[both.clone(), fence.clone()]).implies(&eq));
                    }
                }
                for t in 0..2 {
                    let g = Bool::and(&[self.pred[t].clone(), fence.clone()]);
                    self.st.slots[mem[t]] = Val::ite(&g, &fresh[t], &self.st.slots[mem[t]]);
                }
            }
        }
    }
}
