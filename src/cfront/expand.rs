//! The fallback for functions with an operator inside a function-like macro.
//!
//! libclang 14 gives no operator kinds, and its "spelling" of a token from a
//! macro body is the macro's use, so `tokens.rs` cannot read such an operator.
//! clang's declaration printer can: it prints the user's declarations with
//! every macro expanded. That text is parsed again (same headers, same flags)
//! and the refused functions are lowered from it. Their nodes cannot point
//! into the printed text, which the user never saw, so every node of such a
//! function carries the function's own span: located, but coarsely. When the
//! printed text does not parse (the printer does not round-trip every
//! declaration), the original refusal stands.

use super::ir::Language;
use super::lower::{self, Lowerer, Lowering};
use super::session::SourceMap;
use clang::{EntityKind, TranslationUnit};

/// Whether some refusal of `lowering` may be lifted by [`relower`].
pub fn wanted(lowering: &Lowering) -> bool {
    lowering.errors.iter().any(|(f, u)| f.is_some() && u.macro_operator)
}

/// The user's declarations printed by clang, macros expanded.
pub fn printed_text<'tu>(tu: &'tu TranslationUnit<'tu>, map: &SourceMap<'tu>) -> String {
    let mut out = String::new();
    for e in lower::user_declarations(tu, map) {
        out += &kernel_keyword_first(e.get_pretty_printer().print());
        let is_definition = e.get_kind() == EntityKind::FunctionDecl && e.is_definition();
        out += if is_definition { "\n" } else { ";\n" };
    }
    out
}

/// clang 14 prints OpenCL's `__kernel` (or `kernel`, as written) after the
/// declarator (`void k() __kernel { … }`), where clang does not accept it; it
/// goes first.
fn kernel_keyword_first(printed: String) -> String {
    let head_end = printed.find('{').unwrap_or(printed.len());
    for keyword in [" __kernel ", " kernel "] {
        if let Some(at) = printed[..head_end].rfind(keyword) {
            let keyword = keyword.trim_end();
            return format!("{} {}{}", keyword.trim_start(), &printed[..at], &printed[at + keyword.len()..]);
        }
    }
    printed
}

/// Lowers, from the printed translation unit `tu`, the functions `lowering`
/// refused for an operator inside a macro; each one lowered replaces its
/// refusal.
pub fn relower<'tu>(tu: &'tu TranslationUnit<'tu>, map: &'tu SourceMap<'tu>, lang: Language, lowering: &mut Lowering) {
    let printed = lower::user_declarations(tu, map);
    let mut kept = Vec::new();
    for (function, refusal) in std::mem::take(&mut lowering.errors) {
        let retry = function.as_ref().filter(|_| refusal.macro_operator).and_then(|(name, span)| {
            let e = printed
                .iter()
                .find(|e| e.get_kind() == EntityKind::FunctionDecl && e.is_definition() && e.get_name().as_deref() == Some(name))?;
            let mut l = Lowerer::new(lang, map, Some(*span));
            let f = l.lower_function(*e, *span).ok()?;
            Some((f, l.structs))
        });
        match retry {
            Some((f, structs)) => {
                let module = &mut lowering.module;
                module.functions.retain(|g| g.name != f.name);
                module.functions.push(f);
                for s in structs {
                    if !module.structs.iter().any(|t| t.name == s.name) {
                        module.structs.push(s);
                    }
                }
            }
            None => kept.push((function, refusal)),
        }
    }
    lowering.errors = kept;
}

#[cfg(test)]
mod tests {
    use super::kernel_keyword_first;

    #[test]
    fn the_kernel_keyword_moves_in_front() {
        assert_eq!(kernel_keyword_first("void k(int x) __kernel {\n}".into()), "__kernel void k(int x) {\n}");
        assert_eq!(kernel_keyword_first("void k() kernel {\n}".into()), "kernel void k() {\n}");
        assert_eq!(kernel_keyword_first("int f(int kernel) {\n}".into()), "int f(int kernel) {\n}");
    }
}
