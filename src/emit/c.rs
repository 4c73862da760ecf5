//! C expressions and statements, shared by both targets.
//!
//! What maps to what, and why:
//! * PVL `int` and `boolean` both become C `int` (32 bits). PVL integers are
//!   unbounded: a program whose values leave the 32-bit range overflows in the
//!   emitted code (verification does not rule that out). The header says so
//!   ([`INT_NOTE`]) and how the annotations are proved again on the C file for
//!   the runs without signed overflow. Booleans are 0 or 1.
//! * `/` and `%` are printed as C's `/` and `%`: both truncate towards zero, which
//!   is what PVL's integer division and remainder do (the verifier's encoding and
//!   `alpine::interp` agree on truncation).
//! * `a ==> b` becomes `(!(a) || (b))`; `c ? x : y` stays.
//! * `a.length` of an array parameter `a` becomes the variable `a_length` (host
//!   functions take every array as a pointer plus its length; kernels take the
//!   length only when they use it).
//! * Calls of pure `int`/`boolean` functions of the same class with an expression
//!   body become calls of C functions (`Class_f`), emitted once each, callees first;
//!   in annotations too (`spec_calls`), the function then marked `/*@ pure @*/`
//!   so that a verifier reading the C file resolves the call.
//! * Specification statements (`assert`, `assume`, `fold`, ...) and contracts
//!   become VerCors annotations (`/*@ … @*/`); they have no run-time effect in
//!   PVL either, and VerCors can read them back from the emitted kernel.
//! * Every expression is fully parenthesised, so C's precedence never matters.
//!
//! Everything else (sequences, quantifiers outside comments, fields of `this`,
//! object creation, method calls with effects, locks, ...; atomics: see `atomic.rs`) is refused
//! with a located diagnostic: the emitter never guesses.

use super::{unsupported, Target};
use crate::ast::visit::VisitMut;
use crate::ast::*;
use crate::diagnostics::Diagnostic;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The header lines on integers, for both targets: what PVL's types become,
/// and that the annotations were proved over unbounded integers, so that
/// proving them on the C file needs `--assume-no-signed-overflow` (or bounds
/// on the values in the contract).
pub const INT_NOTE: &str = "// PVL int and boolean are C int (32 bits); `/` and `%` truncate as in PVL. The annotations were proved\n\
     // over unbounded integers: `alpine verify --assume-no-signed-overflow FILE` proves them here for the runs\n\
     // without signed overflow (without the flag, it also asks that no signed arithmetic overflows).\n";

pub type R<T> = Result<T, Box<Diagnostic>>;

/// Where the code being printed runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The host function: arrays live on the device, so element accesses are refused.
    Host,
    /// A kernel body: variables not declared inside are captured host variables.
    Kernel,
    /// A pure function body: only its parameters are in scope.
    Function,
}

/// A host variable a kernel reads: an array (pointer, plus its length when
/// `.length` is used; `written` when the kernel assigns or atomically updates one
/// of its elements) or a scalar (passed by value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capture {
    Array { name: Name, length: bool, written: bool },
    Scalar { name: Name },
}

/// State of one printing pass (one kernel, the host body, or one function).
pub struct Ctx<'a> {
    pub target: Target,
    pub mode: Mode,
    pub class: &'a Class,
    /// Variables declared in the code being printed (kernel locals and iterators,
    /// host parameters and locals, function parameters) with their types.
    pub locals: HashMap<Name, Ty>,
    /// Kernel mode: the host's variables (parameters and locals declared so far).
    pub host_vars: HashMap<Name, Ty>,
    /// Kernel mode: captured host variables, in order of first use.
    pub captures: Vec<Capture>,
    /// Pure functions called (by their PVL names).
    pub called: BTreeSet<Name>,
    /// Kernel mode: the par unit's label (barriers must name it).
    pub label: Option<Name>,
    pub has_barrier: bool,
    /// The names declared in each open C block, innermost last: PVL lets a block
    /// declare a name twice (`int r = ..; ... int r = ..;`), C does not, so the
    /// second declaration becomes an assignment.
    pub scopes: Vec<HashSet<Name>>,
    /// `Options::data`: locals that hold data are declared with its type.
    pub data: Option<std::sync::Arc<super::DataTyping>>,
    /// Kernel mode: each iterator by its thread's id in the terms of a barrier
    /// contract that `alpine verify` reads (`alpine_lo0 + threadIdx.x`): a
    /// barrier kernel is one block, so its local id is its global id.
    pub barrier_ids: crate::ast::subst::Subst,
}

