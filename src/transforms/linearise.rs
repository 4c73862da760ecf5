//! # `matrix_lin` — matrix linearisation
//!
//! **What.** Turns a rectangular 2-D array `T[][] M` of a method (a parameter or
//! a local) into a 1-D array `T[] M` of `D1·D2` cells, in the declaration, the
//! code and every contract of the method:
//!
//! | before | after (row-major `R`) | after (column-major `C`) |
//! |---|---|---|
//! | `T[][] M` | `T[] M` | `T[] M` |
//! | `M[r][c]` | `M[vct_ml_Idx(D2, r, c)]` = `M[D2·r + c]` | `M[vct_ml_Idx(D1, c, r)]` = `M[D1·c + r]` |
//! | `\matrix(M, D1, D2)` | `M != null && M.length == D1 * D2` | the same |
//! | `M.length`, `M[e].length` | `D1`, `D2` | `D1`, `D2` |
//! | `new T[D1][D2]` (M's initialiser) | `new T[D1 * D2]` | the same |
//!
//! `D1` is the number of rows, `D2` the length of each row. `vct_ml_Idx(X, a, b)
//! = X * a + b` is added once per class (Alpinist's helper): alpine's verifier
//! proves the linearised quantified permissions with it (its definition is
//! unfolded where a closed-form inverse is needed, `verify/encode/qp_solve.rs`),
//! while inline `D2 * r + c` leaves Z3 with nonlinear bounds it times out on.
//!
//! **Why.** A 1-D array is one allocation with coalesced, computable addresses
//! on a GPU, instead of an array of row pointers.
//!
//! **When.** Alpinist checks nothing (its corpus `Transpose` uses the wrong row
//! length). alpine refuses unless the rewrite provably keeps the meaning:
//!
//! * `M` is declared once in the method, with a type `T[][]`;
//! * it is rectangular with distinct rows, from the annotations: the method's
//!   precondition has `\matrix(M, a, b)` (rows `a`, each of length `b`, distinct,
//!   read permission on the rows), or the local is declared `T[][] M = new
//!   T[a][b];`. With a directive, Z3 proves `D1 == a` and `D2 == b` from the
//!   precondition; on the command line (`--linearise M:row|col`) `D1 = a`,
//!   `D2 = b`;
//! * the dimensions mean the same everywhere in the method: they read only
//!   variables the method never assigns (and no heap beyond `x.length`), and no
//!   binder of the method has their names;
//! * every use of `M` is a plain 2-D subscript `M[e1][e2]`, `M.length`,
//!   `M[e].length`, `\matrix(M, a, b)` with provably the same dimensions, or a
//!   comparison with `null`: no row `M[e]` on its own, no assignment to or from
//!   `M`, no call that gets `M` whole, and no other 2-D array of the same type
//!   (which could be the same matrix);
//! * nothing can replace a row behind the method's back: no call of a method
//!   whose contract holds resources, no `lock`/`fork`/... statement;
//! * if `M` is a parameter, nothing calls the method (the callers pass 2-D
//!   arrays).
//!
//! Under these conditions the map `(r, c) ↦ D2·r + c` (or `D1·c + r`) is a
//! bijection from the cells of the matrix onto `0 .. D1·D2`, and each access
//! touches the cell the original touches.
//!
//! **Example** (`gpuopt matrix_lin M R R C;`):
//!
//! ```text
//! context_everywhere \matrix(M, R, C);            context_everywhere M != null && M.length == R * C;
//! context (\forall* int i; 0 <= i && i < R;       context (\forall* int i; 0 <= i && i < R;
//!   (\forall* int j; 0 <= j && j < C;       ──▶     (\forall* int j; 0 <= j && j < C;
//!     Perm(M[i][j], write)));                           Perm(M[vct_ml_Idx(C, i, j)], write)));
//! void zero(int R, int C, int[][] M) {            void zero(int R, int C, int[] M) {
//!   par (int i = 0 .. R, int j = 0 .. C)            par (int i = 0 .. R, int j = 0 .. C)
//!     context Perm(M[i][j], write);                   context Perm(M[vct_ml_Idx(C, i, j)], write);
//!   { M[i][j] = 0; }                                { M[vct_ml_Idx(C, i, j)] = 0; }
//! }                                               }
//! ```

use super::loops::{conjuncts, Effects, Reads};
use super::prove::encode;
use super::{method_at, ApplicabilityError, Context, LoopId, Origin, Pass};
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
use crate::diagnostics::codes;
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

/// The index helper added to the class.
pub const HELPER: &str = "vct_ml_Idx";
const HELPER_DECL: &str = "static pure int vct_ml_Idx(int vct_ml_X, int vct_ml_a, int vct_ml_b) = vct_ml_X * vct_ml_a + vct_ml_b;";

/// Milliseconds Z3 may spend on one dimension question.
const TIMEOUT_MS: u32 = 2000;

pub struct Linearise;

/// "Linearise matrix `matrix` with layout `order`".
#[derive(Clone, Debug)]
pub struct LineariseRequest {
    pub method: MethodRef,
    pub matrix: Name,
    pub order: MatrixOrder,
    /// The directive's `D1 D2` (rows, row length); `None`: from the annotations.
    pub dims: Option<(Expr, Expr)>,
    pub origin: Origin,
}

