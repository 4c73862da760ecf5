//! Heap and permission-mask versions.
//!
//! A *family* is one class field (`f:C.f`, domain `Ref`) or the cells of all
//! arrays of one element type (`a:Int`, domain `Arr × Int`). A [`State`] names
//! the current heap and mask version of every family it has touched; families
//! it has not touched are at the state's *base* version (`epoch`), whose mask is
//! zero everywhere (a fresh state holds no permission) and whose heap is
//! arbitrary.
//!
//! Every new version is a fresh function symbol defined by one axiom
//! `∀x {V'(x)}. V'(x) = … V(x) …`: instantiating it only produces terms of older
//! versions, so there are no matching loops, and since the symbol is fresh the
//! axiom is a definition — it is asserted unguarded.
//!
//! **Flattened chains.** Instantiating a version's axiom at a location gives
//! the term of the version before it; Z3 counts every such step as one
//! generation deeper, and stops instantiating at `smt.qi.lazy_threshold`
//! (default 20): a method with several `par` blocks has more than twenty mask
//! versions of one array family, and its last permission checks came back
//! `unknown` ("incomplete quantifiers") although the chain decides them
//! (kernel_fusion's `orig_KernelFusionMultiple2`). So a new version is defined
//! over an older *base* version as well, with the steps in between substituted
//! into its body (`M₃(x) = M₀(x) + d₁(x) + d₂(x) + d₃(x)`, likewise for heaps),
//! next to its one-step definition; after [`FLAT_STEPS`] steps the newest
//! version becomes the next base. Both axioms are consequences of the step
//! definitions, so this is the same set of models; the base is reached in one
//! instantiation instead of up to [`FLAT_STEPS`]. The one-step axiom stays:
//! without it the terms of intermediate versions never arise, and facts stated
//! over them (a par block's quantified postcondition, inhaled at the version
//! after the block) never fire.
//!
//! **Two levels.** The bases themselves form a chain, one instantiation per
//! base: 120 versions of one family are 15 bases, past Z3's bound (alpine's
//! is 7, `smt/solver.rs`). So a version that becomes a base is also defined
//! over the coarse base of its own base (its body and that base's coarse body
//! composed, up to [`FLAT_STEPS`]² steps): the chain of bases is walked
//! [`FLAT_STEPS`] bases per instantiation. Again a consequence of the step
//! definitions; one more axiom every [`FLAT_STEPS`] versions.
//!
//! **Written values are named** (`stmt.rs`, `name_written_value`): a heap
//! write's value is a fresh constant with a ground definition, so the reads
//! it makes (`c.v = c.v + 1`) exist at generation 0 instead of appearing one
//! generation deeper per write inside the version axioms.

use super::{Encoder, Term};
use crate::verify::smt::Sort;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// The name prefix of the families of predicate instances (`pred:C.p`).
pub const PREDICATE_FAMILY_PREFIX: &str = "pred:";

/// How many versions are defined over one base before a new base is taken
/// (the chain Z3 walks is this many times shorter; the bodies this many steps
/// long).
const FLAT_STEPS: usize = 8;

/// A version's definition in flattened form: how many steps lie between it
/// and its base version, and its body over its own bound variables (reading
/// the base).
#[derive(Clone, Debug)]
pub struct FlatDef {
    steps: usize,
    /// The version the body reads.
    base: Rc<str>,
    vars: Vec<(Rc<str>, Sort)>,
    val: Sort,
    body: Term,
    /// Only for a version that became a base: its definition over an older
    /// base, up to [`FLAT_STEPS`]² steps back (see the module comment).
    coarse: Option<Coarse>,
}

/// A base version's definition over the base of a coarser level.
#[derive(Clone, Debug)]
struct Coarse {
    steps: usize,
    base: Rc<str>,
    body: Term,
}

/// Flattened definitions by version name.
pub type FlatDefs = HashMap<Rc<str>, FlatDef>;

/// What the heap and mask encoding keeps for a unit.
#[derive(Default)]
pub struct HeapState {
    /// Every location family met so far: its domain and value sorts.
    pub(super) families: HashMap<Rc<str>, FamilyInfo>,
    /// The families whose epoch-zero axioms are asserted.
    epoch_zero_done: std::collections::HashSet<Rc<str>>,
    /// Heap and mask versions in flattened form.
    flat_defs: FlatDefs,
    /// One integer constant per distinct heap (base epoch and heap versions):
    /// [`Encoder::heap_token`].
    tokens: HashMap<String, Term>,
}

