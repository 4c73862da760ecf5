//! Function pointers: a function's address is a pointer whose base is the
//! function's own id (above every array's id, so no access through it ever
//! reaches memory), and a call through a pointer is a case split over the
//! module's functions that could be called with those arguments.
//!
//! **Soundness.** Each thread proves that, where it makes the call, its
//! pointer is the address of one of those functions (offset 0): null, an
//! integer cast to a function pointer, a shifted address, or a function
//! without a body are failures at the call (`Goal::FunctionPointer`). Then the
//! call is run once per candidate, each time for the threads whose pointer is
//! that candidate (a predicate, like an `if` chain), so every thread runs
//! exactly the function it calls; the results are joined by the same
//! conditions. A kernel's function-pointer parameter is an arbitrary pointer,
//! the same for all threads (its `__requires` narrow it).

use super::exec::{Exec, R};
use super::report::Goal;
use super::value::Val;
use crate::cfront::ir::{Expr, ExprKind, Type, UnaryOp};
use z3::ast::{Ast, Bool, BV};

/// The lowest function id (array ids are `1 + index`, far below).
const FIRST_FUNCTION: u64 = 1 << 15;

/// The pointer a call goes through: `(*f)(…)` and `(**f)(…)` call `f` (a
/// function designator decays back to its address).
fn function_pointer(callee: &Expr) -> &Expr {
    match &callee.kind {
        ExprKind::Unary { op: UnaryOp::Deref, operand } => function_pointer(operand),
        ExprKind::Cast { operand, implicit: true } if matches!(operand.ty, Type::Function | Type::Pointer { .. }) => {
            function_pointer(operand)
        }
        _ => callee,
    }
}

impl Exec<'_, '_> {
    /// The address of the module's function `name`.
    pub(crate) fn function_address(&self, name: &str, e: &Expr) -> R<[Val; 2]> {
        let Some(i) = self.chk.module.functions.iter().position(|f| f.name == name) else {
            return Err(self.unsupported(e.span, &format!("the address of `{name}`, which the file does not define")));
        };
        let base = BV::from_u64(FIRST_FUNCTION + i as u64, super::value::BASE_BITS);
        let p = Val::Ptr { base, off: super::value::offset(0) };
        Ok([p.clone(), p])
    }

    /// A call through the function pointer `callee`.
    pub(crate) fn indirect_call(&mut self, callee: &Expr, args: &[Expr], e: &Expr) -> R<[Val; 2]> {
        let target = self.eval(function_pointer(callee))?;
        let module = self.chk.module;
        let candidates: Vec<(usize, &str)> = module
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.body.is_some() && !f.is_kernel && f.params.len() == args.len())
            .map(|(i, f)| (i, f.name.as_str()))
            .collect();
        let is = |t: usize, i: usize| -> Bool {
            match &target[t] {
                Val::Ptr { base, off } => {
                    Bool::and(&[base.eq(BV::from_u64(FIRST_FUNCTION + i as u64, super::value::BASE_BITS)), off.eq(super::value::offset(0))])
                }
                _ => Bool::from_bool(false),
            }
        };
        for t in 0..2 {
            let known = Bool::or(&candidates.iter().map(|&(i, _)| is(t, i)).collect::<Vec<_>>());
            let goal = self.pred[t].implies(&known);
            self.prove(goal, Goal::FunctionPointer { span: e.span });
        }
        let entry = self.pred.clone();
        let mut result = [super::value::fresh_of(&e.ty, "call"), super::value::fresh_of(&e.ty, "call")];
        for &(i, name) in &candidates {
            let cond: [Bool; 2] = [is(0, i), is(1, i)];
            if cond.iter().all(|c| c.simplify().as_bool() == Some(false)) {
                continue;
            }
            self.pred = super::exec::and2(&entry, &cond);
            let r = self.eval_call(name, args, e);
            self.pred = entry.clone();
            let r = r?;
            result = std::array::from_fn(|t| Val::ite(&cond[t], &r[t], &result[t]));
        }
        Ok(result)
    }
}
