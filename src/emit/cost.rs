//! A static GPU cost model of a checked program, as [`super::emit`] would launch
//! it: what an optimisation step changes that matters on a GPU, without a GPU.
//!
//! For every host method (a method with a par block) and each of its kernels (a
//! par unit, named as the emitter names it):
//!
//! * **launches**: once, or once per iteration of a host loop around it (the
//!   model does not guess trip counts of host loops); a kernel under an `if`
//!   counts as launched once;
//! * **global loads and stores per element**: the distinct cells (array and index
//!   expression) the kernel reads and writes. A cell the same thread already read
//!   or wrote in the kernel, with no barrier in between, is served from a
//!   register and not counted again (so fused scale + add is one load and one
//!   store, the two kernels unfused two of each). An *element* is one iteration
//!   of the kernel's innermost *cell loop* (a loop whose variables index a global
//!   array), or the whole thread where there is no cell loop; an iteration that
//!   updates the guard's variable `k` times does `k` elements (iteration merging
//!   by `M` copies the update with the body). Accesses outside the cell loop happen once per thread: spread
//!   over the loop's iterations when their number is a constant, left out when
//!   it is not (amortised over many iterations);
//! * **the warp pattern of each counted access**: the index as a polynomial in the
//!   kernel's *x iterator* (the last iterator of the par block, the one along
//!   CUDA's x axis, so consecutive threads of a warp differ by one in it), with
//!   the kernel's locals substituted (`int i = tid*4 + j;`) and small pure
//!   functions inlined (tiling's `vct_tile_newIdx`). The coefficient of the x
//!   iterator gives the pattern: ±1 [`Pattern::Coalesced`], 0
//!   [`Pattern::Uniform`] (a broadcast), any other constant or a symbolic one
//!   (`x*h + y` after column-major linearisation) [`Pattern::Strided`], and an
//!   index that is not affine in it (`tid*tid`, `b[tid]`, `tid / 2`)
//!   [`Pattern::Irregular`]. Other iterators, host variables and loop counters
//!   that start at the same value in every thread are the same across a warp;
//!   a loop counter that starts at a multiple of the x iterator (tiling's chunks,
//!   `for (int c = tid*4; …; c++)`) keeps that coefficient. Of `M[i][j]`, the last
//!   index decides; an earlier one that varies across the warp makes it irregular.
//!
//! Limits: both branches of an `if` count; a variable of the kernel assigned
//! outside the `v = v + c` form is the same across a warp only when every value
//! assigned to it is; a variable updated outside a loop keeps one name, so its
//! cells before and after the update count once; specifications, ghost code and
//! barrier bodies are not code and cost nothing; nested cell loops count the
//! innermost one's iterations as elements. This is a model of memory traffic,
//! not a timing: caches, occupancy and arithmetic are not in it.

use super::{collect_labels, host_name, kernel_name, par_units, HostPar};
use crate::ast::subst::{free_vars, substitute};
use crate::ast::visit::{self, Visitor};
use crate::ast::*;
use crate::printer::print_expr;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// The cost of every host method of a program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramCost {
    pub methods: Vec<MethodCost>,
}

/// One host method and its kernels, in the emitter's order.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodCost {
    /// As users name it: `Class.method` (`method` at top level).
    pub name: String,
    pub span: Span,
    pub kernels: Vec<KernelCost>,
}

/// How often a kernel is launched per call of its host method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launch {
    Once,
    /// Inside a loop of the host method.
    PerLoopIteration,
}

/// One kernel (par unit).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelCost {
    /// The emitter's name (`Class_method_label`).
    pub name: String,
    /// The par unit's label as written, if any.
    pub label: Option<String>,
    /// The par unit.
    pub span: Span,
    pub launch: Launch,
    pub loads_per_element: f64,
    pub stores_per_element: f64,
    /// The counted accesses (one per distinct cell and kind), in program order.
    pub accesses: Vec<Access>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
}

/// One global access: the first of a cell in its barrier interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub array: String,
    /// The index as written (`i][j` for `M[i][j]`).
    pub index: String,
    pub kind: AccessKind,
    pub pattern: Pattern,
    /// The access (`a[i]`).
    pub span: Span,
}

