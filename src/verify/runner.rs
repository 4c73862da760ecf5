//! Proof units on threads that the verifier can stop waiting for.
//!
//! **Why.** Z3 4.8.12 does not always stop at a query's limit: inside its
//! nonlinear arithmetic (the Gröbner-basis step of `nla`) neither
//! `Z3_interrupt` nor `rlimit` is looked at for 10–80 s (issue #32: the corpus
//! program `NestedLoops` with `n > 0` weakened to `n >= 0`, and a soundness
//! mutant of its `opt_` version). The watchdog (`smt/watchdog.rs`) interrupts
//! such a check on time, but the check returns only when Z3 next looks, and a
//! thread that waits for it waits that long too. A Z3 check cannot be killed
//! from outside its process, only abandoned.
//!
//! **What.** Every proof unit runs as an *attempt* on a thread of its own
//! ([`run`]); the thread that wants the unit's report (a rayon worker of
//! `verify_program_observed`) waits for it with a deadline:
//! * the attempt tells its [`Beacon`] the deadline of each Z3 check it is in
//!   (the watchdog's own deadline, from `watchdog::arm`) and, from the encoder,
//!   the obligation the check decides and the failures found so far;
//! * the waiter stops waiting at that deadline plus [`GRACE`], or at the end of
//!   the unit's budget (`--unit-timeout`) plus [`GRACE`], whichever is first;
//!   it then reports the unit as the attempt stood: the failures found so far
//!   and a timeout failure at the obligation in flight (at the unit when the
//!   check decides no obligation of its own: an optional query);
//! * the abandoned attempt finishes on its own thread once Z3 returns: every
//!   later query of it is skipped ([`abandoned`] makes the encoder's
//!   `query_limit` answer "stop"), its report is dropped;
//! * *portfolio*: when a check did not stop (not when the budget ran out), the
//!   unit is tried once more, from scratch, on a fresh thread and Z3 context
//!   with Z3's other nonlinear setting (`arith.nl.grobner=false`, see
//!   `smt::solver::FALLBACK_ARITHMETIC`) and what is left of the budget. Its
//!   report is the verdict if it completes; if it is given up too, the first
//!   attempt's report is. `NestedLoops` with `n >= 0` is proved this way in
//!   0.3 s after the first attempt's 10 s and the grace; the Gröbner step
//!   stays on in first attempts because without it other queries run long
//!   (issue #32: the `opt_` mutant, 85 s).
//!
//! **Invariants and soundness.**
//! * An abandoned attempt never proves its unit: its report holds a failure
//!   with code `unknown` (a timeout), so the unit is rejected unless a complete
//!   retry proves it — every query of which was `unsat` under a sound Z3
//!   setting, as in any other run.
//! * The attempt's Z3 context is created, used and dropped on the attempt's
//!   thread only (the `z3` crate's contexts are thread-local and not `Send`).
//!   The waiter never touches it. The only other thread that does is the
//!   watchdog, with `Z3_interrupt`, under its lock and only while the check is
//!   registered; the registration is dropped on the attempt's thread after the
//!   check returned. Abandoning changes none of this, so an abandoned context
//!   is never interrupted after its check or after it was freed.
//! * The attempt owns what it reads (the IR behind an `Arc`, its own copies of
//!   the source and options): nothing it uses can be freed while it outlives
//!   the call that started it.
//! * The waiter's thread is free again at the deadline, so rayon's pool is
//!   never held by a stuck check; the stuck thread costs CPU time until Z3
//!   looks at the interrupt, and its memory until it ends.
//! * A panic of the attempt is raised again on the waiter's thread, as if the
//!   unit had run there.
//!
//! The CLI does not join abandoned threads: `main` ends with
//! `std::process::exit`, which does not wait for them (checked with a thread
//! still inside Z3's Gröbner step: the exit status is the verdict's).

use super::encode::Blame;
use super::Failure;
use crate::diagnostics::codes;
use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long past a check's deadline (or the end of the unit's budget) the
/// waiter waits before it gives the attempt up. Z3 answers an interrupt within
/// milliseconds when it looks at it; the rest is room for a loaded machine (a
/// late answer is a timeout failure either way; waiting for it only keeps the
/// unit's further diagnostics).
pub const GRACE: Duration = Duration::from_secs(2);

/// What an attempt's thread tells the thread waiting for it. The attempt's
/// thread keeps it in a thread-local (set by [`run`]), so that the watchdog
/// and the encoder reach it without being handed it.
struct Beacon {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The deadline of the Z3 check in flight.
    check: Option<Instant>,
    /// The failure that reports the obligation the check in flight decides,
    /// should the check not come back (`None`: a query that decides no
    /// obligation of its own, such as an optional one).
    at_risk: Option<Failure>,
    /// The failures the attempt had found when that query was asked.
    failures: Vec<Failure>,
    /// The attempt's outcome, once it has one.
    done: Option<std::thread::Result<Box<dyn Any + Send>>>,
    /// The waiter gave the attempt up.
    abandoned: bool,
}

