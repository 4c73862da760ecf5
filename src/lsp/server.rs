//! The main loop: reads client messages and verification outcomes, keeps the
//! document store, and answers requests. Everything but verification runs
//! here, synchronously (front end, code actions, formatting and hover take
//! milliseconds; an applicability check is a few Z3 queries).

use super::actions::{self, Applied};
use super::diagnostics::front_end;
use super::documents::{Document, Documents, Verified};
use super::verification::{self, Event, Job, Outcome, Progress, ProgressState};
use super::{hover, Config};
use crate::diagnostics::SourceFile;
use crossbeam_channel::{select, unbounded, Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Instant;

/// The command of an action that does not apply, for clients that cannot show
/// a disabled action: executing it shows the reason.
pub const SHOW_REASON: &str = "alpine.showReason";

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
            ..Default::default()
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::REFACTOR_REWRITE]),
            resolve_provider: Some(true),
            ..Default::default()
        })),
        execute_command_provider: Some(ExecuteCommandOptions { commands: vec![SHOW_REASON.into()], ..Default::default() }),
        document_formatting_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        ..Default::default()
    }
}

pub struct Server<'a> {
    conn: &'a Connection,
    docs: Documents,
    jobs: Sender<Job>,
    outcomes: Receiver<Event>,
    /// Save count per document (the generation of its latest verification job).
    saves: HashMap<Url, u64>,
    /// Whether the client shows disabled code actions (with their reason).
    disabled_support: bool,
    /// Whether the client shows server-initiated progress (`$/progress`).
    progress_support: bool,
}

impl<'a> Server<'a> {
    pub fn new(conn: &'a Connection, config: &Config, init: &InitializeParams) -> Server<'a> {
        let (tx, outcomes) = unbounded();
        let jobs = verification::spawn(config.alpine_exe.clone(), tx);
        let disabled_support =
            init.capabilities.text_document.as_ref().and_then(|t| t.code_action.as_ref()).and_then(|c| c.disabled_support).unwrap_or(false);
        let progress_support = init.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        Server { conn, docs: Documents::default(), jobs, outcomes, saves: HashMap::new(), disabled_support, progress_support }
    }

    /// Runs until the client asks to shut down (or disconnects).
    pub fn run(&mut self) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
        loop {
            select! {
                recv(self.conn.receiver) -> msg => {
                    let Ok(msg) = msg else { return Ok(()) };
                    match msg {
                        Message::Request(req) if req.method == request::Shutdown::METHOD => {
                            self.send(Message::Response(Response::new_ok(req.id, ())));
                            self.await_exit();
                            return Ok(());
                        }
                        Message::Request(req) => {
                            let resp = self.request(req);
                            self.send(Message::Response(resp));
                        }
                        Message::Notification(n) if n.method == notification::Exit::METHOD => {
                            return Err("`exit` before `shutdown`".into());
                        }
                        Message::Notification(n) => self.notification(n),
                        Message::Response(_) => {}
                    }
                }
                recv(self.outcomes) -> event => match event {
                    Ok(Event::Done(o)) => self.verified(o),
                    Ok(Event::Progress(p)) => self.progress(p),
                    Err(_) => {}
                }
            }
        }
    }

    /// After `shutdown`: waits for `exit` (notifications in between are dropped,
    /// requests refused). A client that closes the stream instead, or never
    /// sends `exit`, has shut the server down all the same.
    fn await_exit(&self) {
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while let Ok(m) = self.conn.receiver.recv_deadline(deadline) {
            match m {
                Message::Notification(n) if n.method == notification::Exit::METHOD => return,
                Message::Request(r) => self.send(Message::Response(Response::new_err(
                    r.id,
                    ErrorCode::InvalidRequest as i32,
                    "the server is shutting down".into(),
                ))),
                _ => {}
            }
        }
    }

