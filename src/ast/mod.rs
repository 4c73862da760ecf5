//! The PVL abstract syntax tree.
//!
//! Plain data: every type is `Clone + Send + Sync`, carries a byte [`Span`] into the
//! source it was parsed from, and can be rewritten freely by transformations (see
//! [`visit`] for the read-only [`visit::Visitor`] and the rewriting [`visit::VisitMut`],
//! and [`subst`] for free variables, fresh names and capture-avoiding substitution).
//!
//! Invariants:
//! * Parentheses are not represented: the tree encodes grouping, and the printer puts
//!   back exactly the parentheses that precedence needs (plus a few for clarity).
//! * Nodes made by a transformation (rather than parsed) carry [`Span::DUMMY`] or the
//!   span of the source node they were derived from, so diagnostics still point
//!   somewhere sensible.
//! * `Expr::ty` is [`Ty::Unknown`] after parsing; the type checker (`resolve`) fills it
//!   in. Equality of trees compares types too, so compare trees of the same stage.

pub mod subst;
pub mod visit;

mod expr;
mod span;
mod stmt;
mod ty;

pub use expr::*;
pub use span::*;
pub use stmt::*;
pub use ty::*;

use std::sync::Arc;

/// A name as written in the source. Cheap to clone (an `Arc<str>`).
pub type Name = Arc<str>;

/// An identifier occurrence: a name and where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