/// Which method a [`LineariseRequest`] rewrites.
#[derive(Clone, Debug)]
pub enum MethodRef {
    /// This method (the span is the method's).
    At(LoopId),
    /// Every method that declares a 2-D array of that name, one after the other
    /// (`--linearise M:row|col`): each application rewrites the first that
    /// still does.
    Declaring,
}

/// What [`Linearise`] rewrites: matrix `matrix` of the method `method`.
#[derive(Clone, Debug)]
pub struct LinPlan {
    pub method: LoopId,
    /// The directive that asked (removed by the rewrite).
    pub directive: Option<Span>,
    pub matrix: Name,
    pub order: MatrixOrder,
    /// `D1` (rows) and `D2` (row length), as the annotations give them.
    pub rows: Expr,
    pub cols: Expr,
    /// Whether the class lacks [`HELPER`].
    pub add_helper: bool,
}

/// How many times `request` is carried out: once for a method, once per
/// method that declares the matrix for [`MethodRef::Declaring`] (refused when
/// none does).
pub fn applications(program: &Program, request: &LineariseRequest) -> Result<usize, ApplicabilityError> {
    match request.method {
        MethodRef::At(_) => Ok(1),
        MethodRef::Declaring => match methods_declaring(program, &request.matrix).len() {
            0 => Err(no_method_declares(&request.matrix)),
            n => Ok(n),
        },
    }
}

fn no_method_declares(name: &str) -> ApplicabilityError {
    let msg = format!("`--linearise {name}`: no method of the file has a 2-D array `{name}` (parameter or local)");
    ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_ARRAY, msg, Span::DUMMY)
}

