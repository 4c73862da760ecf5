//! GPUVerify's specification functions that stand for values, and functions
//! that are only a contract.
//!
//! * `__ptr_offset_bytes(p)`: the byte offset of `p` in its array;
//!   `__ptr_base(p)`: the id of that array (equal for pointers into one array).
//! * `__add_noovfl_T(x, y, …)`: the sum, with the assumption (GPUVerify's
//!   meaning) that it does not overflow `T` — an assumption the kernel's
//!   author states, like `__assume`; in an annotation only the sum is used.
//! * `__old_T(e)` in a postcondition: `e` in the state at the function's
//!   entry (the frame keeps a copy of the state when the function has
//!   postconditions).
//! * OpenCL's `get_global_offset(d)` and `get_work_dim()`, which have no
//!   builtin node, answered from the flags (`--global_offset`, the number of
//!   axes of `--local_size`/`--num_groups`/`--global_size`).
//! * A function whose name starts with `__spec` is a contract only (as in
//!   GPUVerify, whose front end keeps such a function's `__requires` and
//!   `__ensures` and drops its body): a call asserts the preconditions and
//!   assumes the postconditions, and changes nothing else. Its body must be
//!   made of contract clauses alone, without `__writes_to`/`__reads_from`:
//!   a function that may change memory or make accesses is refused, since
//!   the checker would not see those accesses.

use super::exec::{Exec, Frame, R};
use super::expr::walk;
use super::value::{fresh_of, resize, Val};
use crate::cfront::ir::{AnnotationKind, Expr, ExprKind, Function, Stmt, StmtKind, Type};
use z3::ast::{Ast, Bool, BV};

/// Whether a function is a contract only (GPUVerify's `__spec` functions).
pub(crate) fn is_spec_only(name: &str) -> bool {
    name.starts_with("__spec")
}

/// Whether a function body has postconditions.
pub(crate) fn has_postconditions(body: &[Stmt]) -> bool {
    body.iter().any(|s| matches!(s.kind, StmtKind::Annotation { kind: AnnotationKind::Ensures | AnnotationKind::GlobalEnsures, .. }))
}

impl Exec<'_, '_> {
    /// OpenCL's launch queries that the flags answer: `get_global_offset(d)`
    /// (`--global_offset`, 0 by default) and `get_work_dim()` (the number of
    /// axes the geometry flags name); `None` for other calls or when unknown.
    pub(crate) fn launch_query(&self, callee: &str, vals: &[[Val; 2]], w: u32) -> Option<BV> {
        if self.chk.module.language != crate::cfront::ir::Language::OpenCl {
            return None;
        }
        match callee {
            "get_work_dim" if vals.is_empty() => self.options.work_dim.map(|n| BV::from_u64(u64::from(n), w)),
            "get_global_offset" if vals.len() == 1 => {
                let axis = vals[0][0].bits()?.simplify().as_u64()?;
                let v = self.chk.geometry.offset.get(axis as usize).cloned().unwrap_or_else(|| BV::from_u64(0, 64));
                Some(resize(&v, w, false))
            }
            _ => None,
        }
    }

