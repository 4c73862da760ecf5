//! The contents of OpenCL program-scope `__constant` variables, from their
//! initialisers; and the initial contents of private arrays (`int x[3] =
//! {…};`, written element by element where the declaration runs).
//!
//! OpenCL requires such a variable to be initialised and nothing can change it
//! afterwards (the host cannot write it; a kernel's write is reported as a
//! write to constant memory, `memory.rs`), so a read of it gives the value the
//! initialiser puts there. The initialiser is flattened into one entry per
//! scalar (byte offset, size, bits), C's zero for every scalar it does not
//! mention. A read of a scalar at an offset and size that an entry has gives
//! that entry's bits; any other read (another size, a misaligned offset, a
//! whole vector or struct) gives a fresh value, as before. A variable whose
//! initialiser the checker cannot flatten (strings, unions, vectors built from
//! vectors, more than `MAX_SCALARS` scalars) keeps untracked contents. CUDA's
//! `__constant__` variables are left alone: the host may overwrite them before
//! a launch (`cudaMemcpyToSymbol`).

use super::exec::Exec;
use super::value::{bits_of, convert, field_offset, fresh_of, offset, size_of, Val};
use crate::cfront::ir::{AddressSpace, Expr, ExprKind, Language, Module, Type, Variable};
use z3::ast::{Bool, BV};

/// The most scalars an initialiser is flattened into.
const MAX_SCALARS: usize = 4096;
/// The most scalars a private array's initialiser writes (one write each).
const MAX_PRIVATE_SCALARS: usize = 256;

/// A scalar read at `off` of a constant variable with contents `init`.
pub(crate) fn read_init(init: &[(u64, u64, BV)], off: &BV, ty: &Type, size: u64) -> Val {
    let fresh = fresh_of(ty, "read");
    let Some(w) = bits_of(ty) else { return fresh };
    if u64::from(w) != size * 8 {
        return fresh;
    }
    let mut value = fresh;
    for (at, s, bits) in init.iter().rev() {
        if *s == size && bits.get_size() == w {
            let here: Bool = off.eq(offset(*at));
            value = Val::ite(&here, &Val::Bits(bits.clone()), &value);
        }
    }
    value
}

/// Peels implicit casts around an initialiser list.
fn list(e: &Expr) -> Option<&[Expr]> {
    match &e.kind {
        ExprKind::Aggregate(parts) => Some(parts),
        ExprKind::Cast { operand, implicit: true } => list(operand),
        _ => None,
    }
}

impl Exec<'_, '_> {
    /// Records the contents of an OpenCL `__constant` variable `g` (region `r`).
    pub(crate) fn constant_contents(&mut self, r: usize, g: &Variable) {
        let module = self.chk.module;
        if module.language != Language::OpenCl || g.space != AddressSpace::Constant {
            return;
        }
        let Some(init) = &g.init else { return };
        let mut out = Vec::new();
        let was = std::mem::replace(&mut self.pure_eval, true);
        let ok = self.flatten(module, &g.ty, Some(init), 0, &mut out);
        self.pure_eval = was;
        if ok && out.len() <= MAX_SCALARS {
            let first = out.into_iter().map(|(at, size, v)| (at, size, v[0].clone())).collect();
            self.st.regions[r].init = Some(std::rc::Rc::new(first));
        }
    }

    /// Writes a private array's initialiser into it (region `r`, after the
    /// initialiser was evaluated for its accesses): C's zero where it says
    /// nothing. An initialiser with side effects, or one the checker cannot
    /// flatten, leaves the contents unknown (as without it).
    pub(crate) fn private_contents(&mut self, r: usize, ty: &Type, init: &Expr, span: crate::ast::Span) -> super::exec::R<()> {
        if super::expr::has_effects(init) {
            return Ok(());
        }
        let module = self.chk.module;
        let mut out = Vec::new();
        let was = std::mem::replace(&mut self.pure_eval, true);
        let ok = self.flatten(module, ty, Some(init), 0, &mut out);
        self.pure_eval = was;
        if !ok || out.len() > MAX_PRIVATE_SCALARS {
            return Ok(());
        }
        let base = self.st.regions[r].base();
        for (at, size, v) in out {
            let ptr = Val::Ptr { base: base.clone(), off: offset(at) };
            let ety = Type::Int { bits: (size * 8) as u16, signed: false };
            let v = [Val::Bits(v[0].clone()), Val::Bits(v[1].clone())];
            self.access(&[ptr.clone(), ptr], &ety, super::vc::AccessKind::Write, Some(&v), span)?;
        }
        Ok(())
    }

    /// The scalars of a value of type `ty` at byte `at`, from `init` (`None`:
    /// zero-initialised). False when the initialiser has a shape not handled.
    fn flatten(&mut self, module: &Module, ty: &Type, init: Option<&Expr>, at: u64, out: &mut Vec<(u64, u64, [BV; 2])>) -> bool {
        if out.len() > MAX_SCALARS {
            return false;
        }
        match ty {
            // An array or a vector: its elements one after another (a vector's
            // initialiser must list scalars).
            Type::Array { elem, len: Some(_) } | Type::Vector { elem, .. } => {
                let (count, lanes) = match ty {
                    Type::Vector { lanes, .. } => (u64::from(*lanes), true),
                    Type::Array { len: Some(len), .. } => (*len, false),
                    _ => return false,
                };
                let Some(esize) = size_of(module, elem) else { return false };
                let parts = match init {
                    Some(e) => match list(e) {
                        Some(p) => p,
                        None => return false,
                    },
                    None => &[],
                };
                if parts.len() as u64 > count || (lanes && parts.iter().any(|p| bits_of(&p.ty).is_none())) {
                    return false;
                }
                (0..count).all(|i| self.flatten(module, elem, parts.get(i as usize), at + i * esize, out))
            }
            Type::Struct(name) => {
                let Some(def) = module.structs.iter().find(|s| &s.name == name) else { return false };
                if def.is_union {
                    return false;
                }
                let parts = match init {
                    Some(e) => match list(e) {
                        Some(p) => p,
                        None => return false,
                    },
                    None => &[],
                };
                let fields = def.fields.clone();
                if parts.len() > fields.len() {
                    return false;
                }
                fields.iter().enumerate().all(|(i, (f, fty))| {
                    let Some((o, _)) = field_offset(module, name, f) else { return false };
                    self.flatten(module, fty, parts.get(i), at + o, out)
                })
            }
            _ => {
                let (Some(w), Some(size)) = (bits_of(ty), size_of(module, ty)) else { return false };
                let value = match init {
                    None => [BV::from_u64(0, w), BV::from_u64(0, w)],
                    Some(e) => {
                        // A scalar in braces (`int x = {1};`).
                        let e = match list(e) {
                            Some([one]) => one,
                            Some(_) => return false,
                            None => e,
                        };
                        let Ok(v) = self.eval(e) else { return false };
                        match (convert(&v[0], &e.ty, ty), convert(&v[1], &e.ty, ty)) {
                            (Val::Bits(a), Val::Bits(b)) if a.get_size() == w && b.get_size() == w => [a, b],
                            _ => return false,
                        }
                    }
                };
                out.push((at, size, value));
                true
            }
        }
    }
}
