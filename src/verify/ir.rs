//! The verifier's core language ("mini-Viper"): what PVL is lowered to before
//! anything is encoded for Z3.
//!
//! Statements are few — local assignment, heap writes, allocation, calls,
//! `inhale`/`exhale`/`assert`/`assume`, `if`, loops with invariants, `par`, `return` —
//! and expressions are the type-checked PVL expressions of the AST (the encoder
//! gives them meaning). Contracts are lists of clauses with their spans, so a
//! failed check can point at the clause.
//!
//! The IR is plain data (`Send`): units are lowered on one thread and encoded on
//! another.

pub mod facts;

use crate::ast::{Expr, Name, Span, Ty};

/// One contract clause (`requires e;`) or invariant, kept with its span.
#[derive(Clone, Debug)]
pub struct Spec {
    pub expr: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub methods: Vec<Method>,
    pub functions: Vec<Function>,
    /// Every field: (class, field) and its type.
    pub fields: Vec<(Name, Name, Ty)>,
    /// The (non-inline) predicates; their instances are resources of their own
    /// (see `lower/resources.rs` and `Encoder::predicate_instance`).
    pub predicates: Vec<Predicate>,
    /// Every `enum E { A, B }`: its name and constants (a finite sort, see
    /// `encode::Encoder::sort_of`).
    pub enums: Vec<(Name, Vec<Name>)>,
    /// Where lowering gave up: a construct the verifier does not support.
    pub unsupported: Vec<(String, Span)>,
}

#[derive(Clone, Debug)]
pub struct Method {
    pub class: Name,
    pub name: Name,
    pub is_static: bool,
    pub params: Vec<(Name, Ty)>,
    /// `Ty::Void` for `void` methods and constructors.
    pub ret: Ty,
    pub given: Vec<(Name, Ty)>,
    pub yields: Vec<(Name, Ty)>,
    pub pre: Vec<Spec>,
    pub post: Vec<Spec>,
    /// `None` for abstract methods (`;` body): used through their contract only.
    pub body: Option<Vec<Stmt>>,
    pub span: Span,
    pub name_span: Span,
}

/// A pure function: `pure int f(int x) = e;` (or an abstract one).
#[derive(Clone, Debug)]
pub struct Function {
    pub class: Name,
    pub name: Name,
    /// The SMT name: `name`, or `name#k` for the k-th of several overloads.
    pub symbol: Name,
    pub is_static: bool,
    pub params: Vec<(Name, Ty)>,
    pub ret: Ty,
    pub pre: Vec<Spec>,
    pub post: Vec<Spec>,
    pub body: Option<Expr>,
    /// The measure of a `decreases e1, .., en;` clause (lexicographic), with
    /// the clause's span: tried first when the termination of the function's
    /// recursion is proved (`encode/termination.rs`). `decreases;` and
    /// `decreases assume;` give `None`: alpine proves termination itself.
    pub decreases: Option<(Vec<Expr>, Span)>,
    pub span: Span,
    pub name_span: Span,
}

/// `resource p(T x, ..) = body;`: an abstract resource with a permission amount
/// per receiver and argument tuple. `fold`/`unfold` are lowered to exhale/inhale
/// of the body and the instance, so only the signature reaches the encoder.
#[derive(Clone, Debug)]
pub struct Predicate {
    pub class: Name,
    pub name: Name,
    /// Static predicates have no receiver; others are one resource per object.
    pub is_static: bool,
    pub params: Vec<(Name, Ty)>,
    /// Pure facts over the parameters (for `\unfolding`).
    pub body: Expr,
}