impl<'a> Ctx<'a> {
    pub fn new(target: Target, mode: Mode, class: &'a Class) -> Ctx<'a> {
        Ctx {
            target,
            mode,
            class,
            locals: HashMap::new(),
            host_vars: HashMap::new(),
            captures: Vec::new(),
            called: BTreeSet::new(),
            label: None,
            has_barrier: false,
            scopes: vec![HashSet::new()],
            data: None,
            barrier_ids: crate::ast::subst::Subst::new(),
        }
    }

    /// Resolves a variable occurrence: a local, or (in a kernel) a captured host
    /// variable; anything else is a field of `this`, which is refused.
    /// Captures host variable `name` into the kernel (as a use in code would);
    /// false when it is not a host variable of an emittable type.
    pub fn capture(&mut self, name: &Name) -> bool {
        !self.locals.contains_key(name)
            && self.host_vars.contains_key(name)
            && self.var(&Ident::new(name, Span::DUMMY), Span::DUMMY).is_ok()
    }

    fn var(&mut self, id: &Ident, span: Span) -> R<Ty> {
        if let Some(t) = self.locals.get(&id.name) {
            return Ok(t.clone());
        }
        if self.mode == Mode::Kernel {
            if let Some(t) = self.host_vars.get(&id.name).cloned() {
                let cap = match t {
                    Ty::Array(_) => Capture::Array { name: id.name.clone(), length: false, written: false },
                    _ => Capture::Scalar { name: id.name.clone() },
                };
                let seen = self.captures.iter().any(|c| match (c, &cap) {
                    (Capture::Array { name: a, .. }, Capture::Array { name: b, .. }) => a == b,
                    (Capture::Scalar { name: a }, Capture::Scalar { name: b }) => a == b,
                    _ => false,
                });
                if !seen {
                    self.captures.push(cap);
                }
                return Ok(t);
            }
        }
        Err(unsupported(span, format!("`{}` is not a local variable or parameter here (fields of `this` cannot be emitted)", id.name)))
    }

    pub fn mark_length(&mut self, name: &Name) {
        for c in &mut self.captures {
            if let Capture::Array { name: n, length, .. } = c {
                if n == name {
                    *length = true;
                }
            }
        }
    }

    /// Records that the kernel writes an element of the captured array `name`
    /// (its pointer then loses `const`, and the host copies the array back).
    pub fn mark_written(&mut self, name: &Name) {
        for c in &mut self.captures {
            if let Capture::Array { name: n, written, .. } = c {
                if n == name {
                    *written = true;
                }
            }
        }
    }
}

const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "half",
    "uint",
    "uchar",
    "ushort",
    "ulong",
    "size_t",
    "NULL",
    "main",
    "new",
    "delete",
    "class",
    "this",
    "template",
    "namespace",
    "operator",
    "private",
    "public",
    "protected",
    "virtual",
    "friend",
    "using",
    "typename",
    "asm",
    "dim3",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "status",
    "done",
    "read_only",
    "write_only",
    "read_write",
    "complex",
    "imaginary",
    "sampler_t",
    "event_t",
    "printf",
    "fprintf",
    "stderr",
];

/// A PVL identifier as a C identifier: names C, C++, CUDA or OpenCL reserve, the
/// emitter's own prefix `alpine_`, names starting with `_` and names ending in
/// `_length` (which could clash with an array's length variable) get a `_` appended.
pub fn c_name(name: &str) -> String {
    let vector = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool"]
        .iter()
        .any(|b| name.strip_prefix(b).is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit())));
    if RESERVED.contains(&name) || vector || name.starts_with("alpine_") || name.starts_with('_') || name.ends_with("_length") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The C name of an array's length variable.
pub fn length_name(array: &str) -> String {
    format!("{}_length", c_name(array))
}

/// The C name of a pure function of a class.
pub fn function_name(class: &str, f: &str) -> String {
    format!("{class}_{f}")
}

/// The C type of a scalar PVL type, or a refusal.
pub fn scalar_type(t: &Type) -> R<&'static str> {
    match t.kind {
        TypeKind::Int | TypeKind::Boolean => Ok("int"),
        _ => {
            Err(unsupported(t.span, format!("values of type `{}` cannot be emitted (only int and boolean)", crate::printer::print_type(t))))
        }
    }
}

