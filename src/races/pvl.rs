//! PVL `par` blocks as kernels of the IR, for `alpine verify --races FILE.pvl`
//! (issue #34): the same two-thread check as CUDA and OpenCL kernels get,
//! needing no permission annotations.
//!
//! Each par unit becomes a kernel of its own module, launched as **one group**
//! whose size is the unit's thread count: a PVL barrier synchronises every
//! thread of its par block, which is what a group's barrier does. A unit
//! `(int tid = lo .. hi)` is the kernel's threads with `tid = lo + local id`
//! and the requirement `local size == hi - lo`; a second iterator is the y
//! axis (the last one runs along x).
//!
//! Why a proof of the kernel is a proof of the par block:
//! * **Host variables** the body reads are kernel parameters with arbitrary
//!   values (the method's contract is not assumed: more runs than the real
//!   ones, so nothing is lost); `a.length` is a parameter `a.length ≥ 0` of its
//!   own. PVL threads cannot assign host variables (refused here too), so a
//!   parameter is the same value for every thread, as a host variable is.
//! * **Arrays** are pointer parameters into global memory, each its own
//!   array: distinct array variables are assumed not to alias (GPUVerify's
//!   assumption for pointer parameters; said with the verdict).
//! * **Integers** are 64-bit, with signed overflow assumed not to happen (the
//!   checker's assumption for C; said with the verdict): PVL's unbounded
//!   integers agree with them on every run whose values stay within 64 bits.
//!   (A byte offset is an index times 8 modulo 2^64, so indices beyond 2^61
//!   can meet: that only adds possible races, never hides one.)
//! * **Specification statements** (`assert`, `assume`, `fold`, …), loop
//!   invariants and the contracts of the unit and of barriers are left out:
//!   they constrain nothing the threads compute except through `assume`,
//!   and leaving out an `assume` only adds runs.
//! * **Units that run concurrently** (`par A … and B …`, `parallel { … }`) race
//!   with each other and are refused; `sequential { … }` units are separate
//!   kernels, one after another, as are separate par statements.
//! * **Fields** of `this` (scalars) are locations in global memory that every
//!   thread shares; `atomic (inv) { x = x + e; }` on such a field is an atomic
//!   addition (mutual exclusion among blocks naming the same invariants;
//!   `Lower::atomic`).
//! * Everything else the translation does not know (calls of methods, fields
//!   of other objects, sequences, nested par blocks, other atomic blocks,
//!   locks) is an
//!   `alpine::races::unsupported` error at its place: never a silent ✓.

use crate::ast::{self, BinOp, ExprKind as PExpr, LoopKind, Member, MethodBody, ParForm, Program, Span, StmtKind as PStmt, TypeKind, UnOp};
use crate::cfront::ir::{
    AddressSpace, Axis, BinaryOp, Builtin, Dim3, Expr, ExprKind, Function, Language, Launch, Module, Stmt, StmtKind, Type, UnaryOp,
    VarKind, Variable,
};
use crate::diagnostics::{codes, Diagnostic};
use std::collections::{BTreeMap, HashSet};

/// One par unit as a kernel: its name (`Class.method`, with the unit's label
/// or its position when the method has several) and its module.
pub struct ParKernel {
    pub name: String,
    pub span: Span,
    pub module: Module,
    /// How the checker's thread numbers (local ids, `thread (x, y, z)` in
    /// its reports) map to the unit's iterators, when they are not simply
    /// the iterator's value.
    pub numbering: Option<String>,
}

/// Every par unit of the program's methods, or the located reason why one
/// cannot be checked.
pub fn par_kernels(program: &Program) -> Vec<Result<ParKernel, Box<Diagnostic>>> {
    let mut out = Vec::new();
    for class in &program.classes {
        for m in &class.members {
            let Member::Method(m) = m else { continue };
            let MethodBody::Block(body) = &m.body else { continue };
            let mut host = BTreeMap::new();
            for p in &m.params {
                host.insert(p.name.to_string(), p.ty.kind.clone());
            }
            // Ghost parameters (`given int k;`) are host values like the others.
            for c in &m.contract.clauses {
                if let ast::ClauseKind::Given(p) = &c.kind {
                    host.insert(p.name.to_string(), p.ty.kind.clone());
                }
            }
            let mut units = Vec::new();
            collect(&body.stmts, &mut host, &mut units);
            let owner = if class.is_global() { m.name.to_string() } else { format!("{}.{}", class.name, m.name) };
            let many = units.len() > 1;
            for (k, unit) in units.into_iter().enumerate() {
                out.push(unit.and_then(|(u, host)| {
                    let name = match (&u.name, many) {
                        (Some(l), _) => format!("{owner}.{}", l.name),
                        (None, true) => format!("{owner}#{}", k + 1),
                        (None, false) => owner.clone(),
                    };
                    lower_unit(class, u, &host, &name).map(|module| ParKernel { name, span: u.span, module, numbering: numbering(u) })
                }));
            }
        }
    }
    out
}

