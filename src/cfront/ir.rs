//! The kernel IR: what alpine keeps of a CUDA or OpenCL translation unit after
//! clang has preprocessed, parsed and type-checked it.
//!
//! Plain data (`Clone + Send`), like `ast`: no libclang handle survives lowering.
//! It sits beside the PVL AST, not inside it: the PVL AST is a verification
//! language with contracts and `par` blocks, this IR is C as a GPU runs it
//! (fixed-width integers, pointers into address spaces, `break`/`switch`,
//! implicit threads). The race checker and the verifier's lowering (a grid of
//! blocks of threads, VerCors-style) consume it.
//!
//! Invariants:
//! * every node carries a [`Span`] into the `.cu`/`.cl` file the user gave; a node
//!   that comes from a macro expansion or a header carries the span of the main
//!   file's text that expanded it (never a span into a header);
//! * every expression carries its C type as clang computed it, with clang's
//!   implicit conversions made explicit as [`ExprKind::Cast`] with `implicit: true`;
//! * names are resolved: a [`ExprKind::Var`] says whether it is a local, a
//!   parameter or a global, and a [`ExprKind::Call`] names a function of the
//!   module (or a declared-only one, such as a GPUVerify uninterpreted function);
//! * the GPU's built-in ids, barriers, atomics and GPUVerify's specification
//!   functions never appear as calls: they have their own nodes.
//!
//! Floating point: `float`/`double` values are kept with their width, and the
//! race checker treats them as uninterpreted values (only equality of the bits
//! matters for a race); verification will treat them as uninterpreted too until
//! an IEEE model is asked for. Integers are fixed-width: unsigned arithmetic
//! wraps, signed overflow is an error the verifier reports, not a value.

use crate::ast::Span;

/// The source language of a kernel file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Cuda,
    OpenCl,
}

impl Language {
    /// The language of a file by its extension: `.cu`/`.cuh` CUDA, `.cl` OpenCL.
    pub fn of_path(path: &str) -> Option<Language> {
        let ext = std::path::Path::new(path).extension()?.to_str()?;
        match ext {
            "cu" | "cuh" => Some(Language::Cuda),
            "cl" => Some(Language::OpenCl),
            _ => None,
        }
    }
}

/// One of the three axes of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn from_index(i: u64) -> Option<Axis> {
        [Axis::X, Axis::Y, Axis::Z].get(usize::try_from(i).ok()?).copied()
    }
}

/// Sizes along x, y, z (unnamed axes are 1); `None` is GPUVerify's `*`, a size
/// left unconstrained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [Option<u64>; 3]);

/// The launch geometry given on the command line (GPUVerify's flags), in CUDA's
/// terms: threads per block and blocks per grid. OpenCL's `--local_size` is the
/// block, `--num_groups` the grid, `--global_size` the product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    pub block: Option<Dim3>,
    pub grid: Option<Dim3>,
}

/// Where a pointer points or a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressSpace {
    /// A thread's own memory (locals, parameters; OpenCL `__private`, CUDA's
    /// default inside a function).
    Private,
    /// Device memory seen by every thread of the grid (CUDA `__device__` data and
    /// kernel pointer parameters, OpenCL `__global`).
    Global,
    /// Memory of one block/work-group (CUDA `__shared__`, OpenCL `__local`).
    Shared,
    /// Read-only device memory (CUDA `__constant__`, OpenCL `__constant`).
    Constant,
    /// OpenCL 2's generic space (could be any of the above).
    Generic,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Void,
    Bool,
    /// `char` … `long long`, fixed width (bits) and signedness.
    Int {
        bits: u16,
        signed: bool,
    },
    /// `half`, `float`, `double` by width (see the module doc for their treatment).
    Float {
        bits: u16,
    },
    Pointer {
        pointee: Box<Type>,
        space: AddressSpace,
    },
    /// A C array; `len` is `None` for `T[]`.
    Array {
        elem: Box<Type>,
        len: Option<u64>,
    },
    /// A struct or union by name (its fields are in [`Module::structs`]).
    Struct(String),
    /// OpenCL/clang vector types (`float4`, `int2`); CUDA's `float4` is a struct.
    Vector {
        elem: Box<Type>,
        lanes: u32,
    },
    /// A function type (a function-pointer's pointee).
    Function,
    /// An opaque handle of OpenCL C (`event_t`, `sampler_t`, `image2d_t`, …), by
    /// name; only library functions look inside.
    Opaque(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: String,
    pub is_union: bool,
    pub fields: Vec<(String, Type)>,
    pub span: Span,
}

