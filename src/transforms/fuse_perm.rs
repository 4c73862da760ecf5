//! Kernel contracts as the fusion pass sees them ([`super::fuse`]): permission
//! annotations on array elements (`Perm(a[e], p)`, `c ==> Perm(a[e], p)`, the
//! paper's permission-annotation sets), functional conjuncts, concrete
//! permission amounts, and the location questions decided with Z3
//! ([`Overlap`]): "can thread `t1` of one kernel and thread `t2` of the other
//! touch the same element?" — over all thread ids at once, never by
//! enumerating them.

use super::loops::{bin, conjuncts, int};
use super::prove::{encode, var_term};
use crate::ast::visit::{walk_expr, Visitor};
use crate::ast::*;
use crate::printer::print_expr;
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

/// `cond ==> Perm(array[index], amount)` (`cond` absent: always).
#[derive(Clone, Debug)]
pub struct PermAnn {
    pub cond: Option<Expr>,
    pub array: Name,
    pub index: Expr,
    pub amount: Expr,
    /// The conjunct it came from (for diagnostics).
    pub span: Span,
}

impl PermAnn {
    /// Same condition and index, as written (after the thread id renaming).
    pub fn same_place(&self, o: &PermAnn) -> bool {
        self.array == o.array
            && self.cond.as_ref().map(print_expr) == o.cond.as_ref().map(print_expr)
            && print_expr(&self.index) == print_expr(&o.index)
    }

    pub fn with_amount(&self, amount: Expr) -> PermAnn {
        PermAnn { amount, ..self.clone() }
    }

    /// The annotation as an expression.
    pub fn to_expr(&self) -> Expr {
        let loc =
            Expr::new(ExprKind::Index { base: super::loops::var(&self.array).boxed(), index: self.index.clone().boxed() }, Span::DUMMY);
        let perm = Expr::new(ExprKind::Perm { loc: loc.boxed(), amount: self.amount.clone().boxed() }, Span::DUMMY);
        match &self.cond {
            Some(c) => bin(BinOp::Implies, c.clone(), perm),
            None => perm,
        }
    }

    /// `location written as text`, e.g. `a[tid + 1]` (for messages).
    pub fn place(&self) -> String {
        let loc = format!("{}[{}]", self.array, print_expr(&self.index));
        match &self.cond {
            Some(c) => format!("{loc} (when {})", print_expr(c)),
            None => loc,
        }
    }
}

/// Does `e` mention a permission (`Perm`, `PointsTo`, `Value`, `HPerm`, `APerm`)?
pub fn has_perm(e: &Expr) -> bool {
    struct Find(bool);
    impl Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => self.0 = true,
                ExprKind::Builtin { func: Builtin::HPerm | Builtin::APerm, .. } => self.0 = true,
                _ => {}
            }
            walk_expr(self, e)
        }
    }
    let mut f = Find(false);
    f.visit_expr(e);
    f.0
}

/// Splits a permission conjunct into annotations, or says why it has no
/// supported shape (the span of the offending part).
pub fn perm_anns(e: &Expr) -> Result<Vec<PermAnn>, Span> {
    let mut out = Vec::new();
    for c in conjuncts(e) {
        let (cond, rest) = match &c.kind {
            ExprKind::Binary { op: BinOp::Implies, lhs, rhs } if !has_perm(lhs) => (Some((**lhs).clone()), &**rhs),
            _ => (None, c),
        };
        for p in conjuncts(rest) {
            let ExprKind::Perm { loc, amount } = &p.kind else { return Err(p.span) };
            let ExprKind::Index { base, index } = &loc.kind else { return Err(p.span) };
            let ExprKind::Var(a) = &base.kind else { return Err(p.span) };
            out.push(PermAnn {
                cond: cond.clone(),
                array: a.name.clone(),
                index: (**index).clone(),
                amount: (**amount).clone(),
                span: c.span,
            });
        }
    }
    Ok(out)
}

