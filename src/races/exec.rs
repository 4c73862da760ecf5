//! The lock-step, predicated execution of a kernel by two threads (the
//! two-thread reduction of GPUVerify; the lock-step semantics of Collingborne
//! et al., "Interleaving and lock-step semantics for analysis and verification
//! of GPU kernels", ESOP 2013, for reducible control flow).
//!
//! Both threads run every statement; each has a predicate saying whether it
//! really executes it. `if` runs both branches under `pred ∧ c` and `pred ∧ ¬c`
//! and joins by disjunction; `break`/`continue`/`return` move the predicate of
//! the threads that take them into the enclosing loop's (switch's, function's)
//! accumulator, so structured control flow of C — the only kind the kernel IR
//! has (`goto` is refused by the front end) — becomes straight-line code with
//! guarded updates. A write under a false predicate changes nothing, so each
//! thread's values are those of its own sequential run.
//!
//! Loops (see [`Exec::exec_loop`]): the variables the body may change (found by
//! running the body once on a copy of the state and comparing terms) are
//! havocked (a log's access size only among its value on entry and the sizes
//! the program logs, which is all it can hold); the invariants (the user's and Houdini's, see `houdini.rs`) are
//! asserted on entry, assumed at the head, asserted after one more iteration of
//! the body. A per-thread flag `L` says whether the thread is still iterating;
//! a thread that left (by its condition or a `break`) keeps its state, which is
//! a head state too, so the loop exits where neither thread iterates. A barrier
//! in the body is then checked for both threads' predicates being equal, which
//! is GPUVerify's loop rule for barrier divergence.

use super::houdini::Template;
use super::report::Goal;
use super::state::{Binding, ExecState};
use super::value::{fresh_of, named_of, size_of, truthy, Val};
use super::vc::Checker;
use super::Options;
use crate::ast::Span;
use crate::cfront::ir::{AddressSpace, AnnotationKind, Barrier, Expr, ExprKind, Function, Stmt, StmtKind, SwitchArm, Type};
use crate::diagnostics::{codes, Diagnostic};
use z3::ast::{Bool, BV};

pub(crate) type R<T> = Result<T, Diagnostic>;

/// A function being executed (inlined).
pub(crate) struct Frame {
    pub(crate) function: String,
    /// Per thread: has the thread returned from this call.
    pub(crate) returned: [usize; 2],
    /// Per thread: the value returned.
    pub(crate) ret: Option<[usize; 2]>,
    /// `__function_wide_invariant`s: invariants of every loop of the function.
    pub(crate) loop_invariants: Vec<Stmt>,
    /// Locals whose address is taken: they live in (private) memory.
    pub(crate) address_taken: std::collections::HashSet<String>,
    /// The state at the call, for `__old_…` in postconditions (kept only
    /// when the function has postconditions).
    pub(crate) old: Option<Box<ExecState>>,
}

/// A `break`/`continue` target: the predicates of the threads that took them.
pub(crate) struct Target {
    pub(crate) is_loop: bool,
    pub(crate) broke: [Bool; 2],
    pub(crate) continued: [Bool; 2],
}

pub(crate) struct Exec<'c, 'm> {
    pub(crate) chk: &'c mut Checker<'m>,
    pub(crate) options: &'c Options,
    pub(crate) st: ExecState,
    pub(crate) pred: [Bool; 2],
    pub(crate) frames: Vec<Frame>,
    pub(crate) targets: Vec<Target>,
    /// Running a loop body only to see what it changes: nothing is checked.
    pub(crate) dry: bool,
    /// Evaluating an annotation: no access is logged or checked.
    pub(crate) pure_eval: bool,
    /// Loops met so far in this run (names Houdini's candidates).
    pub(crate) loop_seq: usize,
    /// While an asynchronous copy makes its accesses: its event per thread,
    /// recorded with thread 1's log (`group.rs`).
    pub(crate) copy_handle: Option<[BV; 2]>,
    /// The sizes each log's size slot has been given (dry runs included).
    pub(crate) log_sizes: std::collections::HashMap<usize, Vec<u64>>,
    /// Pointer-array elements of struct kernel arguments that
    /// `__requires_fresh_array` names, by field path (`q.p[4]`).
    pub(crate) fresh_paths: std::collections::HashSet<String>,
    /// The values each thread's increments of each atomic counter returned so
    /// far in this run (`counters.rs`).
    pub(crate) counter_values: std::collections::HashMap<String, [Vec<(z3::ast::Bool, z3::ast::BV)>; 2]>,
    /// Barrier invariants waiting for their barrier (`barrier_inv.rs`).
    pub(crate) pending_invariants: Vec<super::barrier_inv::Pending>,
    /// While a barrier invariant is evaluated: what its reads check.
    pub(crate) invariant_read: Option<super::barrier_inv::InvariantRead>,
}

