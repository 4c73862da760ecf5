//! Java-style threads in the interpreter: `fork`/`join`, and the monitor of
//! every object (`lock`/`unlock`/`wait`/`notify`).
//!
//! A program that forks runs each PVL thread on an OS thread of its own (the
//! interpreter is recursive: a thread blocked in `wait` deep inside calls keeps
//! its stack), but only one of them runs at a time. The running thread holds
//! the *baton* (`Sched::current`); it hands it on only where it blocks — a
//! monitor held by another thread, `wait`, `join` of an unfinished thread —
//! where it ends, and at `fork`/`unlock`/`notify`, where the next thread is
//! drawn from the seed among the runnable ones (itself included), so different
//! seeds run different interleavings. When no thread can run and not all have
//! ended, the run stops with a *deadlock* error.
//!
//! `fork o` runs `o.run()`; `join o` waits for the thread `fork o` started.
//! Monitors are re-entrant; `wait` releases the monitor completely and takes
//! it back, at the same depth, once notified and the monitor is free;
//! `notify` wakes one waiting thread, drawn from the seed. The top-level call
//! returns when every thread has ended (as a Java program without daemon
//! threads), so the final state includes the work of threads never joined.
//!
//! Values hold `Rc`s, which are not `Send`. They cross OS threads here (the
//! forked object, the call's arguments and result) inside [`Baton`], which is
//! sound because of the baton: interpreter code runs on one OS thread at a
//! time, every hand-over goes through the scheduler's mutex (a happens-before
//! edge), and a thread touches values — unwinding after a failure included —
//! only while it holds the baton, so no reference count is ever updated by two
//! threads at once.

use super::{err, Error, Frame, Interp, Value};
use crate::ast::*;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};

/// Stack of each interpreter thread (a deep recursion runs on it).
const THREAD_STACK: usize = 256 << 20;

/// Most threads one run may fork.
const MAX_THREADS: usize = 256;

/// A value moved between OS threads under the baton (see the module doc).
struct Baton<T>(T);
// SAFETY: only the thread holding the baton runs interpreter code or touches
// values, and the baton changes hands under the scheduler's mutex; see the
// module doc.
unsafe impl<T> Send for Baton<T> {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Runnable,
    /// Wants the monitor of this object (by address).
    Locking(usize),
    /// In `wait` on this object's monitor.
    Waiting(usize),
    /// In `join` of this thread.
    Joining(usize),
    /// The main thread's call returned; it waits for every other thread.
    JoiningAll,
    Done,
}

impl Status {
    /// For messages (no addresses: a message must not depend on the run).
    fn describe(self) -> String {
        match self {
            Status::Runnable => "can run".into(),
            Status::Locking(_) => "waits for a lock".into(),
            Status::Waiting(_) => "waits to be notified".into(),
            Status::Joining(t) => format!("joins thread {t}"),
            Status::JoiningAll => "waits for the other threads".into(),
            Status::Done => "has ended".into(),
        }
    }
}

struct Sched {
    current: usize,
    threads: Vec<Status>,
    /// Monitor owner and depth, by object address.
    monitors: HashMap<usize, (usize, u32)>,
    /// Thread started by `fork o`, by the address of `o`.
    forked: HashMap<usize, usize>,
    seed: u64,
    failure: Option<Error>,
}

