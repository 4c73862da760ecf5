//! Expressions: code and specifications share one expression language.

use super::{Block, Ident, Param, Span, Ty, Type};

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Filled in by the type checker; [`Ty::Unknown`] before.
    pub ty: Ty,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span, ty: Ty::Unknown }
    }
    pub fn boxed(self) -> Box<Expr> {
        Box::new(self)
    }

    /// The top-level conjuncts of an assertion (split at `&&` and `**`), left
    /// to right.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Binary { op: BinOp::And | BinOp::Star, lhs, rhs } => {
                let mut v = lhs.conjuncts();
                v.extend(rhs.conjuncts());
                v
            }
            _ => vec![self],
        }
    }
}

/// Binary operators, loosest-binding first within each group. The grammar's
/// precedence table is in `grammar/pvl.pest` and `docs/ARCHITECTURE.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `==>`
    Implies,
    /// `-*` (magic wand)
    Wand,
    /// `||`
    Or,
    /// `&&`
    And,
    /// `**` (separating conjunction)
    Star,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `x in xs`
    In,
    /// `+` — integer addition, sequence concatenation or bag union (by type)
    Add,
    Sub,
    Mul,
    /// `/` — integer (truncating) division
    Div,
    /// `%`
    Mod,
    /// `\` — rational division, builds fractions: `1\2`
    Frac,
    /// `x :: xs` — prepend one element
    Cons,
    /// `xs ++ x` — append one element
    Append,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Implies => "==>",
            BinOp::Wand => "-*",
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Star => "**",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Frac => "\\",
            BinOp::Cons => "::",
            BinOp::Append => "++",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `!`
    Not,
    /// `-`
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantKind {
    /// `\forall` — boolean universal quantification
    Forall,
    /// `\forall*` — iterated separating conjunction (quantified permissions)
    ForallStar,
    /// `\exists`
    Exists,
    /// `\sum` — sum of the body over the binder range
    Sum,
}

impl QuantKind {
    pub fn keyword(self) -> &'static str {
        match self {
            QuantKind::Forall => "\\forall",
            QuantKind::ForallStar => "\\forall*",
            QuantKind::Exists => "\\exists",
            QuantKind::Sum => "\\sum",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectionKind {
    Seq,
    Set,
    Bag,
}

impl CollectionKind {
    pub fn keyword(self) -> &'static str {
        match self {
            CollectionKind::Seq => "seq",
            CollectionKind::Set => "set",
            CollectionKind::Bag => "bag",
        }
    }
}

/// Built-in functions written in call position (`head(xs)`, `\matrix(m, M, N)`).
/// `Perm`, `PointsTo` and `Value` have their own [`ExprKind`] variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Head,
    Tail,
    IsEmpty,
    RemoveAt,
    Held,
    Idle,
    Running,
    BuildMap,
    CardMap,
    DisjointMap,
    EqualsMap,
    GetFromMap,
    ItemsMap,
    KeysMap,
    RemoveFromMap,
    ValuesMap,
    /// `\matrix(m, D1, D2)`
    Matrix,
    /// `\array(a, n)`
    Array,
    /// `HPerm(loc, p)` — history permission
    HPerm,
    /// `APerm(loc, p)` — action permission
    APerm,
    /// `perm(loc)` — the permission amount currently held to `loc` (a `zfrac`)
    CurPerm,
}

