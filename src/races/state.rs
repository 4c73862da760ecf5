//! The state of the two-thread program: the two threads' ids, the arrays and
//! their access logs, and the slots that hold every variable's current value.

use super::value::{Val, BASE_BITS, OFFSET_BITS};
use super::vc::AccessKind;
use crate::ast::Span;
use crate::cfront::ir::{AddressSpace, Launch, Type};
use std::collections::HashMap;
use z3::ast::{Bool, BV};

/// The two threads' ids and the launch's sizes, as 64-bit terms.
#[derive(Clone)]
pub(crate) struct Geometry {
    pub(crate) local: [[BV; 3]; 2],
    pub(crate) group: [[BV; 3]; 2],
    pub(crate) block: [BV; 3],
    pub(crate) grid: [BV; 3],
    /// OpenCL's global offset (0 unless `--global_offset` says otherwise).
    pub(crate) offset: [BV; 3],
    /// The number of work-items per axis when `--global_size` gives it
    /// (with an unconstrained `--local_size`, it relates the two sizes).
    pub(crate) total: [Option<u64>; 3],
    /// `--warp-sync`'s warp size, for reports (`None`: warps not modelled).
    pub(crate) warp_size: Option<u64>,
}

/// The largest size GPUVerify's `*` stands for (sizes are 32-bit in CUDA).
const UNBOUNDED_SIZE: u64 = (1 << 31) - 1;

fn sizes(dim: Option<crate::cfront::ir::Dim3>, name: &str) -> [BV; 3] {
    let axis = ["x", "y", "z"];
    std::array::from_fn(|i| match dim.map(|d| d.0[i]) {
        Some(Some(n)) => BV::from_u64(n, 64),
        // No flag at all: a one-dimensional launch of unknown size.
        None if i > 0 => BV::from_u64(1, 64),
        _ => BV::new_const(format!("{name}.{}", axis[i]), 64),
    })
}

impl Geometry {
    pub(crate) fn new(launch: &Launch, offset: Option<[Option<u64>; 3]>, total: Option<[Option<u64>; 3]>) -> Geometry {
        let axis = ["x", "y", "z"];
        let ids = |name: &str, t: usize| -> [BV; 3] { std::array::from_fn(|i| BV::new_const(format!("{name}.{}${}", axis[i], t + 1), 64)) };
        Geometry {
            local: [ids("local_id", 0), ids("local_id", 1)],
            group: [ids("group_id", 0), ids("group_id", 1)],
            block: sizes(launch.block, "block_size"),
            grid: sizes(launch.grid, "num_groups"),
            offset: std::array::from_fn(|i| match offset.map(|o| o[i]) {
                Some(Some(n)) => BV::from_u64(n, 64),
                _ => BV::new_const(format!("global_offset.{}", axis[i]), 64),
            }),
            total: total.unwrap_or([None; 3]),
            warp_size: None,
        }
    }

    /// What every run assumes: ids within the launch, the two threads distinct.
    pub(crate) fn facts(&self) -> Vec<Bool> {
        let mut facts = Vec::new();
        for size in self.block.iter().chain(&self.grid) {
            facts.push(size.bvugt(BV::from_u64(0, 64)));
            facts.push(size.bvule(BV::from_u64(UNBOUNDED_SIZE, 64)));
        }
        for (i, n) in self.total.iter().enumerate() {
            // Only a fact that some launch satisfies (never a vacuous proof
            // from flags that contradict each other); both sizes are below
            // 2^31, so the 64-bit product is exact.
            let Some(n) = *n else { continue };
            let fits = |q: u64| (1..=UNBOUNDED_SIZE).contains(&q);
            let satisfiable = match (self.block[i].as_u64(), self.grid[i].as_u64()) {
                (Some(_), Some(_)) => false, // nothing to add
                (Some(b), None) | (None, Some(b)) => b > 0 && n % b == 0 && fits(n / b),
                (None, None) => fits(n),
            };
            if satisfiable {
                facts.push(self.block[i].bvmul(&self.grid[i]).eq(BV::from_u64(n, 64)));
            }
        }
        for t in 0..2 {
            for i in 0..3 {
                facts.push(self.local[t][i].bvult(&self.block[i]));
                facts.push(self.group[t][i].bvult(&self.grid[i]));
            }
        }
        let same_local = Bool::and(&(0..3).map(|i| self.local[0][i].eq(&self.local[1][i])).collect::<Vec<_>>());
        facts.push(Bool::and(&[same_local, self.same_group()]).not());
        facts
    }

