//! Values of the two-thread program as Z3 terms, and C's operations on them.
//!
//! Integers are bit-vectors of their C width (unsigned arithmetic wraps as C
//! says; signed arithmetic wraps too, and the executor adds the assumption that
//! it does not overflow, see `expr.rs`). `bool` is an 8-bit 0/1. Floating-point
//! values are bit-vectors of their width that only uninterpreted functions look
//! at: `a + b` on floats is `fadd32(a, b)`, so equal inputs give equal outputs
//! (which keeps uniform values uniform) and nothing else is known — sound for
//! races, which never depend on float arithmetic being IEEE. Pointers are a base
//! (which array, see `memory.rs`) and a byte offset. Structs and vectors held in
//! private variables are not tracked as whole values (`Opaque`); their fields are
//! (see `Binding::Aggregate` in `exec.rs`).

use crate::cfront::ir::{Module, Type};
use z3::ast::{Array, Ast, Bool, BV};
use z3::{FuncDecl, Sort};

/// Width of a pointer's base (the id of the array it points into; 0 is null).
pub(crate) const BASE_BITS: u32 = 16;
/// Width of byte offsets and sizes.
pub(crate) const OFFSET_BITS: u32 = 64;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    /// An integer, bool or float, as its bits.
    Bits(BV),
    /// A pointer: array id and byte offset.
    Ptr { base: BV, off: BV },
    /// A Boolean of the encoding itself (predicates, access-log flags).
    Flag(Bool),
    /// One thread's view of an array's contents (element index → element bits).
    Mem(Array),
    /// A value not tracked (struct, vector, void): reading it gives nothing.
    Opaque,
}

impl Val {
    pub(crate) fn bits(&self) -> Option<&BV> {
        match self {
            Val::Bits(b) => Some(b),
            _ => None,
        }
    }

    /// A fresh value of the same shape (a havoc).
    pub(crate) fn havoc(&self, prefix: &str) -> Val {
        match self {
            Val::Bits(b) => Val::Bits(BV::fresh_const(prefix, b.get_size())),
            Val::Ptr { .. } => fresh_ptr(prefix),
            Val::Flag(_) => Val::Flag(Bool::fresh_const(prefix)),
            Val::Mem(a) => {
                let range = a.get_sort().array_range().unwrap_or(Sort::bitvector(8));
                Val::Mem(Array::fresh_const(prefix, &Sort::bitvector(OFFSET_BITS), &range))
            }
            Val::Opaque => Val::Opaque,
        }
    }

    /// `c ? a : b` for values of the same shape; `Opaque` when they differ.
    pub(crate) fn ite(c: &Bool, a: &Val, b: &Val) -> Val {
        if let Some(k) = c.as_bool() {
            return if k { a.clone() } else { b.clone() };
        }
        if a == b {
            return a.clone();
        }
        match (a, b) {
            (Val::Bits(x), Val::Bits(y)) if x.get_size() == y.get_size() => Val::Bits(c.ite(x, y)),
            (Val::Ptr { base: b1, off: o1 }, Val::Ptr { base: b2, off: o2 }) => Val::Ptr { base: c.ite(b1, b2), off: c.ite(o1, o2) },
            (Val::Flag(x), Val::Flag(y)) => Val::Flag(c.ite(x, y)),
            (Val::Mem(x), Val::Mem(y)) => Val::Mem(c.ite(x, y)),
            _ => Val::Opaque,
        }
    }

    /// Equality of two values of the same shape (`true` for untracked ones is
    /// never claimed: `None`).
    pub(crate) fn same(&self, other: &Val) -> Option<Bool> {
        match (self, other) {
            (Val::Bits(x), Val::Bits(y)) if x.get_size() == y.get_size() => Some(x.eq(y)),
            (Val::Ptr { base: b1, off: o1 }, Val::Ptr { base: b2, off: o2 }) => Some(Bool::and(&[b1.eq(b2), o1.eq(o2)])),
            (Val::Flag(x), Val::Flag(y)) => Some(x.eq(y)),
            (Val::Mem(x), Val::Mem(y)) => Some(x.eq(y)),
            _ => None,
        }
    }
}

pub(crate) fn fresh_ptr(prefix: &str) -> Val {
    Val::Ptr { base: BV::fresh_const(prefix, BASE_BITS), off: BV::fresh_const(prefix, OFFSET_BITS) }
}

