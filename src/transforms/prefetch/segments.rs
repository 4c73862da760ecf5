//! Prefetching, segment by segment: the walk over a kernel's body that splits it at
//! barriers, decides per segment which accesses of the array go through a register
//! (guards, aliasing, permissions, proved with Z3) and writes the segment anew.

use super::rewrite::{AddInvariants, Replace};
use super::*;
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
use crate::diagnostics::codes;
/// The contract that holds at a segment's start.
#[derive(Clone)]
pub(super) struct Start {
    pub(super) conjuncts: Vec<Expr>,
    /// Permission annotations of earlier starts the thread may still hold: a
    /// barrier takes only what it requires, a loop frames what its invariants
    /// do not mention. Over-approximated: an element named here that the thread
    /// no longer holds makes the load fail re-verification, never computes a
    /// wrong value.
    pub(super) carried: Vec<Expr>,
    /// "the precondition of kernel `k`", "the postcondition of this barrier", …
    pub(super) what: String,
    pub(super) span: Span,
}

impl Start {
    fn of(clauses: &[Clause], keep: impl Fn(&ClauseKind) -> Option<&Expr>, what: String, span: Span) -> Start {
        let conjuncts = clauses.iter().filter_map(|c| keep(&c.kind)).flat_map(|e| conjuncts(e).into_iter().cloned()).collect();
        Start { conjuncts, carried: Vec::new(), what, span }
    }

    /// The permission annotations the thread may hold here.
    fn held(&self) -> Vec<Expr> {
        self.conjuncts.iter().chain(&self.carried).filter(|c| has_perm(c)).cloned().collect()
    }
}

/// One register of one segment.
pub(super) struct Reg {
    pub(super) loc: String,
    /// The element `A[loc]`, typed.
    pub(super) elem: Expr,
    pub(super) name: String,
    pub(super) guard: Option<Expr>,
    pub(super) written: bool,
}

/// The state of one check: the method, the request and the facts.
pub(super) struct Cx<'a> {
    pub(super) program: &'a Program,
    pub(super) class: &'a Class,
    pub(super) method: &'a Method,
    pub(super) array: &'a str,
    pub(super) locs: Vec<String>,
    pub(super) kernel: Option<Span>,
    /// Which locations some segment uses.
    pub(super) used: Vec<bool>,
    /// Names in use in the method (registers are fresh against it).
    pub(super) names: HashSet<Name>,
    /// Facts that hold everywhere in the method.
    pub(super) global: Vec<Expr>,
    /// The thread ranges of the unit being rewritten.
    pub(super) ranges: Vec<Expr>,
    /// The method assigns these variables.
    pub(super) assigned: HashSet<Name>,
    /// The kernel being rewritten assigns these variables.
    pub(super) unit_assigned: HashSet<Name>,
    pub(super) queries: usize,
    pub(super) solver: SmtSolver,
}