type HostVars = BTreeMap<String, TypeKind>;

/// The thread numbering of a unit in words (see [`ParKernel::numbering`]):
/// `None` for one range from the literal 0, where thread k is `tid = k`.
fn numbering(u: &ast::ParUnit) -> Option<String> {
    let from_zero = |it: &ast::ParIter| matches!(it.lo.kind, PExpr::IntLit(0));
    let name = |it: &ast::ParIter| it.var.name.to_string();
    match u.iters.as_slice() {
        [it] if from_zero(it) => None,
        [it] => Some(format!("thread k of the report is `{} = lower bound + k`", name(it))),
        [first, last] => Some(format!(
            "thread (x, y, 0) of the report is `{} = {}x`, `{} = {}y`",
            name(last),
            if from_zero(last) { "" } else { "lower bound + " },
            name(first),
            if from_zero(first) { "" } else { "lower bound + " },
        )),
        _ => None,
    }
}

/// The par units of host statements, each with the host variables declared
/// before it (parameters and locals), in order.
fn collect<'a>(stmts: &'a [ast::Stmt], host: &mut HostVars, out: &mut Vec<Result<(&'a ast::ParUnit, HostVars), Box<Diagnostic>>>) {
    for s in stmts {
        match &s.kind {
            PStmt::LocalDecl { ty, name, .. } => {
                host.insert(name.to_string(), ty.kind.clone());
            }
            PStmt::Par(p) => {
                if p.units.len() > 1 && p.form != ParForm::Sequential {
                    out.push(Err(unsupported(p.span, "par units that run concurrently with each other (`and`, `parallel`)")));
                    continue;
                }
                out.extend(p.units.iter().map(|u| Ok((u, host.clone()))));
            }
            PStmt::Block(b) => collect(&b.stmts, &mut host.clone(), out),
            PStmt::InvariantBlock { body, .. } => collect(&body.stmts, &mut host.clone(), out),
            PStmt::If { then_branch, else_branch, .. } => {
                collect(std::slice::from_ref(then_branch), &mut host.clone(), out);
                if let Some(e) = else_branch {
                    collect(std::slice::from_ref(e), &mut host.clone(), out);
                }
            }
            PStmt::Loop(l) => {
                let mut inner = host.clone();
                if let LoopKind::For { init, .. } = &l.kind {
                    collect(init, &mut inner, out);
                }
                collect(std::slice::from_ref(&l.body), &mut inner, out);
            }
            _ => {}
        }
    }
}

fn unsupported(span: Span, what: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(codes::RACES_UNSUPPORTED, format!("not supported by the race check of PVL par blocks: {what}"), span)
            .with_label("not checked"),
    )
}

/// PVL's `int` (see the module doc).
const INT: Type = Type::Int { bits: 64, signed: true };

fn expr(kind: ExprKind, ty: Type, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn int(v: i128, span: Span) -> Expr {
    expr(ExprKind::Int(v), INT, span)
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr, ty: Type, span: Span) -> Expr {
    expr(ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, ty, span)
}

/// The IR type of a PVL scalar or array type.
fn ir_type(t: &TypeKind) -> Option<Type> {
    match t {
        TypeKind::Int => Some(INT),
        TypeKind::Boolean => Some(Type::Bool),
        TypeKind::Array(elem, _) => Some(Type::Pointer { pointee: Box::new(ir_type(&elem.kind)?), space: AddressSpace::Global }),
        _ => None,
    }
}

/// The translation of one unit: its locals (scoped), the host variables it
/// reads (the kernel's parameters, in order of first use).
struct Lower<'h> {
    class: &'h ast::Class,
    host: &'h HostVars,
    scopes: Vec<HashSet<String>>,
    params: Vec<Variable>,
    /// Ghost locals (of mathematical types: `seq`, `set`, …), left out with
    /// every assignment to them; any other use of one is refused.
    ghosts: HashSet<String>,
    /// The pure functions called so far, as device functions of the module
    /// (the checker inlines them); a name is entered before its body is
    /// lowered, so recursion reaches the checker, which refuses it.
    functions: &'h mut Vec<Function>,
    /// Scalar fields of `this` the body uses: one global location each.
    globals: Vec<Variable>,
    /// The invariants named by the unit's `atomic` blocks (all must be the same).
    atomic_invariants: Option<Vec<String>>,
    /// Inside an `atomic` block (or `lock this; …; unlock this;`).
    in_atomic: bool,
}

