//! A small interpreter for the sequential subset of PVL, used to check that an
//! optimised method computes what the original computes (differential tests).
//!
//! Supported: `int` (64-bit, overflow is an error), `boolean`, arrays
//! (`new T[n]`, `a[i]`, `a.length`), sequences (`seq<T>{..}`, `s[i]`, `|s|`,
//! `+`/`++` concatenation, `::`, `head`, `tail`, `isEmpty`, `x in s`, slices
//! `s[lo..hi]`, updates `s[i -> v]`, `removeAt`), `\let`, objects with fields (`new C()`,
//! `o.f`, bare field names of `this`), local declarations, assignments,
//! `x++`/`x--`, `if`, `while`, `for`, `return`, blocks, calls to methods and pure
//! functions of the program (`m(..)`, `this.m(..)`, `o.m(..)`, `Class.m(..)`;
//! `with`/`then` ghost blocks are skipped, and stop a run that checks contracts), `? :`, PVL's truncating `/` and `%`. `par`
//! blocks (1-D and 2-D ranges, `and`-joined units) with barriers run phase by
//! phase, threads in a seeded random order within a phase ([`par`]); `atomic`
//! blocks run as they are; `new T[a][b]` makes distinct rows, and
//! `\matrix(m, a, b)` is evaluated in preconditions.
//!
//! With [`Interp::skip_lemmas`], a call statement of a *lemma* — a `void`
//! method whose contract holds no resource at all (no `Perm`, `PointsTo`,
//! `Value`, `\forall*`, `\matrix`, predicate, ...), that yields nothing, and
//! that takes no lock and enters no `atomic` block, nor calls a method that
//! does — is not run, nor are its arguments evaluated. Such a method cannot
//! change anything its caller can see: without permission it writes no location
//! that existed before the call (the verifier checks every method against its
//! contract; a lock or an invariant would be another source of permission),
//! and it returns nothing. Lemmas are ghost proof steps whose cost
//! can be far above the program's own (a permutation lemma per swap of a sort).
//!
//! Specifications are not executed (`assert`, `fold`, ... are skipped), except
//! that [`Interp::holds`] evaluates a precondition to filter generated inputs:
//! permissions count as true, `\forall`/`\exists` run over an integer range read
//! from the guard (`lo <= x && x < hi`) or over a sequence (`x in s`).
//!
//! Maps: literals, `buildMap`, lookup `m[k]` (an error for a key not in the
//! map), `==`. Constructors run on `new C(..)`. Threads: `fork`/`join` and
//! monitors (`lock`/`unlock`/`wait`/`notify`) run in [`threads`]. Not supported
//! (an [`Error`], never a panic): `\old`, other map operations, sets and bags, fractions.

mod contracts;
pub mod generic;
mod ops;
mod par;
#[cfg(test)]
mod tests;
mod threads;

use ops::{int_literal, map_put, same};

use crate::ast::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Null,
    Void,
    Array(Rc<RefCell<Vec<Value>>>),
    Seq(Rc<Vec<Value>>),
    /// A `map<K,V>`: entries with distinct keys (by [`same`]), in insertion order.
    Map(Rc<Vec<(Value, Value)>>),
    Obj(Rc<RefCell<Object>>),
    /// A data value of a generic run ([`generic`]).
    Summand(generic::Summand),
}

#[derive(Debug)]
pub struct Object {
    pub class: Name,
    pub fields: BTreeMap<Name, Value>,
}

impl Value {
    /// A structural rendering (arrays and objects by contents), for comparing
    /// final states.
    pub fn deep(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => "null".into(),
            Value::Void => "void".into(),
            Value::Array(a) => format!("[{}]", a.borrow().iter().map(Value::deep).collect::<Vec<_>>().join(",")),
            Value::Seq(s) => format!("seq{{{}}}", s.iter().map(Value::deep).collect::<Vec<_>>().join(",")),
            Value::Map(m) => {
                let mut es: Vec<String> = m.iter().map(|(k, v)| format!("{}->{}", k.deep(), v.deep())).collect();
                es.sort();
                format!("map{{{}}}", es.join(","))
            }
            Value::Obj(o) => {
                let o = o.borrow();
                let fs: Vec<String> = o.fields.iter().map(|(k, v)| format!("{k}={}", v.deep())).collect();
                format!("{}{{{}}}", o.class, fs.join(","))
            }
            Value::Summand(x) => x.to_string(),
        }
    }
    fn int(&self) -> Result<i64, Error> {
        match self {
            Value::Int(v) => Ok(*v),
            v => Err(Error(format!("expected an int, got {}", v.deep()))),
        }
    }
    fn bool(&self) -> Result<bool, Error> {
        match self {
            Value::Bool(b) => Ok(*b),
            v => Err(Error(format!("expected a boolean, got {}", v.deep()))),
        }
    }
}

/// Why a run stopped abnormally (unsupported construct, runtime error, out of fuel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(Error(msg.into()))
}