/// What the addresses of one access look like across a warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Consecutive threads, consecutive cells (coefficient ±1).
    Coalesced,
    /// Every thread the same cell (coefficient 0).
    Uniform,
    /// Consecutive threads this many cells apart.
    Strided(Stride),
    /// Not affine in the thread's x iterator.
    Irregular,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stride {
    Constant(i128),
    /// A coefficient that is a host value (`h`, `2 * h`).
    Symbolic(String),
}

impl Pattern {
    /// Strided or irregular: a warp's accesses are not served together.
    pub fn is_uncoalesced(&self) -> bool {
        matches!(self, Pattern::Strided(_) | Pattern::Irregular)
    }
}

impl fmt::Display for Stride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stride::Constant(k) => write!(f, "{k}"),
            Stride::Symbolic(s) => write!(f, "{s}"),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Coalesced => write!(f, "coalesced"),
            Pattern::Uniform => write!(f, "uniform"),
            Pattern::Strided(s) => write!(f, "strided({s})"),
            Pattern::Irregular => write!(f, "irregular"),
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
        })
    }
}

impl fmt::Display for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launch::Once => "once",
            Launch::PerLoopIteration => "per loop iteration",
        })
    }
}

impl MethodCost {
    /// Kernels launched once per call, and once per host loop iteration.
    pub fn launches(&self) -> (usize, usize) {
        let once = self.kernels.iter().filter(|k| k.launch == Launch::Once).count();
        (once, self.kernels.len() - once)
    }
    /// Global loads per element, over all kernels.
    pub fn loads_per_element(&self) -> f64 {
        self.kernels.iter().map(|k| k.loads_per_element).sum()
    }
    /// Global stores per element, over all kernels.
    pub fn stores_per_element(&self) -> f64 {
        self.kernels.iter().map(|k| k.stores_per_element).sum()
    }
    /// Every kernel's counted accesses.
    pub fn accesses(&self) -> impl Iterator<Item = &Access> {
        self.kernels.iter().flat_map(|k| k.accesses.iter())
    }
    /// How many counted accesses are coalesced, uniform, strided, irregular.
    pub fn pattern_counts(&self) -> PatternCounts {
        let mut c = PatternCounts::default();
        for a in self.accesses() {
            match a.pattern {
                Pattern::Coalesced => c.coalesced += 1,
                Pattern::Uniform => c.uniform += 1,
                Pattern::Strided(_) => c.strided += 1,
                Pattern::Irregular => c.irregular += 1,
            }
        }
        c
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatternCounts {
    pub coalesced: usize,
    pub uniform: usize,
    pub strided: usize,
    pub irregular: usize,
}

/// The cost of every method of `program` that has a par block (a checked
/// program: array accesses are told apart from sequence indexing by type).
pub fn program_cost(program: &Program) -> ProgramCost {
    let mut methods = Vec::new();
    for class in &program.classes {
        for member in &class.members {
            let Member::Method(m) = member else { continue };
            let MethodBody::Block(body) = &m.body else { continue };
            if m.is_pure_function() || m.is_predicate() {
                continue;
            }
            let units = par_units(&body.stmts);
            if units.is_empty() {
                continue;
            }
            let prefix = host_name(class, m);
            let labels = collect_labels(&body.stmts);
            let kernels = units.iter().enumerate().map(|(i, u)| kernel_cost(class, u, kernel_name(&prefix, &labels, i))).collect();
            methods.push(MethodCost { name: qualified_name(&class.name.name, &m.name.name), span: m.name.span, kernels });
        }
    }
    ProgramCost { methods }
}

// ------------------------------------------------------------------------------------
// Polynomials over the kernel's symbols

/// A polynomial with integer coefficients over symbols (variables, and uniform
/// subexpressions the model does not look into, named by their text): each
/// monomial is its sorted list of symbols.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Poly(BTreeMap<Vec<Name>, i128>);

impl Poly {
    fn constant(c: i128) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.0.insert(Vec::new(), c);
        }
        p
    }
    fn symbol(name: &str) -> Poly {
        Poly(BTreeMap::from([(vec![Name::from(name)], 1)]))
    }
    fn add(&self, other: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &other.0 {
            let sum = out.0.get(m).copied().unwrap_or(0).checked_add(*c)?;
            if sum == 0 {
                out.0.remove(m);
            } else {
                out.0.insert(m.clone(), sum);
            }
        }
        Some(out)
    }
    fn scale(&self, k: i128) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, c) in &self.0 {
            if k != 0 {
                out.0.insert(m.clone(), c.checked_mul(k)?);
            }
        }
        Some(out)
    }
    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m1, c1) in &self.0 {
            for (m2, c2) in &other.0 {
                let mut m: Vec<Name> = m1.iter().chain(m2).cloned().collect();
                m.sort();
                out = out.add(&Poly(BTreeMap::from([(m, c1.checked_mul(*c2)?)])))?;
            }
        }
        Some(out)
    }
    fn as_constant(&self) -> Option<i128> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }
    /// The polynomial with the symbol `from` renamed `to`.
    fn rename(&self, from: &str, to: &str) -> Poly {
        let mut out = Poly::default();
        for (m, c) in &self.0 {
            let mut m: Vec<Name> = m.iter().map(|s| if &**s == from { Name::from(to) } else { s.clone() }).collect();
            m.sort();
            out.0.insert(m, *c);
        }
        out
    }
    /// The monomials that contain `x`.
    fn part_with(&self, x: &str) -> Poly {
        Poly(self.0.iter().filter(|(m, _)| m.iter().any(|s| &**s == x)).map(|(m, c)| (m.clone(), *c)).collect())
    }
    /// The coefficient of `x`, if the polynomial is affine in it.
    fn coefficient(&self, x: &str) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, c) in &self.part_with(x).0 {
            let mut rest = m.clone();
            rest.remove(rest.iter().position(|s| &**s == x)?);
            if rest.iter().any(|s| &**s == x) {
                return None;
            }
            out = out.add(&Poly(BTreeMap::from([(rest, *c)])))?;
        }
        Some(out)
    }
}