fn lower_unit(class: &ast::Class, u: &ast::ParUnit, host: &HostVars, name: &str) -> Result<Module, Box<Diagnostic>> {
    if u.iters.len() > 2 {
        return Err(unsupported(u.span, "par blocks over more than two ranges"));
    }
    let mut functions = Vec::new();
    let mut cx = Lower {
        class,
        host,
        scopes: vec![HashSet::new()],
        params: Vec::new(),
        ghosts: HashSet::new(),
        functions: &mut functions,
        globals: Vec::new(),
        atomic_invariants: None,
        in_atomic: false,
    };
    let mut body = Vec::new();
    // An axis per iterator, its size symbolic unless the range is constant.
    let mut block = [None, if u.iters.len() == 2 { None } else { Some(1) }, Some(1)];
    // The last iterator runs along x, the one before it along y.
    let axes: &[Axis] = if u.iters.len() == 2 { &[Axis::Y, Axis::X] } else { &[Axis::X] };
    for (it, &axis) in u.iters.iter().zip(axes) {
        let (lo, hi) = (cx.expr(&it.lo)?, cx.expr(&it.hi)?);
        let size = expr(ExprKind::Builtin(Builtin::LocalSize(axis)), INT, it.span);
        let count = binary(BinaryOp::Sub, hi, lo.clone(), INT, it.span);
        body.push(Stmt {
            kind: StmtKind::Annotation {
                kind: crate::cfront::ir::AnnotationKind::Requires,
                args: vec![binary(BinaryOp::Eq, size, count, Type::Bool, it.span)],
            },
            span: it.span,
        });
        if let (PExpr::IntLit(a), PExpr::IntLit(b)) = (&it.lo.kind, &it.hi.kind) {
            block[axis as usize] = u64::try_from(b.saturating_sub(*a)).ok().filter(|n| *n > 0);
        }
        let id = expr(ExprKind::Builtin(Builtin::LocalId(axis)), INT, it.span);
        let name = it.var.name.to_string();
        cx.scopes[0].insert(name.clone());
        body.push(Stmt {
            kind: StmtKind::Decl(Variable {
                name,
                ty: INT,
                space: AddressSpace::Private,
                init: Some(binary(BinaryOp::Add, lo, id, INT, it.span)),
                span: it.var.span,
            }),
            span: it.span,
        });
    }
    if u.iters.is_empty() {
        block[0] = Some(1);
    }
    body.extend(cx.sequence(&u.body.stmts)?);
    // Array lengths are not negative.
    let mut facts = Vec::new();
    for p in &cx.params {
        if p.name.ends_with(".length") {
            let var = expr(ExprKind::Var { name: p.name.clone(), kind: VarKind::Param }, INT, p.span);
            facts.push(Stmt {
                kind: StmtKind::Annotation {
                    kind: crate::cfront::ir::AnnotationKind::Requires,
                    args: vec![binary(BinaryOp::Ge, var, int(0, p.span), Type::Bool, p.span)],
                },
                span: p.span,
            });
        }
    }
    facts.extend(body);
    let globals = std::mem::take(&mut cx.globals);
    let kernel = Function { name: name.to_string(), is_kernel: true, params: cx.params, ret: Type::Void, body: Some(facts), span: u.span };
    functions.push(kernel);
    Ok(Module {
        language: Language::Cuda,
        launch: Launch { block: Some(Dim3(block)), grid: Some(Dim3([Some(1); 3])) },
        structs: Vec::new(),
        globals,
        functions,
        host_functions: Vec::new(),
    })
}