    /// Thread `t`'s linear id in its group (x fastest, as CUDA numbers the
    /// threads of a block into warps), in 128 bits: exact for any sizes below
    /// 2^31 per axis (a symbolic launch too), so two threads are never put in
    /// one warp by a wrapped product.
    pub(crate) fn linear_local(&self, t: usize) -> BV {
        let wide = |v: &BV| v.zero_ext(64);
        let [x, y, z] = &self.local[t];
        let (bx, by) = (wide(&self.block[0]), wide(&self.block[1]));
        wide(x).bvadd(wide(y).bvmul(&bx)).bvadd(wide(z).bvmul(&bx).bvmul(&by))
    }

    /// Thread `t`'s warp (of `size` threads) in its group (128 bits).
    pub(crate) fn warp_of(&self, t: usize, size: u64) -> BV {
        self.linear_local(t).bvudiv(BV::from_u64(size, 128))
    }

    /// Thread `t`'s lane in its warp of `size` threads (128 bits).
    pub(crate) fn lane_of(&self, t: usize, size: u64) -> BV {
        self.linear_local(t).bvurem(BV::from_u64(size, 128))
    }

    /// The two threads are in one warp of `size` threads (of one group).
    pub(crate) fn same_warp(&self, size: u64) -> Bool {
        Bool::and(&[self.same_group(), self.warp_of(0, size).eq(self.warp_of(1, size))])
    }

    pub(crate) fn same_group(&self) -> Bool {
        Bool::and(&(0..3).map(|i| self.group[0][i].eq(&self.group[1][i])).collect::<Vec<_>>())
    }
}

/// Where an access log keeps one thread-1 access of one kind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogSlots {
    pub(crate) has: usize,
    pub(crate) off: usize,
    pub(crate) size: usize,
    pub(crate) site: usize,
    /// The value written (64 bits, zero-extended; fresh when not tracked), for
    /// GPUVerify's benign write-write races (both threads write the same bits).
    pub(crate) value: usize,
    /// The pending asynchronous copy the logged access belongs to (its event;
    /// 0 for an ordinary access): a barrier empties the log only once the
    /// copy has been waited for (`group.rs`).
    pub(crate) handle: usize,
}

/// An array: a kernel pointer parameter's target, a `__shared__`/`__local`
/// array, a `__device__`/`__constant__` global, or a thread's private array.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub(crate) name: String,
    pub(crate) space: AddressSpace,
    /// The pointer base that names it (`1 + index`; 0 is null).
    pub(crate) id: u64,
    /// The element type whose values are tracked (a scalar), with its size.
    pub(crate) elem: Option<(Type, u64)>,
    /// Length in bytes when the declaration says it.
    pub(crate) len_bytes: Option<u64>,
    pub(crate) span: Span,
    /// Each thread's view of the contents (slots holding `Val::Mem`); `None`
    /// when the elements are not tracked.
    pub(crate) mem: Option<[usize; 2]>,
    /// Thread 1's access logs (read, write, atomic); `None` for private arrays.
    pub(crate) logs: Option<[LogSlots; 3]>,
    /// Each thread's set of elements it accessed since the last barrier
    /// (slots holding `Val::Mem` of Booleans), kept only in kernels with
    /// barrier invariants (`barrier_inv.rs`).
    pub(crate) acc: Option<[usize; 2]>,
    /// The contents of an OpenCL `__constant` variable from its initialiser:
    /// (byte offset, size, bits) of every scalar (`constants.rs`).
    pub(crate) init: Option<std::rc::Rc<Vec<(u64, u64, BV)>>>,
}

impl Region {
    pub(crate) fn base(&self) -> BV {
        BV::from_u64(self.id, BASE_BITS)
    }

    pub(crate) fn log(&self, kind: AccessKind) -> Option<LogSlots> {
        let logs = self.logs?;
        Some(match kind {
            AccessKind::Read => logs[0],
            AccessKind::Write => logs[1],
            AccessKind::Atomic => logs[2],
        })
    }

    /// Shared memory is per group: threads of different groups never race on it.
    pub(crate) fn per_group(&self) -> bool {
        self.space == AddressSpace::Shared
    }
}

/// What a name in scope stands for.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// A scalar or pointer variable: one slot per thread.
    Scalar { slots: [usize; 2], ty: Type },
    /// An array variable, or a scalar that lives in memory (`__shared__ int x;`).
    Memory { region: usize, scalar: bool },
    /// A struct or vector variable: its fields get slots when first used.
    Aggregate { uid: usize, uniform: bool },
}