impl fmt::Display for Poly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "0");
        }
        for (k, (m, c)) in self.0.iter().enumerate() {
            let (sign, c) = if *c < 0 { (" - ", -c) } else { (" + ", *c) };
            match k {
                0 if sign == " - " => write!(f, "-")?,
                0 => {}
                _ => write!(f, "{sign}")?,
            }
            let names: Vec<&str> = m.iter().map(|s| &**s).collect();
            match (c, names.is_empty()) {
                (c, true) => write!(f, "{c}")?,
                (1, false) => write!(f, "{}", names.join(" * "))?,
                (c, false) => write!(f, "{c} * {}", names.join(" * "))?,
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------------------------
// One kernel

/// What the model knows of a variable of the kernel across a warp.
#[derive(Clone, Debug)]
enum Value {
    /// This polynomial in the x iterator and uniform symbols.
    Poly(Poly),
    /// Differs between threads in a way the model does not follow.
    Irregular,
}

/// A loop of the kernel body while it is walked.
struct LoopFrame {
    /// The variables the loop assigns or declares (its iterations' state).
    vars: HashSet<Name>,
    /// Its index in [`KernelWalk::loop_info`].
    id: usize,
}

/// A counted access and the loop whose iterations it is counted in.
struct Counted {
    access: Access,
    /// The innermost enclosing loop whose variables the index reads.
    level: Option<usize>,
}

struct KernelWalk<'a> {
    class: &'a Class,
    /// The x iterator (none for a par block without iterators).
    x: Option<Name>,
    /// Variables declared in the kernel body (the rest are host values).
    locals: HashSet<Name>,
    /// Each local's assignments after its declaration (`None`: `v++`/`v--`).
    assignments: HashMap<Name, Vec<Option<&'a Expr>>>,
    env: HashMap<Name, Value>,
    /// How many times each variable has been assigned since its declaration,
    /// in walk order: `j` after `j = j + 1` is another cell's index (`j'1`).
    versions: HashMap<Name, usize>,
    loops: Vec<LoopFrame>,
    /// Every loop met, by id: its depth, the elements an iteration does (the
    /// updates of its variable) and its iterations (if a constant).
    loop_info: Vec<(usize, i128, Option<i128>)>,
    /// Cells read or written since the last barrier: (array, index key).
    seen: HashSet<(String, String)>,
    written: HashSet<(String, String)>,
    counted: Vec<Counted>,
}

fn kernel_cost(class: &Class, u: &HostPar<'_>, name: String) -> KernelCost {
    let unit = u.unit;
    let k = walk_kernel(class, unit);
    let (loads, stores) = k.per_element();
    KernelCost {
        name,
        label: unit.name.as_ref().map(|n| n.name.to_string()),
        span: unit.span,
        launch: if u.in_loop { Launch::PerLoopIteration } else { Launch::Once },
        loads_per_element: loads,
        stores_per_element: stores,
        accesses: k.counted.into_iter().map(|c| c.access).collect(),
    }
}

/// Whether every loop in the par unit's body runs a number of times this model
/// can tell is a constant (a body without loops: yes). The CUDA emitter packs
/// several threads of a par block into one GPU thread only then
/// (`emit::Options::elements_per_thread`): packing lets the compiler batch the
/// loads of straight-line bodies and of loops it unrolls fully, while a loop
/// whose trip count depends on the data already overlaps its own iterations,
/// and packed threads only run such loops one after another (measured on an
/// H100: `docs/gpu-benchmarks.md`, tile inter).
pub(crate) fn loops_have_constant_trips(class: &Class, unit: &ParUnit) -> bool {
    walk_kernel(class, unit).loop_info.iter().all(|(_, _, trips)| trips.is_some())
}

/// Walks a par unit's body once (the model's whole state afterwards).
fn walk_kernel<'a>(class: &'a Class, unit: &'a ParUnit) -> KernelWalk<'a> {
    let mut k = KernelWalk {
        class,
        x: unit.iters.last().map(|it| it.var.name.name.clone()),
        locals: HashSet::new(),
        assignments: HashMap::new(),
        env: HashMap::new(),
        versions: HashMap::new(),
        loops: Vec::new(),
        loop_info: Vec::new(),
        seen: HashSet::new(),
        written: HashSet::new(),
        counted: Vec::new(),
    };
    k.collect_locals(&unit.body.stmts);
    unit.body.stmts.iter().for_each(|s| k.stmt(s));
    k
}

/// The conjuncts of `a && b && …`.
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And, lhs, rhs } => {
            let mut out = conjuncts(lhs);
            out.extend(conjuncts(rhs));
            out
        }
        _ => vec![e],
    }
}