/// The methods that declare a 2-D array named `name` (parameter or local), in
/// source order: what `--linearise NAME:row|col` rewrites.
pub fn methods_declaring(p: &Program, name: &str) -> Vec<LoopId> {
    let mut out = Vec::new();
    for (ci, class) in p.classes.iter().enumerate() {
        for (mi, member) in class.members.iter().enumerate() {
            let Member::Method(m) = member else { continue };
            if declarations(m, name).iter().any(|d| is_2d(&d.ty)) {
                out.push(LoopId { class: ci, member: mi, span: m.span });
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------------
// Applicability

impl Pass for Linearise {
    const NAME: &'static str = "matrix_lin";
    type Request = LineariseRequest;
    type Plan = LinPlan;

    fn check(program: &Program, request: &LineariseRequest, _: &Context<'_>) -> Result<LinPlan, ApplicabilityError> {
        let target = match request.method {
            MethodRef::At(id) => id,
            MethodRef::Declaring => {
                *methods_declaring(program, &request.matrix).first().ok_or_else(|| no_method_declares(&request.matrix))?
            }
        };
        let dims = request.dims.as_ref().map(|(r, c)| (r, c));
        plan(program, target, &request.matrix, request.order, dims, request.origin.directive())
    }

    fn apply(program: &mut Program, plan: LinPlan) {
        let class = program.classes.get_mut(plan.method.class).expect("a plan is applied to the program it was checked on");
        let Some(Member::Method(m)) = class.members.get_mut(plan.method.member) else {
            panic!("a plan is applied to the program it was checked on, which has its method")
        };
        m.directives.retain(|d| Some(d.span) != plan.directive);
        let lp = &plan;
        let mut r = Rewrite { plan: lp };
        for c in &mut m.contract.clauses {
            r.visit_clause_mut(c);
        }
        for p in &mut m.params {
            r.visit_param_mut(p);
        }
        match &mut m.body {
            MethodBody::Block(b) => r.visit_block_mut(b),
            MethodBody::Expr(e) => r.visit_expr_mut(e),
            MethodBody::Abstract => {}
        }
        if lp.add_helper {
            let at = class.members.iter().position(|m| matches!(m, Member::Method(_))).unwrap_or(class.members.len());
            class.members.insert(at, helper());
        }
    }
}

/// Checks linearising `name` in the method `target` with layout `order`;
/// `dims` are the directive's `D1 D2` (`None`: from the annotations).
fn plan(
    program: &Program,
    target: LoopId,
    name: &str,
    order: MatrixOrder,
    dims: Option<(&Expr, &Expr)>,
    directive: Option<Span>,
) -> Result<LinPlan, ApplicabilityError> {
    let m =
        method_at(program, target).ok_or_else(|| ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_ARRAY, "no such method", target.span))?;
    let at = directive.unwrap_or(m.name.span);
    let with_dir = |e: ApplicabilityError| match directive {
        Some(d) if d != e.0.span => e.related(d, "requested here"),
        _ => e,
    };
    // The declaration.
    let decls = declarations(m, name);
    let decl = match decls.as_slice() {
        [] => {
            let msg = format!("`{name}` is not a parameter or local variable of `{}`", m.name);
            return Err(ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_ARRAY, msg, at));
        }
        [d] => d,
        [d, more @ ..] => {
            let msg = format!("`{name}` is declared {} times in `{}`: linearisation needs one matrix of that name", decls.len(), m.name);
            let mut e = ApplicabilityError::new(codes::OPTIMISE_TEMPLATE, msg, d.span);
            for o in more {
                e = e.related(o.span, "declared again here");
            }
            return Err(with_dir(e));
        }
    };
    if !is_2d(&decl.ty) {
        let msg = format!("`{name}` is not a 2-D array (its type is `{}`)", crate::printer::print_type(&decl.ty));
        return Err(with_dir(ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_ARRAY, msg, decl.span)));
    }
    let body_effects = match &m.body {
        MethodBody::Block(b) => Effects::of_stmts(&b.stmts),
        _ => Effects::default(),
    };
    let binders = binder_names(m);
    let mut facts = Facts::new(m);

    // Rectangular, from the annotations.
    let (a, b, source) = match &decl.init {
        DeclInit::Param => {
            let found = m.contract.clauses.iter().find_map(|c| match &c.kind {
                ClauseKind::Requires(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) => {
                    conjuncts(e).into_iter().find_map(|x| matrix_fact(x, name))
                }
                _ => None,
            });
            let Some((a, b, span)) = found else {
                let msg = format!(
                    "cannot linearise `{name}`: nothing says that it is rectangular (the precondition of `{}` has no `\\matrix({name}, rows, cols)`)",
                    m.name
                );
                let e = ApplicabilityError::new(codes::OPTIMISE_SHAPE, msg, decl.span)
                    .help(format!("add `context_everywhere \\matrix({name}, D1, D2);`: D1 distinct rows of D2 cells each"));
                return Err(with_dir(e));
            };
            (a, b, span)
        }
        DeclInit::New(a, b, span) => (*a, *b, *span),
        DeclInit::Other(span) => {
            let msg = format!("cannot linearise `{name}`: it is not created as `new T[rows][cols]` where it is declared");
            return Err(with_dir(ApplicabilityError::new(codes::OPTIMISE_SHAPE, msg, *span)));
        }
    };
    let stable = |e: &Expr| -> Result<(), ApplicabilityError> {
        let reads = Reads::of(e);
        let shown = crate::printer::print_expr(e);
        let changed = reads.vars.iter().find(|v| body_effects.assigned.contains(*v) || body_effects.fields_written.contains(*v));
        let captured = reads.vars.iter().find(|v| binders.contains(*v));
        let why = if reads.heap || has_call(e) {
            Some(format!("`{shown}` reads the heap"))
        } else if let Some(v) = changed {
            Some(format!("`{v}` is assigned in `{}`", m.name))
        } else {
            captured.map(|v| format!("a binder or local of `{}` is named `{v}`", m.name))
        };
        match why {
            Some(why) => {
                let msg = format!(
                    "cannot linearise `{name}` with the dimension `{shown}`: {why}, so it may not mean the same everywhere in the method"
                );
                Err(with_dir(ApplicabilityError::new(codes::OPTIMISE_SHAPE, msg, if e.span == Span::DUMMY { at } else { e.span })))
            }
            None => Ok(()),
        }
    };
    stable(a)?;
    stable(b)?;
    let (rows, cols) = match dims {
        None => (a.clone(), b.clone()),
        Some((d1, d2)) => {
            stable(d1)?;
            stable(d2)?;
            for (d, x, what) in [(d1, a, "rows"), (d2, b, "columns")] {
                if !facts.equal(d, x) {
                    let msg = format!(
                        "cannot prove that `{name}` has `{}` {what}: the annotations say `{}`",
                        crate::printer::print_expr(d),
                        crate::printer::print_expr(x)
                    );
                    let e = ApplicabilityError::new(codes::OPTIMISE_SHAPE, msg, directive.unwrap_or(d.span))
                        .related(source, "the shape is given here");
                    return Err(e.help(format!("`gpuopt matrix_lin {name} R|C D1 D2;` takes D1 rows of D2 cells each")));
                }
            }
            (d1.clone(), d2.clone())
        }
    };

    // Every use of the matrix.
    let mut uses = Uses { name, ty: &decl.ty, rows: &rows, cols: &cols, facts: &mut facts, program, err: None, others: Vec::new() };
    for c in &m.contract.clauses {
        uses.visit_clause(c);
    }
    match &m.body {
        MethodBody::Block(blk) => uses.visit_block(blk),
        MethodBody::Expr(e) => uses.visit_expr(e),
        MethodBody::Abstract => {}
    }
    if let Some(e) = uses.err {
        return Err(with_dir(e));
    }
    let others = std::mem::take(&mut uses.others);
    for (other, span) in others {
        if !full_write(m, name, &mut facts) && !full_write(m, &other, &mut facts) {
            let msg = format!(
                "cannot linearise `{name}`: `{other}` is another 2-D array of the same type, which may share cells with it \
                 (neither has write permission to all its cells in the precondition)"
            );
            return Err(with_dir(ApplicabilityError::new(codes::OPTIMISE_ALIAS, msg, span)));
        }
    }
    if matches!(decl.init, DeclInit::Param) {
        if let Some(span) = calls_of(program, m) {
            let msg = format!("cannot linearise the parameter `{name}`: `{}` is called here with a 2-D array", m.name);
            return Err(with_dir(
                ApplicabilityError::new(codes::OPTIMISE_ALIAS, msg, span)
                    .help("linearisation changes the method's signature; its callers would need linearising too"),
            ));
        }
    }
    let add_helper = match program.classes[target.class].members.iter().find_map(|mb| match mb {
        Member::Method(h) if h.name.as_str() == HELPER => Some(h),
        _ => None,
    }) {
        None => true,
        Some(h) if same_member(h) => false,
        Some(h) => {
            let msg = format!("the class already has a method `{HELPER}` that is not the index helper linearisation adds");
            return Err(with_dir(ApplicabilityError::new(codes::OPTIMISE_TEMPLATE, msg, h.name.span)));
        }
    };
    Ok(LinPlan { method: target, directive, matrix: Name::from(name), order, rows, cols, add_helper })
}

/// Whether the precondition gives write permission to every cell of the 2-D
/// array `x` (printed form): `\matrix(x, a, b)` and `\forall* i; 0 <= i && i <
/// a; (\forall* j; 0 <= j && j < b; Perm(x[i][j], write))`. Then no other
/// array the method reads can share a cell with `x` (the permissions of one
/// cell add up to at most 1), and the method gets no permission later (it
/// makes no call that holds resources).
fn full_write(m: &Method, x: &str, facts: &mut Facts) -> bool {
    let pre: Vec<&Expr> = m.contract.preconditions().flat_map(|e| conjuncts(e)).collect();
    let shape = pre.iter().find_map(|e| match &e.kind {
        ExprKind::Builtin { func: Builtin::Matrix, args } if args.len() == 3 && crate::printer::print_expr(&args[0]) == x => {
            Some((&args[1], &args[2]))
        }
        _ => None,
    });
    let Some((a, b)) = shape else { return false };
    // `0 <= v && v < bound`: the bound.
    let upper = |g: &Expr, v: &str| -> Option<Expr> {
        let ExprKind::Binary { op: BinOp::And, lhs, rhs } = &g.kind else { return None };
        let zero = matches!(&lhs.kind, ExprKind::Binary { op: BinOp::Le, lhs: z, rhs: w } if matches!(z.kind, ExprKind::IntLit(0)) && is_var(w, v));
        match &rhs.kind {
            ExprKind::Binary { op: BinOp::Lt, lhs: w, rhs: hi } if zero && is_var(w, v) => Some((**hi).clone()),
            _ => None,
        }
    };
    pre.iter().any(|e| {
        let ExprKind::Quant { kind: QuantKind::ForallStar, binder: bi, guard: gi, body } = &e.kind else { return false };
        let ExprKind::Quant { kind: QuantKind::ForallStar, binder: bj, guard: gj, body } = &body.kind else { return false };
        let ExprKind::Perm { loc, amount } = &body.kind else { return false };
        let (i, j) = (bi.name.as_str(), bj.name.as_str());
        let cell = matches!(&loc.kind, ExprKind::Index { base, index } if is_var(index, j)
            && matches!(&base.kind, ExprKind::Index { base: xb, index: xi } if is_var(xi, i) && crate::printer::print_expr(xb) == x));
        let write = matches!(amount.kind, ExprKind::Write) || matches!(amount.kind, ExprKind::IntLit(1));
        let (Some(hi), Some(hj)) = (upper(gi, i), upper(gj, j)) else { return false };
        cell && write && i != j && facts.equal(&hi, a) && facts.equal(&hj, b)
    })
}

fn is_2d(t: &Type) -> bool {
    matches!(&t.kind, TypeKind::Array(e, _) if matches!(e.kind, TypeKind::Array(..)))
}

enum DeclInit<'a> {
    Param,
    /// `new T[a][b]` (with its span).
    New(&'a Expr, &'a Expr, Span),
    /// Any other initialiser, or none.
    Other(Span),
}

