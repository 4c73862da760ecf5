//! Diagnostics: one plain-data type produced by every stage, rendered either as a
//! miette report (for people) or as one JSON object per line (for tools).
//!
//! Each diagnostic has a stable `code` (see [`codes`]) that tests and tools match on;
//! messages may be reworded, codes may not.

use crate::ast::Span;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A secondary location: "declared here", "the callee's precondition", ...
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The primary location.
    pub span: Span,
    /// Text shown at the primary location (defaults to nothing).
    pub label: Option<String>,
    pub related: Vec<Related>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { code, severity: Severity::Error, message: message.into(), span, label: None, related: Vec::new(), help: None }
    }
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, message, span) }
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }
    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related { span, message: message.into() });
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Stable diagnostic codes, grouped by the stage that emits them.
pub mod codes {
    // -- syntax (src/syntax) --
    /// The text does not match the grammar.
    pub const SYNTAX: &str = "alpine::syntax";
    /// `a || b && c` or `a ==> b ==> c` without parentheses: VerCors 1 and 2 read
    /// these differently, so alpine asks for parentheses (see docs/ARCHITECTURE.md).
    pub const AMBIGUOUS_PRECEDENCE: &str = "alpine::syntax::ambiguous_precedence";
    /// An integer literal that does not fit in 64 bits.
    pub const LITERAL_TOO_LARGE: &str = "alpine::syntax::literal_too_large";
    /// A clause or directive where it is not allowed (e.g. `requires` before a loop,
    /// `gpuopt fuse` before a loop).
    pub const MISPLACED: &str = "alpine::syntax::misplaced";
    /// A reserved word used as a name.
    pub const RESERVED: &str = "alpine::syntax::reserved";

    // -- name resolution (src/resolve) --
    pub const UNDEFINED_NAME: &str = "alpine::resolve::undefined_name";
    pub const UNDEFINED_METHOD: &str = "alpine::resolve::undefined_method";
    pub const UNDEFINED_CLASS: &str = "alpine::resolve::undefined_class";
    pub const UNDEFINED_FIELD: &str = "alpine::resolve::undefined_field";
    /// A barrier label that names no enclosing par block, an atomic naming no
    /// enclosing invariant block.
    pub const UNDEFINED_LABEL: &str = "alpine::resolve::undefined_label";
    pub const DUPLICATE: &str = "alpine::resolve::duplicate";

    // -- type checking (src/resolve) --
    pub const ARITY: &str = "alpine::typeck::arity";
    pub const TYPE_MISMATCH: &str = "alpine::typeck::mismatch";
    pub const NOT_ASSIGNABLE: &str = "alpine::typeck::not_assignable";
    /// A permission (resource) expression where a boolean is needed: an `if`
    /// condition, a `\forall` body, an operand of `&&`/`||`/`!`.
    pub const RESOURCE_AS_BOOLEAN: &str = "alpine::typeck::resource_as_boolean";
    /// A construct used where it is meaningless (`\result` outside `ensures`,
    /// a resource in code, `\old` in a precondition).
    pub const MISUSE: &str = "alpine::typeck::misuse";

    // -- verification (src/verify) --
    // One code per reason a proof obligation fails. The primary span is the
    // clause or statement that fails; see docs/verifier.md.
    /// `assert e` may not hold.
    pub const ASSERT_FAILED: &str = "alpine::verify::assert";
    /// An `ensures` clause may not hold at a return or at the end of the body.
    pub const POSTCONDITION: &str = "alpine::verify::postcondition";
    /// A callee's `requires` may not hold at a call (related: the callee clause).
    pub const PRECONDITION: &str = "alpine::verify::precondition";
    /// A `loop_invariant` may not hold when the loop is entered.
    pub const INVARIANT_ENTRY: &str = "alpine::verify::invariant_entry";
    /// A `loop_invariant` may not be preserved by the loop body.
    pub const INVARIANT_PRESERVED: &str = "alpine::verify::invariant_preserved";
    /// Not enough permission to read or write a location, or to exhale `Perm(..)`.
    pub const PERMISSION: &str = "alpine::verify::permission";
    /// An array index may be out of bounds (`0 <= i < a.length`).
    pub const ARRAY_BOUNDS: &str = "alpine::verify::array_bounds";
    /// A sequence index may be out of bounds.
    pub const SEQ_BOUNDS: &str = "alpine::verify::seq_bounds";
    /// A receiver (object or array) may be null.
    pub const NULL: &str = "alpine::verify::null";
    /// A divisor (`/`, `%`, `\`) may be zero.
    pub const DIV_BY_ZERO: &str = "alpine::verify::div_by_zero";
    /// A `\forall*` may give the same location twice (not injective).
    pub const NOT_INJECTIVE: &str = "alpine::verify::not_injective";
    /// A permission amount may be negative.
    pub const NEGATIVE_PERMISSION: &str = "alpine::verify::negative_permission";
    /// A barrier under thread-dependent control flow: not every thread of its
    /// par block may reach it.
    pub const BARRIER_DIVERGENCE: &str = "alpine::verify::barrier_divergence";
    /// `exhale A` may fail for a reason other than permission (a pure part).
    pub const EXHALE_FAILED: &str = "alpine::verify::exhale";
    /// A recursive pure function may not terminate (its axiom could be inconsistent).
    pub const TERMINATION: &str = "alpine::verify::termination";
    /// Z3 answered `unknown` or ran out of time/resources: not proved.
    pub const UNKNOWN: &str = "alpine::verify::unknown";
    /// `--smoke`: a contract or branch is vacuous (its end is unreachable).
    pub const VACUOUS: &str = "alpine::verify::vacuous";
    /// A construct the verifier does not support yet; the unit is not proved.
    pub const UNSUPPORTED: &str = "alpine::verify::unsupported";

