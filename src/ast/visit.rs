//! Walking the tree: [`Visitor`] reads, [`VisitMut`] rewrites in place.
//!
//! Each trait method has a default that walks the children through the matching
//! `walk_*` function; override the ones you care about and call `walk_*` to keep
//! descending. Children are visited in source order.

use super::*;

pub trait Visitor {
    fn visit_program(&mut self, p: &Program) {
        walk_program(self, p)
    }
    fn visit_class(&mut self, c: &Class) {
        walk_class(self, c)
    }
    fn visit_member(&mut self, m: &Member) {
        walk_member(self, m)
    }
    fn visit_method(&mut self, m: &Method) {
        walk_method(self, m)
    }
    fn visit_directive(&mut self, d: &Directive) {
        walk_directive(self, d)
    }
    fn visit_clause(&mut self, c: &Clause) {
        walk_clause(self, c)
    }
    fn visit_param(&mut self, p: &Param) {
        self.visit_type(&p.ty)
    }
    fn visit_type(&mut self, _t: &Type) {}
    fn visit_block(&mut self, b: &Block) {
        walk_block(self, b)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }
    fn visit_ident(&mut self, _i: &Ident) {}
}

pub fn walk_program<V: Visitor + ?Sized>(v: &mut V, p: &Program) {
    for c in &p.classes {
        v.visit_class(c);
    }
}

pub fn walk_class<V: Visitor + ?Sized>(v: &mut V, c: &Class) {
    walk_contract(v, &c.contract);
    v.visit_ident(&c.name);
    for m in &c.members {
        v.visit_member(m);
    }
}

pub fn walk_member<V: Visitor + ?Sized>(v: &mut V, m: &Member) {
    match m {
        Member::Field(f) => {
            v.visit_type(&f.ty);
            v.visit_ident(&f.name);
        }
        Member::Method(m) => v.visit_method(m),
        Member::Enum(e) => {
            v.visit_ident(&e.name);
            for c in &e.constants {
                v.visit_ident(c);
            }
        }
        Member::Adt(a) => {
            v.visit_ident(&a.name);
            for t in &a.type_vars {
                v.visit_ident(t);
            }
            for m in &a.members {
                match m {
                    AdtMember::Function(f) => v.visit_method(f),
                    AdtMember::Axiom(e, _) => v.visit_expr(e),
                }
            }
        }
        Member::Model(md) => {
            v.visit_ident(&md.name);
            for m in &md.members {
                match m {
                    ModelMember::Field(f) => {
                        v.visit_type(&f.ty);
                        v.visit_ident(&f.name);
                    }
                    ModelMember::Process(m) | ModelMember::Action(m) => v.visit_method(m),
                }
            }
        }
        Member::Axiom(a) => {
            v.visit_ident(&a.name);
            v.visit_expr(&a.expr);
        }
    }
}

pub fn walk_method<V: Visitor + ?Sized>(v: &mut V, m: &Method) {
    for d in &m.directives {
        v.visit_directive(d);
    }
    walk_contract(v, &m.contract);
    if let Some(t) = &m.ret {
        v.visit_type(t);
    }
    v.visit_ident(&m.name);
    for p in &m.params {
        v.visit_param(p);
    }
    match &m.body {
        MethodBody::Block(b) => v.visit_block(b),
        MethodBody::Expr(e) => v.visit_expr(e),
        MethodBody::Abstract => {}
    }
}

pub fn walk_contract<V: Visitor + ?Sized>(v: &mut V, c: &Contract) {
    for cl in &c.clauses {
        v.visit_clause(cl);
    }
}

pub fn walk_directive<V: Visitor + ?Sized>(v: &mut V, d: &Directive) {
    match &d.kind {
        DirectiveKind::LoopUnroll { var, .. } | DirectiveKind::IterMerge { var, .. } => v.visit_ident(var),
        DirectiveKind::MatrixLin { matrix, rows, cols, .. } => {
            v.visit_ident(matrix);
            v.visit_expr(rows);
            v.visit_expr(cols);
        }
        DirectiveKind::GlobToReg { array, locations } => {
            v.visit_expr(array);
            for l in locations {
                v.visit_expr(l);
            }
        }
        DirectiveKind::Tile { .. } | DirectiveKind::Fuse { .. } => {}
    }
}

