//! Syntactic types (as written) and semantic types (as checked).

use super::{Expr, Ident, Name, Span};

/// A type as written in the source, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Int,
    Boolean,
    Void,
    /// Separation-logic assertions: the return type of predicates.
    Resource,
    /// A fraction in (0, 1].
    Frac,
    /// A fraction in [0, 1].
    ZFrac,
    Process,
    String,
    Seq(Box<Type>),
    Set(Box<Type>),
    Bag(Box<Type>),
    Option(Box<Type>),
    Map(Box<Type>, Box<Type>),
    Tuple(Box<Type>, Box<Type>),
    /// `T[]` — a nullable reference to a heap array. `T[n]` (VerCors' sized array
    /// type) keeps its size expression for printing; it means `T[]` (nothing is
    /// known about the length, as in VerCors). In `int[m][n]` the outer array has
    /// the size `m`: `Array(Array(int, n), m)`.
    Array(Box<Type>, Option<Box<Expr>>),
    /// A class name used as a type.
    Class(Ident),
    /// The name of an enum declared in the same file (`enum E { .. }`): the
    /// parser gives every type name that names one of the file's enums this kind.
    Enum(Ident),
}

impl TypeKind {
    /// A mathematical (ghost) type: `seq`, `set`, `bag`, `map`, `option` or a
    /// tuple — values only a proof computes with, never GPU data.
    pub fn is_mathematical(&self) -> bool {
        matches!(
            self,
            TypeKind::Seq(_) | TypeKind::Set(_) | TypeKind::Bag(_) | TypeKind::Map(..) | TypeKind::Option(_) | TypeKind::Tuple(..)
        )
    }
}

impl Type {
    pub fn new(kind: TypeKind, span: Span) -> Type {
        Type { kind, span }
    }
    /// The semantic type this syntactic type denotes.
    pub fn to_ty(&self) -> Ty {
        match &self.kind {
            TypeKind::Int => Ty::Int,
            TypeKind::Boolean => Ty::Bool,
            TypeKind::Void => Ty::Void,
            TypeKind::Resource => Ty::Resource,
            TypeKind::Frac => Ty::Frac,
            TypeKind::ZFrac => Ty::ZFrac,
            TypeKind::Process => Ty::Process,
            TypeKind::String => Ty::String,
            TypeKind::Seq(t) => Ty::Seq(Box::new(t.to_ty())),
            TypeKind::Set(t) => Ty::Set(Box::new(t.to_ty())),
            TypeKind::Bag(t) => Ty::Bag(Box::new(t.to_ty())),
            TypeKind::Option(t) => Ty::Option(Box::new(t.to_ty())),
            TypeKind::Map(k, v) => Ty::Map(Box::new(k.to_ty()), Box::new(v.to_ty())),
            TypeKind::Tuple(a, b) => Ty::Tuple(Box::new(a.to_ty()), Box::new(b.to_ty())),
            TypeKind::Array(t, _) => Ty::Array(Box::new(t.to_ty())),
            TypeKind::Class(c) => Ty::Class(c.name.clone()),
            TypeKind::Enum(e) => Ty::Enum(e.name.clone()),
        }
    }
}

/// A semantic type, computed by the type checker.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ty {
    /// Not computed yet (fresh from the parser or a transformation).
    #[default]
    Unknown,
    /// Mathematical (unbounded) integers.
    Int,
    Bool,
    Void,
    /// Assertions that may hold permissions. `Bool` converts to `Resource`.
    Resource,
    /// Permission amounts: fractions `p\q`, `read`, `write`, `none`. `Int` converts
    /// to `Frac` (`Perm(a[i], 1)`).
    Frac,
    ZFrac,
    Process,
    String,
    /// The type of `null`: converts to every array and class type.
    Null,
    Seq(Box<Ty>),
    Set(Box<Ty>),
    Bag(Box<Ty>),
    Option(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Tuple(Box<Ty>, Box<Ty>),
    Array(Box<Ty>),
    Class(Name),
    /// A value of `enum E { .. }`: one of its constants.
    Enum(Name),
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Unknown => write!(f, "?"),
            Ty::Int => write!(f, "int"),
            Ty::Bool => write!(f, "boolean"),
            Ty::Void => write!(f, "void"),
            Ty::Resource => write!(f, "resource"),
            Ty::Frac => write!(f, "frac"),
            Ty::ZFrac => write!(f, "zfrac"),
            Ty::Process => write!(f, "process"),
            Ty::String => write!(f, "string"),
            Ty::Null => write!(f, "null"),
            Ty::Seq(t) => write!(f, "seq<{t}>"),
            Ty::Set(t) => write!(f, "set<{t}>"),
            Ty::Bag(t) => write!(f, "bag<{t}>"),
            Ty::Option(t) => write!(f, "option<{t}>"),
            Ty::Map(k, v) => write!(f, "map<{k},{v}>"),
            Ty::Tuple(a, b) => write!(f, "tuple<{a},{b}>"),
            Ty::Array(t) => write!(f, "{t}[]"),
            Ty::Class(c) | Ty::Enum(c) => write!(f, "{c}"),
        }
    }
}