impl<'a> Cx<'a> {
    pub(super) fn new(
        program: &'a Program,
        class: &'a Class,
        method: &'a Method,
        array: &'a str,
        locs: Vec<String>,
        kernel: Option<Span>,
    ) -> Cx<'a> {
        let mut assigned = HashSet::new();
        if let MethodBody::Block(b) = &method.body {
            assigned = Effects::of_stmts(&b.stmts).assigned;
        }
        let global = method
            .contract
            .clauses
            .iter()
            .filter_map(|c| match &c.kind {
                ClauseKind::ContextEverywhere(e) => Some((e, true)),
                ClauseKind::Requires(e) | ClauseKind::Context(e) => Some((e, false)),
                _ => None,
            })
            .flat_map(|(e, everywhere)| conjuncts(e).into_iter().map(move |c| (c, everywhere)))
            // Only facts nothing in the body can change: they are used in the
            // middle of segments too (`context_everywhere` holds at loop,
            // kernel and barrier boundaries, not after every assignment).
            .filter(|(c, _)| !has_perm(c) && Reads::of(c).vars.iter().all(|v| !assigned.contains(v)))
            .map(|(c, _)| c.clone())
            .collect();
        Cx {
            program,
            class,
            method,
            array,
            used: vec![false; locs.len()],
            locs,
            kernel,
            names: subst::names_in_method(method),
            global,
            ranges: Vec::new(),
            assigned,
            unit_assigned: HashSet::new(),
            queries: 0,
            solver: SmtSolver::new(2000, 0, false),
        }
    }

    /// The method body with every kernel (or the requested one) rewritten.
    pub(super) fn method_stmts(&mut self, stmts: &[Stmt]) -> Result<Vec<Stmt>, ApplicabilityError> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            let mut s = s.clone();
            match &mut s.kind {
                StmtKind::Par(p) if self.kernel.is_none_or(|k| k == p.span) => {
                    for u in &mut p.units {
                        u.body.stmts = self.unit(u)?;
                    }
                }
                StmtKind::Par(_) => {}
                StmtKind::Block(b) => b.stmts = self.method_stmts(&b.stmts)?,
                StmtKind::InvariantBlock { body, .. } => body.stmts = self.method_stmts(&body.stmts)?,
                StmtKind::If { then_branch, else_branch, .. } => {
                    **then_branch = self.one(then_branch)?;
                    if let Some(e) = else_branch {
                        **e = self.one(e)?;
                    }
                }
                StmtKind::Loop(l) => *l.body = self.one(&l.body)?,
                _ => {}
            }
            out.push(s);
        }
        Ok(out)
    }

    fn one(&mut self, s: &Stmt) -> Result<Stmt, ApplicabilityError> {
        let mut v = self.method_stmts(std::slice::from_ref(s))?;
        Ok(v.remove(0))
    }

    fn unit(&mut self, u: &ParUnit) -> Result<Vec<Stmt>, ApplicabilityError> {
        self.ranges = u
            .iters
            .iter()
            .filter(|it| [&it.lo, &it.hi].iter().all(|e| Reads::of(e).vars.iter().all(|v| !self.assigned.contains(v))))
            .map(|it| {
                let v = Expr { ty: Ty::Int, ..loops::var(it.var.name.as_str()) };
                bin(BinOp::And, bin(BinOp::Le, it.lo.clone(), v.clone()), bin(BinOp::Lt, v, it.hi.clone()))
            })
            .collect();
        self.unit_assigned = Effects::of_stmts(&u.body.stmts).assigned;
        let name = u.name.as_ref().map_or("<unnamed>".to_string(), |n| n.to_string());
        let start = Start::of(
            &u.contract.clauses,
            |k| match k {
                ClauseKind::Requires(e) | ClauseKind::Context(e) => Some(e),
                _ => None,
            },
            format!("the precondition of kernel `{name}`"),
            u.span,
        );
        self.list(&u.body.stmts, start)
    }

    /// A statement list split into segments at barriers (also barriers in loops).
    fn list(&mut self, stmts: &[Stmt], mut start: Start) -> Result<Vec<Stmt>, ApplicabilityError> {
        let mut out = Vec::new();
        let mut seg = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Barrier(b) => {
                    out.extend(self.segment(std::mem::take(&mut seg), &start)?);
                    out.push(s.clone());
                    let given: Vec<Expr> = b
                        .contract
                        .clauses
                        .iter()
                        .filter_map(|c| match &c.kind {
                            ClauseKind::Requires(e) | ClauseKind::Context(e) => Some(e),
                            _ => None,
                        })
                        .flat_map(|e| conjuncts(e).into_iter().cloned())
                        .collect();
                    let kept: Vec<Expr> = start.held().into_iter().filter(|c| !surrendered(c, &given)).collect();
                    start = Start::of(
                        &b.contract.clauses,
                        |k| match k {
                            ClauseKind::Ensures(e) | ClauseKind::Context(e) => Some(e),
                            _ => None,
                        },
                        "the postcondition of this barrier".into(),
                        s.span,
                    );
                    start.carried = kept;
                }
                StmtKind::Loop(l) if has_barrier(std::slice::from_ref(&l.body)) => {
                    out.extend(self.segment(std::mem::take(&mut seg), &start)?);
                    let inv = Start::of(
                        &l.contract.clauses,
                        |k| match k {
                            ClauseKind::LoopInvariant(e) => Some(e),
                            _ => None,
                        },
                        "the invariants of this loop".into(),
                        loops::head_span(l),
                    );
                    let body = self.list(loops::body_stmts(l), inv.clone())?;
                    let mut nl = l.clone();
                    *nl.body = Stmt::new(StmtKind::Block(Block { stmts: body, span: Span::DUMMY }), l.body.span);
                    out.push(Stmt::new(StmtKind::Loop(nl), s.span));
                    let before = start.held();
                    start = inv;
                    start.carried = before;
                }
                _ if has_barrier(std::slice::from_ref(s)) => {
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        "a barrier inside this statement: prefetching splits a kernel only at barriers in its body or in loops",
                        s.span,
                    ));
                }
                _ => seg.push(s.clone()),
            }
        }
        out.extend(self.segment(seg, &start)?);
        Ok(out)
    }

    /// One segment: check each location it uses, then load, replace and write back.
    fn segment(&mut self, seg: Vec<Stmt>, start: &Start) -> Result<Vec<Stmt>, ApplicabilityError> {
        let eff = Effects::of_stmts(&seg);
        let mut regs = Vec::new();
        for j in 0..self.locs.len() {
            let loc = self.locs[j].clone();
            let mut f = Occurrences::new(self.array, Some(&loc));
            seg.iter().for_each(|s| f.visit_stmt(s));
            let Some((elem, index)) = f.found.first().cloned() else { continue };
            self.used[j] = true;
            let shown = format!("{}[{loc}]", self.array);
            let reads = Reads::of(&index);
            if reads.heap {
                return Err(err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("the location `{shown}` reads the heap; only locations over variables are prefetched"),
                    elem.span,
                ));
            }
            if let Some(v) = reads.vars.iter().chain([&Name::from(self.array)]).find(|v| eff.assigned.contains(*v)) {
                return Err(err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("`{shown}` names different elements in this segment: it assigns `{v}`"),
                    elem.span,
                ));
            }
            if regs.is_empty() {
                self.transfers(&seg)?;
            }
            let guard = self.guard(&index, &shown, start, elem.span)?;
            self.aliases(&seg, &index, &shown, guard.as_ref(), &eff, start)?;
            let written = writes(&seg, self.array, Some(&loc));
            if written {
                if let Some(span) = whole_array_use(&seg, self.array) {
                    return Err(err(
                        codes::OPTIMISE_ALIAS,
                        format!(
                            "`{}` is used whole here: it would not see the register of `{shown}`, which this segment writes",
                            self.array
                        ),
                        span,
                    ));
                }
            }
            self.distinct_arrays(&seg, &elem, &index, start, written, guard.as_ref())?;
            let name = self.fresh();
            regs.push(Reg { loc, elem, name, guard, written });
        }
        if regs.is_empty() {
            return Ok(seg);
        }
        let mut body = seg;
        let mut r = Replace { array: self.array, regs: &regs, bound: Vec::new() };
        body.iter_mut().for_each(|s| r.visit_stmt_mut(s));
        let mut inv = AddInvariants { array: self.array, regs: &regs };
        body.iter_mut().for_each(|s| inv.visit_stmt_mut(s));
        let mut out = Vec::new();
        for g in &regs {
            let ty = ty_to_type(&g.elem.ty)
                .ok_or_else(|| err(codes::OPTIMISE_TEMPLATE, format!("cannot declare a register of type `{}`", g.elem.ty), g.elem.span))?;
            let load = plain(&g.elem);
            match &g.guard {
                None => out.push(loops::stmt(StmtKind::LocalDecl { ty, name: Ident::new(&g.name, Span::DUMMY), init: Some(load) })),
                Some(c) => {
                    out.push(loops::stmt(StmtKind::LocalDecl { ty, name: Ident::new(&g.name, Span::DUMMY), init: None }));
                    let set = loops::stmt(StmtKind::Assign { target: loops::var(&g.name), value: load });
                    out.push(guarded(c, set));
                }
            }
        }
        out.extend(body);
        for g in regs.iter().filter(|g| g.written) {
            let back = loops::stmt(StmtKind::Assign { target: plain(&g.elem), value: loops::var(&g.name) });
            out.push(match &g.guard {
                None => back,
                Some(c) => guarded(c, back),
            });
        }
        Ok(out)
    }

    fn fresh(&mut self) -> String {
        let base: String = self.array.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
        let name = subst::fresh_from((0..).map(|k| format!("{base}_reg_{k}")), |n| self.names.contains(n));
        self.names.insert(Name::from(name.as_str()));
        name
    }

    // -- Z3 -----------------------------------------------------------------------

    /// Do `assumptions` (with the global facts and thread ranges) imply `goal`?
    fn proves(&mut self, assumptions: &[Expr], goal: &Expr) -> bool {
        let mut lengths = HashSet::new();
        let Some(g) = encode(goal, &mut lengths) else { return false };
        let mut hyps: Vec<Term> = self
            .global
            .iter()
            .chain(&self.ranges)
            .chain(assumptions)
            .filter_map(|e| encode(e, &mut lengths))
            .filter(|t| t.sort() == Sort::Bool)
            .collect();
        for a in &lengths {
            if !a.starts_with('|') {
                hyps.push(Term::konst(&format!("len${a}"), Sort::Int).ge(&Term::int(0)));
            }
        }
        self.queries += 1;
        let lit = format!("pf${}", self.queries);
        hyps.push(g.not());
        self.solver.assert(Term::konst(&lit, Sort::Bool).implies(&Term::and(hyps)));
        matches!(self.solver.check(&[&lit]), Ok(Outcome::Proved))
    }

    /// The functional conjuncts of a start contract.
    fn start_facts(start: &Start) -> Vec<Expr> {
        start.conjuncts.iter().filter(|c| !has_perm(c)).cloned().collect()
    }

    /// The load's guard: `None` when the thread always holds permission for
    /// the location at the segment's start, else the condition under which it
    /// does.
    fn guard(&mut self, index: &Expr, shown: &str, start: &Start, at: Span) -> Result<Option<Expr>, ApplicabilityError> {
        let facts = Self::start_facts(start);
        let mut conds: Vec<Option<Expr>> = Vec::new();
        let current = start.conjuncts.len();
        for (k, c) in start.conjuncts.iter().chain(&start.carried).enumerate() {
            let mut anns = Vec::new();
            shapes(c, &mut Vec::new(), None, &mut anns).map_err(|s| {
                err(codes::OPTIMISE_TEMPLATE, format!("cannot tell whether this annotation gives the thread permission for `{shown}`"), s)
                    .related(at, "the prefetched location")
            })?;
            for ann in anns {
                let ExprKind::Index { base, index: e } = &ann.loc.kind else { continue };
                match &base.kind {
                    ExprKind::Var(b) if b.as_str() != self.array => continue,
                    ExprKind::Var(_) => {}
                    _ => continue,
                }
                let unknown = || {
                    err(
                        codes::OPTIMISE_ALIAS,
                        format!("cannot tell whether `{}` names the prefetched `{shown}`", print_expr(&ann.loc)),
                        ann.span,
                    )
                    .related(at, "the prefetched location")
                    .help("prefetching needs each permission annotation to name the location exactly or provably not at all")
                };
                // An annotation of an earlier segment over variables the kernel
                // assigns may name other elements now.
                if k >= current && Reads::of(c).vars.iter().any(|v| self.unit_assigned.contains(v)) {
                    return Err(unknown());
                }
                let mut hyps = facts.clone();
                hyps.extend(ann.conds.iter().cloned());
                if let Some(b) = &ann.binder {
                    if is_var(e, b.name.as_str()) {
                        // `\forall* int i; G(i); Perm(A[i], p)`: held iff G(loc).
                        let b = b.name.name.clone();
                        conds.push(conj(ann.conds.iter().map(|c| subst::substitute_var(c, &b, index)).collect()));
                    } else if !self.proves(&hyps, &bin(BinOp::Ne, (**e).clone(), index.clone())) {
                        return Err(unknown());
                    }
                    continue;
                }
                let same = bin(BinOp::Eq, (**e).clone(), index.clone());
                if self.proves(&hyps, &same) {
                    conds.push(conj(ann.conds.clone()));
                } else if !self.proves(&hyps, &bin(BinOp::Ne, (**e).clone(), index.clone())) {
                    // Names it for some threads: held where the indices agree.
                    if encode(&same, &mut HashSet::new()).is_none() {
                        return Err(unknown());
                    }
                    let mut v = ann.conds.clone();
                    v.push(same);
                    conds.push(conj(v));
                }
            }
        }
        if conds.is_empty() {
            return Err(err(
                codes::OPTIMISE_PERMISSION,
                format!("the thread holds no permission for `{shown}` at the start of this segment ({})", start.what),
                at,
            )
            .related(start.span, "the segment starts here"));
        }
        if conds.iter().any(Option::is_none) {
            return Ok(None);
        }
        let any = conds.into_iter().flatten().reduce(|a, b| bin(BinOp::Or, a, b)).expect("non-empty");
        if self.proves(&facts, &any) {
            return Ok(None);
        }
        let r = Reads::of(&any);
        if r.heap {
            return Err(err(
                codes::OPTIMISE_TEMPLATE,
                format!("the condition `{}` of the permission for `{shown}` reads the heap", print_expr(&any)),
                at,
            ));
        }
        Ok(Some(any))
    }

    /// Every other element of the array the segment accesses differs from the
    /// prefetched one.
    fn aliases(
        &mut self,
        seg: &[Stmt],
        index: &Expr,
        shown: &str,
        guard: Option<&Expr>,
        eff: &Effects,
        start: &Start,
    ) -> Result<(), ApplicabilityError> {
        let mut f = Occurrences::new(self.array, None);
        seg.iter().for_each(|s| f.visit_stmt(s));
        let stable = |e: &Expr| Reads::of(e).vars.iter().all(|v| !eff.assigned.contains(v));
        let mut hyps: Vec<Expr> = Self::start_facts(start).into_iter().filter(|e| stable(e)).collect();
        hyps.extend(guard.cloned());
        let want = print_expr(index);
        for (elem, e) in f.found {
            if print_expr(&e) == want {
                continue;
            }
            if is_bound_marker(&e) {
                return Err(err(
                    codes::OPTIMISE_ALIAS,
                    format!(
                        "`{}` is under a binder of its index's variables: it may be the prefetched `{shown}` or another element",
                        print_expr(&elem)
                    ),
                    elem.span,
                )
                .help("the register stands for one element; an access whose index a quantifier or `\\let` binds is not prefetched"));
            }
            if !self.proves(&hyps, &bin(BinOp::Ne, e.clone(), index.clone())) {
                return Err(err(
                    codes::OPTIMISE_ALIAS,
                    format!("`{}` may be the same element as the prefetched `{shown}`", print_expr(&elem)),
                    elem.span,
                )
                .help("the register would hide a write through one from a read through the other"));
            }
        }
        Ok(())
    }

    /// Other array variables of the same type that the segment or its start
    /// contract use are other arrays — where it matters: the segment writes
    /// the prefetched element or elements of the other array (when both are
    /// only read, a stale copy cannot arise).
    fn distinct_arrays(
        &mut self,
        seg: &[Stmt],
        elem: &Expr,
        index: &Expr,
        start: &Start,
        written: bool,
        guard: Option<&Expr>,
    ) -> Result<(), ApplicabilityError> {
        let ExprKind::Index { base, .. } = &elem.kind else { return Ok(()) };
        let ty = base.ty.clone();
        let mut arrays = Arrays { ty: &ty, found: Vec::new() };
        seg.iter().for_each(|s| arrays.visit_stmt(s));
        start.conjuncts.iter().for_each(|c| arrays.visit_expr(c));
        for (b, span) in arrays.found {
            let Some(b) = b else {
                if !written {
                    continue;
                }
                return Err(err(codes::OPTIMISE_ALIAS, format!("this array may be `{}` itself", self.array), span));
            };
            if *b == *self.array
                || !(written || writes(seg, &b, None))
                || self.stated_distinct(&b)
                || self.permissions_exceed_one(&b, index, start, guard)
            {
                continue;
            }
            return Err(err(codes::OPTIMISE_ALIAS, format!("`{b}` may be the same array as `{}`", self.array), span)
                .help(format!("add `context_everywhere {} != {b};` to the method", self.array)));
        }
        Ok(())
    }

    /// The conjuncts of the method's precondition.
    fn preconditions(&self) -> Vec<&'a Expr> {
        let m: &'a Method = self.method;
        m.contract.preconditions().flat_map(conjuncts).collect()
    }

    /// The method's contract says `A != B`.
    fn stated_distinct(&self, b: &str) -> bool {
        let a = self.array;
        self.preconditions().into_iter().any(|c| match &c.kind {
            ExprKind::Binary { op: BinOp::Ne, lhs, rhs } => (is_var(lhs, a) && is_var(rhs, b)) || (is_var(lhs, b) && is_var(rhs, a)),
            _ => false,
        }) && !self.assigned.contains(a)
            && !self.assigned.contains(b)
    }

    /// The method's precondition gives `\forall*` permissions on `A[i]` and
    /// `B[i]` whose amounts add up to more than 1 at `i = loc`: then `A` and `B`
    /// are different arrays (neither variable is assigned in the method).
    fn permissions_exceed_one(&mut self, b: &str, index: &Expr, start: &Start, guard: Option<&Expr>) -> bool {
        if self.assigned.contains(self.array) || self.assigned.contains(b) {
            return false;
        }
        let pre: Vec<Expr> = self.preconditions().into_iter().cloned().collect();
        let assigned = &self.assigned;
        // (range at loc, amount) of each array's quantified permissions.
        let of = |name: &str| -> Vec<(Expr, Option<(i128, i128)>)> {
            pre.iter()
                .filter_map(|c| {
                    let ExprKind::Quant { kind: QuantKind::ForallStar, binder, guard, body } = &c.kind else { return None };
                    let (loc, amount) = conjuncts(body).into_iter().find_map(|c| match &c.kind {
                        ExprKind::Perm { loc, amount } => Some((loc, amount)),
                        _ => None,
                    })?;
                    let ExprKind::Index { base, index: i } = &loc.kind else { return None };
                    // The range's other variables keep their entry values.
                    let stable = Reads::of(guard).vars.iter().all(|v| *v == binder.name.name || !assigned.contains(v));
                    (stable && is_var(base, name) && is_var(i, binder.name.as_str())).then(|| {
                        let amt = if matches!(amount.kind, ExprKind::Read) { Some((0, 1)) } else { rational(amount) };
                        (subst::substitute_var(guard, binder.name.as_str(), index), amt)
                    })
                })
                .collect()
        };
        let (pa, pb) = (of(self.array), of(b));
        for (ga, xa) in &pa {
            for (gb, xb) in &pb {
                // `read` is positive: (0, 1) stands for "more than 0".
                let exceeds = match (xa, xb) {
                    (Some((n1, d1)), Some((n2, d2))) => {
                        let sum = n1 * d2 + n2 * d1;
                        let strictly = *n1 == 0 || *n2 == 0;
                        if strictly {
                            sum >= d1 * d2
                        } else {
                            sum > d1 * d2
                        }
                    }
                    _ => false,
                };
                // Where the thread holds the element (the guard), both ranges hold it.
                let mut hyps = Self::start_facts(start);
                hyps.extend(guard.cloned());
                if exceeds && self.proves(&hyps, &bin(BinOp::And, ga.clone(), gb.clone())) {
                    return true;
                }
            }
        }
        false
    }

    /// Nothing in the segment may hand permissions on array elements over.
    fn transfers(&self, seg: &[Stmt]) -> Result<(), ApplicabilityError> {
        let mut t = Transfers { cx: self, found: None };
        seg.iter().for_each(|s| t.visit_stmt(s));
        match t.found {
            Some((span, what)) => Err(err(
                codes::OPTIMISE_TEMPLATE,
                format!("{what} in this segment may hand over permissions on array elements: prefetching needs the thread to keep them"),
                span,
            )),
            None => Ok(()),
        }
    }

    fn lock_invariant_holds_elements(&self, class: &str) -> bool {
        self.program.classes.iter().filter(|c| c.name.as_str() == class).flat_map(|c| &c.members).any(|m| match m {
            Member::Method(m) if m.name.as_str() == "lock_invariant" => {
                let body = matches!(&m.body, MethodBody::Expr(e) if holds_elements(e, self.program));
                body || m.contract.exprs().any(|e| holds_elements(e, self.program))
            }
            _ => false,
        })
    }

    fn invariant_block(&self, name: &str) -> Option<&'a Expr> {
        struct Find<'b, 'n> {
            name: &'n str,
            found: Option<&'b Expr>,
        }
        fn walk<'b>(f: &mut Find<'b, '_>, stmts: &'b [Stmt]) {
            for s in stmts {
                match &s.kind {
                    StmtKind::InvariantBlock { name, resource, body } => {
                        if name.as_str() == f.name {
                            f.found = Some(resource);
                        }
                        walk(f, &body.stmts);
                    }
                    StmtKind::Block(b) => walk(f, &b.stmts),
                    StmtKind::Par(p) => p.units.iter().for_each(|u| walk(f, &u.body.stmts)),
                    StmtKind::If { then_branch, else_branch, .. } => {
                        walk(f, std::slice::from_ref(then_branch));
                        if let Some(e) = else_branch {
                            walk(f, std::slice::from_ref(e));
                        }
                    }
                    StmtKind::Loop(l) => walk(f, std::slice::from_ref(&l.body)),
                    StmtKind::Atomic { body, .. } => walk(f, std::slice::from_ref(body)),
                    _ => {}
                }
            }
        }
        let MethodBody::Block(b) = &self.method.body else { return None };
        let mut f = Find { name, found: None };
        walk(&mut f, &b.stmts);
        f.found
    }
}

