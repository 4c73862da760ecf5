//! C's memory functions on device memory: `memcpy(dst, src, n)` (and
//! `__builtin_memcpy`) and `memset(dst, c, n)` with a constant `n`.
//!
//! A call is the calling thread's read of the `n` bytes at `src` and write of
//! the `n` bytes at `dst`, each one access of `n` bytes through the ordinary
//! logs and checks (`memory.rs`), so any overlap with another thread's access
//! is a race, exactly as for the `n` byte accesses the call makes. The bytes
//! written are unknown afterwards (the thread's view of the array is
//! forgotten), and the written value never makes a benign pair. A count that
//! is not a constant (or above `MAX_BYTES`) is refused, as before.

use super::exec::{Exec, R};
use super::value::Val;
use super::vc::AccessKind;
use crate::ast::Span;
use crate::cfront::ir::Type;
use z3::ast::Ast;

/// The largest constant count modelled.
const MAX_BYTES: u64 = 1 << 20;

/// Whether `name` is a memory function this module models.
pub(crate) fn is_mem_function(name: &str) -> bool {
    matches!(name, "memcpy" | "__builtin_memcpy" | "memset" | "__builtin_memset")
}

impl Exec<'_, '_> {
    /// A call of a memory function, its arguments evaluated; `None` when the
    /// count is not a constant (the caller refuses the call).
    pub(crate) fn mem_call(&mut self, callee: &str, vals: &[[Val; 2]], span: Span) -> Option<R<[Val; 2]>> {
        if vals.len() != 3 {
            return None;
        }
        let n = vals[2][0].bits()?.simplify().as_u64().filter(|n| (1..=MAX_BYTES).contains(n))?;
        if vals[2][1].bits()?.simplify().as_u64() != Some(n) {
            return None;
        }
        let bytes = Type::Array { elem: Box::new(Type::Int { bits: 8, signed: false }), len: Some(n) };
        let copy = callee.ends_with("memcpy");
        let r = (|| {
            if copy {
                self.access(&vals[1], &bytes, AccessKind::Read, None, span)?;
            }
            self.access(&vals[0], &bytes, AccessKind::Write, None, span)?;
            Ok(vals[0].clone())
        })();
        Some(r)
    }
}
