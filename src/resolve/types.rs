//! Relations between semantic types: assignability (with PVL's implicit coercions),
//! comparability and the join of two branch types.
//!
//! [`Ty::Unknown`] is compatible with everything, silently: it marks an expression
//! whose type could not be determined because of an error already reported, so it
//! must never cause a second diagnostic.

use crate::ast::Ty;

/// Whether a value of type `from` may be used where `to` is expected.
///
/// Coercions: `int` → `frac`/`zfrac` (`Perm(a[i], 1)`), `frac` ↔ `zfrac`,
/// `boolean` → `resource` (booleans are assertions), `null` → any array, class or
/// option type. Containers coerce element-wise.
pub fn assignable(from: &Ty, to: &Ty) -> bool {
    use Ty::*;
    match (from, to) {
        (Unknown, _) | (_, Unknown) => true,
        (Int, Frac | ZFrac) | (Frac, ZFrac) | (ZFrac, Frac) => true,
        (Bool, Resource) => true,
        (Null, Array(_) | Class(_) | Option(_)) => true,
        (Seq(a), Seq(b)) | (Set(a), Set(b)) | (Bag(a), Bag(b)) | (Option(a), Option(b)) | (Array(a), Array(b)) => same(a, b),
        (Map(k1, v1), Map(k2, v2)) | (Tuple(k1, v1), Tuple(k2, v2)) => same(k1, k2) && same(v1, v2),
        (a, b) => a == b,
    }
}

/// Equality of element types, up to `Unknown` and the `frac`/`zfrac` pair.
pub fn same(a: &Ty, b: &Ty) -> bool {
    use Ty::*;
    match (a, b) {
        (Unknown, _) | (_, Unknown) => true,
        (Frac | ZFrac, Frac | ZFrac) => true,
        (Seq(a), Seq(b)) | (Set(a), Set(b)) | (Bag(a), Bag(b)) | (Option(a), Option(b)) | (Array(a), Array(b)) => same(a, b),
        (Map(k1, v1), Map(k2, v2)) | (Tuple(k1, v1), Tuple(k2, v2)) => same(k1, k2) && same(v1, v2),
        (a, b) => a == b,
    }
}

/// Whether `a == b` makes sense: one converts to the other.
pub fn comparable(a: &Ty, b: &Ty) -> bool {
    assignable(a, b) || assignable(b, a)
}

/// The type of `c ? a : b` (or any two values that must share a type): the wider
/// of the two, or `None` if neither converts to the other. `Unknown` on one side
/// gives the other side's type.
pub fn join(a: &Ty, b: &Ty) -> Option<Ty> {
    match (a, b) {
        (Ty::Unknown, t) | (t, Ty::Unknown) => Some(t.clone()),
        _ if assignable(a, b) => Some(b.clone()),
        _ if assignable(b, a) => Some(a.clone()),
        _ => None,
    }
}

/// Integers and permission amounts: the operands of arithmetic and ordering.
pub fn is_numeric(t: &Ty) -> bool {
    matches!(t, Ty::Int | Ty::Frac | Ty::ZFrac | Ty::Unknown)
}

/// A boolean or an assertion: the type contract clauses, `assert` and `**` need.
pub fn is_assertion(t: &Ty) -> bool {
    matches!(t, Ty::Bool | Ty::Resource | Ty::Unknown)
}

/// The element type of a sequence, set or bag.
pub fn collection_elem(t: &Ty) -> Option<&Ty> {
    match t {
        Ty::Seq(e) | Ty::Set(e) | Ty::Bag(e) => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coercions() {
        assert!(assignable(&Ty::Int, &Ty::Frac));
        assert!(!assignable(&Ty::Frac, &Ty::Int));
        assert!(assignable(&Ty::Bool, &Ty::Resource));
        assert!(!assignable(&Ty::Resource, &Ty::Bool));
        assert!(assignable(&Ty::Null, &Ty::Array(Box::new(Ty::Int))));
        assert!(!assignable(&Ty::Null, &Ty::Int));
        assert!(assignable(&Ty::Unknown, &Ty::Bool));
        assert!(!assignable(&Ty::Seq(Box::new(Ty::Int)), &Ty::Seq(Box::new(Ty::Bool))));
        assert_eq!(join(&Ty::Int, &Ty::Frac), Some(Ty::Frac));
        assert_eq!(join(&Ty::Bool, &Ty::Resource), Some(Ty::Resource));
        assert_eq!(join(&Ty::Int, &Ty::Bool), None);
        assert!(comparable(&Ty::Null, &Ty::Class("A".into())));
    }
}
