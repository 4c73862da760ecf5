//! clang types → kernel IR types.
//!
//! Typedefs and elaborated names are looked through (the IR keeps canonical
//! types); widths come from clang's target (CUDA: nvptx64; OpenCL: the host, 64-bit
//! `size_t`), so `long` is whatever the device says it is. Structs are recorded
//! in the module the first time a type names them.

use super::ir::{AddressSpace, Language, StructDef, Type};
use super::lower::{Lowerer, Unsupported};
use crate::ast::Span;
use clang::TypeKind;

/// clang's `LangAS` numbering (clang 14, `clang/Basic/AddressSpaces.h`), as
/// `clang_getAddressSpace` returns it.
fn address_space(lang: Language, number: usize) -> AddressSpace {
    match number {
        1 | 6 | 7 | 8 => AddressSpace::Global,
        2 | 10 => AddressSpace::Shared,
        3 | 9 => AddressSpace::Constant,
        4 => AddressSpace::Private,
        5 => AddressSpace::Generic,
        // Unqualified: private in OpenCL C 1.2; in CUDA a pointer may point
        // anywhere (kernel parameters are made Global by the caller).
        _ if lang == Language::OpenCl => AddressSpace::Private,
        _ => AddressSpace::Generic,
    }
}

impl<'tu> Lowerer<'tu> {
    /// The address space a value of type `ty` lives in (OpenCL qualifiers).
    pub fn space_of(&self, ty: &clang::Type<'tu>) -> AddressSpace {
        address_space(self.lang, ty.get_address_space())
    }

    pub fn lower_type(&mut self, ty: clang::Type<'tu>, span: Span) -> Result<Type, Unsupported> {
        let canonical = ty.get_canonical_type();
        let int = |signed: bool| -> Result<Type, Unsupported> {
            let bytes = canonical.get_sizeof().map_err(|_| Unsupported::new(format!("the type `{}`", ty.get_display_name()), span))?;
            Ok(Type::Int { bits: (bytes * 8) as u16, signed })
        };
        Ok(match canonical.get_kind() {
            TypeKind::Void => Type::Void,
            TypeKind::Bool => Type::Bool,
            TypeKind::CharS
            | TypeKind::SChar
            | TypeKind::Short
            | TypeKind::Int
            | TypeKind::Long
            | TypeKind::LongLong
            | TypeKind::Int128 => int(true)?,
            TypeKind::CharU
            | TypeKind::UChar
            | TypeKind::UShort
            | TypeKind::UInt
            | TypeKind::ULong
            | TypeKind::ULongLong
            | TypeKind::UInt128
            | TypeKind::WChar
            | TypeKind::Char16
            | TypeKind::Char32 => int(false)?,
            TypeKind::Enum => int(true)?,
            TypeKind::Half | TypeKind::Float16 => Type::Float { bits: 16 },
            TypeKind::Float => Type::Float { bits: 32 },
            TypeKind::Double => Type::Float { bits: 64 },
            TypeKind::Pointer => {
                let pointee = canonical.get_pointee_type().ok_or_else(|| Unsupported::new("a pointer without pointee type", span))?;
                let space = self.space_of(&pointee);
                Type::Pointer { pointee: Box::new(self.lower_type(pointee, span)?), space }
            }
            TypeKind::ConstantArray | TypeKind::IncompleteArray => {
                let elem = canonical.get_element_type().ok_or_else(|| Unsupported::new("an array without element type", span))?;
                Type::Array { elem: Box::new(self.lower_type(elem, span)?), len: canonical.get_size().map(|n| n as u64) }
            }
            // libclang 14 reports OpenCL's `ext_vector_type` vectors as unexposed,
            // but gives their element type and length.
            TypeKind::Vector | TypeKind::ExtVector | TypeKind::Unexposed
                if canonical.get_element_type().is_some() && canonical.get_size().is_some() =>
            {
                let elem = canonical.get_element_type().expect("checked by the guard");
                Type::Vector { elem: Box::new(self.lower_type(elem, span)?), lanes: canonical.get_size().unwrap_or(0) as u32 }
            }
            TypeKind::Record => Type::Struct(self.lower_struct(ty, canonical, span)?),
            TypeKind::FunctionPrototype | TypeKind::FunctionNoPrototype => Type::Function,
            k if self.lang == Language::OpenCl && format!("{k:?}").starts_with("OCL") => {
                let name = canonical.get_display_name();
                let name = name.rsplit(' ').next().unwrap_or(&name).to_string();
                Type::Opaque(name)
            }
            k => return Err(Unsupported::new(format!("the type `{}` ({k:?})", ty.get_display_name()), span)),
        })
    }

    /// Records a struct or union (once) and returns its name: its tag, or the
    /// typedef that names an anonymous one.
    fn lower_struct(&mut self, written: clang::Type<'tu>, canonical: clang::Type<'tu>, span: Span) -> Result<String, Unsupported> {
        let decl = canonical.get_declaration().ok_or_else(|| Unsupported::new("a struct without declaration", span))?;
        let tag = decl.get_name().filter(|n| !n.is_empty());
        let name = match tag {
            Some(n) => n,
            None => {
                let shown = written.get_display_name();
                let shown = shown.trim_start_matches("const ").trim_start_matches("struct ").trim_start_matches("union ").to_string();
                if shown.contains('(') {
                    format!("anonymous@{}", span.start)
                } else {
                    shown
                }
            }
        };
        if self.structs.iter().any(|s| s.name == name) || self.structs_in_progress.contains(&name) {
            return Ok(name);
        }
        self.structs_in_progress.push(name.clone());
        let mut fields = Vec::new();
        for f in canonical.get_fields().unwrap_or_default() {
            let fty = f.get_type().ok_or_else(|| Unsupported::new("a field without type", span))?;
            fields.push((f.get_name().unwrap_or_default(), self.lower_type(fty, span)?));
        }
        self.structs_in_progress.retain(|n| n != &name);
        let is_union = decl.get_kind() == clang::EntityKind::UnionDecl;
        let def_span = self.map.span(&decl).unwrap_or(span);
        self.structs.push(StructDef { name: name.clone(), is_union, fields, span: def_span });
        Ok(name)
    }
}
