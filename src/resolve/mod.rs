//! Name resolution and type checking.
//!
//! [`check_program`] resolves every name of a parsed [`Program`] (variables,
//! fields, methods, classes, par labels, invariant names), type-checks every
//! expression, statement and contract clause, and fills in [`Expr::ty`] for every
//! expression it visits. It reports all problems it finds (it never stops at the
//! first) and never panics.
//!
//! Module map:
//! * [`env`] — the class/field/method tables ([`ProgramEnv`], [`build_env`]), reused
//!   by later stages.
//! * [`scope`] — lexical scopes of variables.
//! * [`types`] — assignability, comparability and joins of [`Ty`]s.
//! * `typeck_expr` — expressions; `typeck_stmt` — statements, contracts, methods.
//!
//! Error-recovery rule: an expression whose type cannot be determined (because of
//! an error already reported) gets [`Ty::Unknown`], which is compatible with
//! everything, so one mistake produces one diagnostic.

pub mod env;
pub mod scope;
pub mod types;

mod typeck_call;
mod typeck_expr;
mod typeck_stmt;

pub use env::{build_env, ClassInfo, EnumInfo, FieldInfo, MethodKind, MethodSig, ParamSig, ProgramEnv};
pub use typeck_expr::is_size_field;

use crate::ast::{AdtMember, ClauseKind, Member, ModelMember, Name, Program, Span, Ty, Type, TypeKind};
use crate::diagnostics::{codes, Diagnostic};
use scope::Scopes;

/// Resolves names and checks types in `p`, filling in `Expr::ty`. Returns every
/// error (and warning) found, sorted by position; an empty vector means the program
/// is well-formed.
pub fn check_program(p: &mut Program) -> Vec<Diagnostic> {
    check_program_with(p, &[])
}

/// Like [`check_program`], for one file of a program that spans several files
/// (VerCors takes them together: `vct Main.pvl Queue.pvl Worker.pvl`, as in the
/// corpus's `MainWorkerQueue`). The classes of `imports` that `p` does not declare
/// itself are visible to `p` (their signatures only; their bodies are not checked
/// and their own problems are not reported here).
pub fn check_program_with(p: &mut Program, imports: &[&Program]) -> Vec<Diagnostic> {
    let (mut env, mut diags) = build_env(p);
    for other in imports {
        env.import(&build_env(other).0);
    }
    let mut checker = Checker::new(&env);
    for class in &mut p.classes {
        // A class declared twice is checked against the first declaration's table
        // only if it is that declaration.
        let Some(info) = env.class(&class.name.name) else { continue };
        let is_first = info.name_span == class.name.span;
        checker.class = class.name.name.clone();
        checker.class_contract(class);
        for member in &mut class.members {
            match member {
                Member::Field(f) => {
                    checker.check_type(&f.ty);
                    checker.check_sizes(&mut f.ty);
                }
                Member::Enum(_) => {}
                Member::Adt(a) => {
                    // Type variables and generic uses are not resolved: the body
                    // is checked for its types only (the verifier does not take
                    // ADTs; see `verify::lower`).
                    checker.class = a.name.name.clone();
                    checker.suppressed(|c| {
                        for m in &mut a.members {
                            match m {
                                AdtMember::Function(f) => c.check_method(f),
                                AdtMember::Axiom(e, _) => c.static_assertion(e),
                            }
                        }
                    });
                    checker.class = class.name.name.clone();
                }
                Member::Model(md) => {
                    // Process algebra is not type-checked: types only.
                    checker.class = md.name.name.clone();
                    checker.suppressed(|c| {
                        for m in &mut md.members {
                            match m {
                                ModelMember::Field(f) => {
                                    c.check_type(&f.ty);
                                }
                                ModelMember::Process(m) | ModelMember::Action(m) => c.check_method(m),
                            }
                        }
                    });
                    checker.class = class.name.name.clone();
                }
                Member::Axiom(a) => checker.static_assertion(&mut a.expr),
                Member::Method(m) => {
                    if is_first {
                        checker.check_method(m)
                    } else {
                        checker.suppressed(|c| c.check_method(m))
                    }
                }
            }
        }
    }
    diags.append(&mut checker.diags);
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    diags
}

/// Where an expression sits, for the rules that depend on it (`\result`, `\old`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    /// Code: a statement of a method body, a par bound, a function body.
    Code,
    /// A method's `requires` (or the requires half of `context`).
    Requires,
    /// A method's `ensures`.
    Ensures,
    /// Any other contract: loop invariants, par-unit and barrier contracts,
    /// `context_everywhere`, invariant-block resources.
    OtherContract,
}

/// What the checker knows about the method being checked.
#[derive(Clone, Debug)]
pub(crate) struct MethodCtx {
    pub name: Name,
    pub is_static: bool,
    pub is_constructor: bool,
    /// The declared return type; `Ty::Void` for void methods and constructors.
    pub ret: Ty,
}

impl Default for MethodCtx {
    fn default() -> Self {
        MethodCtx { name: Name::from(""), is_static: false, is_constructor: false, ret: Ty::Void }
    }
}