#[derive(Clone, Debug)]
pub struct FamilyInfo {
    pub dom: Vec<Sort>,
    pub val: Sort,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    epoch: u32,
    heap: BTreeMap<Rc<str>, Rc<str>>,
    mask: BTreeMap<Rc<str>, Rc<str>>,
}

impl State {
    /// The families whose heap or mask differ between two states.
    fn differing(&self, other: &State) -> Vec<Rc<str>> {
        let mut keys: Vec<Rc<str>> =
            self.heap.keys().chain(self.mask.keys()).chain(other.heap.keys()).chain(other.mask.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        keys.retain(|k| self.heap.get(k) != other.heap.get(k) || self.mask.get(k) != other.mask.get(k));
        keys
    }
}

impl Encoder<'_> {
    pub fn fresh_state(&mut self) -> State {
        self.fresh += 1;
        State { epoch: self.fresh, heap: BTreeMap::new(), mask: BTreeMap::new() }
    }

    /// An integer constant naming the heap of `st` on the families `fams`
    /// (every family when `None`): equal for two states with the same base
    /// epoch and the same heap version of each of those families (so the same
    /// heap functions there), a fresh unrelated constant otherwise. Abstract
    /// heap-reading functions take it as an argument (`heapfn.rs`).
    pub fn heap_token(&mut self, st: &State, fams: Option<&[Rc<str>]>) -> Term {
        let versions: Vec<(&Rc<str>, &Rc<str>)> = st.heap.iter().filter(|(k, _)| fams.is_none_or(|fs| fs.contains(k))).collect();
        let key = format!("{:?}|{}|{:?}", fams, st.epoch, versions);
        if let Some(t) = self.heap.tokens.get(&key) {
            return t.clone();
        }
        let t = self.fresh_const("heap", Sort::Int);
        self.heap.tokens.insert(key, t.clone());
        t
    }

    /// `st` with a new base version: every family it has no version of gets an
    /// arbitrary heap (its mask, empty at every base, stays so). For the heap a
    /// given-away predicate instance may have framed in families the unit has
    /// not met yet (`assertion.rs`, `exhale_all`).
    pub fn rebase(&mut self, st: &mut State) {
        self.fresh += 1;
        st.epoch = self.fresh;
    }

    pub fn family(&mut self, key: &str, dom: Vec<Sort>, val: Sort) -> Rc<str> {
        let k: Rc<str> = Rc::from(key);
        self.heap.families.entry(k.clone()).or_insert(FamilyInfo { dom, val });
        k
    }

    /// Every family of heap locations met so far (not the predicate-instance
    /// families, which have no heap values): the families a predicate instance's
    /// footprint may lie in.
    pub fn heap_families(&self) -> Vec<Rc<str>> {
        self.heap.families.keys().filter(|k| !k.starts_with(PREDICATE_FAMILY_PREFIX)).cloned().collect()
    }

    fn info(&self, fam: &str) -> FamilyInfo {
        self.heap.families.get(fam).cloned().expect("family registered before use")
    }

    fn heap_name(&self, st: &State, fam: &Rc<str>) -> Rc<str> {
        st.heap.get(fam).cloned().unwrap_or_else(|| Rc::from(format!("H[{fam}]~{}", st.epoch)))
    }

    fn mask_name(&mut self, st: &State, fam: &Rc<str>) -> Rc<str> {
        if let Some(n) = st.mask.get(fam) {
            return n.clone();
        }
        let n: Rc<str> = Rc::from(format!("M[{fam}]~{}", st.epoch));
        if self.heap.epoch_zero_done.insert(n.clone()) {
            // The base mask of a state is empty.
            let (vars, args) = self.bound_vars(fam);
            let app = Term::app(&n, args, Sort::Real);
            self.smt.assert(Term::forall(vars, vec![vec![app.clone()]], app.eq(&Term::real(0, 1)), &format!("{n}=0")));
        }
        n
    }

    fn bound_vars(&mut self, fam: &Rc<str>) -> (Vec<(Rc<str>, Sort)>, Vec<Term>) {
        let info = self.info(fam);
        let mut vars = Vec::new();
        let mut args = Vec::new();
        for s in info.dom {
            let n: Rc<str> = Rc::from(self.fresh_name("x"));
            args.push(Term::konst(&n, s.clone()));
            vars.push((n, s));
        }
        (vars, args)
    }

    pub fn read_heap(&mut self, st: &State, fam: &Rc<str>, args: Vec<Term>) -> Term {
        let n = self.heap_name(st, fam);
        let val = self.info(fam).val;
        Term::app(&n, args, val)
    }

