//! Wall-clock limits of Z3 checks, enforced by alpine instead of by Z3.
//!
//! **Why not Z3's own `timeout` parameter.** Z3 4.8.12 (Debian's `libz3-dev`,
//! the one alpine links) runs each timed check on a pooled timer thread
//! (`util/scoped_timer.cpp`) whose hand-over goes through a *static* expected
//! value of `compare_exchange_strong`; a race between a check that ends and
//! its timer that fires overwrites that value, and from then on timers of the
//! process may expire without interrupting anything. A process that runs many
//! checks — the benchmark, the test suites, the LSP server, `alpine optimise`
//! re-verifying — then had checks run for minutes past `--timeout` (seen
//! 2026-11-21: a loop-invariant check of `NestedLoops` spinning after 40 files
//! of the benchmark, Z3's timer threads idle). A fresh `alpine verify` process
//! rarely got there, which is why the CLI looked fine.
//!
//! **What instead.** One process-wide watchdog thread keeps the deadlines of
//! the checks in flight. [`arm`] registers one (the Z3 context doing the check
//! and its deadline) and returns a guard; at the deadline the watchdog calls
//! `Z3_interrupt` on that context, which cancels the running check exactly as
//! Z3's timer would (it answers `unknown`, which alpine reports as a timeout,
//! never as a proof). Dropping the guard unregisters the check. The interrupt
//! is sent while holding the watchdog's lock and only for a registered check,
//! so it can never reach a context after its check ended and its guard was
//! dropped — in particular never a context that no longer exists.
//!
//! **When Z3 does not stop.** Inside its nonlinear arithmetic Z3 4.8.12 may
//! look at the interrupt only 10–80 s later; the check then stays registered
//! (its guard is dropped when it returns) and the watchdog does not interrupt
//! it again. [`arm`] also tells the proof unit's runner (`verify/runner.rs`)
//! the deadline, so that the thread waiting for the unit can stop waiting;
//! the late check itself is left to end on its own thread, which is the only
//! one that ever drops its context.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A Z3 context, as the address the watchdog hands to `Z3_interrupt`.
///
/// Holding it is safe; using it is only done for a registered check, whose
/// context outlives the registration (see [`Armed`]).
#[derive(Clone, Copy)]
struct ContextPtr(z3_sys::Z3_context);

// SAFETY: see above; the pointer crosses to the watchdog thread only to be
// handed to `Z3_interrupt`, which Z3 documents as callable from any thread.
unsafe impl Send for ContextPtr {}

struct Check {
    deadline: Instant,
    context: ContextPtr,
    fired: bool,
}

#[derive(Default)]
struct Checks {
    next_id: u64,
    in_flight: BTreeMap<u64, Check>,
}

struct Watchdog {
    checks: Mutex<Checks>,
    changed: Condvar,
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<&'static Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog { checks: Mutex::new(Checks::default()), changed: Condvar::new() }));
        std::thread::Builder::new().name("alpine-z3-watchdog".into()).spawn(move || w.run()).expect("cannot start the Z3 watchdog thread");
        w
    })
}

impl Watchdog {
    fn run(&self) {
        let mut checks = self.checks.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            for c in checks.in_flight.values_mut() {
                if !c.fired && c.deadline <= now {
                    // SAFETY: the check is registered, so its context is alive
                    // and its thread is inside (or about to enter, or just
                    // leaving) the check; `Z3_interrupt` is the one Z3 call
                    // made for use from another thread.
                    unsafe { z3_sys::Z3_interrupt(c.context.0) };
                    c.fired = true;
                }
            }
            let next = checks.in_flight.values().filter(|c| !c.fired).map(|c| c.deadline).min();
            checks = match next {
                None => self.changed.wait(checks).unwrap_or_else(|e| e.into_inner()),
                Some(d) => self.changed.wait_timeout(checks, d.saturating_duration_since(now)).unwrap_or_else(|e| e.into_inner()).0,
            };
        }
    }
}

/// A registered check; dropping it unregisters the check.
pub struct Armed {
    id: u64,
}

impl Armed {
    /// Whether the watchdog interrupted the check.
    pub fn fired(&self) -> bool {
        let checks = watchdog().checks.lock().unwrap_or_else(|e| e.into_inner());
        checks.in_flight.get(&self.id).is_some_and(|c| c.fired)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let w = watchdog();
        let mut checks = w.checks.lock().unwrap_or_else(|e| e.into_inner());
        checks.in_flight.remove(&self.id);
        drop(checks);
        crate::verify::runner::check_ended();
    }
}

/// Registers a check that `context` starts now and that must be interrupted
/// after `limit`. Keep the guard until the check has returned.
pub fn arm(context: &z3::Context, limit: Duration) -> Armed {
    let w = watchdog();
    let mut checks = w.checks.lock().unwrap_or_else(|e| e.into_inner());
    let id = checks.next_id;
    checks.next_id += 1;
    let context = ContextPtr(context.get_z3_context());
    let deadline = Instant::now() + limit;
    checks.in_flight.insert(id, Check { deadline, context, fired: false });
    drop(checks);
    w.changed.notify_one();
    crate::verify::runner::check_started(deadline);
    Armed { id }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::Int;

    /// Pigeonhole formula: `n` pigeons in `n - 1` holes. Unsatisfiable, and
    /// exponential for resolution: Z3 needs far more than a second for n = 13.
    fn pigeonhole(s: &z3::Solver, n: usize) {
        use z3::ast::Bool;
        let p: Vec<Vec<Bool>> = (0..n).map(|i| (0..n - 1).map(|j| Bool::new_const(format!("p{i}_{j}"))).collect()).collect();
        for row in &p {
            s.assert(Bool::or(row));
        }
        // Hole `j` holds at most one pigeon.
        for (i, pi) in p.iter().enumerate() {
            for pk in &p[i + 1..] {
                for (a, b) in pi.iter().zip(pk) {
                    s.assert(Bool::or(&[a.not(), b.not()]));
                }
            }
        }
    }

    /// A check that Z3 cannot finish soon is interrupted at the deadline, and
    /// the same context answers the next check normally afterwards.
    #[test]
    fn interrupts_a_long_check_and_the_context_stays_usable() {
        let ctx = z3::Context::thread_local();
        let s = z3::Solver::new();
        pigeonhole(&s, 13);
        let started = Instant::now();
        let guard = arm(&ctx, Duration::from_millis(300));
        let r = s.check();
        assert!(guard.fired(), "the watchdog did not fire ({r:?} after {:?})", started.elapsed());
        drop(guard);
        assert_eq!(r, z3::SatResult::Unknown);
        assert!(started.elapsed() < Duration::from_secs(5), "interrupt took {:?}", started.elapsed());
        // The interrupt does not stick to the context.
        let t = z3::Solver::new();
        t.assert(Int::new_const("w").gt(Int::from_i64(3)));
        let guard = arm(&ctx, Duration::from_secs(10));
        assert_eq!(t.check(), z3::SatResult::Sat);
        assert!(!guard.fired());
    }

    /// Many short checks on several threads, each armed: none is interrupted
    /// late or early, and a late deadline of one does not delay another's.
    #[test]
    fn many_checks_in_many_threads() {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let ctx = z3::Context::thread_local();
                    for i in 0..50 {
                        let solver = z3::Solver::new();
                        solver.assert(Int::new_const("v").eq(Int::from_i64(i)));
                        let guard = arm(&ctx, Duration::from_secs(if i % 2 == 0 { 60 } else { 5 }));
                        assert_eq!(solver.check(), z3::SatResult::Sat);
                        assert!(!guard.fired());
                    }
                });
            }
        });
    }
}