/// A translation unit: the functions defined in the user's file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub language: Language,
    pub launch: Launch,
    pub structs: Vec<StructDef>,
    /// File-scope variables (`__shared__`/`__local`/`__constant`/`__device__`).
    pub globals: Vec<Variable>,
    pub functions: Vec<Function>,
    /// CUDA host functions (neither `__global__` nor `__device__`), by name and
    /// span: clang type-checked them, but they are not GPU code and are not
    /// lowered (no kernel can call one).
    pub host_functions: Vec<(String, Span)>,
}

impl Module {
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_kernel)
    }
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// CUDA `__global__`, OpenCL `__kernel`; otherwise a device function.
    pub is_kernel: bool,
    pub params: Vec<Variable>,
    pub ret: Type,
    /// `None` for a declaration without body (an uninterpreted function).
    pub body: Option<Vec<Stmt>>,
    pub span: Span,
}

/// A parameter, local or global variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub ty: Type,
    /// Where the variable itself lives (`__shared__ int s[N]` is Shared).
    pub space: AddressSpace,
    pub init: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// One declared variable (`int a, b;` is two).
    Decl(Variable),
    Expr(Expr),
    Block(Vec<Stmt>),
    If {
        cond: Expr,
        then: Box<Stmt>,
        otherwise: Option<Box<Stmt>>,
    },
    /// Loops; `invariants` are the GPUVerify annotations written before the
    /// condition (`while (__invariant(e), i < n)`), as `Annotation` statements.
    While {
        invariants: Vec<Stmt>,
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        invariants: Vec<Stmt>,
        body: Box<Stmt>,
        cond: Expr,
    },
    For {
        init: Vec<Stmt>,
        invariants: Vec<Stmt>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    /// `switch`: the arms in order; control falls through from one arm's body to
    /// the next unless it `break`s.
    Switch {
        scrutinee: Expr,
        arms: Vec<SwitchArm>,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// `__syncthreads()`, `barrier(flags)`, `__syncwarp()`.
    Barrier(Barrier),
    /// A GPUVerify specification statement (`__assert(e)`, `__requires(e)`, …).
    Annotation {
        kind: AnnotationKind,
        args: Vec<Expr>,
    },
    Empty,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchArm {
    /// The `case` values; `None` is `default`.
    pub labels: Vec<Option<i128>>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Barrier {
    /// All threads of the block (`__syncthreads`, OpenCL `barrier`); the memory
    /// whose accesses it orders.
    Block { shared: bool, global: bool },
    /// OpenCL `barrier(flags)` whose flags are computed at run time (a value of
    /// `CLK_LOCAL_MEM_FENCE` and `CLK_GLOBAL_MEM_FENCE` bits).
    BlockWithFlags(Box<Expr>),
    /// CUDA `__syncwarp(mask)`: the threads of a warp (32 lanes) whose bits
    /// the mask sets. `None`: a mask computed at run time.
    Warp { mask: Option<u32> },
}

/// GPUVerify's statement-like specification functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnnotationKind {
    Assert,
    Assume,
    Requires,
    Ensures,
    /// A loop invariant (`__invariant`, must precede a loop's condition).
    Invariant,
    GlobalInvariant,
    GlobalRequires,
    GlobalEnsures,
    GlobalAssert,
    CandidateInvariant,
    CandidateGlobalInvariant,
    FunctionWideInvariant,
    FunctionWideCandidateInvariant,
    /// `__barrier_invariant_N(inv, instantiations…)` (N is the number of
    /// instantiations; binary ones relate two threads).
    BarrierInvariant {
        binary: bool,
    },
    /// `__requires_fresh_array(p)`.
    RequiresFreshArray,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    Local,
    Param,
    Global,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    /// `*p`
    Deref,
    /// `&x`
    AddrOf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `a, b`
    Comma,
}

impl BinaryOp {
    /// The operator written as C writes it (without `=` for compound assignment).
    pub fn from_token(tok: &str) -> Option<BinaryOp> {
        use BinaryOp::*;
        Some(match tok {
            "+" => Add,
            "-" => Sub,
            "*" => Mul,
            "/" => Div,
            "%" => Rem,
            "<<" => Shl,
            ">>" => Shr,
            "&" => BitAnd,
            "|" => BitOr,
            "^" => BitXor,
            "&&" => And,
            "||" => Or,
            "==" => Eq,
            "!=" => Ne,
            "<" => Lt,
            "<=" => Le,
            ">" => Gt,
            ">=" => Ge,
            "," => Comma,
            _ => return None,
        })
    }
}

/// The thread/block geometry built-ins, one node each whatever the language
/// spells them (`threadIdx.x` and `get_local_id(0)` are both `LocalId(X)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// CUDA `threadIdx`, OpenCL `get_local_id`.
    LocalId(Axis),
    /// CUDA `blockIdx`, OpenCL `get_group_id`.
    GroupId(Axis),
    /// CUDA `blockDim`, OpenCL `get_local_size`.
    LocalSize(Axis),
    /// CUDA `gridDim`, OpenCL `get_num_groups`.
    NumGroups(Axis),
    /// OpenCL `get_global_id` (group id × local size + local id).
    GlobalId(Axis),
    /// OpenCL `get_global_size` (num groups × local size).
    GlobalSize(Axis),
    /// CUDA `warpSize`.
    WarpSize,
}

/// Atomic read-modify-write operations (CUDA `atomicAdd`…, OpenCL `atomic_add`…
/// and `atom_add`…). Every one returns the old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Exchange,
    Min,
    Max,
    /// Increment (OpenCL `atomic_inc`: +1; CUDA `atomicInc(p, m)`: wraps at m).
    Inc,
    Dec,
    /// Compare and swap (`atomicCAS(p, cmp, val)`).
    CompareExchange,
    And,
    Or,
    Xor,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer or character literal, or a constant clang folded.
    Int(i128),
    Float(f64),
    Bool(bool),
    /// A string literal (only as an argument, e.g. of `printf`).
    Str(String),
    Var {
        name: String,
        kind: VarKind,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `target = value`, or `target op= value` when `op` is given.
    Assign {
        op: Option<BinaryOp>,
        target: Box<Expr>,
        value: Box<Expr>,
    },
    /// `++x`, `x--`, …
    IncDec {
        increment: bool,
        prefix: bool,
        target: Box<Expr>,
    },
    Conditional {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// A conversion to `ty`; `implicit` when clang inserted it.
    Cast {
        operand: Box<Expr>,
        implicit: bool,
    },
    /// `base[index]` (base is a pointer or array).
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `base.field`, or `base->field` when `arrow`.
    Member {
        base: Box<Expr>,
        field: String,
        arrow: bool,
    },
    /// A vector component selection: `v.x`, `v.xy`, `v.s0`.
    Swizzle {
        base: Box<Expr>,
        lanes: String,
    },
    /// A call of a function of the module, or of a declared-only one.
    Call {
        callee: String,
        args: Vec<Expr>,
    },
    /// A call through a function pointer.
    IndirectCall {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    Builtin(Builtin),
    Atomic {
        op: AtomicOp,
        args: Vec<Expr>,
    },
    /// A GPUVerify specification function used as a value (`__implies(a, b)`,
    /// `__read(p)`, `__other_int(x)`, `__enabled()`, …), by name.
    Spec {
        name: String,
        args: Vec<Expr>,
    },
    /// A vector or aggregate built from parts: `(float4)(a, b, c, d)`, `{1, 2}`.
    Aggregate(Vec<Expr>),
    /// `sizeof`/`alignof` folded by clang is [`ExprKind::Int`]; this is a
    /// function name used as a value (a function pointer).
    FunctionRef(String),
}