    pub fn read_mask(&mut self, st: &State, fam: &Rc<str>, args: Vec<Term>) -> Term {
        let n = self.mask_name(st, fam);
        Term::app(&n, args, Sort::Real)
    }

    /// New mask version: `M'(x) = M(x) + delta(x)` (`delta` may be negative).
    pub fn update_mask(&mut self, st: &mut State, fam: &Rc<str>, delta: impl FnOnce(&[Term]) -> Term) {
        let (vars, args) = self.bound_vars(fam);
        let d = delta(&args);
        if d.as_bool_lit().is_some() || d == Term::real(0, 1) {
            return;
        }
        let old_name = self.mask_name(st, fam);
        let old = Term::app(&old_name, args.clone(), Sort::Real);
        let name: Rc<str> = Rc::from(self.fresh_name(&format!("M[{fam}]")));
        self.define_version(&name, &old_name, vars, args, Sort::Real, old.add(&d));
        st.mask.insert(fam.clone(), name);
    }

    /// Asserts `∀x {V'(x)}. V'(x) = body(x)`, where `body` reads the previous
    /// version `old` only as `old(x)` at its own bound variables: flattened
    /// over `old`'s base when `old` is itself flattened (see the module
    /// comment).
    fn define_version(&mut self, name: &Rc<str>, old: &Rc<str>, vars: Vec<(Rc<str>, Sort)>, args: Vec<Term>, val: Sort, body: Term) {
        let old_app = Term::app(old, args.clone(), val.clone());
        let new = Term::app(name, args.clone(), val);
        // The step itself: it names the previous version at `x`, so facts
        // stated over an intermediate version (a quantified postcondition of
        // a par block, a good-mask bound) still meet their trigger terms.
        self.smt.assert(Term::forall(vars.clone(), vec![vec![new.clone()]], new.eq(&body), name));
        let flat = match self.heap.flat_defs.get(old) {
            Some(def) if def.steps < FLAT_STEPS => Some((def.steps + 1, def.base.clone(), compose(&body, &old_app, def, &args))),
            _ => None,
        };
        let (steps, base, body) = match flat {
            Some((steps, base, flat_body)) => {
                // The shortcut to the base: the same value, one instantiation away.
                self.smt.assert(Term::forall(vars.clone(), vec![vec![new.clone()]], new.eq(&flat_body), &format!("{name}/flat")));
                (steps, base, flat_body)
            }
            None => {
                self.make_base(old);
                (1, old.clone(), body)
            }
        };
        let def = FlatDef { steps, base, vars, val: new.sort(), body, coarse: None };
        self.heap.flat_defs.insert(name.clone(), def);
    }

    /// `old` becomes the base of the versions after it: it is also defined
    /// over the coarse base of its own base, its body and that base's coarse
    /// body composed, so that a chain of bases is walked [`FLAT_STEPS`] bases
    /// per instantiation instead of one (the second level of the flattening).
    fn make_base(&mut self, old: &Rc<str>) {
        let Some(def) = self.heap.flat_defs.get(old) else { return };
        let coarse = match self.heap.flat_defs.get(&def.base).and_then(|b| b.coarse.as_ref().map(|c| (b, c))) {
            Some((b, c)) if c.steps < FLAT_STEPS * FLAT_STEPS => {
                let args: Vec<Term> = def.vars.iter().map(|(v, s)| Term::konst(v, s.clone())).collect();
                let base_app = Term::app(&def.base, args.clone(), def.val.clone());
                let fine = FlatDef {
                    steps: c.steps,
                    base: c.base.clone(),
                    vars: b.vars.clone(),
                    val: b.val.clone(),
                    body: c.body.clone(),
                    coarse: None,
                };
                let body = compose(&def.body, &base_app, &fine, &args);
                let new = Term::app(old, args, def.val.clone());
                self.smt.assert(Term::forall(def.vars.clone(), vec![vec![new.clone()]], new.eq(&body), &format!("{old}/coarse")));
                Coarse { steps: c.steps + def.steps, base: c.base.clone(), body }
            }
            _ => Coarse { steps: def.steps, base: def.base.clone(), body: def.body.clone() },
        };
        if let Some(def) = self.heap.flat_defs.get_mut(old) {
            def.coarse = Some(coarse);
        }
    }