impl Beacon {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

thread_local! {
    static BEACON: RefCell<Option<Arc<Beacon>>> = const { RefCell::new(None) };
}

fn with_beacon(f: impl FnOnce(&Beacon)) {
    // `try_with`: nothing to tell while the thread's locals are being dropped
    // (the `z3` crate's context among them).
    let _ = BEACON.try_with(|b| {
        if let Some(b) = &*b.borrow() {
            f(b)
        }
    });
}

/// The watchdog armed a check of this thread with this deadline (nothing on a
/// thread that runs no attempt: transforms, tests).
pub(crate) fn check_started(deadline: Instant) {
    with_beacon(|b| b.update(|s| s.check = Some(deadline)));
}

/// The check of this thread returned.
pub(crate) fn check_ended() {
    with_beacon(|b| b.update(|s| s.check = None));
}

/// The encoder is about to ask the query that decides `blame` (`None`: an
/// optional query) with the limit `limit` (worded as "timeout after 10 s"),
/// having found `failures` so far: what the unit's report says if the attempt
/// is given up during it. Dropping the guard, after the query, forgets the
/// obligation.
pub(crate) fn obligation(blame: Option<&Blame>, limit: &str, failures: &[Failure]) -> AtRisk {
    with_beacon(|b| {
        let mut s = b.lock();
        s.at_risk = blame.map(|b| Failure {
            code: codes::UNKNOWN,
            message: format!("{}: could not prove ({limit}; {STUCK})", b.message),
            span: b.span,
            related: b.related.clone(),
            values: vec![],
        });
        s.failures = failures.to_vec();
    });
    AtRisk
}

/// See [`obligation`].
pub(crate) struct AtRisk;

impl Drop for AtRisk {
    fn drop(&mut self) {
        with_beacon(|b| b.lock().at_risk = None);
    }
}

/// Why an abandoned unit stopped, in its failure's message.
pub const STUCK: &str = "Z3 did not stop at the limit, so the unit was given up and its later obligations were not checked";

/// Whether the waiter gave this thread's attempt up: it is to ask Z3 nothing
/// more.
pub(crate) fn abandoned() -> bool {
    let mut out = false;
    with_beacon(|b| out = b.lock().abandoned);
    out
}

/// How an attempt ended.
pub(crate) enum Ended<R> {
    /// It returned.
    Done(R),
    /// The waiter gave it up.
    Abandoned(Abandoned),
}

/// Where an abandoned attempt stood.
pub(crate) struct Abandoned {
    /// The failures it had found before the query in flight.
    pub failures: Vec<Failure>,
    /// A Z3 check was in flight (it did not stop at its deadline); otherwise
    /// the unit's budget ran out between checks.
    pub in_check: bool,
    /// The timeout failure of the obligation that check decides, if any.
    pub at_risk: Option<Failure>,
}

/// Runs `work` on a thread of its own and waits for it until the deadline of
/// its Z3 check in flight, or `budget_end`, plus [`GRACE`]. `setup` runs first
/// on the new thread (the Z3 settings of a retry). A panic of `work` is raised
/// again here.
pub(crate) fn run<R: Send + 'static>(budget_end: Option<Instant>, setup: fn(), work: impl FnOnce() -> R + Send + 'static) -> Ended<R> {
    let beacon = Arc::new(Beacon { state: Mutex::new(State::default()), changed: Condvar::new() });
    let theirs = Arc::clone(&beacon);
    let job = move || {
        BEACON.with(|b| *b.borrow_mut() = Some(Arc::clone(&theirs)));
        let out = panic::catch_unwind(AssertUnwindSafe(|| {
            setup();
            Box::new(work()) as Box<dyn Any + Send>
        }));
        BEACON.with(|b| *b.borrow_mut() = None);
        // An abandoned attempt's result is dropped here, on its own thread;
        // its Z3 context goes with the thread's locals when the thread ends.
        theirs.update(|s| {
            if !s.abandoned {
                s.done = Some(out);
            }
        });
    };
    // The attempt's stack is as large as a pool thread's (deeply nested
    // programs); like theirs it is reserved, not committed. The thread is new,
    // so the `z3` crate's thread-local default context, which the attempt
    // uses, is new too: the attempt's own, dropped when the thread ends.
    // (No thread to be had is the end of the process, as for rayon's pool.)
    std::thread::Builder::new()
        .name("alpine-unit".into())
        .stack_size(crate::POOL_STACK)
        .spawn(job)
        .expect("cannot start a thread for a proof unit");
    match wait(&beacon, budget_end) {
        Ok(Ok(r)) => Ended::Done(*r.downcast::<R>().expect("an attempt returns what it was asked for")),
        Ok(Err(p)) => panic::resume_unwind(p),
        Err(a) => Ended::Abandoned(a),
    }
}

