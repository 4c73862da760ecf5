//! `bag<T>` (multisets) as an axiomatised uninterpreted sort (Dafny's
//! `MultiSet`, monomorphised like [`super::seq`]).
//!
//! A bag is known through `count(b, x)`, the multiplicity of `x` (an `Int`,
//! never negative): `empty`, `unit(x)` (literals), `union(a, b)` (PVL `+`, sums
//! multiplicities), `diff(a, b)` (PVL `-`, truncated at 0), `card(b)` (`|b|`,
//! the sum of all multiplicities), `equal(a, b)` (`==`, extensional),
//! `sub(a, b)` (`<=`: every multiplicity at most the other's). PVL `x in b` is
//! `count(b, x) > 0` (the type checker gives `in` the type `boolean`).
//!
//! **Model** (why the axioms are consistent): finite multisets, i.e. functions
//! `T → ℕ` that are non-zero at finitely many points, with the usual
//! operations; two multisets with the same multiplicities are the same object,
//! so `equal(a, b) ⇒ a = b` holds. `card` of a difference is not axiomatised
//! (incompleteness only).

use super::seq::sort_tag;
use crate::verify::smt::{Sort, Term};
use std::rc::Rc;

/// The function symbols of one `Bag<T>` instance.
#[derive(Clone, Debug)]
pub struct BagFns {
    pub elem: Sort,
    pub sort: Sort,
    tag: String,
}

impl BagFns {
    pub fn new(elem: Sort) -> BagFns {
        let tag = sort_tag(&elem);
        BagFns { sort: Sort::named(&format!("Bag<{tag}>")), elem, tag }
    }
    fn f(&self, name: &str) -> String {
        format!("bag.{name}<{}>", self.tag)
    }
    pub fn count(&self, b: &Term, x: &Term) -> Term {
        Term::app(&self.f("count"), vec![b.clone(), x.clone()], Sort::Int)
    }
    pub fn empty(&self) -> Term {
        Term::app(&self.f("empty"), vec![], self.sort.clone())
    }
    pub fn unit(&self, x: &Term) -> Term {
        Term::app(&self.f("unit"), vec![x.clone()], self.sort.clone())
    }
    pub fn union(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("union"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    pub fn diff(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("diff"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    pub fn card(&self, b: &Term) -> Term {
        Term::app(&self.f("card"), vec![b.clone()], Sort::Int)
    }
    pub fn equal(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("equal"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    pub fn sub(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("sub"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    /// PVL `x in b`.
    pub fn contains(&self, b: &Term, x: &Term) -> Term {
        self.count(b, x).gt(&Term::int(0))
    }

    /// The axioms of this instance, each true in the model of the module comment.
    pub fn axioms(&self) -> Vec<Term> {
        let v = |n: &str, s: &Sort| (Rc::<str>::from(format!("{n}@bag<{}>", self.tag)), s.clone());
        let c = |(n, s): &(Rc<str>, Sort)| Term::konst(n, s.clone());
        let (a_, b_) = (v("a", &self.sort), v("b", &self.sort));
        let (x_, y_) = (v("x", &self.elem), v("y", &self.elem));
        let (a, b, x, y) = (c(&a_), c(&b_), c(&x_), c(&y_));
        let q = |vars: Vec<&(Rc<str>, Sort)>, pats: Vec<Vec<Term>>, body: Term, qid: &str| {
            Term::forall(vars.into_iter().cloned().collect(), pats, body, &format!("{qid}<{}>", self.tag))
        };
        let iff = |l: &Term, r: &Term| l.implies(r).and2(&r.implies(l));
        let (zero, one) = (Term::int(0), Term::int(1));
        let (uni, dif) = (self.union(&a, &b), self.diff(&a, &b));
        let (ca, cb) = (self.count(&a, &x), self.count(&b, &x));
        let mut ax = vec![
            // Multiplicities.
            q(vec![&b_, &x_], vec![vec![cb.clone()]], zero.le(&cb), "bag.count_nonneg"),
            q(vec![&x_], vec![vec![self.count(&self.empty(), &x)]], self.count(&self.empty(), &x).eq(&zero), "bag.empty_count"),
            q(vec![&y_], vec![vec![self.unit(&y)]], self.count(&self.unit(&y), &y).eq(&one), "bag.unit_same"),
            q(
                vec![&y_, &x_],
                vec![vec![self.count(&self.unit(&y), &x)]],
                self.count(&self.unit(&y), &x).eq(&x.eq(&y).ite(&one, &zero)),
                "bag.unit_count",
            ),
            q(vec![&a_, &b_, &x_], vec![vec![self.count(&uni, &x)]], self.count(&uni, &x).eq(&ca.add(&cb)), "bag.union_count"),
            // The same, from a known multiplicity in an operand (Dafny's
            // `{Union(a, b), a[y]}`): supplies the witness that two bags differ
            // (`bag<int>{1, 2, 1} != bag<int>{2, 1}`).
            q(
                vec![&a_, &b_, &x_],
                vec![vec![uni.clone(), ca.clone()], vec![uni.clone(), cb.clone()]],
                self.count(&uni, &x).eq(&ca.add(&cb)),
                "bag.union_count_rev",
            ),
            q(
                vec![&a_, &b_, &x_],
                vec![vec![self.count(&dif, &x)]],
                self.count(&dif, &x).eq(&ca.le(&cb).ite(&zero, &ca.sub(&cb))),
                "bag.diff_count",
            ),
            // Cardinality.
            q(vec![&b_], vec![vec![self.card(&b)]], zero.le(&self.card(&b)), "bag.card_nonneg"),
            self.card(&self.empty()).eq(&zero),
            q(vec![&b_], vec![vec![self.card(&b)]], self.card(&b).eq(&zero).implies(&b.eq(&self.empty())), "bag.card_zero"),
            q(vec![&y_], vec![vec![self.card(&self.unit(&y))]], self.card(&self.unit(&y)).eq(&one), "bag.unit_card"),
            q(vec![&a_, &b_], vec![vec![self.card(&uni)]], self.card(&uni).eq(&self.card(&a).add(&self.card(&b))), "bag.union_card"),
            q(vec![&b_, &x_], vec![vec![cb.clone(), self.card(&b)]], cb.le(&self.card(&b)), "bag.count_card"),
        ];
        // Extensional equality and sub-bags.
        let pats = vec![vec![ca.clone()], vec![cb.clone()]];
        let same = Term::forall(vec![x_.clone()], pats.clone(), ca.eq(&cb), &format!("bag.equal_counts<{}>", self.tag));
        let eq = self.equal(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], iff(&eq, &same), "bag.equal"));
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&a.eq(&b)), "bag.equal_ident"));
        let below = Term::forall(vec![x_.clone()], pats, ca.le(&cb), &format!("bag.sub_counts<{}>", self.tag));
        let sub = self.sub(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![sub.clone()]], iff(&sub, &below), "bag.sub"));
        ax
    }
}