/// `A[e]` and `x.length` rebuilt with fresh spans (for loads and write-backs).
pub(super) fn plain(e: &Expr) -> Expr {
    let mut e = e.clone();
    e.span = Span::DUMMY;
    e
}

pub(super) fn guarded(c: &Expr, s: Stmt) -> Stmt {
    loops::stmt(StmtKind::If { cond: c.clone(), then_branch: Box::new(s), else_branch: None })
}

pub(super) fn conj(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

pub(super) fn ty_to_type(t: &Ty) -> Option<Type> {
    let kind = match t {
        Ty::Int => TypeKind::Int,
        Ty::Bool => TypeKind::Boolean,
        Ty::Frac => TypeKind::Frac,
        Ty::ZFrac => TypeKind::ZFrac,
        Ty::Class(c) => TypeKind::Class(Ident::new(c, Span::DUMMY)),
        Ty::Array(e) => TypeKind::Array(Box::new(ty_to_type(e)?), None),
        _ => return None,
    };
    Some(Type::new(kind, Span::DUMMY))
}

pub(super) fn has_barrier(stmts: &[Stmt]) -> bool {
    struct B(bool);
    impl Visitor for B {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Barrier(_) => self.0 = true,
                // A nested kernel's barriers are its own.
                StmtKind::Par(_) => {}
                _ => visit::walk_stmt(self, s),
            }
        }
        fn visit_expr(&mut self, _: &Expr) {}
    }
    let mut b = B(false);
    stmts.iter().for_each(|s| b.visit_stmt(s));
    b.0
}