    // -- optimisation (src/transforms/, `alpine optimise`) --
    // Applicability failures; the primary span is the loop (its guard), the
    // update statement or the directive.
    /// The loop may run fewer times than the unroll factor (or the peeled remainder).
    pub const OPTIMISE_TRIP_COUNT: &str = "alpine::optimise::trip_count";
    /// Iteration merging needs the loop's iteration count (modulo the factor).
    pub const OPTIMISE_ITERATION_COUNT: &str = "alpine::optimise::iteration_count";
    /// The loop variable's update is not `i ± c`, `i * c` or `i / c` (c > 0), or
    /// there is not exactly one unconditional update.
    pub const OPTIMISE_UPDATE_FORM: &str = "alpine::optimise::update_form";
    /// The guard is not one comparison of the loop variable with a bound the loop
    /// leaves unchanged.
    pub const OPTIMISE_TEMPLATE: &str = "alpine::optimise::template";
    /// An unroll factor ≤ 0, a merge factor ≤ 1, or a factor too large.
    pub const OPTIMISE_FACTOR: &str = "alpine::optimise::factor";
    /// A request names no loop of the file.
    pub const OPTIMISE_UNKNOWN_LOOP: &str = "alpine::optimise::unknown_loop";
    /// A request fits several loops.
    pub const OPTIMISE_AMBIGUOUS_LOOP: &str = "alpine::optimise::ambiguous_loop";
    /// Kernel fusion: a dependency between kernels no barrier can order.
    pub const OPTIMISE_DEPENDENCY: &str = "alpine::optimise::dependency";
    /// A `--fuse` request names kernels (par blocks) the file does not have.
    pub const OPTIMISE_UNKNOWN_KERNEL: &str = "alpine::optimise::unknown_kernel";
    /// Linearisation: the matrix is not a 2-D array of the method, or no method
    /// declares it (`--linearise`).
    pub const OPTIMISE_UNKNOWN_ARRAY: &str = "alpine::optimise::unknown_array";
    /// Linearisation: the matrix is not provably rectangular with the given
    /// dimensions, or a dimension may change within the method.
    pub const OPTIMISE_SHAPE: &str = "alpine::optimise::shape";
    /// Prefetching: the thread may lack permission for the location in a segment.
    pub const OPTIMISE_PERMISSION: &str = "alpine::optimise::permission";
    /// Linearisation: the matrix is aliased, assigned, passed whole to a method,
    /// or its rows may be replaced by a call.
    /// Prefetching: another access may name the prefetched element.
    pub const OPTIMISE_ALIAS: &str = "alpine::optimise::alias";
    /// A warning, not a refusal: a step made global accesses that a warp served
    /// together (coalesced) strided or irregular (`emit::cost`); the span is the
    /// first such access in the step's text.
    pub const OPTIMISE_UNCOALESCED: &str = "alpine::optimise::uncoalesced";

    // -- code generation (src/emit, `alpine emit`) --
    /// A construct outside the subset the CUDA/OpenCL emitter supports.
    pub const EMIT_UNSUPPORTED: &str = "alpine::emit::unsupported";