/// A concrete permission amount `n/d` (d > 0), when `e` is one: literals,
/// `write`, `none`, `\`, `+`, `-`, `*`, unary minus. `None` also where the
/// exact value does not fit i128 arithmetic (every step is checked): callers
/// then treat the amount as symbolic, i.e. refuse or stay conservative.
pub fn rational(e: &Expr) -> Option<(i128, i128)> {
    fn norm(n: i128, d: i128) -> Option<(i128, i128)> {
        if d == 0 {
            return None;
        }
        let (n, d) = if d < 0 { (n.checked_neg()?, d.checked_neg()?) } else { (n, d) };
        let g = gcd(n.checked_abs()?, d).max(1);
        Some((n / g, d / g))
    }
    match &e.kind {
        ExprKind::IntLit(v) => Some((i128::try_from(*v).ok()?, 1)),
        ExprKind::Write => Some((1, 1)),
        ExprKind::NoPerm => Some((0, 1)),
        ExprKind::Unary { op: UnOp::Neg, operand } => rational(operand).and_then(|(n, d)| Some((n.checked_neg()?, d))),
        ExprKind::Binary { op, lhs, rhs } => {
            let ((a, b), (c, d)) = (rational(lhs)?, rational(rhs)?);
            match op {
                BinOp::Frac | BinOp::Div if c != 0 => norm(a.checked_mul(d)?, b.checked_mul(c)?),
                BinOp::Add => add((a, b), (c, d)),
                BinOp::Sub => sub((a, b), (c, d)),
                BinOp::Mul => norm(a.checked_mul(c)?, b.checked_mul(d)?),
                _ => None,
            }
        }
        _ => None,
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The amount `n/d` as PVL (`1`, `1 \ 2`), exactly (`int` takes any i128).
pub fn amount_expr((n, d): (i128, i128)) -> Expr {
    if d == 1 {
        int(n)
    } else {
        bin(BinOp::Frac, int(n), int(d))
    }
}

/// `x - y`, reduced; `None` where it does not fit i128 (the caller then
/// gives up on the amount rather than use a wrapped one).
pub fn sub((a, b): (i128, i128), (c, d): (i128, i128)) -> Option<(i128, i128)> {
    let n = a.checked_mul(d)?.checked_sub(c.checked_mul(b)?)?;
    let m = b.checked_mul(d)?;
    let g = gcd(n.checked_abs()?, m).max(1);
    Some((n / g, m / g))
}

/// `x + y`, reduced; `None` where it does not fit i128.
pub fn add(x: (i128, i128), (c, d): (i128, i128)) -> Option<(i128, i128)> {
    sub(x, (c.checked_neg()?, d))
}

pub fn positive((n, _): (i128, i128)) -> bool {
    n > 0
}

/// May a thread holding only this annotation's amount write? (`read` cannot;
/// a concrete amount can when it is at least 1; any other amount might.)
pub fn may_write(a: &PermAnn) -> bool {
    match rational(&a.amount) {
        Some((n, d)) => n >= d,
        None => !matches!(a.amount.kind, ExprKind::Read),
    }
}

/// The arrays an expression reads by element (`x[...]` with `x` a variable),
/// and whether it reads any other heap location (fields, other bases).
pub fn array_reads(e: &Expr) -> (HashSet<Name>, bool) {
    struct R(HashSet<Name>, bool);
    impl Visitor for R {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Index { base, .. } => match (&base.kind, &base.ty) {
                    (_, Ty::Seq(_) | Ty::Map(..)) => {}
                    (ExprKind::Var(a), _) => {
                        self.0.insert(a.name.clone());
                    }
                    _ => self.1 = true,
                },
                ExprKind::Field { field, .. } if field.as_str() != "length" => self.1 = true,
                _ => {}
            }
            walk_expr(self, e)
        }
    }
    let mut r = R(HashSet::new(), false);
    r.visit_expr(e);
    (r.0, r.1)
}

/// The thread variables of the location questions.
const T1: &str = "vct_fuse_t1";
const T2: &str = "vct_fuse_t2";
const LOC: &str = "vct_fuse_loc";

/// A witness that two annotations meet: thread `t1` of the first kernel and
/// thread `t2` of the second touch element `loc`.
#[derive(Clone, Debug)]
pub struct Witness {
    pub t1: Option<i64>,
    pub t2: Option<i64>,
    pub loc: Option<i64>,
}

/// Which pairs of threads a question is about.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// The same thread.
    Same,
    /// Two different threads.
    Different,
    /// Two different threads of different thread blocks of this size.
    OtherBlock(i64),
}

/// Location questions over the fused range `lo <= t < hi`, under the method's
/// facts. Z3 `unknown` counts as "they may meet".
pub struct Overlap {
    solver: SmtSolver,
    queries: usize,
    tid: Name,
    lo: Term,
    /// The thread range as written (for conditions built over it).
    pub range: (Expr, Expr),
}

impl Overlap {
    /// `facts`: boolean conjuncts known on entry (method contract); `lo`/`hi`:
    /// the thread range; `tid`: the thread variable of the annotations.
    pub fn new(facts: &[&Expr], lo: &Expr, hi: &Expr, tid: &str) -> Option<Overlap> {
        let mut lengths = HashSet::new();
        let mut solver = SmtSolver::new(2000, 0, false);
        for f in facts {
            if let Some(t) = encode(f, &mut lengths) {
                solver.assert(t);
            }
        }
        let (lo_t, hi_t) = (encode(lo, &mut lengths)?, encode(hi, &mut lengths)?);
        for t in [T1, T2] {
            let v = var_term(t, &Ty::Int).expect("int");
            solver.assert(lo_t.le(&v).and2(&v.lt(&hi_t)));
        }
        for a in &lengths {
            if !a.starts_with('|') {
                solver.assert(Term::konst(&format!("len${a}"), Sort::Int).ge(&Term::int(0)));
            }
        }
        Some(Overlap { solver, queries: 0, tid: Name::from(tid), lo: lo_t, range: (lo.clone(), hi.clone()) })
    }