    /// New heap version: `H'(x) = f(x, H(x))`.
    pub fn update_heap(&mut self, st: &mut State, fam: &Rc<str>, f: impl FnOnce(&[Term], Term) -> Term) {
        let (vars, args) = self.bound_vars(fam);
        let old_name = self.heap_name(st, fam);
        let old = self.read_heap(st, fam, args.clone());
        let v = f(&args, old.clone());
        let val = self.info(fam).val;
        let name: Rc<str> = Rc::from(self.fresh_name(&format!("H[{fam}]")));
        self.define_version(&name, &old_name, vars, args, val, v);
        st.heap.insert(fam.clone(), name);
    }

    /// After permission was given away: locations still held keep their
    /// values, all others get arbitrary new ones (Carbon's
    /// `IdenticalOnKnownLocations`).
    pub fn havoc_heap(&mut self, st: &mut State, fam: &Rc<str>) {
        let val = self.info(fam).val;
        let fresh = self.fresh_name(&format!("F[{fam}]"));
        let mname = self.mask_name(st, fam);
        self.update_heap(st, fam, |args, old| {
            let m = Term::app(&mname, args.to_vec(), Sort::Real);
            m.gt(&Term::real(0, 1)).ite(&old, &Term::app(&fresh, args.to_vec(), val))
        });
    }

    /// Assumes that `st` agrees with `other` on every location `st` holds
    /// permission to.
    pub fn same_where_held(&mut self, guard: &Term, st: &State, other: &State, fam: &Rc<str>) {
        let (vars, args) = self.bound_vars(fam);
        let m = self.read_mask(st, fam, args.clone());
        let h = self.read_heap(st, fam, args.clone());
        let o = self.read_heap(other, fam, args);
        let q = Term::forall(vars, vec![vec![h.clone()]], m.gt(&Term::real(0, 1)).implies(&h.eq(&o)), &format!("same[{fam}]"));
        self.assume(guard, q);
    }

    /// Good mask: no location holds more than full permission.
    pub fn good_mask(&mut self, guard: &Term, st: &State, fam: &Rc<str>) {
        let (vars, args) = self.bound_vars(fam);
        let m = self.read_mask(st, fam, args);
        let q = Term::forall(vars, vec![vec![m.clone()]], m.le(&Term::real(1, 1)), &format!("good[{fam}]"));
        self.assume(guard, q);
    }

    /// The state after `if c then A else B`.
    pub fn join_states(&mut self, c: &Term, a: &State, b: &State) -> State {
        let mut out = a.clone();
        let mut fams = a.differing(b);
        if a.epoch != b.epoch {
            // One branch gave a predicate instance away (`rebase`): every family
            // met so far is joined (their base versions differ), and the
            // families not met yet get a new base, arbitrary on both paths.
            let mut all: Vec<Rc<str>> = self.heap.families.keys().filter(|f| !fams.contains(f)).cloned().collect();
            all.sort();
            fams.extend(all);
        }
        for fam in fams {
            if a.heap.get(&fam) != b.heap.get(&fam) || a.epoch != b.epoch {
                let (vars, args) = self.bound_vars(&fam);
                let (ha, hb) = (self.read_heap(a, &fam, args.clone()), self.read_heap(b, &fam, args.clone()));
                let val = self.info(&fam).val;
                let name: Rc<str> = Rc::from(self.fresh_name(&format!("H[{fam}]")));
                let new = Term::app(&name, args, val);
                self.smt.assert(Term::forall(vars, vec![vec![new.clone()]], new.eq(&c.ite(&ha, &hb)), &name));
                out.heap.insert(fam.clone(), name);
            }
            let (vars, args) = self.bound_vars(&fam);
            let (ma, mb) = (self.read_mask(a, &fam, args.clone()), self.read_mask(b, &fam, args.clone()));
            if ma != mb {
                let name: Rc<str> = Rc::from(self.fresh_name(&format!("M[{fam}]")));
                let new = Term::app(&name, args, Sort::Real);
                self.smt.assert(Term::forall(vars, vec![vec![new.clone()]], new.eq(&c.ite(&ma, &mb)), &name));
                out.mask.insert(fam, name);
            }
        }
        if a.epoch != b.epoch {
            self.rebase(&mut out);
        }
        out
    }
}

/// `body` (which reads the version `def` defines as `old_app`, at `args`) with
/// that read replaced by `def`'s own body at `args`: a definition one base
/// further back.
fn compose(body: &Term, old_app: &Term, def: &FlatDef, args: &[Term]) -> Term {
    let map: HashMap<Rc<str>, Term> = def.vars.iter().map(|v| v.0.clone()).zip(args.iter().cloned()).collect();
    body.replace(old_app, &def.body.subst(&map))
}