    // -- CUDA/OpenCL input (src/cfront) --
    /// clang rejects the file (a C/CUDA/OpenCL error); the message is clang's.
    pub const CFRONT_CLANG: &str = "alpine::cfront::clang";
    /// A construct the kernel IR cannot hold yet (exit 2); the span is the construct.
    pub const CFRONT_UNSUPPORTED: &str = "alpine::cfront::unsupported";
    /// libclang could not be loaded or failed as a whole (no span).
    pub const CFRONT_LIBCLANG: &str = "alpine::cfront::libclang";

    // -- race and barrier-divergence checking of kernels (src/races) --
    /// Two threads' accesses may conflict without a barrier between them.
    pub const RACES_RACE: &str = "alpine::races::race";
    /// Two threads of a group may not reach a barrier alike.
    pub const RACES_DIVERGENCE: &str = "alpine::races::barrier_divergence";
    /// A GPUVerify `__assert`/`__ensures`/callee `__requires` may fail.
    pub const RACES_ASSERT: &str = "alpine::races::assert";
    /// A loop invariant (`__invariant`) may not hold on entry or be preserved.
    pub const RACES_INVARIANT: &str = "alpine::races::invariant";
    /// An access through a null pointer or one the checker cannot follow.
    pub const RACES_POINTER: &str = "alpine::races::pointer";
    /// An access may be outside its array (`--check-array-bounds`).
    pub const RACES_BOUNDS: &str = "alpine::races::bounds";
    /// Z3 answered unknown or ran out of time: not proved.
    pub const RACES_UNKNOWN: &str = "alpine::races::unknown";
    /// A construct the race checker does not model: not proved (exit 1).
    pub const RACES_UNSUPPORTED: &str = "alpine::races::unsupported";

    // -- input/output (src/main.rs) --
    pub const IO: &str = "alpine::io";

    // -- the command line (src/cli) --
    /// A bad flag, argument or combination of them (exit 2).
    pub const USAGE: &str = "alpine::usage";
    /// `alpine fmt --check`: the file is not in canonical layout; the span is the
    /// first line that differs.
    pub const FMT_LAYOUT: &str = "alpine::fmt::layout";
    /// `alpine run`: the run failed (a contract, an assertion, a runtime error).
    pub const RUN_FAILED: &str = "alpine::run";
    /// `alpine scan`: the kernel's run over the interval monoid does not end with
    /// the prefix sums; the span is the kernel.
    pub const SCAN_WRONG: &str = "alpine::scan::wrong";
    /// `alpine scan`: two threads touch one cell in one phase, one writing; the
    /// span is the second access, the first is related.
    pub const SCAN_RACE: &str = "alpine::scan::race";
    /// `alpine scan`: threads disagree on a condition around a barrier.
    pub const SCAN_DIVERGENCE: &str = "alpine::scan::divergence";
    /// `alpine scan`: the kernel is not of the shape the theorem needs (not
    /// generic, unknown arrays, a construct the interpreter cannot run); exit 2.
    pub const SCAN_NOT_APPLICABLE: &str = "alpine::scan::not_applicable";
    /// `alpine scan`: the kernel as emitted CUDA, run on a GPU over the interval
    /// monoid, ends differently from the interpreter's run (exit 1); or, with
    /// `--gpu`, the GPU run could not be done (exit 2).
    pub const SCAN_GPU: &str = "alpine::scan::gpu";

    /// A bug in alpine caught before it could crash the program (e.g. a panic in
    /// the parser's worker thread). Tests treat it as a failure.
    pub const INTERNAL: &str = "alpine::internal";
}

/// A source file as the diagnostics see it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name shown to the user (the path as given, or `<stdin>`).
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let before = &self.text[..offset];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Related locations further than this many lines from the primary span are shown
/// in a snippet of their own, so a "first declared here" 200 lines up does not drag
/// 200 lines of source into the report.
const NEAR_LINES: usize = 6;

/// The miette view of one diagnostic.
struct Report<'a> {
    diag: &'a Diagnostic,
    src: miette::NamedSource<String>,
    /// Related locations shown as labels in the primary snippet.
    near: Vec<&'a Related>,
    /// Related locations shown as separate notes with their own snippet.
    far: Vec<Note>,
}

/// A related location far from the primary span, rendered as its own note.
struct Note {
    message: String,
    span: Span,
    src: miette::NamedSource<String>,
}

impl std::fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}
impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}
impl std::error::Error for Report<'_> {}

impl std::fmt::Debug for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}
impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}
impl std::error::Error for Note {}

