//! The program's declaration tables: classes, their fields and their methods.
//!
//! [`build_env`] collects every class, field, method, function, predicate and
//! constructor with their semantic types and declaration spans, before any body is
//! checked, so that members may be used before (textually) they are declared. Later
//! stages (the verifier, the transformations) reuse these tables.

use std::collections::BTreeMap;

use crate::ast::{AdtMember, ClauseKind, Member, Method, MethodBody, ModelMember, Name, Program, Span, Ty};
use crate::diagnostics::{codes, Diagnostic};

/// Every class of a program, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramEnv {
    pub classes: BTreeMap<Name, ClassInfo>,
    /// Every `enum`, by name.
    pub enums: BTreeMap<Name, EnumInfo>,
}

/// `enum E { A, B }`: its constants in order, each with the span of its name.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumInfo {
    pub name: Name,
    pub name_span: Span,
    pub constants: Vec<(Name, Span)>,
    /// Declared in another file (see [`ProgramEnv::import`]).
    pub imported: bool,
}

impl EnumInfo {
    pub fn has_constant(&self, name: &str) -> bool {
        self.constants.iter().any(|(c, _)| &**c == name)
    }
}

/// One class: its fields, its methods (functions, predicates) and its constructors.
///
/// Fields and methods live in separate namespaces (a class may have a field `sum`
/// and a method `sum`), so they are kept in separate tables.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassInfo {
    pub name: Name,
    /// The span of the class's name in its declaration.
    pub name_span: Span,
    /// The index of the class in [`Program::classes`].
    pub index: usize,
    pub fields: BTreeMap<Name, FieldInfo>,
    /// Methods, pure functions and predicates (not constructors), by name, each
    /// name with its overloads in source order. PVL v1 resolves overloads by
    /// parameter types (the corpus declares `last(seq<int>)`, `last(seq<seq<int>>)`
    /// and `last(seq<boolean>)` in one class); two declarations with the same
    /// parameter types are a `DUPLICATE` and only the first is kept.
    pub methods: BTreeMap<Name, Vec<MethodSig>>,
    /// The declared constructors in source order; empty means the implicit
    /// no-argument constructor.
    pub constructors: Vec<MethodSig>,
    /// Whether the class comes from another file (see
    /// [`super::check_program_with`]); its spans point into that file.
    pub imported: bool,
}

impl ClassInfo {
    pub fn field(&self, name: &str) -> Option<&FieldInfo> {
        self.fields.get(name)
    }
    /// The first (usually the only) declaration of the method `name`.
    pub fn method(&self, name: &str) -> Option<&MethodSig> {
        self.methods.get(name).and_then(|v| v.first())
    }
    /// Every overload of the method `name` (empty if there is none).
    pub fn overloads(&self, name: &str) -> &[MethodSig] {
        self.methods.get(name).map_or(&[], |v| v.as_slice())
    }
    /// Whether the class has a method, function or predicate called `name`.
    pub fn has_method(&self, name: &str) -> bool {
        self.methods.contains_key(name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldInfo {
    pub name: Name,
    pub ty: Ty,
    /// The span of the field's name in its declaration.
    pub span: Span,
    /// The index of the field in its class's `members`.
    pub member_index: usize,
}

/// What kind of callable a [`MethodSig`] describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodKind {
    /// An ordinary method (a block body, or an abstract lemma with `;`).
    Method,
    /// A pure function: `pure`, or an `= expr;` body with a non-resource type.
    PureFunction,
    /// A `resource` method: a predicate.
    Predicate,
    Constructor,
}

/// A typed name in a signature (parameter, `given`, `yields`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSig {
    pub name: Name,
    pub ty: Ty,
    /// The span of the name in the declaration.
    pub span: Span,
}

/// The signature of a method, function, predicate or constructor.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodSig {
    pub name: Name,
    /// The class that declares it.
    pub class: Name,
    pub kind: MethodKind,
    pub params: Vec<ParamSig>,
    /// `given` ghost inputs (not part of the argument list; bound in `with` blocks).
    pub given: Vec<ParamSig>,
    /// `yields` ghost outputs (read in `then` blocks).
    pub yields: Vec<ParamSig>,
    /// The return type (`Ty::Void` for void methods and constructors,
    /// `Ty::Resource` for predicates).
    pub ret: Ty,
    pub is_static: bool,
    pub is_inline: bool,
    /// Whether the method has a body (`{ … }` or `= e;`); lemmas with `;` have none.
    pub has_body: bool,
    /// The span of the method's name.
    pub name_span: Span,
    /// The span of the whole declaration.
    pub span: Span,
    /// The index of the method in its class's `members`.
    pub member_index: usize,
}

