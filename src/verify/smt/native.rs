//! [`Term`]s built directly as Z3 ASTs through the C API.
//!
//! The backend used to print every batch of terms as SMT-LIB and hand the text
//! to `Z3_solver_from_string`. That call builds a fresh SMT-LIB command context
//! each time (with the declarations of every theory), so its cost is paid per
//! batch, and a unit sends one batch per query: on the median corpus file Z3 spent
//! more time parsing (75 ms for 90 KB in 82 batches, `motivational_example/0`)
//! than checking (55 ms). Building the same ASTs through the API costs a few
//! hash lookups per term node.
//!
//! The ASTs are made as Z3's SMT-LIB parser makes them for the printed text, in
//! the same order, so that Z3 sees the same problem with the same term ids, and so
//! its search and its `rlimit` counts are those of the printed text (which
//! `--dump-smt` still writes):
//!
//! * per batch, the uninterpreted sorts and then the function symbols are
//!   declared in the order of the printed `declare-*` lines ([`Decls`]), then each
//!   assertion is built bottom-up, left to right (Z3 shares equal nodes, so a node
//!   built twice is the same node);
//! * a negative literal is a unary minus applied to the literal (the parser reads
//!   `(- 2)` so), a fraction is a `/` of two real literals;
//! * a quantifier's variables are de Bruijn indices (the last variable of the
//!   innermost quantifier is index 0), its weight is 1 (the parser's default),
//!   its `qid` the given one and its skolem id the null symbol.
//!
//! A term Z3 refuses (an ill-sorted application) makes the batch fail with Z3's
//! message; nothing of that batch is asserted.

use super::term::{Decls, Node, Op, Sort, Term};
use std::collections::HashMap;
use std::ffi::{c_uint, c_void, CString};
use std::rc::Rc;
use z3_sys::*;

/// `Z3_mk_quantifier_ex` with nullable symbols: the SMT-LIB parser gives
/// quantifiers the null skolem id, which `z3-sys` cannot pass (its `Z3_symbol`
/// is a non-null pointer).
mod raw {
    use std::ffi::{c_uint, c_void};
    #[allow(clashing_extern_declarations)]
    extern "C" {
        pub fn Z3_mk_quantifier_ex(
            c: *mut c_void,
            is_forall: bool,
            weight: c_uint,
            quantifier_id: *mut c_void,
            skolem_id: *mut c_void,
            num_patterns: c_uint,
            patterns: *const *mut c_void,
            num_no_patterns: c_uint,
            no_patterns: *const *mut c_void,
            num_decls: c_uint,
            sorts: *const *mut c_void,
            decl_names: *const *mut c_void,
            body: *mut c_void,
        ) -> *mut c_void;
    }
}

/// A declared function symbol: argument sorts, result sort, and the Z3 declaration.
type Signature = (Vec<Sort>, Sort, Z3_func_decl);

/// Builds Z3 ASTs for the terms of one solver, sharing what it built before.
///
/// Every AST it keeps holds a reference (`Z3_inc_ref`), released on drop; the
/// `z3::Context` it holds keeps the context alive until then.
pub struct NativeTerms {
    _ctx: z3::Context,
    c: Z3_context,
    symbols: HashMap<Rc<str>, Z3_symbol>,
    sorts: HashMap<Sort, Z3_sort>,
    /// Function symbols by name; Z3 distinguishes symbols of one name by their
    /// signature, as the printed declarations would.
    funs: HashMap<Rc<str>, Vec<Signature>>,
    /// The AST of each closed term built so far. The `Term` is kept so that its
    /// node, whose address is the key, is not freed and its address reused.
    closed: HashMap<*const Node, (Term, Z3_ast)>,
    /// The ASTs this holds a reference to.
    owned: Vec<Z3_ast>,
    /// `div` and `mod` by a symbolic divisor become uninterpreted functions
    /// (the shadow solver of [`super::abstraction`]).
    abstract_division: bool,
}