#[derive(Clone, Debug)]
pub struct ParBlock {
    /// The unit's name (`par fwd(...)`), which barriers refer to.
    pub name: Option<Name>,
    /// Iteration variables `(int tid = lo .. hi)`.
    pub iters: Vec<(Name, Expr, Expr)>,
    pub pre: Vec<Spec>,
    pub post: Vec<Spec>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Call {
    /// The local that receives the result, if any.
    pub target: Option<Name>,
    pub receiver: Option<Expr>,
    /// Index into [`Program::methods`].
    pub callee: usize,
    pub args: Vec<Expr>,
    /// `with { g = e; }`: values for the callee's `given` parameters.
    pub given: Vec<(Name, Expr)>,
    /// After the call, `local := callee's yields parameter` (from `then { x = y; }`
    /// and from `with { y = x; }` naming a `yields` parameter).
    pub yields: Vec<(Name, Name)>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    /// A local declared without a value: it holds an arbitrary value.
    Local {
        name: Name,
        ty: Ty,
        span: Span,
    },
    Assign {
        name: Name,
        value: Expr,
        span: Span,
    },
    FieldWrite {
        obj: Expr,
        class: Name,
        field: Name,
        value: Expr,
        span: Span,
    },
    ArrayWrite {
        arr: Expr,
        index: Expr,
        value: Expr,
        span: Span,
    },
    NewArray {
        target: Name,
        elem: Ty,
        len: Expr,
        span: Span,
    },
    /// `obj` is a newly allocated object: non-null, and no permission to any field
    /// of it is held (so it differs from every object the state holds a field of).
    /// Emitted before a constructor call and at the start of a constructor body.
    Fresh {
        obj: Expr,
        span: Span,
    },
    Call(Call),
    Inhale {
        expr: Expr,
        span: Span,
    },
    Exhale {
        expr: Expr,
        span: Span,
        /// The exhale of a `fold` or `unfold`: the permission moves into or out of
        /// a predicate instance the same thread holds, so the heap keeps its values
        /// (see `lower/resources.rs`).
        moves: bool,
    },
    Assert {
        expr: Expr,
        span: Span,
    },
    Assume {
        expr: Expr,
        span: Span,
    },
    If {
        cond: Expr,
        then_branch: Vec<Stmt>,
        else_branch: Vec<Stmt>,
        span: Span,
    },
    /// `test` runs at the head of every iteration, after the invariant and
    /// before `cond` is evaluated (a method call in the PVL condition, see
    /// `Lower::loop_condition`); the loop ends in the state after it.
    While {
        invariants: Vec<Spec>,
        test: Vec<Stmt>,
        cond: Expr,
        body: Vec<Stmt>,
        modified: Vec<Name>,
        span: Span,
    },
    Par {
        blocks: Vec<ParBlock>,
        span: Span,
    },
    /// `barrier(label) { requires B; ensures B'; }` inside the par block named
    /// `label` (always the innermost one; lowering rejects others). `pre`/`post`
    /// already start with the block's `context_everywhere` and the method's pure
    /// `context_everywhere` clauses.
    Barrier {
        label: Name,
        pre: Vec<Spec>,
        post: Vec<Spec>,
        span: Span,
    },
    /// `label l;`: the state here is the one `\old[l](e)` reads, in the
    /// statements after it in the same list (and in lists nested in them).
    Label {
        name: Name,
        span: Span,
    },
    /// Ends the path: the postcondition is checked here.
    Return {
        value: Option<Expr>,
        span: Span,
    },
}

impl Stmt {
    /// Locals this statement (or anything nested in it) may assign.
    pub fn assigned_locals(&self, out: &mut Vec<Name>) {
        let mut add = |n: &Name| {
            if !out.contains(n) {
                out.push(n.clone());
            }
        };
        match self {
            Stmt::Assign { name, .. } | Stmt::NewArray { target: name, .. } => add(name),
            Stmt::Local { .. } => {}
            Stmt::Call(c) => {
                if let Some(t) = &c.target {
                    add(t);
                }
                for (local, _) in &c.yields {
                    add(local);
                }
            }
            Stmt::If { then_branch, else_branch, .. } => {
                for s in then_branch.iter().chain(else_branch) {
                    s.assigned_locals(out);
                }
            }
            Stmt::While { test, body, .. } => {
                for s in test.iter().chain(body) {
                    s.assigned_locals(out);
                }
            }
            Stmt::Par { blocks, .. } => {
                for b in blocks {
                    for s in &b.body {
                        s.assigned_locals(out);
                    }
                }
            }
            // Listed one by one, so that a new statement that assigns a local
            // cannot be forgotten here (loops havoc what this returns).
            Stmt::FieldWrite { .. }
            | Stmt::ArrayWrite { .. }
            | Stmt::Fresh { .. }
            | Stmt::Inhale { .. }
            | Stmt::Exhale { .. }
            | Stmt::Assert { .. }
            | Stmt::Assume { .. }
            | Stmt::Barrier { .. }
            | Stmt::Label { .. }
            | Stmt::Return { .. } => {}
        }
    }
}