impl Lower<'_> {
    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    /// A host variable read by the body: a parameter of the kernel.
    fn param(&mut self, name: &str, ty: Type, span: Span) -> Expr {
        if !self.params.iter().any(|p| p.name == name) {
            self.params.push(Variable { name: name.to_string(), ty: ty.clone(), space: AddressSpace::Private, init: None, span });
        }
        expr(ExprKind::Var { name: name.to_string(), kind: VarKind::Param }, ty, span)
    }

    fn var(&mut self, name: &str, span: Span) -> Result<Expr, Box<Diagnostic>> {
        if self.is_local(name) {
            // Locals are scalars (array locals are refused at their declaration).
            let ty = self.local_type(name);
            return Ok(expr(ExprKind::Var { name: name.to_string(), kind: VarKind::Local }, ty, span));
        }
        match self.host.get(name).and_then(ir_type) {
            Some(ty) => Ok(self.param(name, ty, span)),
            None if self.host.contains_key(name) => Err(unsupported(span, &format!("the host variable `{name}` of this type"))),
            None => self.field(name, span),
        }
    }

    /// A scalar field of `this`: one location in global memory, shared by
    /// every thread (reads and writes of it race like array cells').
    fn field(&mut self, name: &str, span: Span) -> Result<Expr, Box<Diagnostic>> {
        let ty = self.class.members.iter().find_map(|m| match m {
            Member::Field(f) if f.name.as_str() == name => Some(f.ty.kind.clone()),
            _ => None,
        });
        let ty = match ty {
            Some(TypeKind::Int) => INT,
            Some(TypeKind::Boolean) => Type::Bool,
            Some(_) => return Err(unsupported(span, &format!("the field `{name}`, which is not an `int` or a `boolean`"))),
            None => return Err(unsupported(span, &format!("`{name}` (a name outside the method)"))),
        };
        if !self.globals.iter().any(|g| g.name == name) {
            self.globals.push(Variable { name: name.to_string(), ty: ty.clone(), space: AddressSpace::Global, init: None, span });
        }
        Ok(expr(ExprKind::Var { name: name.to_string(), kind: VarKind::Global }, ty, span))
    }

    /// `atomic (inv) { … }`: the block runs under mutual exclusion with every
    /// block naming the same invariants, so each `x = x + e;` in it on a field
    /// `x` of `this` (with `x` not in `e`) is an atomic addition
    /// (`atomicAdd(&x, e)`): it races with plain accesses of `x`, not with the
    /// other additions. The block's other statements are lowered as if
    /// unprotected, which only adds interleavings. Blocks naming different
    /// invariants (which exclude nothing from each other) are refused.
    fn atomic(&mut self, invariants: &[ast::Ident], body: &ast::Stmt, span: Span) -> Result<StmtKind, Box<Diagnostic>> {
        let names: Vec<String> = invariants.iter().map(|i| i.to_string()).collect();
        match &self.atomic_invariants {
            Some(seen) if *seen != names => return Err(unsupported(span, "`atomic` blocks naming different invariants in one par block")),
            _ => self.atomic_invariants = Some(names),
        }
        let outer = std::mem::replace(&mut self.in_atomic, true);
        let lowered = self.stmts(std::slice::from_ref(body), span);
        self.in_atomic = outer;
        Ok(lowered?.kind)
    }

    /// `x = x + e` (or `e + x`) on a field `x` of `this`, `x` not in `e`, as an
    /// atomic addition; `None` for any other assignment.
    fn atomic_add(&mut self, target: &ast::Expr, value: &ast::Expr, span: Span) -> Option<Result<StmtKind, Box<Diagnostic>>> {
        let x = this_field(target).filter(|x| !self.is_local(x) && !self.host.contains_key(*x))?;
        let PExpr::Binary { op: BinOp::Add, lhs, rhs } = &value.kind else { return None };
        let is_x = |e: &ast::Expr| this_field(e) == Some(x);
        let addend = match (is_x(lhs), is_x(rhs)) {
            (true, false) => rhs,
            (false, true) => lhs,
            _ => return None,
        };
        if mentions(addend, x) {
            return None;
        }
        Some((|| {
            let place = self.field(x, target.span)?;
            let addend = self.expr(addend)?;
            let ty = place.ty.clone();
            let pointer = Type::Pointer { pointee: Box::new(ty.clone()), space: AddressSpace::Global };
            let address = expr(ExprKind::Unary { op: UnaryOp::AddrOf, operand: Box::new(place) }, pointer, span);
            Ok(StmtKind::Expr(expr(ExprKind::Atomic { op: crate::cfront::ir::AtomicOp::Add, args: vec![address, addend] }, ty, span)))
        })())
    }

    fn local_type(&self, name: &str) -> Type {
        // Recorded as `name:bool` in the scope for booleans.
        if self.scopes.iter().any(|s| s.contains(&format!("{name}:bool"))) {
            Type::Bool
        } else {
            INT
        }
    }

    fn expr(&mut self, e: &ast::Expr) -> Result<Expr, Box<Diagnostic>> {
        let span = e.span;
        Ok(match &e.kind {
            PExpr::IntLit(v) => match i64::try_from(*v) {
                Ok(v) => int(v.into(), span),
                Err(_) => return Err(unsupported(span, "an integer literal beyond 64 bits")),
            },
            PExpr::BoolLit(b) => expr(ExprKind::Bool(*b), Type::Bool, span),
            PExpr::Var(x) => self.var(x.as_str(), span)?,
            PExpr::Field { obj, field } if matches!(obj.kind, PExpr::This) => self.field(field.as_str(), span)?,
            PExpr::Field { obj, field } if field.as_str() == "length" => match &obj.kind {
                PExpr::Var(a) if !self.is_local(a.as_str()) && matches!(self.host.get(a.as_str()), Some(TypeKind::Array(..))) => {
                    self.param(&format!("{a}.length"), INT, span)
                }
                _ => return Err(unsupported(span, "`.length` of something other than a host array")),
            },
            PExpr::Index { base, index } => {
                let b = self.expr(base)?;
                let Type::Pointer { pointee, .. } = b.ty.clone() else {
                    return Err(unsupported(span, "indexing something other than an array"));
                };
                let i = self.expr(index)?;
                expr(ExprKind::Index { base: Box::new(b), index: Box::new(i) }, *pointee, span)
            }
            PExpr::Unary { op, operand } => {
                let x = self.expr(operand)?;
                let (op, ty) = match op {
                    UnOp::Not => (UnaryOp::Not, Type::Bool),
                    UnOp::Neg => (UnaryOp::Neg, INT),
                };
                expr(ExprKind::Unary { op, operand: Box::new(x) }, ty, span)
            }
            PExpr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                let (op, ty) = match op {
                    BinOp::Add => (BinaryOp::Add, INT),
                    BinOp::Sub => (BinaryOp::Sub, INT),
                    BinOp::Mul => (BinaryOp::Mul, INT),
                    BinOp::Div => (BinaryOp::Div, INT),
                    BinOp::Mod => (BinaryOp::Rem, INT),
                    BinOp::Lt => (BinaryOp::Lt, Type::Bool),
                    BinOp::Le => (BinaryOp::Le, Type::Bool),
                    BinOp::Gt => (BinaryOp::Gt, Type::Bool),
                    BinOp::Ge => (BinaryOp::Ge, Type::Bool),
                    BinOp::Eq => (BinaryOp::Eq, Type::Bool),
                    BinOp::Ne => (BinaryOp::Ne, Type::Bool),
                    BinOp::And => (BinaryOp::And, Type::Bool),
                    BinOp::Or => (BinaryOp::Or, Type::Bool),
                    BinOp::Implies => {
                        let not_l = expr(ExprKind::Unary { op: UnaryOp::Not, operand: Box::new(l) }, Type::Bool, span);
                        return Ok(binary(BinaryOp::Or, not_l, r, Type::Bool, span));
                    }
                    other => return Err(unsupported(span, &format!("the operator `{}`", other.symbol()))),
                };
                binary(op, l, r, ty, span)
            }
            PExpr::Cond { cond, then_expr, else_expr } => {
                let (c, t, f) = (self.expr(cond)?, self.expr(then_expr)?, self.expr(else_expr)?);
                let ty = t.ty.clone();
                expr(ExprKind::Conditional { cond: Box::new(c), then: Box::new(t), otherwise: Box::new(f) }, ty, span)
            }
            PExpr::Call { receiver, method, args } if receiver.as_deref().is_none_or(|r| matches!(r.kind, PExpr::This)) => {
                let Some(f) = crate::emit::pure_function(self.class, method.as_str()) else {
                    return Err(unsupported(
                        span,
                        &format!("calling `{method}` in a par block (only pure functions of the class are followed)"),
                    ));
                };
                let ret = match f.ret.as_ref().map(|t| &t.kind) {
                    Some(TypeKind::Int) => INT,
                    Some(TypeKind::Boolean) => Type::Bool,
                    _ => return Err(unsupported(span, &format!("calling `{method}`, which returns neither `int` nor `boolean`"))),
                };
                self.function(f)?;
                let args = args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
                expr(ExprKind::Call { callee: method.to_string(), args }, ret, span)
            }
            PExpr::Call { method, .. } => return Err(unsupported(span, &format!("calling `{method}` in a par block"))),
            _ => return Err(unsupported(span, "this expression")),
        })
    }

    /// The pure function `f` as a device function of the module (once).
    fn function(&mut self, f: &ast::Method) -> Result<(), Box<Diagnostic>> {
        let name = f.name.to_string();
        if self.functions.iter().any(|g| g.name == name) {
            return Ok(());
        }
        let MethodBody::Expr(body) = &f.body else { unreachable!("a pure function has an expression body") };
        let mut params = Vec::new();
        let mut scope = HashSet::new();
        for p in &f.params {
            let ty = match p.ty.kind {
                TypeKind::Int => INT,
                TypeKind::Boolean => {
                    scope.insert(format!("{}:bool", p.name));
                    Type::Bool
                }
                _ => return Err(unsupported(p.span, "a function parameter that is not an `int` or a `boolean`")),
            };
            scope.insert(p.name.to_string());
            params.push(Variable { name: p.name.to_string(), ty, space: AddressSpace::Private, init: None, span: p.span });
        }
        let ret = if matches!(f.ret.as_ref().map(|t| &t.kind), Some(TypeKind::Boolean)) { Type::Bool } else { INT };
        let index = self.functions.len();
        self.functions.push(Function {
            name: name.clone(),
            is_kernel: false,
            params: params.clone(),
            ret: ret.clone(),
            body: Some(Vec::new()),
            span: f.span,
        });
        let empty = HostVars::new();
        let mut inner = Lower {
            class: self.class,
            host: &empty,
            scopes: vec![scope],
            params: Vec::new(),
            ghosts: HashSet::new(),
            functions: self.functions,
            globals: std::mem::take(&mut self.globals),
            atomic_invariants: None,
            in_atomic: false,
        };
        let value = inner.expr(body);
        // Fields the function reads are the kernel's globals too.
        self.globals = std::mem::take(&mut inner.globals);
        let value = value?;
        self.functions[index].body = Some(vec![Stmt { kind: StmtKind::Return(Some(value)), span: body.span }]);
        Ok(())
    }

    /// Whether `s` is ghost code the check leaves out: a ghost local's
    /// declaration or assignment, or a call of a method whose body does
    /// nothing but ghost code (it cannot touch the heap).
    fn is_ghost(&mut self, s: &ast::Stmt) -> bool {
        match &s.kind {
            PStmt::LocalDecl { ty, name, .. } if ty.kind.is_mathematical() => {
                self.ghosts.insert(name.to_string());
                true
            }
            PStmt::Assign { target, .. } => matches!(&target.kind, PExpr::Var(x) if self.ghosts.contains(x.as_str())),
            PStmt::Expr(e) => ghost_call(self.class, e, &mut Vec::new()),
            // A condition that reads nothing, around ghost code only.
            PStmt::If { cond, then_branch, else_branch } => {
                heap_free(cond) && self.all_ghost(then_branch) && else_branch.as_deref().is_none_or(|e| self.all_ghost(e))
            }
            _ => false,
        }
    }

    fn all_ghost(&mut self, s: &ast::Stmt) -> bool {
        match &s.kind {
            PStmt::Spec { .. } | PStmt::Label(_) => true,
            PStmt::Block(b) => b.stmts.iter().all(|s| self.all_ghost(s)),
            _ => self.is_ghost(s),
        }
    }

    fn stmts(&mut self, stmts: &[ast::Stmt], span: Span) -> Result<Stmt, Box<Diagnostic>> {
        self.scopes.push(HashSet::new());
        let out = self.sequence(stmts);
        self.scopes.pop();
        Ok(Stmt { kind: StmtKind::Block(out?), span })
    }

    /// Statements in order; `lock this; S; unlock this;` is a critical section
    /// on `this`'s monitor, lowered as an `atomic` block (`Lower::atomic`)
    /// whose invariant is the monitor.
    fn sequence(&mut self, stmts: &[ast::Stmt]) -> Result<Vec<Stmt>, Box<Diagnostic>> {
        let on_this = |s: &ast::Stmt, kind: ast::SyncKind| matches!(&s.kind, PStmt::Sync { kind: k, obj } if *k == kind && matches!(obj.kind, PExpr::This));
        let mut out = Vec::new();
        let mut i = 0;
        while i < stmts.len() {
            if i + 2 < stmts.len() && on_this(&stmts[i], ast::SyncKind::Lock) && on_this(&stmts[i + 2], ast::SyncKind::Unlock) {
                let monitor = [ast::Ident::new("lock this", stmts[i].span)];
                let span = stmts[i].span.to(stmts[i + 2].span);
                out.push(Stmt { kind: self.atomic(&monitor, &stmts[i + 1], span)?, span });
                i += 3;
            } else {
                out.push(self.stmt(&stmts[i])?);
                i += 1;
            }
        }
        Ok(out)
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Result<Stmt, Box<Diagnostic>> {
        let span = s.span;
        if self.is_ghost(s) {
            return Ok(Stmt { kind: StmtKind::Empty, span });
        }
        let kind = match &s.kind {
            PStmt::LocalDecl { ty, name, init } => {
                let ir = match &ty.kind {
                    TypeKind::Int => INT,
                    TypeKind::Boolean => Type::Bool,
                    _ => return Err(unsupported(span, "a local that is not an `int` or a `boolean`")),
                };
                let init = init.as_ref().map(|e| self.expr(e)).transpose()?;
                let scope = self.scopes.last_mut().expect("a scope is open");
                scope.insert(name.to_string());
                if ir == Type::Bool {
                    scope.insert(format!("{name}:bool"));
                }
                StmtKind::Decl(Variable { name: name.to_string(), ty: ir, space: AddressSpace::Private, init, span: name.span })
            }
            PStmt::Assign { target, value } => {
                if self.in_atomic {
                    if let Some(add) = self.atomic_add(target, value, span) {
                        return Ok(Stmt { kind: add?, span });
                    }
                }
                if let PExpr::Var(x) = &target.kind {
                    if !self.is_local(x.as_str()) && self.host.contains_key(x.as_str()) {
                        return Err(unsupported(target.span, &format!("a thread assigning the host variable `{x}`")));
                    }
                }
                let (t, v) = (self.expr(target)?, self.expr(value)?);
                let ty = t.ty.clone();
                StmtKind::Expr(expr(ExprKind::Assign { op: None, target: Box::new(t), value: Box::new(v) }, ty, span))
            }
            PStmt::IncDec { target, op } => {
                if !self.is_local(target.as_str()) {
                    return Err(unsupported(target.span, &format!("a thread assigning the host variable `{target}`")));
                }
                let t = self.var(target.as_str(), target.span)?;
                let increment = *op == ast::IncDec::Inc;
                StmtKind::Expr(expr(ExprKind::IncDec { increment, prefix: false, target: Box::new(t) }, INT, span))
            }
            PStmt::If { cond, then_branch, else_branch } => {
                let c = self.expr(cond)?;
                let then = self.stmts(std::slice::from_ref(then_branch), then_branch.span)?;
                let otherwise = match else_branch {
                    Some(e) => Some(Box::new(self.stmts(std::slice::from_ref(e), e.span)?)),
                    None => None,
                };
                StmtKind::If { cond: c, then: Box::new(then), otherwise }
            }
            PStmt::Loop(l) => match &l.kind {
                LoopKind::While { cond } => {
                    let c = self.expr(cond)?;
                    let body = self.stmts(std::slice::from_ref(&l.body), l.body.span)?;
                    StmtKind::While { invariants: Vec::new(), cond: c, body: Box::new(body) }
                }
                LoopKind::For { init, cond, update } => {
                    self.scopes.push(HashSet::new());
                    let lowered = (|| {
                        let init = init.iter().map(|s| self.stmt(s)).collect::<Result<Vec<_>, _>>()?;
                        let cond = cond.as_ref().map(|c| self.expr(c)).transpose()?;
                        let body = self.stmts(std::slice::from_ref(&l.body), l.body.span)?;
                        // The update's statements as one expression (`a, b`).
                        let mut step: Option<Expr> = None;
                        for u in update {
                            let StmtKind::Expr(e) = self.stmt(u)?.kind else {
                                return Err(unsupported(u.span, "this update of a `for` loop"));
                            };
                            step = Some(match step {
                                None => e,
                                Some(prev) => binary(BinaryOp::Comma, prev, e.clone(), e.ty.clone(), u.span),
                            });
                        }
                        Ok::<_, Box<Diagnostic>>(StmtKind::For { init, invariants: Vec::new(), cond, step, body: Box::new(body) })
                    })();
                    self.scopes.pop();
                    lowered?
                }
            },
            PStmt::Block(b) => return self.stmts(&b.stmts, b.span),
            PStmt::Barrier(_) => StmtKind::Barrier(crate::cfront::ir::Barrier::Block { shared: true, global: true }),
            PStmt::Spec { .. } | PStmt::Label(_) => StmtKind::Empty,
            // A bare name (`for (k; …)`): evaluating it does nothing.
            PStmt::Expr(e) if matches!(e.kind, PExpr::Var(_) | PExpr::IntLit(_)) => StmtKind::Empty,
            PStmt::Return(None) => StmtKind::Return(None),
            PStmt::Par(_) => return Err(unsupported(span, "a par block inside a par block")),
            PStmt::Atomic { invariants, body } => self.atomic(invariants, body, span)?,
            _ => return Err(unsupported(span, "this statement in a par block")),
        };
        Ok(Stmt { kind, span })
    }
}

