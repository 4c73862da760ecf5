//! PVL's binary operators on interpreter values, and value equality.

use super::{err, Error, Frame, Interp, Value};
use crate::ast::*;
use std::rc::Rc;

impl Interp<'_> {
    pub(super) fn binary(&mut self, f: &mut Frame, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<Value, Error> {
        // Short-circuit connectives first.
        match op {
            BinOp::And | BinOp::Star => return Ok(Value::Bool(self.eval(f, lhs)?.bool()? && self.eval(f, rhs)?.bool()?)),
            BinOp::Or => return Ok(Value::Bool(self.eval(f, lhs)?.bool()? || self.eval(f, rhs)?.bool()?)),
            BinOp::Implies => return Ok(Value::Bool(!self.eval(f, lhs)?.bool()? || self.eval(f, rhs)?.bool()?)),
            _ => {}
        }
        let (a, b) = (self.eval(f, lhs)?, self.eval(f, rhs)?);
        if let Some(r) = self.generic_binary(op, &a, &b) {
            return r;
        }
        let overflow = || Error("integer overflow (the interpreter's integers are 64-bit)".into());
        Ok(match (op, &a, &b) {
            (BinOp::Eq, _, _) => Value::Bool(same(&a, &b)),
            (BinOp::Ne, _, _) => Value::Bool(!same(&a, &b)),
            (BinOp::Add, Value::Seq(x), Value::Seq(y)) => Value::Seq(Rc::new(x.iter().chain(y.iter()).cloned().collect())),
            (BinOp::Append, Value::Seq(x), y) => Value::Seq(Rc::new(x.iter().cloned().chain(std::iter::once(y.clone())).collect())),
            (BinOp::Cons, x, Value::Seq(y)) => Value::Seq(Rc::new(std::iter::once(x.clone()).chain(y.iter().cloned()).collect())),
            (BinOp::In, x, Value::Seq(y)) => Value::Bool(y.iter().any(|v| same(v, x))),
            (_, Value::Int(x), Value::Int(y)) => {
                let (x, y) = (*x, *y);
                match op {
                    BinOp::Lt => Value::Bool(x < y),
                    BinOp::Le => Value::Bool(x <= y),
                    BinOp::Gt => Value::Bool(x > y),
                    BinOp::Ge => Value::Bool(x >= y),
                    BinOp::Add => Value::Int(x.checked_add(y).ok_or_else(overflow)?),
                    BinOp::Sub => Value::Int(x.checked_sub(y).ok_or_else(overflow)?),
                    BinOp::Mul => Value::Int(x.checked_mul(y).ok_or_else(overflow)?),
                    // Rust's `/` and `%` truncate, like PVL's. Past a zero divisor the
                    // only failure is `i64::MIN / -1`, an overflow.
                    BinOp::Div | BinOp::Mod if y == 0 => return err("division by zero".to_string()),
                    BinOp::Div => Value::Int(x.checked_div(y).ok_or_else(overflow)?),
                    BinOp::Mod => Value::Int(x.checked_rem(y).ok_or_else(overflow)?),
                    _ => return err(format!("operator {} not supported", op.symbol())),
                }
            }
            _ => return err(format!("operator {} not supported on these values", op.symbol())),
        })
    }
}

/// The value of a literal. The interpreter's integers are i64 with checked
/// arithmetic (an overflow is an error, never a wrapped value), so a literal
/// beyond `i64::MAX` is an error too: PVL integers are mathematical, and a
/// run must not go on with a value the program does not mean.
pub(super) fn int_literal(v: u128) -> Result<i64, Error> {
    i64::try_from(v).map_err(|_| Error(format!("integer literal {v} is beyond the interpreter's 64-bit integers (at most {})", i64::MAX)))
}

/// Sets key `k` of map entries `m` to `v` (the last write of a key wins).
pub(super) fn map_put(m: &mut Vec<(Value, Value)>, k: Value, v: Value) {
    match m.iter_mut().find(|(x, _)| same(x, &k)) {
        Some(slot) => slot.1 = v,
        None => m.push((k, v)),
    }
}

/// PVL `==`: references compare by identity, other values by contents.
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) | (Value::Void, Value::Void) => true,
        (Value::Array(x), Value::Array(y)) => Rc::ptr_eq(x, y),
        (Value::Obj(x), Value::Obj(y)) => Rc::ptr_eq(x, y),
        (Value::Seq(x), Value::Seq(y)) => Rc::ptr_eq(x, y) || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b))),
        (Value::Map(x), Value::Map(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.iter().any(|(k2, v2)| same(k, k2) && same(v, v2))),
        _ => false,
    }
}