fn scalar_ty(t: &Ty) -> bool {
    matches!(t, Ty::Int | Ty::Bool)
}

/// An element type an array may have: int or boolean (both stored as C `int`).
pub fn array_elem_ok(t: &Ty) -> bool {
    matches!(t, Ty::Array(e) if scalar_ty(e))
}

/// A plain comment (no specification) as `//` lines at `indent`.
pub fn comment(indent: &str, text: &str) -> String {
    text.lines().map(|l| format!("{indent}// {l}\n")).collect()
}

/// Specification lines as one VerCors annotation at `indent`: `/*@ line @*/` for one
/// line, a `/*@` … `@*/` block for several, nothing for none. VerCors reads these in
/// C, CUDA and OpenCL, so the emitted kernel keeps its proof in a form a verifier
/// can read back; the printer never writes `*/` (operators are spaced), so a line
/// cannot end the comment early.
pub fn annotation(indent: &str, lines: &[String]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!("{indent}/*@ {one} @*/\n"),
        _ => {
            let mut out = format!("{indent}/*@\n");
            for l in lines {
                out += &format!("{indent}    {l}\n");
            }
            out + &format!("{indent}@*/\n")
        }
    }
}

/// Specification lines inside code: an annotation in a kernel or function,
/// but plain comments in host code, which `alpine verify` does not verify from
/// the C file (it leaves host code out; the PVL original is where they were
/// proved), so no annotation is there that nothing checks.
fn spec_annotation(cx: &Ctx, indent: &str, lines: &[String]) -> String {
    if cx.mode != Mode::Host || lines.is_empty() {
        return annotation(indent, lines);
    }
    let mut out = comment(indent, "PVL specification (checked in the PVL original, not in C):");
    for l in lines {
        out += &format!("{indent}//     {l}\n");
    }
    out
}

/// A contract kept as a plain comment (`// requires …;`), not an annotation:
/// for host functions, which `alpine verify` does not verify in C (the
/// verified PVL method is where this contract was proved).
pub fn contract_comment(indent: &str, title: &str, c: &Contract) -> String {
    let lines = clause_lines(c);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = comment(indent, title);
    for l in lines {
        out += &format!("{indent}//     {l}\n");
    }
    out
}

/// The clauses of a contract, one PVL line each (`requires e;`).
pub fn clause_lines(c: &Contract) -> Vec<String> {
    c.clauses.iter().map(crate::printer::print_clause).collect()
}

/// A specification statement (`assert e;`, `assume e;`, …) as its PVL line.
fn spec_line(kind: &SpecStmtKind, e: &Expr) -> String {
    format!("{} {};", kind.keyword(), crate::printer::print_expr(e))
}