/// Where the segment uses the array variable other than by element or
/// `.length` (passed to a function, compared, assigned), outside `\old` and
/// permission predicates.
pub(super) fn whole_array_use(seg: &[Stmt], array: &str) -> Option<Span> {
    struct U<'a>(&'a str, Option<Span>);
    impl Visitor for U<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => {}
                ExprKind::Index { base, index } if is_var(base, self.0) => self.visit_expr(index),
                ExprKind::Field { obj, field } if field.as_str() == "length" && is_var(obj, self.0) => {}
                ExprKind::Var(x) if x.as_str() == self.0 => self.1 = self.1.or(Some(e.span)),
                _ => visit::walk_expr(self, e),
            }
        }
    }
    let mut u = U(array, None);
    seg.iter().for_each(|s| u.visit_stmt(s));
    u.1
}

/// Does the segment assign `array[loc]` (any element: `loc` is `None`)?
pub(super) fn writes(seg: &[Stmt], array: &str, loc: Option<&str>) -> bool {
    struct W<'a>(&'a str, Option<&'a str>, bool);
    impl Visitor for W<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::Assign { target, .. } = &s.kind {
                if let ExprKind::Index { base, index } = &target.kind {
                    if is_var(base, self.0) && self.1.is_none_or(|l| print_expr(index) == l) {
                        self.2 = true;
                    }
                }
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut w = W(array, loc, false);
    seg.iter().for_each(|s| w.visit_stmt(s));
    w.2
}

/// A permission annotation of a start contract: `conds ==> Perm(loc, _)`,
/// possibly under `\forall* binder`.
pub(super) struct Ann {
    pub(super) conds: Vec<Expr>,
    pub(super) amount: Option<Expr>,
    pub(super) binder: Option<Param>,
    pub(super) loc: Expr,
    pub(super) span: Span,
}

/// Splits a conjunct into permission annotations; `Err(span)` for a shape whose
/// permissions alpine cannot see (a predicate, `HPerm`, a conditional
/// expression holding permissions, …).
pub(super) fn shapes(e: &Expr, conds: &mut Vec<Expr>, binder: Option<&Param>, out: &mut Vec<Ann>) -> Result<(), Span> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And | BinOp::Star, lhs, rhs } => {
            shapes(lhs, conds, binder, out)?;
            shapes(rhs, conds, binder, out)
        }
        ExprKind::Binary { op: BinOp::Implies, lhs, rhs } if !has_perm(lhs) => {
            conds.push((**lhs).clone());
            let r = shapes(rhs, conds, binder, out);
            conds.pop();
            r
        }
        ExprKind::Perm { loc, amount } | ExprKind::PointsTo { loc, amount, .. } => {
            out.push(Ann {
                conds: conds.clone(),
                amount: Some((**amount).clone()),
                binder: binder.cloned(),
                loc: (**loc).clone(),
                span: e.span,
            });
            Ok(())
        }
        ExprKind::Value(loc) => {
            out.push(Ann { conds: conds.clone(), amount: None, binder: binder.cloned(), loc: (**loc).clone(), span: e.span });
            Ok(())
        }
        ExprKind::Quant { kind: QuantKind::ForallStar | QuantKind::Forall, binder: b, guard, body }
            if binder.is_none() && has_perm(body) =>
        {
            conds.push((**guard).clone());
            let r = shapes(body, conds, Some(b), out);
            conds.pop();
            r
        }
        ExprKind::Call { .. } if e.ty == Ty::Resource => Err(e.span),
        _ if has_perm(e) => Err(e.span),
        _ => Ok(()),
    }
}

