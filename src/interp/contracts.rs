//! Run-time contract checking ([`Interp::check_contracts`], `alpine run
//! --check-contracts`).
//!
//! Checked: a method's preconditions (`requires`, `context`,
//! `context_everywhere`) when it is called and its postconditions when it
//! returns (`\result` bound to the returned value), `assert`s, loop invariants
//! on entry and after every iteration, and each thread's `requires` when a par
//! unit starts and `ensures` when it ends. A clause that does not hold stops the
//! run with an error naming the clause and its line. An `assume` or `inhale`
//! whose (functional) assertion is false stops the run too, as an *infeasible*
//! run: the verifier considers no execution past it.
//!
//! A parameter in a contract means its value at the call (JML's rule, the
//! verifier's too): the body runs on copies of the parameters.
//!
//! Permissions are not tracked: `Perm` and `PointsTo`'s permission part count
//! as true (and `\forall*` keeps only its functional part, or counts as true
//! where its range cannot be enumerated), so this checks the *functional* part of the
//! contracts (the verifier checks the rest). `\old(e)` in a method's
//! postconditions, asserts and invariants is `e` in a deep copy of the
//! arguments and of `this` taken at the call (arrays and objects reachable from
//! them, aliasing kept). Ghost code is not run, so a run that calls a method
//! with `with`/`then` ghost blocks stops there, unchecked (a clause about a
//! ghost argument would be checked against a default value); a
//! clause the interpreter cannot evaluate (an unsupported expression) is an
//! error, never silently passed.

use super::{Error, Frame, Interp, Value};
use crate::ast::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The pre-state of a call, for `\old`.
pub(super) struct OldState {
    this: Option<Value>,
    params: HashMap<Name, Value>,
}

/// A deep copy of `v`: arrays and objects copied (once each, so aliasing and
/// cycles are kept), everything else shared.
fn deep_copy(v: &Value, seen: &mut HashMap<usize, Value>) -> Value {
    match v {
        Value::Array(a) => {
            let k = Rc::as_ptr(a) as *const () as usize;
            if let Some(c) = seen.get(&k) {
                return c.clone();
            }
            let copy = Rc::new(RefCell::new(Vec::new()));
            seen.insert(k, Value::Array(copy.clone()));
            let items: Vec<Value> = a.borrow().iter().map(|x| deep_copy(x, seen)).collect();
            *copy.borrow_mut() = items;
            Value::Array(copy)
        }
        Value::Obj(o) => {
            let k = Rc::as_ptr(o) as *const () as usize;
            if let Some(c) = seen.get(&k) {
                return c.clone();
            }
            let class = o.borrow().class.clone();
            let copy = Rc::new(RefCell::new(super::Object { class, fields: Default::default() }));
            seen.insert(k, Value::Obj(copy.clone()));
            let fields = o.borrow().fields.iter().map(|(n, x)| (n.clone(), deep_copy(x, seen))).collect();
            copy.borrow_mut().fields = fields;
            Value::Obj(copy)
        }
        Value::Seq(s) => Value::Seq(Rc::new(s.iter().map(|x| deep_copy(x, seen)).collect())),
        other => other.clone(),
    }
}