/// Whether `pred` holds for `s` or a statement under it (calls not followed).
pub(crate) fn any_stmt(s: &Stmt, pred: &dyn Fn(&Stmt) -> bool) -> bool {
    if pred(s) {
        return true;
    }
    match &s.kind {
        StmtKind::Block(b) => b.iter().any(|s| any_stmt(s, pred)),
        StmtKind::If { then, otherwise, .. } => any_stmt(then, pred) || otherwise.as_deref().is_some_and(|o| any_stmt(o, pred)),
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => any_stmt(body, pred),
        StmtKind::For { init, body, .. } => init.iter().any(|s| any_stmt(s, pred)) || any_stmt(body, pred),
        StmtKind::Switch { arms, .. } => arms.iter().any(|a| a.body.iter().any(|s| any_stmt(s, pred))),
        _ => false,
    }
}

/// The shape of a loop.
pub(crate) struct LoopShape<'a> {
    pub(crate) invariants: &'a [Stmt],
    pub(crate) cond: Option<&'a Expr>,
    pub(crate) step: Option<&'a Expr>,
    pub(crate) body: &'a Stmt,
    /// `while`/`for` test before the body, `do … while` after.
    pub(crate) test_first: bool,
}

pub(crate) fn or2(a: &[Bool; 2], b: &[Bool; 2]) -> [Bool; 2] {
    std::array::from_fn(|t| Bool::or(&[a[t].clone(), b[t].clone()]))
}

pub(crate) fn and2(a: &[Bool; 2], b: &[Bool; 2]) -> [Bool; 2] {
    std::array::from_fn(|t| Bool::and(&[a[t].clone(), b[t].clone()]))
}

fn falses() -> [Bool; 2] {
    [Bool::from_bool(false), Bool::from_bool(false)]
}

impl<'c, 'm> Exec<'c, 'm> {
    pub(crate) fn new(chk: &'c mut Checker<'m>, options: &'c Options) -> Exec<'c, 'm> {
        Exec {
            chk,
            options,
            st: ExecState::new(),
            pred: [Bool::from_bool(true), Bool::from_bool(true)],
            frames: Vec::new(),
            targets: Vec::new(),
            dry: false,
            pure_eval: false,
            loop_seq: 0,
            copy_handle: None,
            log_sizes: Default::default(),
            fresh_paths: Default::default(),
            counter_values: Default::default(),
            pending_invariants: Vec::new(),
            invariant_read: None,
        }
    }

    pub(crate) fn unsupported(&self, span: Span, what: &str) -> Diagnostic {
        Diagnostic::error(codes::RACES_UNSUPPORTED, format!("the race checker does not support {what}"), span)
            .with_label("not supported")
            .with_help("alpine cannot prove this kernel free of data races and barrier divergence")
    }

    pub(crate) fn prove(&mut self, goal: Bool, what: Goal) {
        if !self.dry && !self.pure_eval {
            self.chk.prove(goal, what);
        }
    }

    pub(crate) fn assume(&mut self, fact: &Bool) {
        if !self.dry {
            self.chk.assume(fact);
        }
    }

    /// Runs a kernel from its start, both threads enabled.
    pub(crate) fn run_kernel(&mut self, kernel: &Function) -> R<()> {
        let module = self.chk.module;
        self.st.track_access = super::barrier_inv::uses_barrier_invariants(module);
        for g in &module.globals {
            let r = self.declare_memory(&g.name, &g.ty, g.space, g.span);
            self.constant_contents(r, g);
        }
        for p in &kernel.params {
            match &p.ty {
                // A function pointer: any value, the same in every thread.
                Type::Pointer { pointee, .. } if **pointee == Type::Function => {
                    let v = Val::Ptr {
                        base: BV::new_const(format!("arg.{}.base", p.name), super::value::BASE_BITS),
                        off: BV::new_const(format!("arg.{}.off", p.name), 64),
                    };
                    let second = if kernel.is_kernel { v.clone() } else { super::value::fresh_ptr(&p.name) };
                    let slots = [self.st.alloc(v), self.st.alloc(second)];
                    self.st.bind(&p.name, Binding::Scalar { slots, ty: p.ty.clone() });
                }
                Type::Pointer { pointee, space } => {
                    let space =
                        if *space == AddressSpace::Generic || *space == AddressSpace::Private { AddressSpace::Global } else { *space };
                    let elem = super::value::bits_of(pointee).and_then(|_| Some(((**pointee).clone(), size_of(module, pointee)?)));
                    let r = self.st.add_region(&p.name, space, elem, None, p.span);
                    self.unchecked_array(r);
                    self.shared_start(r);
                    // A kernel argument is the same for all threads; a device
                    // function checked on its own may get any offsets.
                    let off = |t: usize| if kernel.is_kernel || t == 0 { super::value::offset(0) } else { BV::fresh_const("arg", 64) };
                    let base = self.st.regions[r].base();
                    let slots =
                        [self.st.alloc(Val::Ptr { base: base.clone(), off: off(0) }), self.st.alloc(Val::Ptr { base, off: off(1) })];
                    self.st.bind(&p.name, Binding::Scalar { slots, ty: p.ty.clone() });
                }
                Type::Struct(_) | Type::Vector { .. } | Type::Array { .. } => {
                    let uid = self.st.uid();
                    self.st.bind(&p.name, Binding::Aggregate { uid, uniform: true });
                }
                ty => {
                    let v = named_of(ty, &format!("arg.{}", p.name));
                    let second = if kernel.is_kernel { v.clone() } else { fresh_of(ty, &p.name) };
                    let slots = [self.st.alloc(v), self.st.alloc(second)];
                    self.st.bind(&p.name, Binding::Scalar { slots, ty: ty.clone() });
                }
            }
        }
        let body = kernel.body.as_deref().unwrap_or(&[]);
        self.run_body(kernel, body, None)?;
        Ok(())
    }