struct Decl<'a> {
    ty: Type,
    span: Span,
    init: DeclInit<'a>,
}

/// Every declaration of `name` in `m`: parameters, locals, binders, par
/// iterators.
fn declarations<'a>(m: &'a Method, name: &str) -> Vec<Decl<'a>> {
    struct Find<'a, 'n> {
        name: &'n str,
        out: Vec<Decl<'a>>,
    }
    impl<'a> Find<'a, '_> {
        fn stmt(&mut self, s: &'a Stmt) {
            if let StmtKind::LocalDecl { ty, name, init } = &s.kind {
                if name.as_str() == self.name {
                    let init = match init.as_ref().map(|e| (&e.kind, e.span)) {
                        Some((ExprKind::NewArray { dims, .. }, sp)) if dims.len() == 2 => DeclInit::New(&dims[0], &dims[1], sp),
                        Some((_, sp)) => DeclInit::Other(sp),
                        None => DeclInit::Other(name.span),
                    };
                    self.out.push(Decl { ty: ty.clone(), span: name.span, init });
                }
            }
        }
    }
    // Binders (quantifiers, `\let`, par iterators) through a plain visitor.
    struct Binders<'n> {
        name: &'n str,
        spans: Vec<(Type, Span)>,
    }
    impl Visitor for Binders<'_> {
        fn visit_param(&mut self, p: &Param) {
            if p.name.as_str() == self.name {
                self.spans.push((p.ty.clone(), p.name.span));
            }
        }
    }
    fn stmts<'a>(f: &mut Find<'a, '_>, s: &'a Stmt) {
        f.stmt(s);
        match &s.kind {
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| stmts(f, s)),
            StmtKind::If { then_branch, else_branch, .. } => {
                stmts(f, then_branch);
                if let Some(e) = else_branch {
                    stmts(f, e);
                }
            }
            StmtKind::Loop(l) => {
                if let LoopKind::For { init, update, .. } = &l.kind {
                    init.iter().chain(update).for_each(|s| stmts(f, s));
                }
                stmts(f, &l.body);
            }
            StmtKind::Par(p) => p.units.iter().flat_map(|u| &u.body.stmts).for_each(|s| stmts(f, s)),
            StmtKind::Atomic { body, .. } => stmts(f, body),
            StmtKind::InvariantBlock { body, .. } => body.stmts.iter().for_each(|s| stmts(f, s)),
            StmtKind::Barrier(Barrier { body: Some(b), .. }) => b.stmts.iter().for_each(|s| stmts(f, s)),
            _ => {}
        }
    }
    let mut f = Find { name, out: Vec::new() };
    for p in &m.params {
        if p.name.as_str() == name {
            f.out.push(Decl { ty: p.ty.clone(), span: p.name.span, init: DeclInit::Param });
        }
    }
    if let MethodBody::Block(b) = &m.body {
        b.stmts.iter().for_each(|s| stmts(&mut f, s));
    }
    let mut bs = Binders { name, spans: Vec::new() };
    visit::walk_contract(&mut bs, &m.contract);
    match &m.body {
        MethodBody::Block(b) => bs.visit_block(b),
        MethodBody::Expr(e) => bs.visit_expr(e),
        MethodBody::Abstract => {}
    }
    f.out.extend(bs.spans.into_iter().map(|(ty, span)| Decl { ty, span, init: DeclInit::Other(span) }));
    f.out
}