/// The variables bound around a term being built: outermost first.
struct Binders {
    vars: Vec<(Rc<str>, Z3_sort)>,
    /// The ASTs built under the innermost quantifier (their de Bruijn indices
    /// depend on it), one map per open quantifier.
    memo: Vec<HashMap<*const Node, Z3_ast>>,
}

impl NativeTerms {
    pub fn new(ctx: &z3::Context) -> NativeTerms {
        NativeTerms {
            _ctx: ctx.clone(),
            c: ctx.get_z3_context(),
            symbols: HashMap::new(),
            sorts: HashMap::new(),
            funs: HashMap::new(),
            closed: HashMap::new(),
            owned: Vec::new(),
            abstract_division: false,
        }
    }

    /// As [`NativeTerms::new`], but `div` and `mod` by a divisor that is not a
    /// literal are built as the uninterpreted `alpine.abs.div` and
    /// `alpine.abs.mod` (see [`super::abstraction`]).
    pub fn abstracting(ctx: &z3::Context) -> NativeTerms {
        let mut n = NativeTerms::new(ctx);
        n.abstract_division = true;
        n
    }

    /// The ASTs of a batch of assertions, after declaring its symbols in the
    /// order of the printed batch. `Err`: Z3's message for the first term it
    /// refused.
    pub fn batch(&mut self, terms: &[Term]) -> Result<Vec<Z3_ast>, String> {
        let mut decls = Decls::default();
        for t in terms {
            t.collect_decls(&mut decls);
        }
        let mut sorts: Vec<&Rc<str>> = decls.sorts.iter().collect();
        sorts.sort();
        for s in sorts {
            self.sort(&Sort::Named(s.clone()))?;
        }
        for (f, (dom, range)) in &decls.funs {
            self.fun(f, dom, range)?;
        }
        terms.iter().map(|t| self.closed_term(t)).collect()
    }

    fn error(&self, what: &str) -> String {
        // SAFETY: `self.c` is a live context (held by `_ctx`) on this thread.
        let code = unsafe { Z3_get_error_code(self.c) };
        let msg = unsafe { Z3_get_error_msg(self.c, code) };
        let msg = if msg.is_null() {
            format!("{code:?}")
        } else {
            // SAFETY: Z3 returns a NUL-terminated string it owns.
            unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy().into_owned()
        };
        format!("Z3 rejected {what}: {msg}")
    }

    fn keep(&mut self, a: Z3_ast) -> Z3_ast {
        // SAFETY: `a` was just returned by Z3 for this context.
        unsafe { Z3_inc_ref(self.c, a) };
        self.owned.push(a);
        a
    }

    fn symbol(&mut self, name: &Rc<str>) -> Result<Z3_symbol, String> {
        if let Some(s) = self.symbols.get(name) {
            return Ok(*s);
        }
        let text = CString::new(name.as_bytes()).map_err(|_| format!("Z3 rejected the symbol `{name}` (a NUL byte)"))?;
        // SAFETY: live context; Z3 copies the string into its symbol table.
        let s = unsafe { Z3_mk_string_symbol(self.c, text.as_ptr()) }.ok_or_else(|| self.error("a symbol"))?;
        self.symbols.insert(name.clone(), s);
        Ok(s)
    }

    fn sort(&mut self, s: &Sort) -> Result<Z3_sort, String> {
        if let Some(z) = self.sorts.get(s) {
            return Ok(*z);
        }
        // SAFETY: live context (here and in every call below).
        let z = match s {
            Sort::Bool => unsafe { Z3_mk_bool_sort(self.c) },
            Sort::Int => unsafe { Z3_mk_int_sort(self.c) },
            Sort::Real => unsafe { Z3_mk_real_sort(self.c) },
            Sort::Named(n) => {
                let sym = self.symbol(n)?;
                unsafe { Z3_mk_uninterpreted_sort(self.c, sym) }
            }
        }
        .ok_or_else(|| self.error(&format!("the sort {s}")))?;
        let a = unsafe { Z3_sort_to_ast(self.c, z) }.ok_or_else(|| self.error("a sort"))?;
        self.keep(a);
        self.sorts.insert(s.clone(), z);
        Ok(z)
    }

