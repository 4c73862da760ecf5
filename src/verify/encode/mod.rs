//! The encoder: core IR → SMT, one proof unit at a time, checks as it goes.
//!
//! The encoding follows `docs/verifier.md` (Carbon's permission semantics with a
//! versioned state, forward execution with path literals):
//! * the heap and the permission mask are split into *families* — one per class
//!   field, one per array element type — and every change makes a new *version*
//!   of one family: a fresh function symbol with one definitional axiom whose only
//!   pattern is the new version's own application ([`state`]);
//! * a path has a Boolean *guard* constant; every assumption is asserted as
//!   `guard ⇒ fact`, definitions of fresh symbols unguarded;
//! * a check of `goal` asserts `chk ⇒ ¬goal` (skolemised) and asks Z3 for
//!   satisfiability under `[guard, chk]`; `unsat` is a proof, anything else a
//!   failure; afterwards `guard ⇒ goal` is assumed so one bug gives one error.
//!
//! Submodules: [`expr`] (expressions and their well-definedness), [`assertion`]
//! (inhale/exhale, quantified permissions), [`stmt`] (statements, loops, calls),
//! [`par`] (`par` blocks and barriers), [`functions`] (pure functions), [`heapfn`]
//! (pure functions that read the heap), [`seq`] (sequence axioms),
//! [`maps`], [`bags`], [`sets`] (map, multiset and set axioms), [`collections`] (their expressions),
//! [`triggers`] (patterns), [`state`] (heap/mask versions).

mod assertion;
pub mod bags;
mod collections;
mod expr;
/// PVL's truncating `/` and `%`, for other stages that build SMT terms (transforms).
pub use expr::{trunc_div, trunc_mod};
mod functions;
pub(crate) mod heapfn;
pub mod induction;
mod limits;
pub mod maps;
mod objects;
mod par;
mod qp;
mod qp_solve;
pub mod seq;
pub mod sets;
mod state;
mod stmt;
mod termination;
pub mod triggers;
mod unfolding;

use super::ir;
use super::smt::{Outcome, SmtSolver, Sort, Term, Unknown};
use super::{Failure, Options};
use crate::ast::{Name, Span, Ty};
use crate::diagnostics::codes;
use state::State;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What a failed check reports.
#[derive(Clone, Debug)]
pub struct Blame {
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    pub related: Vec<(Span, String)>,
}

impl Blame {
    pub fn new(code: &'static str, message: impl Into<String>, span: Span) -> Blame {
        Blame { code, message: message.into(), span, related: Vec::new() }
    }
    pub fn with_related(mut self, span: Span, msg: impl Into<String>) -> Blame {
        self.related.push((span, msg.into()));
        self
    }
}

/// Local variables: scoped names → their current value (a constant).
#[derive(Clone, Debug, Default)]
pub struct Env {
    scopes: Vec<HashMap<Name, Term>>,
    /// Only in a barrier's redistribution check: thread locals that may differ
    /// between threads, read as `symbol(iteration variables)` (name, symbol,
    /// sort, iteration variable names) instead of their current value.
    pub per_thread: Vec<(Name, Rc<str>, Sort, Vec<Name>)>,
}