/// Whether the method `name` of `class` is ghost code: it returns nothing and
/// its body (if any) holds only specification statements, ghost locals and
/// calls of such methods, so running it can change nothing and access no
/// array. Recursion (`stack`) counts as ghost: it adds no access either.
fn ghost_method(class: &ast::Class, name: &str, stack: &mut Vec<String>) -> bool {
    if stack.iter().any(|n| n == name) {
        return true;
    }
    let Some(m) = class.members.iter().find_map(|m| match m {
        Member::Method(m) if m.name.as_str() == name => Some(m),
        _ => None,
    }) else {
        return false;
    };
    if !matches!(m.ret.as_ref().map(|t| &t.kind), Some(TypeKind::Void)) {
        return false;
    }
    stack.push(name.to_string());
    let ghost = match &m.body {
        // No body: its contract is all there is; without a resource in it, it
        // can access nothing.
        MethodBody::Abstract => {
            let is_predicate =
                |n: &str| class.members.iter().any(|x| matches!(x, Member::Method(p) if p.is_predicate() && p.name.as_str() == n));
            !m.contract.exprs().any(|e| crate::ast::visit::holds_resource(e, &is_predicate))
        }
        MethodBody::Block(b) => b.stmts.iter().all(|s| ghost_stmt(class, s, stack)),
        MethodBody::Expr(_) => false,
    };
    stack.pop();
    ghost
}