/// Names bound inside the method: binders, par iterators, locals.
fn binder_names(m: &Method) -> HashSet<Name> {
    struct B(HashSet<Name>);
    impl Visitor for B {
        fn visit_param(&mut self, p: &Param) {
            self.0.insert(p.name.name.clone());
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::LocalDecl { name, .. } = &s.kind {
                self.0.insert(name.name.clone());
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut b = B(HashSet::new());
    visit::walk_contract(&mut b, &m.contract);
    match &m.body {
        MethodBody::Block(blk) => b.visit_block(blk),
        MethodBody::Expr(e) => b.visit_expr(e),
        MethodBody::Abstract => {}
    }
    b.0
}

fn has_call(e: &Expr) -> bool {
    struct C(bool);
    impl Visitor for C {
        fn visit_expr(&mut self, e: &Expr) {
            self.0 |= matches!(e.kind, ExprKind::Call { .. } | ExprKind::Builtin { .. });
            visit::walk_expr(self, e)
        }
    }
    let mut c = C(false);
    c.visit_expr(e);
    c.0
}

/// `\matrix(name, a, b)`: (a, b, span).
fn matrix_fact<'e>(e: &'e Expr, name: &str) -> Option<(&'e Expr, &'e Expr, Span)> {
    match &e.kind {
        ExprKind::Builtin { func: Builtin::Matrix, args } if args.len() == 3 && is_var(&args[0], name) => {
            Some((&args[1], &args[2], e.span))
        }
        _ => None,
    }
}

fn is_var(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Var(v) if v.as_str() == name)
}

/// The method's precondition (integer fragment) in a Z3 solver.
struct Facts {
    solver: SmtSolver,
    queries: usize,
}

impl Facts {
    fn new(m: &Method) -> Facts {
        let mut solver = SmtSolver::new(TIMEOUT_MS, 0, false);
        let mut lengths = HashSet::new();
        for c in &m.contract.clauses {
            if let ClauseKind::Requires(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) = &c.kind {
                for x in conjuncts(e) {
                    if let Some(t) = encode(x, &mut lengths) {
                        solver.assert(t);
                    }
                }
            }
        }
        Facts { solver, queries: 0 }
    }

    /// Do the facts imply `a == b`? (Structurally equal: yes; `unknown`: no.)
    fn equal(&mut self, a: &Expr, b: &Expr) -> bool {
        if crate::printer::print_expr(a) == crate::printer::print_expr(b) {
            return true;
        }
        let mut lengths = HashSet::new();
        let (Some(x), Some(y)) = (encode(a, &mut lengths), encode(b, &mut lengths)) else { return false };
        if x.sort() != Sort::Int || y.sort() != Sort::Int {
            return false;
        }
        self.queries += 1;
        let g = format!("goal${}", self.queries);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&x.eq(&y).not()));
        matches!(self.solver.check(&[&g]), Ok(Outcome::Proved))
    }
}

