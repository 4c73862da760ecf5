//! Reading an operator's spelling from the source text.
//!
//! libclang before version 17 does not say which operator a binary, compound
//! assignment or unary operator node is, so the operator is read from the text
//! where clang says its operands are: right before the right operand's first
//! token (at its spelling location, else where it was expanded: `x * WIDTH`),
//! or, for a prefix operator, at the node's own first token; a postfix
//! `++`/`--` ends the node. Only punctuators are read here (maximal munch over
//! C's operator list). libclang 14 gives a token of a macro body the location
//! of the macro's use, so an operator inside a macro cannot be read here: the
//! caller refuses a node that starts where its right operand starts (both
//! inside one macro use) and an answer that is not an operator of the expected
//! kind, and `expand.rs` reads such functions from clang's printing.

use clang::source::{File, SourceLocation};
use std::collections::HashMap;

/// C's operator punctuators, longest first (maximal munch).
const OPERATORS: &[&str] = &[
    "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->", "+",
    "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~", "=", ",", "?", ":",
];

/// The texts of the files operators are read from, each read once.
#[derive(Default)]
pub struct SourceTexts<'tu> {
    /// By path: libclang's `File`s of unsaved files all compare equal.
    texts: HashMap<std::path::PathBuf, Option<String>>,
    files: std::marker::PhantomData<File<'tu>>,
}

impl<'tu> SourceTexts<'tu> {
    fn text(&mut self, file: File<'tu>) -> Option<&str> {
        self.texts.entry(file.get_path()).or_insert_with(|| file.get_contents()).as_deref()
    }

    /// The operators that may end right before `loc` (whitespace skipped): the
    /// one in front of its spelling, then the one in front of its expansion (an
    /// operand that is an object-like macro, `x * WIDTH`, is spelled in the
    /// `#define` but follows the operator where it is used).
    pub fn operators_before(&mut self, loc: SourceLocation<'tu>) -> Vec<&'static str> {
        let spelling = loc.get_spelling_location();
        let expansion = loc.get_expansion_location();
        let mut out: Vec<&'static str> = self.operator_before(spelling).into_iter().collect();
        if expansion != spelling {
            out.extend(self.operator_before(expansion));
        }
        out
    }

    fn operator_before(&mut self, l: clang::source::Location<'tu>) -> Option<&'static str> {
        let text = self.text(l.file?)?;
        let bytes = text.as_bytes();
        let mut end = (l.offset as usize).min(bytes.len());
        while end > 0 && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let before = &text[..end];
        // The run of operator characters ending here, split as C's lexer splits
        // it (`a+++b` is `a++ + b`); the last token is the operator.
        let run_start = before.rfind(|c: char| !"<>=!&|+-*/%^~?:,".contains(c)).map_or(0, |i| i + 1);
        let mut rest = &before[run_start..];
        let mut last = None;
        while !rest.is_empty() {
            let op = OPERATORS.iter().copied().find(|op| rest.starts_with(op))?;
            last = Some(op);
            rest = &rest[op.len()..];
        }
        last
    }

    /// The operator that starts at `loc`.
    pub fn operator_at(&mut self, loc: SourceLocation<'tu>) -> Option<&'static str> {
        let l = loc.get_spelling_location();
        let text = self.text(l.file?)?;
        let rest = text.get(l.offset as usize..)?;
        OPERATORS.iter().copied().find(|op| rest.starts_with(op))
    }

    /// The identifier that ends right before `loc` and the character before it
    /// (`v.xy` ending at `loc` gives `('.', "xy")`).
    pub fn member_before(&mut self, loc: SourceLocation<'tu>) -> Option<(char, String)> {
        let l = loc.get_spelling_location();
        let text = self.text(l.file?)?;
        let before = text.get(..l.offset as usize)?;
        let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let ident = &before[start..];
        let dot = before[..start].trim_end().chars().next_back()?;
        (!ident.is_empty()).then(|| (dot, ident.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn operator_table_is_longest_first_for_shared_prefixes() {
        let ops = super::OPERATORS;
        for (i, a) in ops.iter().enumerate() {
            for b in &ops[i + 1..] {
                assert!(!(b.starts_with(a) && b.len() > a.len()), "{b} must come before {a}");
            }
        }
    }
}