fn ghost_stmt(class: &ast::Class, s: &ast::Stmt, stack: &mut Vec<String>) -> bool {
    match &s.kind {
        PStmt::Spec { .. } | PStmt::Label(_) => true,
        PStmt::LocalDecl { ty, .. } => ty.kind.is_mathematical(),
        PStmt::Block(b) => b.stmts.iter().all(|s| ghost_stmt(class, s, stack)),
        PStmt::If { cond, then_branch, else_branch } => {
            heap_free(cond) && ghost_stmt(class, then_branch, stack) && else_branch.as_deref().is_none_or(|e| ghost_stmt(class, e, stack))
        }
        PStmt::Expr(e) => ghost_call(class, e, stack),
        _ => false,
    }
}

/// A call statement of a ghost method whose arguments read no heap location.
fn ghost_call(class: &ast::Class, e: &ast::Expr, stack: &mut Vec<String>) -> bool {
    match &e.kind {
        PExpr::Call { receiver, method, args } if receiver.as_deref().is_none_or(|r| matches!(r.kind, PExpr::This)) => {
            args.iter().all(heap_free) && ghost_method(class, method.as_str(), stack)
        }
        _ => false,
    }
}

/// Whether evaluating `e` reads no array element and no field (elements of
/// sequences and maps are values, not locations).
fn heap_free(e: &ast::Expr) -> bool {
    struct Finder(bool);
    impl crate::ast::visit::Visitor for Finder {
        fn visit_expr(&mut self, e: &ast::Expr) {
            match &e.kind {
                PExpr::Index { base, .. } if !matches!(base.ty, ast::Ty::Seq(_) | ast::Ty::Map(..)) => self.0 = false,
                PExpr::Field { .. } => self.0 = false,
                _ => crate::ast::visit::walk_expr(self, e),
            }
        }
    }
    let mut f = Finder(true);
    crate::ast::visit::Visitor::visit_expr(&mut f, e);
    f.0
}

/// The field of `this` that `e` names (`x` or `this.x`), if any.
fn this_field(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        PExpr::Var(x) => Some(x.as_str()),
        PExpr::Field { obj, field } if matches!(obj.kind, PExpr::This) => Some(field.as_str()),
        _ => None,
    }
}

/// Whether `e` mentions the name `x` (or `this.x`).
fn mentions(e: &ast::Expr, x: &str) -> bool {
    struct Finder<'a>(&'a str, bool);
    impl crate::ast::visit::Visitor for Finder<'_> {
        fn visit_expr(&mut self, e: &ast::Expr) {
            if this_field(e) == Some(self.0) {
                self.1 = true;
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let mut f = Finder(x, false);
    crate::ast::visit::Visitor::visit_expr(&mut f, e);
    f.1
}