/// Checks every use of the matrix (the first problem found is kept).
struct Uses<'a> {
    name: &'a str,
    ty: &'a Type,
    rows: &'a Expr,
    cols: &'a Expr,
    facts: &'a mut Facts,
    program: &'a Program,
    err: Option<ApplicabilityError>,
    /// Other 2-D arrays of the matrix's type (as printed), with a use.
    others: Vec<(String, Span)>,
}

impl Uses<'_> {
    fn fail(&mut self, code: &'static str, msg: String, span: Span) {
        if self.err.is_none() {
            self.err = Some(ApplicabilityError::new(code, msg, span));
        }
    }

    fn is_matrix(&self, e: &Expr) -> bool {
        is_var(e, self.name)
    }

    /// A method the program declares under `name` that is not a pure function
    /// and whose contract holds resources (it may take and replace rows).
    fn may_change_rows(&self, name: &str) -> bool {
        let preds = self.program.predicate_names();
        let is_pred = |n: &str| preds.contains(n);
        self.program.classes.iter().flat_map(|c| &c.members).any(|mb| match mb {
            Member::Method(m) if m.name.as_str() == name => {
                !m.is_pure_function() && !m.is_predicate() && m.contract.exprs().any(|e| visit::holds_resource(e, &is_pred))
            }
            _ => false,
        })
    }
}

impl Visitor for Uses<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        let name = self.name;
        match &s.kind {
            StmtKind::Assign { target, value } if self.is_matrix(target) || self.is_matrix(value) => {
                let msg = if self.is_matrix(target) {
                    format!("cannot linearise `{name}`: it is assigned here (linearisation needs one matrix throughout the method)")
                } else {
                    format!("cannot linearise `{name}`: it is aliased here (assigned to `{}`)", crate::printer::print_expr(target))
                };
                return self.fail(codes::OPTIMISE_ALIAS, msg, s.span);
            }
            StmtKind::LocalDecl { name: x, init: Some(init), .. } if self.is_matrix(init) => {
                let msg = format!("cannot linearise `{name}`: it is aliased here (assigned to `{x}`)");
                return self.fail(codes::OPTIMISE_ALIAS, msg, s.span);
            }
            StmtKind::Sync { kind, .. } => {
                let msg =
                    format!("cannot linearise `{name}`: `{}` may hand over permissions and so the rows of the matrix", kind.keyword());
                return self.fail(codes::OPTIMISE_ALIAS, msg, s.span);
            }
            _ => {}
        }
        visit::walk_stmt(self, s)
    }

    fn visit_expr(&mut self, e: &Expr) {
        let name = self.name;
        match &e.kind {
            // The one allowed access: `M[e1][e2]`.
            ExprKind::Index { base, index: e2 } if matches!(&base.kind, ExprKind::Index { base: b, .. } if self.is_matrix(b)) => {
                let ExprKind::Index { index: e1, .. } = &base.kind else { unreachable!() };
                self.visit_expr(e1);
                self.visit_expr(e2);
            }
            ExprKind::Field { obj, field } if field.as_str() == "length" && self.is_matrix(obj) => {}
            ExprKind::Field { obj, field }
                if field.as_str() == "length" && matches!(&obj.kind, ExprKind::Index { base, .. } if self.is_matrix(base)) =>
            {
                let ExprKind::Index { index, .. } = &obj.kind else { unreachable!() };
                self.visit_expr(index);
            }
            ExprKind::Binary { op: BinOp::Eq | BinOp::Ne, lhs, rhs }
                if (self.is_matrix(lhs) && matches!(rhs.kind, ExprKind::Null))
                    || (self.is_matrix(rhs) && matches!(lhs.kind, ExprKind::Null)) => {}
            ExprKind::Builtin { func: Builtin::Matrix, args } if args.len() == 3 && self.is_matrix(&args[0]) => {
                for (d, x, what) in [(self.rows, &args[1], "rows"), (self.cols, &args[2], "columns")] {
                    if !self.facts.equal(d, x) {
                        let msg = format!(
                            "cannot linearise `{name}`: this `\\matrix` gives it `{}` {what}, which need not be `{}`",
                            crate::printer::print_expr(x),
                            crate::printer::print_expr(d)
                        );
                        return self.fail(codes::OPTIMISE_SHAPE, msg, e.span);
                    }
                }
                self.visit_expr(&args[1]);
                self.visit_expr(&args[2]);
            }
            ExprKind::Index { base, .. } if self.is_matrix(base) => {
                let msg = format!(
                    "cannot linearise `{name}`: `{}` uses a row on its own; only plain 2-D subscripts `{name}[e1][e2]` can be linearised",
                    crate::printer::print_expr(e)
                );
                self.fail(codes::OPTIMISE_TEMPLATE, msg, e.span)
            }
            // Another 2-D array of the same type may be the same matrix: decided
            // after the walk (`disjoint`).
            ExprKind::Index { base, index: e2 } if matches!(&base.kind, ExprKind::Index { base: b, .. } if !self.is_matrix(b) && same_type(&b.ty, self.ty)) =>
            {
                let ExprKind::Index { base: b, index: e1 } = &base.kind else { unreachable!() };
                let shown = crate::printer::print_expr(b);
                if !self.others.iter().any(|(o, _)| *o == shown) {
                    self.others.push((shown, e.span));
                }
                self.visit_expr(b);
                self.visit_expr(e1);
                self.visit_expr(e2);
            }
            ExprKind::Call { method, args, .. } => {
                if let Some(a) = args.iter().find(|a| self.is_matrix(a)) {
                    let msg = format!("cannot linearise `{name}`: it is passed whole to `{method}`");
                    return self.fail(codes::OPTIMISE_ALIAS, msg, a.span);
                }
                if self.may_change_rows(method.as_str()) {
                    let msg = format!("cannot linearise `{name}`: `{method}` takes permissions and may replace rows of the matrix");
                    return self.fail(codes::OPTIMISE_ALIAS, msg, e.span);
                }
                visit::walk_expr(self, e)
            }
            ExprKind::Var(_) if self.is_matrix(e) => {
                let msg = format!(
                    "cannot linearise `{name}`: it is used here as a whole; only plain 2-D subscripts `{name}[e1][e2]` can be linearised"
                );
                self.fail(codes::OPTIMISE_ALIAS, msg, e.span)
            }
            _ => visit::walk_expr(self, e),
        }
    }
}