    fn fun(&mut self, name: &Rc<str>, dom: &[Sort], range: &Sort) -> Result<Z3_func_decl, String> {
        if let Some(found) = self.funs.get(name).and_then(|v| v.iter().find(|(d, r, _)| d == dom && r == range)) {
            return Ok(found.2);
        }
        let sym = self.symbol(name)?;
        let zdom = dom.iter().map(|s| self.sort(s)).collect::<Result<Vec<_>, _>>()?;
        let zrange = self.sort(range)?;
        let f = unsafe { Z3_mk_func_decl(self.c, sym, zdom.len() as c_uint, zdom.as_ptr(), zrange) }
            .ok_or_else(|| self.error(&format!("the declaration of `{name}`")))?;
        let a = unsafe { Z3_func_decl_to_ast(self.c, f) }.ok_or_else(|| self.error("a declaration"))?;
        self.keep(a);
        self.funs.entry(name.clone()).or_default().push((dom.to_vec(), range.clone(), f));
        Ok(f)
    }

    fn closed_term(&mut self, t: &Term) -> Result<Z3_ast, String> {
        let mut binders = Binders { vars: Vec::new(), memo: Vec::new() };
        self.term(t, &mut binders)
    }

    fn term(&mut self, t: &Term, b: &mut Binders) -> Result<Z3_ast, String> {
        let key = Rc::as_ptr(&t.0);
        let found = match b.memo.last() {
            None => self.closed.get(&key).map(|e| e.1),
            Some(m) => m.get(&key).copied(),
        };
        if let Some(a) = found {
            return Ok(a);
        }
        let a = self.build(t, b)?;
        let a = self.keep(a);
        match b.memo.last_mut() {
            None => {
                self.closed.insert(key, (t.clone(), a));
            }
            Some(m) => {
                m.insert(key, a);
            }
        }
        Ok(a)
    }