/// An expression in C, fully parenthesised. Only `int`/`boolean` valued
/// expressions are accepted.
pub fn expr(cx: &mut Ctx, e: &Expr) -> R<String> {
    let spec = |what: &str| Err(unsupported(e.span, format!("{what} is specification-only and cannot be emitted as code")));
    match &e.kind {
        ExprKind::StringLit(_) => Err(unsupported(e.span, "string literals cannot be emitted")),
        ExprKind::IntLit(v) => {
            if i32::try_from(*v).is_err() {
                return Err(unsupported(e.span, "integer literal does not fit the emitted 32-bit `int`"));
            }
            Ok(v.to_string())
        }
        ExprKind::BoolLit(b) => Ok(if *b { "1" } else { "0" }.into()),
        ExprKind::Var(id) => {
            let t = cx.var(id, e.span)?;
            if !scalar_ty(&t) {
                return Err(unsupported(e.span, format!("`{}` of type `{t}` can only be indexed or asked for its length here", id.name)));
            }
            Ok(c_name(&id.name))
        }
        ExprKind::Field { obj, field } => match &obj.kind {
            ExprKind::Var(id) if &*field.name == "length" && matches!(obj.ty, Ty::Array(_)) => {
                cx.var(id, obj.span)?;
                cx.mark_length(&id.name);
                Ok(length_name(&id.name))
            }
            _ => Err(unsupported(e.span, "field accesses cannot be emitted (only `a.length` of an array variable)")),
        },
        ExprKind::Index { base, index } => {
            let ExprKind::Var(id) = &base.kind else {
                return Err(unsupported(e.span, "only elements of one-dimensional array variables can be emitted"));
            };
            if cx.mode != Mode::Kernel {
                return Err(unsupported(e.span, "array elements can only be accessed inside par blocks (the arrays live on the device)"));
            }
            let t = cx.var(id, base.span)?;
            if !array_elem_ok(&t) {
                return Err(unsupported(base.span, format!("arrays of type `{t}` cannot be emitted (only int[] and boolean[])")));
            }
            let i = expr(cx, index)?;
            Ok(format!("{}[{}]", c_name(&id.name), i))
        }
        ExprKind::Unary { op, operand } => {
            let x = expr(cx, operand)?;
            Ok(match op {
                UnOp::Not => format!("(!{x})"),
                UnOp::Neg => format!("(-{x})"),
            })
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let c_op = match op {
                BinOp::Or => "||",
                BinOp::And => "&&",
                BinOp::Eq => "==",
                BinOp::Ne => "!=",
                BinOp::Lt => "<",
                BinOp::Le => "<=",
                BinOp::Gt => ">",
                BinOp::Ge => ">=",
                BinOp::Add if e.ty == Ty::Int => "+",
                BinOp::Sub if e.ty == Ty::Int => "-",
                BinOp::Mul if e.ty == Ty::Int => "*",
                // Both truncate towards zero in PVL and in C (C99 and later).
                BinOp::Div if e.ty == Ty::Int => "/",
                BinOp::Mod if e.ty == Ty::Int => "%",
                BinOp::Implies => {
                    let (a, b) = (expr(cx, lhs)?, expr(cx, rhs)?);
                    return Ok(format!("(!{a} || {b})"));
                }
                _ => return Err(unsupported(e.span, format!("operator `{}` on `{}` cannot be emitted", op.symbol(), e.ty))),
            };
            if matches!(op, BinOp::Eq | BinOp::Ne) && !(scalar_ty(&lhs.ty) && scalar_ty(&rhs.ty)) {
                return Err(unsupported(e.span, "only int and boolean values can be compared in emitted code"));
            }
            let (a, b) = (expr(cx, lhs)?, expr(cx, rhs)?);
            Ok(format!("({a} {c_op} {b})"))
        }
        ExprKind::Cond { cond, then_expr, else_expr } => {
            let (c, a, b) = (expr(cx, cond)?, expr(cx, then_expr)?, expr(cx, else_expr)?);
            Ok(format!("({c} ? {a} : {b})"))
        }
        ExprKind::Call { receiver, method, args } => {
            let own_class = match receiver.as_deref().map(|r| &r.kind) {
                None | Some(ExprKind::This) => true,
                Some(ExprKind::Var(c)) => c.name == cx.class.name.name,
                _ => false,
            };
            let f = own_class.then(|| pure_function(cx.class, &method.name)).flatten();
            let Some(f) = f else {
                return Err(unsupported(
                    e.span,
                    format!(
                        "only pure int/boolean functions of class `{}` with an expression body can be called in emitted code",
                        cx.class.name
                    ),
                ));
            };
            check_function_signature(f)?;
            let mut parts = Vec::new();
            for a in args {
                parts.push(expr(cx, a)?);
            }
            cx.called.insert(method.name.clone());
            Ok(format!("{}({})", function_name(&cx.class.name.name, &method.name), parts.join(", ")))
        }
        ExprKind::Null => Err(unsupported(e.span, "`null` cannot be emitted")),
        ExprKind::This => Err(unsupported(e.span, "`this` cannot be emitted (objects are not supported)")),
        ExprKind::Result => spec("`\\result`"),
        ExprKind::Read | ExprKind::Write | ExprKind::NoPerm => spec("a permission amount"),
        ExprKind::Quant { .. } => spec("a quantifier"),
        ExprKind::Old(_) | ExprKind::OldAt { .. } => spec("`\\old`"),
        ExprKind::Scale { .. } | ExprKind::ForPerm { .. } | ExprKind::Any => spec("a permission"),
        ExprKind::OptCall { .. } => Err(unsupported(e.span, "`?.` calls cannot be emitted")),
        ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => spec("a permission"),
        ExprKind::Unfolding { .. } => spec("`unfolding`"),
        ExprKind::Trigger(_) => spec("a trigger"),
        ExprKind::Let { .. } => spec("`\\let`"),
        ExprKind::WithThen { .. } => spec("`with`/`then` ghost code"),
        ExprKind::Builtin { .. }
        | ExprKind::Slice { .. }
        | ExprKind::SeqUpdate { .. }
        | ExprKind::Size(_)
        | ExprKind::Collection { .. }
        | ExprKind::MapLit { .. } => Err(unsupported(e.span, "sequences, sets, bags and maps cannot be emitted")),
        ExprKind::New { .. } | ExprKind::NewArray { .. } => {
            Err(unsupported(e.span, "object and array creation cannot be emitted (arrays must be parameters of the host method)"))
        }
    }
}