impl Env {
    pub fn get(&self, n: &str) -> Option<&Term> {
        self.scopes.iter().rev().find_map(|s| s.get(n))
    }
    pub fn declare(&mut self, n: Name, t: Term) {
        if self.scopes.is_empty() {
            self.scopes.push(HashMap::new());
        }
        self.scopes.last_mut().expect("scope").insert(n, t);
    }
    /// Updates the innermost binding of `n`; false if there is none.
    pub fn set(&mut self, n: &str, t: Term) -> bool {
        for s in self.scopes.iter_mut().rev() {
            if let Some(v) = s.get_mut(n) {
                *v = t;
                return true;
            }
        }
        false
    }
    pub fn push(&mut self) {
        self.scopes.push(HashMap::new());
    }
    pub fn pop(&mut self) {
        self.scopes.pop();
    }
    pub fn depth(&self) -> usize {
        self.scopes.len()
    }
    /// Every name bound in some scope.
    pub fn names(&self) -> HashSet<Name> {
        self.scopes.iter().flat_map(|s| s.keys().cloned()).collect()
    }
    /// The scope depth at which `n` is bound.
    pub fn depth_of(&self, n: &str) -> Option<usize> {
        self.scopes.iter().rposition(|s| s.contains_key(n))
    }
    fn visible(&self) -> Vec<(Name, Term)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for s in self.scopes.iter().rev() {
            for (n, t) in s {
                if !n.starts_with('$') && seen.insert(n.clone()) {
                    out.push((n.clone(), t.clone()));
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// One path through a unit: its guard, heap/mask state and locals.
#[derive(Clone, Debug)]
pub struct Path {
    pub guard: Term,
    pub state: State,
    pub env: Env,
    /// False after `return` (and on both-branches-return joins).
    pub alive: bool,
    /// Inside a `par` thread body: env scopes below this depth belong to the
    /// host and may not be assigned.
    pub host_depth: Option<usize>,
}

/// What a unit needs to know while encoding statements.
pub struct UnitCx<'a> {
    pub method: Option<&'a ir::Method>,
    /// The values of the method's parameters and `given` parameters at entry.
    /// In contracts a parameter means its value at entry (JML's rule); the body
    /// works on a copy it may assign, so the postcondition is exhaled with these
    /// values, which is also what callers assume with the arguments.
    pub entry: Vec<(Name, Term)>,
    pub old: State,
    pub this: Option<Term>,
    pub result: Option<Term>,
}

pub struct Encoder<'a> {
    prog: &'a ir::Program,
    /// The source text, for quoting expressions in messages.
    src: &'a str,
    pub(super) smt: SmtSolver,
    opts: &'a Options,
    fresh: u32,
    pub(super) failures: Vec<Failure>,
    /// The theories (sequences, maps, bags, sets) whose axioms are asserted.
    theories: Theories,
    /// What the heap and mask encoding keeps ([`state`]).
    heap: state::HeapState,
    /// What the encoding of pure functions keeps ([`functions`]).
    functions: functions::FunctionState,
    pub(super) checks: u32,
    /// What is known about obligations and facts already sent to Z3.
    obligations: Obligations,
    /// The par blocks whose thread body is being encoded, innermost last.
    par_stack: Vec<par::ParCx>,
    /// What the encoding of quantified permissions keeps ([`qp`]).
    qp: qp::QpState,
    /// Time limits of the unit (`limits.rs`).
    limits: limits::UnitLimits,
    /// Monotonic functions, proved once per program (`induction.rs`); their
    /// axioms come with the function axioms.
    pub(super) monotone: Vec<induction::Monotone>,
    /// The `label l;` statements passed in the statement lists being encoded,
    /// innermost last, with the state at each: what `\old[l](e)` reads. A list
    /// drops its labels when it ends (see `stmt.rs`), so a label is only seen by
    /// the statements after it, as the type checker allows.
    pub(super) labels: Vec<(Name, state::State)>,
    /// Whether `perm(loc)` may be evaluated: only while encoding an `assert`,
    /// `exhale`, `assume` or `inhale` statement. Elsewhere (contracts, loop
    /// invariants, predicate bodies, functions) a fact about the amount held
    /// would be checked in one state and assumed in another that holds less or
    /// more (the caller's frame, a loop body's invariant-only state), which is
    /// not sound, so it is reported unsupported.
    pub(super) perm_reads: bool,
}

/// The theories whose axioms a unit has asserted (each once).
#[derive(Default)]
struct Theories {
    /// Sequence theories, by element sort.
    seq: HashSet<Sort>,
    /// The map, bag and set instances (and map key sets), by name.
    instances: HashSet<String>,
    /// The enums whose sort is declared, by name.
    enums: HashSet<crate::ast::Name>,
    /// The string literals met, as written, with their constants (pairwise
    /// distinct: different texts are different strings).
    strings: Vec<(String, Term)>,
}

/// The obligation cache of a unit: what it has checked and assumed, so that a
/// question already answered is not sent to Z3 again.
#[derive(Default)]
struct Obligations {
    /// Obligations already checked, `(guard, hyp ⇒ goal)`, with their outcome. A
    /// check is followed by assuming what it checked (the solver never retracts),
    /// so asking the same question again is redundant: sorting programs re-check
    /// `xs != null` and the same bounds at every read (a fifth of timSort's checks).
    checked: HashMap<(Term, Term), bool>,
    /// Facts assumed so far, `(guard, conjunct)`: `guard ⇒ conjunct` is asserted
    /// (and never retracted), so an obligation whose goal is such a conjunct under
    /// the same guard or one of its ancestors needs no Z3 query (about one check
    /// in seven of a kernel re-proves a precondition it has just assumed).
    known: HashSet<(Term, Term)>,
    /// The guard each sub/side guard implies ([`Encoder::sub_guard`], [`Encoder::side_guard`]).
    guard_parent: HashMap<Term, Term>,
}

/// How many guards up [`Encoder::is_known`] looks for an assumed fact.
const KNOWN_DEPTH: usize = 64;

/// The top-level conjuncts of `t` (`t` itself unless it is a conjunction).
fn conjuncts(t: &Term) -> Vec<Term> {
    use crate::verify::smt::term::{Node, Op};
    match t.node() {
        Node::Op(Op::And, parts, _) => parts.clone(),
        _ => vec![t.clone()],
    }
}

impl<'a> Encoder<'a> {
    pub fn new(prog: &'a ir::Program, opts: &'a Options, src: &'a str) -> Encoder<'a> {
        let smt = SmtSolver::new(opts.timeout_ms(), opts.rlimit, opts.dump_smt);
        let mut e = Encoder {
            prog,
            src,
            smt,
            opts,
            fresh: 0,
            failures: Vec::new(),
            theories: Theories::default(),
            heap: state::HeapState::default(),
            functions: functions::FunctionState::default(),
            checks: 0,
            obligations: Obligations::default(),
            par_stack: Vec::new(),
            qp: qp::QpState::default(),
            limits: limits::UnitLimits::start(opts),
            monotone: Vec::new(),
            labels: Vec::new(),
            perm_reads: false,
        };
        e.background();
        e
    }

    fn background(&mut self) {
        let a = Term::konst("a@alen", arr_sort());
        let alen = Term::app("alen", vec![a.clone()], Sort::Int);
        self.smt.assert(Term::forall(
            vec![(Rc::from("a@alen"), arr_sort())],
            vec![vec![alen.clone()]],
            alen.ge(&Term::int(0)),
            "alen_nonneg",
        ));
    }

    /// Z3 failed outright (not `unknown`: an API error): an internal error at the
    /// obligation's span, when the query was one that reports.
    fn backend_failed(&mut self, span: Option<Span>, msg: &str) {
        if let Some(span) = span {
            self.failures.push(Failure {
                code: codes::INTERNAL,
                message: format!("internal error in the SMT backend: {msg}"),
                span,
                related: vec![],
                values: vec![],
            });
        }
    }

    pub fn fresh_name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}@{}", self.fresh)
    }

    pub fn fresh_const(&mut self, base: &str, sort: Sort) -> Term {
        let n = self.fresh_name(base);
        Term::konst(&n, sort)
    }

    /// A new guard literal implied by `parent ∧ cond`.
    pub fn sub_guard(&mut self, parent: &Term, cond: &Term) -> Term {
        let g = self.fresh_const("g", Sort::Bool);
        self.smt.assert(g.eq(&parent.and2(cond)));
        self.obligations.guard_parent.insert(g.clone(), parent.clone());
        g
    }

    /// A guard for a side obligation (the postcondition's well-definedness, a
    /// loop body, a par thread): it implies the parent but is not implied by it,
    /// so contradictory assumptions on the side path cannot make the parent
    /// path vacuous.
    pub fn side_guard(&mut self, parent: &Term) -> Term {
        let g = self.fresh_const("g", Sort::Bool);
        self.smt.assert(g.implies(parent));
        self.obligations.guard_parent.insert(g.clone(), parent.clone());
        g
    }

    pub fn assume(&mut self, guard: &Term, fact: Term) {
        if fact.is_true() {
            return;
        }
        self.smt.assert(guard.implies(&fact));
        for c in conjuncts(&fact) {
            self.obligations.known.insert((guard.clone(), c.clone()));
        }
    }

    /// Whether `guard ⇒ fact` has been assumed, for `guard` or a guard it implies
    /// (looked up [`KNOWN_DEPTH`] ancestors up at most).
    fn is_known(&self, guard: &Term, fact: &Term) -> bool {
        let mut g = guard;
        for _ in 0..KNOWN_DEPTH {
            if self.obligations.known.contains(&(g.clone(), fact.clone())) {
                return true;
            }
            match self.obligations.guard_parent.get(g) {
                Some(p) => g = p,
                None => return false,
            }
        }
        false
    }

    /// Checks `conds ⇒ goal` on the path with guard `guard`; reports `blame` when
    /// it cannot be proved; afterwards assumes it.
    pub fn check(&mut self, guard: &Term, env: Option<&Env>, conds: &[Term], goal: Term, blame: Blame) -> bool {
        let hyp = Term::and(conds.to_vec());
        let fact = hyp.implies(&goal);
        let key = (guard.clone(), fact.clone());
        if let Some(&ok) = self.obligations.checked.get(&key) {
            // Entailed by the assumption made after the first check; a failure
            // was reported then.
            return ok;
        }
        if conjuncts(&goal).iter().all(|c| self.is_known(guard, c)) {
            // The goal itself is assumed on this path: `conds ⇒ goal` holds.
            self.obligations.checked.insert(key, true);
            return true;
        }
        let ok = self.prove(guard, &hyp, &goal, Some((env, blame)));
        self.assume(guard, fact);
        self.obligations.checked.insert(key, ok);
        ok
    }

    /// Asks whether `hyp ⇒ goal` holds under `guard`, reporting on failure when
    /// `report` is given. Does not assume anything afterwards.
    pub fn prove(&mut self, guard: &Term, hyp: &Term, goal: &Term, report: Option<(Option<&Env>, Blame)>) -> bool {
        if goal.is_true() || hyp.is_false() || guard.is_false() {
            return true;
        }
        // The same obligation failed already in this unit: the unit is rejected
        // and its report names this place; asking again could only repeat the
        // report (removed as a duplicate) at the price of another query, often a
        // slow one, as failing queries are (`opt_Transpose`'s nonlinear indices:
        // three queries of 0.5–0.9 s each, asked a second time).
        if let Some((_, b)) = &report {
            if self.already_failed(b) {
                return false;
            }
        }
        let (limit_ms, cap) = match self.query_limit() {
            Some(l) => l,
            None => {
                if let Some((_, b)) = report {
                    self.not_checked(b);
                }
                return false;
            }
        };
        self.checks += 1;
        let (skolem_hyps, goal) = self.skolemise(goal);
        let chk = self.fresh_const("chk", Sort::Bool);
        let mut parts = vec![hyp.clone()];
        parts.extend(skolem_hyps);
        parts.push(goal.not());
        // The negated goal goes into a Z3 scope of its own, never popped (see
        // `SmtSolver::open_query_scope`).
        if let Err(msg) = self.smt.open_query_scope() {
            self.backend_failed(report.as_ref().map(|(_, b)| b.span), &msg);
            return false;
        }
        self.smt.assert(chk.implies(&Term::and(parts)));
        let names: Vec<String> = [guard, &chk].iter().map(|t| t.to_string().trim_matches('|').to_string()).collect();
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let started = std::time::Instant::now();
        let before = if trace_queries() { self.smt.effort() } else { (0, 0) };
        // Should Z3 not stop at the limit, the unit's runner reports the unit
        // as it stands now, with a timeout here (`verify/runner.rs`).
        let at_risk =
            crate::verify::runner::obligation(report.as_ref().map(|(_, b)| b), &limits::timeout_text(limit_ms, cap), &self.failures);
        let outcome = self.smt.check_within(&refs, limit_ms);
        drop(at_risk);
        if trace_queries() {
            let what = report.as_ref().map_or_else(|| "(optional query)".to_string(), |(_, b)| format!("{} @{}", b.message, b.span.start));
            let verdict = match &outcome {
                Ok(Outcome::Proved) => "proved",
                Ok(Outcome::NotProved { unknown: None }) => "not proved",
                Ok(Outcome::NotProved { unknown: Some(_) }) => "unknown",
                Err(_) => "error",
            };
            let after = self.smt.effort();
            eprintln!(
                "[query {:>6} ms rl {:>10} qi {:>8}] {verdict}: {what}",
                started.elapsed().as_millis(),
                after.0 - before.0,
                after.1 - before.1
            );
        }
        let outcome = match outcome {
            Ok(o) => o,
            Err(msg) => {
                self.backend_failed(report.as_ref().map(|(_, b)| b.span), &msg);
                return false;
            }
        };
        match outcome {
            Outcome::Proved => true,
            Outcome::NotProved { unknown } => {
                if let Some((env, b)) = report {
                    let values = env.map(|e| self.model_values(e)).unwrap_or_default();
                    self.note_failure(matches!(unknown, Some(Unknown::Timeout)));
                    let (code, message) = match &unknown {
                        Some(Unknown::Timeout) => {
                            (codes::UNKNOWN, format!("{}: could not prove ({})", b.message, limits::timeout_text(limit_ms, cap)))
                        }
                        Some(Unknown::ResourceLimit(n)) => {
                            (codes::UNKNOWN, format!("{}: could not prove (resource limit {n} reached)", b.message))
                        }
                        Some(Unknown::Incomplete(_)) | None => (b.code, b.message),
                    };
                    self.failures.push(Failure { code, message, span: b.span, related: b.related, values });
                }
                false
            }
        }
    }

    /// Whether the unit's failures hold one reported for this blame: with its
    /// message, or with its message and why it could not be proved or was not
    /// checked (`limits.rs`). Looked up in the failures themselves, not kept
    /// aside: a side path may drop the failures it reported (the par block's
    /// trial exhale), and the real check after it must then be asked again.
    fn already_failed(&self, b: &Blame) -> bool {
        let (proved, checked) = (format!("{}: could not prove (", b.message), format!("{}: not checked (", b.message));
        self.failures.iter().any(|f| {
            f.span == b.span
                && ((f.code == b.code && f.message == b.message)
                    || (f.code == codes::UNKNOWN && (f.message.starts_with(&proved) || f.message.starts_with(&checked))))
        })
    }

    fn model_values(&self, env: &Env) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (n, t) in env.visible() {
            if let crate::verify::smt::term::Node::Const(c, s) = t.node() {
                if let Some(v) = self.smt.model_value(c, s) {
                    out.push((n.to_string(), super::smt::solver::tidy_value(&v)));
                }
            }
        }
        out
    }