/// Waits for `beacon`'s attempt; see [`run`].
fn wait(beacon: &Beacon, budget_end: Option<Instant>) -> Result<std::thread::Result<Box<dyn Any + Send>>, Abandoned> {
    let mut s = beacon.lock();
    loop {
        if let Some(done) = s.done.take() {
            return Ok(done);
        }
        let deadline = [s.check, budget_end].into_iter().flatten().min().map(|d| d + GRACE);
        s = match deadline {
            Some(d) if Instant::now() >= d => {
                s.abandoned = true;
                return Err(Abandoned {
                    failures: std::mem::take(&mut s.failures),
                    in_check: s.check.is_some(),
                    at_risk: s.at_risk.take(),
                });
            }
            Some(d) => beacon.changed.wait_timeout(s, d.saturating_duration_since(Instant::now())).unwrap_or_else(|e| e.into_inner()).0,
            None => beacon.changed.wait(s).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Span;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn blame() -> Blame {
        Blame::new(codes::ASSERT_FAILED, "assertion may not hold", Span::new(10, 20))
    }

    /// A check that does not come back (Z3 ignoring the interrupt, simulated by
    /// a sleep inside the check) is given up at its deadline plus [`GRACE`],
    /// reported at its obligation with the failures found before it; the
    /// attempt, once it wakes, is told to ask nothing more.
    #[test]
    fn a_check_that_does_not_stop_is_given_up_at_its_deadline_plus_grace() {
        let woke_abandoned = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&woke_abandoned);
        let started = Instant::now();
        let ended = run(
            None,
            || {},
            move || {
                let earlier = Failure::new(codes::ASSERT_FAILED, "an earlier failure", Span::new(1, 2));
                let _risk = obligation(Some(&blame()), "timeout after 0.2 s", &[earlier]);
                check_started(Instant::now() + Duration::from_millis(200));
                std::thread::sleep(GRACE + Duration::from_secs(1));
                check_ended();
                flag.store(abandoned(), Ordering::SeqCst);
            },
        );
        let took = started.elapsed();
        let Ended::Abandoned(a) = ended else { panic!("the attempt was waited for") };
        assert!(took >= GRACE && took < GRACE + Duration::from_millis(900), "given up after {took:?}");
        assert!(a.in_check);
        assert_eq!(a.failures.len(), 1);
        assert_eq!(a.failures[0].message, "an earlier failure");
        let f = a.at_risk.expect("the obligation in flight");
        assert_eq!((f.code, f.span), (codes::UNKNOWN, Span::new(10, 20)));
        assert_eq!(f.message, format!("assertion may not hold: could not prove (timeout after 0.2 s; {STUCK})"));
        // The attempt ends on its own and learns it was given up.
        let wait_for = Instant::now();
        while !woke_abandoned.load(Ordering::SeqCst) && wait_for.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(woke_abandoned.load(Ordering::SeqCst));
    }

    /// Checks that end on time, and work between them, are waited for
    /// whatever they take in all; the result comes back as it was returned.
    #[test]
    fn an_attempt_within_its_limits_is_waited_for() {
        let ended = run(
            None,
            || {},
            || {
                for _ in 0..3 {
                    check_started(Instant::now() + Duration::from_millis(300));
                    std::thread::sleep(Duration::from_millis(100));
                    check_ended();
                    std::thread::sleep(Duration::from_millis(300));
                }
                assert!(!abandoned());
                42
            },
        );
        assert!(matches!(ended, Ended::Done(42)));
    }

    /// The unit's budget bounds the time between checks too.
    #[test]
    fn the_budget_bounds_an_attempt_between_checks() {
        let started = Instant::now();
        let ended = run(Some(started + Duration::from_millis(100)), || {}, || std::thread::sleep(GRACE + Duration::from_secs(1)));
        let Ended::Abandoned(a) = ended else { panic!("the attempt was waited for") };
        assert!(!a.in_check && a.at_risk.is_none() && a.failures.is_empty());
        assert!(started.elapsed() < GRACE + Duration::from_millis(900), "given up after {:?}", started.elapsed());
    }

    /// A panic in the attempt is a panic of the caller, as if the unit had run
    /// on the caller's thread; `setup` runs on the attempt's thread first.
    #[test]
    fn a_panic_of_the_attempt_reaches_the_caller() {
        let caught = panic::catch_unwind(|| run(None, || {}, || -> u32 { panic!("boom") }));
        let payload = caught.err().expect("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        thread_local!(static SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
        let ended = run(None, || SET.with(|s| s.set(true)), || SET.with(|s| s.get()));
        assert!(matches!(ended, Ended::Done(true)));
        assert!(!SET.with(|s| s.get()), "setup ran on the caller's thread");
    }
}