    /// An array that `/checkArrays` leaves out keeps no logs (GPUVerify's
    /// disabled arrays: not race-checked, `__write(A)` false).
    fn unchecked_array(&mut self, r: usize) {
        if let Some(list) = &self.options.check_arrays {
            if !list.contains(&self.st.regions[r].name) {
                self.st.regions[r].logs = None;
            }
        }
    }

    /// The contents of shared memory start equal for two threads of one group.
    fn shared_start(&mut self, r: usize) {
        let region = &self.st.regions[r];
        if region.space != AddressSpace::Shared {
            return;
        }
        if let Some(mem) = region.mem {
            if let Some(eq) = self.st.slots[mem[0]].same(&self.st.slots[mem[1]]) {
                let same_group = self.chk.geometry.same_group();
                self.assume(&same_group.implies(&eq));
            }
        }
    }

    /// A variable that lives in memory: an array, or a `__shared__`/global scalar.
    fn declare_memory(&mut self, name: &str, ty: &Type, space: AddressSpace, span: Span) -> usize {
        let module = self.chk.module;
        let mut elem_ty = ty;
        while let Type::Array { elem, .. } = elem_ty {
            elem_ty = elem;
        }
        let elem = super::value::bits_of(elem_ty).and_then(|_| Some((elem_ty.clone(), size_of(module, elem_ty)?)));
        let len = match ty {
            Type::Array { len: None, .. } => None,
            _ => size_of(module, ty),
        };
        let r = self.st.add_region(name, space, elem, len, span);
        self.unchecked_array(r);
        self.shared_start(r);
        self.st.bind(name, Binding::Memory { region: r, scalar: !matches!(ty, Type::Array { .. }) });
        r
    }

    /// Runs a function body as a new frame (the kernel, or an inlined call
    /// whose parameters are already bound); returns the values returned.
    pub(crate) fn run_body(&mut self, f: &Function, body: &[Stmt], _call: Option<Span>) -> R<Option<[Val; 2]>> {
        let returned = [self.st.alloc(Val::Flag(Bool::from_bool(false))), self.st.alloc(Val::Flag(Bool::from_bool(false)))];
        let ret = match &f.ret {
            Type::Void => None,
            ty => {
                let v = fresh_of(ty, "ret");
                Some([self.st.alloc(v.clone()), self.st.alloc(v)])
            }
        };
        let loop_invariants = body
            .iter()
            .filter(|s| {
                matches!(
                    s.kind,
                    StmtKind::Annotation {
                        kind: AnnotationKind::FunctionWideInvariant | AnnotationKind::FunctionWideCandidateInvariant,
                        ..
                    }
                )
            })
            .cloned()
            .collect();
        let mut address_taken = std::collections::HashSet::new();
        for s in body {
            super::houdini::address_taken_in(s, &mut address_taken);
        }
        let old = super::specs::has_postconditions(body).then(|| Box::new(self.st.clone()));
        self.frames.push(Frame { function: f.name.clone(), returned, ret, loop_invariants, address_taken, old });
        let entry = self.pred.clone();
        let saved_targets = std::mem::take(&mut self.targets);
        self.st.scopes.push(Vec::new());
        let result = self.exec_stmts(body);
        self.st.scopes.pop();
        self.targets = saved_targets;
        result?;
        // Postconditions, for every thread that ran the function.
        self.pred = entry.clone();
        let skip = self.options.no_annotations || self.options.only_requires;
        for s in body.iter().filter(|_| !skip) {
            match &s.kind {
                StmtKind::Annotation { kind: AnnotationKind::Ensures, args } if !args.is_empty() => {
                    self.assert_annotation(&args[0], s.span, "postcondition")?
                }
                StmtKind::Annotation { kind: AnnotationKind::GlobalEnsures, args } if !args.is_empty() => {
                    self.assert_global(&args[0], s.span, "postcondition")?
                }
                _ => {}
            }
        }
        let frame = self.frames.pop();
        self.pred = entry;
        Ok(frame.and_then(|f| f.ret).map(|r| [self.st.slots[r[0]].clone(), self.st.slots[r[1]].clone()]))
    }