    fn build(&mut self, t: &Term, b: &mut Binders) -> Result<Z3_ast, String> {
        let c = self.c;
        let r = match t.node() {
            Node::Const(n, s) => {
                if let Some(pos) = b.vars.iter().rposition(|(v, _)| v == n) {
                    let index = (b.vars.len() - 1 - pos) as c_uint;
                    unsafe { Z3_mk_bound(c, index, b.vars[pos].1) }
                } else {
                    let f = self.fun(n, &[], s)?;
                    unsafe { Z3_mk_app(c, f, 0, std::ptr::null()) }
                }
            }
            Node::IntLit(v) => {
                let int = self.sort(&Sort::Int)?;
                let mag = v.unsigned_abs();
                let lit = match i64::try_from(mag) {
                    Ok(m) => unsafe { Z3_mk_int64(c, m, int) }.ok_or_else(|| self.error("a numeral"))?,
                    // `i64::MIN`'s magnitude does not fit an i64: its digits.
                    Err(_) => self.numeral(&mag.to_string(), int, false)?,
                };
                if *v < 0 {
                    let lit = self.keep(lit);
                    unsafe { Z3_mk_unary_minus(c, lit) }
                } else {
                    Some(lit)
                }
            }
            Node::RealLit(n, d) => {
                let real = self.sort(&Sort::Real)?;
                let num = self.numeral(&n.unsigned_abs().to_string(), real, *n < 0)?;
                if *d == 1 {
                    Some(num)
                } else {
                    let den = self.numeral(&d.to_string(), real, false)?;
                    unsafe { Z3_mk_div(c, num, den) }
                }
            }
            Node::BoolLit(true) => unsafe { Z3_mk_true(c) },
            Node::BoolLit(false) => unsafe { Z3_mk_false(c) },
            Node::App(f, args, s) => {
                let zargs = self.args(args, b)?;
                let dom: Vec<Sort> = args.iter().map(Term::sort).collect();
                let f = self.fun(f, &dom, s)?;
                unsafe { Z3_mk_app(c, f, zargs.len() as c_uint, zargs.as_ptr()) }
            }
            Node::Op(op, args, _) if self.abstract_division && super::abstraction::is_symbolic_division(*op, args) => {
                let z = self.args(args, b)?;
                let name: Rc<str> = Rc::from(if *op == Op::Div { "alpine.abs.div" } else { "alpine.abs.mod" });
                let f = self.fun(&name, &[Sort::Int, Sort::Int], &Sort::Int)?;
                unsafe { Z3_mk_app(c, f, 2, z.as_ptr()) }
            }
            Node::Op(op, args, _) => {
                let z = self.args(args, b)?;
                self.op(*op, &z)?
            }
            Node::Quant(q) => {
                let mut vars = Vec::with_capacity(q.vars.len());
                for (v, s) in &q.vars {
                    let zs = self.sort(s)?;
                    vars.push((v.clone(), zs));
                }
                let outer = b.vars.len();
                b.vars.extend(vars.iter().cloned());
                b.memo.push(HashMap::new());
                let built = (|| {
                    let body = self.term(&q.body, b)?;
                    let mut pats = Vec::with_capacity(q.patterns.len());
                    for p in &q.patterns {
                        let terms = self.args(p, b)?;
                        let pat = unsafe { Z3_mk_pattern(c, terms.len() as c_uint, terms.as_ptr()) }
                            .ok_or_else(|| self.error(&format!("a pattern of `{}`", q.qid)))?;
                        // Kept: the next call into Z3 may free an unreferenced result.
                        let as_ast = unsafe { Z3_pattern_to_ast(c, pat) }.ok_or_else(|| self.error("a pattern"))?;
                        self.keep(as_ast);
                        pats.push(pat);
                    }
                    Ok::<_, String>((body, pats))
                })();
                b.memo.pop();
                b.vars.truncate(outer);
                let (body, pats) = built?;
                let mut names = Vec::with_capacity(vars.len());
                for (v, _) in &vars {
                    names.push(self.symbol(v)?.as_ptr() as *mut c_void);
                }
                let sorts: Vec<*mut c_void> = vars.iter().map(|(_, s)| s.as_ptr() as *mut c_void).collect();
                let pats: Vec<*mut c_void> = pats.iter().map(|p| p.as_ptr() as *mut c_void).collect();
                let qid = self.symbol(&Rc::from(q.qid.as_str()))?;
                // SAFETY: every pointer is a live object of this context (or the
                // null symbol, which Z3 accepts for the skolem id).
                let r = unsafe {
                    raw::Z3_mk_quantifier_ex(
                        c.as_ptr() as *mut c_void,
                        q.forall,
                        1,
                        qid.as_ptr() as *mut c_void,
                        std::ptr::null_mut(),
                        pats.len() as c_uint,
                        pats.as_ptr(),
                        0,
                        std::ptr::null(),
                        sorts.len() as c_uint,
                        sorts.as_ptr(),
                        names.as_ptr(),
                        body.as_ptr() as *mut c_void,
                    )
                };
                std::ptr::NonNull::new(r as *mut _Z3_ast)
            }
        };
        r.ok_or_else(|| self.error(&format!("the term `{t}`")))
    }

    fn args(&mut self, args: &[Term], b: &mut Binders) -> Result<Vec<Z3_ast>, String> {
        args.iter().map(|a| self.term(a, b)).collect()
    }