/// Does a barrier that requires `given` take all of the permission annotation
/// `held` (one annotation, written alike, with at least its amount)?
pub(super) fn surrendered(held: &Expr, given: &[Expr]) -> bool {
    let one = |e: &Expr| {
        let mut v = Vec::new();
        shapes(e, &mut Vec::new(), None, &mut v).ok()?;
        (v.len() == 1 && v[0].binder.is_none()).then(|| v.remove(0))
    };
    let Some(h) = one(held) else { return false };
    let Some(have) = h.amount.as_ref().and_then(rational) else { return false };
    let text = |v: &[Expr]| v.iter().map(print_expr).collect::<Vec<_>>();
    given.iter().filter_map(one).any(|g| {
        print_expr(&g.loc) == print_expr(&h.loc)
            && (g.conds.is_empty() || text(&g.conds) == text(&h.conds))
            && g.amount.as_ref().and_then(rational).is_some_and(|(n, d)| n * have.1 >= have.0 * d)
    })
}

/// Does `e` (a resource) hold permissions on array elements, or a predicate?
pub(super) fn holds_elements(e: &Expr, program: &Program) -> bool {
    struct H<'a>(bool, &'a Program);
    impl Visitor for H<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } | ExprKind::Value(loc)
                    if !matches!(loc.kind, ExprKind::Field { .. } | ExprKind::Var(_)) =>
                {
                    self.0 = true;
                }
                ExprKind::Builtin { func: Builtin::HPerm | Builtin::APerm, .. } => self.0 = true,
                ExprKind::Call { method, .. } => {
                    let predicate = self
                        .1
                        .classes
                        .iter()
                        .flat_map(|c| &c.members)
                        .any(|m| matches!(m, Member::Method(m) if m.name.name == method.name && m.is_predicate()));
                    if predicate {
                        self.0 = true;
                    }
                }
                _ => {}
            }
            visit::walk_expr(self, e)
        }
    }
    let mut h = H(false, program);
    h.visit_expr(e);
    h.0
}

