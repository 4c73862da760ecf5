//! `xs.size` of a sequence, set, bag or map is VerCors 2's spelling of `|xs|`
//! (`Spec.builtinField`); the type checker accepts it (an `int`, no heap
//! location). Before lowering, every such field becomes `|xs|`, so the rest of
//! the verifier (encoding, uniformity, the heap analysis of pure functions)
//! never sees a field read that is not one.

use crate::ast::visit::{walk_expr, walk_expr_mut, VisitMut, Visitor};
use crate::ast::{self, Expr, ExprKind};
use crate::resolve::is_size_field;

/// A copy of `program` with `xs.size` written `|xs|`, or `None` when it has none.
pub(super) fn normalise(program: &ast::Program) -> Option<ast::Program> {
    struct Find(bool);
    impl Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Field { obj, field } if &*field.name == "size" && is_size_field(obj, field) => self.0 = true,
                _ => walk_expr(self, e),
            }
        }
    }
    struct Rewrite;
    impl VisitMut for Rewrite {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            walk_expr_mut(self, e);
            if let ExprKind::Field { obj, field } = &mut e.kind {
                if &*field.name == "size" && is_size_field(obj, field) {
                    let obj = std::mem::replace(&mut **obj, Expr { kind: ExprKind::Null, span: e.span, ty: ast::Ty::Unknown });
                    e.kind = ExprKind::Size(Box::new(obj));
                }
            }
        }
    }
    let mut find = Find(false);
    find.visit_program(program);
    if !find.0 {
        return None;
    }
    let mut p = program.clone();
    Rewrite.visit_program_mut(&mut p);
    Some(p)
}