    fn send(&self, m: Message) {
        let _ = self.conn.sender.send(m);
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Message::Notification(Notification::new(N::METHOD.to_string(), params)));
    }

    /// Publishes the document's diagnostics: the front end's on its current
    /// text, and the last verification's while they still describe the text.
    fn publish(&self, uri: &Url) {
        let Some(doc) = self.docs.get(uri) else {
            self.notify::<notification::PublishDiagnostics>(PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics: vec![],
                version: None,
            });
            return;
        };
        let mut diagnostics = front_end(doc);
        diagnostics.extend(doc.current_verification().iter().cloned());
        self.notify::<notification::PublishDiagnostics>(PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(doc.version),
        });
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri.clone();
                self.docs.open(Document::new(p.text_document.uri, p.text_document.text, p.text_document.version));
                self.publish(&uri);
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                if let Some(doc) = self.docs.get_mut(&uri) {
                    doc.change(p.text_document.version, p.content_changes);
                    self.publish(&uri);
                }
            }
            notification::DidSaveTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidSaveTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let Some(path) = self.docs.get(&uri).and_then(|d| d.path.clone()) else { return };
                let generation = self.saves.entry(uri.clone()).or_default();
                *generation += 1;
                let job = Job { uri, path, generation: *generation, saved_at: Instant::now() };
                let _ = self.jobs.send(job);
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else { return };
                self.docs.close(&p.text_document.uri);
                self.publish(&p.text_document.uri);
            }
            _ => {}
        }
    }

    /// A verification outcome: kept and published unless a newer save superseded it.
    fn verified(&mut self, o: Outcome) {
        if self.saves.get(&o.uri) != Some(&o.generation) {
            return;
        }
        let Some(doc) = self.docs.get_mut(&o.uri) else { return };
        doc.verified = Some(Verified { text: o.text, diagnostics: o.diagnostics });
        self.notify::<notification::LogMessage>(LogMessageParams { typ: MessageType::INFO, message: o.summary });
        self.publish(&o.uri);
    }

    /// A verification run's progress as `$/progress` (for clients that show it):
    /// the token is created when the run begins, and the client's answer to that
    /// request is not awaited (a refusal only means nothing is shown).
    fn progress(&self, p: Progress) {
        if !self.progress_support {
            return;
        }
        let token = NumberOrString::String(format!("alpine/verify/{}", p.run));
        let value = match p.state {
            ProgressState::Begin { title } => {
                let create = WorkDoneProgressCreateParams { token: token.clone() };
                let id = lsp_server::RequestId::from(format!("alpine/progress/{}", p.run));
                self.send(Message::Request(Request::new(id, request::WorkDoneProgressCreate::METHOD.to_string(), create)));
                WorkDoneProgress::Begin(WorkDoneProgressBegin { title, cancellable: Some(false), message: None, percentage: Some(0) })
            }
            ProgressState::Report { message, done, total } => WorkDoneProgress::Report(WorkDoneProgressReport {
                cancellable: Some(false),
                message: Some(format!("{done}/{total} {message}")),
                percentage: Some((100 * done / total.max(1)) as u32),
            }),
            ProgressState::End => WorkDoneProgress::End(WorkDoneProgressEnd { message: None }),
        };
        self.notify::<notification::Progress>(ProgressParams { token, value: ProgressParamsValue::WorkDone(value) });
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        // A bug in a handler answers this request with an error; the server goes on.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.dispatch(req)));
        match r {
            Ok(Ok(v)) => Response::new_ok(id, v),
            Ok(Err((code, msg))) => Response::new_err(id, code as i32, msg),
            Err(_) => Response::new_err(id, ErrorCode::InternalError as i32, "internal error in alpine (see its standard error)".into()),
        }
    }

    fn dispatch(&mut self, req: Request) -> Result<Value, (ErrorCode, String)> {
        fn params<P: serde::de::DeserializeOwned>(v: Value) -> Result<P, (ErrorCode, String)> {
            serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
        }
        let value = |v: Result<Value, serde_json::Error>| v.map_err(|e| (ErrorCode::InternalError, e.to_string()));
        match req.method.as_str() {
            request::CodeActionRequest::METHOD => value(serde_json::to_value(self.code_actions(params(req.params)?))),
            request::CodeActionResolveRequest::METHOD => value(serde_json::to_value(self.resolve(params(req.params)?))),
            request::ExecuteCommand::METHOD => {
                let p: ExecuteCommandParams = params(req.params)?;
                if p.command == SHOW_REASON {
                    let message = p.arguments.first().and_then(Value::as_str).unwrap_or("not applicable").to_string();
                    self.notify::<notification::ShowMessage>(ShowMessageParams { typ: MessageType::WARNING, message });
                    Ok(Value::Null)
                } else {
                    Err((ErrorCode::InvalidParams, format!("unknown command `{}`", p.command)))
                }
            }
            request::Formatting::METHOD => value(serde_json::to_value(self.format(params(req.params)?))),
            request::HoverRequest::METHOD => value(serde_json::to_value(self.hover(params(req.params)?))),
            m => Err((ErrorCode::MethodNotFound, format!("alpine lsp does not handle `{m}`"))),
        }
    }

    fn code_actions(&self, p: CodeActionParams) -> Vec<CodeActionOrCommand> {
        let Some(doc) = self.docs.get(&p.text_document.uri) else { return vec![] };
        let offset = doc.index.offset(&doc.text, p.range.start);
        self.actions_at(doc, offset, None).into_iter().map(CodeActionOrCommand::CodeAction).collect()
    }

    /// The actions at `offset` (only the one titled `only`, if given).
    fn actions_at(&self, doc: &Document, offset: usize, only: Option<&str>) -> Vec<CodeAction> {
        let file = SourceFile::new(doc.name(), doc.text.clone());
        let Ok((program, _)) = crate::frontend_in(&file, &doc.path_or_name()) else { return vec![] };
        let rw = crate::transforms::Rewriter::new(&doc.name(), &doc.path_or_name(), &doc.text);
        let mut out = Vec::new();
        for c in actions::candidates(&program, offset).into_iter().filter(|c| only.is_none_or(|t| t == c.title)) {
            let data = json!({ "uri": doc.uri, "version": doc.version, "offset": offset, "title": c.title });
            let mut action =
                CodeAction { title: c.title.clone(), kind: Some(CodeActionKind::REFACTOR_REWRITE), data: Some(data), ..Default::default() };
            match actions::apply(&file, &program, &rw, &c) {
                Applied::Text(text) => {
                    let edit = TextEdit { range: doc.index.whole(&doc.text), new_text: text };
                    action.edit =
                        Some(WorkspaceEdit { changes: Some(HashMap::from([(doc.uri.clone(), vec![edit])])), ..Default::default() });
                }
                Applied::Refused(reason) if self.disabled_support => action.disabled = Some(CodeActionDisabled { reason }),
                Applied::Refused(reason) => {
                    action.title = format!("{} — not applicable", c.title);
                    action.command = Some(Command {
                        title: action.title.clone(),
                        command: SHOW_REASON.into(),
                        arguments: Some(vec![Value::String(reason)]),
                    });
                }
            }
            out.push(action);
        }
        out
    }

    /// `codeAction/resolve`: the action's edit, computed again from its data
    /// when the client dropped it (an action of an older version keeps none).
    fn resolve(&self, action: CodeAction) -> CodeAction {
        if action.edit.is_some() || action.disabled.is_some() || action.command.is_some() {
            return action;
        }
        let data = action.data.clone().unwrap_or_default();
        let uri = data["uri"].as_str().and_then(|u| Url::parse(u).ok());
        let doc = uri.as_ref().and_then(|u| self.docs.get(u));
        let (Some(doc), Some(offset)) = (doc, data["offset"].as_u64()) else { return action };
        if data["version"].as_i64() != Some(doc.version as i64) {
            return action;
        }
        self.actions_at(doc, offset as usize, Some(&action.title)).pop().unwrap_or(action)
    }

    fn format(&self, p: DocumentFormattingParams) -> Option<Vec<TextEdit>> {
        let doc = self.docs.get(&p.text_document.uri)?;
        let program = crate::syntax::parse(&doc.text).ok()?;
        let formatted = crate::printer::print_program(&program);
        if formatted == doc.text {
            return Some(vec![]);
        }
        Some(vec![TextEdit { range: doc.index.whole(&doc.text), new_text: formatted }])
    }

    fn hover(&self, p: HoverParams) -> Option<Hover> {
        let doc = self.docs.get(&p.text_document_position_params.text_document.uri)?;
        let program = crate::syntax::parse(&doc.text).ok()?;
        let offset = doc.index.offset(&doc.text, p.text_document_position_params.position);
        let (span, text) = hover::at(&program, offset)?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: text }),
            range: Some(doc.index.range(&doc.text, span)),
        })
    }
}
