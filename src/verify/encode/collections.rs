//! Expressions over `map<K,V>`, `bag<T>` and `set<T>`: PVL → the theories of
//! [`super::maps`], [`super::bags`] and [`super::sets`].
//!
//! [`super::expr`] hands every map/bag/set construct here; whatever this module
//! does not encode (`valuesMap`, `itemsMap`) is reported as "not supported by
//! the verifier yet", never given a made-up meaning. `k in keysMap(m)` is read
//! directly as "`k` is a key of `m`" (no detour through the key set).
//!
//! Map lookups `m[k]` have no definedness check (a key outside the map gives an
//! unknown value, see the model in [`super::maps`]); everything else here is
//! total.

use super::bags::BagFns;
use super::expr::ECx;
use super::maps::MapFns;
use super::sets::SetFns;
use super::{Encoder, Term};
use crate::ast::{BinOp, Builtin, Expr, ExprKind, Ty};

impl Encoder<'_> {
    /// The map functions for `Map<key, val>`, declaring their axioms on first use.
    pub fn map_fns(&mut self, key: &Ty, val: &Ty) -> MapFns {
        let (k, v) = (self.sort_of(key), self.sort_of(val));
        let f = MapFns::new(k, v);
        if self.theories.instances.insert(f.sort.to_string()) {
            for a in f.axioms() {
                self.smt.assert(a);
            }
        }
        f
    }

    /// The set functions for `Set<elem>`, declaring their axioms on first use.
    pub fn set_fns(&mut self, elem: &Ty) -> SetFns {
        let e = self.sort_of(elem);
        let f = SetFns::new(e);
        if self.theories.instances.insert(f.sort.to_string()) {
            for a in f.axioms() {
                self.smt.assert(a);
            }
        }
        f
    }

    /// `keysMap(m)`: the key set of `m`.
    fn map_keys(&mut self, kt: &Ty, vt: &Ty, m: &Term) -> Term {
        let (mf, sf) = (self.map_fns(kt, vt), self.set_fns(kt));
        if self.theories.instances.insert(format!("keys:{}", mf.sort)) {
            for a in sf.keys_axioms(&mf) {
                self.smt.assert(a);
            }
        }
        sf.keys(&mf, m)
    }

    /// The bag functions for `Bag<elem>`, declaring their axioms on first use.
    pub fn bag_fns(&mut self, elem: &Ty) -> BagFns {
        let e = self.sort_of(elem);
        let f = BagFns::new(e);
        if self.theories.instances.insert(f.sort.to_string()) {
            for a in f.axioms() {
                self.smt.assert(a);
            }
        }
        f
    }

    /// `map<K,V>{k1, v1, k2, v2, …}`: stored left to right, so a repeated key
    /// keeps its last value (`{2,6,3,9,2,5}` is `{2 ↦ 5, 3 ↦ 9}`).
    pub(super) fn map_literal(&mut self, e: &Expr, entries: &[(Expr, Expr)], cx: &mut ECx) -> Term {
        let Ty::Map(kt, vt) = &e.ty else { return self.unsupported_term(e, "this map literal") };
        let f = self.map_fns(kt, vt);
        let mut m = f.empty();
        for (k, v) in entries {
            let (k, v) = (self.expr(k, cx), self.expr(v, cx));
            m = f.build(&m, &k, &v);
        }
        m
    }

    /// `m[k]`.
    pub(super) fn map_lookup(&mut self, base: &Expr, index: &Expr, cx: &mut ECx) -> Option<Term> {
        let Ty::Map(kt, vt) = &base.ty else { return None };
        let f = self.map_fns(kt, vt);
        let m = self.expr(base, cx);
        let k = self.expr(index, cx);
        Some(f.get(&m, &k))
    }

    /// `m[k -> v]`: `buildMap(m, k, v)`.
    pub(super) fn map_update(&mut self, base: &Expr, index: &Expr, value: &Expr, cx: &mut ECx) -> Option<Term> {
        let Ty::Map(kt, vt) = &base.ty else { return None };
        let f = self.map_fns(kt, vt);
        let m = self.expr(base, cx);
        let k = self.expr(index, cx);
        let v = self.expr(value, cx);
        Some(f.build(&m, &k, &v))
    }

    /// `buildMap`, `cardMap`, `disjointMap`, `equalsMap`, `getFromMap`,
    /// `removeFromMap`; `None` when `func` is not a map built-in.
    pub(super) fn map_builtin(&mut self, e: &Expr, func: Builtin, args: &[Expr], cx: &mut ECx) -> Option<Term> {
        let Some(Ty::Map(kt, vt)) = args.first().map(|a| &a.ty) else { return None };
        let f = self.map_fns(kt, vt);
        let known = matches!(
            (func, args.len()),
            (Builtin::BuildMap, 3)
                | (Builtin::CardMap | Builtin::KeysMap, 1)
                | (Builtin::DisjointMap | Builtin::EqualsMap | Builtin::GetFromMap | Builtin::RemoveFromMap, 2)
        );
        if !known {
            return Some(self.unsupported_term(e, "this map built-in"));
        }
        let a: Vec<Term> = args.iter().map(|x| self.expr(x, cx)).collect();
        Some(match func {
            Builtin::BuildMap => f.build(&a[0], &a[1], &a[2]),
            Builtin::CardMap => f.card(&a[0]),
            Builtin::KeysMap => self.map_keys(kt, vt, &a[0]),
            Builtin::DisjointMap => f.disjoint(&a[0], &a[1]),
            Builtin::EqualsMap => f.equal(&a[0], &a[1]),
            Builtin::GetFromMap => f.get(&a[0], &a[1]),
            _ => f.remove(&a[0], &a[1]),
        })
    }

    /// `bag<T>{x, …}`: the union of the singletons.
    pub(super) fn bag_literal(&mut self, e: &Expr, elems: &[Expr], cx: &mut ECx) -> Term {
        let Ty::Bag(et) = &e.ty else { return self.unsupported_term(e, "this bag literal") };
        let f = self.bag_fns(et);
        let mut acc: Option<Term> = None;
        for x in elems {
            let u = f.unit(&self.expr(x, cx));
            acc = Some(match acc {
                None => u,
                Some(a) => f.union(&a, &u),
            });
        }
        acc.unwrap_or_else(|| f.empty())
    }

    /// `set<T>{x, …}`: the elements added one by one.
    pub(super) fn set_literal(&mut self, e: &Expr, elems: &[Expr], cx: &mut ECx) -> Term {
        let Ty::Set(et) = &e.ty else { return self.unsupported_term(e, "this set literal") };
        let f = self.set_fns(et);
        let mut acc = f.empty();
        for x in elems {
            acc = f.add(&acc, &self.expr(x, cx));
        }
        acc
    }

    /// `|c|` of a bag, set or map; `None` for other types.
    pub(super) fn collection_size(&mut self, inner: &Expr, cx: &mut ECx) -> Option<Term> {
        match &inner.ty {
            Ty::Bag(et) => {
                let f = self.bag_fns(et);
                Some(f.card(&self.expr(inner, cx)))
            }
            Ty::Set(et) => {
                let f = self.set_fns(et);
                Some(f.card(&self.expr(inner, cx)))
            }
            Ty::Map(kt, vt) => {
                let f = self.map_fns(kt, vt);
                Some(f.card(&self.expr(inner, cx)))
            }
            _ => None,
        }
    }

    /// Binary operators with a map, bag or set operand (`==`, `!=`, `+`, `-`,
    /// `<=`, `<`, `in`); `None` when neither operand is one (and `in` has none
    /// on its right).
    pub(super) fn collection_binary(&mut self, e: &Expr, op: BinOp, lhs: &Expr, rhs: &Expr, cx: &mut ECx) -> Option<Term> {
        if op == BinOp::In {
            return self.membership(rhs, lhs, cx);
        }
        let ty = [&lhs.ty, &rhs.ty].into_iter().find(|t| matches!(t, Ty::Map(..) | Ty::Bag(_) | Ty::Set(_)))?.clone();
        let l = self.expr(lhs, cx);
        let r = self.expr(rhs, cx);
        Some(match (&ty, op) {
            (Ty::Map(kt, vt), BinOp::Eq | BinOp::Ne) => {
                let eq = self.map_fns(kt, vt).equal(&l, &r);
                if op == BinOp::Eq {
                    eq
                } else {
                    eq.not()
                }
            }
            (Ty::Bag(et), _) => {
                let f = self.bag_fns(et);
                lattice_op(op, &l, &r, |a, b| f.equal(a, b), |a, b| f.union(a, b), |a, b| f.diff(a, b), |a, b| f.sub(a, b))
                    .unwrap_or_else(|| self.unsupported_term(e, "this operator on bags"))
            }
            (Ty::Set(et), _) => {
                let f = self.set_fns(et);
                lattice_op(op, &l, &r, |a, b| f.equal(a, b), |a, b| f.union(a, b), |a, b| f.diff(a, b), |a, b| f.sub(a, b))
                    .unwrap_or_else(|| self.unsupported_term(e, "this operator on sets"))
            }
            _ => self.unsupported_term(e, "this operator on maps"),
        })
    }

    /// `x in c` for a bag or set `c`, a map `c` (a key of it) or `keysMap(m)`.
    fn membership(&mut self, coll: &Expr, x: &Expr, cx: &mut ECx) -> Option<Term> {
        match (&coll.kind, &coll.ty) {
            (ExprKind::Builtin { func: Builtin::KeysMap, args }, _) if args.len() == 1 => {
                let Ty::Map(kt, vt) = &args[0].ty else { return None };
                let f = self.map_fns(kt, vt);
                let k = self.expr(x, cx);
                let m = self.expr(&args[0], cx);
                Some(f.has(&m, &k))
            }
            (_, Ty::Map(kt, vt)) => {
                let f = self.map_fns(kt, vt);
                let k = self.expr(x, cx);
                let m = self.expr(coll, cx);
                Some(f.has(&m, &k))
            }
            (_, Ty::Set(et)) => {
                let f = self.set_fns(et);
                let v = self.expr(x, cx);
                let s = self.expr(coll, cx);
                Some(f.contains(&s, &v))
            }
            (_, Ty::Bag(et)) => {
                let f = self.bag_fns(et);
                let v = self.expr(x, cx);
                let b = self.expr(coll, cx);
                Some(f.contains(&b, &v))
            }
            _ => None,
        }
    }
}

/// `==`, `!=`, `+` (union), `-` (difference), `<=`/`<` (sub-collection, proper) and
/// `>=`/`>` of bags and sets, given their theory's functions; `None` for any other
/// operator.
fn lattice_op(
    op: BinOp,
    l: &Term,
    r: &Term,
    equal: impl Fn(&Term, &Term) -> Term,
    union: impl Fn(&Term, &Term) -> Term,
    diff: impl Fn(&Term, &Term) -> Term,
    sub: impl Fn(&Term, &Term) -> Term,
) -> Option<Term> {
    Some(match op {
        BinOp::Eq => equal(l, r),
        BinOp::Ne => equal(l, r).not(),
        BinOp::Add => union(l, r),
        BinOp::Sub => diff(l, r),
        BinOp::Le => sub(l, r),
        BinOp::Lt => sub(l, r).and2(&equal(l, r).not()),
        BinOp::Ge => sub(r, l),
        BinOp::Gt => sub(r, l).and2(&equal(l, r).not()),
        _ => return None,
    })
}