pub(crate) fn null_ptr() -> Val {
    Val::Ptr { base: BV::from_u64(0, BASE_BITS), off: BV::from_u64(0, OFFSET_BITS) }
}

pub(crate) fn offset(n: u64) -> BV {
    BV::from_u64(n, OFFSET_BITS)
}

/// The bit width a scalar of this type is held in (`None`: not a scalar).
pub(crate) fn bits_of(ty: &Type) -> Option<u32> {
    match ty {
        Type::Bool => Some(8),
        Type::Int { bits, .. } | Type::Float { bits } => Some(u32::from(*bits)),
        // OpenCL's events are values the checker follows (`group.rs`).
        Type::Opaque(name) if name == "event_t" => Some(64),
        _ => None,
    }
}

pub(crate) fn is_float(ty: &Type) -> bool {
    matches!(ty, Type::Float { .. })
}

pub(crate) fn is_signed(ty: &Type) -> bool {
    matches!(ty, Type::Int { signed: true, .. })
}

/// A fresh value of a C type (an uninitialised variable, an untracked read).
pub(crate) fn fresh_of(ty: &Type, prefix: &str) -> Val {
    match ty {
        Type::Pointer { .. } => fresh_ptr(prefix),
        _ => match bits_of(ty) {
            Some(w) => Val::Bits(BV::fresh_const(prefix, w)),
            None => Val::Opaque,
        },
    }
}

/// A named value of a C type, the same in both threads (a kernel argument).
pub(crate) fn named_of(ty: &Type, name: &str) -> Val {
    match ty {
        Type::Pointer { .. } => {
            Val::Ptr { base: BV::new_const(format!("{name}.base"), BASE_BITS), off: BV::new_const(format!("{name}.off"), OFFSET_BITS) }
        }
        _ => match bits_of(ty) {
            Some(w) => Val::Bits(BV::new_const(name.to_string(), w)),
            None => Val::Opaque,
        },
    }
}

/// C's truth of a scalar (`!= 0`; a pointer: not null).
pub(crate) fn truthy(v: &Val) -> Option<Bool> {
    match v {
        Val::Bits(b) => Some(b.eq(BV::from_u64(0, b.get_size())).not()),
        Val::Ptr { base, off } => Some(Bool::or(&[base.eq(BV::from_u64(0, BASE_BITS)).not(), off.eq(offset(0)).not()])),
        Val::Flag(f) => Some(f.clone()),
        _ => None,
    }
}

/// A Boolean as a C value of `ty` (0 or 1).
pub(crate) fn from_bool(b: &Bool, ty: &Type) -> Val {
    let w = bits_of(ty).unwrap_or(32);
    Val::Bits(b.ite(&BV::from_u64(1, w), &BV::from_u64(0, w)))
}

/// An integer resized to `w` bits, extended by its own signedness.
pub(crate) fn resize(b: &BV, w: u32, signed: bool) -> BV {
    let n = b.get_size();
    if n == w {
        b.clone()
    } else if n > w {
        b.extract(w - 1, 0)
    } else if signed {
        b.sign_ext(w - n)
    } else {
        b.zero_ext(w - n)
    }
}

/// An uninterpreted function application: the same arguments give the same
/// result in both threads.
pub(crate) fn apply_uf(name: &str, args: &[&BV], result_bits: u32) -> BV {
    let sorts: Vec<Sort> = args.iter().map(|a| Sort::bitvector(a.get_size())).collect();
    let sort_refs: Vec<&Sort> = sorts.iter().collect();
    let widths: Vec<String> = args.iter().map(|a| a.get_size().to_string()).collect();
    let f = FuncDecl::new(format!("{name}_{}_{result_bits}", widths.join("_")), &sort_refs, &Sort::bitvector(result_bits));
    let dyn_args: Vec<&dyn Ast> = args.iter().map(|a| *a as &dyn Ast).collect();
    f.apply(&dyn_args).as_bv().unwrap_or_else(|| BV::fresh_const("uf", result_bits))
}