pub fn walk_clause<V: Visitor + ?Sized>(v: &mut V, c: &Clause) {
    match &c.kind {
        ClauseKind::Requires(e)
        | ClauseKind::Ensures(e)
        | ClauseKind::Context(e)
        | ClauseKind::ContextEverywhere(e)
        | ClauseKind::LoopInvariant(e)
        | ClauseKind::KernelInvariant(e) => v.visit_expr(e),
        ClauseKind::Given(p) | ClauseKind::Yields(p) => v.visit_param(p),
        ClauseKind::Signals(p, e) => {
            v.visit_param(p);
            v.visit_expr(e);
        }
        ClauseKind::Modifies(es) | ClauseKind::Accessible(es) | ClauseKind::Decreases(Decreases::Measure(es)) => {
            for e in es {
                v.visit_expr(e);
            }
        }
        ClauseKind::LockInvariant(e) => v.visit_expr(e),
        ClauseKind::Decreases(_) => {}
    }
}

pub fn walk_block<V: Visitor + ?Sized>(v: &mut V, b: &Block) {
    for s in &b.stmts {
        v.visit_stmt(s);
    }
}

pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match &s.kind {
        StmtKind::LocalDecl { ty, name, init } => {
            v.visit_type(ty);
            v.visit_ident(name);
            if let Some(e) = init {
                v.visit_expr(e);
            }
        }
        StmtKind::Assign { target, value } => {
            v.visit_expr(target);
            v.visit_expr(value);
        }
        StmtKind::IncDec { target, .. } => v.visit_ident(target),
        StmtKind::Expr(e) => v.visit_expr(e),
        StmtKind::If { cond, then_branch, else_branch } => {
            v.visit_expr(cond);
            v.visit_stmt(then_branch);
            if let Some(e) = else_branch {
                v.visit_stmt(e);
            }
        }
        StmtKind::Loop(l) => {
            for d in &l.directives {
                v.visit_directive(d);
            }
            match &l.kind {
                LoopKind::While { cond } => {
                    walk_contract(v, &l.contract);
                    v.visit_expr(cond);
                }
                LoopKind::For { init, cond, update } => {
                    // The init comes first so that a declared loop variable is in
                    // scope for the invariants written before the `for`.
                    for s in init {
                        v.visit_stmt(s);
                    }
                    walk_contract(v, &l.contract);
                    if let Some(c) = cond {
                        v.visit_expr(c);
                    }
                    for s in update {
                        v.visit_stmt(s);
                    }
                }
            }
            v.visit_stmt(&l.body);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                v.visit_expr(e);
            }
        }
        StmtKind::Spec { expr, .. } => v.visit_expr(expr),
        StmtKind::Sync { obj, .. } => v.visit_expr(obj),
        StmtKind::Atomic { invariants, body } => {
            for i in invariants {
                v.visit_ident(i);
            }
            v.visit_stmt(body);
        }
        StmtKind::InvariantBlock { name, resource, body } => {
            v.visit_ident(name);
            v.visit_expr(resource);
            v.visit_block(body);
        }
        StmtKind::Barrier(b) => {
            v.visit_ident(&b.label);
            for i in &b.invariants {
                v.visit_ident(i);
            }
            walk_contract(v, &b.contract);
            if let Some(body) = &b.body {
                v.visit_block(body);
            }
        }
        StmtKind::Par(p) => {
            for d in &p.directives {
                v.visit_directive(d);
            }
            walk_contract(v, &p.contract);
            for u in &p.units {
                if let Some(n) = &u.name {
                    v.visit_ident(n);
                }
                for it in &u.iters {
                    v.visit_param(&it.var);
                    v.visit_expr(&it.lo);
                    v.visit_expr(&it.hi);
                }
                walk_contract(v, &u.contract);
                v.visit_block(&u.body);
            }
        }
        StmtKind::Vec(vb) => {
            v.visit_param(&vb.iter.var);
            v.visit_expr(&vb.iter.lo);
            v.visit_expr(&vb.iter.hi);
            v.visit_block(&vb.body);
        }
        StmtKind::Package { wand, proof } => {
            v.visit_expr(wand);
            v.visit_stmt(proof);
        }
        StmtKind::Block(b) => v.visit_block(b),
        StmtKind::Label(l) => v.visit_ident(l),
    }
}

pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    match &e.kind {
        ExprKind::IntLit(_)
        | ExprKind::StringLit(_)
        | ExprKind::BoolLit(_)
        | ExprKind::Null
        | ExprKind::This
        | ExprKind::Result
        | ExprKind::Read
        | ExprKind::Write
        | ExprKind::NoPerm
        | ExprKind::Any => {}
        ExprKind::Var(i) => v.visit_ident(i),
        ExprKind::OldAt { label, expr } => {
            v.visit_ident(label);
            v.visit_expr(expr);
        }
        ExprKind::Scale { amount, expr } => {
            v.visit_expr(amount);
            v.visit_expr(expr);
        }
        ExprKind::OptCall { receiver, method, args } => {
            v.visit_expr(receiver);
            v.visit_ident(method);
            for a in args {
                v.visit_expr(a);
            }
        }
        ExprKind::ForPerm { binders, loc, body } => {
            for b in binders {
                v.visit_param(b);
            }
            v.visit_expr(loc);
            v.visit_expr(body);
        }
        ExprKind::Field { obj, field } => {
            v.visit_expr(obj);
            v.visit_ident(field);
        }
        ExprKind::Call { receiver, method, args } => {
            if let Some(r) = receiver {
                v.visit_expr(r);
            }
            v.visit_ident(method);
            for a in args {
                v.visit_expr(a);
            }
        }
        ExprKind::Builtin { args, .. } => {
            for a in args {
                v.visit_expr(a);
            }
        }
        ExprKind::Index { base, index } => {
            v.visit_expr(base);
            v.visit_expr(index);
        }
        ExprKind::Slice { base, lo, hi } => {
            v.visit_expr(base);
            if let Some(l) = lo {
                v.visit_expr(l);
            }
            if let Some(h) = hi {
                v.visit_expr(h);
            }
        }
        ExprKind::SeqUpdate { base, index, value } => {
            v.visit_expr(base);
            v.visit_expr(index);
            v.visit_expr(value);
        }
        ExprKind::New { class, args } => {
            v.visit_ident(class);
            for a in args {
                v.visit_expr(a);
            }
        }
        ExprKind::NewArray { elem, dims } => {
            v.visit_type(elem);
            for d in dims {
                v.visit_expr(d);
            }
        }
        ExprKind::Unary { operand, .. } => v.visit_expr(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            v.visit_expr(lhs);
            v.visit_expr(rhs);
        }
        ExprKind::Cond { cond, then_expr, else_expr } => {
            v.visit_expr(cond);
            v.visit_expr(then_expr);
            v.visit_expr(else_expr);
        }
        ExprKind::Quant { binder, guard, body, .. } => {
            v.visit_param(binder);
            v.visit_expr(guard);
            v.visit_expr(body);
        }
        ExprKind::Let { binder, value, body } => {
            v.visit_param(binder);
            v.visit_expr(value);
            v.visit_expr(body);
        }
        ExprKind::Old(x) | ExprKind::Value(x) | ExprKind::Size(x) | ExprKind::Trigger(x) => v.visit_expr(x),
        ExprKind::Perm { loc, amount } => {
            v.visit_expr(loc);
            v.visit_expr(amount);
        }
        ExprKind::PointsTo { loc, amount, value } => {
            v.visit_expr(loc);
            v.visit_expr(amount);
            v.visit_expr(value);
        }
        ExprKind::Collection { elem, elems, .. } => {
            if let Some(elem) = elem {
                v.visit_type(elem);
            }
            for x in elems {
                v.visit_expr(x);
            }
        }
        ExprKind::MapLit { key, value, entries, .. } => {
            v.visit_type(key);
            v.visit_type(value);
            for (k, x) in entries {
                v.visit_expr(k);
                v.visit_expr(x);
            }
        }
        ExprKind::Unfolding { pred, body } => {
            v.visit_expr(pred);
            v.visit_expr(body);
        }
        ExprKind::WithThen { expr, with, then } => {
            if let Some(b) = with {
                v.visit_block(b);
            }
            v.visit_expr(expr);
            if let Some(b) = then {
                v.visit_block(b);
            }
        }
    }
}