/// Whether the pure function `f` (and each it calls) can be emitted as a C
/// function that `src/kernels` reads as a pure function: int/boolean
/// parameters, an expression body the target prints, not over data, not
/// recursive (`mod.rs`, `functions`, refuses recursion: deeper than 16 is
/// taken for it).
fn emittable(cx: &Ctx, f: &Method, depth: usize) -> bool {
    let MethodBody::Expr(body) = &f.body else { return false };
    let over_data = cx.data.as_ref().is_some_and(|d| d.functions.contains(&*f.name.name.to_string()));
    if depth > 16 || over_data || check_function_signature(f).is_err() {
        return false;
    }
    let mut fx = Ctx::new(cx.target, Mode::Function, cx.class);
    fx.data = cx.data.clone();
    for p in &f.params {
        fx.locals.insert(p.name.name.clone(), p.ty.to_ty());
    }
    expr(&mut fx, body).is_ok() && fx.called.iter().all(|g| pure_function(cx.class, g).is_some_and(|g| emittable(cx, g, depth + 1)))
}

/// The pure function `name` of `class`, if it has one.
pub fn pure_function<'c>(class: &'c Class, name: &str) -> Option<&'c Method> {
    class.members.iter().find_map(|m| match m {
        Member::Method(m) if &*m.name.name == name && m.is_pure_function() && matches!(m.body, MethodBody::Expr(_)) => Some(m),
        _ => None,
    })
}

fn check_function_signature(f: &Method) -> R<()> {
    if let Some(t) = &f.ret {
        scalar_type(t)?;
    }
    for p in &f.params {
        scalar_type(&p.ty)?;
    }
    if f.contract.clauses.iter().any(|c| matches!(c.kind, ClauseKind::Given(_) | ClauseKind::Yields(_))) {
        return Err(unsupported(f.name.span, "functions with ghost parameters cannot be emitted"));
    }
    Ok(())
}

/// A statement without its `;` for the header of a `for` (declaration,
/// assignment, `x++`).
fn simple(cx: &mut Ctx, s: &Stmt) -> R<String> {
    match &s.kind {
        StmtKind::LocalDecl { ty, name, init } => {
            let t = match &cx.data {
                Some(d) if d.locals.contains(&*name.name.to_string()) => d.type_name.clone(),
                _ => scalar_type(ty)?.to_string(),
            };
            let v = match init {
                Some(e) => expr(cx, e)?,
                None => "0".into(),
            };
            cx.locals.insert(name.name.clone(), ty.to_ty());
            let scope = cx.scopes.last_mut().expect("a scope is open");
            if !scope.insert(name.name.clone()) {
                return Ok(format!("{} = {v}", c_name(&name.name)));
            }
            Ok(format!("{t} {} = {v}", c_name(&name.name)))
        }
        StmtKind::Assign { target, value } => {
            let t = assign_target(cx, target)?;
            let v = expr(cx, value)?;
            Ok(format!("{t} = {v}"))
        }
        StmtKind::IncDec { target, op } => {
            let t = assign_target(cx, &Expr { kind: ExprKind::Var(target.clone()), span: target.span, ty: Ty::Int })?;
            Ok(format!("{t}{}", if *op == IncDec::Inc { "++" } else { "--" }))
        }
        _ => Err(unsupported(s.span, "only declarations, assignments and `x++`/`x--` can be emitted here")),
    }
}

