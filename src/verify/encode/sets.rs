//! `set<T>` as an axiomatised uninterpreted sort (Dafny's `Set`, monomorphised
//! like [`super::seq`]), and the key set of a map (`keysMap`).
//!
//! A set is known through membership `in(s, x)`: `empty`, `add(s, x)` (literals,
//! element by element, so their size is known as for Dafny's `UnionOne`),
//! `union(a, b)` (PVL `+`), `diff(a, b)` (PVL `-`), `card(s)` (`|s|`),
//! `equal(a, b)` (`==`, extensional), `sub(a, b)` (`<=`), and `keys(m)` for a
//! map `m` (members: the keys; size: the map's). The cardinality of a union
//! or difference is related through an uninterpreted intersection `inter(a, b)`
//! (inclusion–exclusion); PVL has no intersection operator.
//!
//! **Model** (why the axioms are consistent): finite sets with the usual
//! operations; the key set of a finite partial function is its (finite) domain.
//! Sets with the same members are the same object.

use super::maps::MapFns;
use super::seq::sort_tag;
use crate::verify::smt::{Sort, Term};
use std::rc::Rc;

/// The function symbols of one `Set<T>` instance.
#[derive(Clone, Debug)]
pub struct SetFns {
    pub elem: Sort,
    pub sort: Sort,
    tag: String,
}