/// The rewriting visitor. Same shape as [`Visitor`], over `&mut` nodes; a method
/// may replace the node it is given wholesale (`*e = ...`) before or after walking.
pub trait VisitMut {
    fn visit_program_mut(&mut self, p: &mut Program) {
        walk_program_mut(self, p)
    }
    fn visit_class_mut(&mut self, c: &mut Class) {
        walk_class_mut(self, c)
    }
    fn visit_method_mut(&mut self, m: &mut Method) {
        walk_method_mut(self, m)
    }
    fn visit_field_mut(&mut self, f: &mut Field) {
        walk_field_mut(self, f)
    }
    fn visit_directive_mut(&mut self, d: &mut Directive) {
        walk_directive_mut(self, d)
    }
    fn visit_contract_mut(&mut self, c: &mut Contract) {
        walk_contract_mut(self, c)
    }
    fn visit_clause_mut(&mut self, c: &mut Clause) {
        walk_clause_mut(self, c)
    }
    fn visit_param_mut(&mut self, p: &mut Param) {
        walk_param_mut(self, p)
    }
    fn visit_type_mut(&mut self, t: &mut Type) {
        walk_type_mut(self, t)
    }
    fn visit_block_mut(&mut self, b: &mut Block) {
        walk_block_mut(self, b)
    }
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        walk_stmt_mut(self, s)
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e)
    }
    fn visit_ident_mut(&mut self, _i: &mut Ident) {}
    fn visit_num_mut(&mut self, _n: &mut Num) {}
    /// Called for every span-carrying node after its children, so that a pass can
    /// rewrite positions (see [`strip_spans`]).
    fn visit_span_mut(&mut self, _s: &mut Span) {}
}

pub fn walk_program_mut<V: VisitMut + ?Sized>(v: &mut V, p: &mut Program) {
    for c in &mut p.classes {
        v.visit_class_mut(c);
    }
    for c in &mut p.comments {
        v.visit_span_mut(&mut c.span);
    }
    v.visit_span_mut(&mut p.span);
}

pub fn walk_class_mut<V: VisitMut + ?Sized>(v: &mut V, c: &mut Class) {
    v.visit_contract_mut(&mut c.contract);
    v.visit_ident_mut(&mut c.name);
    for m in &mut c.members {
        match m {
            Member::Field(f) => v.visit_field_mut(f),
            Member::Method(m) => v.visit_method_mut(m),
            Member::Enum(e) => {
                v.visit_ident_mut(&mut e.name);
                for c in &mut e.constants {
                    v.visit_ident_mut(c);
                }
                v.visit_span_mut(&mut e.span);
            }
            Member::Adt(a) => {
                v.visit_ident_mut(&mut a.name);
                for t in &mut a.type_vars {
                    v.visit_ident_mut(t);
                }
                for m in &mut a.members {
                    match m {
                        AdtMember::Function(f) => v.visit_method_mut(f),
                        AdtMember::Axiom(e, span) => {
                            v.visit_expr_mut(e);
                            v.visit_span_mut(span);
                        }
                    }
                }
                v.visit_span_mut(&mut a.span);
            }
            Member::Model(md) => {
                v.visit_ident_mut(&mut md.name);
                for m in &mut md.members {
                    match m {
                        ModelMember::Field(f) => v.visit_field_mut(f),
                        ModelMember::Process(m) | ModelMember::Action(m) => v.visit_method_mut(m),
                    }
                }
                v.visit_span_mut(&mut md.span);
            }
            Member::Axiom(a) => {
                v.visit_ident_mut(&mut a.name);
                v.visit_expr_mut(&mut a.expr);
                v.visit_span_mut(&mut a.span);
            }
        }
    }
    v.visit_span_mut(&mut c.span);
}

