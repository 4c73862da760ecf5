//! `alpine lsp`: a language server over standard input/output.
//!
//! * diagnostics: the front end's (parse, resolve, type check) on open and on
//!   every change, at once; the verifier's after a save, from a worker
//!   ([`verification`]: debounced, a newer save cancels an older run);
//! * code actions: the optimisations of `src/transforms/` where their template
//!   matches ([`actions`]), each a whole-document edit, or disabled with the
//!   applicability check's reason;
//! * formatting (the printer of `alpine fmt`) and hover on `gpuopt` directives
//!   ([`hover`]).
//!
//! [`server`] is the main loop, [`documents`] the open documents, [`position`]
//! the byte-offset ⇄ LSP position conversion, [`diagnostics`] the conversion of
//! alpine diagnostics.

pub mod actions;
pub mod diagnostics;
pub mod documents;
pub mod hover;
pub mod position;
pub mod server;
pub mod verification;

use lsp_server::Connection;
use std::path::PathBuf;

/// How the server runs.
pub struct Config {
    /// The `alpine` binary that verifies saved files (`alpine verify`), normally
    /// the running one.
    pub alpine_exe: PathBuf,
}

/// Serves one client on standard input/output until it shuts down.
pub fn run_stdio(config: &Config) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
    let (conn, io) = Connection::stdio();
    serve(&conn, config)?;
    drop(conn);
    io.join()?;
    Ok(())
}

/// Serves one client on `conn`: the initialize handshake, then the main loop.
pub fn serve(conn: &Connection, config: &Config) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
    let caps = serde_json::to_value(server::capabilities())?;
    let init = conn.initialize(caps)?;
    let init: lsp_types::InitializeParams = serde_json::from_value(init)?;
    server::Server::new(conn, config, &init).run()
}
