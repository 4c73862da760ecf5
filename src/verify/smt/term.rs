//! SMT terms as plain Rust data, printed as SMT-LIB 2.
//!
//! The encoder builds [`Term`]s; the backend ([`super::solver`]) builds them as Z3
//! ASTs ([`super::native`]) and prints them for `--dump-smt`. Keeping our own term type (instead of building Z3 ASTs
//! directly) lets the encoder inspect terms — affine index analysis for quantified
//! permissions, trigger selection, skolemisation, substitution — and lets
//! `alpine verify --dump-smt` show exactly what Z3 was asked.
//!
//! Terms are reference-counted and immutable; every node knows its sort.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

/// SMT sorts. Everything that is not a Bool, Int or Real is an uninterpreted
/// sort named by the encoder (`Ref`, `Arr`, `Seq<Int>`, …).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sort {
    Bool,
    Int,
    Real,
    Named(Rc<str>),
}

impl Sort {
    pub fn named(name: &str) -> Sort {
        Sort::Named(Rc::from(name))
    }
}

impl fmt::Display for Sort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bool => f.write_str("Bool"),
            Sort::Int => f.write_str("Int"),
            Sort::Real => f.write_str("Real"),
            Sort::Named(n) => write!(f, "|{n}|"),
        }
    }
}

/// Interpreted operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Not,
    And,
    Or,
    Implies,
    Eq,
    Ite,
    Add,
    Sub,
    Neg,
    Mul,
    /// SMT-LIB Euclidean `div` on Int
    Div,
    /// SMT-LIB Euclidean `mod` on Int
    Mod,
    /// `/` on Real
    RealDiv,
    Lt,
    Le,
    ToReal,
}