pub fn walk_field_mut<V: VisitMut + ?Sized>(v: &mut V, f: &mut Field) {
    v.visit_type_mut(&mut f.ty);
    v.visit_ident_mut(&mut f.name);
    v.visit_span_mut(&mut f.span);
}

pub fn walk_method_mut<V: VisitMut + ?Sized>(v: &mut V, m: &mut Method) {
    for d in &mut m.directives {
        v.visit_directive_mut(d);
    }
    v.visit_contract_mut(&mut m.contract);
    if let Some(t) = &mut m.ret {
        v.visit_type_mut(t);
    }
    v.visit_ident_mut(&mut m.name);
    for p in &mut m.params {
        v.visit_param_mut(p);
    }
    match &mut m.body {
        MethodBody::Block(b) => v.visit_block_mut(b),
        MethodBody::Expr(e) => v.visit_expr_mut(e),
        MethodBody::Abstract => {}
    }
    v.visit_span_mut(&mut m.span);
}

pub fn walk_directive_mut<V: VisitMut + ?Sized>(v: &mut V, d: &mut Directive) {
    match &mut d.kind {
        DirectiveKind::LoopUnroll { var, factor } | DirectiveKind::IterMerge { var, factor } => {
            v.visit_ident_mut(var);
            v.visit_num_mut(factor);
        }
        DirectiveKind::MatrixLin { matrix, rows, cols, .. } => {
            v.visit_ident_mut(matrix);
            v.visit_expr_mut(rows);
            v.visit_expr_mut(cols);
        }
        DirectiveKind::GlobToReg { array, locations } => {
            v.visit_expr_mut(array);
            for l in locations {
                v.visit_expr_mut(l);
            }
        }
        DirectiveKind::Tile { size, .. } => v.visit_num_mut(size),
        DirectiveKind::Fuse { count, block_size } => {
            v.visit_num_mut(count);
            v.visit_num_mut(block_size);
        }
    }
    v.visit_span_mut(&mut d.span);
}

pub fn walk_contract_mut<V: VisitMut + ?Sized>(v: &mut V, c: &mut Contract) {
    for cl in &mut c.clauses {
        v.visit_clause_mut(cl);
    }
}

pub fn walk_clause_mut<V: VisitMut + ?Sized>(v: &mut V, c: &mut Clause) {
    match &mut c.kind {
        ClauseKind::Requires(e)
        | ClauseKind::Ensures(e)
        | ClauseKind::Context(e)
        | ClauseKind::ContextEverywhere(e)
        | ClauseKind::LoopInvariant(e)
        | ClauseKind::KernelInvariant(e) => v.visit_expr_mut(e),
        ClauseKind::Given(p) | ClauseKind::Yields(p) => v.visit_param_mut(p),
        ClauseKind::Signals(p, e) => {
            v.visit_param_mut(p);
            v.visit_expr_mut(e);
        }
        ClauseKind::Modifies(es) | ClauseKind::Accessible(es) | ClauseKind::Decreases(Decreases::Measure(es)) => {
            for e in es {
                v.visit_expr_mut(e);
            }
        }
        ClauseKind::LockInvariant(e) => v.visit_expr_mut(e),
        ClauseKind::Decreases(_) => {}
    }
    v.visit_span_mut(&mut c.span);
}

pub fn walk_param_mut<V: VisitMut + ?Sized>(v: &mut V, p: &mut Param) {
    v.visit_type_mut(&mut p.ty);
    v.visit_ident_mut(&mut p.name);
    v.visit_span_mut(&mut p.span);
}

pub fn walk_type_mut<V: VisitMut + ?Sized>(v: &mut V, t: &mut Type) {
    match &mut t.kind {
        TypeKind::Seq(x) | TypeKind::Set(x) | TypeKind::Bag(x) | TypeKind::Option(x) => v.visit_type_mut(x),
        TypeKind::Array(x, size) => {
            v.visit_type_mut(x);
            if let Some(n) = size {
                v.visit_expr_mut(n);
            }
        }
        TypeKind::Map(a, b) | TypeKind::Tuple(a, b) => {
            v.visit_type_mut(a);
            v.visit_type_mut(b);
        }
        TypeKind::Class(c) | TypeKind::Enum(c) => v.visit_ident_mut(c),
        _ => {}
    }
    v.visit_span_mut(&mut t.span);
}

