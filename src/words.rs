//! Membership tests for fixed word lists (keywords, reserved words).
//!
//! The PVL keywords live here, once: the builder asks "is this a keyword?" for every
//! identifier it builds (a keyword cannot be a name) and the printer for every name it
//! prints (a keyword must be escaped). A `matches!` or a
//! linear `contains` over ~150 strings cost ~1000 instructions per question (about 5%
//! of the front-end benchmark); this open-addressing table answers with one hash and
//! usually one comparison.

use std::sync::OnceLock;

/// Words that are keywords of PVL (VerCors 1 lexer, reference §1.4) and so cannot
/// be written as plain identifiers. `C` and `R` are re-admitted as identifiers;
/// backslash words can never collide with an identifier.
const KEYWORDS: &[&str] = &[
    // structure / statements
    "class",
    // VerCors 2 declarations
    "enum",
    "constructor",
    "final",
    "adt",
    "model",
    "decreases",
    "package",
    "kernel",
    "barrier",
    "invariant",
    "if",
    "else",
    "while",
    "for",
    "goto",
    "return",
    "vec",
    "par",
    // VerCors 2 par regions
    "parallel",
    "sequential",
    "and",
    "lock",
    "unlock",
    "wait",
    "notify",
    "fork",
    "join",
    "new",
    "static",
    "global",
    "local",
    "unfolding",
    "in",
    "id",
    "thread_local",
    "inline",
    "pure",
    "assert",
    "label",
    "action",
    "atomic",
    "ghost",
    // values
    "this",
    "null",
    "true",
    "false",
    "current_thread",
    "read",
    "write",
    "none",
    "None",
    "empty",
    // types
    "int",
    "boolean",
    "void",
    "resource",
    "seq",
    "set",
    "bag",
    "map",
    "tuple",
    "option",
    "string",
    "process",
    "frac",
    "zfrac",
    "rational",
    "bool",
    "loc",
    "pointer",
    // contracts
    "requires",
    "ensures",
    "context",
    "context_everywhere",
    "loop_invariant",
    "given",
    "yields",
    "kernel_invariant",
    "signals",
    "modifies",
    "accessible",
    "with",
    "then",
    // proof statements
    "fold",
    "unfold",
    "assume",
    "inhale",
    "exhale",
    "open",
    "close",
    "create",
    "qed",
    "apply",
    "use",
    "destroy",
    "split",
    "merge",
    "choose",
    "refute",
    "witness",
    "send",
    "to",
    "recv",
    "from",
    "transfer",
    "csl_subject",
    "spec_ignore",
    "axiom",
    // built-in functions
    "Perm",
    "Value",
    "PointsTo",
    "HPerm",
    "APerm",
    "ArrayPerm",
    "perm",
    "head",
    "tail",
    "isEmpty",
    "held",
    "idle",
    "running",
    "Some",
    "Hist",
    "Future",
    "AbstractState",
    "AddsTo",
    "Contribution",
    "Reducible",
    "buildMap",
    "cardMap",
    "disjointMap",
    "equalsMap",
    "getFromMap",
    "itemsMap",
    "keysMap",
    "removeFromMap",
    "valuesMap",
    "getFst",
    "getSnd",
    "getOption",
    "getOrElseOption",
    "remove",
    "removeAt",
    // Alpinist
    "gpuopt",
    "loop_unroll",
    "iter_merge",
    "matrix_lin",
    "glob_to_reg",
    "tile",
    "fuse",
    "inter",
    "intra",
];

static KEYWORD_SET: LazyWordSet = LazyWordSet::new(KEYWORDS);

/// Whether `name` is a PVL keyword: it cannot be a name, and must be escaped
/// (`` `name` ``) to be printed as an identifier.
pub fn is_keyword(name: &str) -> bool {
    KEYWORD_SET.contains(name)
}

/// A set of words, built once from a static list.
pub(crate) struct WordSet {
    /// Power-of-two table; `""` marks an empty slot (no word is empty).
    slots: Box<[&'static str]>,
    longest: usize,
}

impl WordSet {
    pub(crate) fn new(words: &[&'static str]) -> WordSet {
        // At most a quarter full, so that a miss usually ends at the first slot.
        let n = (words.len() * 4).next_power_of_two().max(8);
        let mut slots = vec![""; n].into_boxed_slice();
        for &w in words {
            assert!(!w.is_empty(), "WordSet words are non-empty");
            let mut i = hash(w) & (n - 1);
            while !slots[i].is_empty() && slots[i] != w {
                i = (i + 1) & (n - 1);
            }
            slots[i] = w;
        }
        WordSet { slots, longest: words.iter().map(|w| w.len()).max().unwrap_or(0) }
    }

    pub(crate) fn contains(&self, w: &str) -> bool {
        if w.is_empty() || w.len() > self.longest {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash(w) & mask;
        loop {
            let s = self.slots[i];
            if s.is_empty() {
                return false;
            }
            if s == w {
                return true;
            }
            i = (i + 1) & mask;
        }
    }
}

/// FNV-1a: words are short, so a byte loop is cheaper than a general hasher.
fn hash(w: &str) -> usize {
    let mut h: u32 = 0x811c_9dc5;
    for &b in w.as_bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h as usize
}

/// A lazily built [`WordSet`] for a `static` word list.
pub(crate) struct LazyWordSet {
    words: &'static [&'static str],
    set: OnceLock<WordSet>,
}

impl LazyWordSet {
    pub(crate) const fn new(words: &'static [&'static str]) -> LazyWordSet {
        LazyWordSet { words, set: OnceLock::new() }
    }

    pub(crate) fn contains(&self, w: &str) -> bool {
        self.set.get_or_init(|| WordSet::new(self.words)).contains(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_non_members() {
        let words = ["class", "if", "in", "int", "loop_invariant", "C"];
        let s = WordSet::new(&words);
        for w in words {
            assert!(s.contains(w), "{w}");
        }
        for w in ["", "i", "cl", "classes", "Class", "loop_invariants", "R", "x"] {
            assert!(!s.contains(w), "{w}");
        }
    }
}