    /// The thread variable of the annotations.
    pub fn tid(&self) -> &str {
        &self.tid
    }

    fn at(&self, a: &PermAnn, t: &str, lengths: &mut HashSet<Name>) -> Option<(Term, Term)> {
        let idx = encode(&subst::Subst::new().rename(&self.tid, t).expr(&a.index), lengths)?;
        let mut cond = match &a.cond {
            Some(c) => encode(&subst::Subst::new().rename(&self.tid, t).expr(c), lengths)?,
            None => Term::bool(true),
        };
        // Only elements that exist carry permissions.
        let len = Term::konst(&format!("len${}", a.array), Sort::Int);
        cond = cond.and2(&Term::int(0).le(&idx)).and2(&idx.lt(&len));
        Some((cond, idx))
    }

    /// Can `a` (thread t1) and `b` (thread t2) name the same element? `None`:
    /// they cannot (proved); `Some(witness)`: they may.
    pub fn meet(&mut self, a: &PermAnn, b: &PermAnn, threads: Threads) -> Option<Witness> {
        if a.array != b.array {
            return None;
        }
        let mut lengths = HashSet::new();
        let unknown = Some(Witness { t1: None, t2: None, loc: None });
        let (Some((c1, i1)), Some((c2, i2))) = (self.at(a, T1, &mut lengths), self.at(b, T2, &mut lengths)) else { return unknown };
        let (t1, t2) = (var_term(T1, &Ty::Int).expect("int"), var_term(T2, &Ty::Int).expect("int"));
        let rel = match threads {
            Threads::Same => t1.eq(&t2),
            Threads::Different => t1.ne(&t2),
            Threads::OtherBlock(ts) => {
                let ts = Term::int(i128::from(ts));
                t1.sub(&self.lo).ediv(&ts).ne(&t2.sub(&self.lo).ediv(&ts))
            }
        };
        self.queries += 1;
        let g = format!("meet${}", self.queries);
        let loc = Term::konst(LOC, Sort::Int);
        let q = Term::and(vec![rel, c1, c2, i1.eq(&i2), loc.eq(&i1)]);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&q));
        match self.solver.check(&[&g]) {
            Ok(Outcome::Proved) => None,
            Ok(Outcome::NotProved { unknown: None }) => {
                let val =
                    |n: &str| self.solver.model_value(n, &Sort::Int).and_then(|v| crate::verify::smt::solver::tidy_value(&v).parse().ok());
                Some(Witness { t1: val(&format!("v${T1}")), t2: val(&format!("v${T2}")), loc: val(LOC) })
            }
            _ => unknown,
        }
    }

    /// Does `goal`, an expression over the thread variable, hold for every
    /// thread of the range (under the facts)?
    pub fn holds_for_every_thread(&mut self, goal: &Expr) -> bool {
        let tid = self.tid.clone();
        self.proves(&subst::Subst::new().rename(&tid, T1).expr(goal))
    }

    /// Is `goal` (a boolean expression) implied by the facts?
    pub fn proves(&mut self, goal: &Expr) -> bool {
        let Some(t) = encode(goal, &mut HashSet::new()) else { return false };
        self.queries += 1;
        let g = format!("goal${}", self.queries);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&t.not()));
        matches!(self.solver.check(&[&g]), Ok(Outcome::Proved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expr {
        crate::syntax::parse_expr(s).expect("parses")
    }

    #[test]
    fn amounts() {
        assert_eq!(rational(&expr("1\\1 - 1\\2")), Some((1, 2)));
        assert_eq!(rational(&expr("write")), Some((1, 1)));
        assert_eq!(rational(&expr("5\\6 * 1\\2")), Some((5, 12)));
        assert_eq!(rational(&expr("read")), None);
        assert_eq!(print_expr(&amount_expr((1, 2))), "1\\2");
    }

    #[test]
    fn annotation_shapes() {
        let a = perm_anns(&expr("tid > 0 ==> Perm(a[tid - 1], 1\\2) ** Perm(b[tid], 1)")).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].place(), "a[tid - 1] (when tid > 0)");
        let a = perm_anns(&expr("Perm(a[tid], 1) ** Perm(b[tid], 1)")).unwrap();
        assert_eq!(a.len(), 2);
        assert!(perm_anns(&expr("Perm(x.f, 1)")).is_err());
    }
}