/// The first construct of a segment that may hand over permissions on array
/// elements.
pub(super) struct Transfers<'c, 'a> {
    pub(super) cx: &'c Cx<'a>,
    pub(super) found: Option<(Span, String)>,
}

impl Visitor for Transfers<'_, '_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        if self.found.is_some() {
            return;
        }
        let p = self.cx.program;
        match &s.kind {
            StmtKind::Sync { kind: SyncKind::Fork | SyncKind::Join, .. } | StmtKind::Par(_) => {
                self.found = Some((s.span, "a `fork`, `join` or nested `par`".into()));
                return;
            }
            StmtKind::Sync { kind, obj } => {
                let class = match &obj.ty {
                    Ty::Class(c) => c.to_string(),
                    _ => self.cx.class.name.to_string(),
                };
                if self.cx.lock_invariant_holds_elements(&class) {
                    self.found = Some((s.span, format!("`{}`", kind.keyword())));
                }
            }
            StmtKind::Atomic { invariants, .. }
                if invariants.iter().any(|i| self.cx.invariant_block(i.as_str()).is_none_or(|r| holds_elements(r, p))) =>
            {
                self.found = Some((s.span, "this `atomic` block".into()));
            }
            StmtKind::InvariantBlock { resource, .. } if holds_elements(resource, p) => {
                self.found = Some((s.span, "this `invariant` block".into()));
            }
            StmtKind::Spec { kind: SpecStmtKind::Inhale | SpecStmtKind::Exhale, expr } if holds_elements(expr, p) || has_perm(expr) => {
                self.found = Some((s.span, "this `inhale`/`exhale`".into()));
            }
            StmtKind::Spec { .. } => return,
            _ => {}
        }
        visit::walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        if self.found.is_some() {
            return;
        }
        if let ExprKind::Call { method, .. } = &e.kind {
            let p = self.cx.program;
            let callees: Vec<&Method> = p
                .classes
                .iter()
                .flat_map(|c| &c.members)
                .filter_map(|m| match m {
                    Member::Method(m) if m.name.name == method.name => Some(m),
                    _ => None,
                })
                .collect();
            let risky = callees.is_empty()
                || callees.iter().any(|m| !m.is_pure_function() && !m.is_predicate() && m.contract.exprs().any(|c| holds_elements(c, p)));
            if risky {
                self.found = Some((e.span, format!("the call of `{}`", method.name)));
                return;
            }
        }
        visit::walk_expr(self, e)
    }
    fn visit_clause(&mut self, _: &Clause) {}
}

/// Array bases of the given type in code and annotations: `Some(name)` for a
/// variable, `None` for another expression.
pub(super) struct Arrays<'t> {
    pub(super) ty: &'t Ty,
    pub(super) found: Vec<(Option<Name>, Span)>,
}

impl Visitor for Arrays<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprKind::Index { base, .. } = &e.kind {
            if base.ty == *self.ty {
                let name = match &base.kind {
                    ExprKind::Var(x) => Some(x.name.clone()),
                    _ => None,
                };
                if !self.found.iter().any(|(n, _)| name.is_some() && *n == name) {
                    self.found.push((name, base.span));
                }
            }
        }
        visit::walk_expr(self, e)
    }
}