/// The left-hand side of an assignment: a local variable of the code being
/// printed, or (in a kernel) an array element. A kernel cannot assign a host
/// variable: every thread would write its own copy.
fn assign_target(cx: &mut Ctx, target: &Expr) -> R<String> {
    match &target.kind {
        ExprKind::Var(id) => {
            if !cx.locals.contains_key(&id.name) {
                let msg = if cx.mode == Mode::Kernel && cx.host_vars.contains_key(&id.name) {
                    format!("a par block cannot assign the host variable `{}`", id.name)
                } else {
                    format!("`{}` is not a local variable here (fields of `this` cannot be emitted)", id.name)
                };
                return Err(unsupported(target.span, msg));
            }
            if !scalar_ty(&cx.locals[&id.name]) {
                return Err(unsupported(target.span, "only int and boolean variables can be assigned in emitted code"));
            }
            Ok(c_name(&id.name))
        }
        ExprKind::Index { base, .. } => {
            let place = expr(cx, target)?;
            if let ExprKind::Var(array) = &base.kind {
                cx.mark_written(&array.name);
            }
            Ok(place)
        }
        _ => Err(unsupported(target.span, "only variables and array elements can be assigned in emitted code")),
    }
}

/// The callback that prints a `par` statement met in host code (a launch).
pub type ParHook<'h> = &'h mut dyn FnMut(&mut Ctx, &Par, &str) -> R<String>;

/// A statement in C at `indent`, ending with a line end. `on_par` is called for
/// par statements (host mode only).
pub fn stmt(cx: &mut Ctx, s: &Stmt, indent: &str, on_par: &mut Option<ParHook>) -> R<String> {
    let inner = format!("{indent}    ");
    match &s.kind {
        StmtKind::LocalDecl { .. } | StmtKind::Assign { .. } | StmtKind::IncDec { .. } => Ok(format!("{indent}{};\n", simple(cx, s)?)),
        StmtKind::Spec { kind, expr: e } => {
            let mut e = e.clone();
            kernel_spec_expr(cx, &mut e);
            Ok(spec_annotation(cx, indent, &[spec_line(kind, &e)]))
        }
        StmtKind::If { cond, then_branch, else_branch } => {
            let c = expr(cx, cond)?;
            let mut out = format!("{indent}if ({c}) {{\n");
            out += &body(cx, then_branch, &inner, on_par)?;
            if let Some(e) = else_branch {
                out += &format!("{indent}}} else {{\n");
                out += &body(cx, e, &inner, on_par)?;
            }
            out += &format!("{indent}}}\n");
            Ok(out)
        }
        StmtKind::Block(b) => {
            let mut out = format!("{indent}{{\n");
            cx.scopes.push(HashSet::new());
            for s in &b.stmts {
                push_stmt(&mut out, &stmt(cx, s, &inner, on_par)?, &inner);
            }
            cx.scopes.pop();
            out += &format!("{indent}}}\n");
            Ok(out)
        }
        StmtKind::Loop(l) => {
            let contract = kernel_spec(cx, &l.contract);
            let mut out = spec_annotation(cx, indent, &clause_lines(&contract));
            match &l.kind {
                LoopKind::While { cond } => {
                    let c = expr(cx, cond)?;
                    out += &format!("{indent}while ({c}) {{\n");
                    out += &body(cx, &l.body, &inner, on_par)?;
                    out += &format!("{indent}}}\n");
                }
                LoopKind::For { init, cond, update } => {
                    // The header's declarations live in their own C scope.
                    cx.scopes.push(HashSet::new());
                    // Several initialisers: all but the last go before the loop, in
                    // a block that scopes them.
                    let (pre, last) = match init.split_last() {
                        Some((last, pre)) => (pre, Some(last)),
                        None => (&init[..], None),
                    };
                    let ind = if pre.is_empty() { indent.to_string() } else { inner.clone() };
                    if !pre.is_empty() {
                        out += &format!("{indent}{{\n");
                        for s in pre {
                            out += &format!("{ind}{};\n", simple(cx, s)?);
                        }
                    }
                    let i = match last {
                        Some(s) if matches!(s.kind, StmtKind::Expr(_)) => String::new(), // `for (k; ...)`
                        Some(s) => simple(cx, s)?,
                        None => String::new(),
                    };
                    let c = match cond {
                        Some(c) => expr(cx, c)?,
                        None => String::new(),
                    };
                    let mut u = Vec::new();
                    for s in update {
                        u.push(simple(cx, s)?);
                    }
                    out += &format!("{ind}for ({i}; {c}; {}) {{\n", u.join(", "));
                    out += &body(cx, &l.body, &format!("{ind}    "), on_par)?;
                    out += &format!("{ind}}}\n");
                    if !pre.is_empty() {
                        out += &format!("{indent}}}\n");
                    }
                    cx.scopes.pop();
                }
            }
            Ok(out)
        }
        StmtKind::Barrier(b) => barrier(cx, b, indent),
        StmtKind::Vec(v) => Err(unsupported(v.span, "`vec` blocks cannot be emitted")),
        StmtKind::Label(l) => Ok(spec_annotation(cx, indent, &[format!("label {};", l.name)])),
        StmtKind::Package { .. } => Err(unsupported(s.span, "`package` (magic wands) cannot be emitted")),
        StmtKind::Par(p) => match (cx.mode, on_par.as_mut()) {
            (Mode::Host, Some(hook)) => hook(cx, p, indent),
            _ => Err(unsupported(p.span, "nested par blocks cannot be emitted")),
        },
        StmtKind::Return(None) if cx.mode == Mode::Host => {
            Err(unsupported(s.span, "`return` in the middle of a host method cannot be emitted"))
        }
        StmtKind::Return(_) => Err(unsupported(s.span, "`return` cannot be emitted here")),
        StmtKind::Expr(_) => Err(unsupported(s.span, "method calls cannot be emitted")),
        StmtKind::Atomic { body, .. } if cx.mode == Mode::Kernel => super::atomic::atomic(cx, s, body, indent),
        StmtKind::Atomic { .. } => Err(unsupported(s.span, "atomic blocks outside par blocks cannot be emitted")),
        StmtKind::Sync { kind, .. } => {
            Err(unsupported(s.span, format!("`{}` cannot be emitted (no locks or threads on a GPU)", kind.keyword())))
        }
        // On the host, an invariant block only scopes the resource its kernels'
        // atomic blocks share: its body runs as it is.
        StmtKind::InvariantBlock { name, resource, body } if cx.mode == Mode::Host => {
            let mut out = comment(indent, &format!("invariant {}({})", name.name, crate::printer::print_expr(resource)));
            out += &stmt(cx, &Stmt { kind: StmtKind::Block(body.clone()), span: s.span }, indent, on_par)?;
            Ok(out)
        }
        StmtKind::InvariantBlock { .. } => Err(unsupported(s.span, "invariant blocks inside par blocks cannot be emitted")),
    }
}