/// A span clamped to the source, as miette wants it.
fn clamp(s: Span, len: usize) -> miette::SourceSpan {
    let start = s.start().min(len);
    let end = s.end().clamp(start, len);
    (start, end - start).into()
}

impl miette::Diagnostic for Note {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let span = clamp(self.span, self.src.inner().len());
        Some(Box::new(std::iter::once(miette::LabeledSpan::new_primary_with_span(None, span))))
    }
}

impl miette::Diagnostic for Report<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.diag.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.diag.help.as_ref().map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        // An empty source (a file that could not be read) has nothing to show:
        // no empty box under the message.
        (!self.src.inner().is_empty()).then_some(&self.src as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        if self.src.inner().is_empty() {
            return None;
        }
        let len = self.src.inner().len();
        let primary = miette::LabeledSpan::new_primary_with_span(self.diag.label.clone(), clamp(self.diag.span, len));
        let related = self.near.iter().map(move |r| miette::LabeledSpan::new_with_span(Some(r.message.clone()), clamp(r.span, len)));
        Some(Box::new(std::iter::once(primary).chain(related)))
    }
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.far.is_empty() {
            return None;
        }
        Some(Box::new(self.far.iter().map(|n| n as &dyn miette::Diagnostic)))
    }
}

/// Renders a diagnostic the way a person reads it: message, code, the source lines
/// with labels, help. `color` switches ANSI colours on.
pub fn render(diag: &Diagnostic, file: &SourceFile, color: bool) -> String {
    if !file.text.is_empty() && shows_long_line(diag, file) {
        return render(&without_snippet(diag, file), &SourceFile::new(file.name.clone(), String::new()), color);
    }
    let src = || miette::NamedSource::new(&file.name, file.text.clone());
    let (primary_line, _) = file.line_col(diag.span.start());
    let (near, far): (Vec<&Related>, Vec<&Related>) =
        diag.related.iter().partition(|r| file.line_col(r.span.start()).0.abs_diff(primary_line) <= NEAR_LINES);
    let far = far.into_iter().map(|r| Note { message: r.message.clone(), span: r.span, src: src() }).collect();
    let report = Report { diag, src: src(), near, far };
    let theme = if color { miette::GraphicalTheme::unicode() } else { miette::GraphicalTheme::unicode_nocolor() };
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_context_lines(1).with_width(100);
    let mut out = String::new();
    if handler.render_report(&mut out, &report).is_err() {
        // Rendering only fails on a formatter error; fall back to one plain line.
        let (l, c) = file.line_col(diag.span.start());
        out = format!("{}:{}:{}: {}: {}\n", file.name, l, c, diag.code, diag.message);
    }
    out
}

/// A source line longer than this (in bytes) is not shown in a snippet: a
/// generated or minified file may put 200 KB on one line.
const MAX_SHOWN_LINE: usize = 400;

/// Whether the snippet of `diag` would show a line longer than [`MAX_SHOWN_LINE`]
/// (the lines of its spans, and one line of context around the primary one).
fn shows_long_line(diag: &Diagnostic, file: &SourceFile) -> bool {
    let lines: Vec<&str> = file.text.split('\n').collect();
    let (first, _) = file.line_col(diag.span.start());
    let (last, _) = file.line_col(diag.span.end());
    let mut shown: Vec<usize> = (first.saturating_sub(1)..=last + 1).collect();
    shown.extend(diag.related.iter().map(|r| file.line_col(r.span.start()).0));
    shown.into_iter().any(|l| l >= 1 && lines.get(l - 1).is_some_and(|t| t.len() > MAX_SHOWN_LINE))
}

/// `diag` with its positions written into the text (`file:line:col`), for
/// rendering without a snippet.
fn without_snippet(diag: &Diagnostic, file: &SourceFile) -> Diagnostic {
    let at = |s: Span| {
        let (l, c) = file.line_col(s.start());
        format!("{}:{l}:{c}", file.name)
    };
    let mut message = format!("{}: {}", at(diag.span), diag.message);
    if let Some(label) = &diag.label {
        message = format!("{message} ({label})");
    }
    let mut help: Vec<String> = diag.related.iter().map(|r| format!("{}: {}", at(r.span), r.message)).collect();
    help.extend(diag.help.clone());
    help.push(format!("(the line is too long to show: over {MAX_SHOWN_LINE} characters)"));
    Diagnostic { message, span: Span::DUMMY, label: None, related: Vec::new(), help: Some(help.join("\n")), ..diag.clone() }
}

