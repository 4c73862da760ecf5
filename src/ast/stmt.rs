//! Statements and the GPU constructs (par blocks, barriers, invariant blocks).

use super::{Clause, Contract, Directive, Expr, Ident, Param, Span, Type};

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncDec {
    Inc,
    Dec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    Lock,
    Unlock,
    Wait,
    Notify,
    Fork,
    Join,
}

impl SyncKind {
    pub fn keyword(self) -> &'static str {
        match self {
            SyncKind::Lock => "lock",
            SyncKind::Unlock => "unlock",
            SyncKind::Wait => "wait",
            SyncKind::Notify => "notify",
            SyncKind::Fork => "fork",
            SyncKind::Join => "join",
        }
    }
}

/// Verification statements that take one assertion (Viper's vocabulary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecStmtKind {
    /// Check, then keep as knowledge.
    Assert,
    /// Add as knowledge without checking.
    Assume,
    /// Add permissions and facts.
    Inhale,
    /// Check and remove permissions.
    Exhale,
    /// Replace a predicate's body by the predicate instance.
    Fold,
    /// Replace a predicate instance by its body.
    Unfold,
    /// Check that the assertion does *not* hold (is refutable).
    Refute,
    /// `apply w;` — use a magic wand `a -* b`: give up `a` and the wand, get `b`.
    Apply,
}

impl SpecStmtKind {
    pub fn keyword(self) -> &'static str {
        match self {
            SpecStmtKind::Assert => "assert",
            SpecStmtKind::Assume => "assume",
            SpecStmtKind::Inhale => "inhale",
            SpecStmtKind::Exhale => "exhale",
            SpecStmtKind::Fold => "fold",
            SpecStmtKind::Unfold => "unfold",
            SpecStmtKind::Refute => "refute",
            SpecStmtKind::Apply => "apply",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `T x;` or `T x = e;` — one declarator (`int a, b;` becomes two statements).
    LocalDecl {
        ty: Type,
        name: Ident,
        init: Option<Expr>,
    },
    /// `target = value;` — the target is any expression syntactically (variable,
    /// field, array element); the resolver checks that it is assignable.
    Assign {
        target: Expr,
        value: Expr,
    },
    /// `x++;` / `x--;`
    IncDec {
        target: Ident,
        op: IncDec,
    },
    /// An expression evaluated for its effect (a call).
    Expr(Expr),
    If {
        cond: Expr,
        then_branch: Box<Stmt>,
        else_branch: Option<Box<Stmt>>,
    },
    Loop(Loop),
    Return(Option<Expr>),
    Spec {
        kind: SpecStmtKind,
        expr: Expr,
    },
    /// `lock e;`, `unlock e;`, `wait e;`, `notify e;`, `fork e;`, `join e;`
    Sync {
        kind: SyncKind,
        obj: Expr,
    },
    /// `atomic (inv1, inv2) S`
    Atomic {
        invariants: Vec<Ident>,
        body: Box<Stmt>,
    },
    /// `invariant NAME(RESOURCE) { ... }`
    InvariantBlock {
        name: Ident,
        resource: Expr,
        body: Block,
    },
    Barrier(Barrier),
    Par(Par),
    /// `vec (int i = lo .. hi) { ... }` — a vector block (VerCors grammar; VerCors
    /// itself rejects it, and so does alpine's verifier).
    Vec(Box<VecBlock>),
    /// `package a -* b S` — create a magic wand, `S` (usually a block) the proof
    /// that turns `a` and the resources kept into `b`.
    Package {
        wand: Expr,
        proof: Box<Stmt>,
    },
    Block(Block),
    /// `label l;` — names the state here, for `\old[l](e)` in the statements
    /// that follow it in the same block (and in blocks nested in them).
    Label(Ident),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// `gpuopt loop_unroll`/`iter_merge` lines written before the invariants.
    pub directives: Vec<Directive>,
    /// The `loop_invariant` clauses (other clause kinds are rejected by the parser).
    pub contract: Contract,
    pub kind: LoopKind,
    pub body: Box<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopKind {
    While {
        cond: Expr,
    },
    /// `for (init; cond; update)` — each part may be empty; `init` and `update` are
    /// comma-separated simple statements (declaration, assignment, `x++`, or a bare
    /// expression such as the `k` of `for (k; k < N; k++)`).
    For {
        init: Vec<Stmt>,
        cond: Option<Expr>,
        update: Vec<Stmt>,
    },
}

/// `barrier(L) { clauses }` (form A) or `barrier(L) clauses { stmts }` (form B).
#[derive(Clone, Debug, PartialEq)]
pub struct Barrier {
    /// The name of the enclosing par block the barrier synchronises.
    pub label: Ident,
    /// `barrier(L; inv1, inv2)`: invariant blocks the barrier may use.
    pub invariants: Vec<Ident>,
    pub contract: Contract,
    /// `None` for form A (contract inside braces, no body); `Some` for form B.
    /// VerCors 1 only checks the redistribution of form B; the printer keeps the form.
    pub body: Option<Block>,
    pub span: Span,
}

/// A par statement: one or more units, all running concurrently (`par A .. and B ..`,
/// `parallel { par A .. par B .. }`) or one after the other (`sequential { .. }`).
#[derive(Clone, Debug, PartialEq)]
pub struct Par {
    /// `gpuopt fuse F N;` written before `par`.
    pub directives: Vec<Directive>,
    /// Region contract written before the keyword `par` (always empty in practice).
    pub contract: Contract,
    /// How the units are written and composed.
    pub form: ParForm,
    /// At least one unit (the parser rejects an empty region).
    pub units: Vec<ParUnit>,
    pub span: Span,
}

/// The concrete form of a [`Par`] statement. The first two mean the same: every
/// unit's threads run concurrently with the other units' threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ParForm {
    /// `par A(..) .. and B(..) ..` (a single `par` block too).
    #[default]
    And,
    /// `parallel { par A(..) .. par B(..) .. }` (VerCors 2).
    Parallel,
    /// `sequential { par A(..) .. par B(..) .. }` (VerCors 2): the units run one
    /// after the other, each one's threads concurrently.
    Sequential,
}

impl ParForm {
    /// The region keyword (`None` for `par .. and ..`).
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            ParForm::And => None,
            ParForm::Parallel => Some("parallel"),
            ParForm::Sequential => Some("sequential"),
        }
    }
}