    /// Positive universal quantifiers in a goal become fresh constants (the goal
    /// is negated, so they are existentials): `∀x. A(x) ⇒ B(x)` is proved by
    /// refuting `A(x0) ∧ ¬B(x0)`. Returns extra hypotheses (none for now) and the
    /// quantifier-free goal.
    fn skolemise(&mut self, goal: &Term) -> (Vec<Term>, Term) {
        use crate::verify::smt::term::{Node, Op};
        match goal.node() {
            Node::Quant(q) if q.forall => {
                let mut map = HashMap::new();
                for (v, s) in &q.vars {
                    let c = self.fresh_const(v, s.clone());
                    map.insert(v.clone(), c);
                }
                let body = q.body.subst(&map);
                self.skolemise(&body)
            }
            Node::Op(Op::And, parts, _) => {
                let mut hyps = Vec::new();
                let mut gs = Vec::new();
                for p in parts {
                    let (h, g) = self.skolemise(p);
                    hyps.extend(h);
                    gs.push(g);
                }
                (hyps, Term::and(gs))
            }
            Node::Op(Op::Implies, parts, _) => {
                let (h, g) = self.skolemise(&parts[1]);
                (h, parts[0].implies(&g))
            }
            _ => (Vec::new(), goal.clone()),
        }
    }

