//! The pest parsers generated from `grammar/pvl.pest` (with `grammar/lexical.pest`).
//!
//! Two parsers share the grammar and differ only in their token file (see the head
//! of each): [`fast`] makes punctuation and keywords silent and matches them cheaply;
//! it parses every file. [`diag`] names every token; a file that [`fast`] rejects is
//! parsed again with it, only to explain the error (src/syntax/errors.rs). Both
//! accept the same language, so the second parse fails too. Each derive generates its
//! own `Rule` enum, hence one module each.

pub mod fast {
    use pest_derive::Parser;

    #[derive(Parser)]
    #[grammar = "../grammar/lexical.pest"]
    #[grammar = "../grammar/tokens_fast.pest"]
    #[grammar = "../grammar/pvl.pest"]
    pub struct PvlParser;
}

pub mod diag {
    use pest_derive::Parser;

    #[derive(Parser)]
    #[grammar = "../grammar/lexical.pest"]
    #[grammar = "../grammar/tokens.pest"]
    #[grammar = "../grammar/pvl.pest"]
    pub struct PvlParser;
}