impl MethodSig {
    /// Builds the signature of one method declared in `class`.
    pub fn of(method: &Method, class: &Name, member_index: usize) -> MethodSig {
        let kind = if method.is_constructor() {
            MethodKind::Constructor
        } else if method.is_predicate() {
            MethodKind::Predicate
        } else if method.is_pure_function() {
            MethodKind::PureFunction
        } else {
            MethodKind::Method
        };
        let sig = |p: &crate::ast::Param| ParamSig { name: p.name.name.clone(), ty: p.ty.to_ty(), span: p.name.span };
        let mut given = Vec::new();
        let mut yields = Vec::new();
        for c in &method.contract.clauses {
            match &c.kind {
                ClauseKind::Given(p) => given.push(sig(p)),
                ClauseKind::Yields(p) => yields.push(sig(p)),
                _ => {}
            }
        }
        MethodSig {
            name: method.name.name.clone(),
            class: class.clone(),
            kind,
            params: method.params.iter().map(sig).collect(),
            given,
            yields,
            ret: method.ret.as_ref().map_or(Ty::Void, |t| t.to_ty()),
            is_static: method.modifiers.is_static,
            is_inline: method.modifiers.is_inline,
            has_body: !matches!(method.body, MethodBody::Abstract),
            name_span: method.name.span,
            span: method.span,
            member_index,
        }
    }
    pub fn is_predicate(&self) -> bool {
        self.kind == MethodKind::Predicate
    }
    pub fn is_constructor(&self) -> bool {
        self.kind == MethodKind::Constructor
    }
    /// `given` and `yields` parameters together, in that order.
    pub fn ghost_params(&self) -> impl Iterator<Item = &ParamSig> {
        self.given.iter().chain(self.yields.iter())
    }
}

impl ProgramEnv {
    pub fn class(&self, name: &str) -> Option<&ClassInfo> {
        self.classes.get(name)
    }
    /// The field `field` of class `class`, if both exist.
    pub fn field(&self, class: &str, field: &str) -> Option<&FieldInfo> {
        self.class(class)?.field(field)
    }
    /// The method (function, predicate) `method` of class `class`, if both exist
    /// (the first overload).
    pub fn method(&self, class: &str, method: &str) -> Option<&MethodSig> {
        self.class(class)?.method(method)
    }
    /// Every overload of `method` in `class`.
    pub fn overloads(&self, class: &str, method: &str) -> &[MethodSig] {
        self.class(class).map_or(&[], |c| c.overloads(method))
    }
    /// Adds the classes and enums of `other` that this environment does not
    /// declare, marked as imported.
    pub fn import(&mut self, other: &ProgramEnv) {
        for (name, info) in &other.enums {
            if !self.enums.contains_key(name) && !self.classes.contains_key(name) {
                self.enums.insert(name.clone(), EnumInfo { imported: true, ..info.clone() });
            }
        }
        for (name, info) in &other.classes {
            if let (true, Some(own)) = (crate::ast::is_global_class(name), self.classes.get_mut(name)) {
                // One namespace of top-level declarations: add what this file lacks.
                for (method, overloads) in &info.methods {
                    own.methods.entry(method.clone()).or_insert_with(|| overloads.clone());
                }
                continue;
            }
            if !self.classes.contains_key(name) {
                let mut info = info.clone();
                info.imported = true;
                self.classes.insert(name.clone(), info);
            }
        }
    }
}

/// Whether two signatures have the same parameter types (so overloading cannot
/// tell them apart).
fn same_params(a: &MethodSig, b: &MethodSig) -> bool {
    a.params.len() == b.params.len() && a.params.iter().zip(&b.params).all(|(x, y)| x.ty == y.ty)
}