impl Sched {
    fn draw(&mut self, n: usize) -> usize {
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        (self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
    fn runnable(&self) -> Vec<usize> {
        (0..self.threads.len()).filter(|&t| self.threads[t] == Status::Runnable).collect()
    }
}

type Shared = Arc<(Mutex<Sched>, Condvar)>;

/// A thread to start: `obj.run()` of class `class`.
struct Job {
    tid: usize,
    class: Name,
    obj: Baton<Value>,
    /// For the new thread's own forks.
    spawn: mpsc::Sender<Job>,
}

/// What one interpreter thread knows about the run it belongs to.
pub(super) struct Runtime {
    sched: Shared,
    tid: usize,
    spawn: mpsc::Sender<Job>,
}

fn key(v: &Value) -> Result<usize, Error> {
    match v {
        Value::Obj(o) => Ok(Rc::as_ptr(o) as *const () as usize),
        Value::Array(a) => Ok(Rc::as_ptr(a) as *const () as usize),
        _ => err("synchronisation on null or a non-object"),
    }
}

/// Whether the program forks a thread anywhere.
pub(super) fn forks(p: &Program) -> bool {
    struct Find(bool);
    impl crate::ast::visit::Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            self.0 |= matches!(s.kind, StmtKind::Sync { kind: SyncKind::Fork, .. });
            crate::ast::visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(false);
    crate::ast::visit::Visitor::visit_program(&mut f, p);
    f.0
}

impl Runtime {
    fn lock(&self) -> MutexGuard<'_, Sched> {
        self.sched.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks until this thread holds the baton; an error if the run has
    /// failed meanwhile. Even then the thread waits for the baton, so that it
    /// unwinds (dropping its values) while no other thread runs.
    fn wait_turn<'a>(&'a self, mut s: MutexGuard<'a, Sched>) -> Result<MutexGuard<'a, Sched>, Error> {
        while s.current != self.tid {
            s = self.sched.1.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        match &s.failure {
            Some(e) => Err(e.clone()),
            None => Ok(s),
        }
    }

    /// Hands the baton to a runnable thread drawn from the seed (this one
    /// included if it is runnable) and waits until it comes back. A deadlock
    /// when no thread can run: the error is returned with the baton kept.
    fn switch<'a>(&'a self, mut s: MutexGuard<'a, Sched>) -> Result<MutexGuard<'a, Sched>, Error> {
        let runnable = s.runnable();
        if runnable.is_empty() {
            let blocked: Vec<String> = s
                .threads
                .iter()
                .enumerate()
                .filter(|(_, st)| **st != Status::Done)
                .map(|(t, st)| format!("thread {t} {}", st.describe()))
                .collect();
            let e = Error(format!("deadlock: no thread can run ({})", blocked.join(", ")));
            s.failure = Some(e.clone());
            return Err(e);
        }
        let k = s.draw(runnable.len());
        s.current = runnable[k];
        self.sched.1.notify_all();
        self.wait_turn(s)
    }

    /// Takes the monitor of `k` `depth` times, blocking while another thread holds it.
    fn acquire<'a>(&'a self, mut s: MutexGuard<'a, Sched>, k: usize, depth: u32) -> Result<(), Error> {
        loop {
            match s.monitors.get(&k).copied() {
                None => {
                    s.monitors.insert(k, (self.tid, depth));
                    return Ok(());
                }
                Some((owner, d)) if owner == self.tid => {
                    s.monitors.insert(k, (owner, d + depth));
                    return Ok(());
                }
                Some(_) => {
                    s.threads[self.tid] = Status::Locking(k);
                    s = self.switch(s)?;
                }
            }
        }
    }

    fn owned(&self, s: &Sched, k: usize, what: &str) -> Result<u32, Error> {
        match s.monitors.get(&k) {
            Some(&(owner, d)) if owner == self.tid => Ok(d),
            _ => err(format!("`{what}` of a lock this thread does not hold")),
        }
    }

    /// Releases the monitor of `k` completely; threads that want it may run.
    fn release(s: &mut Sched, k: usize) {
        s.monitors.remove(&k);
        for st in &mut s.threads {
            if *st == Status::Locking(k) {
                *st = Status::Runnable;
            }
        }
    }

    fn sync(&self, kind: SyncKind, obj: &Value, class: Option<Name>) -> Result<(), Error> {
        let k = key(obj)?;
        let mut s = self.wait_turn(self.lock())?;
        match kind {
            SyncKind::Lock => self.acquire(s, k, 1),
            SyncKind::Unlock => {
                let d = self.owned(&s, k, "unlock")?;
                if d > 1 {
                    s.monitors.insert(k, (self.tid, d - 1));
                } else {
                    Self::release(&mut s, k);
                }
                self.switch(s).map(drop)
            }
            SyncKind::Wait => {
                let d = self.owned(&s, k, "wait")?;
                Self::release(&mut s, k);
                s.threads[self.tid] = Status::Waiting(k);
                let s = self.switch(s)?;
                self.acquire(s, k, d)
            }
            SyncKind::Notify => {
                self.owned(&s, k, "notify")?;
                let waiting: Vec<usize> = (0..s.threads.len()).filter(|&t| s.threads[t] == Status::Waiting(k)).collect();
                if !waiting.is_empty() {
                    let t = waiting[s.draw(waiting.len())];
                    s.threads[t] = Status::Runnable;
                }
                self.switch(s).map(drop)
            }
            SyncKind::Fork => {
                let class = class.ok_or_else(|| Error("`fork` of a non-object".into()))?;
                if s.forked.contains_key(&k) {
                    return err("`fork` of an object whose thread was started already");
                }
                if s.threads.len() >= MAX_THREADS {
                    return err(format!("more than {MAX_THREADS} threads"));
                }
                let tid = s.threads.len();
                s.threads.push(Status::Runnable);
                s.forked.insert(k, tid);
                self.spawn
                    .send(Job { tid, class, obj: Baton(obj.clone()), spawn: self.spawn.clone() })
                    .map_err(|_| Error("the run is over".into()))?;
                self.switch(s).map(drop)
            }
            SyncKind::Join => {
                let Some(&t) = s.forked.get(&k) else {
                    return err("`join` of an object that was not forked");
                };
                while s.threads[t] != Status::Done {
                    s.threads[self.tid] = Status::Joining(t);
                    s = self.switch(s)?;
                }
                Ok(())
            }
        }
    }

    /// This thread's work is over and its values are dropped: wakes its
    /// joiners and hands the baton on for good.
    fn finish(&self, r: &Result<(), Error>) {
        let mut s = self.lock();
        s.threads[self.tid] = Status::Done;
        if let Err(e) = r {
            s.failure.get_or_insert_with(|| e.clone());
        }
        for st in &mut s.threads {
            if *st == Status::Joining(self.tid) {
                *st = Status::Runnable;
            }
        }
        if s.threads.iter().all(|st| matches!(st, Status::Done | Status::JoiningAll)) {
            if let Some(st) = s.threads.iter_mut().find(|st| **st == Status::JoiningAll) {
                *st = Status::Runnable;
            }
        }
        let runnable = s.runnable();
        let live: Vec<usize> = (0..s.threads.len()).filter(|&t| s.threads[t] != Status::Done).collect();
        if s.failure.is_none() && !runnable.is_empty() {
            let k = s.draw(runnable.len());
            s.current = runnable[k];
        } else if let Some(&t) = live.first() {
            // Failed, or nobody can run: each live thread in turn gets the baton,
            // finds the failure and unwinds.
            s.failure.get_or_insert_with(|| Error("deadlock: every live thread is blocked".into()));
            s.current = t;
        }
        self.sched.1.notify_all();
    }

    /// The main thread's call returned: waits until every other thread ended.
    fn join_all(&self) -> Result<(), Error> {
        let mut s = self.wait_turn(self.lock())?;
        while s.threads.iter().enumerate().any(|(t, st)| t != self.tid && *st != Status::Done) {
            s.threads[self.tid] = Status::JoiningAll;
            s = self.switch(s)?;
        }
        Ok(())
    }
}

impl<'p> Interp<'p> {
    /// Runs a `lock`/`unlock`/`wait`/`notify`/`fork`/`join` statement.
    pub(super) fn sync(&mut self, f: &mut Frame, kind: SyncKind, obj: &Expr) -> Result<(), Error> {
        let v = self.eval(f, obj)?;
        let class = match &v {
            Value::Obj(o) => Some(o.borrow().class.clone()),
            _ => None,
        };
        match &self.runtime {
            Some(rt) => rt.sync(kind, &v, class),
            // A program without `fork` runs on one thread: a monitor is always
            // free, and a `wait` could never be notified.
            None => match kind {
                SyncKind::Lock | SyncKind::Unlock | SyncKind::Notify => key(&v).map(drop),
                SyncKind::Wait => err("deadlock: `wait` in a program without other threads"),
                SyncKind::Fork | SyncKind::Join => err("`fork`/`join` outside a threaded run"),
            },
        }
    }

    /// [`Interp::call`] of a program that forks: the call runs as thread 0,
    /// forked threads beside it (see the module doc); returns once all ended.
    pub(super) fn call_threaded(&mut self, class: &str, name: &str, this: Option<Value>, args: Vec<Value>) -> Result<Value, Error> {
        let sched: Shared = Arc::new((
            Mutex::new(Sched {
                current: 0,
                threads: vec![Status::Runnable],
                monitors: HashMap::new(),
                forked: HashMap::new(),
                seed: if self.seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { self.seed },
                failure: None,
            }),
            Condvar::new(),
        ));
        let (program, fuel, skip_lemmas, check_contracts, source) =
            (self.program, self.fuel, self.skip_lemmas, self.check_contracts, self.source);
        let interp = |tid: usize, spawn: mpsc::Sender<Job>| {
            let mut it = Interp::new(program, fuel);
            it.skip_lemmas = skip_lemmas;
            it.check_contracts = check_contracts;
            it.source = source;
            it.runtime = Some(Runtime { sched: sched.clone(), tid, spawn });
            it
        };
        let (tx, rx) = mpsc::channel::<Job>();
        let call = Baton((class.to_string(), name.to_string(), this, args));
        std::thread::scope(|scope| {
            let mut main = interp(0, tx);
            let main = std::thread::Builder::new()
                .stack_size(THREAD_STACK)
                .spawn_scoped(scope, move || {
                    let call = call;
                    let (class, name, this, args) = call.0;
                    // Thread 0 holds the baton from the start.
                    let r = main.call(&class, &name, this, args);
                    let rt = main.runtime.take().expect("a runtime");
                    let r = r.and_then(|v| match rt.join_all() {
                        Ok(()) => Ok(v),
                        // Holding the baton: dropping `v` is safe.
                        Err(e) => Err(e),
                    });
                    rt.finish(&r.as_ref().map(drop).map_err(Clone::clone));
                    // Handed back untouched; nobody runs any more.
                    Baton(r)
                })
                .expect("spawns a thread");
            // Ends when every interpreter thread (each holding a sender) is over.
            for job in rx {
                let mut it = interp(job.tid, job.spawn);
                let (obj, class) = (job.obj, job.class);
                std::thread::Builder::new()
                    .stack_size(THREAD_STACK)
                    .spawn_scoped(scope, move || {
                        let obj = obj;
                        let rt = it.runtime.take().expect("a runtime");
                        let started = rt.wait_turn(rt.lock()).map(drop);
                        let (r, rt) = match started {
                            Ok(()) => {
                                it.runtime = Some(rt);
                                let r = it.call(&class, "run", Some(obj.0), Vec::new()).map(drop);
                                (r, it.runtime.take().expect("a runtime"))
                            }
                            // Holding the baton: dropping `obj` is safe.
                            Err(e) => (Err(e), rt),
                        };
                        rt.finish(&r);
                    })
                    .expect("spawns a thread");
            }
            main.join().map_err(|_| Error("an interpreter thread panicked".into()))?.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    fn program(src: &str) -> Program {
        crate::frontend(&crate::diagnostics::SourceFile::new("t.pvl", src)).expect("checks").0
    }

    /// A one-slot queue whose `put` and `take` wait for each other.
    const QUEUE: &str = "class Queue { int data; boolean used; \
        void put(int x) { lock this; while (used) { wait this; } used = true; data = x; notify this; unlock this; } \
        int take() { int res; lock this; while (!used) { wait this; } res = data; used = false; notify this; unlock this; return res; } }";

    /// Two workers pass two tokens around through two queues (a Kahn network:
    /// the result does not depend on the interleaving).
    const PING_PONG: &str = "class Worker { Queue q1; Queue q2; int last; \
        Worker(Queue q1, Queue q2) { this.q1 = q1; this.q2 = q2; } \
        void run() { int i = 0; while (i < 4) { int t = q1.take(); last = t; q2.put(t + 2); i = i + 1; } } } \
        class Main { int m() { Queue q1 = new Queue(); Queue q2 = new Queue(); q1.put(1); q2.put(2); \
          Worker w1 = new Worker(q1, q2); Worker w2 = new Worker(q2, q1); fork w1; fork w2; join w1; join w2; \
          return q1.data * 1000 + q2.data * 100 + w1.last * 10 + w2.last; } \
        int nojoin() { Queue q = new Queue(); Worker w = new Worker(q, new Queue()); fork w; q.put(5); return 0; } \
        int stuck() { Queue q = new Queue(); return q.take(); } }";

    #[test]
    fn forked_workers_wait_and_notify_in_every_interleaving() {
        let p = program(&format!("{QUEUE} {PING_PONG}"));
        let mut seen = std::collections::HashSet::new();
        for seed in 1..20 {
            let mut it = Interp::new(&p, 1_000_000);
            it.seed = seed;
            // Token A (1) and B (2) gain 2 per hop: after 4 rounds q1 holds
            // A = 9, q2 holds B = 10, w1 last took B = 8 and w2 took A = 7.
            let r = it.call("Main", "m", None, vec![]).unwrap().deep();
            seen.insert(r);
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
        let r = seen.into_iter().next().unwrap();
        assert_eq!(r, format!("{}", 9 * 1000 + 10 * 100 + 8 * 10 + 7), "{r}");
    }

    #[test]
    fn unjoined_threads_finish_and_deadlocks_are_errors() {
        let p = program(&format!("{QUEUE} {PING_PONG}"));
        // The forked worker takes 5, then waits on its own empty queue forever.
        let mut it = Interp::new(&p, 1_000_000);
        let e = it.call("Main", "nojoin", None, vec![]).unwrap_err();
        assert!(e.0.starts_with("deadlock"), "{e:?}");
        let mut it = Interp::new(&p, 1_000_000);
        let e = it.call("Main", "stuck", None, vec![]).unwrap_err();
        assert!(e.0.starts_with("deadlock"), "{e:?}");
    }

    #[test]
    fn monitors_must_be_held() {
        let p = program(
            "class W { int n; void run() { lock this; n = n + 1; unlock this; } } \
             class M { int m() { W a = new W(); W b = new W(); fork a; fork b; join a; join b; lock a; a.n = a.n + b.n; unlock a; return a.n; } \
               void bad() { W a = new W(); fork a; unlock a; } \
               void twice() { W a = new W(); fork a; fork a; } }",
        );
        for seed in 1..5 {
            let mut it = Interp::new(&p, 100_000);
            it.seed = seed;
            assert_eq!(it.call("M", "m", None, vec![]).unwrap().deep(), "2");
        }
        let mut it = Interp::new(&p, 100_000);
        assert_eq!(it.call("M", "bad", None, vec![]).unwrap_err().0, "`unlock` of a lock this thread does not hold");
        assert!(it.call("M", "twice", None, vec![]).unwrap_err().0.contains("started already"));
    }
}