    pub fn unsupported(&mut self, what: impl Into<String>, span: Span) {
        self.failures.push(Failure {
            code: codes::UNSUPPORTED,
            message: format!("not supported by the verifier yet: {}", what.into()),
            span,
            related: vec![],
            values: vec![],
        });
    }

    /// The SMT sort of a PVL type.
    pub fn sort_of(&mut self, ty: &Ty) -> Sort {
        match ty {
            Ty::Int => Sort::Int,
            // A resource only reaches the SMT level as a stand-in for an
            // unsupported assertion; it sits where a condition would.
            Ty::Bool | Ty::Resource => Sort::Bool,
            Ty::Frac | Ty::ZFrac => Sort::Real,
            Ty::Class(_) | Ty::Null => ref_sort(),
            Ty::Array(_) => arr_sort(),
            Ty::Seq(e) => {
                let es = self.sort_of(e);
                self.seq_fns(es).sort
            }
            Ty::Map(k, v) => self.map_fns(k, v).sort,
            Ty::Bag(e) => self.bag_fns(e).sort,
            Ty::Set(e) => self.set_fns(e).sort,
            Ty::Enum(e) => self.enum_sort(e),
            _ => Sort::named(&format!("{ty}")),
        }
    }

    /// The value of the string literal `"text"`: a constant of the `string` sort,
    /// the same for the same text. Literals of different texts are different
    /// strings, except that a literal with an escape (`"\x41"`) gets no such fact:
    /// it may be the same string as one written without (`"A"`).
    pub fn string_literal(&mut self, text: &str) -> Term {
        if let Some((_, t)) = self.theories.strings.iter().find(|(s, _)| s == text) {
            return t.clone();
        }
        let sort = self.sort_of(&Ty::String);
        let t = self.fresh_const("string", sort);
        if !text.contains('\\') {
            for (other, o) in &self.theories.strings {
                if !other.contains('\\') {
                    self.smt.assert(t.ne(o));
                }
            }
        }
        self.theories.strings.push((text.to_string(), t.clone()));
        t
    }

