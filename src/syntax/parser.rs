//! The pest parser generated from `grammar/pvl.pest`.

use pest_derive::Parser;

#[derive(Parser)]
#[grammar = "../grammar/pvl.pest"]
pub struct PvlParser;