/// `NAME(int i = lo .. hi, int j = lo .. hi) contract { body }`; the name and the
/// parenthesised iterators are optional (`par context P; { .. }` is one thread).
/// A body written as another statement than a block is kept as a block holding it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParUnit {
    pub name: Option<Ident>,
    /// 0, 1 or 2 iterators in practice; `(int tid = lo .. hi)` is the half-open
    /// range `lo <= tid < hi`.
    pub iters: Vec<ParIter>,
    pub contract: Contract,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParIter {
    pub var: Param,
    pub lo: Expr,
    pub hi: Expr,
    pub span: Span,
}

impl Contract {
    /// Iterate over the expressions of the clauses (skipping given/yields).
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.clauses.iter().flat_map(|c| clause_exprs(c).into_iter())
    }

    /// The clauses a caller must establish: `requires`, `context` and
    /// `context_everywhere`, in order.
    pub fn preconditions(&self) -> impl Iterator<Item = &Expr> {
        use super::ClauseKind::*;
        self.clauses.iter().filter_map(|c| match &c.kind {
            Requires(e) | Context(e) | ContextEverywhere(e) => Some(e),
            _ => None,
        })
    }
}

fn clause_exprs(c: &Clause) -> Vec<&Expr> {
    use super::ClauseKind::*;
    match &c.kind {
        Requires(e) | Ensures(e) | Context(e) | ContextEverywhere(e) | LoopInvariant(e) | KernelInvariant(e) | Signals(_, e) => vec![e],
        LockInvariant(e) => vec![e],
        Modifies(es) | Accessible(es) | Decreases(super::Decreases::Measure(es)) => es.iter().collect(),
        Given(_) | Yields(_) | Decreases(_) => vec![],
    }
}

/// `vec (int i = lo .. hi) { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct VecBlock {
    pub iter: ParIter,
    pub body: Block,
    pub span: Span,
}