/// Collects the declaration tables of `program`.
///
/// Reports `DUPLICATE` for two classes, two fields of one class, two methods of one
/// class with the same name, and two parameters (including `given`/`yields`) of one
/// method with the same name; each with a related "first declared here" label.
/// Types mentioned in signatures are *not* checked here (the checker does that
/// once, when it visits the declaration).
pub fn build_env(program: &Program) -> (ProgramEnv, Vec<Diagnostic>) {
    let mut env = ProgramEnv::default();
    let mut diags = Vec::new();
    for (ci, class) in program.classes.iter().enumerate() {
        let cname = class.name.name.clone();
        // Every run of top-level declarations adds to one namespace.
        let earlier_globals = if class.is_global() { env.classes.remove(&cname) } else { None };
        if let Some(first) = env.classes.get(&cname) {
            diags.push(duplicate("class", &cname, class.name.span, first.name_span));
            continue;
        }
        let mut info = earlier_globals.unwrap_or_else(|| ClassInfo {
            name: cname.clone(),
            name_span: class.name.span,
            index: ci,
            fields: BTreeMap::new(),
            methods: BTreeMap::new(),
            constructors: Vec::new(),
            imported: false,
        });
        for (mi, member) in class.members.iter().enumerate() {
            match member {
                Member::Enum(e) => {
                    let name = e.name.name.clone();
                    let first = env.enums.get(&name).map(|i| i.name_span).or_else(|| env.classes.get(&name).map(|c| c.name_span));
                    if let Some(first) = first {
                        diags.push(duplicate("type", &name, e.name.span, first));
                        continue;
                    }
                    let mut constants: Vec<(Name, Span)> = Vec::new();
                    for c in &e.constants {
                        if let Some((_, first)) = constants.iter().find(|(n, _)| *n == c.name) {
                            diags.push(duplicate("enum constant", &c.name, c.span, *first));
                            continue;
                        }
                        constants.push((c.name.clone(), c.span));
                    }
                    env.enums.insert(name.clone(), EnumInfo { name, name_span: e.name.span, constants, imported: false });
                }
                // ADTs and models are types of their own: their functions (static,
                // pure, abstract) and fields are looked up like a class's.
                Member::Adt(a) => {
                    let mut adt = type_info(&a.name.name, a.name.span, ci);
                    for m in &a.members {
                        if let AdtMember::Function(f) = m {
                            let sig = MethodSig::of(f, &a.name.name, mi);
                            adt.methods.entry(sig.name.clone()).or_default().push(sig);
                        }
                    }
                    add_type(&mut env, adt, &mut diags);
                }
                Member::Model(md) => {
                    let mut model = type_info(&md.name.name, md.name.span, ci);
                    for m in &md.members {
                        if let ModelMember::Field(f) = m {
                            let info = FieldInfo { name: f.name.name.clone(), ty: f.ty.to_ty(), span: f.name.span, member_index: mi };
                            model.fields.entry(f.name.name.clone()).or_insert(info);
                        }
                    }
                    add_type(&mut env, model, &mut diags);
                }
                Member::Axiom(_) => {}
                Member::Field(f) => {
                    if let Some(first) = info.fields.get(&f.name.name) {
                        diags.push(duplicate("field", &f.name.name, f.name.span, first.span));
                        continue;
                    }
                    info.fields.insert(
                        f.name.name.clone(),
                        FieldInfo { name: f.name.name.clone(), ty: f.ty.to_ty(), span: f.name.span, member_index: mi },
                    );
                }
                Member::Method(m) => {
                    check_duplicate_params(m, &mut diags);
                    let sig = MethodSig::of(m, &cname, mi);
                    if sig.is_constructor() {
                        if let Some(first) = info.constructors.iter().find(|c| same_params(c, &sig)) {
                            diags.push(
                                duplicate("constructor", &sig.name, sig.name_span, first.name_span)
                                    .with_help("constructors of one class must differ in their parameter types"),
                            );
                            continue;
                        }
                        info.constructors.push(sig);
                    } else {
                        let overloads = info.methods.entry(sig.name.clone()).or_default();
                        if let Some(first) = overloads.iter().find(|o| same_params(o, &sig)) {
                            diags.push(
                                duplicate("method", &sig.name, sig.name_span, first.name_span)
                                    .with_help("overloads must differ in their parameter types"),
                            );
                            continue;
                        }
                        overloads.push(sig);
                    }
                }
            }
        }
        if let Some(e) = env.enums.get(&cname) {
            diags.push(duplicate("type", &cname, class.name.span, e.name_span));
        }
        env.classes.insert(cname, info);
    }
    (env, diags)
}

/// The table of an ADT or a model (declared in the top-level class `ci`).
fn type_info(name: &Name, span: Span, ci: usize) -> ClassInfo {
    ClassInfo {
        name: name.clone(),
        name_span: span,
        index: ci,
        fields: BTreeMap::new(),
        methods: BTreeMap::new(),
        constructors: Vec::new(),
        imported: false,
    }
}

fn add_type(env: &mut ProgramEnv, info: ClassInfo, diags: &mut Vec<Diagnostic>) {
    let first = env.classes.get(&info.name).map(|c| c.name_span).or_else(|| env.enums.get(&info.name).map(|e| e.name_span));
    if let Some(first) = first {
        diags.push(duplicate("type", &info.name, info.name_span, first));
        return;
    }
    env.classes.insert(info.name.clone(), info);
}

fn check_duplicate_params(m: &Method, diags: &mut Vec<Diagnostic>) {
    let mut seen: Vec<(&Name, Span)> = Vec::new();
    let ghosts = m.contract.clauses.iter().filter_map(|c| match &c.kind {
        ClauseKind::Given(p) | ClauseKind::Yields(p) => Some(p),
        _ => None,
    });
    // In source order (ghost clauses come before the parameter list), so that the
    // later declaration is the one reported.
    let mut all: Vec<&crate::ast::Param> = m.params.iter().chain(ghosts).collect();
    all.sort_by_key(|p| p.name.span.start);
    for p in all {
        if let Some((_, first)) = seen.iter().find(|(n, _)| **n == p.name.name) {
            diags.push(duplicate("parameter", &p.name.name, p.name.span, *first));
        } else {
            seen.push((&p.name.name, p.name.span));
        }
    }
}

/// A `DUPLICATE` diagnostic: `what` `name` declared again at `span`, first at `first`.
pub(crate) fn duplicate(what: &str, name: &str, span: Span, first: Span) -> Diagnostic {
    Diagnostic::error(codes::DUPLICATE, format!("the {what} `{name}` is declared twice"), span)
        .with_label(format!("`{name}` redeclared here"))
        .with_related(first, "first declared here")
}