pub fn walk_block_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    for s in &mut b.stmts {
        v.visit_stmt_mut(s);
    }
    v.visit_span_mut(&mut b.span);
}

pub fn walk_stmt_mut<V: VisitMut + ?Sized>(v: &mut V, s: &mut Stmt) {
    match &mut s.kind {
        StmtKind::LocalDecl { ty, name, init } => {
            v.visit_type_mut(ty);
            v.visit_ident_mut(name);
            if let Some(e) = init {
                v.visit_expr_mut(e);
            }
        }
        StmtKind::Assign { target, value } => {
            v.visit_expr_mut(target);
            v.visit_expr_mut(value);
        }
        StmtKind::IncDec { target, .. } => v.visit_ident_mut(target),
        StmtKind::Expr(e) => v.visit_expr_mut(e),
        StmtKind::If { cond, then_branch, else_branch } => {
            v.visit_expr_mut(cond);
            v.visit_stmt_mut(then_branch);
            if let Some(e) = else_branch {
                v.visit_stmt_mut(e);
            }
        }
        StmtKind::Loop(l) => {
            for d in &mut l.directives {
                v.visit_directive_mut(d);
            }
            match &mut l.kind {
                LoopKind::While { cond } => {
                    v.visit_contract_mut(&mut l.contract);
                    v.visit_expr_mut(cond);
                }
                LoopKind::For { init, cond, update } => {
                    for s in init {
                        v.visit_stmt_mut(s);
                    }
                    v.visit_contract_mut(&mut l.contract);
                    if let Some(c) = cond {
                        v.visit_expr_mut(c);
                    }
                    for s in update {
                        v.visit_stmt_mut(s);
                    }
                }
            }
            v.visit_stmt_mut(&mut l.body);
            v.visit_span_mut(&mut l.span);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                v.visit_expr_mut(e);
            }
        }
        StmtKind::Spec { expr, .. } => v.visit_expr_mut(expr),
        StmtKind::Sync { obj, .. } => v.visit_expr_mut(obj),
        StmtKind::Atomic { invariants, body } => {
            for i in invariants {
                v.visit_ident_mut(i);
            }
            v.visit_stmt_mut(body);
        }
        StmtKind::InvariantBlock { name, resource, body } => {
            v.visit_ident_mut(name);
            v.visit_expr_mut(resource);
            v.visit_block_mut(body);
        }
        StmtKind::Barrier(b) => {
            v.visit_ident_mut(&mut b.label);
            for i in &mut b.invariants {
                v.visit_ident_mut(i);
            }
            v.visit_contract_mut(&mut b.contract);
            if let Some(body) = &mut b.body {
                v.visit_block_mut(body);
            }
            v.visit_span_mut(&mut b.span);
        }
        StmtKind::Par(p) => {
            for d in &mut p.directives {
                v.visit_directive_mut(d);
            }
            v.visit_contract_mut(&mut p.contract);
            for u in &mut p.units {
                if let Some(n) = &mut u.name {
                    v.visit_ident_mut(n);
                }
                for it in &mut u.iters {
                    v.visit_param_mut(&mut it.var);
                    v.visit_expr_mut(&mut it.lo);
                    v.visit_expr_mut(&mut it.hi);
                    v.visit_span_mut(&mut it.span);
                }
                v.visit_contract_mut(&mut u.contract);
                v.visit_block_mut(&mut u.body);
                v.visit_span_mut(&mut u.span);
            }
            v.visit_span_mut(&mut p.span);
        }
        StmtKind::Vec(vb) => {
            v.visit_param_mut(&mut vb.iter.var);
            v.visit_expr_mut(&mut vb.iter.lo);
            v.visit_expr_mut(&mut vb.iter.hi);
            v.visit_span_mut(&mut vb.iter.span);
            v.visit_block_mut(&mut vb.body);
            v.visit_span_mut(&mut vb.span);
        }
        StmtKind::Package { wand, proof } => {
            v.visit_expr_mut(wand);
            v.visit_stmt_mut(proof);
        }
        StmtKind::Block(b) => v.visit_block_mut(b),
        StmtKind::Label(l) => v.visit_ident_mut(l),
    }
    v.visit_span_mut(&mut s.span);
}

pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    match &mut e.kind {
        ExprKind::IntLit(_)
        | ExprKind::StringLit(_)
        | ExprKind::BoolLit(_)
        | ExprKind::Null
        | ExprKind::This
        | ExprKind::Result
        | ExprKind::Read
        | ExprKind::Write
        | ExprKind::NoPerm
        | ExprKind::Any => {}
        ExprKind::Var(i) => v.visit_ident_mut(i),
        ExprKind::OldAt { label, expr } => {
            v.visit_ident_mut(label);
            v.visit_expr_mut(expr);
        }
        ExprKind::Scale { amount, expr } => {
            v.visit_expr_mut(amount);
            v.visit_expr_mut(expr);
        }
        ExprKind::OptCall { receiver, method, args } => {
            v.visit_expr_mut(receiver);
            v.visit_ident_mut(method);
            for a in args {
                v.visit_expr_mut(a);
            }
        }
        ExprKind::ForPerm { binders, loc, body } => {
            for b in binders {
                v.visit_param_mut(b);
            }
            v.visit_expr_mut(loc);
            v.visit_expr_mut(body);
        }
        ExprKind::Field { obj, field } => {
            v.visit_expr_mut(obj);
            v.visit_ident_mut(field);
        }
        ExprKind::Call { receiver, method, args } => {
            if let Some(r) = receiver {
                v.visit_expr_mut(r);
            }
            v.visit_ident_mut(method);
            for a in args {
                v.visit_expr_mut(a);
            }
        }
        ExprKind::Builtin { args, .. } => {
            for a in args {
                v.visit_expr_mut(a);
            }
        }
        ExprKind::Index { base, index } => {
            v.visit_expr_mut(base);
            v.visit_expr_mut(index);
        }
        ExprKind::Slice { base, lo, hi } => {
            v.visit_expr_mut(base);
            if let Some(l) = lo {
                v.visit_expr_mut(l);
            }
            if let Some(h) = hi {
                v.visit_expr_mut(h);
            }
        }
        ExprKind::SeqUpdate { base, index, value } => {
            v.visit_expr_mut(base);
            v.visit_expr_mut(index);
            v.visit_expr_mut(value);
        }
        ExprKind::New { class, args } => {
            v.visit_ident_mut(class);
            for a in args {
                v.visit_expr_mut(a);
            }
        }
        ExprKind::NewArray { elem, dims } => {
            v.visit_type_mut(elem);
            for d in dims {
                v.visit_expr_mut(d);
            }
        }
        ExprKind::Unary { operand, .. } => v.visit_expr_mut(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            v.visit_expr_mut(lhs);
            v.visit_expr_mut(rhs);
        }
        ExprKind::Cond { cond, then_expr, else_expr } => {
            v.visit_expr_mut(cond);
            v.visit_expr_mut(then_expr);
            v.visit_expr_mut(else_expr);
        }
        ExprKind::Quant { binder, guard, body, .. } => {
            v.visit_param_mut(binder);
            v.visit_expr_mut(guard);
            v.visit_expr_mut(body);
        }
        ExprKind::Let { binder, value, body } => {
            v.visit_param_mut(binder);
            v.visit_expr_mut(value);
            v.visit_expr_mut(body);
        }
        ExprKind::Old(x) | ExprKind::Value(x) | ExprKind::Size(x) | ExprKind::Trigger(x) => v.visit_expr_mut(x),
        ExprKind::Perm { loc, amount } => {
            v.visit_expr_mut(loc);
            v.visit_expr_mut(amount);
        }
        ExprKind::PointsTo { loc, amount, value } => {
            v.visit_expr_mut(loc);
            v.visit_expr_mut(amount);
            v.visit_expr_mut(value);
        }
        ExprKind::Collection { elem, elems, .. } => {
            if let Some(elem) = elem {
                v.visit_type_mut(elem);
            }
            for x in elems {
                v.visit_expr_mut(x);
            }
        }
        ExprKind::MapLit { key, value, entries, .. } => {
            v.visit_type_mut(key);
            v.visit_type_mut(value);
            for (k, x) in entries {
                v.visit_expr_mut(k);
                v.visit_expr_mut(x);
            }
        }
        ExprKind::Unfolding { pred, body } => {
            v.visit_expr_mut(pred);
            v.visit_expr_mut(body);
        }
        ExprKind::WithThen { expr, with, then } => {
            if let Some(b) = with {
                v.visit_block_mut(b);
            }
            v.visit_expr_mut(expr);
            if let Some(b) = then {
                v.visit_block_mut(b);
            }
        }
    }
    v.visit_span_mut(&mut e.span);
}