/// `new T[d0][d1]...`: distinct rows, innermost cells the default value.
fn new_array(elem: &Type, sizes: &[usize]) -> Value {
    let cells = match sizes {
        [n] => vec![default_value(elem); *n],
        [n, rest @ ..] => (0..*n).map(|_| new_array(elem, rest)).collect(),
        [] => return default_value(elem),
    };
    Value::Array(Rc::new(RefCell::new(cells)))
}

/// The default value of a type (0, false, null, empty sequence).
pub fn default_value(t: &Type) -> Value {
    match &t.kind {
        TypeKind::Int => Value::Int(0),
        TypeKind::Boolean => Value::Bool(false),
        TypeKind::Seq(_) => Value::Seq(Rc::new(Vec::new())),
        _ => Value::Null,
    }
}

enum Flow {
    Normal,
    Return(Value),
}

pub struct Interp<'p> {
    program: &'p Program,
    /// Statements and expressions left before the run is abandoned.
    pub fuel: u64,
    /// Calls in progress; past [`MAX_CALL_DEPTH`] the run stops with an error
    /// instead of overflowing the stack (a lemma called outside its precondition
    /// may recurse forever).
    depth: usize,
    /// Do not run calls of lemmas (see the module doc); off by default.
    pub skip_lemmas: bool,
    /// Methods already classified as lemma or not, by `Class.method`.
    lemmas: HashMap<String, bool>,
    /// Draws the order in which threads run a phase of a `par` block, and the
    /// interleaving of forked threads.
    pub seed: u64,
    /// The threaded run this interpreter is one thread of ([`threads`]).
    runtime: Option<threads::Runtime>,
    /// See [`Interp::lockers`]; computed on first use.
    lockers: Option<std::collections::HashSet<String>>,
    /// Check contracts and asserts while running ([`contracts`]); off by default.
    pub check_contracts: bool,
    /// The program's text, for line numbers in messages.
    pub source: Option<&'p str>,
    /// A run over the interval-of-summands monoid ([`generic`]); `None` normally.
    pub generic: Option<Box<generic::GenericRun>>,
}

/// The scopes a method's frame starts its body with: the parameters (with the
/// `given`s and `yields`), then the body's copies of the parameters and
/// `given`s, which the body may assign ([`Interp::call`]).
const PARAMETER_SCOPES: usize = 2;

/// Deepest call nesting a run may reach. Each level costs a few KiB of the
/// caller's stack (one `eval` frame per nested expression): run deep programs on
/// a thread with a large stack.
pub const MAX_CALL_DEPTH: usize = 1_000;

/// An assignment's target, evaluated ([`Interp::place`]).
enum Place {
    Var(Name),
    Field(Value, Name),
    Cell(Value, i64),
}

struct Frame {
    this: Option<Value>,
    scopes: Vec<HashMap<Name, Value>>,
    /// The pre-state of the call, for `\old` ([`contracts`]).
    old: Option<Rc<contracts::OldState>>,
    /// `\result` while postconditions are checked.
    result: Option<Value>,
}

impl Frame {
    fn lookup(&mut self, n: &str) -> Option<&mut Value> {
        self.scopes.iter_mut().rev().find_map(|s| s.get_mut(n))
    }
    fn declare(&mut self, n: &Name, v: Value) {
        self.scopes.last_mut().expect("a scope").insert(n.clone(), v);
    }
}

impl<'p> Interp<'p> {
    pub fn new(program: &'p Program, fuel: u64) -> Interp<'p> {
        Interp {
            program,
            fuel,
            depth: 0,
            skip_lemmas: false,
            lemmas: HashMap::new(),
            seed: 0x9e37_79b9_7f4a_7c15,
            runtime: None,
            lockers: None,
            check_contracts: false,
            source: None,
            generic: None,
        }
    }

    fn method(&self, class: &str, name: &str) -> Result<&'p Method, Error> {
        self.program
            .classes
            .iter()
            .filter(|c| c.name.as_str() == class)
            .flat_map(|c| &c.members)
            .find_map(|m| match m {
                Member::Method(m) if m.name.as_str() == name => Some(m),
                _ => None,
            })
            .ok_or_else(|| Error(format!("no method {class}.{name}")))
    }

