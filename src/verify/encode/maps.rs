//! `map<K,V>` as an axiomatised uninterpreted sort (Dafny/Viper style).
//!
//! A sort `Map<K,V>` per key and value sort with uninterpreted functions, each
//! axiom with explicit patterns (as in [`super::seq`]):
//! * `has(m, k)` — `k` is a key of `m` (PVL `k in keysMap(m)`, `k in m`);
//! * `get(m, k)` — the lookup `m[k]`;
//! * `empty`, `build(m, k, v)` (`buildMap`, literals, `m[k -> v]`),
//!   `remove(m, k)` (`removeFromMap`), `card(m)` (`|m|`, `cardMap`),
//!   `equal(a, b)` (`==`, `equalsMap`), `disjoint(a, b)` (`disjointMap`: no
//!   common key, Viper's `Map_disjoint`).
//!
//! **Model** (why the axioms are consistent): a map is a finite partial function
//! `K ⇀ V`; `get(m, k)` is `m(k)` on the domain and `undef(k)` outside it, for
//! one fixed but unknown function `undef` of the key alone. Every axiom below
//! holds in that model; in particular two maps with the same keys and the same
//! values at those keys are the same object, so `equal(a, b) ⇒ a = b` cannot
//! contradict congruence of `get` outside the domain. A lookup outside the
//! domain is therefore *not* an error (VerCors 1 did not check it either, and
//! the corpus' `maps_example_from_dafny` reads `a[4]` of `{3 ↦ 9}`), but the
//! axioms say nothing about its value beyond what equal maps share:
//! `{3 ↦ 9}[4] == 0` and `{3 ↦ 9}[4] == {}[4]` are not provable (the
//! `build`/`remove` lookup axioms hold only at keys).

use super::seq::sort_tag;
use crate::verify::smt::{Sort, Term};
use std::rc::Rc;

/// The function symbols of one `Map<K,V>` instance.
#[derive(Clone, Debug)]
pub struct MapFns {
    pub key: Sort,
    pub val: Sort,
    pub sort: Sort,
    tag: String,
}