impl Builtin {
    /// Every built-in with its spelling and arity.
    pub const ALL: &'static [(Builtin, &'static str, usize)] = &[
        (Builtin::Head, "head", 1),
        (Builtin::Tail, "tail", 1),
        (Builtin::IsEmpty, "isEmpty", 1),
        (Builtin::RemoveAt, "removeAt", 2),
        (Builtin::Held, "held", 1),
        (Builtin::Idle, "idle", 1),
        (Builtin::Running, "running", 1),
        (Builtin::BuildMap, "buildMap", 3),
        (Builtin::CardMap, "cardMap", 1),
        (Builtin::DisjointMap, "disjointMap", 2),
        (Builtin::EqualsMap, "equalsMap", 2),
        (Builtin::GetFromMap, "getFromMap", 2),
        (Builtin::ItemsMap, "itemsMap", 1),
        (Builtin::KeysMap, "keysMap", 1),
        (Builtin::RemoveFromMap, "removeFromMap", 2),
        (Builtin::ValuesMap, "valuesMap", 1),
        (Builtin::Matrix, "\\matrix", 3),
        (Builtin::Array, "\\array", 2),
        (Builtin::HPerm, "HPerm", 2),
        (Builtin::APerm, "APerm", 2),
        (Builtin::CurPerm, "perm", 1),
    ];

    pub fn name(self) -> &'static str {
        Builtin::ALL.iter().find(|(b, _, _)| *b == self).map(|(_, n, _)| *n).unwrap_or("?")
    }
    pub fn arity(self) -> usize {
        Builtin::ALL.iter().find(|(b, _, _)| *b == self).map(|(_, _, a)| *a).unwrap_or(0)
    }
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().find(|(_, n, _)| *n == name).map(|(b, _, _)| *b)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A non-negative decimal literal (`-3` is `Neg` of `3`). PVL integers are
    /// mathematical; u128 holds every literal the parser accepts (up to
    /// `u128::MAX`, beyond is `literal_too_large`), and each stage keeps its
    /// value exactly or refuses it, never clamps it.
    IntLit(u128),
    /// `"text"`, a `string`: the characters between the quotes as written
    /// (escapes `\x` kept).
    StringLit(String),
    BoolLit(bool),
    Null,
    This,
    /// `\result`
    Result,
    /// `read` — a positive read-only permission amount (a wildcard)
    Read,
    /// `write` — full permission, 1
    Write,
    /// `none` — no permission, 0
    NoPerm,
    /// A local, parameter, field of `this`, binder or class name.
    Var(Ident),
    /// `obj.field` (also `a.length`)
    Field {
        obj: Box<Expr>,
        field: Ident,
    },
    /// `m(args)`, `obj.m(args)`, `Class.m(args)`
    Call {
        receiver: Option<Box<Expr>>,
        method: Ident,
        args: Vec<Expr>,
    },
    Builtin {
        func: Builtin,
        args: Vec<Expr>,
    },
    /// `base[index]` — array element, sequence element or map lookup
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `xs[lo..hi]`, `xs[lo..]`, `xs[..hi]`
    Slice {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    /// `xs[i -> v]` — the sequence `xs` with position `i` replaced by `v`
    SeqUpdate {
        base: Box<Expr>,
        index: Box<Expr>,
        value: Box<Expr>,
    },
    /// `new C(args)`
    New {
        class: Ident,
        args: Vec<Expr>,
    },
    /// `new T[e1][e2]...`
    NewArray {
        elem: Type,
        dims: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `c ? a : b`
    Cond {
        cond: Box<Expr>,
        then_expr: Box<Expr>,
        else_expr: Box<Expr>,
    },
    /// `(\forall T x; guard; body)` and friends. The range form
    /// `(\forall int i = lo .. hi; body)` is desugared by the parser into the guard
    /// `lo <= i && i < hi`; a binder without range or condition gets the guard
    /// `true`. VerCors 2's several bindings, `(\forall int i = 0 .. n, int j; c; b)`,
    /// are nested quantifiers, one per binding: each binding's range is the guard
    /// of its own quantifier and the condition `c` joins the innermost guard
    /// (`(\forall int i; 0 <= i && i < n; (\forall int j; c; b))`), which is also how
    /// the printer writes them (it re-parses to the same tree). `∀`, `∀*`, `∃` are
    /// read as `\forall`, `\forall*`, `\exists`. `Perm(a[*], p)` is desugared by the
    /// parser into `(\forall* int i; 0 <= i && i < a.length; Perm(a[i], p))`.
    Quant {
        kind: QuantKind,
        binder: Param,
        guard: Box<Expr>,
        body: Box<Expr>,
    },
    /// `(\let T x = value; body)`
    Let {
        binder: Param,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `\old(e)`
    Old(Box<Expr>),
    /// `\old[l](e)` — `e` in the state at the statement `label l;`
    OldAt {
        label: Ident,
        expr: Box<Expr>,
    },
    /// `[p]e` — the resource `e` (a predicate instance) scaled by the fraction `p`
    Scale {
        amount: Box<Expr>,
        expr: Box<Expr>,
    },
    /// `x?.m(args)` — calls `x.m(args)` only if `x` is not null
    OptCall {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    /// `(\forperm T x, .. \in loc; body)` — `body` for every binding of the
    /// binders at which the location `loc` is held
    ForPerm {
        binders: Vec<Param>,
        loc: Box<Expr>,
        body: Box<Expr>,
    },
    /// `*` in `a[*]` outside `Perm(a[*], p)`: always a type error.
    Any,
    /// `Perm(loc, amount)`
    Perm {
        loc: Box<Expr>,
        amount: Box<Expr>,
    },
    /// `PointsTo(loc, amount, value)` = `Perm(loc, amount) ** loc == value`
    PointsTo {
        loc: Box<Expr>,
        amount: Box<Expr>,
        value: Box<Expr>,
    },
    /// `Value(loc)` = `Perm(loc, read)`
    Value(Box<Expr>),
    /// `|e|` — size of a sequence, set, bag or map
    Size(Box<Expr>),
    /// `seq<T>{a, b}`, `set<T>{}`, `bag<T>{x}`; VerCors 2's short forms `[a, b]`,
    /// `{a, b}`, `b{a, b}` have no element type written (`elem: None`: the type
    /// checker takes the first element's), and `[t: T]`, `{t: T}`, `b{t: T}` are
    /// the empty literals `seq<T>{}`, `set<T>{}`, `bag<T>{}`.
    Collection {
        kind: CollectionKind,
        elem: Option<Type>,
        elems: Vec<Expr>,
    },
    /// `map<K,V>{k1, v1, k2, v2}` — a flat key, value list (VerCors 1), or
    /// `map<K,V>{k1 -> v1, k2 -> v2}` (VerCors 2; `arrows`, kept for the printer)
    MapLit {
        key: Type,
        value: Type,
        entries: Vec<(Expr, Expr)>,
        arrows: bool,
    },
    /// `{: e :}` — marks `e` as a trigger of the enclosing quantifier
    Trigger(Box<Expr>),
    /// `unfolding P(args) in e`
    Unfolding {
        pred: Box<Expr>,
        body: Box<Expr>,
    },
    /// `e with { ghost statements } then { ghost statements }` — ghost code run
    /// before (binding the callee's `given` parameters) and after the call (reading
    /// its `yields` results).
    WithThen {
        expr: Box<Expr>,
        with: Option<Block>,
        then: Option<Block>,
    },
}