    /// `enum E { C0, .., Cn-1 }`: a sort of its own, with an index function
    /// `idx(Ci) = i` (so the constants are distinct) and, for a non-empty enum,
    /// `∀x {idx(x)}. x = C0 ∨ .. ∨ x = Cn-1` (every value is a constant).
    /// Equalities of enum values are encoded through `idx` (see
    /// [`Encoder::enum_index`]), which puts the trigger on every value compared.
    /// An empty enum gets no such axiom: an SMT sort is never empty, and "no
    /// value" would make every unit that mentions the type vacuous.
    pub fn enum_sort(&mut self, name: &crate::ast::Name) -> Sort {
        let sort = Sort::named(&format!("Enum.{name}"));
        if self.theories.enums.insert(name.clone()) {
            let constants = self.prog.enums.iter().find(|(n, _)| n == name).map(|(_, c)| c.clone()).unwrap_or_default();
            let terms: Vec<Term> = constants.iter().map(|c| Term::konst(&format!("enum.{name}.{c}"), sort.clone())).collect();
            for (i, t) in terms.iter().enumerate() {
                let idx = self.enum_index(name, t);
                self.smt.assert(idx.eq(&Term::int(i as i128)));
            }
            if !terms.is_empty() {
                let x: std::rc::Rc<str> = std::rc::Rc::from("enum$x");
                let xv = Term::konst("enum$x", sort.clone());
                let body = Term::or(terms.iter().map(|t| xv.eq(t)).collect());
                let trigger = self.enum_index(name, &xv);
                let all = Term::forall(vec![(x, sort.clone())], vec![vec![trigger]], body, &format!("enum.{name}"));
                self.smt.assert(all);
            }
        }
        sort
    }

