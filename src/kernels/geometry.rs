//! The launch geometry of a kernel as the lowering sees it: per axis, the
//! block size and the grid size (a constant from `--blockDim`/`--gridDim`
//! (`--local_size`/`--num_groups`), else a parameter of the kernel's method),
//! the names of the par iterators, and the thread-level clauses quantified over
//! the threads of a block or of the grid (VerCors' `allThreadsInBlock`/`allThreadsInGrid`).
//!
//! Invariants and their soundness:
//! * an axis whose size is 1 has no iterator: its id is the constant 0. An axis
//!   the file never mentions and the command line does not size is taken to be
//!   of size 1 — a precondition of the launch, stated in the help of every
//!   report (launching with more threads along an axis the code ignores would
//!   run threads twice over the same data);
//! * a symbolic size `S` comes with the precondition `0 < S`, and every axis
//!   with `gridDim * blockDim <= INT_MAX` (CUDA: at most 2^31 - 1 blocks, 1024
//!   threads), so that a global id `blockIdx * blockDim + threadIdx` is a
//!   non-negative `int` and needs no overflow check (`expr.rs` relies on it);
//! * the names of iterators and sizes contain a `.` (`threadIdx.x`), which no
//!   C or PVL identifier has: they cannot capture or be captured by a user name.

use crate::ast::{BinOp, Expr, ExprKind, Ident, Param, QuantKind, Span, Type, TypeKind};
use crate::cfront::ir::{Axis, Builtin, Dim3, Language, Launch};

/// `INT_MAX` of a 32-bit `int`.
pub const INT_MAX: u128 = i32::MAX as u128;

const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

/// A size along one axis.
#[derive(Clone, Debug)]
pub enum Size {
    Given(u64),
    /// A parameter of the kernel's method, by name.
    Symbolic(String),
}

#[derive(Clone, Debug)]
pub struct Geometry {
    pub language: Language,
    /// Threads per block, per axis.
    pub block: [Size; 3],
    /// Blocks per grid, per axis.
    pub grid: [Size; 3],
}

fn axis_index(a: Axis) -> usize {
    match a {
        Axis::X => 0,
        Axis::Y => 1,
        Axis::Z => 2,
    }
}

fn axis_letter(a: Axis) -> char {
    ['x', 'y', 'z'][axis_index(a)]
}

/// Whether the text mentions axis `a` in any spelling of a geometry built-in.
fn mentions_axis(text: &str, a: Axis) -> bool {
    let l = axis_letter(a);
    let i = axis_index(a);
    ["threadIdx", "blockIdx", "blockDim", "gridDim"].iter().any(|v| text.contains(&format!("{v}.{l}")))
        || ["get_local_id", "get_group_id", "get_local_size", "get_num_groups", "get_global_id", "get_global_size"]
            .iter()
            .any(|f| text.contains(&format!("{f}({i})")))
}

pub fn int_lit(n: u128, span: Span) -> Expr {
    Expr::new(ExprKind::IntLit(n), span)
}

pub fn var(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Var(Ident::new(name, span)), span)
}

pub fn bin(op: BinOp, l: Expr, r: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() }, span)
}

pub fn int_type(span: Span) -> Type {
    Type::new(TypeKind::Int, span)
}

impl Geometry {
    /// The geometry of a file's kernels: sizes from the command line, the
    /// others symbolic where the text mentions the axis, else 1.
    pub fn new(language: Language, launch: Launch, text: &str) -> Geometry {
        let size = |dim: Option<Dim3>, a: Axis, name: String| -> Size {
            match dim.and_then(|d| d.0[axis_index(a)]) {
                Some(n) => Size::Given(n),
                None if dim.is_some() || a == Axis::X || mentions_axis(text, a) => Size::Symbolic(name),
                None => Size::Given(1),
            }
        };
        let names = |a: Axis| -> (String, String) {
            match language {
                Language::Cuda => (format!("blockDim.{}", axis_letter(a)), format!("gridDim.{}", axis_letter(a))),
                Language::OpenCl => (format!("get_local_size.{}", axis_index(a)), format!("get_num_groups.{}", axis_index(a))),
            }
        };
        let block = AXES.map(|a| size(launch.block, a, names(a).0));
        let grid = AXES.map(|a| size(launch.grid, a, names(a).1));
        Geometry { language, block, grid }
    }

    /// The name of the thread (local) iterator of axis `a`.
    pub fn thread_iter(&self, a: Axis) -> String {
        match self.language {
            Language::Cuda => format!("threadIdx.{}", axis_letter(a)),
            Language::OpenCl => format!("get_local_id.{}", axis_index(a)),
        }
    }

