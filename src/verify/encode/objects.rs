//! Objects created by `new C(args)`: what the encoder may assume about a new
//! reference (IR statement `Fresh`, emitted by `lower/locks.rs`).
//!
//! A new object is non-null and no permission to any of its fields is held in the
//! current state. This is the permission-based reading of "distinct from every
//! existing object": every object the state says anything about is reachable only
//! through permissions to its fields, and inhaling the constructor's field
//! permissions for an object the state already holds would contradict "at most
//! full permission" and make the rest of the method verify vacuously. The same
//! fact is assumed at the start of a constructor body for `this` (its callers
//! create it that way). Array families are not touched: an object is no array.

use super::state::State;
use super::{null_of, Encoder, Term};

impl Encoder<'_> {
    /// Assumes (under `guard`) that `obj` is non-null and that `st` holds no
    /// permission to any field of it.
    pub(super) fn fresh_object(&mut self, guard: &Term, st: &State, obj: &Term) {
        self.assume(guard, obj.ne(&null_of(&obj.sort())));
        let fields: Vec<(String, String)> = self.prog.fields.iter().map(|(c, f, _)| (c.to_string(), f.to_string())).collect();
        for (c, f) in fields {
            let Some(fam) = self.field_family(&c, &f) else { continue };
            let held = self.read_mask(st, &fam, vec![obj.clone()]);
            self.assume(guard, held.eq(&Term::real(0, 1)));
        }
    }
}
