//! Expressions of both threads at once: each evaluates to a pair of values
//! (thread 1's, thread 2's) under the threads' current predicates. Side effects
//! (assignments, memory accesses, inlined calls) happen in lock-step, so a call
//! whose body has a barrier is executed by both threads together.
//!
//! Signed `+`, `-`, `*` add the assumption that they do not overflow (it is
//! undefined behaviour in C, which compilers assume away too): the checker
//! considers the kernel's executions free of undefined behaviour. Unsigned
//! arithmetic wraps exactly.

use super::exec::{and2, Exec, R};
use super::state::Binding;
use super::value::{
    apply_uf, bits_of, convert, fresh_of, from_bool, is_float, is_signed, named_of, offset, resize, size_of, truthy, Val, OFFSET_BITS,
};
use super::vc::AccessKind;
use crate::ast::Span;
use crate::cfront::ir::{BinaryOp, Builtin, Expr, ExprKind, Type, UnaryOp, VarKind};
use z3::ast::{Bool, BV};

/// Where an assignment writes.
pub(crate) enum Place {
    Slots([usize; 2]),
    Memory([Val; 2]),
    /// A whole struct variable: its tracked fields are forgotten.
    Aggregate(usize),
}

/// `e` without implicit conversions (an array's decay to a pointer, an
/// integer's promotion).
pub(crate) fn decayed(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast { operand, implicit: true } => decayed(operand),
        _ => e,
    }
}

/// Whether an annotation speaks of the access logs (`__read(A)`, …).
pub(crate) fn mentions_logs(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ExprKind::Spec { name, .. } = &x.kind {
            found |= is_log_spec(name);
        }
    });
    found
}

fn is_log_spec(name: &str) -> bool {
    ["__read", "__write", "__atomic", "__no_read", "__no_write"]
        .iter()
        .any(|p| name == *p || name.starts_with(&format!("{p}_offset")) || name == format!("{p}_implies"))
}

/// Calls `f` on every subexpression.
pub(crate) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { operand, .. } | ExprKind::Cast { operand, .. } => walk(operand, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk(lhs, f);
            walk(rhs, f);
        }
        ExprKind::Assign { target, value, .. } => {
            walk(target, f);
            walk(value, f);
        }
        ExprKind::IncDec { target, .. } => walk(target, f),
        ExprKind::Conditional { cond, then, otherwise } => {
            walk(cond, f);
            walk(then, f);
            walk(otherwise, f);
        }
        ExprKind::Index { base, index } => {
            walk(base, f);
            walk(index, f);
        }
        ExprKind::Member { base, .. } | ExprKind::Swizzle { base, .. } => walk(base, f),
        ExprKind::Call { args, .. } | ExprKind::Atomic { args, .. } | ExprKind::Spec { args, .. } | ExprKind::Aggregate(args) => {
            args.iter().for_each(|a| walk(a, f))
        }
        ExprKind::IndirectCall { callee, args } => {
            walk(callee, f);
            args.iter().for_each(|a| walk(a, f));
        }
        _ => {}
    }
}

/// Whether evaluating `e` may change anything (so it cannot be re-evaluated
/// for an invariant).
pub(crate) fn has_effects(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Assign { .. }
                | ExprKind::IncDec { .. }
                | ExprKind::Call { .. }
                | ExprKind::IndirectCall { .. }
                | ExprKind::Atomic { .. }
        )
    });
    found
}

fn lane_index(lanes: &str) -> Option<u64> {
    let l = lanes.strip_prefix('s').or_else(|| lanes.strip_prefix('S'));
    match l {
        Some(d) if d.len() == 1 => u64::from_str_radix(d, 16).ok(),
        Some(_) => None,
        None => match lanes {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            "w" => Some(3),
            _ => None,
        },
    }
}

impl Exec<'_, '_> {
    pub(crate) fn eval_cond(&mut self, e: &Expr) -> R<[Bool; 2]> {
        let v = self.eval(e)?;
        Ok(std::array::from_fn(|t| truthy(&v[t]).unwrap_or_else(|| Bool::fresh_const("cond"))))
    }

    fn both(v: Val) -> [Val; 2] {
        [v.clone(), v]
    }