/// Resets every span (and every computed type) in `p`, so that two trees parsed
/// from differently laid-out sources compare equal exactly when they have the same
/// structure. Comments and blank lines are dropped too: they are layout, not
/// structure.
pub fn strip_spans(p: &mut Program) {
    struct Strip;
    impl VisitMut for Strip {
        fn visit_span_mut(&mut self, s: &mut Span) {
            *s = Span::DUMMY;
        }
        fn visit_ident_mut(&mut self, i: &mut Ident) {
            i.span = Span::DUMMY;
        }
        fn visit_num_mut(&mut self, n: &mut Num) {
            n.span = Span::DUMMY;
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            e.ty = Ty::Unknown;
            walk_expr_mut(self, e);
        }
    }
    p.comments.clear();
    p.blank_lines.clear();
    Strip.visit_program_mut(p);
}

/// Moves every span of `p` by `delta` bytes: for a file whose text is placed at
/// offset `delta` of a larger text (the verifier sees a file and its companions as
/// one text, see `crate::workspace`). Dummy spans stay dummy. Types are kept.
pub fn shift_spans(p: &mut Program, delta: u32) {
    struct Shift(u32);
    impl Shift {
        fn shift(&self, s: &mut Span) {
            if !s.is_dummy() {
                s.start += self.0;
                s.end += self.0;
            }
        }
    }
    impl VisitMut for Shift {
        fn visit_span_mut(&mut self, s: &mut Span) {
            self.shift(s);
        }
        fn visit_ident_mut(&mut self, i: &mut Ident) {
            self.shift(&mut i.span);
        }
        fn visit_num_mut(&mut self, n: &mut Num) {
            self.shift(&mut n.span);
        }
    }
    Shift(delta).visit_program_mut(p);
    for b in &mut p.blank_lines {
        *b += delta;
    }
    for end in p.comments.iter_mut().filter_map(|c| c.line_code_end.as_mut()) {
        *end += delta;
    }
}

/// Whether `e` holds a resource rather than being a plain boolean: a permission
/// (`Perm`, `PointsTo`, `Value`, `HPerm`, `APerm`), `\forall*`, `\matrix`, a
/// magic wand, or an instance of a predicate (`is_predicate` says which called
/// names are predicates). `\array(a, n)` is a boolean (`a != null && a.length == n`).
pub fn holds_resource(e: &Expr, is_predicate: &dyn Fn(&str) -> bool) -> bool {
    struct Finder<'a> {
        is_predicate: &'a dyn Fn(&str) -> bool,
        found: bool,
    }
    impl Visitor for Finder<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            self.found |= match &e.kind {
                ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => true,
                ExprKind::Quant { kind: QuantKind::ForallStar, .. } => true,
                ExprKind::Builtin { func: Builtin::HPerm | Builtin::APerm | Builtin::Matrix, .. } => true,
                ExprKind::Binary { op: BinOp::Wand, .. } => true,
                ExprKind::Call { method, .. } => (self.is_predicate)(method.as_str()),
                _ => false,
            };
            if !self.found {
                walk_expr(self, e);
            }
        }
    }
    let mut f = Finder { is_predicate, found: false };
    f.visit_expr(e);
    f.found
}