impl Ident {
    pub fn new(name: impl AsRef<str>, span: Span) -> Ident {
        Ident { name: Arc::from(name.as_ref()), span }
    }
    pub fn as_str(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Display for Ident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// A whole PVL file.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub classes: Vec<Class>,
    /// Every comment of the file, in source order (`//` and `/* */`, text included).
    /// Kept so that `alpine fmt` never loses them; the printer re-attaches each
    /// comment after the code it trails on its line, or else in front of the first
    /// class, member or statement that follows it.
    pub comments: Vec<Comment>,
    /// Byte offsets of the blank lines of the source (lines with nothing but
    /// whitespace, outside comments), in order. Layout only: the printer keeps one
    /// blank line wherever the author separated two statements, fields or comments
    /// by one or more.
    pub blank_lines: Vec<u32>,
    pub span: Span,
}

impl Program {
    /// The names of the predicates (`resource p(..) = ..;`) of every class.
    pub fn predicate_names(&self) -> std::collections::HashSet<&str> {
        self.classes
            .iter()
            .flat_map(|c| &c.members)
            .filter_map(|m| match m {
                Member::Method(m) if m.is_predicate() => Some(m.name.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// The comment's text including its `//` or `/*` `*/` delimiters, without the
    /// line end.
    pub text: String,
    pub span: Span,
    /// End offset of the last token on the source line where the comment starts,
    /// if that line has one (the token may follow a `/* */` comment). Layout only:
    /// the printer keeps the comment at the end of the printed line of the construct
    /// whose last token that is (a trailing comment, `x = n; // copy`).
    pub line_code_end: Option<u32>,
}

/// The name of the pseudo-class that holds a file's top-level (class-free) methods,
/// pure functions and predicates. No source name can be it: `$` is not an identifier
/// character, and the builder rejects a backtick-quoted class of this name.
pub const GLOBAL_CLASS: &str = "$toplevel";

/// A class, or a run of top-level declarations ([`Class::is_global`]).
///
/// Top-level declarations between two classes form one global `Class` named
/// [`GLOBAL_CLASS`], so a file keeps its order of declarations; every such run is a
/// part of one namespace (the type checker merges them). Their methods are static
/// (`Modifiers::is_static` is set by the parser, and the printer does not write it).
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// Clauses written before `class` (VerCors 2: `lock_invariant e;`); always
    /// empty for a run of top-level declarations.
    pub contract: Contract,
    pub name: Ident,
    pub members: Vec<Member>,
    pub span: Span,
}

impl Class {
    /// A run of top-level declarations rather than a class.
    pub fn is_global(&self) -> bool {
        is_global_class(&self.name.name)
    }
}

/// Whether `class` is the name of the top-level pseudo-class.
pub fn is_global_class(class: &str) -> bool {
    class == GLOBAL_CLASS
}

/// How a method is named to users: `C.m` for a member of class `C`, `m` for a
/// top-level method or function.
pub fn qualified_name(class: &str, method: &str) -> String {
    if is_global_class(class) {
        method.to_string()
    } else {
        format!("{class}.{method}")
    }
}

// A class has a handful of members; boxing methods would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    Field(Field),
    /// Methods, pure functions, predicates (`resource` methods) and constructors.
    Method(Method),
    /// `enum E { A, B }` (top level only).
    Enum(EnumDecl),
    /// `adt T { pure T f(..); axiom e; }` (top level only).
    Adt(AdtDecl),
    /// `model M { .. }` (top level only).
    Model(ModelDecl),
    /// `axiom name { e }` (top level only).
    Axiom(AxiomDecl),
}

impl Member {
    pub fn span(&self) -> Span {
        match self {
            Member::Field(f) => f.span,
            Member::Method(m) => m.span,
            Member::Enum(e) => e.span,
            Member::Adt(a) => a.span,
            Member::Model(m) => m.span,
            Member::Axiom(a) => a.span,
        }
    }
}

/// `enum E { A, B, C }`: a type `E` whose values are exactly the constants, all
/// distinct, written `E.A` (VerCors 2). A type named `E` in the same file is
/// [`TypeKind::Enum`].
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDecl {
    pub name: Ident,
    pub constants: Vec<Ident>,
    pub span: Span,
}

/// `adt T<A, ..> { pure R f(..); axiom e; }`: an abstract data type, its
/// functions (abstract static pure [`Method`]s) and axioms, in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct AdtDecl {
    pub name: Ident,
    pub type_vars: Vec<Ident>,
    pub members: Vec<AdtMember>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AdtMember {
    /// `pure R f(T x, ..);` (static, pure, abstract).
    Function(Method),
    /// `axiom e;`
    Axiom(Expr, Span),
}

/// `model M { int x; process p(..) = e; action a(..); }` (VerCors' models and
/// futures), in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDecl {
    pub name: Ident,
    pub members: Vec<ModelMember>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ModelMember {
    /// `int x, y;` (one per name, as class fields).
    Field(Field),
    /// `contract process p(T x) = e;`: a [`Method`] of type `process` with an
    /// expression body.
    Process(Method),
    /// `contract action a(T x);`: the name, parameters and contract of an
    /// abstract [`Method`] without return type.
    Action(Method),
}

impl ModelMember {
    pub fn span(&self) -> Span {
        match self {
            ModelMember::Field(f) => f.span,
            ModelMember::Process(m) | ModelMember::Action(m) => m.span,
        }
    }
}

/// `axiom name { e }`: a global assumption.
#[derive(Clone, Debug, PartialEq)]
pub struct AxiomDecl {
    pub name: Ident,
    pub expr: Expr,
    pub span: Span,
}

/// `int x;` — one field per name (`int x, y;` is two fields).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// `final int x;` (VerCors 2).
    pub is_final: bool,
    pub ty: Type,
    pub name: Ident,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    /// `gpuopt` lines written before the contract (method-level directives).
    pub directives: Vec<Directive>,
    pub contract: Contract,
    pub modifiers: Modifiers,
    /// The declared return type; `None` for a constructor.
    pub ret: Option<Type>,
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: MethodBody,
    /// Written in VerCors 2's keyword form: a constructor `constructor(..) { .. }`
    /// (its `name` is the class's, with the span of the keyword) rather than
    /// `C(..)`, or a thread's `run { .. }` (a `void run()` without parameters, its
    /// `name` at the keyword).
    pub keyword_form: bool,
    pub span: Span,
}

impl Method {
    pub fn is_constructor(&self) -> bool {
        self.ret.is_none()
    }
    /// A predicate is a method whose return type is `resource` (VerCors 1 decides by
    /// type, not by keyword).
    pub fn is_predicate(&self) -> bool {
        matches!(&self.ret, Some(Type { kind: TypeKind::Resource, .. }))
    }
    /// A pure function: declared `pure`, or any non-predicate with an `= expr;` body.
    pub fn is_pure_function(&self) -> bool {
        !self.is_predicate() && (self.modifiers.is_pure || matches!(self.body, MethodBody::Expr(_)))
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    pub is_static: bool,
    pub is_pure: bool,
    pub is_inline: bool,
    pub is_thread_local: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MethodBody {
    /// `{ ... }`
    Block(Block),
    /// `= expr;` — a function or predicate body.
    Expr(Expr),
    /// `;` — no body: an abstract method or lemma whose contract is trusted.
    Abstract,
}

/// A typed name: method parameter, `given`/`yields` ghost parameter, quantifier
/// binder, par iterator variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: Type,
    pub name: Ident,
    pub span: Span,
}

/// The clauses written before a method, loop, par unit or barrier, in source order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contract {
    pub clauses: Vec<Clause>,
}

impl Contract {
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ClauseKind {
    Requires(Expr),
    Ensures(Expr),
    /// `context E;` = `requires E; ensures E;`
    Context(Expr),
    /// Pre- and postcondition, and an invariant of every loop, par unit and barrier
    /// inside the method.
    ContextEverywhere(Expr),
    LoopInvariant(Expr),
    KernelInvariant(Expr),
    /// `given T x;` — ghost input parameter.
    Given(Param),
    /// `yields T x;` — ghost output parameter.
    Yields(Param),
    /// `signals (T e) E;`
    Signals(Param, Expr),
    /// `modifies e, ...;`
    Modifies(Vec<Expr>),
    /// `accessible e, ...;`
    Accessible(Vec<Expr>),
    /// `lock_invariant e;` — written before `class` (VerCors 2): the class's
    /// lock invariant, as `resource lock_invariant() = e;` in the class.
    LockInvariant(Expr),
    /// `decreases;`, `decreases assume;`, `decreases e, ..;` — a termination
    /// measure.
    Decreases(Decreases),
}

/// What a `decreases` clause says.
#[derive(Clone, Debug, PartialEq)]
pub enum Decreases {
    /// `decreases;` — the method or function does not recurse.
    NoRecursion,
    /// `decreases assume;` — termination is assumed.
    Assume,
    /// `decreases e1, e2;` — a (lexicographic) measure.
    Measure(Vec<Expr>),
}

impl ClauseKind {
    pub fn keyword(&self) -> &'static str {
        match self {
            ClauseKind::Requires(_) => "requires",
            ClauseKind::Ensures(_) => "ensures",
            ClauseKind::Context(_) => "context",
            ClauseKind::ContextEverywhere(_) => "context_everywhere",
            ClauseKind::LoopInvariant(_) => "loop_invariant",
            ClauseKind::KernelInvariant(_) => "kernel_invariant",
            ClauseKind::Given(_) => "given",
            ClauseKind::Yields(_) => "yields",
            ClauseKind::Signals(..) => "signals",
            ClauseKind::Modifies(_) => "modifies",
            ClauseKind::Accessible(_) => "accessible",
            ClauseKind::LockInvariant(_) => "lock_invariant",
            ClauseKind::Decreases(_) => "decreases",
        }
    }
}

/// An Alpinist `gpuopt` directive.
#[derive(Clone, Debug, PartialEq)]
pub struct Directive {
    pub kind: DirectiveKind,
    pub span: Span,
}

/// An integer literal argument of a directive (`gpuopt loop_unroll i 3;`); the
/// parser accepts at most `i64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Num {
    pub value: u64,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixOrder {
    /// `R`: row-major, `M[i][j]` → `M[D2*i + j]`.
    Row,
    /// `C`: column-major, `M[i][j]` → `M[D1*j + i]`.
    Column,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKind {
    Inter,
    Intra,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DirectiveKind {
    /// `gpuopt loop_unroll X K;` (loop level)
    LoopUnroll { var: Ident, factor: Num },
    /// `gpuopt iter_merge X M;` (loop level)
    IterMerge { var: Ident, factor: Num },
    /// `gpuopt matrix_lin M R|C D1 D2;` (method level)
    MatrixLin { matrix: Ident, order: MatrixOrder, rows: Expr, cols: Expr },
    /// `gpuopt glob_to_reg A L1 L2 ...;` (method level): `array` is an identifier
    /// optionally followed by subscripts, each location a full expression.
    GlobToReg { array: Expr, locations: Vec<Expr> },
    /// `gpuopt tile inter|intra N;` (method level)
    Tile { kind: TileKind, size: Num },
    /// `gpuopt fuse F N;` (par level): fuse F kernels, N = thread-block size.
    Fuse { count: Num, block_size: Num },
}

impl DirectiveKind {
    pub fn keyword(&self) -> &'static str {
        match self {
            DirectiveKind::LoopUnroll { .. } => "loop_unroll",
            DirectiveKind::IterMerge { .. } => "iter_merge",
            DirectiveKind::MatrixLin { .. } => "matrix_lin",
            DirectiveKind::GlobToReg { .. } => "glob_to_reg",
            DirectiveKind::Tile { .. } => "tile",
            DirectiveKind::Fuse { .. } => "fuse",
        }
    }
}

#[cfg(test)]
mod tests {
    /// The AST is plain data that later stages move between threads (rayon).
    #[test]
    fn ast_is_plain_shareable_data() {
        fn plain<T: Clone + Send + Sync + 'static>() {}
        plain::<super::Program>();
        plain::<super::Expr>();
        plain::<super::Stmt>();
    }
}
