//! alpine [`Diagnostic`]s as LSP diagnostics, and the front-end diagnostics
//! published at once on open and change.

use super::documents::Document;
use super::position::LineIndex;
use crate::diagnostics::{Diagnostic, Severity, SourceFile};
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url};

/// `source` of the diagnostics of the front end (parse, resolve, type check).
pub const FRONT_END: &str = "alpine";
/// `source` of the diagnostics of the verifier (published after a save).
pub const VERIFIER: &str = "alpine verify";

/// One alpine diagnostic about `text` (the document at `uri`) for the client.
/// Related locations become related information in the same document; the help
/// text is appended to the message (LSP has no field for it).
pub fn to_lsp(d: &Diagnostic, uri: &Url, text: &str, index: &LineIndex, source: &str) -> lsp_types::Diagnostic {
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Note => DiagnosticSeverity::INFORMATION,
    };
    let mut message = d.message.clone();
    if let Some(label) = &d.label {
        message.push_str(&format!(" ({label})"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location { uri: uri.clone(), range: index.range(text, r.span) },
            message: r.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: index.range(text, d.span),
        severity: Some(severity),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some(source.to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

/// Parse, resolve and type-check the document (with its companion files, as
/// `alpine parse` does): errors, or warnings of a program that checks.
pub fn front_end(doc: &Document) -> Vec<lsp_types::Diagnostic> {
    let file = SourceFile::new(doc.name(), doc.text.clone());
    let diags = match crate::frontend_in(&file, &doc.path_or_name()) {
        Ok((_, warnings)) => warnings,
        Err(errors) => errors,
    };
    diags.iter().map(|d| to_lsp(d, &doc.uri, &doc.text, &doc.index, FRONT_END)).collect()
}