    /// The name of the block (group) iterator of axis `a`.
    pub fn block_iter(&self, a: Axis) -> String {
        match self.language {
            Language::Cuda => format!("blockIdx.{}", axis_letter(a)),
            Language::OpenCl => format!("get_group_id.{}", axis_index(a)),
        }
    }

    fn size_expr(s: &Size, span: Span) -> Expr {
        match s {
            Size::Given(n) => int_lit(*n as u128, span),
            Size::Symbolic(name) => var(name, span),
        }
    }

    pub fn block_size(&self, a: Axis, span: Span) -> Expr {
        Self::size_expr(&self.block[axis_index(a)], span)
    }

    pub fn grid_size(&self, a: Axis, span: Span) -> Expr {
        Self::size_expr(&self.grid[axis_index(a)], span)
    }

    /// Axes along which a block has more than one thread (the inner par's iterators).
    pub fn thread_axes(&self) -> Vec<Axis> {
        AXES.into_iter().filter(|a| !matches!(self.block[axis_index(*a)], Size::Given(1))).collect()
    }

    /// Axes along which the grid has more than one block (the outer par's iterators).
    pub fn block_axes(&self) -> Vec<Axis> {
        AXES.into_iter().filter(|a| !matches!(self.grid[axis_index(*a)], Size::Given(1))).collect()
    }

    /// The symbolic sizes: the kernel method's extra parameters.
    pub fn symbolic_sizes(&self) -> Vec<String> {
        self.block
            .iter()
            .chain(self.grid.iter())
            .filter_map(|s| match s {
                Size::Symbolic(n) => Some(n.clone()),
                Size::Given(_) => None,
            })
            .collect()
    }

    /// The geometry of one kernel whose contract fixes some of the symbolic
    /// sizes: a `context_everywhere S == N` clause (`S` a block or grid size in
    /// any spelling, `N` an integer literal) is a precondition of the launch
    /// written in the file, as `--blockDim`/`--gridDim` are on the command line,
    /// so the kernel is lowered for that size (what `alpine emit` writes for its
    /// one-block and fixed-block launches). The clause itself stays in the
    /// contract (it becomes `N == N`). Returns the geometry and the substitution
    /// that brings the parsed contract to it: each pinned size by its value, and
    /// the iterator of an axis now of size 1 by 0 (it has no iterator).
    pub fn pinned_by(&self, contract: &crate::ast::Contract) -> (Geometry, crate::ast::subst::Subst) {
        let mut geo = self.clone();
        let mut subst = crate::ast::subst::Subst::new();
        for cl in &contract.clauses {
            let crate::ast::ClauseKind::ContextEverywhere(e) = &cl.kind else { continue };
            for c in e.conjuncts() {
                let ExprKind::Binary { op: BinOp::Eq, lhs, rhs } = &c.kind else { continue };
                let (name, n) = match (&lhs.kind, &rhs.kind) {
                    (ExprKind::Var(v), ExprKind::IntLit(n)) | (ExprKind::IntLit(n), ExprKind::Var(v)) => (v.name.to_string(), *n),
                    _ => continue,
                };
                let Ok(n) = u64::try_from(n) else { continue };
                if n == 0 {
                    continue;
                }
                for a in AXES {
                    let i = axis_index(a);
                    let block = geo.block_iters_of(a, &name);
                    let slot = if block { &mut geo.block[i] } else { &mut geo.grid[i] };
                    if matches!(slot, Size::Symbolic(s) if *s == name) {
                        *slot = Size::Given(n);
                        subst = subst.with(&name, int_lit(n as u128, c.span));
                        if n == 1 {
                            let iter = if block { self.thread_iter(a) } else { self.block_iter(a) };
                            subst = subst.with(&iter, int_lit(0, c.span));
                        }
                    }
                }
            }
        }
        (geo, subst)
    }

    /// Whether `name` is the block size of axis `a` (else it may be its grid size).
    fn block_iters_of(&self, a: Axis, name: &str) -> bool {
        matches!(&self.block[axis_index(a)], Size::Symbolic(s) if s == name)
    }

    /// The launch preconditions: every symbolic size positive, and per axis
    /// `grid * block <= INT_MAX` (see the module doc). `Err` names an axis whose
    /// given sizes break the bound.
    pub fn preconditions(&self, span: Span) -> Result<Vec<Expr>, String> {
        let mut out = Vec::new();
        for s in self.symbolic_sizes() {
            out.push(bin(BinOp::Lt, int_lit(0, span), var(&s, span), span));
        }
        for a in AXES {
            let (b, g) = (&self.block[axis_index(a)], &self.grid[axis_index(a)]);
            match (b, g) {
                (Size::Given(b), Size::Given(g)) => {
                    if (*b as u128) * (*g as u128) > INT_MAX {
                        return Err(format!("{b} × {g} threads along {} exceed INT_MAX", axis_letter(a)));
                    }
                }
                _ => {
                    let product = bin(BinOp::Mul, self.grid_size(a, span), self.block_size(a, span), span);
                    out.push(bin(BinOp::Le, product, int_lit(INT_MAX, span), span));
                }
            }
        }
        Ok(out)
    }

