//! `par` blocks in the interpreter: every thread of a unit, phase by phase
//! between barriers, in a seeded random order within a phase.
//!
//! A unit's body runs in *lockstep at barriers*: a maximal run of statements
//! without a barrier (a *segment*) is run by one thread after the other, in an
//! order drawn from [`Interp::seed`]; a statement that contains a barrier is
//! entered by all threads together:
//!
//! * `barrier(L) { ... }` ends a phase (its contract is not executed; a barrier
//!   with statements in its body is refused);
//! * `if`, `while` and `for` around a barrier evaluate their condition in every
//!   thread, and the threads must agree — otherwise the run stops with a
//!   *barrier divergence* error (on a GPU the kernel would hang or misbehave);
//! * a block is entered by all threads.
//!
//! Running a segment thread by thread is one interleaving of the threads; for
//! the race-free kernels the verifier accepts every interleaving computes the
//! same state, and a different [`Interp::seed`] checks that a result does not
//! hinge on the order. Units joined with `and` run one after the other (they
//! share no barrier). Each thread starts from a copy of the host's local
//! variables (the host's arrays and objects are shared); assignments a thread
//! makes to a host local stay in that thread (the verifier refuses them).

use super::{err, Error, Flow, Frame, Interp, Value};
use crate::ast::visit::{self, Visitor};
use crate::ast::*;
use std::collections::HashMap;

/// The most threads one unit may have (a guard against runaway sizes).
pub const MAX_THREADS: i64 = 1 << 16;