impl SetFns {
    pub fn new(elem: Sort) -> SetFns {
        let tag = sort_tag(&elem);
        SetFns { sort: Sort::named(&format!("Set<{tag}>")), elem, tag }
    }
    fn f(&self, name: &str) -> String {
        format!("set.{name}<{}>", self.tag)
    }
    pub fn contains(&self, s: &Term, x: &Term) -> Term {
        Term::app(&self.f("in"), vec![s.clone(), x.clone()], Sort::Bool)
    }
    pub fn empty(&self) -> Term {
        Term::app(&self.f("empty"), vec![], self.sort.clone())
    }
    /// `s ∪ {x}`.
    pub fn add(&self, s: &Term, x: &Term) -> Term {
        Term::app(&self.f("add"), vec![s.clone(), x.clone()], self.sort.clone())
    }
    pub fn union(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("union"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    pub fn diff(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("diff"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    fn inter(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("inter"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    pub fn card(&self, s: &Term) -> Term {
        Term::app(&self.f("card"), vec![s.clone()], Sort::Int)
    }
    pub fn equal(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("equal"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    pub fn sub(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("sub"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    /// The key set of map `m` (whose key sort is this set's element sort).
    pub fn keys(&self, map: &MapFns, m: &Term) -> Term {
        Term::app(&format!("map.keys<{}>", map.tag()), vec![m.clone()], self.sort.clone())
    }

    /// The axioms of this instance, each true in the model of the module comment.
    pub fn axioms(&self) -> Vec<Term> {
        let v = |n: &str, s: &Sort| (Rc::<str>::from(format!("{n}@set<{}>", self.tag)), s.clone());
        let c = |(n, s): &(Rc<str>, Sort)| Term::konst(n, s.clone());
        let (a_, b_, s_) = (v("a", &self.sort), v("b", &self.sort), v("s", &self.sort));
        let (x_, y_) = (v("x", &self.elem), v("y", &self.elem));
        let (a, b, s, x, y) = (c(&a_), c(&b_), c(&s_), c(&x_), c(&y_));
        let q = |vars: Vec<&(Rc<str>, Sort)>, pats: Vec<Vec<Term>>, body: Term, qid: &str| {
            Term::forall(vars.into_iter().cloned().collect(), pats, body, &format!("{qid}<{}>", self.tag))
        };
        let iff = |l: &Term, r: &Term| l.implies(r).and2(&r.implies(l));
        let zero = Term::int(0);
        let add = self.add(&s, &y);
        let (uni, dif, int) = (self.union(&a, &b), self.diff(&a, &b), self.inter(&a, &b));
        let (ia, ib) = (self.contains(&a, &x), self.contains(&b, &x));
        let mut ax = vec![
            // Membership.
            q(vec![&x_], vec![vec![self.contains(&self.empty(), &x)]], self.contains(&self.empty(), &x).not(), "set.empty_in"),
            q(vec![&s_, &y_], vec![vec![add.clone()]], self.contains(&add, &y), "set.add_same"),
            q(
                vec![&s_, &y_, &x_],
                vec![vec![self.contains(&add, &x)]],
                iff(&self.contains(&add, &x), &x.eq(&y).or2(&self.contains(&s, &x))),
                "set.add_in",
            ),
            q(
                vec![&s_, &y_, &x_],
                vec![vec![add.clone(), self.contains(&s, &x)]],
                self.contains(&s, &x).implies(&self.contains(&add, &x)),
                "set.add_in_rev",
            ),
            q(vec![&a_, &b_, &x_], vec![vec![self.contains(&uni, &x)]], iff(&self.contains(&uni, &x), &ia.or2(&ib)), "set.union_in"),
            // From a known member of an operand (Dafny's `{Union(a, b), a[y]}`):
            // supplies the witness that two sets differ.
            q(vec![&a_, &b_, &x_], vec![vec![uni.clone(), ia.clone()]], ia.implies(&self.contains(&uni, &x)), "set.union_in_l"),
            q(vec![&a_, &b_, &x_], vec![vec![uni.clone(), ib.clone()]], ib.implies(&self.contains(&uni, &x)), "set.union_in_r"),
            q(vec![&a_, &b_, &x_], vec![vec![self.contains(&int, &x)]], iff(&self.contains(&int, &x), &ia.and2(&ib)), "set.inter_in"),
            q(vec![&a_, &b_, &x_], vec![vec![self.contains(&dif, &x)]], iff(&self.contains(&dif, &x), &ia.and2(&ib.not())), "set.diff_in"),
            // Cardinality.
            q(vec![&s_], vec![vec![self.card(&s)]], zero.le(&self.card(&s)), "set.card_nonneg"),
            self.card(&self.empty()).eq(&zero),
            q(vec![&s_], vec![vec![self.card(&s)]], self.card(&s).eq(&zero).implies(&s.eq(&self.empty())), "set.card_zero"),
            q(
                vec![&s_, &y_],
                vec![vec![self.card(&add)]],
                self.card(&add).eq(&self.contains(&s, &y).ite(&self.card(&s), &self.card(&s).add(&Term::int(1)))),
                "set.add_card",
            ),
            q(
                vec![&a_, &b_],
                vec![vec![self.card(&uni)], vec![self.card(&int)]],
                self.card(&uni).add(&self.card(&int)).eq(&self.card(&a).add(&self.card(&b))),
                "set.union_card",
            ),
            q(vec![&a_, &b_], vec![vec![self.card(&dif)]], self.card(&dif).add(&self.card(&int)).eq(&self.card(&a)), "set.diff_card"),
        ];
        let pats = vec![vec![ia.clone()], vec![ib.clone()]];
        let same = Term::forall(vec![x_.clone()], pats.clone(), ia.eq(&ib), &format!("set.equal_members<{}>", self.tag));
        let eq = self.equal(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], iff(&eq, &same), "set.equal"));
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&a.eq(&b)), "set.equal_ident"));
        let within = Term::forall(vec![x_.clone()], pats, ia.implies(&ib), &format!("set.sub_members<{}>", self.tag));
        let sub = self.sub(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![sub.clone()]], iff(&sub, &within), "set.sub"));
        ax
    }

    /// The axioms of `keys` for maps `map` (key sort = this element sort).
    pub fn keys_axioms(&self, map: &MapFns) -> Vec<Term> {
        let tag = map.tag();
        let m_ = (Rc::<str>::from(format!("m@keys<{tag}>")), map.sort.clone());
        let k_ = (Rc::<str>::from(format!("k@keys<{tag}>")), self.elem.clone());
        let (m, k) = (Term::konst(&m_.0, m_.1.clone()), Term::konst(&k_.0, k_.1.clone()));
        let keys = self.keys(map, &m);
        let member = self.contains(&keys, &k);
        let has = map.has(&m, &k);
        vec![
            Term::forall(
                vec![m_.clone(), k_],
                vec![vec![member.clone()]],
                member.implies(&has).and2(&has.implies(&member)),
                &format!("map.keys_in<{tag}>"),
            ),
            Term::forall(vec![m_], vec![vec![self.card(&keys)]], self.card(&keys).eq(&map.card(&m)), &format!("map.keys_card<{tag}>")),
        ]
    }
}