    /// A geometry built-in as an expression over the iterators and sizes;
    /// `None` for `warpSize` (not modelled).
    pub fn builtin(&self, b: Builtin, span: Span) -> Option<Expr> {
        let id = |iter: String, axes: Vec<Axis>, a: Axis| if axes.contains(&a) { var(&iter, span) } else { int_lit(0, span) };
        Some(match b {
            Builtin::LocalId(a) => id(self.thread_iter(a), self.thread_axes(), a),
            Builtin::GroupId(a) => id(self.block_iter(a), self.block_axes(), a),
            Builtin::LocalSize(a) => self.block_size(a, span),
            Builtin::NumGroups(a) => self.grid_size(a, span),
            Builtin::GlobalId(a) => {
                let g = self.builtin(Builtin::GroupId(a), span)?;
                let l = self.builtin(Builtin::LocalId(a), span)?;
                bin(BinOp::Add, bin(BinOp::Mul, g, self.block_size(a, span), span), l, span)
            }
            Builtin::GlobalSize(a) => bin(BinOp::Mul, self.grid_size(a, span), self.block_size(a, span), span),
            Builtin::WarpSize => return None,
        })
    }

    /// Iterators as `(name, size)` for the par header or a quantifier.
    pub fn thread_iters(&self, span: Span) -> Vec<(String, Expr)> {
        self.thread_axes().into_iter().map(|a| (self.thread_iter(a), self.block_size(a, span))).collect()
    }

    pub fn block_iters(&self, span: Span) -> Vec<(String, Expr)> {
        self.block_axes().into_iter().map(|a| (self.block_iter(a), self.grid_size(a, span))).collect()
    }
}

/// Whether an (untyped) annotation expression holds a resource: a
/// permission, `PointsTo` or `Value` anywhere in it, or a `\forall*` (the
/// type checker takes one for a resource whatever its body, so it can only be
/// quantified with `\forall*` again).
pub fn is_resource(e: &Expr) -> bool {
    struct Find(bool);
    impl crate::ast::visit::Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            let star = matches!(&e.kind, ExprKind::Quant { kind: QuantKind::ForallStar, .. });
            if star || matches!(e.kind, ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_)) {
                self.0 = true;
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let mut f = Find(false);
    crate::ast::visit::Visitor::visit_expr(&mut f, e);
    f.0
}

/// `e`, a clause of one thread, for all threads of `iters` (VerCors'
/// `allOneExpr`): quantified over the iterators it mentions (`\forall*` for a
/// resource, `\forall` otherwise); a resource that mentions none of them is
/// held once per thread, so it is scaled by their number (`[n]e`); a pure
/// clause that mentions none stays as it is.
pub fn for_all_threads(e: &Expr, iters: &[(String, Expr)]) -> Expr {
    let free: Vec<String> = crate::ast::subst::free_vars(e).into_iter().map(|(n, _)| n.to_string()).collect();
    let resource = is_resource(e);
    let used: Vec<&(String, Expr)> = iters.iter().filter(|(n, _)| free.contains(n)).collect();
    let unused: Vec<&(String, Expr)> = iters.iter().filter(|(n, _)| !free.contains(n)).collect();
    let span = e.span;
    let mut body = e.clone();
    if resource && !unused.is_empty() {
        let count = unused.iter().map(|(_, s)| s.clone()).reduce(|a, b| bin(BinOp::Mul, a, b, span)).expect("not empty");
        body = Expr::new(ExprKind::Scale { amount: count.boxed(), expr: body.boxed() }, span);
    }
    for (name, size) in used.into_iter().rev() {
        let x = var(name, span);
        let guard = bin(BinOp::And, bin(BinOp::Le, int_lit(0, span), x.clone(), span), bin(BinOp::Lt, x, size.clone(), span), span);
        let kind = if resource { QuantKind::ForallStar } else { QuantKind::Forall };
        let binder = Param { ty: int_type(span), name: Ident::new(name, span), span };
        body = Expr::new(ExprKind::Quant { kind, binder, guard: guard.boxed(), body: body.boxed() }, span);
    }
    body
}