    /// Specification functions that denote values; `None` for other names.
    pub(crate) fn eval_spec_value(&mut self, name: &str, args: &[Expr], e: &Expr) -> R<Option<[Val; 2]>> {
        let w = super::value::bits_of(&e.ty).unwrap_or(32);
        if (name == "__ptr_offset_bytes" || name == "__ptr_base") && args.len() == 1 {
            let p = self.eval(&args[0])?;
            let mut out = [Val::Opaque, Val::Opaque];
            for t in 0..2 {
                out[t] = match &p[t] {
                    Val::Ptr { base, off } if name == "__ptr_base" => Val::Bits(resize(base, w, false)),
                    Val::Ptr { off, .. } => Val::Bits(resize(off, w, false)),
                    _ => return Err(self.unsupported(e.span, &format!("`{name}` of a value alpine does not track as a pointer"))),
                };
            }
            return Ok(Some(out));
        }
        if super::memfns::is_mem_function(name) {
            // `__builtin_memcpy` written as such (clang's builtin).
            let vals: Vec<[Val; 2]> = args.iter().map(|a| self.eval(a)).collect::<R<_>>()?;
            return match self.mem_call(name, &vals, e.span) {
                Some(r) => r.map(Some),
                None => Err(self.unsupported(e.span, &format!("`{name}` with a count that is not a constant"))),
            };
        }
        if let Some(ty) = name.strip_prefix("__add_noovfl_") {
            let signed = !ty.starts_with("unsigned");
            let vals: Vec<[Val; 2]> = args.iter().map(|a| self.eval(a)).collect::<R<_>>()?;
            let mut out = [Val::Opaque, Val::Opaque];
            for t in 0..2 {
                let bits: Option<Vec<BV>> =
                    vals.iter().zip(args).map(|(v, a)| v[t].bits().map(|b| resize(b, w, super::value::is_signed(&a.ty)))).collect();
                let Some(bits) = bits.filter(|b| !b.is_empty()) else {
                    return Err(self.unsupported(e.span, &format!("this call of `{name}`")));
                };
                let mut sum = bits[0].clone();
                let mut fine = Vec::new();
                for b in &bits[1..] {
                    if signed {
                        fine.push(sum.bvadd_no_overflow(b, true));
                        fine.push(sum.bvadd_no_underflow(b));
                    } else {
                        fine.push(sum.bvadd_no_overflow(b, false));
                    }
                    sum = sum.bvadd(b);
                }
                if !self.pure_eval {
                    let f = self.pred[t].implies(Bool::and(&fine));
                    self.assume(&f);
                }
                out[t] = Val::Bits(sum);
            }
            return Ok(Some(out));
        }
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if (base == "__old" || base.starts_with("__old_")) && args.len() == 1 {
            let Some(old) = self.frames.last().and_then(|f| f.old.clone()) else {
                return Err(self.unsupported(e.span, &format!("`{name}` outside a postcondition")));
            };
            let now = std::mem::replace(&mut self.st, *old);
            let was = std::mem::replace(&mut self.pure_eval, true);
            let v = self.eval(&args[0]);
            self.pure_eval = was;
            self.st = now;
            let v = v?;
            return Ok(Some(std::array::from_fn(|t| super::value::convert(&v[t], &args[0].ty, &e.ty))));
        }
        Ok(None)
    }

    /// A call of a contract-only function (parameters bound): preconditions
    /// asserted, postconditions assumed, a fresh result.
    pub(crate) fn spec_body(&mut self, f: &Function, body: &[Stmt]) -> R<Option<[Val; 2]>> {
        for s in body {
            let clause = matches!(
                s.kind,
                StmtKind::Annotation {
                    kind: AnnotationKind::Requires
                        | AnnotationKind::GlobalRequires
                        | AnnotationKind::Ensures
                        | AnnotationKind::GlobalEnsures,
                    ..
                } | StmtKind::Empty
            );
            let mut effects = false;
            if let StmtKind::Annotation { args, .. } = &s.kind {
                for a in args {
                    walk(a, &mut |x| {
                        effects |= matches!(&x.kind, ExprKind::Spec { name, .. } if name == "__writes_to" || name == "__reads_from")
                            || super::expr::has_effects(x);
                    });
                }
            }
            if !clause || effects {
                return Err(self.unsupported(s.span, "a statement of a `__spec` function other than a side-effect-free contract clause"));
            }
        }
        let ret = match &f.ret {
            Type::Void => None,
            ty => {
                let v = [fresh_of(ty, "ret"), fresh_of(ty, "ret")];
                Some([self.st.alloc(v[0].clone()), self.st.alloc(v[1].clone())])
            }
        };
        let returned = [self.st.alloc(Val::Flag(Bool::from_bool(false))), self.st.alloc(Val::Flag(Bool::from_bool(false)))];
        let old = Some(Box::new(self.st.clone()));
        let frame = Frame { function: f.name.clone(), returned, ret, loop_invariants: Vec::new(), address_taken: Default::default(), old };
        self.frames.push(frame);
        let r = self.spec_clauses(body);
        self.frames.pop();
        r?;
        Ok(ret.map(|r| [self.st.slots[r[0]].clone(), self.st.slots[r[1]].clone()]))
    }

    fn spec_clauses(&mut self, body: &[Stmt]) -> R<()> {
        // Preconditions: asserted (a call is never the kernel's entry).
        for s in body {
            if let StmtKind::Annotation { kind: AnnotationKind::Requires | AnnotationKind::GlobalRequires, .. } = &s.kind {
                self.exec_stmt(s)?;
            }
        }
        if self.options.no_annotations || self.options.only_requires {
            return Ok(());
        }
        for s in body {
            let StmtKind::Annotation { kind, args } = &s.kind else { continue };
            let Some(e) = args.first() else { continue };
            let global = match kind {
                AnnotationKind::Ensures => false,
                AnnotationKind::GlobalEnsures => true,
                _ => continue,
            };
            let v = self.eval_annotation(e)?;
            for (t, v) in v.iter().enumerate() {
                // A global postcondition holds wherever the call is made.
                let f = if global { Bool::or(&[self.pred[0].clone(), self.pred[1].clone()]).implies(v) } else { self.pred[t].implies(v) };
                self.assume(&f);
            }
        }
        Ok(())
    }
}