impl Op {
    /// The SMT-LIB name.
    pub fn smt(self) -> &'static str {
        match self {
            Op::Not => "not",
            Op::And => "and",
            Op::Or => "or",
            Op::Implies => "=>",
            Op::Eq => "=",
            Op::Ite => "ite",
            Op::Add => "+",
            Op::Sub | Op::Neg => "-",
            Op::Mul => "*",
            Op::Div => "div",
            Op::Mod => "mod",
            Op::RealDiv => "/",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::ToReal => "to_real",
        }
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A constant symbol: a local's SSA version, a skolem, a bound variable.
    Const(Rc<str>, Sort),
    /// An integer literal. PVL integers are mathematical: folding is checked
    /// (an overflowing fold builds the operation instead), and a program literal
    /// beyond `i128::MAX` is built by `Term::nat` as an exact sum, so no value is
    /// ever clamped or wrapped.
    IntLit(i128),
    /// `num/den`, den > 0
    RealLit(i128, i128),
    BoolLit(bool),
    /// Application of an uninterpreted function (heap/mask versions, `alen`,
    /// pure functions, sequence functions).
    App(Rc<str>, Vec<Term>, Sort),
    Op(Op, Vec<Term>, Sort),
    Quant(Box<Quant>),
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Quant {
    pub forall: bool,
    pub vars: Vec<(Rc<str>, Sort)>,
    /// Each inner vector is one (multi-)pattern.
    pub patterns: Vec<Vec<Term>>,
    pub body: Term,
    pub qid: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Term(pub Rc<Node>);

impl Term {
    pub fn node(&self) -> &Node {
        &self.0
    }

    pub fn sort(&self) -> Sort {
        match self.node() {
            Node::Const(_, s) | Node::App(_, _, s) | Node::Op(_, _, s) => s.clone(),
            Node::IntLit(_) => Sort::Int,
            Node::RealLit(..) => Sort::Real,
            Node::BoolLit(_) | Node::Quant(_) => Sort::Bool,
        }
    }

    pub fn konst(name: &str, sort: Sort) -> Term {
        Term(Rc::new(Node::Const(Rc::from(name), sort)))
    }
    pub fn int(v: i128) -> Term {
        Term(Rc::new(Node::IntLit(v)))
    }
    /// The natural number `v` exactly: a literal where it fits an i128, else
    /// `2 * (v / 2) + v % 2` (program literals go up to `u128::MAX`).
    pub fn nat(v: u128) -> Term {
        match i128::try_from(v) {
            Ok(v) => Term::int(v),
            Err(_) => {
                let half = Term::int(i128::try_from(v / 2).expect("u128::MAX / 2 fits an i128"));
                arith(Op::Add, &arith(Op::Mul, &Term::int(2), &half), &Term::int(i128::from(v % 2 == 1)))
            }
        }
    }
    pub fn real(num: i128, den: i128) -> Term {
        Term(Rc::new(Node::RealLit(num, den)))
    }
    pub fn bool(b: bool) -> Term {
        Term(Rc::new(Node::BoolLit(b)))
    }
    pub fn tru() -> Term {
        Term::bool(true)
    }
    pub fn fls() -> Term {
        Term::bool(false)
    }
    pub fn app(f: &str, args: Vec<Term>, sort: Sort) -> Term {
        Term(Rc::new(Node::App(Rc::from(f), args, sort)))
    }
    fn op(op: Op, args: Vec<Term>, sort: Sort) -> Term {
        Term(Rc::new(Node::Op(op, args, sort)))
    }

    pub fn as_bool_lit(&self) -> Option<bool> {
        match self.node() {
            Node::BoolLit(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_int_lit(&self) -> Option<i128> {
        match self.node() {
            Node::IntLit(v) => Some(*v),
            _ => None,
        }
    }
    pub fn is_true(&self) -> bool {
        self.as_bool_lit() == Some(true)
    }
    pub fn is_false(&self) -> bool {
        self.as_bool_lit() == Some(false)
    }

    // ---- boolean connectives (with the obvious simplifications) ----

    pub fn not(&self) -> Term {
        match self.node() {
            Node::BoolLit(b) => Term::bool(!b),
            Node::Op(Op::Not, a, _) => a[0].clone(),
            _ => Term::op(Op::Not, vec![self.clone()], Sort::Bool),
        }
    }
    pub fn and(parts: Vec<Term>) -> Term {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            if p.is_false() {
                return Term::fls();
            }
            if p.is_true() {
                continue;
            }
            match p.node() {
                Node::Op(Op::And, inner, _) => out.extend(inner.iter().cloned()),
                _ => out.push(p),
            }
        }
        match out.len() {
            0 => Term::tru(),
            1 => out.pop().unwrap(),
            _ => Term::op(Op::And, out, Sort::Bool),
        }
    }
    /// The conjuncts of `self`, nested conjunctions flattened (`self` alone
    /// unless it is a conjunction).
    pub fn conjuncts(&self) -> Vec<Term> {
        match self.node() {
            Node::Op(Op::And, a, _) => a.iter().flat_map(Term::conjuncts).collect(),
            _ => vec![self.clone()],
        }
    }
    pub fn and2(&self, b: &Term) -> Term {
        Term::and(vec![self.clone(), b.clone()])
    }
    pub fn or(parts: Vec<Term>) -> Term {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            if p.is_true() {
                return Term::tru();
            }
            if !p.is_false() {
                out.push(p);
            }
        }
        match out.len() {
            0 => Term::fls(),
            1 => out.pop().unwrap(),
            _ => Term::op(Op::Or, out, Sort::Bool),
        }
    }
    pub fn or2(&self, b: &Term) -> Term {
        Term::or(vec![self.clone(), b.clone()])
    }
    pub fn implies(&self, b: &Term) -> Term {
        if self.is_true() {
            return b.clone();
        }
        if self.is_false() || b.is_true() {
            return Term::tru();
        }
        Term::op(Op::Implies, vec![self.clone(), b.clone()], Sort::Bool)
    }
    pub fn ite(&self, t: &Term, e: &Term) -> Term {
        match self.as_bool_lit() {
            Some(true) => return t.clone(),
            Some(false) => return e.clone(),
            None => {}
        }
        if t == e {
            return t.clone();
        }
        Term::op(Op::Ite, vec![self.clone(), t.clone(), e.clone()], t.sort())
    }
    pub fn eq(&self, b: &Term) -> Term {
        if self == b {
            return Term::tru();
        }
        let (a, b) = coerce(self, b);
        Term::op(Op::Eq, vec![a, b], Sort::Bool)
    }
    pub fn ne(&self, b: &Term) -> Term {
        self.eq(b).not()
    }

    // ---- arithmetic (Int, Real; mixed operands are lifted to Real) ----

    pub fn add(&self, b: &Term) -> Term {
        if b.as_int_lit() == Some(0) {
            return self.clone();
        }
        if self.as_int_lit() == Some(0) {
            return b.clone();
        }
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            if let Some(v) = x.checked_add(y) {
                return Term::int(v);
            }
        }
        arith(Op::Add, self, b)
    }
    pub fn sub(&self, b: &Term) -> Term {
        if b.as_int_lit() == Some(0) {
            return self.clone();
        }
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            if let Some(v) = x.checked_sub(y) {
                return Term::int(v);
            }
        }
        arith(Op::Sub, self, b)
    }
    pub fn mul(&self, b: &Term) -> Term {
        if b.as_int_lit() == Some(1) {
            return self.clone();
        }
        if self.as_int_lit() == Some(1) {
            return b.clone();
        }
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            if let Some(v) = x.checked_mul(y) {
                return Term::int(v);
            }
        }
        arith(Op::Mul, self, b)
    }
    pub fn neg(&self) -> Term {
        if let Some(v) = self.as_int_lit() {
            if let Some(n) = v.checked_neg() {
                return Term::int(n);
            }
        }
        let s = self.sort();
        Term::op(Op::Neg, vec![self.clone()], s)
    }
    /// Euclidean division on Int (SMT-LIB `div`).
    pub fn ediv(&self, b: &Term) -> Term {
        Term::op(Op::Div, vec![self.clone(), b.clone()], Sort::Int)
    }
    /// Euclidean remainder on Int (SMT-LIB `mod`).
    pub fn emod(&self, b: &Term) -> Term {
        Term::op(Op::Mod, vec![self.clone(), b.clone()], Sort::Int)
    }
    pub fn real_div(&self, b: &Term) -> Term {
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            if y > 0 {
                return Term::real(x, y);
            }
        }
        Term::op(Op::RealDiv, vec![self.to_real(), b.to_real()], Sort::Real)
    }
    pub fn to_real(&self) -> Term {
        match self.node() {
            Node::IntLit(v) => Term::real(*v, 1),
            _ if self.sort() == Sort::Int => Term::op(Op::ToReal, vec![self.clone()], Sort::Real),
            _ => self.clone(),
        }
    }
    pub fn lt(&self, b: &Term) -> Term {
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            return Term::bool(x < y);
        }
        let (a, b) = coerce(self, b);
        Term::op(Op::Lt, vec![a, b], Sort::Bool)
    }
    pub fn le(&self, b: &Term) -> Term {
        if let (Some(x), Some(y)) = (self.as_int_lit(), b.as_int_lit()) {
            return Term::bool(x <= y);
        }
        let (a, b) = coerce(self, b);
        Term::op(Op::Le, vec![a, b], Sort::Bool)
    }
    pub fn gt(&self, b: &Term) -> Term {
        b.lt(self)
    }
    pub fn ge(&self, b: &Term) -> Term {
        b.le(self)
    }

    // ---- quantifiers ----

    /// `forall vars :: body` with the given patterns. Without variables the body
    /// itself is returned.
    pub fn forall(vars: Vec<(Rc<str>, Sort)>, patterns: Vec<Vec<Term>>, body: Term, qid: &str) -> Term {
        Term::quant(true, vars, patterns, body, qid)
    }
    pub fn exists(vars: Vec<(Rc<str>, Sort)>, patterns: Vec<Vec<Term>>, body: Term, qid: &str) -> Term {
        Term::quant(false, vars, patterns, body, qid)
    }
    fn quant(forall: bool, vars: Vec<(Rc<str>, Sort)>, patterns: Vec<Vec<Term>>, body: Term, qid: &str) -> Term {
        if vars.is_empty() || body.as_bool_lit().is_some() {
            return body;
        }
        let patterns = admissible_patterns(&vars, patterns);
        Term(Rc::new(Node::Quant(Box::new(Quant { forall, vars, patterns, body, qid: qid.to_string() }))))
    }

    /// Whether Z3 accepts the term inside a pattern of a quantifier over `vars`:
    /// not a bare bound variable, and free of the Boolean connectives, `=`,
    /// `ite` and quantifiers (Z3's `pattern_validator` rejects every operator of
    /// its basic family but `true`/`false`; arithmetic is allowed).
    pub fn is_pattern_term(&self, vars: &[(Rc<str>, Sort)]) -> bool {
        fn clean(t: &Term) -> bool {
            match t.node() {
                Node::Const(..) | Node::IntLit(_) | Node::RealLit(..) | Node::BoolLit(_) => true,
                Node::App(_, args, _) => args.iter().all(clean),
                Node::Op(op, args, _) => {
                    !matches!(op, Op::Not | Op::And | Op::Or | Op::Implies | Op::Eq | Op::Ite) && args.iter().all(clean)
                }
                Node::Quant(_) => false,
            }
        }
        let bare_var = matches!(self.node(), Node::Const(n, _) if vars.iter().any(|(v, _)| v == n));
        !bare_var && clean(self)
    }

    /// Replaces constants by terms (capture is impossible: bound variables have
    /// names that are unique in the unit).
    pub fn subst(&self, map: &HashMap<Rc<str>, Term>) -> Term {
        if map.is_empty() {
            return self.clone();
        }
        let mut memo = HashMap::new();
        self.subst_memo(map, &mut memo)
    }

    fn subst_memo(&self, map: &HashMap<Rc<str>, Term>, memo: &mut HashMap<*const Node, Term>) -> Term {
        let key = Rc::as_ptr(&self.0);
        if let Some(t) = memo.get(&key) {
            return t.clone();
        }
        let out = match self.node() {
            Node::Const(n, _) => map.get(n).cloned().unwrap_or_else(|| self.clone()),
            _ => self.map_children(&mut |c| c.subst_memo(map, memo)),
        };
        memo.insert(key, out.clone());
        out
    }

    /// Replaces every occurrence of the subterm `from` (structurally equal) by `to`.
    pub fn replace(&self, from: &Term, to: &Term) -> Term {
        if self == from {
            return to.clone();
        }
        self.map_children(&mut |c| c.replace(from, to))
    }

    /// The same node with `f` applied to each direct subterm (a quantifier's body
    /// and patterns); leaves are returned as they are.
    pub fn map_children(&self, f: &mut dyn FnMut(&Term) -> Term) -> Term {
        match self.node() {
            Node::Const(..) | Node::IntLit(_) | Node::RealLit(..) | Node::BoolLit(_) => self.clone(),
            Node::App(g, args, s) => Term(Rc::new(Node::App(g.clone(), args.iter().map(&mut *f).collect(), s.clone()))),
            Node::Op(op, args, s) => rebuild_op(*op, args.iter().map(&mut *f).collect(), s.clone()),
            Node::Quant(q) => {
                let body = f(&q.body);
                let patterns = q.patterns.iter().map(|p| p.iter().map(&mut *f).collect()).collect();
                // A substitution may put an `ite` into a pattern (a truncating
                // `/` substituted for a constant).
                let patterns = admissible_patterns(&q.vars, patterns);
                Term(Rc::new(Node::Quant(Box::new(Quant { forall: q.forall, vars: q.vars.clone(), patterns, body, qid: q.qid.clone() }))))
            }
        }
    }

    /// Whether the constant `name` occurs in the term.
    pub fn mentions(&self, name: &str) -> bool {
        match self.node() {
            Node::Const(n, _) => &**n == name,
            Node::IntLit(_) | Node::RealLit(..) | Node::BoolLit(_) => false,
            Node::App(_, args, _) | Node::Op(_, args, _) => args.iter().any(|a| a.mentions(name)),
            Node::Quant(q) => q.body.mentions(name),
        }
    }

    /// Collects the declarations this term needs: free constants and function
    /// symbols with their signatures, and the uninterpreted sorts.
    pub fn collect_decls(&self, decls: &mut Decls) {
        let mut bound = Vec::new();
        let mut seen = HashSet::new();
        self.collect(decls, &mut bound, &mut seen);
    }

    fn collect(&self, decls: &mut Decls, bound: &mut Vec<Rc<str>>, seen: &mut HashSet<*const Node>) {
        if bound.is_empty() && !seen.insert(Rc::as_ptr(&self.0)) {
            return;
        }
        match self.node() {
            Node::Const(n, s) => {
                if !bound.iter().any(|b| b == n) {
                    decls.add_sort(s);
                    decls.funs.entry(n.clone()).or_insert_with(|| (Vec::new(), s.clone()));
                }
            }
            Node::IntLit(_) | Node::RealLit(..) | Node::BoolLit(_) => {}
            Node::App(f, args, s) => {
                for a in args {
                    a.collect(decls, bound, seen);
                }
                decls.add_sort(s);
                decls.funs.entry(f.clone()).or_insert_with(|| (args.iter().map(Term::sort).collect(), s.clone()));
            }
            Node::Op(_, args, _) => {
                for a in args {
                    a.collect(decls, bound, seen);
                }
            }
            Node::Quant(q) => {
                let n = bound.len();
                for (v, s) in &q.vars {
                    decls.add_sort(s);
                    bound.push(v.clone());
                }
                q.body.collect(decls, bound, seen);
                for p in &q.patterns {
                    for t in p {
                        t.collect(decls, bound, seen);
                    }
                }
                bound.truncate(n);
            }
        }
    }
}