    /// A statement list: a barrier invariant must be followed by its barrier
    /// in the same list (`barrier_inv.rs`).
    pub(crate) fn exec_stmts(&mut self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            self.check_pending(s)?;
            self.exec_stmt(s)?;
        }
        match self.pending_invariants.first() {
            Some(p) => Err(self.unsupported(p.span, "a barrier invariant that is not followed by a block barrier")),
            None => Ok(()),
        }
    }

    pub(crate) fn exec_stmt(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Decl(v) => self.exec_decl(v),
            StmtKind::Expr(e) => self.eval(e).map(drop),
            StmtKind::Block(stmts) => {
                self.st.scopes.push(Vec::new());
                let r = self.exec_stmts(stmts);
                self.st.scopes.pop();
                r
            }
            StmtKind::If { cond, then, otherwise } => {
                let c = self.eval_cond(cond)?;
                let entry = self.pred.clone();
                self.pred = and2(&entry, &c);
                self.exec_stmt(then)?;
                let after_then = std::mem::replace(&mut self.pred, and2(&entry, &[c[0].not(), c[1].not()]));
                if let Some(o) = otherwise {
                    self.exec_stmt(o)?;
                }
                self.pred = or2(&after_then, &self.pred);
                Ok(())
            }
            StmtKind::While { invariants, cond, body } => {
                let shape = LoopShape { invariants, cond: Some(cond), step: None, body, test_first: true };
                self.exec_loop(&shape)
            }
            StmtKind::DoWhile { invariants, body, cond } => {
                let shape = LoopShape { invariants, cond: Some(cond), step: None, body, test_first: false };
                self.exec_loop(&shape)
            }
            StmtKind::For { init, invariants, cond, step, body } => {
                self.st.scopes.push(Vec::new());
                let r = init.iter().try_for_each(|s| self.exec_stmt(s)).and_then(|()| {
                    let shape = LoopShape { invariants, cond: cond.as_ref(), step: step.as_ref(), body, test_first: true };
                    self.exec_loop(&shape)
                });
                self.st.scopes.pop();
                r
            }
            StmtKind::Switch { scrutinee, arms } => self.exec_switch(scrutinee, arms),
            StmtKind::Break => {
                let target =
                    self.targets.last_mut().ok_or_else(|| Diagnostic::error(codes::RACES_UNSUPPORTED, "`break` outside a loop", s.span))?;
                target.broke = or2(&target.broke, &self.pred);
                self.pred = falses();
                Ok(())
            }
            StmtKind::Continue => {
                let pred = self.pred.clone();
                let target = self.targets.iter_mut().rev().find(|t| t.is_loop);
                let target = target.ok_or_else(|| Diagnostic::error(codes::RACES_UNSUPPORTED, "`continue` outside a loop", s.span))?;
                target.continued = or2(&target.continued, &pred);
                self.pred = falses();
                Ok(())
            }
            StmtKind::Return(value) => {
                let v = value.as_ref().map(|e| self.eval(e)).transpose()?;
                let Some(frame) = self.frames.last() else { return Ok(()) };
                let (returned, ret) = (frame.returned, frame.ret);
                for t in 0..2 {
                    if let (Some(v), Some(ret)) = (&v, ret) {
                        self.st.slots[ret[t]] = Val::ite(&self.pred[t], &v[t], &self.st.slots[ret[t]]);
                    }
                    let was = self.st.flag(returned[t]);
                    self.st.slots[returned[t]] = Val::Flag(Bool::or(&[was, self.pred[t].clone()]));
                }
                self.pred = falses();
                Ok(())
            }
            StmtKind::Barrier(b) => self.exec_barrier(b, s.span),
            StmtKind::Annotation { kind, args } => self.exec_annotation(*kind, args, s.span),
            StmtKind::Empty => Ok(()),
        }
    }

    fn exec_decl(&mut self, v: &crate::cfront::ir::Variable) -> R<()> {
        // By the declaration itself, not its span: a function the front end
        // lowers again from clang's printing gives every node one span, and
        // two arrays must never share a region.
        let key = v as *const crate::cfront::ir::Variable as usize;
        if self.frames.last().is_some_and(|f| f.address_taken.contains(&v.name)) && !matches!(v.ty, Type::Array { .. }) {
            // A private variable whose address is taken lives in private
            // memory, so that pointers to it can be followed.
            let r = match self.st.local_regions.get(&key) {
                Some(&r) => r,
                None => {
                    let r = self.declare_memory(&v.name, &v.ty, AddressSpace::Private, v.span);
                    self.st.local_regions.insert(key, r);
                    r
                }
            };
            self.st.bind(&v.name, Binding::Memory { region: r, scalar: true });
            if let Some(init) = &v.init {
                let value = self.eval(init)?;
                let value: [Val; 2] = std::array::from_fn(|t| super::value::convert(&value[t], &init.ty, &v.ty));
                let at = Val::Ptr { base: self.st.regions[r].base(), off: super::value::offset(0) };
                self.access(&[at.clone(), at], &v.ty, super::vc::AccessKind::Write, Some(&value), v.span)?;
            }
            return Ok(());
        }
        if matches!(v.ty, Type::Pointer { .. })
            && self.chk.module.language == crate::cfront::ir::Language::Cuda
            && matches!(v.space, AddressSpace::Shared | AddressSpace::Global | AddressSpace::Constant)
        {
            // A pointer variable that itself lives in shared or global memory
            // (OpenCL's `__local float *p` is a private pointer to local memory).
            return Err(self.unsupported(v.span, "pointer variables in shared or global memory"));
        }
        match (&v.ty, v.space) {
            (Type::Array { .. }, _)
            | (
                Type::Bool | Type::Int { .. } | Type::Float { .. } | Type::Struct(_) | Type::Vector { .. },
                AddressSpace::Shared | AddressSpace::Global | AddressSpace::Constant,
            ) => {
                let space = if v.space == AddressSpace::Generic { AddressSpace::Private } else { v.space };
                match self.st.local_regions.get(&key) {
                    Some(&r) => {
                        let scalar = !matches!(v.ty, Type::Array { .. });
                        self.st.bind(&v.name, Binding::Memory { region: r, scalar });
                    }
                    None => {
                        let r = self.declare_memory(&v.name, &v.ty, space, v.span);
                        self.st.local_regions.insert(key, r);
                    }
                }
                if let Some(init) = &v.init {
                    self.eval(init)?;
                    if let (Type::Array { .. }, AddressSpace::Private, Some(&r)) = (&v.ty, space, self.st.local_regions.get(&key)) {
                        self.private_contents(r, &v.ty, init, v.span)?;
                    }
                }
                Ok(())
            }
            (Type::Struct(_) | Type::Vector { .. }, _) => {
                if let Some(init) = &v.init {
                    self.eval(init)?;
                }
                let uid = self.st.uid();
                self.st.bind(&v.name, Binding::Aggregate { uid, uniform: false });
                Ok(())
            }
            (ty, _) => {
                let init = match &v.init {
                    Some(e) => self.eval(e)?,
                    None => [fresh_of(ty, &v.name), fresh_of(ty, &v.name)],
                };
                let slots = [self.st.alloc(init[0].clone()), self.st.alloc(init[1].clone())];
                self.st.bind(&v.name, Binding::Scalar { slots, ty: ty.clone() });
                Ok(())
            }
        }
    }

    fn exec_switch(&mut self, scrutinee: &Expr, arms: &[SwitchArm]) -> R<()> {
        let v = self.eval(scrutinee)?;
        let entry = self.pred.clone();
        let label_match = |v: &Val, l: i128| -> Bool {
            match v {
                Val::Bits(b) => b.eq(BV::from_i64(l as i64, b.get_size())),
                _ => Bool::fresh_const("case"),
            }
        };
        let all_labels: Vec<i128> = arms.iter().flat_map(|a| a.labels.iter().flatten().copied()).collect();
        self.targets.push(Target { is_loop: false, broke: falses(), continued: falses() });
        let mut falling = falses();
        for arm in arms {
            let hit: [Bool; 2] = std::array::from_fn(|t| {
                let mut alts: Vec<Bool> = Vec::new();
                for l in &arm.labels {
                    match l {
                        Some(l) => alts.push(label_match(&v[t], *l)),
                        None => alts.push(Bool::and(&all_labels.iter().map(|l| label_match(&v[t], *l).not()).collect::<Vec<_>>())),
                    }
                }
                Bool::or(&alts)
            });
            self.pred = or2(&falling, &and2(&entry, &hit));
            self.st.scopes.push(Vec::new());
            let r = self.exec_stmts(&arm.body);
            self.st.scopes.pop();
            r?;
            falling = self.pred.clone();
        }
        let target = self.targets.pop().map(|t| t.broke).unwrap_or_else(falses);
        // Threads that matched no arm skip the switch.
        let any: [Bool; 2] = std::array::from_fn(|t| {
            let alts: Vec<Bool> = all_labels.iter().map(|l| label_match(&v[t], *l)).collect();
            let has_default = arms.iter().any(|a| a.labels.iter().any(Option::is_none));
            if has_default {
                Bool::from_bool(true)
            } else {
                Bool::or(&alts)
            }
        });
        let skipped: [Bool; 2] = std::array::from_fn(|t| Bool::and(&[entry[t].clone(), any[t].not()]));
        self.pred = or2(&or2(&falling, &target), &skipped);
        Ok(())
    }

    pub(crate) fn exec_barrier(&mut self, b: &Barrier, span: Span) -> R<()> {
        let (shared, global) = match b {
            Barrier::Block { shared, global } => (Bool::from_bool(*shared), Bool::from_bool(*global)),
            Barrier::BlockWithFlags(flags) => {
                let f = self.eval(flags)?;
                let bit = |n: u64| match &f[0] {
                    Val::Bits(b) => b.bvand(BV::from_u64(n, b.get_size())).eq(BV::from_u64(0, b.get_size())).not(),
                    _ => Bool::from_bool(true),
                };
                (bit(1), bit(2))
            }
            Barrier::Warp { .. } => return self.exec_warp_barrier(b, span),
        };
        let invariants = std::mem::take(&mut self.pending_invariants);
        self.assert_barrier_invariants(&invariants)?;
        // Barrier divergence: two threads of one group reach it together or not at all.
        let same_group = self.chk.geometry.same_group();
        let goal = same_group.implies(self.pred[0].eq(&self.pred[1]));
        self.prove(goal, Goal::Divergence { span });
        self.barrier_effect(&shared, &global, &same_group);
        let fenced = [shared.as_bool() == Some(true), global.as_bool() == Some(true)];
        self.assume_barrier_invariants(&invariants, fenced, span)
    }

    fn exec_annotation(&mut self, kind: AnnotationKind, args: &[Expr], span: Span) -> R<()> {
        let Some(e) = args.first() else { return Ok(()) };
        let requires = matches!(kind, AnnotationKind::Requires | AnnotationKind::GlobalRequires);
        if self.options.no_annotations || (self.options.only_requires && !requires) {
            return Ok(());
        }
        match kind {
            AnnotationKind::Requires | AnnotationKind::GlobalRequires if self.frames.len() <= 1 => {
                let v = self.eval_annotation(e)?;
                for (t, v) in v.iter().enumerate() {
                    let f = self.pred[t].implies(v);
                    self.assume(&f);
                }
                Ok(())
            }
            AnnotationKind::Requires => self.assert_annotation(e, span, "precondition"),
            AnnotationKind::GlobalRequires => self.assert_global(e, span, "precondition"),
            AnnotationKind::Assert => self.assert_annotation(e, span, "assertion"),
            AnnotationKind::GlobalAssert => self.assert_global(e, span, "assertion"),
            AnnotationKind::Assume => {
                let v = self.eval_annotation(e)?;
                for (t, v) in v.iter().enumerate() {
                    let f = self.pred[t].implies(v);
                    self.assume(&f);
                }
                Ok(())
            }
            AnnotationKind::Ensures
            | AnnotationKind::GlobalEnsures
            | AnnotationKind::FunctionWideInvariant
            | AnnotationKind::FunctionWideCandidateInvariant => Ok(()),
            AnnotationKind::RequiresFreshArray => {
                // An element of a pointer array in a struct kernel argument,
                // at a constant index, is an array of its own (GPUVerify's
                // meaning: a fresh array). Other forms add nothing (the
                // pointer is then followed as before).
                if self.frames.len() <= 1 {
                    if let ExprKind::Index { base, index } = &super::expr::decayed(e).kind {
                        if let ExprKind::Int(k) = &super::expr::decayed(index).kind {
                            if let Some(path) = self.struct_field_path(super::expr::decayed(base)) {
                                self.fresh_paths.insert(format!("{path}[{k}]"));
                            }
                        }
                    }
                }
                Ok(())
            }
            AnnotationKind::Invariant
            | AnnotationKind::GlobalInvariant
            | AnnotationKind::CandidateInvariant
            | AnnotationKind::CandidateGlobalInvariant => {
                Err(self.unsupported(span, "a loop invariant that is not before a loop's condition"))
            }
            AnnotationKind::BarrierInvariant { binary } => self.barrier_invariant(binary, args, span),
        }
    }

    /// An annotation's truth in both threads (thread 2's is `true` where the
    /// annotation speaks of the access logs, which only thread 1 keeps).
    pub(crate) fn eval_annotation(&mut self, e: &Expr) -> R<[Bool; 2]> {
        let was = std::mem::replace(&mut self.pure_eval, true);
        let v = self.eval(e);
        self.pure_eval = was;
        let v = v?;
        let logs = super::expr::mentions_logs(e);
        Ok(std::array::from_fn(|t| {
            if t == 1 && logs {
                Bool::from_bool(true)
            } else {
                truthy(&v[t]).unwrap_or_else(|| Bool::fresh_const("annotation"))
            }
        }))
    }

    pub(crate) fn assert_annotation(&mut self, e: &Expr, span: Span, what: &'static str) -> R<()> {
        let v = self.eval_annotation(e)?;
        for (t, v) in v.iter().enumerate() {
            let goal = self.pred[t].implies(v);
            self.prove(goal, Goal::Assert { span, what, thread: t });
        }
        Ok(())
    }

    /// A `__global_…` annotation: it must hold for both threads whether or
    /// not they execute it (GPUVerify's meaning of "global").
    pub(crate) fn assert_global(&mut self, e: &Expr, span: Span, what: &'static str) -> R<()> {
        let v = self.eval_annotation(e)?;
        for (t, v) in v.iter().enumerate() {
            self.prove(v.clone(), Goal::Assert { span, what, thread: t });
        }
        Ok(())
    }

    /// One pass over the loop: the test (for `while`/`for`), the body, the
    /// step, the test (for `do`), for the threads in `iterating`. Returns who
    /// iterates next, the state after the head's test and the test's value.
    fn iterate(&mut self, lp: &LoopShape, iterating: &[Bool; 2]) -> R<([Bool; 2], ExecState, [Bool; 2])> {
        self.pred = iterating.clone();
        let mut test = [Bool::from_bool(true), Bool::from_bool(true)];
        if lp.test_first {
            if let Some(c) = lp.cond {
                test = self.eval_cond(c)?;
            }
        }
        let after_test = self.st.clone();
        self.pred = and2(&self.pred, &test);
        self.targets.push(Target { is_loop: true, broke: falses(), continued: falses() });
        let r = self.exec_stmt(lp.body);
        let target = self.targets.pop();
        r?;
        if let Some(target) = target {
            self.pred = or2(&self.pred, &target.continued);
        }
        if let Some(step) = lp.step {
            self.eval(step)?;
        }
        if !lp.test_first {
            if let Some(c) = lp.cond {
                let c = self.eval_cond(c)?;
                self.pred = and2(&self.pred, &c);
            }
        }
        Ok((self.pred.clone(), after_test, test))
    }

    fn not_returned(&self) -> [Bool; 2] {
        match self.frames.last() {
            Some(f) => std::array::from_fn(|t| self.st.flag(f.returned[t]).not()),
            None => [Bool::from_bool(true), Bool::from_bool(true)],
        }
    }

    fn exec_loop(&mut self, lp: &LoopShape) -> R<()> {
        let entered = self.pred.clone();
        let entry_l = and2(&entered, &self.not_returned());
        if self.dry {
            // Only what the loop may change matters: one pass.
            self.iterate(lp, &entry_l)?;
            self.pred = and2(&entered, &self.not_returned());
            return Ok(());
        }
        let id = self.loop_seq;
        self.loop_seq += 1;
        // What the loop may change: one dry pass over a copy of the state.
        let before = self.st.clone();
        self.dry = true;
        let dry = self.iterate(lp, &entry_l);
        self.dry = false;
        let after_dry = std::mem::replace(&mut self.st, before);
        dry?;
        let modified: Vec<usize> =
            (0..self.st.slots.len()).filter(|&i| !super::state::same_term(&self.st.slots[i], &after_dry.slots[i])).collect();
        let mut invariants: Vec<Stmt> = lp.invariants.to_vec();
        if let Some(f) = self.frames.last() {
            invariants.extend(f.loop_invariants.iter().cloned());
        }
        if self.options.no_annotations || self.options.only_requires {
            invariants.clear();
        }
        if self.options.invariants_as_candidates {
            for s in &mut invariants {
                if let StmtKind::Annotation { kind, .. } = &mut s.kind {
                    *kind = AnnotationKind::CandidateInvariant;
                }
            }
        }
        let templates = if self.options.no_infer { Vec::new() } else { self.templates(lp, &modified, &invariants, &entered)? };
        // Entry. `__enabled()` in an invariant is "this thread iterates".
        self.pred = entry_l.clone();
        self.check_invariants(id, &templates, &invariants, &entry_l, &entered, false)?;
        // Head: havoc, assume.
        let entry_sites = self.log_sites(&modified);
        for &i in &modified {
            let before = std::mem::replace(&mut self.st.slots[i], Val::Opaque);
            self.st.slots[i] = before.havoc("loop");
            // A log's size at the head is its size on entry or one an access
            // of the program logs there (exact: nothing else writes it).
            if let (Some(sizes), Val::Bits(b), Val::Bits(now)) = (self.log_sizes.get(&i), &before, &self.st.slots[i]) {
                let mut options = vec![now.eq(b)];
                options.extend(sizes.iter().map(|s| now.eq(super::value::offset(*s))));
                let fact = Bool::or(&options);
                self.assume(&fact);
            }
        }
        let iterating = [Bool::fresh_const("iterating"), Bool::fresh_const("iterating")];
        let alive = and2(&entered, &self.not_returned());
        for t in 0..2 {
            let f = iterating[t].implies(&alive[t]);
            self.assume(&f);
        }
        self.pred = iterating.clone();
        self.assume_invariants(id, &templates, &invariants, &iterating, &entered)?;
        // One arbitrary iteration; the invariants hold after it.
        let sites_before = self.chk.sites.len();
        let head_sites = self.log_sites(&modified);
        let (next, after_test, test) = self.iterate(lp, &iterating)?;
        self.place_havocked_sites(&entry_sites, &head_sites, sites_before);
        self.pred = next.clone();
        self.check_invariants(id, &templates, &invariants, &next, &entered, true)?;
        // Exit: the head state where no thread iterates.
        self.st = after_test;
        for t in 0..2 {
            let f = Bool::and(&[iterating[t].clone(), test[t].clone()]).not();
            self.assume(&f);
        }
        self.pred = and2(&entered, &self.not_returned());
        Ok(())
    }

    /// The havocked site slots of the loop's logs: (slot, kind, value on entry).
    fn log_sites(&self, modified: &[usize]) -> Vec<(usize, crate::races::vc::AccessKind, Val)> {
        use crate::races::vc::AccessKind;
        let mut out = Vec::new();
        for region in &self.st.regions {
            let Some(logs) = region.logs else { continue };
            for (log, kind) in logs.iter().zip([AccessKind::Read, AccessKind::Write, AccessKind::Atomic]) {
                if modified.contains(&log.site) {
                    out.push((log.site, kind, self.st.slots[log.site].clone()));
                }
            }
        }
        out
    }

    /// A havocked log site is one of the sites of its kind the loop has (or
    /// what it was), so that a race report names a real access. Only reports
    /// read sites: no assertion mentions them, and the constraint is
    /// satisfiable whatever else holds (the slot is a fresh constant).
    fn place_havocked_sites(
        &mut self,
        entry: &[(usize, crate::races::vc::AccessKind, Val)],
        head: &[(usize, crate::races::vc::AccessKind, Val)],
        sites_before: usize,
    ) {
        for ((_, kind, before), (_, _, at_head)) in entry.iter().zip(head) {
            let (Val::Bits(before), Val::Bits(at_head)) = (before, at_head) else { continue };
            let mut options = vec![at_head.eq(before)];
            for (id, (_, k)) in self.chk.sites.iter().enumerate().skip(sites_before) {
                if k == kind {
                    options.push(at_head.eq(BV::from_u64(id as u64, 32)));
                }
            }
            let fact = Bool::or(&options);
            self.assume(&fact);
        }
    }

    fn check_invariants(
        &mut self,
        id: usize,
        templates: &[Template],
        user: &[Stmt],
        l: &[Bool; 2],
        entered: &[Bool; 2],
        preserved: bool,
    ) -> R<()> {
        for (i, tpl) in templates.iter().enumerate() {
            if self.chk.alive((id, i)) {
                let goal = self.eval_template(tpl, l, entered);
                self.chk.candidate((id, i), goal);
                if !self.chk.alive((id, i)) && std::env::var_os("ALPINE_RACES_DEBUG").is_some() {
                    let when = if preserved { "preserved" } else { "entry" };
                    eprintln!("races: loop {id} drops {i} ({when}): {}", format!("{tpl:?}").chars().take(300).collect::<String>());
                }
            }
        }
        for s in user {
            if let StmtKind::Annotation { kind, args } = &s.kind {
                if is_candidate(*kind) {
                    continue;
                }
                let Some(e) = args.first() else { continue };
                let v = self.eval_annotation(e)?;
                for (t, v) in v.iter().enumerate() {
                    let goal = entered[t].implies(v);
                    self.prove(goal, Goal::Invariant { span: s.span, preserved });
                }
            }
        }
        Ok(())
    }

    fn assume_invariants(&mut self, id: usize, templates: &[Template], user: &[Stmt], l: &[Bool; 2], entered: &[Bool; 2]) -> R<()> {
        for (i, tpl) in templates.iter().enumerate() {
            if self.chk.alive((id, i)) {
                if let Some(f) = self.eval_template(tpl, l, entered) {
                    self.assume(&f);
                }
            }
        }
        for s in user {
            if let StmtKind::Annotation { kind, args } = &s.kind {
                if is_candidate(*kind) {
                    continue;
                }
                let Some(e) = args.first() else { continue };
                let v = self.eval_annotation(e)?;
                for (t, v) in v.iter().enumerate() {
                    let f = entered[t].implies(v);
                    self.assume(&f);
                }
            }
        }
        Ok(())
    }
}

pub(crate) fn is_candidate(kind: AnnotationKind) -> bool {
    matches!(
        kind,
        AnnotationKind::CandidateInvariant | AnnotationKind::CandidateGlobalInvariant | AnnotationKind::FunctionWideCandidateInvariant
    )
}