    /// The constant `E.C`.
    pub fn enum_constant(&mut self, name: &crate::ast::Name, constant: &str) -> Term {
        let sort = self.enum_sort(name);
        Term::konst(&format!("enum.{name}.{constant}"), sort)
    }

    /// `idx(v)` for a value `v` of the enum `name`: the position of its constant.
    pub fn enum_index(&self, name: &crate::ast::Name, v: &Term) -> Term {
        Term::app(&format!("enum.{name}.idx"), vec![v.clone()], Sort::Int)
    }

    /// The sequence functions for an element sort, declaring their axioms on
    /// first use.
    pub fn seq_fns(&mut self, elem: Sort) -> seq::SeqFns {
        let f = seq::SeqFns::new(elem.clone());
        if self.theories.seq.insert(elem) {
            for a in f.axioms() {
                self.smt.assert(a);
            }
        }
        f
    }
}

/// `ALPINE_TRACE_QUERIES=1`: every query's time and verdict on stderr (for
/// finding the slow obligations of a unit).
pub(super) fn trace_queries() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("ALPINE_TRACE_QUERIES").is_some_and(|v| v != "0"))
}

pub fn ref_sort() -> Sort {
    Sort::named("Ref")
}
pub fn arr_sort() -> Sort {
    Sort::named("Arr")
}
pub fn null_of(sort: &Sort) -> Term {
    if *sort == arr_sort() {
        Term::konst("null@Arr", arr_sort())
    } else {
        Term::konst("null@Ref", ref_sort())
    }
}

pub use functions::verify_function;
pub use stmt::verify_method;