    /// The constructor of `class` with `arity` parameters, if declared.
    fn constructor(&self, class: &str, arity: usize) -> Option<&'p Method> {
        self.program.classes.iter().filter(|c| c.name.as_str() == class).flat_map(|c| &c.members).find_map(|m| match m {
            Member::Method(m) if m.is_constructor() && m.params.len() == arity => Some(m),
            _ => None,
        })
    }

    /// `new class(args)`: a fresh object, its constructor run (an error when
    /// `class` declares constructors but none of this arity).
    pub fn construct(&mut self, class: &str, args: Vec<Value>) -> Result<Value, Error> {
        let obj = self.new_object(class);
        match self.constructor(class, args.len()) {
            Some(m) => {
                self.call(class, m.name.as_str(), Some(obj.clone()), args)?;
            }
            None if args.is_empty() => {}
            None => return err(format!("no constructor of {class} with {} arguments", args.len())),
        }
        Ok(obj)
    }

    /// A fresh object of `class` with default field values (no constructor run).
    pub fn new_object(&self, class: &str) -> Value {
        let fields = self
            .program
            .classes
            .iter()
            .filter(|c| c.name.as_str() == class)
            .flat_map(|c| &c.members)
            .filter_map(|m| match m {
                Member::Field(f) => Some((f.name.name.clone(), default_value(&f.ty))),
                _ => None,
            })
            .collect();
        Value::Obj(Rc::new(RefCell::new(Object { class: class.into(), fields })))
    }

    /// Runs `class.name(args)` on `this`; returns the result (`Void` for void).
    /// A program that forks runs on several threads ([`threads`]); the call
    /// returns when all have ended.
    pub fn call(&mut self, class: &str, name: &str, this: Option<Value>, args: Vec<Value>) -> Result<Value, Error> {
        if self.depth == 0 && self.runtime.is_none() && threads::forks(self.program) {
            return self.call_threaded(class, name, this, args);
        }
        let m = self.method(class, name)?;
        if m.params.len() != args.len() {
            return err(format!("{name}: expected {} arguments", m.params.len()));
        }
        let mut scope: HashMap<Name, Value> = m.params.iter().map(|p| p.name.name.clone()).zip(args).collect();
        for c in &m.contract.clauses {
            if let ClauseKind::Given(p) | ClauseKind::Yields(p) = &c.kind {
                scope.insert(p.name.name.clone(), default_value(&p.ty));
            }
        }
        // In contracts a parameter means its value at entry (JML's rule, the
        // verifier's too): the body works on copies of the parameters and
        // `given`s, in a scope of its own that is gone when the postcondition
        // is checked. `yields` stay in the outer scope: the body sets them.
        let copies: HashMap<Name, Value> = m
            .params
            .iter()
            .map(|p| &p.name.name)
            .chain(m.contract.clauses.iter().filter_map(|c| match &c.kind {
                ClauseKind::Given(p) => Some(&p.name.name),
                _ => None,
            }))
            .filter_map(|n| scope.get(n).map(|v| (n.clone(), v.clone())))
            .collect();
        let mut f = Frame { this, scopes: vec![scope], old: None, result: None };
        if self.depth >= MAX_CALL_DEPTH {
            return err(format!("call depth limit reached (calling {class}.{name})"));
        }
        self.depth += 1;
        let r = (|| {
            f.scopes.push(copies);
            debug_assert_eq!(f.scopes.len(), PARAMETER_SCOPES);
            if self.check_contracts {
                self.enter(&mut f, m)?;
            }
            let v = match &m.body {
                MethodBody::Expr(e) => self.eval(&mut f, e)?,
                MethodBody::Block(b) => match self.block(&mut f, &b.stmts)? {
                    Flow::Return(v) => v,
                    Flow::Normal => Value::Void,
                },
                MethodBody::Abstract => return err(format!("{name} has no body")),
            };
            // The body's copies are gone; the scope stays (empty), so that
            // `\old` finds the same layout (`PARAMETER_SCOPES`).
            f.scopes.truncate(1);
            f.scopes.push(HashMap::new());
            if self.check_contracts {
                self.leave(&mut f, m, &v)?;
            }
            Ok(v)
        })();
        self.depth -= 1;
        r
    }

    /// Evaluates a contract clause (precondition) for input filtering.
    pub fn holds(&mut self, class: &str, m: &Method, this: Option<Value>, args: &[Value], e: &Expr) -> Result<bool, Error> {
        let _ = class;
        self.eval_in(m, this, args, e)?.bool()
    }

    /// Evaluates `e` in the pre-state of `m` called on `this` with `args` (for
    /// building inputs that meet a precondition).
    pub fn eval_in(&mut self, m: &Method, this: Option<Value>, args: &[Value], e: &Expr) -> Result<Value, Error> {
        let scope = m.params.iter().map(|p| p.name.name.clone()).zip(args.iter().cloned()).collect();
        let mut f = Frame { this, scopes: vec![scope], old: None, result: None };
        self.eval(&mut f, e)
    }

    fn tick(&mut self) -> Result<(), Error> {
        if self.fuel == 0 {
            return err("out of fuel");
        }
        self.fuel -= 1;
        Ok(())
    }

    fn block(&mut self, f: &mut Frame, stmts: &[Stmt]) -> Result<Flow, Error> {
        f.scopes.push(HashMap::new());
        let mut out = Flow::Normal;
        for s in stmts {
            if let Flow::Return(v) = self.stmt(f, s)? {
                out = Flow::Return(v);
                break;
            }
        }
        f.scopes.pop();
        Ok(out)
    }

    fn stmt(&mut self, f: &mut Frame, s: &Stmt) -> Result<Flow, Error> {
        self.tick()?;
        if let Some(g) = &mut self.generic {
            g.at = Some(s.span);
            if self.skips_ghost(f, s)? {
                return Ok(Flow::Normal);
            }
        }
        match &s.kind {
            StmtKind::LocalDecl { ty, name, init } => {
                let v = match init {
                    Some(e) => self.eval(f, e)?,
                    None => default_value(ty),
                };
                if let (Some(g), Value::Array(a)) = (&mut self.generic, &v) {
                    g.array_names.entry(generic::array_id(a)).or_insert_with(|| name.name.to_string());
                }
                f.declare(&name.name, v);
            }
            StmtKind::Assign { target, value } => {
                if self.update_in_place(f, target, value)? {
                    return Ok(Flow::Normal);
                }
                let place = self.place(f, target)?;
                let v = self.eval(f, value)?;
                self.store(f, place, v)?;
            }
            StmtKind::IncDec { target, op } => {
                let t = Expr::new(ExprKind::Var(target.clone()), target.span);
                let v = self.eval(f, &t)?.int()?;
                let n = if *op == IncDec::Inc { v.checked_add(1) } else { v.checked_sub(1) };
                self.assign(f, &t, Value::Int(n.ok_or_else(|| Error("overflow".into()))?))?;
            }
            StmtKind::Expr(e) => {
                if let ExprKind::Call { receiver, method, .. } = &e.kind {
                    if self.skip_lemmas {
                        let (class, _) = self.callee(f, receiver.as_deref(), method.as_str())?;
                        if self.is_lemma(&class, method.as_str())? {
                            return Ok(Flow::Normal);
                        }
                    }
                }
                self.eval(f, e)?;
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                if self.eval(f, cond)?.bool()? {
                    return self.stmt(f, then_branch);
                } else if let Some(e) = else_branch {
                    return self.stmt(f, e);
                }
            }
            StmtKind::Loop(l) => {
                f.scopes.push(HashMap::new());
                let r = self.run_loop(f, l);
                f.scopes.pop();
                return r;
            }
            StmtKind::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(f, e)?,
                    None => Value::Void,
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::Spec { kind: SpecStmtKind::Assert, expr } if self.check_contracts => self.check(f, expr, "assertion")?,
            StmtKind::Spec { kind: kind @ (SpecStmtKind::Assume | SpecStmtKind::Inhale), expr } if self.check_contracts => {
                self.assume(f, expr, kind.keyword())?
            }
            StmtKind::Spec { .. } => {}
            StmtKind::Block(b) => return self.block(f, &b.stmts),
            StmtKind::Par(p) => self.run_par(f, p)?,
            StmtKind::Vec(_) => return err("`vec` blocks are not supported"),
            // Names a state for `\old[l]`, which the interpreter does not evaluate.
            StmtKind::Label(_) => {}
            // Specification only: a magic wand's proof changes no program state.
            StmtKind::Package { .. } => {}
            // A thread's segment runs without interleaving (see `par`), so an
            // atomic block is atomic; an invariant block only names a resource.
            StmtKind::Atomic { body, .. } => return self.stmt(f, body),
            StmtKind::InvariantBlock { body, .. } => return self.block(f, &body.stmts),
            StmtKind::Barrier(_) => return err("barrier outside a par block"),
            StmtKind::Sync { kind, obj } => self.sync(f, *kind, obj)?,
        }
        Ok(Flow::Normal)
    }

    fn run_loop(&mut self, f: &mut Frame, l: &Loop) -> Result<Flow, Error> {
        let (cond, update): (Option<&Expr>, &[Stmt]) = match &l.kind {
            LoopKind::While { cond } => (Some(cond), &[]),
            LoopKind::For { init, cond, update } => {
                for s in init {
                    self.stmt(f, s)?;
                }
                (cond.as_ref(), update)
            }
        };
        loop {
            self.tick()?;
            if self.check_contracts {
                self.check_invariants(f, l)?;
            }
            if let Some(c) = cond {
                if !self.eval(f, c)?.bool()? {
                    return Ok(Flow::Normal);
                }
            }
            if let Flow::Return(v) = self.stmt(f, &l.body)? {
                return Ok(Flow::Return(v));
            }
            for s in update {
                self.stmt(f, s)?;
            }
        }
    }

    /// `s = s[i -> v]` for a local sequence `s`: updates the sequence in place
    /// when nothing else shares it (copying it once otherwise), instead of
    /// building a new sequence per update (quadratic in a sorting loop).
    /// `false` when the statement has another shape.
    fn update_in_place(&mut self, f: &mut Frame, target: &Expr, value: &Expr) -> Result<bool, Error> {
        let (ExprKind::Var(x), ExprKind::SeqUpdate { base, index, value }) = (&target.kind, &value.kind) else {
            return Ok(false);
        };
        if !matches!(&base.kind, ExprKind::Var(y) if y.as_str() == x.as_str()) || !matches!(f.lookup(x.as_str()), Some(Value::Seq(_))) {
            return Ok(false);
        }
        self.tick()?;
        let i = self.eval(f, index)?.int()?;
        let v = self.eval(f, value)?;
        let Some(Value::Seq(s)) = f.lookup(x.as_str()) else {
            return err("updating a non-sequence");
        };
        let slot = usize::try_from(i).ok().and_then(|i| Rc::make_mut(s).get_mut(i)).ok_or_else(|| Error("index out of bounds".into()))?;
        *slot = v;
        Ok(true)
    }

    /// Names of the methods that may gain permissions other than through their
    /// contract: their body holds `lock`/`wait`/`fork`/`join`/`atomic` (a lock or
    /// an invariant hands over its resource), or calls such a method (by name,
    /// over all classes). None of them is a lemma.
    fn lockers(&mut self) -> &std::collections::HashSet<String> {
        if self.lockers.is_none() {
            struct Body {
                sync: bool,
                calls: std::collections::HashSet<String>,
            }
            impl crate::ast::visit::Visitor for Body {
                fn visit_stmt(&mut self, s: &Stmt) {
                    self.sync |= matches!(s.kind, StmtKind::Sync { .. } | StmtKind::Atomic { .. });
                    crate::ast::visit::walk_stmt(self, s);
                }
                fn visit_expr(&mut self, e: &Expr) {
                    if let ExprKind::Call { method, .. } = &e.kind {
                        self.calls.insert(method.as_str().to_string());
                    }
                    crate::ast::visit::walk_expr(self, e);
                }
            }
            let bodies: Vec<(String, Body)> = self
                .program
                .classes
                .iter()
                .flat_map(|c| &c.members)
                .filter_map(|m| match m {
                    Member::Method(m) => {
                        let mut b = Body { sync: false, calls: Default::default() };
                        crate::ast::visit::Visitor::visit_method(&mut b, m);
                        Some((m.name.as_str().to_string(), b))
                    }
                    _ => None,
                })
                .collect();
            let mut out: std::collections::HashSet<String> = bodies.iter().filter(|(_, b)| b.sync).map(|(n, _)| n.clone()).collect();
            loop {
                let more: Vec<String> = bodies
                    .iter()
                    .filter(|(n, b)| !out.contains(n) && b.calls.iter().any(|c| out.contains(c)))
                    .map(|(n, _)| n.clone())
                    .collect();
                if more.is_empty() {
                    break;
                }
                out.extend(more);
            }
            self.lockers = Some(out);
        }
        self.lockers.as_ref().expect("computed above")
    }

    /// Whether `class.name` is a lemma (see the module doc).
    fn is_lemma(&mut self, class: &str, name: &str) -> Result<bool, Error> {
        let key = format!("{class}.{name}");
        if let Some(&known) = self.lemmas.get(&key) {
            return Ok(known);
        }
        let m = self.method(class, name)?;
        let predicates = self.program.predicate_names();
        let mut resource = false;
        let mut yields = false;
        for c in &m.contract.clauses {
            match &c.kind {
                ClauseKind::Given(_) | ClauseKind::Yields(_) => yields = true,
                _ => {
                    let mut finder = ClauseResource { is_predicate: &|n| predicates.contains(n), found: false };
                    crate::ast::visit::walk_clause(&mut finder, c);
                    resource |= finder.found;
                }
            }
        }
        let lemma = matches!(&m.ret, Some(Type { kind: TypeKind::Void, .. }))
            && !yields
            && !resource
            && !m.is_pure_function()
            && !self.lockers().contains(name);
        self.lemmas.insert(key, lemma);
        Ok(lemma)
    }

    fn assign(&mut self, f: &mut Frame, target: &Expr, v: Value) -> Result<(), Error> {
        let place = self.place(f, target)?;
        self.store(f, place, v)
    }

    /// The location `target` names, its object, array and index evaluated now:
    /// in `a[i] = m();` they are evaluated before the call (PVL's and Java's
    /// order, the verifier's too), which may change `a` or `i`.
    fn place(&mut self, f: &mut Frame, target: &Expr) -> Result<Place, Error> {
        Ok(match &target.kind {
            ExprKind::Var(x) => Place::Var(x.name.clone()),
            ExprKind::Field { obj, field } => Place::Field(self.eval(f, obj)?, field.name.clone()),
            ExprKind::Index { base, index } => {
                let (b, i) = (self.eval(f, base)?, self.eval(f, index)?.int()?);
                self.log_access(&b, i, true, target.span)?;
                Place::Cell(b, i)
            }
            _ => return err("unsupported assignment target"),
        })
    }

    /// Writes `v` to `place` (null and bounds are checked here, after the value).
    fn store(&mut self, f: &mut Frame, place: Place, v: Value) -> Result<(), Error> {
        match place {
            Place::Var(x) => {
                if let Some(slot) = f.lookup(&x) {
                    *slot = v;
                    return Ok(());
                }
                match &f.this {
                    Some(Value::Obj(o)) if o.borrow().fields.contains_key(&x) => {
                        o.borrow_mut().fields.insert(x, v);
                        Ok(())
                    }
                    _ => err(format!("assignment to unknown `{x}`")),
                }
            }
            Place::Field(obj, field) => match obj {
                Value::Obj(o) => {
                    o.borrow_mut().fields.insert(field, v);
                    Ok(())
                }
                _ => err("field write on null"),
            },
            Place::Cell(arr, i) => match arr {
                Value::Array(a) => {
                    let mut a = a.borrow_mut();
                    let slot = usize::try_from(i).ok().and_then(|i| a.get_mut(i)).ok_or_else(|| Error("index out of bounds".into()))?;
                    *slot = self.generic_store(slot, v)?;
                    Ok(())
                }
                _ => err("element write on a non-array"),
            },
        }
    }

    fn eval(&mut self, f: &mut Frame, e: &Expr) -> Result<Value, Error> {
        self.tick()?;
        Ok(match &e.kind {
            ExprKind::IntLit(v) => Value::Int(int_literal(*v)?),
            ExprKind::StringLit(_) => return err("string literals are not supported by the interpreter"),
            ExprKind::BoolLit(b) => Value::Bool(*b),
            ExprKind::Null => Value::Null,
            ExprKind::This => f.this.clone().unwrap_or(Value::Null),
            ExprKind::Var(x) => {
                if let Some(v) = f.lookup(x.as_str()) {
                    return Ok(v.clone());
                }
                match &f.this {
                    Some(Value::Obj(o)) => o.borrow().fields.get(x.as_str()).cloned().ok_or_else(|| Error(format!("unknown `{x}`")))?,
                    _ => return err(format!("unknown `{x}`")),
                }
            }
            ExprKind::Field { obj, field } => match (self.eval(f, obj)?, field.as_str()) {
                (Value::Array(a), "length") => Value::Int(a.borrow().len() as i64),
                (Value::Seq(s), "size") => Value::Int(s.len() as i64),
                (Value::Obj(o), _) => o.borrow().fields.get(field.as_str()).cloned().ok_or_else(|| Error(format!("no field {field}")))?,
                _ => return err(format!("`.{field}` of null")),
            },
            ExprKind::Index { base, index } => {
                let (b, i) = (self.eval(f, base)?, self.eval(f, index)?.int()?);
                self.log_access(&b, i, false, e.span)?;
                let get = |v: &[Value]| {
                    usize::try_from(i).ok().and_then(|i| v.get(i).cloned()).ok_or_else(|| Error("index out of bounds".into()))
                };
                match b {
                    Value::Array(a) => get(&a.borrow())?,
                    Value::Seq(s) => get(&s)?,
                    Value::Map(m) => {
                        let k = Value::Int(i);
                        m.iter()
                            .find(|(x, _)| same(x, &k))
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| Error("map lookup of a key not in the map".into()))?
                    }
                    _ => return err("indexing a non-array"),
                }
            }
            ExprKind::Size(s) => match self.eval(f, s)? {
                Value::Seq(s) => Value::Int(s.len() as i64),
                _ => return err("|..| of a non-sequence"),
            },
            ExprKind::Collection { kind: CollectionKind::Seq, elems, .. } => {
                Value::Seq(Rc::new(elems.iter().map(|x| self.eval(f, x)).collect::<Result<_, _>>()?))
            }
            ExprKind::NewArray { elem, dims } if !dims.is_empty() => {
                let mut sizes = Vec::with_capacity(dims.len());
                for d in dims {
                    let n = self.eval(f, d)?.int()?;
                    sizes.push(usize::try_from(n).map_err(|_| Error("negative array size".into()))?);
                }
                new_array(elem, &sizes)
            }
            ExprKind::New { class, args } => {
                let args = args.iter().map(|a| self.eval(f, a)).collect::<Result<Vec<_>, _>>()?;
                self.construct(class.as_str(), args)?
            }
            ExprKind::Unary { op: UnOp::Not, operand } => Value::Bool(!self.eval(f, operand)?.bool()?),
            ExprKind::Unary { op: UnOp::Neg, operand } => {
                Value::Int(self.eval(f, operand)?.int()?.checked_neg().ok_or_else(|| Error("overflow".into()))?)
            }
            ExprKind::Cond { cond, then_expr, else_expr } => {
                if self.eval(f, cond)?.bool()? {
                    self.eval(f, then_expr)?
                } else {
                    self.eval(f, else_expr)?
                }
            }
            ExprKind::Binary { op, lhs, rhs } => return self.binary(f, *op, lhs, rhs),
            ExprKind::Call { receiver, method, args } => {
                let (class, this) = self.callee(f, receiver.as_deref(), method.as_str())?;
                let args = args.iter().map(|a| self.eval(f, a)).collect::<Result<Vec<_>, _>>()?;
                if let Some(v) = self.generic_call(method.as_str(), &args) {
                    return Ok(v);
                }
                self.call(&class, method.as_str(), this, args)?
            }
            ExprKind::Slice { base, lo, hi } => {
                let Value::Seq(s) = self.eval(f, base)? else {
                    return err("slicing a non-sequence");
                };
                let lo = match lo {
                    Some(e) => self.eval(f, e)?.int()?,
                    None => 0,
                };
                let hi = match hi {
                    Some(e) => self.eval(f, e)?.int()?,
                    None => s.len() as i64,
                };
                if !(0 <= lo && lo <= hi && hi <= s.len() as i64) {
                    return err("slice out of bounds");
                }
                Value::Seq(Rc::new(s[lo as usize..hi as usize].to_vec()))
            }
            ExprKind::SeqUpdate { base, index, value } => {
                let Value::Seq(s) = self.eval(f, base)? else {
                    return err("updating a non-sequence");
                };
                let i = self.eval(f, index)?.int()?;
                let v = self.eval(f, value)?;
                let mut out = s.to_vec();
                let slot = usize::try_from(i).ok().and_then(|i| out.get_mut(i)).ok_or_else(|| Error("index out of bounds".into()))?;
                *slot = v;
                Value::Seq(Rc::new(out))
            }
            ExprKind::Let { binder, value, body } => {
                let v = self.eval(f, value)?;
                f.scopes.push(HashMap::from([(binder.name.name.clone(), v)]));
                let r = self.eval(f, body);
                f.scopes.pop();
                r?
            }
            ExprKind::Builtin { func, args } if args.len() == 1 => match (func, self.eval(f, &args[0])?) {
                (Builtin::Head, Value::Seq(s)) => s.first().cloned().ok_or_else(|| Error("head of empty".into()))?,
                (Builtin::Tail, Value::Seq(s)) => Value::Seq(Rc::new(s.iter().skip(1).cloned().collect())),
                (Builtin::IsEmpty, Value::Seq(s)) => Value::Bool(s.is_empty()),
                _ => return err("unsupported built-in"),
            },
            // `\matrix(m, rows, cols)` (as a precondition): `rows` distinct rows
            // of `cols` cells each.
            ExprKind::Builtin { func: Builtin::Matrix, args } if args.len() == 3 => {
                let (rows, cols) = (self.eval(f, &args[1])?.int()?, self.eval(f, &args[2])?.int()?);
                let Value::Array(m) = self.eval(f, &args[0])? else { return Ok(Value::Bool(false)) };
                let m = m.borrow();
                let mut seen: Vec<&Rc<RefCell<Vec<Value>>>> = Vec::new();
                let mut ok = m.len() as i64 == rows;
                for r in m.iter() {
                    match r {
                        Value::Array(a) if a.borrow().len() as i64 == cols && !seen.iter().any(|s| Rc::ptr_eq(s, a)) => seen.push(a),
                        _ => ok = false,
                    }
                }
                Value::Bool(ok)
            }
            // `\array(a, n)`: a non-null array of `n` cells.
            ExprKind::Builtin { func: Builtin::Array, args } if args.len() == 2 => {
                let n = self.eval(f, &args[1])?.int()?;
                match self.eval(f, &args[0])? {
                    Value::Array(a) => Value::Bool(a.borrow().len() as i64 == n),
                    _ => Value::Bool(false),
                }
            }
            ExprKind::Builtin { func: Builtin::RemoveAt, args } if args.len() == 2 => {
                let Value::Seq(s) = self.eval(f, &args[0])? else {
                    return err("removeAt of a non-sequence");
                };
                let i = self.eval(f, &args[1])?.int()?;
                let i = usize::try_from(i).ok().filter(|&i| i < s.len()).ok_or_else(|| Error("index out of bounds".into()))?;
                let mut out = s.to_vec();
                out.remove(i);
                Value::Seq(Rc::new(out))
            }
            ExprKind::MapLit { entries, .. } => {
                let mut m = Vec::new();
                for (k, v) in entries {
                    let (k, v) = (self.eval(f, k)?, self.eval(f, v)?);
                    map_put(&mut m, k, v);
                }
                Value::Map(Rc::new(m))
            }
            ExprKind::Builtin { func: Builtin::BuildMap, args } if args.len() == 3 => {
                let Value::Map(m) = self.eval(f, &args[0])? else {
                    return err("buildMap of a non-map");
                };
                let (k, v) = (self.eval(f, &args[1])?, self.eval(f, &args[2])?);
                let mut m = m.to_vec();
                map_put(&mut m, k, v);
                Value::Map(Rc::new(m))
            }
            // Ghost arguments and results are not run; a contract may depend on
            // them (`given int g; requires g > 0;`), so checking contracts
            // across them would report violations the program does not have.
            ExprKind::WithThen { with, then, .. } if self.check_contracts && (with.is_some() || then.is_some()) => {
                return err("cannot check contracts across a call with `with`/`then` ghost blocks (ghost code is not run)")
            }
            ExprKind::WithThen { expr, .. } => self.eval(f, expr)?,
            ExprKind::Old(e) => self.eval_old(f, e)?,
            ExprKind::Result => f.result.clone().ok_or_else(|| Error("`\\result` outside a postcondition".into()))?,
            ExprKind::Perm { .. } | ExprKind::Value(_) => Value::Bool(true),
            // `PointsTo(loc, p, v)`: its permission part counts as true, its value
            // part `loc == v` is checked.
            ExprKind::PointsTo { loc, value, .. } => {
                let (l, v) = (self.eval(f, loc)?, self.eval(f, value)?);
                Value::Bool(same(&l, &v))
            }
            // Permissions count as true, but the functional part of a `\forall*`
            // (`Perm(c[i], 1\4) ** c[i] > 0`) is checked like `\forall`'s, where
            // its range can be enumerated; elsewhere it counts as true as well.
            ExprKind::Quant { kind: QuantKind::ForallStar, binder, guard, body } => {
                self.quantifier(f, true, &binder.name.name, guard, body).unwrap_or(Value::Bool(true))
            }
            ExprKind::Quant { kind: kind @ (QuantKind::Forall | QuantKind::Exists), binder, guard, body } => {
                self.quantifier(f, *kind == QuantKind::Forall, &binder.name.name, guard, body)?
            }
            _ => return err("expression not supported"),
        })
    }

    /// `\forall` (`forall`) or `\exists` over the values of `binder` that `guard`
    /// bounds.
    fn quantifier(&mut self, f: &mut Frame, forall: bool, binder: &Name, guard: &Expr, body: &Expr) -> Result<Value, Error> {
        for v in self.range(f, binder, guard)? {
            f.scopes.push(HashMap::from([(binder.clone(), v)]));
            let r = (|| -> Result<bool, Error> { Ok(self.eval(f, guard)?.bool()? && self.eval(f, body)?.bool()? != forall) })();
            f.scopes.pop();
            if r? {
                return Ok(Value::Bool(!forall));
            }
        }
        Ok(Value::Bool(forall))
    }

    /// The class and `this` of a call `receiver.method(..)`: no receiver or `this`
    /// calls on the current object (or, in a static context, the class that declares
    /// `method`); a class name calls a static method; any other receiver must
    /// evaluate to an object.
    fn callee(&mut self, f: &mut Frame, receiver: Option<&Expr>, method: &str) -> Result<(Name, Option<Value>), Error> {
        let this_call = |f: &Frame, it: &Self| -> Result<(Name, Option<Value>), Error> {
            match &f.this {
                Some(Value::Obj(o)) => Ok((o.borrow().class.clone(), f.this.clone())),
                _ => Ok((it.class_of_method(method)?, None)),
            }
        };
        match receiver.map(|r| &r.kind) {
            None | Some(ExprKind::This) => this_call(f, self),
            Some(ExprKind::Var(c))
                if f.lookup(c.as_str()).is_none() && self.program.classes.iter().any(|k| k.name.as_str() == c.as_str()) =>
            {
                Ok((c.name.clone(), None))
            }
            Some(_) => match self.eval(f, receiver.expect("a receiver"))? {
                Value::Obj(o) => {
                    let class = o.borrow().class.clone();
                    Ok((class, Some(Value::Obj(o))))
                }
                _ => err(format!("call of `{method}` on null")),
            },
        }
    }

    fn class_of_method(&self, name: &str) -> Result<Name, Error> {
        self.program
            .classes
            .iter()
            .find(|c| c.members.iter().any(|m| matches!(m, Member::Method(m) if m.name.as_str() == name)))
            .map(|c| c.name.name.clone())
            .ok_or_else(|| Error(format!("no method {name}")))
    }

    /// The values a quantifier's binder ranges over, read from its guard.
    fn range(&mut self, f: &mut Frame, x: &str, guard: &Expr) -> Result<Vec<Value>, Error> {
        let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Var(v) if v.as_str() == x);
        let (mut lo, mut hi) = (None, None);
        let mut stack = vec![guard];
        while let Some(g) = stack.pop() {
            let ExprKind::Binary { op, lhs, rhs } = &g.kind else {
                continue;
            };
            match op {
                BinOp::And => stack.extend([&**lhs, &**rhs]),
                BinOp::In if is_x(lhs) => {
                    if let Value::Seq(s) = self.eval(f, rhs)? {
                        return Ok(s.to_vec());
                    }
                }
                BinOp::Le if is_x(rhs) => lo = Some(self.eval(f, lhs)?.int()?),
                BinOp::Ge if is_x(lhs) => lo = Some(self.eval(f, rhs)?.int()?),
                BinOp::Lt if is_x(rhs) => lo = Some(self.eval(f, lhs)?.int()? + 1),
                BinOp::Lt if is_x(lhs) => hi = Some(self.eval(f, rhs)?.int()?),
                BinOp::Le if is_x(lhs) => hi = Some(self.eval(f, rhs)?.int()? + 1),
                _ => {}
            }
        }
        match (lo, hi) {
            (Some(lo), Some(hi)) if hi - lo <= 1 << 20 => Ok((lo..hi.max(lo)).map(Value::Int).collect()),
            _ => err("quantifier without a bounded range"),
        }
    }
}

/// Whether a clause holds a resource (its expressions, by [`crate::ast::visit::holds_resource`]).
struct ClauseResource<'a> {
    is_predicate: &'a dyn Fn(&str) -> bool,
    found: bool,
}

impl crate::ast::visit::Visitor for ClauseResource<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        self.found |= crate::ast::visit::holds_resource(e, self.is_predicate);
    }
}
