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
        if n.as_int_lit() == Some(0) {
            return s.clone();
        }
        Term::app(&self.f("drop"), vec![s.clone(), n.clone()], self.sort.clone())
    }
    pub fn update(&self, s: &Term, i: &Term, v: &Term) -> Term {
        Term::app(&self.f("update"), vec![s.clone(), i.clone(), v.clone()], self.sort.clone())
    }
    pub fn equal(&self, a: &Term, b: &Term) -> Term {
        Term::app(&self.f("equal"), vec![a.clone(), b.clone()], Sort::Bool)
    }
    /// `i + j` for index arithmetic inside the axioms (Carbon's `Seq#Add`). The
    /// axioms state `minus(plus(i, n), n) = i` as an equation between
    /// uninterpreted terms, so an index computed forward and back again lands in
    /// the E-class of the original index instead of making a fresh arithmetic
    /// term that triggers the next round of instantiations (a matching loop
    /// between the forward and reverse index axioms of drop and concat).
    fn plus(&self, i: &Term, j: &Term) -> Term {
        Term::app(&self.f("plus"), vec![i.clone(), j.clone()], Sort::Int)
    }
    /// `i - j`, see [`SeqFns::plus`].
    fn minus(&self, i: &Term, j: &Term) -> Term {
        Term::app(&self.f("minus"), vec![i.clone(), j.clone()], Sort::Int)
    }
    pub fn contains(&self, s: &Term, x: &Term) -> Term {
        Term::app(&self.f("contains"), vec![s.clone(), x.clone()], Sort::Bool)
    }

    /// The axioms of this instance.
    ///
    /// Besides the defining axioms (length and index of every constructor) there
    /// are *reverse* index axioms in Carbon's style: an element `s[i]` that is
    /// already known, together with a slice or concatenation of `s`, yields the
    /// matching element of the slice (`drop(s, n)[i - n] = s[i]`). Without them
    /// a fact stated about `s[lo..]` (`sorted(s[lo..])` unfolded) is never
    /// instantiated at the indices a proof talks about.
    pub fn axioms(&self) -> Vec<Term> {
        let v = |n: &str, s: &Sort| (Rc::<str>::from(format!("{n}@{}", self.tag)), s.clone());
        let c = |(n, s): &(Rc<str>, Sort)| Term::konst(n, s.clone());
        let (s_, a_, b_) = (v("s", &self.sort), v("a", &self.sort), v("b", &self.sort));
        let (i_, j_, n_) = (v("i", &Sort::Int), v("j", &Sort::Int), v("n", &Sort::Int));
        let (x_, y_) = (v("x", &self.elem), v("y", &self.elem));
        let (s, a, b, i, j, n, x, y) = (c(&s_), c(&a_), c(&b_), c(&i_), c(&j_), c(&n_), c(&x_), c(&y_));
        let zero = Term::int(0);
        let q = |vars: Vec<&(Rc<str>, Sort)>, pats: Vec<Vec<Term>>, body: Term, qid: &str| {
            Term::forall(vars.into_iter().cloned().collect(), pats, body, &format!("{qid}<{}>", self.tag))
        };
        let in_range = |k: &Term, lo: &Term, hi: &Term| lo.le(k).and2(&k.lt(hi));
        let (len_s, len_a, len_b) = (self.len(&s), self.len(&a), self.len(&b));
        let (take, drop, cat) = (self.take(&s, &n), self.drop(&s, &n), self.concat(&a, &b));
        let upd = self.update(&s, &i, &x);
        let mut ax = vec![
            // Index arithmetic (see `plus`).
            q(vec![&i_, &j_], vec![vec![self.plus(&i, &j)]], self.plus(&i, &j).eq(&i.add(&j)), "seq.plus"),
            q(vec![&i_, &j_], vec![vec![self.minus(&i, &j)]], self.minus(&i, &j).eq(&i.sub(&j)), "seq.minus"),
            // Length.
            q(vec![&s_], vec![vec![len_s.clone()]], len_s.ge(&zero), "seq.len_nonneg"),
            self.len(&self.empty()).eq(&zero),
            q(vec![&s_], vec![vec![len_s.clone()]], len_s.eq(&zero).implies(&s.eq(&self.empty())), "seq.len_zero"),
            // Singleton.
            q(vec![&x_], vec![vec![self.unit(&x)]], self.len(&self.unit(&x)).eq(&Term::int(1)), "seq.unit_len"),
            q(vec![&x_], vec![vec![self.unit(&x)]], self.index(&self.unit(&x), &zero).eq(&x), "seq.unit_index"),
            // Also for an index term that is 0 only by arithmetic (`[x][i - |s|]`).
            q(
                vec![&x_, &i_],
                vec![vec![self.index(&self.unit(&x), &i)]],
                i.eq(&zero).implies(&self.index(&self.unit(&x), &i).eq(&x)),
                "seq.unit_index_at",
            ),
            // Concatenation.
            q(vec![&a_, &b_], vec![vec![self.len(&cat)]], self.len(&cat).eq(&len_a.add(&len_b)), "seq.concat_len"),
            q(
                vec![&a_, &b_, &i_],
                vec![vec![self.index(&cat, &i)]],
                Term::and(vec![
                    i.lt(&len_a).implies(&self.index(&cat, &i).eq(&self.index(&a, &i))),
                    len_a.le(&i).implies(&Term::and(vec![
                        self.plus(&self.minus(&i, &len_a), &len_a).eq(&i),
                        self.index(&cat, &i).eq(&self.index(&b, &self.minus(&i, &len_a))),
                    ])),
                ]),
                "seq.concat_index",
            ),
            q(
                vec![&a_, &b_, &i_],
                vec![vec![self.index(&a, &i), cat.clone()]],
                in_range(&i, &zero, &len_a).implies(&self.index(&cat, &i).eq(&self.index(&a, &i))),
                "seq.concat_index_left",
            ),
            q(
                vec![&a_, &b_, &i_],
                vec![vec![self.index(&b, &i), cat.clone()]],
                in_range(&i, &zero, &len_b).implies(&Term::and(vec![
                    self.minus(&self.plus(&i, &len_a), &len_a).eq(&i),
                    self.index(&cat, &self.plus(&i, &len_a)).eq(&self.index(&b, &i)),
                ])),
                "seq.concat_index_right",
            ),
            q(vec![&s_], vec![vec![self.concat(&s, &self.empty())]], self.concat(&s, &self.empty()).eq(&s), "seq.concat_empty_r"),
            q(vec![&s_], vec![vec![self.concat(&self.empty(), &s)]], self.concat(&self.empty(), &s).eq(&s), "seq.concat_empty_l"),
            q(
                vec![&a_, &b_],
                vec![vec![cat.clone()]],
                self.take(&cat, &len_a).eq(&a).and2(&self.drop(&cat, &len_a).eq(&b)),
                "seq.concat_split",
            ),
            // take(s, n): the first n elements (all of s when n > |s|).
            q(
                vec![&s_, &n_],
                vec![vec![self.len(&take)]],
                zero.le(&n).implies(&self.len(&take).eq(&n.le(&len_s).ite(&n, &len_s))),
                "seq.take_len",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&take, &i)]],
                Term::and(vec![in_range(&i, &zero, &n), i.lt(&len_s)]).implies(&self.index(&take, &i).eq(&self.index(&s, &i))),
                "seq.take_index",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&s, &i), take.clone()]],
                Term::and(vec![in_range(&i, &zero, &n), i.lt(&len_s)]).implies(&self.index(&take, &i).eq(&self.index(&s, &i))),
                "seq.take_index_rev",
            ),
            q(vec![&s_, &n_], vec![vec![take.clone()]], n.eq(&zero).implies(&take.eq(&self.empty())), "seq.take_zero"),
            q(vec![&s_, &n_], vec![vec![take.clone()]], n.eq(&len_s).implies(&take.eq(&s)), "seq.take_all"),
            // drop(s, n): all but the first n elements (empty when n > |s|).
            q(
                vec![&s_, &n_],
                vec![vec![self.len(&drop)]],
                zero.le(&n).implies(&self.len(&drop).eq(&n.le(&len_s).ite(&len_s.sub(&n), &zero))),
                "seq.drop_len",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&drop, &i)]],
                Term::and(vec![zero.le(&n), in_range(&i, &zero, &len_s.sub(&n))]).implies(&Term::and(vec![
                    self.minus(&self.plus(&i, &n), &n).eq(&i),
                    self.index(&drop, &i).eq(&self.index(&s, &self.plus(&i, &n))),
                ])),
                "seq.drop_index",
            ),
            q(
                vec![&s_, &n_, &i_],
                vec![vec![self.index(&s, &i), drop.clone()]],
                Term::and(vec![zero.le(&n), n.le(&i), i.lt(&len_s)]).implies(&Term::and(vec![
                    self.plus(&self.minus(&i, &n), &n).eq(&i),
                    self.index(&drop, &self.minus(&i, &n)).eq(&self.index(&s, &i)),
                ])),
                "seq.drop_index_rev",
            ),
            q(vec![&s_, &n_], vec![vec![drop.clone()]], n.eq(&zero).implies(&drop.eq(&s)), "seq.drop_zero"),
            // Update.
            q(
                vec![&s_, &i_, &x_],
                vec![vec![self.len(&upd)]],
                in_range(&i, &zero, &len_s).implies(&self.len(&upd).eq(&len_s)),
                "seq.update_len",
            ),
            q(
                vec![&s_, &i_, &x_, &j_],
                vec![vec![self.index(&upd, &j)]],
                in_range(&i, &zero, &len_s).implies(&self.index(&upd, &j).eq(&i.eq(&j).ite(&x, &self.index(&s, &j)))),
                "seq.update_index",
            ),
            q(
                vec![&s_, &i_, &x_, &j_],
                vec![vec![self.index(&s, &j), upd.clone()]],
                Term::and(vec![in_range(&i, &zero, &len_s), j.ne(&i)]).implies(&self.index(&upd, &j).eq(&self.index(&s, &j))),
                "seq.update_index_rev",
            ),
        ];
        // Extensionality: equal(a, b) iff same length and same elements; and
        // equal sequences are identical.
        let same_elems = Term::forall(
            vec![j_.clone()],
            vec![vec![self.index(&a, &j)], vec![self.index(&b, &j)]],
            in_range(&j, &zero, &len_a).implies(&self.index(&a, &j).eq(&self.index(&b, &j))),
            &format!("seq.equal_elems<{}>", self.tag),
        );
        let eq_def = len_a.eq(&len_b).and2(&same_elems);
        let eq = self.equal(&a, &b);
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&eq_def).and2(&eq_def.implies(&eq)), "seq.equal"));
        ax.push(q(vec![&a_, &b_], vec![vec![eq.clone()]], eq.implies(&a.eq(&b)), "seq.equal_ident"));
        let units = self.equal(&self.unit(&x), &self.unit(&y));
        ax.push(q(vec![&x_, &y_], vec![vec![units.clone()]], units.implies(&x.eq(&y)), "seq.equal_units"));
        // Membership: a witness index, and how it distributes over the constructors.
        let witness = |seq: &Term, lo: &Term, hi: &Term, qid: &str| {
            Term::exists(
                vec![j_.clone()],
                vec![vec![self.index(seq, &j)]],
                Term::and(vec![lo.le(&j), j.lt(hi), self.index(seq, &j).eq(&x)]),
                &format!("{qid}<{}>", self.tag),
            )
        };
        let iff = |l: &Term, r: &Term| l.implies(r).and2(&r.implies(l));
        let cont = self.contains(&s, &x);
        ax.push(q(
            vec![&s_, &x_],
            vec![vec![cont.clone()]],
            iff(&cont, &witness(&s, &zero, &len_s, "seq.contains_witness")),
            "seq.contains",
        ));
        ax.push(q(vec![&x_], vec![vec![self.contains(&self.empty(), &x)]], self.contains(&self.empty(), &x).not(), "seq.contains_empty"));
        let cu = self.contains(&self.unit(&y), &x);
        ax.push(q(vec![&x_, &y_], vec![vec![cu.clone()]], iff(&cu, &x.eq(&y)), "seq.contains_unit"));
        let cc = self.contains(&cat, &x);
        ax.push(q(
            vec![&a_, &b_, &x_],
            vec![vec![cc.clone()]],
            iff(&cc, &self.contains(&a, &x).or2(&self.contains(&b, &x))),
            "seq.contains_concat",
        ));
        let ct = self.contains(&take, &x);
        let upto = n.le(&len_s).ite(&n, &len_s);
        ax.push(q(
            vec![&s_, &n_, &x_],
            vec![vec![ct.clone()]],
            iff(&ct, &witness(&s, &zero, &upto, "seq.contains_take_w")),
            "seq.contains_take",
        ));
        let cd = self.contains(&drop, &x);
        ax.push(q(
            vec![&s_, &n_, &x_],
            vec![vec![cd.clone()]],
            zero.le(&n).implies(&iff(&cd, &witness(&s, &n, &len_s, "seq.contains_drop_w"))),
            "seq.contains_drop",
        ));
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