/// The body of an `if`/loop: a block's statements directly, else the statement.
fn body(cx: &mut Ctx, s: &Stmt, indent: &str, on_par: &mut Option<ParHook>) -> R<String> {
    cx.scopes.push(HashSet::new());
    let r = body_in_scope(cx, s, indent, on_par);
    cx.scopes.pop();
    r
}

fn body_in_scope(cx: &mut Ctx, s: &Stmt, indent: &str, on_par: &mut Option<ParHook>) -> R<String> {
    match &s.kind {
        StmtKind::Block(b) => {
            let mut out = String::new();
            for s in &b.stmts {
                push_stmt(&mut out, &stmt(cx, s, indent, on_par)?, indent);
            }
            Ok(out)
        }
        _ => stmt(cx, s, indent, on_par),
    }
}

/// Appends a printed statement. Two annotations with only whitespace between
/// them are one annotation to a reader (`alpine verify`, VerCors), so an
/// annotation statement (`assert`) right before an annotated one (a barrier's
/// or a loop's contract) gets an empty statement between them.
pub fn push_stmt(out: &mut String, next: &str, indent: &str) {
    let annotated = next.trim_start().starts_with("/*@")
        && next.split_once("@*/\n").is_some_and(|(_, rest)| {
            let rest = rest.trim_start();
            ["for (", "while (", "__syncthreads", "barrier("].iter().any(|k| rest.starts_with(k))
        });
    if out.trim_end().ends_with("@*/") && annotated {
        *out += &format!("{indent}; // (keeps the annotations above and below apart)\n");
    }
    *out += next;
}