    /// A numeral of sort `s` from its decimal digits, negated as the parser
    /// reads `(- N)`.
    fn numeral(&mut self, digits: &str, s: Z3_sort, negative: bool) -> Result<Z3_ast, String> {
        let text = CString::new(digits).expect("digits");
        let lit = unsafe { Z3_mk_numeral(self.c, text.as_ptr(), s) }.ok_or_else(|| self.error("a numeral"))?;
        let lit = self.keep(lit);
        if !negative {
            return Ok(lit);
        }
        let neg = unsafe { Z3_mk_unary_minus(self.c, lit) }.ok_or_else(|| self.error("a numeral"))?;
        Ok(self.keep(neg))
    }

    fn op(&mut self, op: Op, z: &[Z3_ast]) -> Result<Option<Z3_ast>, String> {
        let c = self.c;
        let n = z.len() as c_uint;
        let p = z.as_ptr();
        // Operators the parser reads with other arities (chained `=`, `=>`,
        // `<`, …) are never built by the encoder; refuse rather than guess.
        let arity = |k: usize| if z.len() == k { Ok(()) } else { Err(format!("Z3 rejected `{}` with {} arguments", op.smt(), z.len())) };
        // SAFETY: live context; `z` holds live ASTs of it.
        Ok(unsafe {
            match op {
                Op::Not => arity(1).map(|_| Z3_mk_not(c, z[0]))?,
                Op::And => Z3_mk_and(c, n, p),
                Op::Or => Z3_mk_or(c, n, p),
                Op::Implies => arity(2).map(|_| Z3_mk_implies(c, z[0], z[1]))?,
                Op::Eq => arity(2).map(|_| Z3_mk_eq(c, z[0], z[1]))?,
                Op::Ite => arity(3).map(|_| Z3_mk_ite(c, z[0], z[1], z[2]))?,
                Op::Add => Z3_mk_add(c, n, p),
                Op::Sub if z.len() == 1 => Z3_mk_unary_minus(c, z[0]),
                Op::Sub => Z3_mk_sub(c, n, p),
                Op::Neg => arity(1).map(|_| Z3_mk_unary_minus(c, z[0]))?,
                Op::Mul => Z3_mk_mul(c, n, p),
                Op::Div | Op::RealDiv => arity(2).map(|_| Z3_mk_div(c, z[0], z[1]))?,
                Op::Mod => arity(2).map(|_| Z3_mk_mod(c, z[0], z[1]))?,
                Op::Lt => arity(2).map(|_| Z3_mk_lt(c, z[0], z[1]))?,
                Op::Le => arity(2).map(|_| Z3_mk_le(c, z[0], z[1]))?,
                Op::ToReal => arity(1).map(|_| Z3_mk_int2real(c, z[0]))?,
            }
        })
    }
}