/// The C conversion of `v` from type `from` to type `to`.
pub(crate) fn convert(v: &Val, from: &Type, to: &Type) -> Val {
    if from == to {
        return v.clone();
    }
    match (v, to) {
        (_, Type::Bool) => match truthy(v) {
            Some(b) => from_bool(&b, to),
            None => fresh_of(to, "bool"),
        },
        (Val::Bits(b), Type::Int { bits, .. }) if !is_float(from) => Val::Bits(resize(b, u32::from(*bits), is_signed(from))),
        (Val::Bits(b), Type::Opaque(_)) if !is_float(from) && bits_of(to).is_some() => {
            Val::Bits(resize(b, bits_of(to).unwrap_or(64), is_signed(from)))
        }
        (Val::Bits(b), Type::Float { bits }) if is_float(from) && u32::from(*bits) == b.get_size() => v.clone(),
        (Val::Bits(b), _) if bits_of(to).is_some() => {
            // int ↔ float, float ↔ float of another width: uninterpreted.
            let kind = if is_float(from) { "ftoi" } else { "itof" };
            let kind = if is_float(from) && is_float(to) { "ftof" } else { kind };
            let sign = if is_signed(from) || is_signed(to) { "s" } else { "u" };
            Val::Bits(apply_uf(&format!("{kind}{sign}"), &[b], bits_of(to).unwrap_or(32)))
        }
        (Val::Ptr { .. }, Type::Pointer { .. }) => v.clone(),
        (Val::Bits(b), Type::Pointer { .. }) => match b.as_u64() {
            Some(0) => null_ptr(),
            // An integer made into a pointer: an array alpine cannot name (a
            // later access through it is reported as untracked).
            _ => Val::Ptr { base: apply_uf("int_to_base", &[b], BASE_BITS), off: resize(b, OFFSET_BITS, false) },
        },
        (Val::Ptr { base, off }, _) if bits_of(to).is_some() => Val::Bits(apply_uf("ptr_to_int", &[base, off], bits_of(to).unwrap_or(64))),
        _ => match bits_of(to) {
            Some(_) => fresh_of(to, "cast"),
            None if matches!(to, Type::Pointer { .. }) => fresh_ptr("cast"),
            None => Val::Opaque,
        },
    }
}

/// Size in bytes of a C type (struct layout: C's, fields aligned to their size).
pub(crate) fn size_of(module: &Module, ty: &Type) -> Option<u64> {
    Some(match ty {
        Type::Void | Type::Function => 1,
        Type::Bool => 1,
        Type::Int { bits, .. } | Type::Float { bits } => u64::from(*bits) / 8,
        Type::Pointer { .. } | Type::Opaque(_) => 8,
        Type::Array { elem, len } => size_of(module, elem)?.checked_mul(len.unwrap_or(0))?,
        Type::Vector { elem, lanes } => size_of(module, elem)? * u64::from(if *lanes == 3 { 4 } else { *lanes }),
        Type::Struct(name) => struct_layout(module, name)?.0,
    })
}

fn align_of(module: &Module, ty: &Type) -> Option<u64> {
    Some(match ty {
        Type::Array { elem, .. } => align_of(module, elem)?,
        Type::Struct(name) => struct_layout(module, name)?.1,
        other => size_of(module, other)?.clamp(1, 16),
    })
}

/// (size, alignment) of a struct or union.
fn struct_layout(module: &Module, name: &str) -> Option<(u64, u64)> {
    let def = module.structs.iter().find(|s| s.name == name)?;
    let (mut size, mut align) = (0u64, 1u64);
    for (_, ty) in &def.fields {
        let (s, a) = (size_of(module, ty)?, align_of(module, ty)?);
        align = align.max(a);
        if def.is_union {
            size = size.max(s);
        } else {
            size = size.div_ceil(a) * a + s;
        }
    }
    Some((size.div_ceil(align) * align, align))
}

/// Byte offset and type of a struct field.
pub(crate) fn field_offset(module: &Module, name: &str, field: &str) -> Option<(u64, Type)> {
    let def = module.structs.iter().find(|s| s.name == name)?;
    let mut at = 0u64;
    for (f, ty) in &def.fields {
        let a = align_of(module, ty)?;
        let here = if def.is_union { 0 } else { at.div_ceil(a) * a };
        if f == field {
            return Some((here, ty.clone()));
        }
        at = here + size_of(module, ty)?;
    }
    None
}