impl Interp<'_> {
    /// The line of `span` in the source, when known (for messages).
    fn at(&self, span: Span) -> String {
        match self.source {
            Some(text) => format!("line {}", text.get(..span.start as usize).unwrap_or(text).matches('\n').count() + 1),
            None => format!("offset {}", span.start),
        }
    }

    /// Fails unless `e` holds in `f`.
    pub(super) fn check(&mut self, f: &mut Frame, e: &Expr, what: &str) -> Result<(), Error> {
        match self.eval(f, e) {
            Ok(Value::Bool(true)) => Ok(()),
            Ok(_) => Err(Error(format!("{what} does not hold ({})", self.at(e.span)))),
            Err(Error(why)) => Err(Error(format!("cannot check the {what} ({}): {why}", self.at(e.span)))),
        }
    }

    /// `assume e` / `inhale e`: a run on which `e` is false is not a run of the
    /// program the verifier proved (it stops there), so it ends with an error
    /// that is not a violation.
    pub(super) fn assume(&mut self, f: &mut Frame, e: &Expr, what: &str) -> Result<(), Error> {
        match self.eval(f, e) {
            Ok(Value::Bool(true)) => Ok(()),
            Ok(_) => Err(Error(format!("infeasible run: the `{what}` ({}) is false here", self.at(e.span)))),
            Err(Error(why)) => Err(Error(format!("cannot check the `{what}` ({}): {why}", self.at(e.span)))),
        }
    }

    /// At a call of `m` (frame `f` holds the arguments): checks the
    /// preconditions and keeps the pre-state for `\old`.
    pub(super) fn enter(&mut self, f: &mut Frame, m: &Method) -> Result<(), Error> {
        let mut seen = HashMap::new();
        let params = f.scopes[0].iter().map(|(n, v)| (n.clone(), deep_copy(v, &mut seen))).collect();
        let this = f.this.as_ref().map(|t| deep_copy(t, &mut seen));
        f.old = Some(Rc::new(OldState { this, params }));
        for c in &m.contract.clauses {
            if let ClauseKind::Requires(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) = &c.kind {
                self.check(f, e, &format!("precondition of {}", m.name))?;
            }
        }
        Ok(())
    }

    /// At the return of `m` with `result`: checks the postconditions.
    pub(super) fn leave(&mut self, f: &mut Frame, m: &Method, result: &Value) -> Result<(), Error> {
        f.result = Some(result.clone());
        for c in &m.contract.clauses {
            if let ClauseKind::Ensures(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) = &c.kind {
                self.check(f, e, &format!("postcondition of {}", m.name))?;
            }
        }
        Ok(())
    }

    /// The loop's invariants (and the method's `context_everywhere`, which is
    /// one of every loop), on entry and after each iteration.
    pub(super) fn check_invariants(&mut self, f: &mut Frame, l: &Loop) -> Result<(), Error> {
        for c in &l.contract.clauses {
            if let ClauseKind::LoopInvariant(e) | ClauseKind::Context(e) = &c.kind {
                self.check(f, e, "loop invariant")?;
            }
        }
        Ok(())
    }

    /// A par unit's per-thread `requires` (`ensures` with `post`).
    pub(super) fn check_unit(&mut self, f: &mut Frame, u: &ParUnit, post: bool) -> Result<(), Error> {
        for c in &u.contract.clauses {
            let e = match (&c.kind, post) {
                (ClauseKind::Requires(e), false) | (ClauseKind::Ensures(e), true) | (ClauseKind::Context(e), _) => e,
                _ => continue,
            };
            let what = if post { "postcondition of a thread" } else { "precondition of a thread" };
            self.check(f, e, what)?;
        }
        Ok(())
    }

    /// `\old(e)`: `e` in the pre-state of the call (the current frame's
    /// quantifier and local bindings stay visible; the arguments and `this` are
    /// the copies taken at the call). Without a recorded pre-state (contracts
    /// not checked, or outside a method), `e` now.
    pub(super) fn eval_old(&mut self, f: &mut Frame, e: &Expr) -> Result<Value, Error> {
        let Some(old) = f.old.clone() else { return self.eval(f, e) };
        // The parameters as they were at the call replace both parameter scopes
        // (the callee's and the body's copies, see `Interp::call`).
        let mut scopes = vec![old.params.clone()];
        scopes.extend(f.scopes.iter().skip(super::PARAMETER_SCOPES).cloned());
        let mut g = Frame { this: old.this.clone(), scopes, old: None, result: f.result.clone() };
        self.eval(&mut g, e)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    fn program(src: &str) -> Program {
        crate::frontend(&crate::diagnostics::SourceFile::new("t.pvl", src)).expect("checks").0
    }

    const INC: &str = "class C {\n\
        context a != null && 0 <= n && n <= a.length;\n\
        context (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));\n\
        ensures (\\forall int i; 0 <= i && i < n; a[i] == \\old(a[i]) + 1);\n\
        ensures \\result == n;\n\
        int inc(int[] a, int n) {\n\
          int k = 0;\n\
          loop_invariant 0 <= k && k <= n;\n\
          while (k < n) { a[k] = a[k] + 1; k = k + 1; }\n\
          assert k == n;\n\
          return k;\n\
        }\n\
        ensures \\result > 0;\n\
        int bad(int x) { return x; }\n\
        void wrong_assert(int x) { assert x > 0; }\n\
      }";

    fn run(name: &str, args: Vec<Value>) -> Result<Value, Error> {
        let p = program(INC);
        let mut it = Interp::new(&p, 100_000);
        it.check_contracts = true;
        it.source = Some(INC);
        it.call("C", name, None, args)
    }

    fn array(v: &[i64]) -> Value {
        Value::Array(Rc::new(RefCell::new(v.iter().map(|&x| Value::Int(x)).collect())))
    }

    #[test]
    fn contracts_hold_and_old_sees_the_pre_state() {
        let a = array(&[1, 2, 3]);
        assert_eq!(run("inc", vec![a.clone(), Value::Int(2)]).unwrap().deep(), "2");
        assert_eq!(a.deep(), "[2,3,3]");
    }

    #[test]
    fn violations_name_the_clause_and_line() {
        let e = run("inc", vec![array(&[1]), Value::Int(2)]).unwrap_err();
        assert_eq!(e.0, "precondition of inc does not hold (line 2)");
        let e = run("bad", vec![Value::Int(0)]).unwrap_err();
        assert_eq!(e.0, "postcondition of bad does not hold (line 13)");
        let e = run("wrong_assert", vec![Value::Int(0)]).unwrap_err();
        assert_eq!(e.0, "assertion does not hold (line 15)");
        // Unchecked, the same runs end normally.
        let p = program(INC);
        let mut it = Interp::new(&p, 100_000);
        assert!(it.call("C", "bad", None, vec![Value::Int(0)]).is_ok());
    }
}
