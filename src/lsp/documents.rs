//! The open documents: text, version and line index of each, and the last
//! verification results published for it.

use super::position::LineIndex;
use lsp_types::{TextDocumentContentChangeEvent, Url};
use std::collections::HashMap;
use std::path::PathBuf;

/// Verification diagnostics and the text they are about (the saved text).
pub struct Verified {
    pub text: String,
    pub diagnostics: Vec<lsp_types::Diagnostic>,
}

pub struct Document {
    pub uri: Url,
    /// The file on disk, for `file:` URIs: the verifier reads the saved file and
    /// its companions (same `//:: cases` header in the same directory).
    pub path: Option<PathBuf>,
    pub text: String,
    pub version: i32,
    pub index: LineIndex,
    pub verified: Option<Verified>,
}

impl Document {
    pub fn new(uri: Url, text: String, version: i32) -> Document {
        let path = uri.to_file_path().ok();
        let index = LineIndex::new(&text);
        Document { uri, path, text, version, index, verified: None }
    }

    /// The name diagnostics and transforms use for the document.
    pub fn name(&self) -> String {
        self.path.as_ref().map_or_else(|| self.uri.to_string(), |p| p.display().to_string())
    }

    /// The path the front end resolves companions against (a path that names no
    /// file, for documents that are not files, has none).
    pub fn path_or_name(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(|| PathBuf::from(self.uri.as_str()))
    }

    /// Applies the changes of a `didChange` notification (full or incremental).
    pub fn change(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for c in changes {
            match c.range {
                None => self.text = c.text,
                Some(r) => {
                    let start = self.index.offset(&self.text, r.start);
                    let end = self.index.offset(&self.text, r.end).max(start);
                    self.text.replace_range(start..end, &c.text);
                }
            }
            self.index = LineIndex::new(&self.text);
        }
        self.version = version;
    }

    /// The verification diagnostics that still describe the text: those of the
    /// last save, as long as the text is the saved one (positions of an older
    /// text would point at the wrong code).
    pub fn current_verification(&self) -> &[lsp_types::Diagnostic] {
        match &self.verified {
            Some(v) if v.text == self.text => &v.diagnostics,
            _ => &[],
        }
    }
}

#[derive(Default)]
pub struct Documents {
    docs: HashMap<Url, Document>,
}

impl Documents {
    pub fn open(&mut self, doc: Document) {
        self.docs.insert(doc.uri.clone(), doc);
    }
    pub fn close(&mut self, uri: &Url) {
        self.docs.remove(uri);
    }
    pub fn get(&self, uri: &Url) -> Option<&Document> {
        self.docs.get(uri)
    }
    pub fn get_mut(&mut self, uri: &Url) -> Option<&mut Document> {
        self.docs.get_mut(uri)
    }
}