/// The (multi-)patterns Z3 accepts: each term passes [`Term::is_pattern_term`]
/// and together they mention every bound variable. The others are dropped
/// rather than handed to Z3, which rejects the whole quantifier for one bad
/// pattern; a quantifier left without patterns gets Z3's own, so dropping can
/// cost completeness, never soundness.
fn admissible_patterns(vars: &[(Rc<str>, Sort)], patterns: Vec<Vec<Term>>) -> Vec<Vec<Term>> {
    patterns
        .into_iter()
        .filter(|p| !p.is_empty() && p.iter().all(|t| t.is_pattern_term(vars)) && vars.iter().all(|(v, _)| p.iter().any(|t| t.mentions(v))))
        .collect()
}

fn rebuild_op(op: Op, args: Vec<Term>, s: Sort) -> Term {
    // Re-simplify after substitution (e.g. `i0 == 3` with i0 := 3).
    match op {
        Op::Not => args[0].not(),
        Op::And => Term::and(args),
        Op::Or => Term::or(args),
        Op::Implies => args[0].implies(&args[1]),
        Op::Ite => args[0].ite(&args[1], &args[2]),
        Op::Eq => args[0].eq(&args[1]),
        Op::Add => args[0].add(&args[1]),
        Op::Sub => args[0].sub(&args[1]),
        Op::Mul => args[0].mul(&args[1]),
        Op::Lt => args[0].lt(&args[1]),
        Op::Le => args[0].le(&args[1]),
        _ => Term::op(op, args, s),
    }
}