#[derive(Serialize)]
struct JsonSpan {
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
struct JsonRelated {
    message: String,
    span: JsonSpan,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    /// Always `"diagnostic"`: `--message-format json` also prints other records
    /// (a unit's verdict, a run's summary), each with its own `type`.
    #[serde(rename = "type")]
    kind: &'static str,
    file: &'a str,
    severity: Severity,
    code: &'a str,
    message: &'a str,
    label: Option<&'a str>,
    help: Option<&'a str>,
    span: JsonSpan,
    related: Vec<JsonRelated>,
}

fn json_span(file: &SourceFile, s: Span) -> JsonSpan {
    let (line, column) = file.line_col(s.start());
    let (end_line, end_column) = file.line_col(s.end());
    JsonSpan { start: s.start(), end: s.end(), line, column, end_line, end_column }
}

/// One JSON object (no trailing newline) describing the diagnostic, for
/// `--message-format json`.
pub fn to_json(diag: &Diagnostic, file: &SourceFile) -> String {
    let j = JsonDiagnostic {
        kind: "diagnostic",
        file: &file.name,
        severity: diag.severity,
        code: diag.code,
        message: &diag.message,
        label: diag.label.as_deref(),
        help: diag.help.as_deref(),
        span: json_span(file, diag.span),
        related: diag.related.iter().map(|r| JsonRelated { message: r.message.clone(), span: json_span(file, r.span) }).collect(),
    };
    serde_json::to_string(&j).unwrap_or_else(|_| String::from("{}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_very_long_line_is_not_printed() {
        let text = format!("class A {{ void f() {{ int x = {}1; }} }}\n", "1 + ".repeat(50_000));
        let f = SourceFile::new("long.pvl", text.clone());
        let at = text.find("int x").unwrap();
        let d = Diagnostic::error(codes::SYNTAX, "nesting too deep", Span::new(at, at + 3)).with_label("here");
        let out = render(&d, &f, false);
        assert!(out.len() < 1000, "{} bytes:\n{}", out.len(), &out[..1000.min(out.len())]);
        assert!(out.contains(&format!("long.pvl:1:{}: nesting too deep (here)", at + 1)), "{out}");
        // A short line keeps its snippet.
        let f = SourceFile::new("short.pvl", "class A {\n  int x\n}\n");
        let out = render(&Diagnostic::error(codes::SYNTAX, "expected `;`", Span::new(17, 18)), &f, false);
        assert!(out.contains("int x"), "{out}");
    }

    #[test]
    fn line_col_is_one_based_and_counts_lines() {
        let f = SourceFile::new("t.pvl", "ab\ncd\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(99), (3, 1));
    }

    #[test]
    fn json_has_position_and_code() {
        let f = SourceFile::new("t.pvl", "class A {\n  int x\n}\n");
        let d = Diagnostic::error(codes::SYNTAX, "expected `;`", Span::new(17, 18));
        let j: serde_json::Value = serde_json::from_str(&to_json(&d, &f)).unwrap();
        assert_eq!(j["type"], "diagnostic");
        assert_eq!(j["code"], "alpine::syntax");
        assert_eq!(j["span"]["line"], 2);
        assert_eq!(j["span"]["column"], 8);
        assert_eq!(j["severity"], "error");
    }

    #[test]
    fn far_related_locations_get_their_own_snippet() {
        let mut text = String::from("class A {\n    int x;\n");
        for i in 0..100 {
            text.push_str(&format!("    int filler{i};\n"));
        }
        text.push_str("    int x;\n}\n");
        let first = text.find("int x").unwrap() + 4;
        let second = text.rfind("int x").unwrap() + 4;
        let f = SourceFile::new("t.pvl", text);
        let d = Diagnostic::error(codes::DUPLICATE, "`x` is declared twice", Span::new(second, second + 1))
            .with_related(Span::new(first, first + 1), "first declared here");
        let s = render(&d, &f, false);
        assert!(s.contains("first declared here"), "{s}");
        assert!(!s.contains("filler50"), "the lines in between are not shown:\n{s}");
    }

    #[test]
    fn render_mentions_message_and_code() {
        let f = SourceFile::new("t.pvl", "class A { }\n");
        let d = Diagnostic::error(codes::UNDEFINED_NAME, "cannot find `x`", Span::new(6, 7)).with_help("declare it");
        let s = render(&d, &f, false);
        assert!(s.contains("cannot find `x`"), "{s}");
        assert!(s.contains("alpine::resolve::undefined_name"), "{s}");
        assert!(s.contains("declare it"), "{s}");
    }
}
