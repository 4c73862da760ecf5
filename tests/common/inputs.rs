//! Seeded inputs that meet a method's precondition, for runs in `alpine::interp`:
//! `tests/optimise_corpus.rs` runs original and optimised methods on them and
//! compares the final states; `tests/verified_runs_clean.rs` runs verified
//! methods on them with contracts checked.
//!
//! A draw picks a size, integers from a pool of small values and the contract's
//! literals ([`pool`]), scalars first (a precondition over scalars alone rejects a
//! draw before arrays are built), then makes the precondition's correspondences
//! hold ([`correspond`]), and keeps the draw only when every precondition clause
//! evaluates to true.
#![allow(dead_code)]

use alpine::interp::{Interp, Value};

/// Every field of `p`: (class, field, type).
fn fields_of(p: &alpine::ast::Program) -> Vec<(String, alpine::ast::Name, alpine::ast::Type)> {
    p.classes
        .iter()
        .flat_map(|c| {
            c.members.iter().filter_map(move |m| match m {
                alpine::ast::Member::Field(fd) => Some((c.name.to_string(), fd.name.name.clone(), fd.ty.clone())),
                _ => None,
            })
        })
        .collect()
}

/// The integers inputs are drawn from: small ones, and each integer literal of the
/// contract with its neighbours (`n == 1024`, `tcount >= 100`).
pub fn pool(m: &alpine::ast::Method) -> Vec<i64> {
    let mut v = vec![0, 1, 2, 3, 5];
    for e in m.contract.exprs() {
        let text = alpine::printer::print_expr(e);
        for w in text.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()) {
            if let Ok(n) = w.parse::<i64>() {
                if n <= 4096 {
                    v.extend([n - 1, n, n + 1]);
                }
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Draws values of a type: integers from the pool (or the run's size), arrays
/// and sequences of the run's size, objects with every field drawn.
struct Gen {
    rng: fastrand::Rng,
    size: usize,
    pool: Vec<i64>,
    /// Every field of the program: (class, field, type).
    fields: Vec<(String, alpine::ast::Name, alpine::ast::Type)>,
    /// How many objects the value being drawn is nested in.
    depth: usize,
}

/// How deep drawn objects nest (see [`Gen::value`]).
const MAX_OBJECT_DEPTH: usize = 3;

impl Gen {
    fn value(&mut self, it: &Interp, t: &alpine::ast::Type) -> Value {
        use alpine::ast::TypeKind;
        use std::cell::RefCell;
        use std::rc::Rc;
        match &t.kind {
            TypeKind::Int => Value::Int(if self.rng.bool() { self.size as i64 } else { self.pool[self.rng.usize(..self.pool.len())] }),
            TypeKind::Boolean => Value::Bool(self.rng.usize(..self.size.max(2)) == 0),
            TypeKind::Array(e, _) => Value::Array(Rc::new(RefCell::new((0..self.size).map(|_| self.elem(it, e)).collect()))),
            TypeKind::Seq(e) => Value::Seq(Rc::new((0..self.size).map(|_| self.elem(it, e)).collect())),
            // Objects nest at most `MAX_OBJECT_DEPTH` deep, then `null`: a class
            // with a field of its own type (`Node next;`) has no finite draw.
            TypeKind::Class(_) if self.depth >= MAX_OBJECT_DEPTH => Value::Null,
            TypeKind::Class(c) => {
                let o = it.new_object(c.as_str());
                self.depth += 1;
                self.fill(it, &o);
                self.depth -= 1;
                o
            }
            _ => Value::Null,
        }
    }
    fn elem(&mut self, it: &Interp, t: &alpine::ast::Type) -> Value {
        match t.kind {
            alpine::ast::TypeKind::Int => Value::Int(self.rng.i64(-5..=5)),
            _ => self.value(it, t),
        }
    }
    /// Gives an object's fields generated values (by the declared field types).
    fn fill(&mut self, it: &Interp, o: &Value) {
        let Value::Obj(obj) = o else { return };
        let class = obj.borrow().class.clone();
        let fields: Vec<_> = self.fields.iter().filter(|(c, _, _)| c.as_str() == &*class).map(|(_, n, t)| (n.clone(), t.clone())).collect();
        for (name, ty) in fields {
            let v = self.value(it, &ty);
            obj.borrow_mut().fields.insert(name, v);
        }
    }
}

/// Makes generated arguments meet the precondition's element-wise correspondences
/// `(\forall int i; guard; X[i] == Y[i])` where one side's base is a sequence
/// parameter `s` (set to the other side's contents) or `s[0]` of a sequence of
/// sequences (set to the one-element sequence of them), `(\forall int i; guard;
/// A[i] == e)` for an array parameter `A` and a scalar `e` without `i` (every
/// cell set to `e`), and plain definitions
/// `p == e` (or `e == p`) of an int or sequence parameter (`length == 1`,
/// `input.length == size`). A few passes, so that chains (`input` →
/// `inp_seq_cur` → `inp_seq_all[0]`) settle. Whether the result meets the whole
/// precondition is still checked by the caller.
pub fn correspond(it: &mut Interp, m: &alpine::ast::Method, this: Option<Value>, args: &mut [Value], pres: &[&alpine::ast::Expr]) {
    use alpine::ast::{BinOp, ExprKind, QuantKind, TypeKind};
    use std::rc::Rc;
    let seq_param = |e: &alpine::ast::Expr| match &e.kind {
        ExprKind::Var(v) => m.params.iter().position(|p| p.name.name == v.name && matches!(p.ty.kind, TypeKind::Seq(_))),
        _ => None,
    };
    let as_seq = |v: Value| match v {
        Value::Array(a) => Some(Value::Seq(Rc::new(a.borrow().clone()))),
        Value::Seq(s) => Some(Value::Seq(s)),
        _ => None,
    };
    for _pass in 0..3 {
        for e in pres.iter().flat_map(|e| alpine::transforms::loops::conjuncts(e)) {
            match &e.kind {
                ExprKind::Quant { kind: QuantKind::Forall, binder, body, .. } => {
                    let ExprKind::Binary { op: BinOp::Eq, lhs, rhs } = &body.kind else {
                        continue;
                    };
                    fn at_binder<'e>(x: &'e alpine::ast::Expr, binder: &str) -> Option<&'e alpine::ast::Expr> {
                        match &x.kind {
                            ExprKind::Index { base, index } if matches!(&index.kind, ExprKind::Var(v) if v.as_str() == binder) => {
                                Some(base)
                            }
                            _ => None,
                        }
                    }
                    let b = binder.name.as_str();
                    // `X[i] == e` for an array parameter `X` and a scalar `e`
                    // without `i`: every cell of `X` set to `e`.
                    for (cell, value) in [(lhs, rhs), (rhs, lhs)] {
                        let Some(ExprKind::Var(x)) = at_binder(cell, b).map(|x| &x.kind) else {
                            continue;
                        };
                        let reads = alpine::transforms::loops::Reads::of(value);
                        if reads.heap || reads.vars.iter().any(|v| v.as_ref() == b) {
                            continue;
                        }
                        let Some(k) = m.params.iter().position(|p| p.name.name == x.name) else {
                            continue;
                        };
                        if let (Value::Array(a), Ok(v)) = (&args[k], it.eval_in(m, this.clone(), args, value)) {
                            a.borrow_mut().iter_mut().for_each(|c| *c = v.clone());
                        }
                    }
                    let (Some(lb), Some(rb)) = (at_binder(lhs, b), at_binder(rhs, b)) else {
                        continue;
                    };
                    for (target, source) in [(lb, rb), (rb, lb)] {
                        // `s[0]` of a `seq<seq<T>>` parameter `s`.
                        let nested = match &target.kind {
                            ExprKind::Index { base, index } if matches!(index.kind, ExprKind::IntLit(0)) => seq_param(base),
                            _ => None,
                        };
                        let Some(k) = seq_param(target).or(nested) else {
                            continue;
                        };
                        let Some(v) = it.eval_in(m, this.clone(), args, source).ok().and_then(as_seq) else {
                            continue;
                        };
                        args[k] = if nested.is_some() { Value::Seq(Rc::new(vec![v])) } else { v };
                        break;
                    }
                }
                ExprKind::Binary { op: BinOp::Eq, lhs, rhs } => {
                    // `p == e` or `e == p` for a parameter `p` of type int or seq.
                    for (target, source) in [(lhs, rhs), (rhs, lhs)] {
                        let ExprKind::Var(v) = &target.kind else {
                            continue;
                        };
                        let Some(k) = m.params.iter().position(|p| p.name.name == v.name) else {
                            continue;
                        };
                        match (&m.params[k].ty.kind, it.eval_in(m, this.clone(), args, source)) {
                            (TypeKind::Int, Ok(x @ Value::Int(_))) | (TypeKind::Seq(_), Ok(x @ Value::Seq(_))) => {
                                args[k] = x;
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Arguments (and `this`, for an instance method) for `class.m` drawn from
/// `seed`, or `None` when the draw does not meet the precondition (as far as `it`
/// can evaluate it: every clause must evaluate to true). Arrays and sequences
/// have at most `max_size` elements, integers come from `pool`.
pub fn draw(
    it: &mut Interp,
    p: &alpine::ast::Program,
    class: &str,
    m: &alpine::ast::Method,
    seed: u64,
    pool: &[i64],
    max_size: usize,
) -> Option<(Option<Value>, Vec<Value>)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let size_choices: Vec<i64> = pool.iter().copied().filter(|v| (0..=max_size as i64).contains(v)).collect();
    let size = size_choices[rng.usize(..size_choices.len())] as usize;
    let mut g = Gen { rng, size, pool: pool.to_vec(), fields: fields_of(p), depth: 0 };
    // Scalars first: preconditions over scalar parameters alone reject an input
    // before its arrays and sequences are built (Reach needs n == 1024).
    let scalar = |t: &alpine::ast::Type| matches!(t.kind, alpine::ast::TypeKind::Int | alpine::ast::TypeKind::Boolean);
    let mut args: Vec<Value> = m.params.iter().map(|p| if scalar(&p.ty) { g.value(it, &p.ty) } else { Value::Null }).collect();
    let scalars: std::collections::HashSet<&str> = m.params.iter().filter(|p| scalar(&p.ty)).map(|p| p.name.as_str()).collect();
    let pres: Vec<&alpine::ast::Expr> = m
        .contract
        .clauses
        .iter()
        .filter_map(|c| match &c.kind {
            alpine::ast::ClauseKind::Requires(e) | alpine::ast::ClauseKind::Context(e) | alpine::ast::ClauseKind::ContextEverywhere(e) => {
                Some(e)
            }
            _ => None,
        })
        .collect();
    // Scalar definitions (`length == 1`) first, so the filter below keeps them.
    correspond(it, m, None, &mut args, &pres);
    for e in pres.iter().flat_map(|e| alpine::transforms::loops::conjuncts(e)) {
        let reads = alpine::transforms::loops::Reads::of(e);
        if !reads.heap && reads.vars.iter().all(|v| scalars.contains(v.as_ref())) && it.holds(class, m, None, &args, e) != Ok(true) {
            return None;
        }
    }
    for (a, p) in args.iter_mut().zip(&m.params) {
        if !scalar(&p.ty) {
            *a = g.value(it, &p.ty);
        }
    }
    // Odd seeds build `this` with the class's constructor when it has one
    // without parameters (e.g. a `Main` whose constructor fills the queues its
    // threads pass values through); the others fill its fields at random.
    let nullary = p.classes.iter().filter(|c| c.name.as_str() == class).flat_map(|c| &c.members).any(
        |x| matches!(x, alpine::ast::Member::Method(k) if k.is_constructor() && k.params.is_empty() && !matches!(k.body, alpine::ast::MethodBody::Abstract)),
    );
    let this = if seed % 2 == 1 && nullary && !m.modifiers.is_static && !m.is_constructor() {
        it.construct(class, Vec::new()).ok()?
    } else {
        let this = it.new_object(class);
        g.fill(it, &this);
        this
    };
    let this = (!m.modifiers.is_static).then_some(this);
    correspond(it, m, this.clone(), &mut args, &pres);
    for e in &pres {
        if it.holds(class, m, this.clone(), &args, e) != Ok(true) {
            return None;
        }
    }
    Some((this, args))
}