impl Drop for NativeTerms {
    fn drop(&mut self) {
        for a in self.owned.drain(..) {
            // SAFETY: each was `Z3_inc_ref`ed once by `keep`; the context is
            // still alive (`_ctx` is dropped after this).
            unsafe { Z3_dec_ref(self.c, a) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::solver::{configure_globals, Outcome, SmtSolver};
    use super::*;

    /// One query, as the encoder makes it: the negated goal under a fresh
    /// constant, in a scope of its own.
    fn proves(s: &mut SmtSolver, goal: Term) -> bool {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("chk{}", NEXT.fetch_add(1, Ordering::Relaxed));
        s.open_query_scope().unwrap();
        s.assert(Term::konst(&name, Sort::Bool).implies(&goal.not()));
        matches!(s.check(&[name.as_str()]).unwrap(), Outcome::Proved)
    }

    fn var(n: &str) -> (Rc<str>, Sort) {
        (Rc::from(n), Sort::Int)
    }

    /// De Bruijn indices: in `∀x. ∀y. f(x, y) = x - y` the two variables must
    /// not be swapped (the negative twin fails if they were).
    #[test]
    fn nested_quantifier_variables_keep_their_order() {
        configure_globals();
        let (x, y) = (Term::konst("x", Sort::Int), Term::konst("y", Sort::Int));
        let f = |a: &Term, b: &Term| Term::app("f", vec![a.clone(), b.clone()], Sort::Int);
        let inner = Term::forall(vec![var("y")], vec![vec![f(&x, &y)]], f(&x, &y).eq(&x.sub(&y)), "inner");
        let ax = Term::forall(vec![var("x")], vec![], inner, "outer");
        let mut s = SmtSolver::new(2000, 0, false);
        s.assert(ax);
        assert!(proves(&mut s, f(&Term::int(3), &Term::int(1)).eq(&Term::int(2))));
        assert!(!proves(&mut s, f(&Term::int(3), &Term::int(1)).eq(&Term::int(-2))));
    }

    /// A bound variable shadows a free constant of the same name inside its
    /// quantifier only; the same term node means the constant outside.
    #[test]
    fn bound_variables_shadow_constants_only_inside() {
        configure_globals();
        let x = Term::konst("x", Sort::Int);
        let g = |a: &Term| Term::app("g", vec![a.clone()], Sort::Int);
        let mut s = SmtSolver::new(2000, 0, false);
        s.assert(x.eq(&Term::int(5)));
        s.assert(Term::forall(vec![var("x")], vec![vec![g(&x)]], g(&x).gt(&x), "gx"));
        assert!(proves(&mut s, g(&Term::int(7)).gt(&Term::int(7))));
        assert!(proves(&mut s, g(&x).gt(&Term::int(5))));
        assert!(!proves(&mut s, x.eq(&Term::int(6))));
    }

    /// Literals: negative integers (also `i64::MIN`) and fractions.
    #[test]
    fn literals_mean_their_values() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let (i, r) = (Term::konst("i", Sort::Int), Term::konst("r", Sort::Real));
        s.assert(i.eq(&Term::int(i128::from(i64::MIN))));
        s.assert(r.eq(&Term::real(-3, 4)));
        assert!(proves(&mut s, i.lt(&Term::int(-9_000_000_000_000_000_000))));
        assert!(proves(&mut s, r.mul(&Term::real(4, 1)).eq(&Term::real(-3, 1))));
        assert!(!proves(&mut s, r.eq(&Term::real(3, 4))));
        assert!(!proves(&mut s, i.eq(&Term::int(i128::from(i64::MAX)))));
    }

    /// Literals beyond i64 (issue #29) reach Z3 exactly, not clamped.
    #[test]
    fn big_literals_are_exact() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let two63 = Term::int(1 << 63);
        assert!(proves(
            &mut s,
            two63.eq(&Term::konst("k", Sort::Int)).implies(&Term::konst("k", Sort::Int).gt(&Term::int(i128::from(i64::MAX))))
        ));
        let big = Term::nat(u128::MAX);
        assert!(proves(&mut s, big.eq(&Term::int(i128::MAX).mul(&Term::int(2)).add(&Term::int(1)))));
        assert!(!proves(&mut s, big.eq(&Term::int(i128::MAX))));
        // The fraction (2^63 - 1) / 2^63 is below 1, and positive.
        let r = Term::int(i128::from(i64::MAX)).real_div(&two63);
        assert!(proves(&mut s, r.lt(&Term::real(1, 1))));
        assert!(proves(&mut s, r.gt(&Term::real(0, 1))));
        assert!(!proves(&mut s, r.ge(&Term::real(1, 1))));
    }

    /// A term shared by two batches is the same Z3 term in both.
    #[test]
    fn terms_shared_across_batches() {
        configure_globals();
        let mut s = SmtSolver::new(2000, 0, false);
        let h = Term::app("h", vec![Term::konst("a", Sort::named("Ref"))], Sort::Int);
        s.assert(h.ge(&Term::int(10)));
        assert!(proves(&mut s, h.gt(&Term::int(9))));
        assert!(!proves(&mut s, h.gt(&Term::int(10))));
    }
}