fn same_type(t: &Ty, decl: &Type) -> bool {
    fn conv(t: &Type) -> Option<Ty> {
        Some(match &t.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean => Ty::Bool,
            TypeKind::Array(e, _) => Ty::Array(Box::new(conv(e)?)),
            TypeKind::Class(c) => Ty::Class(c.name.clone()),
            _ => return None,
        })
    }
    // Unknown element types: assume they may be the same.
    conv(decl).is_none_or(|d| d == *t)
}

/// A call of `m` anywhere in the program (by name and arity).
fn calls_of(p: &Program, m: &Method) -> Option<Span> {
    struct C<'a> {
        name: &'a str,
        arity: usize,
        found: Option<Span>,
    }
    impl Visitor for C<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { method, args, .. } = &e.kind {
                if method.as_str() == self.name && args.len() == self.arity && self.found.is_none() {
                    self.found = Some(e.span);
                }
            }
            visit::walk_expr(self, e)
        }
    }
    let mut c = C { name: m.name.as_str(), arity: m.params.len(), found: None };
    c.visit_program(p);
    c.found
}

/// [`HELPER_DECL`] as a member.
fn helper() -> Member {
    let src = format!("class H {{ {HELPER_DECL} }}");
    let mut p = crate::syntax::parse(&src).expect("the helper parses");
    visit::strip_spans(&mut p);
    p.classes.remove(0).members.remove(0)
}

/// Whether `m` is [`HELPER_DECL`].
fn same_member(m: &Method) -> bool {
    let Member::Method(h) = helper() else { return false };
    let show = |m: &Method| match &m.body {
        MethodBody::Expr(e) => Some((crate::printer::print_expr(e), m.params.iter().map(|p| p.name.to_string()).collect::<Vec<_>>())),
        _ => None,
    };
    m.modifiers.is_static && m.params.len() == 3 && show(m) == show(&h)
}

// ------------------------------------------------------------------------------------
// Rewrite

struct Rewrite<'a> {
    plan: &'a LinPlan,
}

impl Rewrite<'_> {
    fn is_matrix(&self, e: &Expr) -> bool {
        is_var(e, &self.plan.matrix)
    }
    /// `vct_ml_Idx(X, a, b)` for the cell `[r][c]`.
    fn index(&self, r: Expr, c: Expr) -> Expr {
        let (x, a, b) = match self.plan.order {
            MatrixOrder::Row => (self.plan.cols.clone(), r, c),
            MatrixOrder::Column => (self.plan.rows.clone(), c, r),
        };
        Expr::new(ExprKind::Call { receiver: None, method: Ident::new(HELPER, Span::DUMMY), args: vec![x, a, b] }, Span::DUMMY)
    }
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::new(ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() }, Span::DUMMY)
}