/// In a kernel's annotations, `a.length` of a captured array is the kernel's
/// `a_length` parameter — the host array's length, which the code reads too;
/// the device buffer `a` has at least that many elements (`mod.rs`,
/// `kernel_contract`, states it). Elsewhere nothing changes.
pub fn kernel_spec_expr(cx: &mut Ctx, e: &mut Expr) {
    struct Lengths<'c, 'a>(&'c mut Ctx<'a>);
    impl VisitMut for Lengths<'_, '_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let ExprKind::Field { obj, field } = &e.kind {
                if let ExprKind::Var(id) = &obj.kind {
                    let name = id.name.clone();
                    if &*field.name == "length" && matches!(self.0.host_vars.get(&name), Some(Ty::Array(_))) && self.0.capture(&name) {
                        self.0.mark_length(&name);
                        *e = Expr::new(ExprKind::Var(Ident::new(length_name(&name), e.span)), e.span);
                        return;
                    }
                }
            }
            crate::ast::visit::walk_expr_mut(self, e);
        }
    }
    if cx.mode == Mode::Kernel {
        Lengths(cx).visit_expr_mut(e);
    }
    spec_calls(cx, e);
}

/// In an annotation, a call of a pure function of the class that the target
/// can emit names its C function (`Class_f`), which is emitted marked
/// `/*@ pure @*/` (`mod.rs`, `functions`), so that a verifier reading the
/// C file (`alpine verify`, VerCors) finds the function the annotation means.
/// Other calls stay as they are (and fail there, never silently).
pub fn spec_calls(cx: &mut Ctx, e: &mut Expr) {
    struct Calls<'c, 'a>(&'c mut Ctx<'a>);
    impl VisitMut for Calls<'_, '_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            crate::ast::visit::walk_expr_mut(self, e);
            let class = self.0.class;
            let ExprKind::Call { receiver, method, .. } = &mut e.kind else { return };
            let own_class = match receiver.as_deref().map(|r| &r.kind) {
                None | Some(ExprKind::This) => true,
                Some(ExprKind::Var(c)) => c.name == class.name.name,
                _ => false,
            };
            let Some(f) = own_class.then(|| pure_function(class, &method.name)).flatten() else { return };
            if !emittable(self.0, f, 0) {
                return;
            }
            self.0.called.insert(method.name.clone());
            *method = Ident::new(function_name(&class.name.name, &method.name), method.span);
            *receiver = None;
        }
    }
    Calls(cx).visit_expr_mut(e);
}

/// [`kernel_spec_expr`] on every clause of a contract.
pub fn kernel_spec(cx: &mut Ctx, c: &Contract) -> Contract {
    map_clauses(c, |e| kernel_spec_expr(cx, e))
}

/// `c` with `f` applied to the expression of each clause an annotation prints.
fn map_clauses(c: &Contract, mut f: impl FnMut(&mut Expr)) -> Contract {
    let mut c = c.clone();
    for cl in &mut c.clauses {
        match &mut cl.kind {
            ClauseKind::Requires(e)
            | ClauseKind::Ensures(e)
            | ClauseKind::Context(e)
            | ClauseKind::ContextEverywhere(e)
            | ClauseKind::LoopInvariant(e) => f(e),
            _ => {}
        }
    }
    c
}

/// A barrier of the enclosing par unit: its contract as an annotation, then the
/// target's block-wide barrier. The kernel is launched as one block (see
/// `mod.rs`), so a block barrier synchronises all threads of the par block.
fn barrier(cx: &mut Ctx, b: &Barrier, indent: &str) -> R<String> {
    if cx.mode != Mode::Kernel {
        return Err(unsupported(b.span, "a barrier outside a par block cannot be emitted"));
    }
    if cx.label.as_ref() != Some(&b.label.name) {
        return Err(unsupported(b.label.span, "the barrier does not name the par block it is in"));
    }
    // In the thread's id, not the iterator (a local of the kernel): the
    // barrier's redistribution is checked over all threads of the block.
    let mut contract = kernel_spec(cx, &b.contract);
    cx.barrier_ids.contract_mut(&mut contract);
    let mut lines = clause_lines(&contract);
    if let Some(body) = &b.body {
        for s in &body.stmts {
            match &s.kind {
                StmtKind::Spec { kind, expr: e } => {
                    let mut e = e.clone();
                    kernel_spec_expr(cx, &mut e);
                    lines.push(spec_line(kind, &e))
                }
                _ => return Err(unsupported(s.span, "statements in a barrier's body cannot be emitted")),
            }
        }
    }
    let mut out = annotation(indent, &lines);
    cx.has_barrier = true;
    out += &format!("{indent}{}\n", cx.target.barrier());
    Ok(out)
}