/// The executor's state that a loop's dry run copies and restores.
#[derive(Clone)]
pub(crate) struct ExecState {
    pub(crate) slots: Vec<Val>,
    pub(crate) scopes: Vec<Vec<(String, Binding)>>,
    pub(crate) regions: Vec<Region>,
    /// Field slots of aggregate variables, by (variable, field path).
    pub(crate) fields: HashMap<(usize, String), [usize; 2]>,
    /// Regions of local array declarations, by declaration (a loop body's
    /// declaration is the same array each iteration).
    pub(crate) local_regions: HashMap<usize, usize>,
    pub(crate) next_uid: usize,
    /// Whether regions keep the sets of elements each thread accessed
    /// (kernels with barrier invariants).
    pub(crate) track_access: bool,
}

impl ExecState {
    pub(crate) fn new() -> ExecState {
        ExecState {
            slots: Vec::new(),
            scopes: vec![Vec::new()],
            regions: Vec::new(),
            fields: HashMap::new(),
            local_regions: HashMap::new(),
            next_uid: 0,
            track_access: false,
        }
    }

    pub(crate) fn alloc(&mut self, v: Val) -> usize {
        self.slots.push(v);
        self.slots.len() - 1
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| b))
    }

    pub(crate) fn bind(&mut self, name: &str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), b));
        }
    }

    pub(crate) fn uid(&mut self) -> usize {
        self.next_uid += 1;
        self.next_uid
    }

    /// Adds an array with fresh contents (the same in both threads when
    /// `shared_contents`) and, unless private, empty logs.
    pub(crate) fn add_region(
        &mut self,
        name: &str,
        space: AddressSpace,
        elem: Option<(Type, u64)>,
        len_bytes: Option<u64>,
        span: Span,
    ) -> usize {
        let id = self.regions.len() as u64 + 1;
        let mem = elem.as_ref().map(|(_, size)| {
            let range = z3::Sort::bitvector((*size * 8) as u32);
            let dom = z3::Sort::bitvector(OFFSET_BITS);
            let common = z3::ast::Array::fresh_const(&format!("{name}.mem"), &dom, &range);
            // Global memory starts the same for both threads; shared memory is
            // the same only within a group (the executor assumes that), private
            // memory is each thread's own.
            let own = matches!(space, AddressSpace::Private | AddressSpace::Shared);
            let second = if own { z3::ast::Array::fresh_const(&format!("{name}.mem"), &dom, &range) } else { common.clone() };
            [self.alloc(Val::Mem(common)), self.alloc(Val::Mem(second))]
        });
        let logs = (space != AddressSpace::Private).then(|| {
            std::array::from_fn(|_| LogSlots {
                has: self.alloc(Val::Flag(Bool::from_bool(false))),
                off: self.alloc(Val::Bits(BV::from_u64(0, OFFSET_BITS))),
                size: self.alloc(Val::Bits(BV::from_u64(0, OFFSET_BITS))),
                site: self.alloc(Val::Bits(BV::from_u64(0, 32))),
                value: self.alloc(Val::Bits(BV::from_u64(0, 64))),
                handle: self.alloc(Val::Bits(BV::from_u64(0, 64))),
            })
        });
        let tracked = self.track_access && elem.is_some() && matches!(space, AddressSpace::Shared | AddressSpace::Global);
        let acc = tracked.then(|| [0, 1].map(|_| self.alloc(Val::Mem(super::barrier_inv::no_access()))));
        self.regions.push(Region { name: name.to_string(), space, id, elem, len_bytes, span, mem, logs, acc, init: None });
        self.regions.len() - 1
    }

    pub(crate) fn flag(&self, slot: usize) -> Bool {
        match &self.slots[slot] {
            Val::Flag(b) => b.clone(),
            _ => Bool::from_bool(false),
        }
    }

    pub(crate) fn bv(&self, slot: usize) -> BV {
        match &self.slots[slot] {
            Val::Bits(b) => b.clone(),
            _ => BV::from_u64(0, OFFSET_BITS),
        }
    }
}

/// Whether two terms are the same Z3 term (for the dry run's "modified" test).
pub(crate) fn same_term(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Bits(x), Val::Bits(y)) => x.ast_eq(y),
        (Val::Ptr { base: b1, off: o1 }, Val::Ptr { base: b2, off: o2 }) => b1.ast_eq(b2) && o1.ast_eq(o2),
        (Val::Flag(x), Val::Flag(y)) => x.ast_eq(y),
        (Val::Mem(x), Val::Mem(y)) => x.ast_eq(y),
        (Val::Opaque, Val::Opaque) => true,
        _ => false,
    }
}