fn flatten(t: &mut Type) {
    if let TypeKind::Array(e, _) = &t.kind {
        let mut flat = (**e).clone();
        // A written row size (`int[m][n]`) is no longer the length.
        if let TypeKind::Array(_, size) = &mut flat.kind {
            *size = None;
        }
        *t = flat;
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_param_mut(&mut self, p: &mut Param) {
        if p.name.name == self.plan.matrix {
            flatten(&mut p.ty);
        }
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let StmtKind::LocalDecl { ty, name, init } = &mut s.kind {
            if name.name == self.plan.matrix {
                flatten(ty);
                if let Some(Expr { kind: ExprKind::NewArray { dims, .. }, .. }) = init {
                    if dims.len() == 2 {
                        let b = dims.pop().expect("two dims");
                        let a = dims.pop().expect("two dims");
                        dims.push(bin(BinOp::Mul, a, b));
                    }
                }
            }
        }
        visit::walk_stmt_mut(self, s)
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // Pre-order: `M[r][c]` is one access (its inner `M[r]` is no row use),
        // and `M[r][c].length` of a 3-D array is not `M[e].length`.
        let span = e.span;
        let take = |x: &mut Expr| std::mem::replace(x, Expr::new(ExprKind::Null, Span::DUMMY));
        let new = match &mut e.kind {
            ExprKind::Index { base, index } if matches!(&base.kind, ExprKind::Index { base: m, .. } if self.is_matrix(m)) => {
                let ExprKind::Index { base: m, index: r } = &mut base.kind else { unreachable!() };
                self.visit_expr_mut(r);
                self.visit_expr_mut(index);
                let (r, c) = (take(r), take(index));
                Some(ExprKind::Index { base: m.clone(), index: self.index(r, c).boxed() })
            }
            ExprKind::Field { obj, field } if field.as_str() == "length" && self.is_matrix(obj) => Some(self.plan.rows.kind.clone()),
            ExprKind::Field { obj, field }
                if field.as_str() == "length" && matches!(&obj.kind, ExprKind::Index { base, .. } if self.is_matrix(base)) =>
            {
                Some(self.plan.cols.kind.clone())
            }
            ExprKind::Builtin { func: Builtin::Matrix, args } if args.len() == 3 && self.is_matrix(&args[0]) => {
                let m = args[0].clone();
                let null = bin(BinOp::Ne, m.clone(), Expr::new(ExprKind::Null, Span::DUMMY));
                let len = Expr::new(ExprKind::Field { obj: m.boxed(), field: Ident::new("length", Span::DUMMY) }, Span::DUMMY);
                let size = bin(BinOp::Mul, args[1].clone(), args[2].clone());
                Some(bin(BinOp::And, null, bin(BinOp::Eq, len, size)).kind)
            }
            _ => None,
        };
        match new {
            Some(k) => *e = Expr::new(k, span),
            None => visit::walk_expr_mut(self, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::transforms::tests::apply_first_directive as run;

    const ZERO: &str = "class C {
        gpuopt matrix_lin M ORDER D1 D2;
        context_everywhere \\matrix(M, R, K);
        context (\\forall* int i; 0 <= i && i < R; (\\forall* int j; 0 <= j && j < K; Perm(M[i][j], write)));
        ensures (\\forall int i; 0 <= i && i < R; (\\forall int j; 0 <= j && j < K; M[i][j] == 0));
        void zero(int R, int K, int[][] M) {
            par (int i = 0 .. R, int j = 0 .. K)
                context Perm(M[i][j], write);
                ensures M[i][j] == 0;
            { M[i][j] = 0; }
        }
    }";

    fn zero(order: &str, d1: &str, d2: &str) -> String {
        ZERO.replace("ORDER", order).replace("D1", d1).replace("D2", d2)
    }

    #[test]
    fn row_major_uses_the_row_length() {
        let out = run(&zero("R", "R", "K")).unwrap();
        assert!(out.contains("int[] M"), "{out}");
        assert!(out.contains("M[vct_ml_Idx(K, i, j)] = 0;"), "{out}");
        assert!(out.contains("M != null && M.length == R * K"), "{out}");
        assert!(out.contains("static pure int vct_ml_Idx(int vct_ml_X, int vct_ml_a, int vct_ml_b)"), "{out}");
        assert!(!out.contains("gpuopt"), "{out}");
        assert!(!out.contains("]["), "{out}");
    }

    #[test]
    fn column_major_uses_the_column_length() {
        let out = run(&zero("C", "R", "K")).unwrap();
        assert!(out.contains("M[vct_ml_Idx(R, j, i)] = 0;"), "{out}");
    }

    #[test]
    fn refuses_dimensions_the_annotations_contradict() {
        let e = run(&zero("R", "K", "R")).unwrap_err();
        assert!(e.starts_with(crate::diagnostics::codes::OPTIMISE_SHAPE), "{e}");
        assert!(e.contains("has `K` rows: the annotations say `R`"), "{e}");
    }

    #[test]
    fn proves_equal_dimensions_with_z3() {
        let src = zero("R", "R", "K2").replace("void zero(int R, int K, int[][] M)", "void zero(int R, int K, int K2, int[][] M)");
        let src = src.replace("context_everywhere \\matrix", "requires K2 == K; context_everywhere \\matrix");
        let out = run(&src).unwrap();
        assert!(out.contains("M[vct_ml_Idx(K2, i, j)] = 0;"), "{out}");
    }

    #[test]
    fn refuses_a_row_on_its_own() {
        let src = zero("R", "R", "K").replace("ensures M[i][j] == 0;", "ensures M[i] != null;");
        let e = run(&src).unwrap_err();
        assert!(e.contains("`M[i]` uses a row on its own"), "{e}");
    }

    #[test]
    fn keeps_an_existing_helper_and_refuses_a_different_one() {
        let same = zero("R", "R", "K").replace("class C {", &format!("class C {{ {} ", super::HELPER_DECL));
        let out = run(&same).unwrap();
        assert_eq!(out.matches("static pure int vct_ml_Idx").count(), 1, "{out}");
        let other = zero("R", "R", "K").replace("class C {", "class C { static pure int vct_ml_Idx(int a) = a; ");
        assert!(run(&other).unwrap_err().contains("already has a method `vct_ml_Idx`"));
    }
}
