//! `seq<T>` as an axiomatised uninterpreted sort (Dafny/Viper style).
//!
//! Z3's native sequence theory has a history of wrong answers, so (as the encoding
//! note recommends) sequences are a sort `Seq<T>` per element sort with
//! uninterpreted functions and the usual axioms, each with an explicit pattern:
//! length, index, empty, singleton, concatenation, take/drop (slices), update,
//! extensional equality and membership. PVL `==` on sequences is `seq.equal`,
//! which the extensionality axioms make coincide with `=`.

use crate::verify::smt::{Sort, Term};
use std::rc::Rc;

/// The function symbols of one `Seq<T>` instance.
#[derive(Clone, Debug)]
pub struct SeqFns {
    pub elem: Sort,
    pub sort: Sort,
    tag: String,
}

impl SeqFns {
    pub fn new(elem: Sort) -> SeqFns {
        let tag = sort_tag(&elem);
        SeqFns { sort: Sort::named(&format!("Seq<{tag}>")), elem, tag }
    }
    fn f(&self, name: &str) -> String {
        format!("seq.{name}<{}>", self.tag)
    }
    pub fn len(&self, s: &Term) -> Term {
        Term::app(&self.f("len"), vec![s.clone()], Sort::Int)
    }
    pub fn index(&self, s: &Term, i: &Term) -> Term {
        Term::app(&self.f("index"), vec![s.clone(), i.clone()], self.elem.clone())
    }
    pub fn empty(&self) -> Term {
        Term::app(&self.f("empty"), vec![], self.sort.clone())
    }
    pub fn unit(&self, v: &Term) -> Term {
        Term::app(&self.f("unit"), vec![v.clone()], self.sort.clone())
    }
    pub fn concat(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("concat"), vec![a.clone(), b.clone()], self.sort.clone())
    }
    pub fn take(&self, s: &Term, n: &Term) -> Term {
        Term::app(&self.f("take"), vec![s.clone(), n.clone()], self.sort.clone())
    }
    pub fn drop(&self, s: &Term, n: &Term) -> Term {
        Term::app(&self.f("drop"), vec![s.clone(), n.clone()], self.sort.clone())
    }
    pub fn update(&self, s: &Term, i: &Term, v: &Term) -> Term {
        Term::app(&self.f("update"), vec![s.clone(), i.clone(), v.clone()], self.sort.clone())
    }
    pub fn equal(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("equal"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    pub fn contains(&self, s: &Term, x: &Term) -> Term {
        Term::app(&self.f("contains"), vec![s.clone(), x.clone()], Sort::Bool)
    }

    /// The axioms of this instance.
    pub fn axioms(&self) -> Vec<Term> {
        let v = |n: &str, s: &Sort| (Rc::<str>::from(format!("{n}@{}", self.tag)), s.clone());
        let c = |(n, s): &(Rc<str>, Sort)| Term::konst(n, s.clone());
        let (s_, a_, b_) = (v("s", &self.sort), v("a", &self.sort), v("b", &self.sort));
        let (i_, j_, n_) = (v("i", &Sort::Int), v("j", &Sort::Int), v("n", &Sort::Int));
        let x_ = v("x", &self.elem);
        let (s, a, b, i, j, n, x) = (c(&s_), c(&a_), c(&b_), c(&i_), c(&j_), c(&n_), c(&x_));
        let zero = Term::int(0);
        let q = |vars: Vec<&(Rc<str>, Sort)>, pats: Vec<Vec<Term>>, body: Term, qid: &str| {
            Term::forall(vars.into_iter().cloned().collect(), pats, body, &format!("{qid}<{}>", self.tag))
        };
        let in_range = |k: &Term, lo: &Term, hi: &Term| lo.le(k).and2(&k.lt(hi));
        let mut ax = vec![
            q(vec![&s_], vec![vec![self.len(&s)]], self.len(&s).ge(&zero), "seq.len_nonneg"),
            self.len(&self.empty()).eq(&zero),
            q(vec![&s_], vec![vec![self.len(&s)]], self.len(&s).eq(&zero).implies(&s.eq(&self.empty())), "seq.len_zero"),
            q(vec![&x_], vec![vec![self.unit(&x)]], self.len(&self.unit(&x)).eq(&Term::int(1)), "seq.unit_len"),
            q(vec![&x_], vec![vec![self.unit(&x)]], self.index(&self.unit(&x), &zero).eq(&x), "seq.unit_index"),
            q(
                vec![&a_, &b_],
                vec![vec![self.len(&self.concat(&a, &b))]],
                self.len(&self.concat(&a, &b)).eq(&self.len(&a).add(&self.len(&b))),
                "seq.concat_len",
            ),
            q(
                vec![&a_, &b_, &i_],
                vec![vec![self.index(&self.concat(&a, &b), &i)]],
                self.index(&self.concat(&a, &b), &i).eq(&i.lt(&self.len(&a)).ite(
                    &self.index(&a, &i),
                    &self.index(&b, &i.sub(&self.len(&a))),
                )),
                "seq.concat_index",
            ),
            q(vec![&s_], vec![vec![self.concat(&s, &self.empty())]], self.concat(&s, &self.empty()).eq(&s), "seq.concat_empty_r"),
            q(vec![&s_], vec![vec![self.concat(&self.empty(), &s)]], self.concat(&self.empty(), &s).eq(&s), "seq.concat_empty_l"),
            q(
                vec![&s_, &n_],
                vec![vec![self.len(&self.take(&s, &n))]],
                zero.le(&n).and2(&n.le(&self.len(&s))).implies(&self.len(&self.take(&s, &n)).eq(&n)),
                "seq.take_len",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&self.take(&s, &n), &i)]],
                Term::and(vec![in_range(&i, &zero, &n), n.le(&self.len(&s))])
                    .implies(&self.index(&self.take(&s, &n), &i).eq(&self.index(&s, &i))),
                "seq.take_index",
            ),
            q(
                vec![&s_, &n_],
                vec![vec![self.len(&self.drop(&s, &n))]],
                zero.le(&n).and2(&n.le(&self.len(&s))).implies(&self.len(&self.drop(&s, &n)).eq(&self.len(&s).sub(&n))),
                "seq.drop_len",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&self.drop(&s, &n), &i)]],
                Term::and(vec![zero.le(&n), in_range(&i, &zero, &self.len(&s).sub(&n))])
                    .implies(&self.index(&self.drop(&s, &n), &i).eq(&self.index(&s, &i.add(&n)))),
                "seq.drop_index",
            ),
            q(
                vec![&s_, &i_, &x_],
                vec![vec![self.len(&self.update(&s, &i, &x))]],
                in_range(&i, &zero, &self.len(&s)).implies(&self.len(&self.update(&s, &i, &x)).eq(&self.len(&s))),
                "seq.update_len",
            ),
            q(
                vec![&s_, &i_, &x_, &j_],
                vec![vec![self.index(&self.update(&s, &i, &x), &j)]],
                in_range(&i, &zero, &self.len(&s))
                    .implies(&self.index(&self.update(&s, &i, &x), &j).eq(&i.eq(&j).ite(&x, &self.index(&s, &j)))),
                "seq.update_index",
            ),
        ];
        // Extensionality: equal(a, b) iff same length and same elements; and
        // equal sequences are identical.
        let same_elems = Term::forall(
            vec![j_.clone()],
            vec![vec![self.index(&a, &j)], vec![self.index(&b, &j)]],
            in_range(&j, &zero, &self.len(&a)).implies(&self.index(&a, &j).eq(&self.index(&b, &j))),
            &format!("seq.equal_elems<{}>", self.tag),
        );
        let eq_def = self.len(&a).eq(&self.len(&b)).and2(&same_elems);
        let eq = self.equal(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&eq_def).and2(&eq_def.implies(&eq)), "seq.equal"));
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&a.eq(&b)), "seq.equal_ident"));
        let witness = Term::exists(
            vec![j_.clone()],
            vec![vec![self.index(&s, &j)]],
            in_range(&j, &zero, &self.len(&s)).and2(&self.index(&s, &j).eq(&x)),
            &format!("seq.contains_witness<{}>", self.tag),
        );
        let cont = self.contains(&s, &x);
        ax.push(q(vec![&s_, &x_], vec![vec![cont.clone()]], cont.implies(&witness).and2(&witness.implies(&cont)), "seq.contains"));
        ax
    }
}

/// A short, symbol-safe name for a sort.
pub fn sort_tag(s: &Sort) -> String {
    match s {
        Sort::Bool => "Bool".into(),
        Sort::Int => "Int".into(),
        Sort::Real => "Real".into(),
        Sort::Named(n) => n.to_string(),
    }
}