impl MapFns {
    pub fn new(key: Sort, val: Sort) -> MapFns {
        let tag = format!("{},{}", sort_tag(&key), sort_tag(&val));
        MapFns { sort: Sort::named(&format!("Map<{tag}>")), key, val, tag }
    }
    fn f(&self, name: &str) -> String {
        format!("map.{name}<{}>", self.tag)
    }
    /// The instance's tag (`Int,Int`), for symbols of other theories about maps.
    pub fn tag(&self) -> &str {
        &self.tag
    }
    pub fn has(&self, m: &Term, k: &Term) -> Term {
        Term::app(&self.f("has"), vec![m.clone(), k.clone()], Sort::Bool)
    }
    pub fn get(&self, m: &Term, k: &Term) -> Term {
        Term::app(&self.f("get"), vec![m.clone(), k.clone()], self.val.clone())
    }
    pub fn empty(&self) -> Term {
        Term::app(&self.f("empty"), vec![], self.sort.clone())
    }
    pub fn build(&self, m: &Term, k: &Term, v: &Term) -> Term {
        Term::app(&self.f("build"), vec![m.clone(), k.clone(), v.clone()], self.sort.clone())
    }
    pub fn remove(&self, m: &Term, k: &Term) -> Term {
        Term::app(&self.f("remove"), vec![m.clone(), k.clone()], self.sort.clone())
    }
    pub fn card(&self, m: &Term) -> Term {
        Term::app(&self.f("card"), vec![m.clone()], Sort::Int)
    }
    pub fn equal(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("equal"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    pub fn disjoint(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("disjoint"), vec![a.clone(), b.clone()], Sort::Bool)
    }

    /// The axioms of this instance. Every one is true in the model of the
    /// module comment.
    pub fn axioms(&self) -> Vec<Term> {
        let v = |n: &str, s: &Sort| (Rc::<str>::from(format!("{n}@map<{}>", self.tag)), s.clone());
        let c = |(n, s): &(Rc<str>, Sort)| Term::konst(n, s.clone());
        let (m_, a_, b_) = (v("m", &self.sort), v("a", &self.sort), v("b", &self.sort));
        let (k_, j_, x_) = (v("k", &self.key), v("j", &self.key), v("x", &self.val));
        let (m, a, b, k, j, x) = (c(&m_), c(&a_), c(&b_), c(&k_), c(&j_), c(&x_));
        let q = |vars: Vec<&(Rc<str>, Sort)>, pats: Vec<Vec<Term>>, body: Term, qid: &str| {
            Term::forall(vars.into_iter().cloned().collect(), pats, body, &format!("{qid}<{}>", self.tag))
        };
        let iff = |l: &Term, r: &Term| l.implies(r).and2(&r.implies(l));
        let zero = Term::int(0);
        let bld = self.build(&m, &k, &x);
        let rem = self.remove(&m, &k);
        let mut ax = vec![
            // Empty map.
            q(vec![&k_], vec![vec![self.has(&self.empty(), &k)]], self.has(&self.empty(), &k).not(), "map.empty_has"),
            self.card(&self.empty()).eq(&zero),
            // build(m, k, x): the key just stored is present with its value
            // (triggered by the map itself, so `disjointMap(b, {6 ↦ 3})` finds
            // the witness 6 without a lookup of it in the program).
            q(vec![&m_, &k_, &x_], vec![vec![bld.clone()]], self.has(&bld, &k).and2(&self.get(&bld, &k).eq(&x)), "map.build_same"),
            q(
                vec![&m_, &k_, &x_, &j_],
                vec![vec![self.has(&bld, &j)]],
                iff(&self.has(&bld, &j), &j.eq(&k).or2(&self.has(&m, &j))),
                "map.build_has",
            ),
            q(
                vec![&m_, &k_, &x_, &j_],
                vec![vec![self.get(&bld, &j)]],
                // Only at keys: a lookup outside the keys stays unknown
                // (`{3 ↦ 9}[4] == {}[4]` is not provable).
                j.eq(&k).or2(&self.has(&m, &j)).implies(&self.get(&bld, &j).eq(&j.eq(&k).ite(&x, &self.get(&m, &j)))),
                "map.build_get",
            ),
            q(
                vec![&m_, &k_, &x_],
                vec![vec![self.card(&bld)]],
                self.card(&bld).eq(&self.has(&m, &k).ite(&self.card(&m), &self.card(&m).add(&Term::int(1)))),
                "map.build_card",
            ),
            // remove(m, k): `k` is gone, the rest unchanged.
            q(vec![&m_, &k_], vec![vec![rem.clone()]], self.has(&rem, &k).not(), "map.remove_same"),
            q(
                vec![&m_, &k_, &j_],
                vec![vec![self.has(&rem, &j)]],
                iff(&self.has(&rem, &j), &j.ne(&k).and2(&self.has(&m, &j))),
                "map.remove_has",
            ),
            q(
                vec![&m_, &k_, &j_],
                vec![vec![self.get(&rem, &j)]],
                j.ne(&k).and2(&self.has(&m, &j)).implies(&self.get(&rem, &j).eq(&self.get(&m, &j))),
                "map.remove_get",
            ),
            q(
                vec![&m_, &k_],
                vec![vec![self.card(&rem)]],
                self.card(&rem).eq(&self.has(&m, &k).ite(&self.card(&m).sub(&Term::int(1)), &self.card(&m))),
                "map.remove_card",
            ),
            // Cardinality.
            q(vec![&m_], vec![vec![self.card(&m)]], zero.le(&self.card(&m)), "map.card_nonneg"),
            q(vec![&m_], vec![vec![self.card(&m)]], self.card(&m).eq(&zero).implies(&m.eq(&self.empty())), "map.card_zero"),
            q(
                vec![&m_, &k_],
                vec![vec![self.has(&m, &k), self.card(&m)]],
                self.has(&m, &k).implies(&zero.lt(&self.card(&m))),
                "map.card_pos",
            ),
        ];
        // Extensional equality: same keys, same values at the keys; equal maps
        // are identical (see the model).
        let same = Term::forall(
            vec![k_.clone()],
            vec![vec![self.has(&a, &k)], vec![self.has(&b, &k)], vec![self.get(&a, &k)], vec![self.get(&b, &k)]],
            self.has(&a, &k).eq(&self.has(&b, &k)).and2(&self.has(&a, &k).implies(&self.get(&a, &k).eq(&self.get(&b, &k)))),
            &format!("map.equal_keys<{}>", self.tag),
        );
        let eq = self.equal(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], iff(&eq, &same), "map.equal"));
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&a.eq(&b)), "map.equal_ident"));
        // Disjointness: no common key.
        let apart = Term::forall(
            vec![k_.clone()],
            vec![vec![self.has(&a, &k)], vec![self.has(&b, &k)]],
            self.has(&a, &k).and2(&self.has(&b, &k)).not(),
            &format!("map.disjoint_keys<{}>", self.tag),
        );
        let dis = self.disjoint(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![dis.clone()]], iff(&dis, &apart), "map.disjoint"));
        ax
    }
}