impl Interp<'_> {
    /// Runs a `par` statement in the host frame `f`.
    pub(super) fn run_par(&mut self, f: &mut Frame, p: &Par) -> Result<(), Error> {
        for u in &p.units {
            let mut ids: Vec<Vec<(Name, i64)>> = vec![Vec::new()];
            for it in &u.iters {
                let (lo, hi) = (self.eval(f, &it.lo)?.int()?, self.eval(f, &it.hi)?.int()?);
                // Saturation is exact enough here: it only happens beyond
                // `i64::MAX` threads, which the check refuses either way.
                let n = hi.saturating_sub(lo).max(0);
                if n.saturating_mul(ids.len() as i64) > MAX_THREADS {
                    return err(format!("par block with more than {MAX_THREADS} threads"));
                }
                ids = ids
                    .into_iter()
                    .flat_map(|id| (lo..hi).map(move |t| [id.clone(), vec![(it.var.name.name.clone(), t)]].concat()))
                    .collect();
            }
            if let Some(g) = &mut self.generic {
                g.enter_par(ids.iter().map(|id| id.iter().map(|(x, t)| format!("{x} = {t}")).collect::<Vec<_>>().join(", ")).collect())?;
            }
            let mut threads: Vec<Frame> = ids
                .into_iter()
                .map(|id| {
                    let mut scopes = f.scopes.clone();
                    scopes.push(id.into_iter().map(|(x, t)| (x, Value::Int(t))).collect());
                    Frame { this: f.this.clone(), scopes, old: f.old.clone(), result: None }
                })
                .collect();
            if self.check_contracts {
                for t in &mut threads {
                    self.check_unit(t, u, false)?;
                }
            }
            self.lockstep(&mut threads, &u.body.stmts)?;
            if let Some(g) = &mut self.generic {
                g.leave_par();
            }
            if self.check_contracts {
                for t in &mut threads {
                    self.check_unit(t, u, true)?;
                }
            }
        }
        Ok(())
    }

    /// Runs `stmts` in every thread of `threads` (see the module doc).
    fn lockstep(&mut self, threads: &mut [Frame], stmts: &[Stmt]) -> Result<(), Error> {
        for t in threads.iter_mut() {
            t.scopes.push(HashMap::new());
        }
        let r = self.lockstep_in_scope(threads, stmts);
        for t in threads.iter_mut() {
            t.scopes.pop();
        }
        r
    }

    fn lockstep_in_scope(&mut self, threads: &mut [Frame], stmts: &[Stmt]) -> Result<(), Error> {
        let mut i = 0;
        while i < stmts.len() {
            if !has_barrier(&stmts[i]) {
                let end = (i..stmts.len()).find(|&j| has_barrier(&stmts[j])).unwrap_or(stmts.len());
                for t in self.thread_order(threads.len()) {
                    self.running(t);
                    for s in &stmts[i..end] {
                        if let Flow::Return(_) = self.stmt(&mut threads[t], s)? {
                            return err("return inside par");
                        }
                    }
                }
                i = end;
                continue;
            }
            self.tick()?;
            match &stmts[i].kind {
                StmtKind::Barrier(b) => {
                    if b.body.as_ref().is_some_and(|b| !b.stmts.is_empty()) {
                        return err("barrier with statements in its body");
                    }
                    if let Some(g) = &mut self.generic {
                        g.end_phase();
                    }
                }
                StmtKind::Block(b) => self.lockstep(threads, &b.stmts)?,
                StmtKind::If { cond, then_branch, else_branch } => {
                    if self.uniform(threads, cond, "if")? {
                        self.lockstep(threads, std::slice::from_ref(then_branch))?;
                    } else if let Some(e) = else_branch {
                        self.lockstep(threads, std::slice::from_ref(e))?;
                    }
                }
                StmtKind::Loop(l) => {
                    for t in threads.iter_mut() {
                        t.scopes.push(HashMap::new());
                    }
                    let r = self.lockstep_loop(threads, l);
                    for t in threads.iter_mut() {
                        t.scopes.pop();
                    }
                    r?;
                }
                _ => return err("a barrier inside this statement is not supported by the interpreter"),
            }
            i += 1;
        }
        Ok(())
    }

    fn lockstep_loop(&mut self, threads: &mut [Frame], l: &Loop) -> Result<(), Error> {
        let (cond, update): (Option<&Expr>, &[Stmt]) = match &l.kind {
            LoopKind::While { cond } => (Some(cond), &[]),
            LoopKind::For { init, cond, update } => {
                self.each(threads, init)?;
                (cond.as_ref(), update)
            }
        };
        loop {
            self.tick()?;
            if self.check_contracts {
                for t in threads.iter_mut() {
                    self.check_invariants(t, l)?;
                }
            }
            if let Some(c) = cond {
                if !self.uniform(threads, c, "loop")? {
                    return Ok(());
                }
            }
            self.lockstep(threads, std::slice::from_ref(&l.body))?;
            self.each(threads, update)?;
        }
    }

    /// Runs barrier-free `stmts` in each thread, in thread order.
    fn each(&mut self, threads: &mut [Frame], stmts: &[Stmt]) -> Result<(), Error> {
        for (k, t) in threads.iter_mut().enumerate() {
            self.running(k);
            for s in stmts {
                self.stmt(t, s)?;
            }
        }
        Ok(())
    }

    /// `cond` in every thread, which must all agree (a barrier lies under it).
    fn uniform(&mut self, threads: &mut [Frame], cond: &Expr, what: &str) -> Result<bool, Error> {
        let mut first = None;
        for (k, t) in threads.iter_mut().enumerate() {
            self.running(k);
            let v = self.eval(t, cond)?.bool()?;
            if *first.get_or_insert(v) != v {
                return err(format!(
                    "barrier divergence: the threads disagree on the condition of a{} {what} around a barrier",
                    if what == "if" { "n" } else { "" }
                ));
            }
        }
        Ok(first.unwrap_or(false))
    }

    /// Thread `k` of the unit runs now (its accesses are logged as its own in a
    /// generic run).
    fn running(&mut self, k: usize) {
        if let Some(g) = &mut self.generic {
            g.set_thread(k);
        }
    }

    /// A permutation of `0..n` drawn from the seed (Fisher–Yates on xorshift64*).
    fn thread_order(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        if self.seed == 0 {
            self.seed = 0x9e37_79b9_7f4a_7c15; // xorshift stays at 0 forever
        }
        for i in (1..n).rev() {
            self.seed ^= self.seed >> 12;
            self.seed ^= self.seed << 25;
            self.seed ^= self.seed >> 27;
            let r = self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            order.swap(i, (r % (i as u64 + 1)) as usize);
        }
        order
    }
}