    pub(crate) fn eval(&mut self, e: &Expr) -> R<[Val; 2]> {
        match &e.kind {
            ExprKind::Int(n) => Ok(Self::both(match &e.ty {
                Type::Pointer { .. } if *n == 0 => super::value::null_ptr(),
                ty => Val::Bits(BV::from_i64(*n as i64, bits_of(ty).unwrap_or(32))),
            })),
            ExprKind::Bool(b) => Ok(Self::both(from_bool(&Bool::from_bool(*b), &e.ty))),
            ExprKind::Float(x) => Ok(Self::both(match bits_of(&e.ty) {
                Some(32) => Val::Bits(BV::from_u64(u64::from((*x as f32).to_bits()), 32)),
                Some(w) => Val::Bits(BV::from_u64(x.to_bits(), 64).extract(w.min(64) - 1, 0)),
                None => Val::Opaque,
            })),
            ExprKind::Str(_) | ExprKind::Aggregate(_) => {
                if let ExprKind::Aggregate(parts) = &e.kind {
                    for p in parts {
                        self.eval(p)?;
                    }
                }
                Ok(Self::both(Val::Opaque))
            }
            ExprKind::Var { name, kind } => self.eval_var(name, *kind, e),
            ExprKind::Unary { op, operand } => self.eval_unary(*op, operand, e),
            ExprKind::Binary { op: BinaryOp::And | BinaryOp::Or, lhs, rhs } => {
                let is_and = matches!(&e.kind, ExprKind::Binary { op: BinaryOp::And, .. });
                let l = self.eval_cond(lhs)?;
                let entry = self.pred.clone();
                let go = if is_and { l.clone() } else { [l[0].not(), l[1].not()] };
                self.pred = and2(&entry, &go);
                let r = self.eval_cond(rhs);
                self.pred = entry;
                let r = r?;
                Ok(std::array::from_fn(|t| {
                    let b = if is_and { Bool::and(&[l[t].clone(), r[t].clone()]) } else { Bool::or(&[l[t].clone(), r[t].clone()]) };
                    from_bool(&b, &e.ty)
                }))
            }
            ExprKind::Binary { op: BinaryOp::Comma, lhs, rhs } => {
                self.eval(lhs)?;
                self.eval(rhs)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.eval(lhs)?, self.eval(rhs)?);
                let out: [Val; 2] = std::array::from_fn(|t| self.binary(*op, &l[t], &lhs.ty, &r[t], &rhs.ty, &e.ty, t));
                Ok(out)
            }
            ExprKind::Assign { op, target, value } => {
                let v = self.eval(value)?;
                let place = self.place(target)?;
                let new = match op {
                    None => std::array::from_fn(|t| convert(&v[t], &value.ty, &target.ty)),
                    Some(op) => {
                        let old = self.read_place(&place, &target.ty, target.span)?;
                        std::array::from_fn(|t| {
                            let r = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) || matches!(target.ty, Type::Pointer { .. }) {
                                v[t].clone()
                            } else {
                                convert(&v[t], &value.ty, &target.ty)
                            };
                            let rty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) || matches!(target.ty, Type::Pointer { .. }) {
                                &value.ty
                            } else {
                                &target.ty
                            };
                            self.binary(*op, &old[t], &target.ty, &r, rty, &target.ty, t)
                        })
                    }
                };
                self.write_place(&place, &new, &target.ty, target.span)?;
                Ok(new)
            }
            ExprKind::IncDec { increment, prefix, target } => {
                let place = self.place(target)?;
                let old = self.read_place(&place, &target.ty, target.span)?;
                let one_ty = Type::Int { bits: 32, signed: true };
                let one = Val::Bits(BV::from_u64(1, 32));
                let op = if *increment { BinaryOp::Add } else { BinaryOp::Sub };
                let new: [Val; 2] = std::array::from_fn(|t| {
                    let one = if matches!(target.ty, Type::Pointer { .. }) { one.clone() } else { convert(&one, &one_ty, &target.ty) };
                    let oty = if matches!(target.ty, Type::Pointer { .. }) { &one_ty } else { &target.ty };
                    self.binary(op, &old[t], &target.ty, &one, oty, &target.ty, t)
                });
                self.write_place(&place, &new, &target.ty, target.span)?;
                Ok(if *prefix { new } else { old })
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                let c = self.eval_cond(cond)?;
                let entry = self.pred.clone();
                self.pred = and2(&entry, &c);
                let a = self.eval(then);
                self.pred = and2(&entry, &[c[0].not(), c[1].not()]);
                let b = self.eval(otherwise);
                self.pred = entry;
                let (a, b) = (a?, b?);
                Ok(std::array::from_fn(|t| Val::ite(&c[t], &convert(&a[t], &then.ty, &e.ty), &convert(&b[t], &otherwise.ty, &e.ty))))
            }
            ExprKind::Cast { operand, .. } => {
                let v = self.eval(operand)?;
                Ok(std::array::from_fn(|t| convert(&v[t], &operand.ty, &e.ty)))
            }
            ExprKind::Index { .. } | ExprKind::Member { .. } if matches!(e.ty, Type::Array { .. }) && self.field_path(e).is_none() => {
                self.address(e)
            }
            ExprKind::Index { .. } | ExprKind::Member { .. } | ExprKind::Swizzle { .. } => {
                if let ExprKind::Member { base, .. } | ExprKind::Swizzle { base, .. } = &e.kind {
                    if self.field_path(e).is_none() && !self.is_lvalue_in_memory(base) {
                        // A field of a value (a call's result, a vector
                        // expression): not tracked.
                        self.eval(base)?;
                        return Ok([fresh_of(&e.ty, "field"), fresh_of(&e.ty, "field")]);
                    }
                }
                let place = self.place(e)?;
                self.read_place(&place, &e.ty, e.span)
            }
            ExprKind::Call { callee, args } => self.eval_call(callee, args, e),
            ExprKind::IndirectCall { callee, args } => self.indirect_call(callee, args, e),
            ExprKind::FunctionRef(name) => self.function_address(name, e),
            ExprKind::Builtin(b) => Ok(self.builtin(*b, &e.ty)),
            ExprKind::Atomic { args, .. } => {
                let Some(target) = args.first() else { return Err(self.unsupported(e.span, "an atomic without arguments")) };
                let p = self.eval(target)?;
                for a in &args[1..] {
                    self.eval(a)?;
                }
                let ty = match &target.ty {
                    Type::Pointer { pointee, .. } => (**pointee).clone(),
                    _ => e.ty.clone(),
                };
                let values = self.access(&p, &ty, AccessKind::Atomic, None, e.span)?;
                self.refine_counter(e, &values);
                Ok(values)
            }
            ExprKind::Spec { name, args } => self.eval_spec(name, args, e),
        }
    }

    fn eval_var(&mut self, name: &str, kind: VarKind, e: &Expr) -> R<[Val; 2]> {
        let binding = if kind == VarKind::Global {
            self.st.scopes.first().and_then(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| b.clone()))
        } else {
            self.st.lookup(name).cloned()
        };
        match binding {
            Some(Binding::Scalar { slots, .. }) => Ok([self.st.slots[slots[0]].clone(), self.st.slots[slots[1]].clone()]),
            Some(Binding::Memory { region, scalar: false }) => {
                Ok(Self::both(Val::Ptr { base: self.st.regions[region].base(), off: offset(0) }))
            }
            Some(Binding::Memory { .. }) | Some(Binding::Aggregate { .. }) => {
                let place = self.place(e)?;
                self.read_place(&place, &e.ty, e.span)
            }
            None => Err(self.unsupported(e.span, &format!("the name `{name}` here"))),
        }
    }

    fn eval_unary(&mut self, op: UnaryOp, operand: &Expr, e: &Expr) -> R<[Val; 2]> {
        match op {
            UnaryOp::Deref => {
                let place = self.place(e)?;
                self.read_place(&place, &e.ty, e.span)
            }
            UnaryOp::AddrOf => self.address(operand),
            _ => {
                let v = self.eval(operand)?;
                Ok(std::array::from_fn(|t| match (op, &v[t]) {
                    (UnaryOp::Plus, x) => x.clone(),
                    (UnaryOp::Not, x) => match truthy(x) {
                        Some(b) => from_bool(&b.not(), &e.ty),
                        None => fresh_of(&e.ty, "not"),
                    },
                    (UnaryOp::Neg, Val::Bits(b)) if is_float(&operand.ty) => Val::Bits(apply_uf("fneg", &[b], b.get_size())),
                    (UnaryOp::Neg, Val::Bits(b)) => Val::Bits(b.bvneg()),
                    (UnaryOp::BitNot, Val::Bits(b)) => Val::Bits(b.bvnot()),
                    _ => fresh_of(&e.ty, "unary"),
                }))
            }
        }
    }

    /// `op` on one thread's operands (C's usual conversions already made by clang).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn binary(&mut self, op: BinaryOp, l: &Val, lty: &Type, r: &Val, rty: &Type, ty: &Type, t: usize) -> Val {
        use BinaryOp::*;
        match (l, r) {
            (Val::Ptr { base, off }, Val::Bits(i)) | (Val::Bits(i), Val::Ptr { base, off }) if matches!(op, Add | Sub) => {
                let (pty, ity) = if matches!(l, Val::Ptr { .. }) { (lty, rty) } else { (rty, lty) };
                let size = match pty {
                    Type::Pointer { pointee, .. } => size_of(self.chk.module, pointee).unwrap_or(1),
                    _ => 1,
                };
                let delta = resize(i, OFFSET_BITS, is_signed(ity)).bvmul(offset(size));
                let off = if op == Add { off.bvadd(&delta) } else { off.bvsub(&delta) };
                Val::Ptr { base: base.clone(), off }
            }
            (Val::Ptr { off: o1, .. }, Val::Ptr { off: o2, .. }) if op == Sub => {
                let size = match lty {
                    Type::Pointer { pointee, .. } => size_of(self.chk.module, pointee).unwrap_or(1),
                    _ => 1,
                };
                Val::Bits(resize(&o1.bvsub(o2).bvsdiv(offset(size)), bits_of(ty).unwrap_or(64), true))
            }
            (Val::Ptr { base: b1, off: o1 }, Val::Ptr { base: b2, off: o2 }) => {
                let b = match op {
                    Eq => Bool::and(&[b1.eq(b2), o1.eq(o2)]),
                    Ne => Bool::and(&[b1.eq(b2), o1.eq(o2)]).not(),
                    Lt => o1.bvult(o2),
                    Le => o1.bvule(o2),
                    Gt => o1.bvugt(o2),
                    Ge => o1.bvuge(o2),
                    _ => return fresh_of(ty, "ptr"),
                };
                from_bool(&b, ty)
            }
            (Val::Ptr { .. }, Val::Bits(_)) | (Val::Bits(_), Val::Ptr { .. }) => {
                // A pointer compared with an integer (null): by truth.
                let (lt, rt) = (truthy(l), truthy(r));
                match (op, lt, rt) {
                    (Eq, Some(a), Some(b)) => from_bool(&a.eq(&b), ty),
                    (Ne, Some(a), Some(b)) => from_bool(&a.eq(&b).not(), ty),
                    _ => fresh_of(ty, "ptr"),
                }
            }
            (Val::Bits(a), Val::Bits(b)) if is_float(lty) || is_float(rty) => {
                let w = a.get_size();
                let name = format!("f{op:?}");
                match op {
                    Eq | Ne | Lt | Le | Gt | Ge => {
                        let bit = apply_uf(&name, &[a, b], 1);
                        from_bool(&bit.eq(BV::from_u64(1, 1)), ty)
                    }
                    _ => Val::Bits(apply_uf(&name, &[a, b], bits_of(ty).unwrap_or(w))),
                }
            }
            (Val::Bits(a), Val::Bits(b)) => {
                let signed = is_signed(lty);
                let w = a.get_size();
                let b = if b.get_size() != w { resize(b, w, is_signed(rty)) } else { b.clone() };
                let cmp = |c: Bool| from_bool(&c, ty);
                let v = match op {
                    Add => {
                        if signed {
                            self.no_overflow(t, Bool::and(&[a.bvadd_no_overflow(&b, true), a.bvadd_no_underflow(&b)]));
                        }
                        a.bvadd(&b)
                    }
                    Sub => {
                        if signed {
                            self.no_overflow(t, Bool::and(&[a.bvsub_no_overflow(&b), a.bvsub_no_underflow(&b, true)]));
                        }
                        a.bvsub(&b)
                    }
                    Mul => {
                        if signed {
                            self.no_overflow(t, Bool::and(&[a.bvmul_no_overflow(&b, true), a.bvmul_no_underflow(&b)]));
                        }
                        a.bvmul(&b)
                    }
                    Div if signed => a.bvsdiv(&b),
                    Div => a.bvudiv(&b),
                    Rem if signed => a.bvsrem(&b),
                    Rem => a.bvurem(&b),
                    Shl => a.bvshl(&b),
                    Shr if signed => a.bvashr(&b),
                    Shr => a.bvlshr(&b),
                    BitAnd => a.bvand(&b),
                    BitOr => a.bvor(&b),
                    BitXor => a.bvxor(&b),
                    Eq => return cmp(a.eq(&b)),
                    Ne => return cmp(a.eq(&b).not()),
                    Lt if signed => return cmp(a.bvslt(&b)),
                    Lt => return cmp(a.bvult(&b)),
                    Le if signed => return cmp(a.bvsle(&b)),
                    Le => return cmp(a.bvule(&b)),
                    Gt if signed => return cmp(a.bvsgt(&b)),
                    Gt => return cmp(a.bvugt(&b)),
                    Ge if signed => return cmp(a.bvsge(&b)),
                    Ge => return cmp(a.bvuge(&b)),
                    And | Or | Comma => return fresh_of(ty, "op"),
                };
                match bits_of(ty) {
                    Some(tw) if tw != w => Val::Bits(resize(&v, tw, signed)),
                    _ => Val::Bits(v),
                }
            }
            _ => fresh_of(ty, "op"),
        }
    }

    fn no_overflow(&mut self, t: usize, fact: Bool) {
        if !self.pure_eval {
            let f = self.pred[t].implies(&fact);
            self.assume(&f);
        }
    }

    fn builtin(&self, b: Builtin, ty: &Type) -> [Val; 2] {
        let g = &self.chk.geometry;
        let w = bits_of(ty).unwrap_or(32);
        let ax = |a: crate::cfront::ir::Axis| a as usize;
        std::array::from_fn(|t| {
            let v = match b {
                Builtin::LocalId(a) => g.local[t][ax(a)].clone(),
                Builtin::GroupId(a) => g.group[t][ax(a)].clone(),
                Builtin::LocalSize(a) => g.block[ax(a)].clone(),
                Builtin::NumGroups(a) => g.grid[ax(a)].clone(),
                Builtin::GlobalId(a) => g.group[t][ax(a)].bvmul(&g.block[ax(a)]).bvadd(&g.local[t][ax(a)]).bvadd(&g.offset[ax(a)]),
                Builtin::GlobalSize(a) => g.grid[ax(a)].bvmul(&g.block[ax(a)]),
                Builtin::WarpSize => BV::from_u64(32, 64),
            };
            Val::Bits(resize(&v, w, false))
        })
    }

    /// The field path of an array of pointers inside a struct kernel argument.
    pub(crate) fn struct_field_path(&self, e: &Expr) -> Option<String> {
        let (_, uniform, path) = self.field_path(e)?;
        let Type::Array { elem, .. } = &e.ty else { return None };
        (uniform && path.contains('.') && matches!(**elem, Type::Pointer { .. })).then_some(path)
    }

    /// The (variable, field path) of a struct field held in a private variable.
    fn field_path(&self, e: &Expr) -> Option<(usize, bool, String)> {
        match &e.kind {
            ExprKind::Var { name, .. } => match self.st.lookup(name)? {
                Binding::Aggregate { uid, uniform } => Some((*uid, *uniform, name.clone())),
                _ => None,
            },
            ExprKind::Member { base, field, arrow: false } => {
                let (uid, uniform, path) = self.field_path(base)?;
                Some((uid, uniform, format!("{path}.{field}")))
            }
            ExprKind::Swizzle { base, lanes } => {
                let (uid, uniform, path) = self.field_path(base)?;
                Some((uid, uniform, format!("{path}.{lanes}")))
            }
            ExprKind::Cast { operand, implicit: true } if operand.ty == e.ty => self.field_path(operand),
            // An element of a struct's pointer array that `__requires_fresh_array`
            // names (a constant index): a field of its own.
            ExprKind::Index { base, index } => {
                let ExprKind::Int(k) = &decayed(index).kind else { return None };
                let (uid, uniform, path) = self.field_path(decayed(base))?;
                let path = format!("{path}[{k}]");
                self.fresh_paths.contains(&path).then_some((uid, uniform, path))
            }
            // C++'s derived-to-base conversion: the base's fields are the
            // derived variable's, by name, unless the derived struct declares
            // a field of the same name (which would hide the base's).
            ExprKind::Cast { operand, implicit: true } => match (&operand.ty, &e.ty) {
                (Type::Struct(derived), Type::Struct(base)) => {
                    let fields = |n: &str| self.chk.module.structs.iter().find(|s| s.name == n).map(|s| s.fields.clone());
                    let (d, b) = (fields(derived)?, fields(base)?);
                    if d.iter().any(|(f, _)| b.iter().any(|(g, _)| f == g)) {
                        return None;
                    }
                    self.field_path(operand)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn is_lvalue_in_memory(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Index { .. } | ExprKind::Unary { op: UnaryOp::Deref, .. } | ExprKind::Member { arrow: true, .. } => true,
            ExprKind::Member { base, .. } | ExprKind::Swizzle { base, .. } => self.is_lvalue_in_memory(base),
            ExprKind::Var { name, .. } => matches!(self.st.lookup(name), Some(Binding::Memory { .. })),
            _ => false,
        }
    }

    pub(crate) fn place(&mut self, e: &Expr) -> R<Place> {
        if let Some((uid, uniform, path)) = self.field_path(e) {
            if matches!(e.ty, Type::Struct(_) | Type::Vector { .. }) {
                return Ok(Place::Aggregate(uid));
            }
            let slots = match self.st.fields.get(&(uid, path.clone())) {
                Some(s) => *s,
                None => {
                    let v = if let Type::Array { .. } = &e.ty {
                        // An array inside a struct variable: an array of its
                        // own, with the same contents in both threads when
                        // the struct is a kernel argument.
                        let module = self.chk.module;
                        let mut elem_ty = &e.ty;
                        while let Type::Array { elem, .. } = elem_ty {
                            elem_ty = elem;
                        }
                        let elem = bits_of(elem_ty).and_then(|_| Some((elem_ty.clone(), size_of(module, elem_ty)?)));
                        let r = self.st.add_region(&path, crate::cfront::ir::AddressSpace::Private, elem, size_of(module, &e.ty), e.span);
                        if let (true, Some(mem)) = (uniform, self.st.regions[r].mem) {
                            self.st.slots[mem[1]] = self.st.slots[mem[0]].clone();
                        }
                        let p = Val::Ptr { base: self.st.regions[r].base(), off: offset(0) };
                        [p.clone(), p]
                    } else if let (true, Type::Pointer { pointee, space }) = (uniform, &e.ty) {
                        // A pointer inside a struct kernel argument: like a
                        // pointer argument, its own array (not aliased).
                        let module = self.chk.module;
                        let space = if *space == crate::cfront::ir::AddressSpace::Constant {
                            *space
                        } else {
                            crate::cfront::ir::AddressSpace::Global
                        };
                        let elem = bits_of(pointee).and_then(|_| Some(((**pointee).clone(), size_of(module, pointee)?)));
                        let r = self.st.add_region(&path, space, elem, None, e.span);
                        let p = Val::Ptr { base: self.st.regions[r].base(), off: offset(0) };
                        [p.clone(), p]
                    } else if uniform {
                        [named_of(&e.ty, &format!("arg.{path}")), named_of(&e.ty, &format!("arg.{path}"))]
                    } else {
                        [fresh_of(&e.ty, &path), fresh_of(&e.ty, &path)]
                    };
                    let s = [self.st.alloc(v[0].clone()), self.st.alloc(v[1].clone())];
                    self.st.fields.insert((uid, path), s);
                    s
                }
            };
            return Ok(Place::Slots(slots));
        }
        match &e.kind {
            ExprKind::Var { name, kind } => {
                let binding = if *kind == VarKind::Global {
                    self.st.scopes.first().and_then(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| b.clone()))
                } else {
                    self.st.lookup(name).cloned()
                };
                match binding {
                    Some(Binding::Scalar { slots, .. }) => Ok(Place::Slots(slots)),
                    Some(Binding::Memory { region, .. }) => {
                        Ok(Place::Memory(Self::both(Val::Ptr { base: self.st.regions[region].base(), off: offset(0) })))
                    }
                    _ => Err(self.unsupported(e.span, &format!("assigning `{name}`"))),
                }
            }
            _ => Ok(Place::Memory(self.address(e)?)),
        }
    }

    /// The address of an lvalue in memory.
    pub(crate) fn address(&mut self, e: &Expr) -> R<[Val; 2]> {
        match &e.kind {
            ExprKind::Index { base, index } => {
                let computed = !matches!(decayed(index).kind, ExprKind::Int(_));
                if let Some((_, _, path)) = self.field_path(decayed(base)).filter(|_| computed) {
                    // An element of a pointer array that `__requires_fresh_array`
                    // names lives in its own slot: reaching it by a computed
                    // index would bypass that slot.
                    if self.fresh_paths.iter().any(|f| f.starts_with(&format!("{path}["))) {
                        return Err(self.unsupported(e.span, "an element of this pointer array at an index that is not a constant"));
                    }
                }
                let (b, i) = (self.eval(base)?, self.eval(index)?);
                let (b, i, ity) = if matches!(b[0], Val::Ptr { .. }) { (b, i, &index.ty) } else { (i, b, &base.ty) };
                let size = size_of(self.chk.module, &e.ty).ok_or_else(|| self.unsupported(e.span, "an element type of unknown size"))?;
                Ok(std::array::from_fn(|t| match (&b[t], &i[t]) {
                    (Val::Ptr { base, off }, Val::Bits(i)) => {
                        Val::Ptr { base: base.clone(), off: off.bvadd(resize(i, OFFSET_BITS, is_signed(ity)).bvmul(offset(size))) }
                    }
                    _ => super::value::fresh_ptr("index"),
                }))
            }
            ExprKind::Unary { op: UnaryOp::Deref, operand } => self.eval(operand),
            ExprKind::Member { base, field, arrow } => {
                let (p, sty) = if *arrow {
                    let sty = match &base.ty {
                        Type::Pointer { pointee, .. } => (**pointee).clone(),
                        other => other.clone(),
                    };
                    (self.eval(base)?, sty)
                } else {
                    (self.address(base)?, base.ty.clone())
                };
                let Type::Struct(name) = &sty else { return Err(self.unsupported(e.span, "a member of a non-struct")) };
                let (at, _) = super::value::field_offset(self.chk.module, name, field)
                    .ok_or_else(|| self.unsupported(e.span, "a struct field of unknown layout"))?;
                Ok(p.map(|v| match v {
                    Val::Ptr { base, off } => Val::Ptr { base, off: off.bvadd(offset(at)) },
                    other => other,
                }))
            }
            ExprKind::Swizzle { base, lanes } => {
                let p = self.address(base)?;
                let lane_size = match &base.ty {
                    Type::Vector { elem, .. } => size_of(self.chk.module, elem).unwrap_or(4),
                    _ => size_of(self.chk.module, &e.ty).unwrap_or(4),
                };
                let at = lane_index(lanes).ok_or_else(|| self.unsupported(e.span, "a swizzle of several lanes as an lvalue"))? * lane_size;
                Ok(p.map(|v| match v {
                    Val::Ptr { base, off } => Val::Ptr { base, off: off.bvadd(offset(at)) },
                    other => other,
                }))
            }
            ExprKind::Var { .. } => match self.place(e)? {
                Place::Memory(p) => Ok(p),
                _ => Err(self.unsupported(e.span, "taking the address of this variable (a parameter whose address is taken)")),
            },
            ExprKind::Cast { operand, .. } => self.address(operand),
            // `&f` of a function is its address, as `f` is.
            ExprKind::FunctionRef(name) => self.function_address(name, e),
            _ => Err(self.unsupported(e.span, "the address of this expression")),
        }
    }

    pub(crate) fn read_place(&mut self, p: &Place, ty: &Type, span: Span) -> R<[Val; 2]> {
        match p {
            Place::Slots(s) => Ok([self.st.slots[s[0]].clone(), self.st.slots[s[1]].clone()]),
            Place::Memory(ptrs) => self.access(ptrs, ty, AccessKind::Read, None, span),
            Place::Aggregate(_) => Ok(Self::both(Val::Opaque)),
        }
    }

    pub(crate) fn write_place(&mut self, p: &Place, v: &[Val; 2], ty: &Type, span: Span) -> R<()> {
        match p {
            Place::Slots(s) => {
                for t in 0..2 {
                    self.st.slots[s[t]] = Val::ite(&self.pred[t], &v[t], &self.st.slots[s[t]]);
                }
                Ok(())
            }
            Place::Memory(ptrs) => self.access(ptrs, ty, AccessKind::Write, Some(v), span).map(drop),
            Place::Aggregate(uid) => {
                // Forget what was known of the fields (a later read is fresh).
                let uid = *uid;
                self.st.fields.retain(|(u, _), _| *u != uid);
                Ok(())
            }
        }
    }

    pub(crate) fn eval_call(&mut self, callee: &str, args: &[Expr], e: &Expr) -> R<[Val; 2]> {
        let module = self.chk.module;
        let vals: Vec<[Val; 2]> = args.iter().map(|a| self.eval(a)).collect::<R<_>>()?;
        if super::group::is_group_function(callee) && module.function(callee).and_then(|f| f.body.as_ref()).is_none() {
            return self.group_call(callee, args, &vals, e.span);
        }
        if module.function(callee).and_then(|f| f.body.as_ref()).is_none() {
            if let Some(r) = self.warp_call(callee, &vals, e) {
                return r;
            }
        }
        let Some(body) = module.function(callee).and_then(|f| f.body.as_ref()) else {
            // A function without body (a library function of the headers, or
            // one the file only declares): a pure function of its scalar
            // arguments. One that gets a pointer could write memory: refused.
            if super::memfns::is_mem_function(callee) {
                if let Some(r) = self.mem_call(callee, &vals, e.span) {
                    return r;
                }
            }
            if args.iter().any(|a| matches!(a.ty, Type::Pointer { .. } | Type::Array { .. })) {
                return Err(self.unsupported(e.span, &format!("calling `{callee}`, which has no body, with pointer arguments")));
            }
            let Some(w) = bits_of(&e.ty) else {
                return Ok(Self::both(if e.ty == Type::Void { Val::Opaque } else { fresh_of(&e.ty, "call") }));
            };
            if let Some(v) = self.launch_query(callee, &vals, w) {
                return Ok(Self::both(Val::Bits(v)));
            }
            if vals.iter().any(|v| !matches!(v[0], Val::Bits(_))) {
                return Ok([fresh_of(&e.ty, "call"), fresh_of(&e.ty, "call")]);
            }
            return Ok(std::array::from_fn(|t| {
                let bvs: Vec<&BV> = vals.iter().filter_map(|v| v[t].bits()).collect();
                Val::Bits(apply_uf(&format!("fn.{callee}"), &bvs, w))
            }));
        };
        let Some(f) = module.function(callee) else { return Err(self.unsupported(e.span, &format!("calling `{callee}`"))) };
        if self.frames.iter().any(|fr| fr.function == callee) {
            return Err(self.unsupported(e.span, "recursive calls"));
        }
        if self.frames.len() > 32 {
            return Err(self.unsupported(e.span, "calls nested this deep"));
        }
        // The callee sees the globals and its parameters only.
        let globals = self.st.scopes.first().cloned().unwrap_or_default();
        let saved = std::mem::replace(&mut self.st.scopes, vec![globals]);
        for (p, (v, a)) in f.params.iter().zip(vals.iter().zip(args)) {
            match &p.ty {
                Type::Struct(_) | Type::Vector { .. } => {
                    let uid = self.st.uid();
                    self.st.bind(&p.name, Binding::Aggregate { uid, uniform: false });
                }
                ty => {
                    let v: [Val; 2] = std::array::from_fn(|t| convert(&v[t], &a.ty, ty));
                    let slots = [self.st.alloc(v[0].clone()), self.st.alloc(v[1].clone())];
                    self.st.bind(&p.name, Binding::Scalar { slots, ty: ty.clone() });
                }
            }
        }
        let r = if super::specs::is_spec_only(callee) { self.spec_body(f, body) } else { self.run_body(f, body, Some(e.span)) };
        self.st.scopes = saved;
        Ok(r?.unwrap_or_else(|| Self::both(Val::Opaque)))
    }

    fn eval_spec(&mut self, name: &str, args: &[Expr], e: &Expr) -> R<[Val; 2]> {
        let arg = |i: usize| args.get(i);
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let family = |p: &str| base == p || base.starts_with(&format!("{p}_"));
        if name == "__implies" {
            let (Some(a), Some(b)) = (arg(0), arg(1)) else { return Err(self.unsupported(e.span, "`__implies` without two arguments")) };
            let (a, b) = (self.eval_cond(a)?, self.eval_cond(b)?);
            return Ok(std::array::from_fn(|t| from_bool(&a[t].implies(&b[t]), &e.ty)));
        }
        if name == "__ite" {
            let (Some(c), Some(a), Some(b)) = (arg(0), arg(1), arg(2)) else {
                return Err(self.unsupported(e.span, "`__ite` without three arguments"));
            };
            let (c, a, b) = (self.eval_cond(c)?, self.eval(a)?, self.eval(b)?);
            return Ok(std::array::from_fn(|t| Val::ite(&c[t], &a[t], &b[t])));
        }
        if name == "__enabled" {
            return Ok(std::array::from_fn(|t| from_bool(&self.pred[t], &e.ty)));
        }
        if name == "__same_group" {
            let g = self.chk.geometry.same_group();
            return Ok(Self::both(from_bool(&g, &e.ty)));
        }
        if let Some(a) = arg(0) {
            if family("__other") {
                let v = self.eval(a)?;
                return Ok([v[1].clone(), v[0].clone()]);
            }
            if family("__uniform") || family("__distinct") || family("__all") {
                let v = self.eval(a)?;
                let b = if family("__all") {
                    let c: Vec<Bool> = v.iter().map(|x| truthy(x).unwrap_or_else(|| Bool::fresh_const("all"))).collect();
                    Bool::and(&c)
                } else {
                    let same = v[0].same(&v[1]).unwrap_or_else(|| Bool::fresh_const("uniform"));
                    if family("__uniform") {
                        same
                    } else {
                        same.not()
                    }
                };
                return Ok(Self::both(from_bool(&b, &e.ty)));
            }
            if is_log_spec(name) {
                return self.eval_log_spec(name, args, e);
            }
        }
        if let (true, Some(a), Some(b)) = (name == "__mod_pow2", arg(0), arg(1)) {
            let (x, y) = (self.eval(a)?, self.eval(b)?);
            return Ok(std::array::from_fn(|t| match (&x[t], &y[t]) {
                (Val::Bits(x), Val::Bits(y)) if x.get_size() == y.get_size() => Val::Bits(x.bvurem(y)),
                _ => fresh_of(&e.ty, "mod"),
            }));
        }
        if let Some(v) = self.eval_spec_value(name, args, e)? {
            return Ok(v);
        }
        if family("__return_val") {
            if let Some(ret) = self.frames.last().and_then(|f| f.ret) {
                return Ok([self.st.slots[ret[0]].clone(), self.st.slots[ret[1]].clone()]);
            }
        }
        Err(self.unsupported(e.span, &format!("the specification function `{name}`")))
    }

    fn eval_log_spec(&mut self, name: &str, args: &[Expr], e: &Expr) -> R<[Val; 2]> {
        let a = &args[0];
        let p = self.eval(a)?;
        let Val::Ptr { base, .. } = &p[0] else { return Err(self.unsupported(e.span, "this argument of an access-log function")) };
        let regions = self.regions_of(base);
        let [(r, cond)] = regions.as_slice() else {
            return Err(self.unsupported(e.span, "an access-log function of a pointer to several arrays"));
        };
        if cond.as_bool() != Some(true) {
            return Err(self.unsupported(e.span, "an access-log function of a pointer to several arrays"));
        }
        let region = self.st.regions[*r].clone();
        let kind = if name.contains("read") {
            AccessKind::Read
        } else if name.contains("write") {
            AccessKind::Write
        } else {
            AccessKind::Atomic
        };
        let log = region.log(kind);
        // An array left out by `/checkArrays` keeps no logs: nothing is logged.
        let unchecked = log.is_none() && region.space != crate::cfront::ir::AddressSpace::Private;
        let has = match log {
            Some(log) => self.st.flag(log.has),
            None if unchecked && !name.contains("offset") => Bool::from_bool(false),
            None => return Ok(Self::both(fresh_of(&e.ty, "log"))),
        };
        let v = if name.ends_with("_implies") {
            let Some(cond) = args.get(1) else { return Err(self.unsupported(e.span, "this access-log function")) };
            let c = self.eval_cond(cond)?;
            from_bool(&has.implies(&c[0]), &e.ty)
        } else if let (true, Some(log)) = (name.contains("offset"), log) {
            let off = self.st.bv(log.off);
            let off = if name.ends_with("bytes") { off } else { off.bvudiv(offset(region.elem.as_ref().map_or(1, |(_, s)| *s))) };
            Val::Bits(resize(&off, bits_of(&e.ty).unwrap_or(32), false))
        } else if name.starts_with("__no_") {
            from_bool(&has.not(), &e.ty)
        } else {
            from_bool(&has, &e.ty)
        };
        Ok([v, fresh_of(&e.ty, "log")])
    }
}