/// The walking state of the checker. The expression and statement rules are
/// implemented in `typeck_expr` and `typeck_stmt` as further `impl Checker` blocks.
pub(crate) struct Checker<'e> {
    pub env: &'e ProgramEnv,
    pub diags: Vec<Diagnostic>,
    pub scopes: Scopes,
    /// The class whose members are being checked.
    pub class: Name,
    pub method: MethodCtx,
    pub position: Position,
    /// Names of the enclosing par units, innermost last (barrier labels).
    pub par_labels: Vec<Name>,
    /// Names of the enclosing `invariant` blocks, innermost last (`atomic`).
    pub inv_labels: Vec<Name>,
    /// The `label l;` statements in scope (those before the current statement in
    /// its block and the enclosing blocks), for `\old[l](e)`.
    pub stmt_labels: Vec<crate::ast::Ident>,
    /// While positive, diagnostics are dropped (used for code that is checked only
    /// to fill in types, such as directive arguments and the blocks of an
    /// unresolvable call).
    pub suppress: u32,
}

impl<'e> Checker<'e> {
    pub fn new(env: &'e ProgramEnv) -> Checker<'e> {
        Checker {
            env,
            diags: Vec::new(),
            scopes: Scopes::new(),
            class: Name::from(""),
            method: MethodCtx::default(),
            position: Position::Code,
            par_labels: Vec::new(),
            inv_labels: Vec::new(),
            stmt_labels: Vec::new(),
            suppress: 0,
        }
    }

    pub fn report(&mut self, d: Diagnostic) {
        if self.suppress == 0 {
            self.diags.push(d);
        }
    }

    /// Runs `f` with diagnostics switched off.
    pub fn suppressed<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.suppress += 1;
        let r = f(self);
        self.suppress -= 1;
        r
    }

    /// Runs `f` in expression position `pos`.
    pub fn at<R>(&mut self, pos: Position, f: impl FnOnce(&mut Self) -> R) -> R {
        let old = std::mem::replace(&mut self.position, pos);
        let r = f(self);
        self.position = old;
        r
    }

    /// Checks that every class named in a written type exists (UNDEFINED_CLASS) and
    /// returns the semantic type.
    pub fn check_type(&mut self, t: &Type) -> Ty {
        match &t.kind {
            TypeKind::Class(c) if self.env.enums.get(&c.name).is_some_and(|e| e.imported) => {
                self.report(
                    Diagnostic::error(codes::MISUSE, format!("the enum `{}` is declared in another file", c.name), c.span)
                        .with_label("an enum of another file")
                        .with_help("declare the enum in the file that uses it (enums are not shared between files yet)"),
                );
            }
            TypeKind::Class(c) if self.env.class(&c.name).is_none() => {
                let mut d = Diagnostic::error(codes::UNDEFINED_CLASS, format!("cannot find class `{}`", c.name), c.span)
                    .with_label("not a class of this file");
                if let Some(s) = scope::suggest(&c.name, self.env.classes.keys().map(|k| &**k)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.report(d);
            }
            TypeKind::Seq(e) | TypeKind::Set(e) | TypeKind::Bag(e) | TypeKind::Option(e) | TypeKind::Array(e, _) => {
                self.check_type(e);
            }
            TypeKind::Map(k, v) | TypeKind::Tuple(k, v) => {
                self.check_type(k);
                self.check_type(v);
            }
            _ => {}
        }
        t.to_ty()
    }

    /// The class's `lock_invariant e;` clauses (written before `class`): an
    /// assertion over the class's fields, as the body of `resource
    /// lock_invariant()` would be. Having both is a DUPLICATE.
    fn class_contract(&mut self, class: &mut crate::ast::Class) {
        if class.contract.is_empty() {
            return;
        }
        let method = class.members.iter().find_map(|m| match m {
            Member::Method(m) if m.name.as_str() == "lock_invariant" && m.is_predicate() && m.params.is_empty() => Some(m.name.span),
            _ => None,
        });
        self.method = MethodCtx { name: Name::from("lock_invariant"), is_static: false, is_constructor: false, ret: Ty::Resource };
        self.scopes.clear();
        for c in &mut class.contract.clauses {
            if let ClauseKind::LockInvariant(e) = &mut c.kind {
                self.at(Position::OtherContract, |ch| ch.expect_assertion(e));
                if let Some(first) = method {
                    self.report(env::duplicate("lock invariant of", &class.name.name, c.span, first).with_help(
                        "write the lock invariant once: as the clause `lock_invariant e;` or as `resource lock_invariant() = e;`",
                    ));
                }
            }
        }
    }

    /// A top-level assertion (an axiom): boolean, no `this`.
    fn static_assertion(&mut self, e: &mut crate::ast::Expr) {
        self.method = MethodCtx { name: Name::from("axiom"), is_static: true, is_constructor: false, ret: Ty::Bool };
        self.scopes.clear();
        let t = self.at(Position::OtherContract, |c| c.expr(e));
        if !matches!(t, Ty::Bool | Ty::Unknown) {
            self.mismatch(e.span, "`boolean`", &t, "an axiom must be a boolean expression");
        }
    }

    /// A TYPE_MISMATCH at `span` with the label "expected `want`, found `got`".
    pub fn mismatch(&mut self, span: Span, want: &str, got: &Ty, message: impl Into<String>) {
        self.report(Diagnostic::error(codes::TYPE_MISMATCH, message, span).with_label(format!("expected {want}, found `{got}`")));
    }
}

/// Formats a type for "expected …" labels: `` `int` ``.
pub(crate) fn tick(t: &Ty) -> String {
    format!("`{t}`")
}

#[cfg(test)]
mod tests;