/// Whether `s` contains a barrier of the enclosing par unit (barriers inside a
/// nested `par` belong to that one).
fn has_barrier(s: &Stmt) -> bool {
    struct Find(bool);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Barrier(_) => self.0 = true,
                StmtKind::Par(_) => {}
                _ => visit::walk_stmt(self, s),
            }
        }
    }
    let mut f = Find(false);
    f.visit_stmt(s);
    f.0
}

#[cfg(test)]
mod tests {
    use super::super::*;

    fn program(src: &str) -> Program {
        crate::frontend(&crate::diagnostics::SourceFile::new("t.pvl", src)).expect("checks").0
    }

    fn array(v: &[i64]) -> Value {
        Value::Array(Rc::new(RefCell::new(v.iter().map(|&x| Value::Int(x)).collect())))
    }

    /// Each thread reads its right neighbour's cell after the barrier: right
    /// only if every thread has written before any reads, whatever the order.
    const SHIFT: &str = "class C { \
        context_everywhere a != null && b != null && a.length == n && b.length == n; \
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], write)) ** (\\forall* int i; 0 <= i && i < n; Perm(b[i], write)); \
        void m(int[] a, int[] b, int n) { \
          par k (int tid = 0 .. n) \
            context Perm(a[tid], write) ** Perm(b[tid], write); \
          { a[tid] = tid * 10; \
            barrier(k) { requires Perm(a[tid], write); ensures Perm(a[tid], 1\\2) ** Perm(a[(tid + 1) % n], 1\\4); } \
            b[tid] = a[(tid + 1) % n]; \
            barrier(k) { requires Perm(a[tid], 1\\2) ** Perm(a[(tid + 1) % n], 1\\4); ensures Perm(a[tid], write); } } } }";

    #[test]
    fn barriers_separate_phases_in_every_order() {
        let p = program(SHIFT);
        for seed in 1..6 {
            let mut it = Interp::new(&p, 100_000);
            it.seed = seed;
            let (a, b) = (array(&[0; 5]), array(&[0; 5]));
            it.call("C", "m", None, vec![a.clone(), b.clone(), Value::Int(5)]).unwrap();
            assert_eq!(b.deep(), "[10,20,30,40,0]", "seed {seed}");
            assert_eq!(a.deep(), "[0,10,20,30,40]");
        }
    }

    #[test]
    fn barriers_in_uniform_loops_and_divergence() {
        // A loop around a barrier with the same trip count in every thread.
        let p = program(
            "class C { void m(int[] a, int n) { \
               par k (int tid = 0 .. n) { for (int r = 0; r < 3; r++) { a[tid] = a[tid] + r; barrier(k) { } } } } \
             void d(int[] a, int n) { par k (int tid = 0 .. n) { if (tid < 1) { barrier(k) { } } } } \
             void w(int[] a, int n) { par k (int tid = 0 .. n) { int i = 0; while (i < tid) { barrier(k) { } i = i + 1; } } } }",
        );
        let mut it = Interp::new(&p, 100_000);
        let a = array(&[1, 2]);
        it.call("C", "m", None, vec![a.clone(), Value::Int(2)]).unwrap();
        assert_eq!(a.deep(), "[4,5]");
        for m in ["d", "w"] {
            let e = it.call("C", m, None, vec![array(&[0, 0]), Value::Int(2)]).unwrap_err();
            assert!(e.0.starts_with("barrier divergence"), "{m}: {e:?}");
        }
    }

    #[test]
    fn two_dimensional_ranges_and_units() {
        let p = program(
            "class C { void m(int[] a, int[] b) { \
               par (int i = 0 .. 2, int j = 0 .. 3) { a[3 * i + j] = 10 * i + j; } \
               and (int t = 0 .. 2) { b[t] = t + 1; } } }",
        );
        let mut it = Interp::new(&p, 100_000);
        let (a, b) = (array(&[0; 6]), array(&[0; 2]));
        it.call("C", "m", None, vec![a.clone(), b.clone()]).unwrap();
        assert_eq!(a.deep(), "[0,1,2,10,11,12]");
        assert_eq!(b.deep(), "[1,2]");
    }
}