/// The variable `s` assigns (`v = …`, `v++`) and the value (`None` for `++`/`--`).
fn assigned(s: &Stmt) -> Option<(&Name, Option<&Expr>)> {
    match &s.kind {
        StmtKind::Assign { target: Expr { kind: ExprKind::Var(v), .. }, value } => Some((&v.name, Some(value))),
        StmtKind::IncDec { target, .. } => Some((&target.name, None)),
        _ => None,
    }
}

/// `v = v + c` / `v++` / `v--`: the constant step, if it is one.
fn constant_step(s: &Stmt) -> Option<i128> {
    match &s.kind {
        StmtKind::IncDec { op: IncDec::Inc, .. } => Some(1),
        StmtKind::IncDec { op: IncDec::Dec, .. } => Some(-1),
        StmtKind::Assign { target: Expr { kind: ExprKind::Var(v), .. }, value } => match &value.kind {
            ExprKind::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs } if matches!(&lhs.kind, ExprKind::Var(w) if w.name == v.name) =>
            {
                let ExprKind::IntLit(c) = rhs.kind else { return None };
                let c = i128::try_from(c).ok()?;
                Some(if *op == BinOp::Add { c } else { -c })
            }
            _ => None,
        },
        _ => None,
    }
}

impl<'a> KernelWalk<'a> {
    /// The kernel's locals and their assignments (the statements of the body,
    /// for headers included).
    fn collect_locals(&mut self, stmts: &'a [Stmt]) {
        struct Collect<'k, 'a>(&'k mut KernelWalk<'a>);
        impl<'a> Collect<'_, 'a> {
            fn stmt(&mut self, s: &'a Stmt) {
                match &s.kind {
                    StmtKind::LocalDecl { name, .. } => {
                        self.0.locals.insert(name.name.clone());
                    }
                    StmtKind::Block(b) => b.stmts.iter().for_each(|s| self.stmt(s)),
                    StmtKind::If { then_branch, else_branch, .. } => {
                        self.stmt(then_branch);
                        if let Some(e) = else_branch {
                            self.stmt(e);
                        }
                    }
                    StmtKind::Loop(l) => {
                        if let LoopKind::For { init, update, .. } = &l.kind {
                            init.iter().chain(update).for_each(|s| self.stmt(s));
                        }
                        self.stmt(&l.body);
                    }
                    StmtKind::Atomic { body, .. } => self.stmt(body),
                    StmtKind::InvariantBlock { body, .. } => body.stmts.iter().for_each(|s| self.stmt(s)),
                    _ => {}
                }
                if let Some((v, value)) = assigned(s) {
                    self.0.assignments.entry(v.clone()).or_default().push(value);
                }
            }
        }
        let mut c = Collect(self);
        stmts.iter().for_each(|s| c.stmt(s));
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::LocalDecl { name, init, .. } => {
                if let Some(e) = init {
                    self.loads(e);
                }
                let value = self.declare(&name.name, init.as_ref());
                self.env.insert(name.name.clone(), value);
                self.versions.remove(&name.name);
            }
            StmtKind::IncDec { target, .. } => *self.versions.entry(target.name.clone()).or_default() += 1,
            StmtKind::Assign { target, value } => {
                self.loads(value);
                if let Some((array, indices)) = self.global_cell(target) {
                    indices.iter().for_each(|i| self.loads(i));
                    self.access(target, &array, &indices, AccessKind::Store);
                }
                if let ExprKind::Var(v) = &target.kind {
                    *self.versions.entry(v.name.clone()).or_default() += 1;
                }
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.loads(e),
            StmtKind::If { cond, then_branch, else_branch } => {
                self.loads(cond);
                self.stmt(then_branch);
                if let Some(e) = else_branch {
                    self.stmt(e);
                }
            }
            StmtKind::Loop(l) => self.loop_stmt(l),
            StmtKind::Atomic { body, .. } => self.stmt(body),
            StmtKind::InvariantBlock { body, .. } | StmtKind::Block(body) => body.stmts.iter().for_each(|s| self.stmt(s)),
            // Every thread's earlier writes become visible to the others: cells
            // must be read from memory again.
            StmtKind::Barrier(_) => {
                self.seen.clear();
                self.written.clear();
            }
            _ => {}
        }
    }

    fn loop_stmt(&mut self, l: &Loop) {
        let (init, cond, update): (&[Stmt], Option<&Expr>, &[Stmt]) = match &l.kind {
            LoopKind::For { init, cond, update } => (init, cond.as_ref(), update),
            LoopKind::While { cond } => (&[], Some(cond), &[]),
        };
        init.iter().for_each(|s| self.stmt(s));
        let mut vars = HashSet::new();
        collect_assigned(&l.body, &mut vars);
        update.iter().filter_map(assigned).for_each(|(v, _)| {
            vars.insert(v.clone());
        });
        // The loop variable: one the guard reads and the header or the body's
        // own statements update; each update is an iteration of the original
        // loop (iteration merging copies it with the body).
        let body_stmts: &[Stmt] = match &l.body.kind {
            StmtKind::Block(b) => &b.stmts,
            _ => std::slice::from_ref(&*l.body),
        };
        let guard_vars: Vec<Name> = cond.map(|c| free_vars(c).into_iter().map(|(v, _)| v).collect()).unwrap_or_default();
        let updates_of =
            |v: &Name| update.iter().chain(body_stmts).filter(|s| assigned(s).is_some_and(|(w, _)| w == v)).collect::<Vec<_>>();
        let stepped = guard_vars.iter().map(|v| (v, updates_of(v))).find(|(_, u)| !u.is_empty());
        let elements = stepped.as_ref().map_or(1, |(_, u)| u.len() as i128);
        let trips = stepped.as_ref().and_then(|(v, u)| {
            let advance = constant_step(u[0])?.checked_mul(elements)?;
            self.trips(v, advance, init, cond?)
        });
        let id = self.loop_info.len();
        let depth = self.loops.len() + 1;
        self.loop_info.push((depth, elements, trips));
        self.loops.push(LoopFrame { vars, id });
        if let Some(c) = cond {
            self.loads(c);
        }
        self.stmt(&l.body);
        update.iter().for_each(|s| self.stmt(s));
        self.loops.pop();
    }

    /// The iterations of a loop over `v` from its header's start while `v < B`
    /// (or `<=`), advancing by `step` an iteration, when that is a constant.
    fn trips(&self, v: &Name, step: i128, init: &[Stmt], cond: &Expr) -> Option<i128> {
        if step <= 0 {
            return None;
        }
        let start = init.iter().find_map(|s| match &s.kind {
            StmtKind::LocalDecl { name, init: Some(e), .. } if name.name == *v => Some(e),
            StmtKind::Assign { target: Expr { kind: ExprKind::Var(w), .. }, value } if w.name == *v => Some(value),
            _ => None,
        })?;
        let start = self.eval(start)?;
        conjuncts(cond).into_iter().find_map(|c| {
            let ExprKind::Binary { op, lhs, rhs } = &c.kind else { return None };
            let is_v = |e: &Expr| matches!(&e.kind, ExprKind::Var(w) if w.name == *v);
            let (bound, inclusive) = match op {
                BinOp::Lt if is_v(lhs) => (rhs, false),
                BinOp::Le if is_v(lhs) => (rhs, true),
                BinOp::Gt if is_v(rhs) => (lhs, false),
                BinOp::Ge if is_v(rhs) => (lhs, true),
                _ => return None,
            };
            let span = self.eval(bound)?.add(&start.scale(-1)?)?.as_constant()? + i128::from(inclusive);
            Some(if span <= 0 { 0 } else { (span + step - 1) / step })
        })
    }

    /// What a local is across a warp, from its declaration and assignments.
    fn declare(&self, v: &Name, init: Option<&Expr>) -> Value {
        let start = match init {
            Some(e) => self.eval(e),
            None => Some(Poly::symbol(v)),
        };
        let updates = self.assignments.get(v).map(Vec::as_slice).unwrap_or_default();
        let Some(start) = start else { return Value::Irregular };
        if updates.is_empty() {
            return Value::Poly(start);
        }
        let x = self.x.as_deref().unwrap_or("");
        let uniform = |e: &Expr| self.eval(e).is_some_and(|p| p.part_with(x).0.is_empty());
        // `v = v ± u` with `u` the same across the warp: `v` keeps the offset
        // between threads its start gives it.
        let by_uniform_steps = updates.iter().all(|u| match u {
            None => true,
            Some(e) => match &e.kind {
                ExprKind::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs } if matches!(&lhs.kind, ExprKind::Var(w) if w.name == *v) => {
                    uniform(rhs)
                }
                ExprKind::Binary { op: BinOp::Add, lhs, rhs } if matches!(&rhs.kind, ExprKind::Var(w) if w.name == *v) => uniform(lhs),
                _ => false,
            },
        });
        if by_uniform_steps {
            return start.part_with(x).add(&Poly::symbol(v)).map_or(Value::Irregular, Value::Poly);
        }
        if start.part_with(x).0.is_empty() && updates.iter().all(|u| u.is_some_and(uniform)) {
            return Value::Poly(Poly::symbol(v));
        }
        Value::Irregular
    }

    /// `e` as a polynomial over the x iterator and uniform symbols; `None` when
    /// it varies across the warp in a way that is not polynomial.
    fn eval(&self, e: &Expr) -> Option<Poly> {
        self.eval_depth(e, 0)
    }

    fn eval_depth(&self, e: &Expr, depth: usize) -> Option<Poly> {
        let poly = match &e.kind {
            ExprKind::IntLit(c) => i128::try_from(*c).ok().map(Poly::constant),
            ExprKind::Var(v) => match self.env.get(&v.name) {
                Some(Value::Poly(p)) => Some(match self.versions.get(&v.name) {
                    Some(k) if *k > 0 => p.rename(&v.name, &format!("{}'{k}", v.name)),
                    _ => p.clone(),
                }),
                Some(Value::Irregular) => return None,
                None => Some(Poly::symbol(&v.name)),
            },
            ExprKind::Unary { op: UnOp::Neg, operand } => self.eval_depth(operand, depth)?.scale(-1),
            ExprKind::Binary { op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), lhs, rhs } => {
                let (a, b) = (self.eval_depth(lhs, depth)?, self.eval_depth(rhs, depth)?);
                match op {
                    BinOp::Add => a.add(&b),
                    BinOp::Sub => a.add(&b.scale(-1)?),
                    _ => a.mul(&b),
                }
            }
            ExprKind::Call { receiver: None, method, args } if depth < 8 => {
                self.inline(&method.name, args).and_then(|body| self.eval_depth(&body, depth + 1))
            }
            _ => None,
        };
        // What the model does not look into is one symbol, if it is the same
        // across the warp.
        poly.or_else(|| (!self.varies(e)).then(|| Poly::symbol(&format!("({})", print_expr(e)))))
    }

    /// The body of the class's pure function `name` with `args` for its
    /// parameters.
    fn inline(&self, name: &str, args: &[Expr]) -> Option<Expr> {
        let f = self.class.members.iter().find_map(|m| match m {
            Member::Method(f) if f.is_pure_function() && *f.name.name == *name && f.params.len() == args.len() => Some(f),
            _ => None,
        })?;
        let MethodBody::Expr(body) = &f.body else { return None };
        let map = f.params.iter().zip(args).map(|(p, a)| (p.name.name.clone(), a.clone())).collect();
        Some(substitute(body, &map))
    }

    /// Whether `e` may differ between the threads of a warp.
    fn varies(&self, e: &Expr) -> bool {
        let x = self.x.as_deref();
        free_vars(e).iter().any(|(v, _)| {
            Some(&**v) == x
                || match self.env.get(v) {
                    Some(Value::Irregular) => true,
                    Some(Value::Poly(p)) => x.is_some_and(|x| !p.part_with(x).0.is_empty()),
                    None => false,
                }
        })
    }

    /// `a[i]`, `M[i][j]` of an array that is not the kernel's own: its name and
    /// indices.
    fn global_cell<'e>(&self, e: &'e Expr) -> Option<(String, Vec<&'e Expr>)> {
        let mut indices = Vec::new();
        let mut base = e;
        while let ExprKind::Index { base: b, index } = &base.kind {
            if !matches!(b.ty, Ty::Array(_)) {
                return None;
            }
            indices.push(&**index);
            base = b;
        }
        indices.reverse();
        let array = match &base.kind {
            ExprKind::Var(v) if !self.locals.contains(&v.name) => v.name.to_string(),
            ExprKind::Field { .. } => print_expr(base),
            _ => return None,
        };
        (!indices.is_empty()).then_some((array, indices))
    }

    /// Counts the global reads of a code expression, innermost first.
    fn loads(&mut self, e: &Expr) {
        struct Loads<'k, 'a>(&'k mut KernelWalk<'a>);
        impl Visitor for Loads<'_, '_> {
            fn visit_expr(&mut self, e: &Expr) {
                match &e.kind {
                    ExprKind::Index { .. } => match self.0.global_cell(e) {
                        Some((array, indices)) => {
                            indices.iter().for_each(|i| self.visit_expr(i));
                            self.0.access(e, &array, &indices, AccessKind::Load);
                        }
                        None => visit::walk_expr(self, e),
                    },
                    // Ghost code around a call is not run.
                    ExprKind::WithThen { expr, .. } => self.visit_expr(expr),
                    _ => visit::walk_expr(self, e),
                }
            }
        }
        Loads(self).visit_expr(e);
    }

    /// Records an access to `array[indices]` unless the thread has the cell in
    /// a register already.
    fn access(&mut self, at: &Expr, array: &str, indices: &[&Expr], kind: AccessKind) {
        let polys: Vec<Option<Poly>> = indices.iter().map(|i| self.eval(i)).collect();
        let key: Vec<String> =
            polys.iter().zip(indices).map(|(p, i)| p.as_ref().map_or_else(|| format!("?{}", print_expr(i)), Poly::to_string)).collect();
        let cell = (array.to_string(), key.join("]["));
        let counted = match kind {
            AccessKind::Load => !self.seen.contains(&cell),
            AccessKind::Store => !self.written.contains(&cell),
        };
        self.seen.insert(cell.clone());
        if kind == AccessKind::Store {
            self.written.insert(cell);
        }
        if !counted {
            return;
        }
        let x = self.x.as_deref().unwrap_or("");
        let coefficient = |p: &Option<Poly>| p.as_ref().and_then(|p| p.coefficient(x));
        let (last, rows) = polys.split_last().expect("a cell has an index");
        let pattern = if rows.iter().any(|r| coefficient(r) != Some(Poly::default())) {
            Pattern::Irregular
        } else {
            match coefficient(last) {
                None => Pattern::Irregular,
                Some(c) => match c.as_constant() {
                    Some(0) => Pattern::Uniform,
                    Some(1 | -1) => Pattern::Coalesced,
                    Some(k) => Pattern::Strided(Stride::Constant(k.abs())),
                    None => Pattern::Strided(Stride::Symbolic(c.to_string())),
                },
            }
        };
        let read: HashSet<Name> = indices.iter().flat_map(|i| free_vars(i)).map(|(v, _)| v).collect();
        let level = self.loops.iter().rev().find(|l| l.vars.iter().any(|v| read.contains(v))).map(|l| l.id);
        let index = indices.iter().map(|i| print_expr(i)).collect::<Vec<_>>().join("][");
        let access = Access { array: array.to_string(), index, kind, pattern, span: at.span };
        self.counted.push(Counted { access, level });
    }

    /// Loads and stores per element (see the module documentation).
    fn per_element(&self) -> (f64, f64) {
        let deepest = self.counted.iter().filter_map(|c| c.level).map(|l| self.loop_info[l].0).max();
        let cell_loop = |l: Option<usize>| l.filter(|l| Some(self.loop_info[*l].0) == deepest);
        // Accesses outside the cell loop: once a thread, over the loop's
        // iterations (the first cell loop's, if a constant number).
        let outside = match deepest {
            None => 1.0,
            Some(_) => {
                let first = self.counted.iter().find_map(|c| cell_loop(c.level)).expect("the deepest level has an access");
                let (_, elements, trips) = self.loop_info[first];
                trips.filter(|t| *t > 0).map_or(0.0, |t| 1.0 / (t * elements) as f64)
            }
        };
        let mut loads = 0.0;
        let mut stores = 0.0;
        for c in &self.counted {
            let weight = match cell_loop(c.level) {
                Some(l) => 1.0 / self.loop_info[l].1 as f64,
                None => outside,
            };
            match c.access.kind {
                AccessKind::Load => loads += weight,
                AccessKind::Store => stores += weight,
            }
        }
        (loads, stores)
    }
}

/// The variables a statement assigns or declares, nested statements included.
fn collect_assigned(s: &Stmt, out: &mut HashSet<Name>) {
    struct Assigned<'o>(&'o mut HashSet<Name>);
    impl Visitor for Assigned<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::LocalDecl { name, .. } = &s.kind {
                self.0.insert(name.name.clone());
            }
            if let Some((v, _)) = assigned(s) {
                self.0.insert(v.clone());
            }
            visit::walk_stmt(self, s)
        }
    }
    Assigned(out).visit_stmt(s);
}

#[cfg(test)]
mod tests;