fn coerce(a: &Term, b: &Term) -> (Term, Term) {
    match (a.sort(), b.sort()) {
        (Sort::Int, Sort::Real) => (a.to_real(), b.clone()),
        (Sort::Real, Sort::Int) => (a.clone(), b.to_real()),
        _ => (a.clone(), b.clone()),
    }
}

fn arith(op: Op, a: &Term, b: &Term) -> Term {
    let (a, b) = coerce(a, b);
    let s = a.sort();
    Term::op(op, vec![a, b], s)
}

/// Declarations needed by a batch of terms.
#[derive(Default, Debug)]
pub struct Decls {
    pub sorts: HashSet<Rc<str>>,
    pub funs: BTreeMap<Rc<str>, (Vec<Sort>, Sort)>,
}

impl Decls {
    fn add_sort(&mut self, s: &Sort) {
        if let Sort::Named(n) = s {
            self.sorts.insert(n.clone());
        }
    }

    pub fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let mut sorts: Vec<_> = self.sorts.iter().collect();
        sorts.sort();
        for s in sorts {
            let _ = writeln!(out, "(declare-sort |{s}| 0)");
        }
        for (f, (dom, range)) in &self.funs {
            let _ = write!(out, "(declare-fun |{f}| (");
            for (i, d) in dom.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{d}");
            }
            let _ = writeln!(out, ") {range})");
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node() {
            Node::Const(n, _) => write!(f, "|{n}|"),
            Node::IntLit(v) if *v < 0 => write!(f, "(- {})", v.unsigned_abs()),
            Node::IntLit(v) => write!(f, "{v}"),
            Node::RealLit(n, d) => {
                let num = if *n < 0 { format!("(- {}.0)", n.unsigned_abs()) } else { format!("{n}.0") };
                if *d == 1 {
                    write!(f, "{num}")
                } else {
                    write!(f, "(/ {num} {d}.0)")
                }
            }
            Node::BoolLit(b) => write!(f, "{b}"),
            Node::App(name, args, _) => {
                if args.is_empty() {
                    return write!(f, "|{name}|");
                }
                write!(f, "(|{name}|")?;
                for a in args {
                    write!(f, " {a}")?;
                }
                f.write_str(")")
            }
            Node::Op(op, args, _) => {
                write!(f, "({}", op.smt())?;
                for a in args {
                    write!(f, " {a}")?;
                }
                f.write_str(")")
            }
            Node::Quant(q) => {
                write!(f, "({} (", if q.forall { "forall" } else { "exists" })?;
                for (v, s) in &q.vars {
                    write!(f, "(|{v}| {s})")?;
                }
                write!(f, ") (! {}", q.body)?;
                for p in &q.patterns {
                    f.write_str(" :pattern (")?;
                    for (i, t) in p.iter().enumerate() {
                        if i > 0 {
                            f.write_str(" ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    f.write_str(")")?;
                }
                write!(f, " :qid |{}|))", q.qid)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_smtlib_with_quoted_symbols() {
        let x = Term::konst("x@1", Sort::Int);
        let t = x.add(&Term::int(-2)).le(&Term::int(3));
        assert_eq!(t.to_string(), "(<= (+ |x@1| (- 2)) 3)");
    }

    /// Folding at the edge of i128: exact where the result fits, and the
    /// operation itself (never a wrapped or clamped literal) where it does not.
    #[test]
    fn folding_is_checked_at_the_overflow_edge() {
        let (max, min) = (Term::int(i128::MAX), Term::int(i128::MIN));
        assert_eq!(Term::int(i128::MAX - 1).add(&Term::int(1)), max);
        assert_eq!(max.add(&Term::int(1)).to_string(), format!("(+ {} 1)", i128::MAX));
        assert_eq!(min.sub(&Term::int(1)).to_string(), format!("(- (- {}) 1)", i128::MIN.unsigned_abs()));
        assert_eq!(max.mul(&Term::int(2)).to_string(), format!("(* {} 2)", i128::MAX));
        assert_eq!(min.neg().to_string(), format!("(- (- {}))", i128::MIN.unsigned_abs()));
        assert_eq!(Term::int(i128::from(i64::MAX)).add(&Term::int(1)), Term::int(1 << 63));
        assert!(max.gt(&Term::int(i128::MAX - 1)).is_true());
    }

    /// `nat` is exact for every u128: a literal up to `i128::MAX`, beyond it a sum.
    #[test]
    fn nat_is_exact() {
        assert_eq!(Term::nat(u128::from(u64::MAX) + 1), Term::int(1 << 64));
        assert_eq!(Term::nat(i128::MAX.unsigned_abs()), Term::int(i128::MAX));
        assert_eq!(Term::nat(u128::MAX).to_string(), format!("(+ (* 2 {}) 1)", i128::MAX));
        assert_eq!(Term::nat(u128::MAX - 1).to_string(), format!("(+ (* 2 {}) 0)", i128::MAX));
    }

    #[test]
    fn substitution_resimplifies() {
        let i = Term::konst("i", Sort::Int);
        let t = i.eq(&Term::int(3)).and2(&i.lt(&Term::int(5)));
        let mut m = HashMap::new();
        m.insert(Rc::from("i"), Term::int(3));
        assert!(t.subst(&m).is_true());
    }

    #[test]
    fn declarations_skip_bound_variables() {
        let j = Term::konst("j", Sort::Int);
        let h = Term::app("H", vec![Term::konst("a", Sort::named("Arr")), j.clone()], Sort::Int);
        let q = Term::forall(vec![(Rc::from("j"), Sort::Int)], vec![vec![h.clone()]], h.ge(&Term::int(0)), "q");
        let mut d = Decls::default();
        q.collect_decls(&mut d);
        assert!(d.funs.contains_key("a") && d.funs.contains_key("H") && !d.funs.contains_key("j"));
        assert!(d.sorts.contains("Arr"));
    }

    /// Z3 rejects a quantifier whose pattern holds an `ite` (loop-unrolled
    /// Blelloch: `output[N*tid + N - 1 - N/2]`, with PVL's truncating `/` an
    /// `ite`); such patterns are dropped, arithmetic ones are kept.
    #[test]
    fn patterns_z3_rejects_are_dropped() {
        let vars = vec![(Rc::from("j"), Sort::Int)];
        let j = Term::konst("j", Sort::Int);
        let n = Term::konst("n", Sort::Int);
        let h = |i: Term| Term::app("H", vec![i], Sort::Int);
        let arith = h(j.mul(&n).add(&Term::int(1)));
        let q = Term::forall(vars.clone(), vec![vec![arith.clone()]], arith.ge(&Term::int(0)), "q");
        let Node::Quant(kept) = q.node() else { panic!() };
        assert_eq!(kept.patterns, vec![vec![arith]]);

        let half = n.ge(&Term::int(0)).ite(&n.ediv(&Term::int(2)), &n.neg().ediv(&Term::int(2)).neg());
        let with_ite = h(j.sub(&half));
        let q = Term::forall(vars.clone(), vec![vec![with_ite.clone()]], with_ite.ge(&Term::int(0)), "q");
        let Node::Quant(dropped) = q.node() else { panic!() };
        assert!(dropped.patterns.is_empty());

        // The same through a substitution of the constant `m`.
        let m = Term::konst("m", Sort::Int);
        let q = Term::forall(vars.clone(), vec![vec![h(j.sub(&m))]], h(j.sub(&m)).ge(&Term::int(0)), "q");
        let q = q.subst(&HashMap::from([(Rc::from("m"), half)]));
        let Node::Quant(dropped) = q.node() else { panic!() };
        assert!(dropped.patterns.is_empty());

        // A bare variable, or a pattern missing a variable, is no pattern either.
        assert!(!j.is_pattern_term(&vars));
        let two = vec![(Rc::from("j"), Sort::Int), (Rc::from("k"), Sort::Int)];
        let q = Term::forall(two, vec![vec![h(j.clone())]], h(j.clone()).ge(&Term::int(0)), "q");
        let Node::Quant(partial) = q.node() else { panic!() };
        assert!(partial.patterns.is_empty());
    }
}
