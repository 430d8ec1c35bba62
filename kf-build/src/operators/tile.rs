//! Workgroup-memory tiling of the matmul loop pattern, with register blocking.
//!
//! A naive matrix multiply gives every invocation one output and reads both operands straight
//! from global memory: each element of A and B is fetched once per output that uses it, and the
//! kernel runs at a small fraction of the GPU's arithmetic rate. Tiling lets a workgroup compute a
//! block of outputs, stage a slice of each operand through `var<workgroup>` memory once per block,
//! and (with register blocking) let each invocation accumulate several outputs in registers, so one
//! staged value feeds several multiply-adds.
//!
//! **What is proven from naga's IR** before anything is rewritten (see [`recognise`]; the shared
//! analysis in `analysis::ir` gives the builtins, the counted loop, its effects and the affine
//! index forms, `analysis::flow` the flow-sensitive values of locals, dependencies and the
//! re-emitting printer):
//! - the entry point reads only `global_invocation_id` (a `vec3<u32>`), and its body is, in order,
//!   straight-line code (locals assigned any number of times; naga's lowering of `&&`/`||`),
//!   bounds guards (`if c { return; }`, or the rest of the body wrapped in `if c { .. }`), exactly
//!   one loop, straight-line code (calls to pure functions among it: `gelu(acc)`, see
//!   `flow::is_pure`), exactly one store to a storage buffer, and nothing else (no other calls,
//!   atomics, barriers, other loops or other stores);
//! - the loop is a counted loop as `ir` recognises it (`for`, `while` with the step last, `loop`
//!   with `continuing`): an integer counter starting at an invariant value, continuing while
//!   `k < K` or `k <= K` with `K` invariant (a literal, constant, override, uniform, read-only
//!   storage at an invariant index, `arrayLength`), stepped by +1; its exit test comes first and
//!   its only other statements are the accumulation and the step (no calls, barriers, atomics,
//!   global writes or other loop-carried locals, per `ir::Analysis::loop_effects`);
//! - the loop body updates one `f32` accumulator as `acc + x * y` (either order) or
//!   `fma(x, y, acc)`, where `x` and `y` are `f32` loads from storage buffers whose indices are
//!   affine (`ir::IndexForm`) in the counter and in exactly one of `gid.x`/`gid.y` each —
//!   different ones — with uniform coefficients (plus `gid.z` for a batch). A flat id counts as
//!   two or three: where `gid.x`'s divisions and remainders spell mixed-radix digits
//!   (`ir::Analysis::digits`, read by `ir::Analysis::split_index_form`: `col = gid.x % n`, `row =
//!   (gid.x / n) % m`, `batch = gid.x / (m * n)`, however spelled) and `gid.y` is unused, digit 0
//!   is the x axis, digit 1 the y axis and a third digit the batch (z, with `gid.z` unused), and
//!   a bare `gid.x` is `batch * m * n + row * n + col`;
//! - the store after the loop writes a buffer other than the two operands, at an index affine in
//!   both `gid.x` and `gid.y`, a value that depends on the accumulator and not on the counter (any
//!   epilogue: bias, activation, scaling — it is re-emitted as written);
//! - the guards depend only on invocation-id components and invariants, and together on both
//!   output axes, so every output the rewrite may compute is either one the baseline computes or
//!   one the guard rejects. An axis no guard bounds is accepted where the baseline's launch is
//!   exact along it (counted in workgroups, or a grid extent that the spec's constraints make a
//!   multiple of the workgroup size): its outputs are then those below the grid, and the rewrite
//!   adds that bound itself, printed from the uniform the spec fills with the extent's sizes
//!   ([`exact_extents`]; on a flat id, the virtual flat id below the flat grid). Otherwise the
//!   skip names the constraint that would make it exact.
//!
//! **The rewrite** replaces the entry point's function (by its text range; the rest of the module
//! is kept byte for byte) with a 2-D workgroup of `TV×TU` invocations that computes a `BU×BV`
//! block of outputs, `RU×RV` per invocation. The loop walks `K` in slices of `BK`: every
//! invocation holds a fixed share of the next slice of both operands in registers (loaded while
//! the current slice is multiplied, coalesced along whichever of the counter or the axis has unit
//! stride in the operand's index, zero where the counter fails the loop condition), stores it to
//! `var<workgroup>` memory, barrier, multiply-accumulates from workgroup memory, barrier.
//! Accumulators and prefetch registers are named variables (`vec4<f32>` accumulators where the
//! block allows), all unrolled: an indexed private array spills to memory on NVIDIA. Each output
//! is then stored under the baseline's own guard with the baseline's own index and epilogue,
//! printed from the IR with `global_invocation_id` replaced by the output's virtual id — so the
//! code has no early return and every barrier is in uniform control flow.
//!
//! **Counter groups** (`Config::ks`): the workgroup holds `ks` groups of `TV×TU` invocations
//! over the same block; group `g` stages and multiplies slices `g, g + ks, ..` (one loop for
//! all, so every barrier stays in uniform control flow; a group's slice past the bound loads
//! zeros), then groups `1..ks` leave their sums in workgroup memory and group 0 adds them in group
//! order and stores. This is split-K inside one launch: a long reduction into a small output
//! (256×256 outputs over K = 65536) gets `ks` times the invocations without a second launch.
//!
//! **Split-K across workgroups** ([`Tile::split_k`], `Config::sk`): when even that leaves most of
//! the GPU idle (16 blocks of 64×64 on a GPU of 132 multiprocessors), workgroup `z` of `sk`
//! multiplies slices `z, z + sk, ..` and stores its bare partial sums into a workspace
//! (`kf_runtime::Workspace`, allocated by the runtime in a bind group after the app's, so the
//! app's layout is unchanged), and a second launch, `kft_combine`, one invocation per invocation
//! of the parent, adds them in order and stores the parent's epilogue of the total. The order of
//! additions is fixed, so a result does not depend on scheduling. In the rows form the columns
//! are split instead: workgroup `z` takes every `sk`-th step of column blocks, stores its rows'
//! sums over its columns, and the combine launch adds a row's `sk` sums and its initial value and
//! stores the row's epilogue (a linear layer summed over its features, KernelBench's
//! `GEMM_DIVIDE_SUM`, is 1024 rows: 128 workgroups of 8 rows leave the GPU half idle).
//!
//! **The launch rule** becomes workgroup counts over the baseline's grid, `(X + BX - 1) / BX` per
//! axis (`BX` the block extent along it) and the batch extent in z, so block sizes are literals
//! and each configuration is its own [`Rewrite`]. The slice depth is a literal too, although it
//! does not enter the launch rule: the number of prefetch registers depends on it, WGSL cannot
//! size a function-scope array by an `override`, and with the depth as an `override` (loops of
//! unknown trip count, no prefetch) the 64×64 kernel ran at half the speed on an H200. The
//! rewrites therefore introduce no `override` and leave [`Rewrite::params`] empty.
//!
//! **A flat id** launches `n` columns by `cdiv(X, n)` rows (`X` the parent's grid, `n` the
//! digit boundary's size from the spec: literals and uniform scalars the spec fills with sizes),
//! the virtual id of output `(row, col)` is `row * n + col`, and its store is also guarded by
//! `col < n`, without which a column past the divisor would name an output of the next row. With
//! a batch digit it launches `n` columns by `m` rows by `cdiv(X, m * n)` batches, and a store is
//! also guarded by `row < m`.
//!
//! **Vector operands** (`array<vec4<f32>>`, a `vec4<f32>` of outputs per invocation): when the
//! scalar pattern does not hold, [`super::lanes::split`] reads the kernel with one vector lane per
//! invocation over `f32` views of its buffers, re-rolling the per-component updates of an
//! iteration into one sum, and the tiling applies to that program (`lanes(4, x) → tile(..)`).
//!
//! **Limits.** Only `f32` operands and accumulator (vectors through the lane split); output coordinates must be components
//! of `global_invocation_id` or two or three digits of a flat id (four, two batch digits, are
//! skipped); a store without a bounds guard on an axis whose launch is not exact is
//! skipped (the rewrite computes whole blocks and could not tell which outputs the baseline
//! leaves alone); an
//! accumulator or counter declared without a value (`var acc: f32;`) is skipped; `f16` is
//! skipped; the accumulation order changes (within the
//! verifier's tolerance, like any reassociation). The kernel's own parameters are kept: a parent
//! whose overrides set the workgroup size keeps those constants, now unused by the entry point.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::flow::{
    Deps, Entry, Exprs, Factor, Guard, Locals, LoopPattern, Printer, TopLevel, Value,
    element_index, flatten, is_break, one_unit_loop, statement_kind, sum_of_products, unit_loop,
    walk_entry,
};
use crate::analysis::ir::{self, AccOp, Analysis, IndexForm, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::Program;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::program::{Dispatch, DispatchMode};
use kf_runtime::resolve::ResolvedKernel;
use naga::{Expression, Handle, Statement};
use std::fmt::Write as _;

/// The symbol numbers the pattern gives its loop-carried values.
const COUNTER: usize = 0;
const ACC: usize = 1;
/// In the rows form, the column loop's counter and the row's accumulator.
const COL: usize = 2;
const ROW: usize = 3;

/// Prefix of every identifier the rewrite introduces (a source that already has it is skipped).
const PREFIX: &str = "kft_";

/// One block configuration: outputs per workgroup and per invocation along the two axes, and the
/// depth of a staged slice. `u` is the axis of the first operand, `v` the output's contiguous axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Outputs per workgroup along u.
    pub bu: u32,
    /// Outputs per workgroup along v.
    pub bv: u32,
    /// Outputs per invocation along u.
    pub ru: u32,
    /// Outputs per invocation along v.
    pub rv: u32,
    /// Counter values per staged slice.
    pub bk: u32,
    /// Groups of invocations that split the counter's range: group `g` multiplies slices
    /// `g, g + ks, ..`, and the groups' sums are added in workgroup memory before the stores.
    /// More invocations for the same block: the GPU stays busy when the output has few blocks
    /// (a long reduction into a small output) or when each invocation holds many outputs. In
    /// the rows form the groups split the columns instead: group `g` takes block `g` of every
    /// `ks` blocks of columns, and the row's partial sums of all groups are added at the end.
    pub ks: u32,
    /// Workgroups that split the counter's range (split-K across workgroups, `tile-split-k`):
    /// workgroup `z` multiplies slices `z, z + sk, ..` (of its groups' slices) and leaves its
    /// partial sums in the program's workspace, which a second launch adds up in order before
    /// the epilogue. 1 for one launch.
    pub sk: u32,
}

impl Config {
    /// A configuration: outputs per workgroup and per invocation along u and v, slice depth,
    /// groups.
    pub const fn new(bu: u32, bv: u32, ru: u32, rv: u32, bk: u32, ks: u32) -> Config {
        Config {
            bu,
            bv,
            ru,
            rv,
            bk,
            ks,
            sk: 1,
        }
    }
    /// This configuration split across `sk` workgroups along the counter.
    pub const fn split(self, sk: u32) -> Config {
        Config { sk, ..self }
    }
    /// Invocations along u.
    pub fn tu(&self) -> u32 {
        self.bu / self.ru
    }
    /// Invocations along v.
    pub fn tv(&self) -> u32 {
        self.bv / self.rv
    }
    /// Invocations of one counter group.
    pub fn group_invocations(&self) -> u32 {
        self.tu() * self.tv()
    }
    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        self.group_invocations() * self.ks
    }
    /// Whether accumulators and staged slices are `vec4<f32>`.
    fn vec4(&self) -> bool {
        self.ru.is_multiple_of(4) && self.rv.is_multiple_of(4)
    }
    /// Elements of one staged slice row (one counter value), padded against bank conflicts, in
    /// units of the slice's element type.
    fn stride(&self, extent: u32) -> u32 {
        if self.vec4() {
            extent / 4 + 1
        } else {
            extent + 1
        }
    }
    /// Bytes of workgroup memory.
    pub fn storage_bytes(&self) -> u64 {
        let elem = if self.vec4() { 16 } else { 4 };
        let tiles = u64::from(self.stride(self.bu) + self.stride(self.bv)) * u64::from(self.bk);
        // Each group's slices, and the sums of every group but the first.
        tiles * elem * u64::from(self.ks)
            + u64::from(self.ks - 1) * u64::from(self.bu) * u64::from(self.bv) * 4
    }
    /// Bytes of workgroup memory in the rows form: each group's slices, and a partial sum per
    /// row and column invocation.
    pub fn rows_storage_bytes(&self) -> u64 {
        let elem = if self.vec4() { 16 } else { 4 };
        let tiles = u64::from(self.stride(self.bu) + self.stride(self.bv)) * u64::from(self.bk);
        tiles * elem * u64::from(self.ks) + u64::from(self.bu * self.tv() * self.ks) * 4
    }
    /// Elements of each slice one invocation loads (the prefetch registers per operand).
    fn loads(&self, extent: u32) -> u32 {
        extent * self.bk / self.group_invocations()
    }
    /// `64x64 4x4 k16`.
    fn label(&self) -> String {
        let mut split = if self.ks > 1 {
            format!(", {} counter groups", self.ks)
        } else {
            String::new()
        };
        if self.sk > 1 {
            split.push_str(&format!(", split {} ways", self.sk));
        }
        format!(
            "{}x{}, {}x{} per invocation, k{}{split}",
            self.bu, self.bv, self.ru, self.rv, self.bk
        )
    }
}

/// The tiling operator. [`Tile::shared`] stages tiles only (one output per invocation);
/// [`Tile::blocked`] adds register blocking. They are two operators because they move the memory
/// dimension by different amounts.
#[derive(Clone, Copy, Debug)]
pub struct Tile {
    register_blocking: bool,
    /// Split-K across workgroups, a launch sequence with a workspace ([`Tile::split_k`]).
    split_k: bool,
}

impl Tile {
    /// Workgroup tiling, one output per invocation (16×16 blocks).
    pub const fn shared() -> Self {
        Tile {
            register_blocking: false,
            split_k: false,
        }
    }

    /// Workgroup tiling with register blocking (64×64 blocks with 4×4 or 8×8 per invocation,
    /// 64×128 with 4×8, 128×128 with 8×8).
    pub const fn blocked() -> Self {
        Tile {
            register_blocking: true,
            split_k: false,
        }
    }

    /// Split-K (`tile-split-k`): the blocked tiling with the counter's range split across
    /// workgroups as well, for products whose outputs are too few to fill the GPU (256×256 over
    /// K = 65536, or a tall product with a narrow output). The variant is two launches: the
    /// tiled product writes each workgroup's partial sums to a workspace the runtime allocates,
    /// then one invocation per output adds them in a fixed order and applies the epilogue.
    pub const fn split_k() -> Self {
        Tile {
            register_blocking: true,
            split_k: true,
        }
    }

    /// The configurations this operator offers.
    pub fn configs(&self) -> &'static [Config] {
        const SPLIT: [Config; 5] = [
            Config::new(64, 64, 4, 4, 16, 1).split(8),
            Config::new(64, 64, 4, 4, 16, 1).split(32),
            Config::new(64, 64, 8, 8, 16, 1).split(16),
            Config::new(128, 64, 8, 4, 16, 1).split(16),
            Config::new(32, 32, 4, 4, 16, 4).split(8),
        ];
        if self.split_k {
            return &SPLIT;
        }
        const BLOCKED: [Config; 10] = [
            Config::new(64, 64, 4, 4, 16, 1),
            Config::new(64, 64, 8, 8, 16, 1),
            Config::new(64, 128, 4, 8, 8, 1),
            Config::new(128, 128, 8, 8, 8, 1),
            Config::new(128, 64, 8, 4, 16, 1),
            Config::new(64, 64, 4, 4, 32, 1),
            Config::new(64, 64, 8, 8, 16, 2),
            Config::new(64, 64, 4, 4, 16, 2),
            Config::new(32, 32, 4, 4, 16, 4),
            Config::new(16, 16, 2, 2, 16, 8),
        ];
        const SHARED: [Config; 2] = [
            Config::new(16, 16, 1, 1, 16, 1),
            Config::new(16, 16, 1, 1, 16, 4),
        ];
        if self.register_blocking {
            &BLOCKED
        } else {
            &SHARED
        }
    }

    /// The configurations of the rows form: fewer rows per block, so that a short column of rows
    /// still fills the GPU, and groups (`ks`) that split the columns rather than the counter.
    pub fn row_configs(&self) -> &'static [Config] {
        // Split across workgroups: blocks of 16 or 32 rows by 64 or 128 columns, the columns
        // dealt to 4 or 8 workgroups (a row's columns must span several blocks for all of them
        // to have work).
        const SPLIT: [Config; 4] = [
            Config::new(16, 64, 2, 4, 16, 1).split(8),
            Config::new(16, 128, 2, 4, 16, 1).split(4),
            Config::new(32, 64, 4, 4, 16, 1).split(8),
            Config::new(8, 64, 1, 4, 16, 4).split(2),
        ];
        if self.split_k {
            return &SPLIT;
        }
        const BLOCKED: [Config; 8] = [
            Config::new(8, 64, 1, 4, 16, 4),
            Config::new(8, 128, 4, 4, 16, 4),
            Config::new(16, 64, 2, 4, 16, 4),
            Config::new(16, 64, 4, 4, 16, 4),
            Config::new(32, 64, 4, 4, 16, 2),
            Config::new(16, 64, 2, 4, 16, 1),
            Config::new(16, 128, 2, 4, 16, 1),
            Config::new(32, 128, 4, 4, 16, 1),
        ];
        const SHARED: [Config; 2] = [
            Config::new(16, 16, 1, 1, 16, 1),
            Config::new(8, 32, 1, 1, 32, 2),
        ];
        if self.register_blocking {
            &BLOCKED
        } else {
            &SHARED
        }
    }
}

impl Operator for Tile {
    fn name(&self) -> &'static str {
        if self.split_k {
            "tile-split-k"
        } else if self.register_blocking {
            "tile-blocked"
        } else {
            "tile"
        }
    }

    fn moves(&self) -> Moves {
        if self.split_k {
            &[(Dim::Memory, 3), (Dim::Compute, 3), (Dim::Parallelism, 3)]
        } else if self.register_blocking {
            &[(Dim::Memory, 3), (Dim::Compute, 3), (Dim::Parallelism, 1)]
        } else {
            &[(Dim::Memory, 2), (Dim::Compute, 3), (Dim::Parallelism, 1)]
        }
    }

    fn fixes_workgroup(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        if subject.program.wgsl.contains(PREFIX) {
            return Err(Skip("already tiled".into()));
        }
        let skip = match self.tile(subject) {
            Ok(rewrites) => return Ok(rewrites),
            Err(skip) => skip,
        };
        // Vector operands: tile the program with one lane per invocation (`lanes`), when the
        // vector pattern holds; otherwise the reason is the scalar pattern's.
        let Ok(lanes) = super::lanes::split(subject) else {
            return Err(skip);
        };
        let split = Subject {
            program: &lanes.program,
            ..*subject
        };
        let rewrites = self.tile(&split).map_err(|Skip(why)| {
            Skip(format!(
                "{skip}; with one vector lane per invocation ({}): {why}",
                lanes.step
            ))
        })?;
        Ok(rewrites
            .into_iter()
            .map(|mut r| {
                r.step = format!("{} → {}", lanes.step, r.step);
                r
            })
            .collect())
    }
}

impl Tile {
    /// The rewrites of `subject`'s program, whose pattern is the scalar one.
    fn tile(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        super::invocations_expressible(subject)?;
        let parsed = ir::parse(wgsl).map_err(|e| Skip(e.to_string()))?;
        let analysis = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let entry = Entry::new(&analysis)?;
        let (mut matmul, locals) = recognise(&entry, &analysis, subject.kernel)?;
        let x = Exprs {
            e: &entry,
            locals: &locals,
        };
        matmul.extents = exact_extents(&matmul, &analysis, subject)?;
        let range = analysis.entry_range()?;

        let target = subject.target;
        let storage = target.limit("max_compute_workgroup_storage_size", 16384);
        let split_k = if self.split_k {
            Some(SplitK::plan(&matmul, subject)?)
        } else {
            None
        };
        let mut rewrites = Vec::new();
        let mut reasons = Vec::new();
        let (configs, row_bytes, form) = match matmul.rows {
            Some(_) => (self.row_configs(), true, "rows, "),
            None => (self.configs(), false, ""),
        };
        // The rows form's groups split the columns.
        let label = |cfg: &Config| {
            if row_bytes {
                cfg.label().replace("counter groups", "column groups")
            } else {
                cfg.label()
            }
        };
        for cfg in configs {
            let bytes = if row_bytes {
                cfg.rows_storage_bytes()
            } else {
                cfg.storage_bytes()
            };
            let fits = u64::from(cfg.invocations())
                <= target.limit("max_compute_invocations_per_workgroup", 256)
                && u64::from(cfg.tv()) <= target.limit("max_compute_workgroup_size_x", 256)
                && u64::from(cfg.tu()) <= target.limit("max_compute_workgroup_size_y", 256)
                && u64::from(cfg.ks) <= target.limit("max_compute_workgroup_size_z", 64)
                && bytes <= storage;
            if !fits {
                reasons.push(format!(
                    "{} exceeds the adapter's workgroup limits",
                    label(cfg)
                ));
                continue;
            }
            if let Some(plan) = &split_k
                && let Some(bytes) = plan.too_large(subject, cfg.sk)
            {
                reasons.push(format!(
                    "{}: a workspace of {bytes} bytes on a tune shape exceeds the adapter's storage binding size",
                    label(cfg)
                ));
                continue;
            }
            let mut function = generate(&matmul, &x, cfg, &program.entry)?;
            if let Some(plan) = &split_k {
                function = format!(
                    "{}{function}\n{}",
                    plan.declaration(),
                    combine(&matmul, &x, program, cfg.sk)?
                );
            }
            let mut rewritten = super::replaced_entry(
                program,
                range.clone(),
                &function,
                [cfg.tv(), cfg.tu(), cfg.ks],
                bytes as u32,
                launch_rule(&matmul, program, cfg),
            );
            if let Some(plan) = &split_k {
                plan.apply(&mut rewritten, program, cfg.sk);
            }
            rewrites.push(Rewrite {
                program: rewritten,
                step: format!("{}({form}{})", self.name(), label(cfg)),
                params: Vec::new(),
            });
        }
        if rewrites.is_empty() {
            return Err(Skip(reasons.join("; ")));
        }
        Ok(rewrites)
    }
}

/// How a skip for an unguarded store whose launch is not exact begins (see [`constraint_hint`]).
const INEXACT_LAUNCH: &str = "the store is not guarded on gid.";

/// When a matmul is kept from tiling only because its store has no bounds guard and its launch is
/// not provably exact, a note for the user saying which constraint would make it exact (`tune`
/// prints it with the kernel's result).
pub fn constraint_hint(kernel: &ResolvedKernel) -> Option<String> {
    let why = super::skip_reason(&Tile::shared(), kernel)?;
    if !why.starts_with(INEXACT_LAUNCH) || !why.contains("constraints(") {
        return None;
    }
    Some(format!(
        "tile (workgroup-memory tiling of the matmul) is kept out: {why}. Declaring the \
         constraint lets tile add the bounds itself (the runtime then refuses dispatches that \
         break it)"
    ))
}

/// One operand of the product: its load, and how to read it coalesced.
#[derive(Clone, Copy, Debug)]
struct Operand {
    load: Handle<Expression>,
    /// Consecutive counter values are adjacent in memory (unit coefficient of the counter).
    counter_fastest: bool,
}

/// The matmul pattern, proven.
#[derive(Clone, Debug)]
pub struct Matmul {
    counter_ty: String,
    counter_start: Value,
    /// The loop continues while `cond == continue_when`.
    cond: Handle<Expression>,
    continue_when: bool,
    acc_init: Value,
    /// The operands indexed along u and along v.
    operands: [Operand; 2],
    u_axis: usize,
    v_axis: usize,
    batch: bool,
    guards: Vec<Guard>,
    store_pointer: Handle<Expression>,
    store_value: Handle<Expression>,
    /// The stored element's index, and the output's `@group`/`@binding`.
    store_index: Handle<Expression>,
    out_binding: (u32, u32),
    /// A flat id: `gid.x` taken apart by `/` and `%` into the column (slot x), the row (slot y)
    /// and perhaps the batch (slot z); the kernel reads no `gid.y`, and `gid.z` only as the batch
    /// of a flat id of two digits.
    split: Option<Split>,
    /// The rows form: the output is one value per row, a sum over a column loop around the
    /// product (u is `gid.x`, v the column counter).
    rows: Option<Rows>,
    /// Output axes (0 for x, 1 for y, 2 for a batch) that no guard of the baseline bounds.
    unguarded: Vec<usize>,
    /// The bounds the rewrite adds on those axes (`kft_gid.x < u32(dims.n)`): the baseline's
    /// launch is exact there, so its outputs are those below its grid ([`exact_extents`]).
    extents: Vec<String>,
}

/// The column loop of the rows form, proven.
#[derive(Clone, Debug)]
struct Rows {
    counter_ty: String,
    start: Value,
    cond: Handle<Expression>,
    continue_when: bool,
    /// The row accumulator's value before the loop.
    init: Value,
    /// `total + f(dot, j)`, over the symbols ACC, COL and ROW.
    update: Handle<Expression>,
}

/// A flat id taken apart into digits (`ir::Analysis::digits`): digit 0 is the column (slot x),
/// digit 1 the row (slot y) and, with three digits, digit 2 the batch (slot z). The flat id is
/// `col + row·B₁ (+ batch·B₂)`.
#[derive(Clone, Debug)]
struct Split {
    /// The digit boundaries `B₁` (and `B₂`).
    bounds: Vec<Factor>,
    /// With a batch digit, the row's radix `B₂ / B₁`: a row past it is a row of the next batch.
    rows: Option<Factor>,
}

/// Walks the entry point's statements, proving the pattern.
struct Walk<'a> {
    e: &'a Entry<'a>,
    ir: &'a Analysis<'a>,
    top: TopLevel,
    looped: Option<LoopFacts>,
    /// The column loop around the product's loop, in the rows form.
    outer: Option<OuterFacts>,
}

/// The column loop of the rows form: `for (var j = ..; j < J; j++) { dot = ..; for .. { dot +=
/// x * y } total = total + f(dot, j); }`.
#[derive(Clone, Copy, Debug)]
struct OuterFacts {
    counter_ty: Handle<naga::Type>,
    counter: Handle<naga::LocalVariable>,
    start: Value,
    cond: Handle<Expression>,
    continue_when: bool,
    /// The row accumulator's value before the loop, and its update.
    init: Value,
    update: Handle<Expression>,
}

#[derive(Clone, Copy, Debug)]
struct LoopFacts {
    counter: Handle<naga::LocalVariable>,
    counter_ty: Handle<naga::Type>,
    counter_start: Value,
    cond: Handle<Expression>,
    continue_when: bool,
    acc_init: Value,
    update: Handle<Expression>,
}

impl LoopPattern for Walk<'_> {
    fn top(&mut self) -> &mut TopLevel {
        &mut self.top
    }

    fn on_loop(
        &mut self,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<(), Skip> {
        let a = self.ir;
        if a.loops.len() == 2 && a.loops[1].parent == Some(0) {
            self.outer = Some(self.outer_loop(body, continuing, break_if)?);
        } else {
            self.looped = Some(self.main_loop(0, body, continuing, break_if)?);
        }
        Ok(())
    }
}

impl<'a> Walk<'a> {
    /// The one loop: a counted loop (as `ir` recognises it: `for`, `while`, `loop` with
    /// `continuing`) stepping its counter by +1 while `counter < K` or `counter <= K`, whose only
    /// effect is one f32 `+` accumulator. Binds the loads in its body to the counter and the
    /// accumulator as symbols.
    fn main_loop(
        &mut self,
        id: usize,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<LoopFacts, Skip> {
        let (e, a) = (self.e, self.ir);
        if break_if.is_some() {
            return Err(Skip("the kernel does not have exactly one loop".into()));
        }
        let fl = if id == 0 {
            one_unit_loop(a)?
        } else {
            unit_loop(a, id)?
        };
        // The accumulator: `ir` recognises `acc = acc + f`; `acc = fma(x, y, acc)` it reports as
        // loop-carried, and the update's shape is checked below either way.
        let fx = a.loop_effects(id);
        let mut candidates: Vec<Handle<naga::LocalVariable>> = fx
            .accumulators
            .iter()
            .filter(|acc| acc.op == AccOp::Add)
            .map(|acc| acc.var)
            .chain(fx.carried.iter().map(|(v, _)| *v))
            .collect();
        candidates.dedup();
        let [acc] = candidates[..] else {
            return Err(Skip(
                "the loop does not update exactly one accumulator".into(),
            ));
        };
        if fx.accumulators.len() + fx.carried.len() != 1
            || !matches!(
                e.module.types[e.func.local_variables[acc].ty].inner,
                naga::TypeInner::Scalar(naga::Scalar::F32)
            )
        {
            return Err(Skip("the loop does not update exactly one f32 sum".into()));
        }
        if !fx.global_writes.is_empty() || !fx.effectful_calls.is_empty() || !fx.other.is_empty() {
            return Err(Skip("the loop has effects besides the accumulation".into()));
        }
        let counter = fl.var;
        let (counter_start, acc_init) = self.values_on_entry(fl, acc, "loop")?;
        self.top
            .locals
            .current
            .insert(counter, Value::Symbol(COUNTER));
        self.top.locals.current.insert(acc, Value::Symbol(ACC));

        // The body: its exit test first, then only the accumulation and the counter's step.
        let mut list = Vec::new();
        flatten(body, &mut list);
        let mut exit_seen = false;
        let mut update = None;
        let mut cont = Vec::new();
        flatten(continuing, &mut cont);
        for s in list.into_iter().chain(cont) {
            match s {
                Statement::Emit(r) => self.top.locals.emit(e, r)?,
                Statement::If { accept, reject, .. }
                    if !exit_seen
                        && update.is_none()
                        && ((accept.is_empty() && is_break(reject))
                            || (is_break(accept) && reject.is_empty())) =>
                {
                    exit_seen = true;
                }
                Statement::Store { pointer, value }
                    if exit_seen && e.as_local(*pointer) == Some(acc) && update.is_none() =>
                {
                    update = Some(*value);
                    // Reading it again in the same iteration would read the new value.
                    self.top.locals.current.remove(&acc);
                }
                Statement::Store { pointer, .. }
                    if exit_seen && e.as_local(*pointer) == Some(counter) =>
                {
                    // The step (`ir` proved it is `+ 1`); nothing may read the counter after it.
                    self.top.locals.current.remove(&counter);
                }
                other => {
                    return Err(Skip(format!(
                        "the loop has {} besides its test, accumulation and step",
                        statement_kind(other)
                    )));
                }
            }
        }
        let update =
            update.ok_or_else(|| Skip("the loop does not update the accumulator".into()))?;
        self.top.locals.current.remove(&counter);
        self.top.locals.current.insert(acc, Value::Symbol(ACC));
        Ok(LoopFacts {
            counter,
            counter_ty: fl.var_ty,
            counter_start,
            cond: fl.cond,
            continue_when: !fl.cond_negated,
            acc_init,
            update,
        })
    }

    /// The values of a counted loop's counter and of its accumulator on entry, both required;
    /// the start and the bound must be the same for every invocation. `what` names the loop in
    /// the reasons.
    fn values_on_entry(
        &self,
        fl: &ir::ForLoop,
        acc: Handle<naga::LocalVariable>,
        what: &str,
    ) -> Result<(Value, Value), Skip> {
        let value = |v: Handle<naga::LocalVariable>, name: &str| {
            self.top
                .locals
                .current
                .get(&v)
                .copied()
                .ok_or_else(|| Skip(format!("the {what}'s {name} has no value before it")))
        };
        let (start, init) = (value(fl.var, "counter")?, value(acc, "accumulator")?);
        let x = Exprs {
            e: self.e,
            locals: &self.top.locals,
        };
        let invariant = |v: Value| match v {
            Value::Expr(h) => x.deps(h).is_invariant(),
            _ => false,
        };
        if !invariant(start) || !x.deps(fl.bounds[0].bound).is_invariant() {
            return Err(Skip(format!(
                "the {what}'s start or bound varies between invocations"
            )));
        }
        Ok((start, init))
    }

    /// The column loop of the rows form (see the module documentation): a counted loop stepping
    /// by one over an invariant range whose body sets the product's accumulator, runs the
    /// product's loop ([`Walk::main_loop`]) and adds a function of the product and the column to
    /// one `f32` row accumulator, with no other effect.
    fn outer_loop(
        &mut self,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<OuterFacts, Skip> {
        let (e, a) = (self.e, self.ir);
        if break_if.is_some() {
            return Err(Skip("the column loop ends with `break if`".into()));
        }
        let fl = unit_loop(a, 0)?;
        let fx = a.loop_effects(0);
        if !fx.global_writes.is_empty()
            || !fx.effectful_calls.is_empty()
            || !fx.other.is_empty()
            || !fx.args.is_empty()
        {
            return Err(Skip(
                "the column loop has effects besides its accumulation".into(),
            ));
        }
        // Locals the product's loop writes (its accumulator and counter) are reset by every
        // column; the row accumulator is the one other local the column loop carries.
        let inner: Vec<Handle<naga::LocalVariable>> = a
            .loop_stmts(1)
            .filter_map(|s| match *a.stmts[s].stmt {
                Statement::Store { pointer, .. } => a.local_root(pointer),
                _ => None,
            })
            .collect();
        let accs: Vec<&ir::Accumulator> = fx
            .accumulators
            .iter()
            .filter(|acc| !inner.contains(&acc.var))
            .collect();
        let [acc] = accs[..] else {
            return Err(Skip(
                "the column loop does not update exactly one accumulator".into(),
            ));
        };
        if acc.op != AccOp::Add
            || !matches!(
                e.module.types[acc.ty].inner,
                naga::TypeInner::Scalar(naga::Scalar::F32)
            )
        {
            return Err(Skip(
                "the column loop's accumulator is not an f32 sum".into(),
            ));
        }
        if let Some((v, why)) = fx
            .carried
            .iter()
            .find(|(v, _)| !inner.contains(v) && !fx.private.contains(v))
        {
            return Err(Skip(format!(
                "the column loop carries `{}` ({why})",
                crate::analysis::flow::local_name(e, *v)
            )));
        }
        let counter = fl.var;
        let (start, init) = self.values_on_entry(fl, acc.var, "column loop")?;
        self.top.locals.current.insert(counter, Value::Symbol(COL));
        self.top.locals.current.insert(acc.var, Value::Symbol(ROW));
        let mut list = Vec::new();
        flatten(body, &mut list);
        let mut cont = Vec::new();
        flatten(continuing, &mut cont);
        let mut exit_seen = false;
        let mut update = None;
        for s in list.into_iter().chain(cont) {
            match s {
                Statement::Emit(r) => self.top.locals.emit(e, r)?,
                Statement::If { accept, reject, .. }
                    if !exit_seen
                        && ((accept.is_empty() && is_break(reject))
                            || (is_break(accept) && reject.is_empty())) =>
                {
                    exit_seen = true;
                }
                Statement::Store { pointer, value } if exit_seen => {
                    let Some(l) = e.as_local(*pointer) else {
                        return Err(Skip("the column loop stores to memory".into()));
                    };
                    if l == acc.var {
                        if self.looped.is_none() || update.is_some() {
                            return Err(Skip(
                                "the row accumulator is not updated once, after the product".into(),
                            ));
                        }
                        update = Some(*value);
                        self.top.locals.current.remove(&l);
                    } else if l == counter {
                        // The step (`ir` proved it is `+ 1`).
                        self.top.locals.current.remove(&l);
                    } else {
                        self.top.locals.current.insert(l, Value::Expr(*value));
                    }
                }
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } if exit_seen && self.looped.is_none() => {
                    self.looped = Some(self.main_loop(1, body, continuing, *break_if)?);
                }
                Statement::Call {
                    function,
                    arguments,
                    result,
                } if self.top.locals.call(e, *function, arguments, *result) => {}
                other => {
                    return Err(Skip(format!(
                        "the column loop has {} besides its test, product and accumulation",
                        statement_kind(other)
                    )));
                }
            }
        }
        let update =
            update.ok_or_else(|| Skip("the column loop does not update its accumulator".into()))?;
        self.top.locals.current.remove(&counter);
        self.top.locals.current.insert(acc.var, Value::Symbol(ROW));
        Ok(OuterFacts {
            counter_ty: fl.var_ty,
            counter,
            start,
            cond: fl.cond,
            continue_when: !fl.cond_negated,
            init,
            update,
        })
    }
}

/// Proves the matmul pattern on `e`, or says why it does not hold.
pub fn recognise<'a>(
    e: &'a Entry<'a>,
    ir: &'a Analysis<'a>,
    kernel: &ResolvedKernel,
) -> Result<(Matmul, Locals), Skip> {
    if e.gid_arg.is_none() {
        return Err(Skip(
            "the entry point does not read global_invocation_id".into(),
        ));
    }
    let split = flat_id(ir, kernel)?;
    let mut walk = Walk {
        e,
        ir,
        top: TopLevel::new(e.func),
        looped: None,
        outer: None,
    };
    walk_entry(&mut walk, e, &e.func.body)?;
    let facts = walk.looped.ok_or_else(|| Skip("no loop".into()))?;
    let outer = walk.outer;
    if outer.is_some() && split.is_some() {
        return Err(Skip("a column loop with a flat id".into()));
    }
    let col = outer.map(|o| o.counter);
    let (store_pointer, store_value) = walk
        .top
        .store
        .ok_or_else(|| Skip("no store after the loop".into()))?;
    let locals = walk.top.locals;
    let guards = walk.top.guards;
    let x = Exprs { e, locals: &locals };

    // The accumulation: acc + x*y, x*y + acc, or fma(x, y, acc).
    let is_acc = |h: Handle<Expression>| locals.loads.get(&h) == Some(&Value::Symbol(ACC));
    let pair = sum_of_products(e, facts.update, is_acc);
    let (p, q) =
        pair.ok_or_else(|| Skip("the accumulator is not updated by a sum of products".into()))?;

    // The store.
    let out = e
        .root_global(store_pointer)
        .filter(|g| e.is_writable_storage(*g))
        .ok_or_else(|| Skip("the result is not stored to a storage buffer".into()))?;
    let store_index = element_index(e, store_pointer)
        .ok_or_else(|| Skip("the result is not stored to an array element".into()))?;
    let out_binding = e.module.global_variables[out]
        .binding
        .as_ref()
        .map(|b| (b.group, b.binding))
        .ok_or_else(|| Skip("the output has no binding".into()))?;
    let store_affine = form(ir, store_index, facts.counter, split.is_some(), col)
        .filter(|f| f.counter.is_none() && f.col.is_none())
        .ok_or_else(|| Skip("the output index is not affine in the invocation id".into()))?;
    let value_deps = x.deps(store_value);
    let result = if outer.is_some() { ROW } else { ACC };
    if !value_deps.has_symbol(result) || value_deps.symbols != 1 << result || value_deps.unknown {
        return Err(Skip(
            "the stored value is not a function of the accumulator".into(),
        ));
    }

    // The operands.
    let mut axes = [0usize; 2];
    let mut batch = store_affine.gid[2].is_some();
    let mut ops = [None, None];
    for (n, load) in [p, q].into_iter().enumerate() {
        let Expression::Load { pointer } = e.func.expressions[load] else {
            return Err(Skip(
                "a factor of the product is not a load from memory".into(),
            ));
        };
        let g = e
            .root_global(pointer)
            .ok_or_else(|| Skip("a factor of the product is not a load from memory".into()))?;
        if g == out {
            return Err(Skip("an operand is the output buffer".into()));
        }
        if !matches!(
            e.module.global_variables[g].space,
            naga::AddressSpace::Storage { .. }
        ) || !matches!(e.ty(load), naga::TypeInner::Scalar(naga::Scalar::F32))
        {
            return Err(Skip("an operand is not an f32 storage buffer".into()));
        }
        let index = element_index(e, pointer)
            .ok_or_else(|| Skip("an operand is not read by array index".into()))?;
        let a = form(ir, index, facts.counter, split.is_some(), col).ok_or_else(|| {
            Skip(
                "an operand's index is not affine in the invocation id and the loop counter".into(),
            )
        })?;
        let Some(counter_unit) = a.counter else {
            return Err(Skip(
                "an operand's index does not step with the loop counter".into(),
            ));
        };
        // In the rows form the column counter is the second axis.
        let mut planar: Vec<usize> = (0..2).filter(|&d| a.gid[d].is_some()).collect();
        if a.col.is_some() {
            planar.push(1);
        }
        if outer.is_some() && (a.gid[1].is_some() || a.gid[2].is_some()) {
            return Err(Skip(
                "an operand of a column loop's product reads gid.y or gid.z".into(),
            ));
        }
        let [axis] = planar[..] else {
            return Err(Skip(
                "an operand's index does not use exactly one of gid.x and gid.y".into(),
            ));
        };
        batch |= a.gid[2].is_some();
        axes[n] = axis;
        let axis_unit = if a.col.is_some() { a.col } else { a.gid[axis] };
        ops[n] = Some(Operand {
            load,
            counter_fastest: counter_unit || axis_unit != Some(true),
        });
    }
    if axes[0] == axes[1] {
        return Err(Skip(
            "both operands are indexed by the same invocation axis".into(),
        ));
    }
    if outer.is_some() {
        if store_affine.gid[0].is_none() || store_affine.gid[1].is_some() || batch {
            return Err(Skip(
                "the row's result is not stored at an index of gid.x alone".into(),
            ));
        }
    } else if store_affine.gid[0].is_none() || store_affine.gid[1].is_none() {
        return Err(Skip(
            "the output index does not use both gid.x and gid.y".into(),
        ));
    }

    // The guards.
    let mut guarded = [false; 3];
    for g in &guards {
        let d = x.deps(g.cond);
        if d.symbols != 0 || d.unknown || d.gid_whole || d.varying_load {
            return Err(Skip(
                "a guard is not a bounds test on the invocation id".into(),
            ));
        }
        let mut used = d.gid;
        if split.is_some() {
            // A bound on the flat id bounds the row (or the batch); the column (and the row
            // under a batch) is bounded by its radix, a guard the rewrite adds.
            used[1] |= used[0];
            used[2] |= used[0];
        }
        for (seen, used) in guarded.iter_mut().zip(used) {
            *seen |= used;
        }
        batch |= d.gid[2];
    }
    if outer.is_some() && (!guarded[0] || guarded[1] || guarded[2]) {
        return Err(Skip(
            "the row's store is not guarded by a bound on gid.x alone".into(),
        ));
    }
    // Axes without a bound: the rewrite adds one where the launch is exact (`apply`). A flat id's
    // one bound is on gid.x itself (its row and column radices are guarded by the rewrite).
    let mut unguarded: Vec<usize> = if outer.is_some() {
        Vec::new()
    } else if split.is_some() {
        (0..1).filter(|&d| !guarded[d]).collect()
    } else {
        (0..2).filter(|&d| !guarded[d]).collect()
    };
    let init_deps = match facts.acc_init {
        Value::Expr(h) => x.deps(h),
        _ => Deps {
            unknown: true,
            ..Deps::default()
        },
    };
    // In the rows form the product may start at a value of the column (`z = bias[j]`).
    let allowed = if outer.is_some() { 1 << COL } else { 0 };
    if init_deps.symbols & !allowed != 0 || init_deps.unknown {
        return Err(Skip(
            "the accumulator's initial value is not understood".into(),
        ));
    }
    batch |= init_deps.gid[2] || value_deps.gid[2];
    if batch && !guarded[2] {
        // The rewrite launches the batches exactly; the baseline's launch must too.
        unguarded.push(2);
    }
    let rows = match outer {
        None => None,
        Some(o) => {
            let row_init = match o.init {
                Value::Expr(h) => x.deps(h),
                _ => Deps {
                    unknown: true,
                    ..Deps::default()
                },
            };
            if row_init.symbols != 0 || row_init.unknown || row_init.gid[1] || row_init.gid[2] {
                return Err(Skip(
                    "the row accumulator's initial value is not understood".into(),
                ));
            }
            let update = x.deps(o.update);
            if update.unknown
                || update.has_symbol(COUNTER)
                || update.gid[1]
                || update.gid[2]
                || !update.has_symbol(ROW)
            {
                return Err(Skip(
                    "the row accumulator's update is not a function of the product and the column"
                        .into(),
                ));
            }
            if batch {
                return Err(Skip("a column loop in a batched kernel".into()));
            }
            Some(Rows {
                counter_ty: e.type_name(o.counter_ty),
                start: o.start,
                cond: o.cond,
                continue_when: o.continue_when,
                init: o.init,
                update: o.update,
            })
        }
    };

    // v is the output's unit-stride axis when there is one, else the second operand's.
    let v_axis = if rows.is_some() {
        1
    } else if store_affine.gid[axes[0]] == Some(true) && store_affine.gid[axes[1]] != Some(true) {
        axes[0]
    } else {
        axes[1]
    };
    let u_axis = 1 - v_axis;
    let (ou, ov) = if axes[0] == u_axis {
        (ops[0], ops[1])
    } else {
        (ops[1], ops[0])
    };
    let counter_ty = e.type_name(facts.counter_ty);
    Ok((
        Matmul {
            counter_ty,
            counter_start: facts.counter_start,
            cond: facts.cond,
            continue_when: facts.continue_when,
            acc_init: facts.acc_init,
            operands: [ou.expect("set above"), ov.expect("set above")],
            u_axis,
            v_axis,
            batch,
            guards,
            store_pointer,
            store_value,
            store_index,
            out_binding,
            split,
            rows,
            unguarded,
            extents: Vec::new(),
        },
        locals,
    ))
}

/// Whether the kernel takes its output's coordinates from a flat id: `gid.x` taken apart by `/`
/// and `%` into mixed-radix digits (`ir::Analysis::digits`, however the split is spelled:
/// `(idx / n) % m`, `idx - (idx / n) * n`, `idx / (m * n)`), two (row, column) or three (batch,
/// row, column), every boundary a literal or uniforms the spec gives sizes. Such a kernel reads
/// no `gid.y` (and with a batch digit no `gid.z`): its digits become slots x, y (and z) of a
/// virtual id.
fn flat_id(ir: &Analysis<'_>, kernel: &ResolvedKernel) -> Result<Option<Split>, Skip> {
    let gid = naga::BuiltIn::GlobalInvocationId;
    let Some(digits) = ir.digits(gid, 0) else {
        return Ok(None);
    };
    let reads = |c: usize| {
        ir.builtins
            .iter()
            .any(|b| b.builtin == gid && b.components[c])
    };
    if reads(1) {
        return Ok(None);
    }
    match digits.count() {
        2 => {}
        3 if !reads(2) => {}
        3 => {
            return Err(Skip(
                "gid.x is taken apart into a batch, a row and a column, and gid.z is read too"
                    .into(),
            ));
        }
        n => {
            return Err(Skip(format!(
                "gid.x is taken apart into {n} digits; tile reads at most a batch, a row and a \
                 column from a flat id"
            )));
        }
    }
    let factor = |m: &ir::Mono| {
        Factor::of(ir, kernel, m).ok_or_else(|| {
            Skip(format!(
                "the flat id's divisor `{}` is neither a literal nor a uniform the spec gives a size",
                ir::Poly(vec![m.clone()])
            ))
        })
    };
    let bounds = digits
        .bounds
        .iter()
        .map(factor)
        .collect::<Result<Vec<_>, _>>()?;
    let rows = match digits.radix(1) {
        Some(r) if digits.count() == 3 => Some(factor(&r)?),
        _ => None,
    };
    Ok(Some(Split { bounds, rows }))
}

/// An index's affine form (proven by `ir`) over the invocation-id components and the loop counter:
/// for each that appears, whether its coefficient is the literal 1 (unit stride in memory).
struct Form {
    gid: [Option<bool>; 3],
    counter: Option<bool>,
    /// The rows form's column counter.
    col: Option<bool>,
}

///
/// With a flat id (`split`), digit `i` of `gid.x` is slot `i` (column, row, batch), a bare
/// `gid.x` being `Σ digitᵢ·Bᵢ`: unit in x where its coefficient is 1, never in y or z.
fn form(
    ir: &Analysis<'_>,
    h: Handle<Expression>,
    counter: Handle<naga::LocalVariable>,
    split: bool,
    col: Option<Handle<naga::LocalVariable>>,
) -> Option<Form> {
    let f: IndexForm = if split {
        ir.split_index_form(h)?
    } else {
        ir.index_form(h)?
    };
    let mut out = Form {
        gid: [None; 3],
        counter: None,
        col: None,
    };
    let gid = naga::BuiltIn::GlobalInvocationId;
    for (v, c) in &f.terms {
        let unit = c.as_constant() == Some(1);
        match *v {
            Var::Digit(b, 0, i) if split && b == gid && i < 3 => {
                out.gid[usize::from(i)] = Some(unit)
            }
            Var::Builtin(b, 0 | 1) if split && b == gid => return None,
            Var::Builtin(naga::BuiltIn::GlobalInvocationId, k) if k < 3 => {
                out.gid[k as usize] = Some(unit)
            }
            Var::Loop(l) if l == counter => out.counter = Some(unit),
            Var::Loop(l) if Some(l) == col => out.col = Some(unit),
            _ => return None,
        }
    }
    Some(out)
}

const AXES: [&str; 3] = ["x", "y", "z"];
const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

/// `vec3<u32>(..)` with `u` and `v` on their axes and the batch in z.
/// With a flat id (`bounds` are its digit boundaries as text), the row, the column and a batch
/// digit fold back into `gid.x`.
fn gid3(m: &Matmul, bounds: Option<&[String]>, u: &str, v: &str) -> String {
    let mut c = ["0u".to_owned(), "0u".to_owned(), "kft_z".to_owned()];
    c[m.u_axis] = u.to_owned();
    c[m.v_axis] = v.to_owned();
    match bounds {
        Some([b1]) => format!("vec3<u32>(({}) * {b1} + ({}), 0u, {})", c[1], c[0], c[2]),
        Some([b1, b2]) => format!(
            "vec3<u32>(({}) * {b2} + ({}) * {b1} + ({}), 0u, 0u)",
            c[2], c[1], c[0]
        ),
        _ => format!("vec3<u32>({}, {}, {})", c[0], c[1], c[2]),
    }
}

/// The tiled entry point (with its module-scope declarations), as WGSL text.
fn generate(m: &Matmul, x: &Exprs<'_>, cfg: &Config, entry: &str) -> Result<String, Skip> {
    let (tu, tv, nt, bk, ks) = (cfg.tu(), cfg.tv(), cfg.group_invocations(), cfg.bk, cfg.ks);
    // In the rows form the `ks` groups split the columns, not the counter: each walks every
    // counter value of its own blocks of columns.
    let kgroups = if m.rows.is_some() { 1 } else { ks };
    // The invocation's index in its group, and the group's first counter offset.
    let (lid, gk) = if kgroups > 1 {
        ("kft_lid", format!("kft_grp * {bk}u + "))
    } else if ks > 1 {
        ("kft_lid", String::new())
    } else {
        ("kft_tid", String::new())
    };
    let vec4 = cfg.vec4();
    let elem = if vec4 { "vec4<f32>" } else { "f32" };
    let (su, sv) = (cfg.stride(cfg.bu), cfg.stride(cfg.bv));
    let ty = &m.counter_ty;
    // The rows form prints the column as `kft_j`, which each use defines.
    let with_counter = |c: &str| {
        let mut syms = vec![Some(c.to_owned()), None];
        if m.rows.is_some() {
            syms.push(Some("kft_j".to_owned()));
        }
        syms
    };
    let bare = Printer {
        x,
        gid: "kft_gid",
        symbols: &[],
    };
    let bounds_text = match &m.split {
        Some(split) => Some(
            split
                .bounds
                .iter()
                .map(|b| b.text(&bare))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    let divisor = bounds_text.as_deref();
    // With a batch digit, the row's radix (a row past it is one of the next batch).
    let row_radix = match m.split.as_ref().and_then(|s| s.rows.as_ref()) {
        Some(r) => Some(r.text(&bare)?),
        None => None,
    };
    let cond_text = |p: &Printer<'_>| -> Result<String, Skip> {
        let c = p.expr(m.cond)?;
        Ok(if m.continue_when { c } else { format!("!{c}") })
    };
    let counter_syms = with_counter("kft_k");
    let in_slice = Printer {
        x,
        gid: "kft_gid",
        symbols: &counter_syms,
    };
    let load_cond = cond_text(&in_slice)?;
    // The column loop's condition at column `j`.
    let col_cond = |j: &str| -> Result<String, Skip> {
        let Some(rows) = &m.rows else {
            return Ok("true".into());
        };
        let syms = [None, None, Some(j.to_owned())];
        let c = Printer {
            x,
            gid: "kft_gid",
            symbols: &syms,
        }
        .expr(rows.cond)?;
        Ok(if rows.continue_when {
            c
        } else {
            format!("!{c}")
        })
    };
    let loads = [
        in_slice.expr(m.operands[0].load)?,
        in_slice.expr(m.operands[1].load)?,
    ];

    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "// KernelFoundry tile: each workgroup computes a {}x{} block of outputs ({}x{} per invocation),\n\
         // staging {bk}-deep slices of both operands through workgroup memory.",
        cfg.bu, cfg.bv, cfg.ru, cfg.rv
    );
    let _ = writeln!(
        w,
        "var<workgroup> kft_tile_u: array<{elem}, {}>;",
        su * bk * ks
    );
    let _ = writeln!(
        w,
        "var<workgroup> kft_tile_v: array<{elem}, {}>;",
        sv * bk * ks
    );
    let acc_cols = if vec4 { cfg.rv / 4 } else { cfg.rv };
    let accs = cfg.ru * acc_cols;
    if kgroups > 1 {
        let _ = writeln!(
            w,
            "var<workgroup> kft_sums: array<{elem}, {}>;",
            (ks - 1) * accs * nt
        );
    }
    if m.rows.is_some() {
        let _ = writeln!(
            w,
            "var<workgroup> kft_rows: array<f32, {}>;",
            cfg.bu * tv * ks
        );
    }
    let _ = writeln!(w);
    let _ = writeln!(w, "@compute @workgroup_size({tv}, {tu}, {ks})");
    let _ = writeln!(
        w,
        "fn {entry}(@builtin(local_invocation_index) kft_tid: u32, @builtin(workgroup_id) kft_wid: vec3<u32>) {{"
    );
    if ks > 1 {
        let _ = writeln!(w, "    let kft_grp = kft_tid / {nt}u;");
        let _ = writeln!(w, "    let kft_lid = kft_tid % {nt}u;");
    }
    if ks > 1 {
        let _ = writeln!(w, "    let kft_ou = kft_grp * {}u;", su * bk);
        let _ = writeln!(w, "    let kft_ov = kft_grp * {}u;", sv * bk);
    }
    let offset = |side: &str| {
        if ks > 1 {
            format!("kft_o{side} + ")
        } else {
            String::new()
        }
    };
    let _ = writeln!(w, "    let kft_tv = {lid} % {tv}u;");
    let _ = writeln!(w, "    let kft_tu = {lid} / {tv}u;");
    let _ = writeln!(
        w,
        "    let kft_u0 = kft_wid.{} * {}u;",
        AXES[m.u_axis], cfg.bu
    );
    if m.rows.is_none() {
        let _ = writeln!(
            w,
            "    let kft_v0 = kft_wid.{} * {}u;",
            AXES[m.v_axis], cfg.bv
        );
    }
    let _ = writeln!(
        w,
        "    let kft_z = {};",
        if m.batch { "kft_wid.z" } else { "0u" }
    );
    // The rows form: each invocation keeps a partial sum per row it holds, and the product runs
    // once per block of columns.
    if let Some(rows) = &m.rows {
        for r in 0..cfg.ru {
            let _ = writeln!(w, "    var kft_row_{r} = 0.0f;");
        }
        let start = Printer {
            x,
            gid: "kft_gid",
            symbols: &[],
        }
        .value(rows.start)?;
        let ct = &rows.counter_ty;
        // Split across workgroups: workgroup `z` takes every `sk`-th step of blocks.
        let start = if cfg.sk > 1 {
            format!("{start} + {ct}(kft_wid.z * {}u)", cfg.bv * ks)
        } else {
            start
        };
        let _ = writeln!(
            w,
            "    for (var kft_c0: {ct} = {start}; {}; kft_c0 = kft_c0 + {ct}({})) {{",
            col_cond("kft_c0")?,
            cfg.bv * ks * cfg.sk
        );
        // One trip count for the whole workgroup (its barriers need it): group `g` takes the
        // `g`-th block of columns of each step of `ks` blocks.
        if ks > 1 {
            let _ = writeln!(
                w,
                "        let kft_v0 = kft_c0 + {ct}(kft_grp * {}u);",
                cfg.bv
            );
        } else {
            let _ = writeln!(w, "        let kft_v0 = kft_c0;");
        }
    }
    let mut product = String::new();
    let w = &mut product;
    for r in 0..cfg.ru {
        for c in 0..acc_cols {
            let _ = writeln!(w, "    var kft_acc_{r}_{c} = {elem}();");
        }
    }
    // Prefetch registers: each invocation loads a fixed set of slice elements, the next slice
    // while the current one is multiplied.
    let sides = [
        ("u", cfg.bu, su, "kft_u0", m.operands[0].counter_fastest),
        ("v", cfg.bv, sv, "kft_v0", m.operands[1].counter_fastest),
    ];
    for (name, extent, ..) in sides {
        for l in 0..cfg.loads(extent) {
            let _ = writeln!(w, "    var kft_p{name}_{l} = 0.0f;");
        }
    }
    // Where element `l` of an invocation's share of a slice sits: (index along the axis, counter
    // offset), coalesced along whichever has unit stride in memory.
    let position = |extent: u32, counter_fastest: bool, l: u32| -> String {
        let e = format!("{lid} + {}u", l * nt);
        if counter_fastest {
            format!("let kft_i = ({e}) / {bk}u; let kft_kk = ({e}) % {bk}u;")
        } else {
            format!("let kft_i = ({e}) % {extent}u; let kft_kk = ({e}) / {extent}u;")
        }
    };
    let fetch = |w: &mut String, indent: &str, slice: &str| {
        for (side, (name, extent, _, origin, fastest)) in sides.iter().enumerate() {
            for l in 0..cfg.loads(*extent) {
                let here = format!("{origin} + kft_i");
                // In the rows form the second operand is read at column `kft_j`.
                let (gid, cond) = match &m.rows {
                    Some(rows) if side == 1 => {
                        let _ = writeln!(w, "{indent}{{");
                        let _ = writeln!(w, "{indent}    {}", position(*extent, *fastest, l));
                        let _ = writeln!(
                            w,
                            "{indent}    let kft_j = {origin} + {}(kft_i);",
                            rows.counter_ty
                        );
                        (
                            "vec3<u32>(0u, 0u, 0u)".to_owned(),
                            format!("{load_cond} && {}", col_cond("kft_j").unwrap_or_default()),
                        )
                    }
                    _ => {
                        let _ = writeln!(w, "{indent}{{");
                        let _ = writeln!(w, "{indent}    {}", position(*extent, *fastest, l));
                        let gid = if side == 0 {
                            gid3(m, divisor, &here, "0u")
                        } else {
                            gid3(m, divisor, "0u", &here)
                        };
                        (gid, load_cond.clone())
                    }
                };
                let _ = writeln!(w, "{indent}    let kft_k = {slice} + {ty}({gk}kft_kk);");
                let _ = writeln!(w, "{indent}    let kft_gid = {gid};");
                let _ = writeln!(w, "{indent}    kft_p{name}_{l} = 0.0f;");
                let _ = writeln!(w, "{indent}    if {cond} {{");
                let _ = writeln!(w, "{indent}        kft_p{name}_{l} = {};", loads[side]);
                let _ = writeln!(w, "{indent}    }}");
                let _ = writeln!(w, "{indent}}}");
            }
        }
    };
    let start = Printer {
        x,
        gid: "kft_gid",
        symbols: &[],
    }
    .value(m.counter_start)?;
    // Split-K: workgroup `z` starts at its own slice and steps over the other workgroups'. The
    // rows form splits its columns across workgroups instead (below).
    let sk = if m.rows.is_some() { 1 } else { cfg.sk };
    if sk > 1 {
        let _ = writeln!(
            w,
            "    let kft_start = {start} + {ty}(kft_wid.z * {}u);",
            bk * kgroups
        );
    } else {
        let _ = writeln!(w, "    let kft_start = {start};");
    }
    fetch(w, "    ", "kft_start");
    let slice_syms = with_counter("kft_t");
    let head_cond = cond_text(&Printer {
        x,
        gid: "kft_gid",
        symbols: &slice_syms,
    })?;
    let _ = writeln!(
        w,
        "    for (var kft_t: {ty} = kft_start; {head_cond}; kft_t = kft_t + {ty}({})) {{",
        bk * kgroups * sk
    );
    for (name, extent, stride, _, fastest) in sides {
        let tile = format!("kft_tile_{name}");
        let off = offset(name);
        for l in 0..cfg.loads(extent) {
            let target = if vec4 {
                format!("{tile}[{off}kft_kk * {stride}u + kft_i / 4u][kft_i % 4u]")
            } else {
                format!("{tile}[{off}kft_kk * {stride}u + kft_i]")
            };
            let _ = writeln!(
                w,
                "        {{ {} {target} = kft_p{name}_{l}; }}",
                position(extent, fastest, l)
            );
        }
    }
    let _ = writeln!(w, "        workgroupBarrier();");
    // The next slice, skipped as a whole (a uniform branch) after the last one: without that
    // branch the 64x128 kernel ran 1.45x slower on an H200.
    let next = format!("kft_t + {ty}({})", bk * kgroups * sk);
    let next_syms = with_counter(&next);
    let next_cond = cond_text(&Printer {
        x,
        gid: "kft_gid",
        symbols: &next_syms,
    })?;
    let _ = writeln!(w, "        if {next_cond} {{");
    fetch(w, "            ", &format!("({next})"));
    let _ = writeln!(w, "        }}");
    let _ = writeln!(
        w,
        "        for (var kft_kk = 0u; kft_kk < {bk}u; kft_kk = kft_kk + 1u) {{"
    );
    if vec4 {
        for g in 0..cfg.ru / 4 {
            let _ = writeln!(
                w,
                "            let kft_a_{g} = kft_tile_u[{}kft_kk * {su}u + {}u + kft_tu];",
                offset("u"),
                g * tu
            );
        }
        for g in 0..cfg.rv / 4 {
            let _ = writeln!(
                w,
                "            let kft_b_{g} = kft_tile_v[{}kft_kk * {sv}u + {}u + kft_tv];",
                offset("v"),
                g * tv
            );
        }
        for r in 0..cfg.ru {
            for g in 0..cfg.rv / 4 {
                let _ = writeln!(
                    w,
                    "            kft_acc_{r}_{g} = kft_acc_{r}_{g} + kft_a_{}.{} * kft_b_{g};",
                    r / 4,
                    COMPONENTS[(r % 4) as usize]
                );
            }
        }
    } else {
        for r in 0..cfg.ru {
            let _ = writeln!(
                w,
                "            let kft_a_{r} = kft_tile_u[{}kft_kk * {su}u + {}u + kft_tu];",
                offset("u"),
                r * tu
            );
        }
        for c in 0..cfg.rv {
            let _ = writeln!(
                w,
                "            let kft_b_{c} = kft_tile_v[{}kft_kk * {sv}u + {}u + kft_tv];",
                offset("v"),
                c * tv
            );
        }
        for r in 0..cfg.ru {
            for c in 0..cfg.rv {
                let _ = writeln!(
                    w,
                    "            kft_acc_{r}_{c} = kft_acc_{r}_{c} + kft_a_{r} * kft_b_{c};"
                );
            }
        }
    }
    let _ = writeln!(w, "        }}");
    let _ = writeln!(w, "        workgroupBarrier();");
    let _ = writeln!(w, "    }}");

    // Counter groups: every group but the first leaves its sums in workgroup memory (each
    // accumulator a run of `nt` consecutive entries, one per invocation), and the first adds them
    // in group order.
    if kgroups > 1 {
        let at =
            |g: &str, i: u32| format!("kft_sums[({g}) * {}u + {}u + kft_lid]", accs * nt, i * nt);
        let _ = writeln!(w, "    if kft_grp > 0u {{");
        for r in 0..cfg.ru {
            for c in 0..acc_cols {
                let _ = writeln!(
                    w,
                    "        {} = kft_acc_{r}_{c};",
                    at("kft_grp - 1u", r * acc_cols + c)
                );
            }
        }
        let _ = writeln!(w, "    }}");
        let _ = writeln!(w, "    workgroupBarrier();");
        let _ = writeln!(w, "    if kft_grp != 0u {{");
        let _ = writeln!(w, "        return;");
        let _ = writeln!(w, "    }}");
        for g in 1..ks {
            for r in 0..cfg.ru {
                for c in 0..acc_cols {
                    let _ = writeln!(
                        w,
                        "    kft_acc_{r}_{c} = kft_acc_{r}_{c} + {};",
                        at(&format!("{}u", g - 1), r * acc_cols + c)
                    );
                }
            }
        }
    }

    // One guarded store per output, with the baseline's guard, index and epilogue.
    let plain = Printer {
        x,
        gid: "kft_gid",
        symbols: &[],
    };
    // In the rows form the product's initial value may be one of the column (`bias[j]`).
    let col_syms = [None, None, Some("kft_j".to_owned())];
    let init = if x.is_float_zero(m.acc_init) {
        None
    } else {
        Some(
            Printer {
                x,
                gid: "kft_gid",
                symbols: &col_syms,
            }
            .value(m.acc_init)?,
        )
    };
    let active = active_guards(m, &plain)?;
    for r in 0..cfg.ru {
        for c in 0..cfg.rv {
            let (u, v, reg) = if vec4 {
                (
                    format!("kft_u0 + ({}u + kft_tu) * 4u + {}u", (r / 4) * tu, r % 4),
                    format!("kft_v0 + ({}u + kft_tv) * 4u + {}u", (c / 4) * tv, c % 4),
                    format!("kft_acc_{r}_{}.{}", c / 4, COMPONENTS[(c % 4) as usize]),
                )
            } else {
                (
                    format!("kft_u0 + {}u + kft_tu", r * tu),
                    format!("kft_v0 + {}u + kft_tv", c * tv),
                    format!("kft_acc_{r}_{c}"),
                )
            };
            let acc = match &init {
                Some(i) => format!("{i} + {reg}"),
                None => reg.clone(),
            };
            if let Some(rows) = &m.rows {
                // Add this column's term to the row's partial sum.
                let v = v.trim_start_matches("kft_v0 + ");
                let syms = [
                    None,
                    Some(acc),
                    Some("kft_j".to_owned()),
                    Some(format!("kft_row_{r}")),
                ];
                let p = Printer {
                    x,
                    gid: "kft_gid",
                    symbols: &syms,
                };
                let _ = writeln!(w, "    {{");
                let _ = writeln!(w, "        let kft_gid = vec3<u32>({u}, 0u, 0u);");
                let _ = writeln!(w, "        let kft_j = kft_v0 + {}({v});", rows.counter_ty);
                let _ = writeln!(w, "        if {active} && {} {{", col_cond("kft_j")?);
                let _ = writeln!(w, "            kft_row_{r} = {};", p.expr(rows.update)?);
                let _ = writeln!(w, "        }}");
                let _ = writeln!(w, "    }}");
                continue;
            }
            let p = Printer {
                x,
                gid: "kft_gid",
                symbols: &[None, Some(acc)],
            };
            let _ = writeln!(w, "    {{");
            let _ = writeln!(w, "        let kft_gid = {};", gid3(m, divisor, &u, &v));
            match divisor {
                // The column must stay below its radix, or the flat id names another output (and
                // the row below its own under a batch digit).
                Some(d) => {
                    let (column, row) = if m.v_axis == 0 { (&v, &u) } else { (&u, &v) };
                    let rows = match &row_radix {
                        Some(r) => format!("({row}) < {r} && "),
                        None => String::new(),
                    };
                    let _ = writeln!(w, "        if ({column}) < {} && {rows}{active} {{", d[0]);
                }
                None => {
                    let _ = writeln!(w, "        if {active} {{");
                }
            }
            if sk > 1 {
                // This workgroup's bare partial sum: the combine launch adds the others' and the
                // initial value once.
                let _ = writeln!(
                    w,
                    "            kft_partial[kft_wid.z * (arrayLength(&kft_partial) / {sk}u) + u32({})] = {};",
                    p.expr(m.store_index)?,
                    reg
                );
            } else {
                let _ = writeln!(
                    w,
                    "            {} = {};",
                    p.place(m.store_pointer)?,
                    p.expr(m.store_value)?
                );
            }
            let _ = writeln!(w, "        }}");
            let _ = writeln!(w, "    }}");
        }
    }
    let Some(rows) = &m.rows else {
        o.push_str(&product);
        o.push_str("}\n");
        return Ok(o);
    };
    // The rows form: close the column loop, add up each row's partial sums in workgroup memory
    // (in the order of the invocations that hold them), and store each row's result once.
    for line in product.lines() {
        if line.is_empty() {
            o.push('\n');
        } else {
            let _ = writeln!(o, "    {line}");
        }
    }
    let w = &mut o;
    let _ = writeln!(w, "    }}");
    let slot = |r: u32| {
        if vec4 {
            format!("({}u + kft_tu) * 4u + {}u", (r / 4) * tu, r % 4)
        } else {
            format!("{}u + kft_tu", r * tu)
        }
    };
    // Each row's partial sums: `tv` per column group, in the order of the columns they hold.
    let parts = tv * ks;
    let own = if ks > 1 {
        format!("kft_grp * {tv}u + kft_tv")
    } else {
        "kft_tv".to_owned()
    };
    for r in 0..cfg.ru {
        let _ = writeln!(
            w,
            "    kft_rows[({}) * {parts}u + {own}] = kft_row_{r};",
            slot(r)
        );
    }
    let _ = writeln!(w, "    workgroupBarrier();");
    if ks > 1 {
        let _ = writeln!(w, "    if kft_tv == 0u && kft_grp == 0u {{");
    } else {
        let _ = writeln!(w, "    if kft_tv == 0u {{");
    }
    let row_init = if x.is_float_zero(rows.init) {
        None
    } else {
        Some(plain.value(rows.init)?)
    };
    for r in 0..cfg.ru {
        let at = format!("({}) * {parts}u", slot(r));
        let total = match &row_init {
            Some(i) => format!("{i} + kft_total"),
            None => "kft_total".to_owned(),
        };
        let syms = [None, None, None, Some(total)];
        let p = Printer {
            x,
            gid: "kft_gid",
            symbols: &syms,
        };
        let _ = writeln!(w, "        {{");
        let _ = writeln!(w, "            var kft_total = kft_rows[{at}];");
        let _ = writeln!(
            w,
            "            for (var kft_s = 1u; kft_s < {parts}u; kft_s = kft_s + 1u) {{"
        );
        let _ = writeln!(
            w,
            "                kft_total = kft_total + kft_rows[{at} + kft_s];"
        );
        let _ = writeln!(w, "            }}");
        let _ = writeln!(
            w,
            "            let kft_gid = vec3<u32>(kft_u0 + {}, 0u, 0u);",
            slot(r)
        );
        let _ = writeln!(w, "            if {active} {{");
        if cfg.sk > 1 {
            // This workgroup's columns only: the combine launch adds the other workgroups'
            // partial sums and the row's initial value, and stores the row's result.
            let _ = writeln!(
                w,
                "                kft_partial[kft_wid.z * (arrayLength(&kft_partial) / {}u) + u32({})] = kft_total;",
                cfg.sk,
                p.expr(m.store_index)?
            );
        } else {
            let _ = writeln!(
                w,
                "                {} = {};",
                p.place(m.store_pointer)?,
                p.expr(m.store_value)?
            );
        }
        let _ = writeln!(w, "            }}");
        let _ = writeln!(w, "        }}");
    }
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "}}");
    Ok(o)
}

/// What split-K adds to a tiled product: the workspace (one `f32` per output and workgroup
/// along the counter, in the group after the kernel's) and the combine launch.
struct SplitK {
    group: u32,
    /// The output binding's length, the spec's expression.
    out_len: SizeExpr,
}

impl SplitK {
    /// Proves what split-K needs beyond the tiling: no batch (z splits the counter, or in the
    /// rows form the columns), an output whose length the launch rule's names give (the runtime
    /// sizes the workspace from the sizes an app passes at dispatch, which are those), and a
    /// free bind group.
    fn plan(m: &Matmul, subject: &Subject<'_>) -> Result<SplitK, Skip> {
        if m.batch {
            return Err(Skip(
                "a batched product (z is the batch; split-K uses it for the split)".into(),
            ));
        }
        if subject.program.is_sequence() {
            return Err(Skip("already a launch sequence".into()));
        }
        let kernel = subject.kernel;
        let out = kernel
            .buffers
            .iter()
            .find(|p| (p.binding.group, p.binding.binding) == m.out_binding)
            .ok_or_else(|| Skip("the output has no buffer in the spec".into()))?;
        let mut out_len = out
            .len
            .clone()
            .ok_or_else(|| Skip("the output's length is fixed by its type".into()))?;
        // The partial sums are `f32`s, one per output scalar: a vector output read through an
        // `f32` view (`lanes`) has its spec length in vectors.
        let scalars = kernel
            .interface
            .binding(m.out_binding.0, m.out_binding.1)
            .and_then(|b| b.layout.array.as_ref())
            .map_or(1, |a| a.fields.len() as u64);
        if scalars > 1 {
            let mut ops = out_len.ops().to_vec();
            ops.extend([Op::Lit(scalars), Op::Mul]);
            out_len = SizeExpr::from_ops(ops);
        }
        let program = subject.program;
        let launch: Vec<&str> = program
            .dispatch
            .size
            .iter()
            .flat_map(|e| e.names())
            .collect();
        if let Some(n) = out_len
            .names()
            .find(|n| !launch.contains(n) && program.constant(n).is_none())
        {
            return Err(Skip(format!(
                "the output's length names `{n}`, which the launch rule does not: the workspace is sized from the sizes an app passes at dispatch"
            )));
        }
        let group = super::workspace_group(subject)?;
        Ok(SplitK { group, out_len })
    }

    /// The workspace's size in bytes on the first tune shape where `sk` partial sums per output
    /// would exceed the adapter's largest storage binding, if there is one.
    fn too_large(&self, subject: &Subject<'_>, sk: u32) -> Option<u64> {
        let max = subject
            .target
            .limit("max_storage_buffer_binding_size", 128 << 20);
        subject.kernel.tune_shapes.iter().find_map(|shape| {
            let len = self.out_len.eval(|n| shape.get(n).copied()).ok()?;
            let bytes = len.saturating_mul(4 * u64::from(sk));
            (bytes > max).then_some(bytes)
        })
    }

    /// The workspace's declaration, written with the entry points.
    fn declaration(&self) -> String {
        format!(
            "@group({}) @binding(0) var<storage, read_write> kft_partial: array<f32>;\n",
            self.group
        )
    }

    /// Turns the tiled partial launch into the sequence: the workspace and the combine launch
    /// over the parent's invocations.
    fn apply(&self, program: &mut Program, parent: &Program, sk: u32) {
        let mut words = vec![Op::Lit(u64::from(sk))];
        words.extend_from_slice(self.out_len.ops());
        words.push(Op::Mul);
        program.workspace = vec![kf_runtime::Workspace {
            group: self.group,
            binding: 0,
            words: SizeExpr::from_ops(words),
        }]
        .into();
        program.then = vec![kf_runtime::Stage {
            entry: COMBINE.into(),
            workgroup_size: combine_size(parent),
            workgroup_storage_bytes: 0,
            dispatch: Dispatch {
                mode: DispatchMode::Grid,
                size: [0, 1, 2].map(|d| SizeExpr::from_ops(super::grid_extent(parent, d))),
            },
        }]
        .into();
    }
}

/// The entry point that adds up split-K's partial sums.
const COMBINE: &str = "kft_combine";

/// The combine launch's workgroup: along x for a one-dimensional grid, else 16×16.
fn combine_size(parent: &Program) -> [u32; 3] {
    let one = |d: usize| super::grid_extent(parent, d) == [Op::Lit(1)];
    if one(1) && one(2) {
        [256, 1, 1]
    } else {
        [16, 16, 1]
    }
}

/// The combine entry point: one invocation per invocation of the parent (its own ids), which
/// under the parent's guards adds the `sk` partial sums of its output in workgroup order and
/// stores the parent's epilogue of the total, at the parent's index.
fn combine(m: &Matmul, x: &Exprs<'_>, parent: &Program, sk: u32) -> Result<String, Skip> {
    let plain = Printer {
        x,
        gid: "kft_gid",
        symbols: &[],
    };
    let active = active_guards(m, &plain)?;
    // The product's accumulator, or in the rows form the row's sum over columns.
    let (init, slot) = match &m.rows {
        Some(rows) => (rows.init, 3),
        None => (m.acc_init, 1),
    };
    let total = if x.is_float_zero(init) {
        "kft_sum".to_owned()
    } else {
        format!("{} + kft_sum", plain.value(init)?)
    };
    let mut syms = vec![None; slot + 1];
    syms[slot] = Some(total);
    let p = Printer {
        x,
        gid: "kft_gid",
        symbols: &syms,
    };
    let [wx, wy, wz] = combine_size(parent);
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "// KernelFoundry split-K: the partial sums of the {sk} workgroups along the {}, added in order.",
        if m.rows.is_some() {
            "columns"
        } else {
            "counter"
        }
    );
    let _ = writeln!(w, "@compute @workgroup_size({wx}, {wy}, {wz})");
    let _ = writeln!(
        w,
        "fn {COMBINE}(@builtin(global_invocation_id) kft_gid: vec3<u32>) {{"
    );
    let _ = writeln!(w, "    if {active} {{");
    let _ = writeln!(
        w,
        "        let kft_at = u32({});",
        plain.expr(m.store_index)?
    );
    let _ = writeln!(
        w,
        "        let kft_len = arrayLength(&kft_partial) / {sk}u;"
    );
    let _ = writeln!(w, "        var kft_sum = 0.0f;");
    let _ = writeln!(
        w,
        "        for (var kft_s = 0u; kft_s < {sk}u; kft_s = kft_s + 1u) {{"
    );
    let _ = writeln!(
        w,
        "            kft_sum = kft_sum + kft_partial[kft_s * kft_len + kft_at];"
    );
    let _ = writeln!(w, "        }}");
    let _ = writeln!(
        w,
        "        {} = {};",
        p.place(m.store_pointer)?,
        p.expr(m.store_value)?
    );
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "}}");
    Ok(o)
}

/// The conjunction of the baseline's guards, each as the condition under which the invocation
/// goes on, and the bounds the rewrite adds on unguarded axes (`true` when there is none).
fn active_guards(m: &Matmul, p: &Printer<'_>) -> Result<String, Skip> {
    let mut active: Vec<String> = m
        .guards
        .iter()
        .map(|g| {
            p.expr(g.cond)
                .map(|c| if g.active_when { c } else { format!("!{c}") })
        })
        .collect::<Result<_, _>>()?;
    active.extend(m.extents.iter().cloned());
    Ok(if active.is_empty() {
        "true".to_owned()
    } else {
        active.join(" && ")
    })
}

/// The bounds to add on the axes the baseline does not guard (`kft_gid.x < u32(dims.n)`).
///
/// A kernel without a bounds guard on an axis writes one output per invocation its launch makes,
/// so its outputs are exactly those below its grid when the launch is exact: counted in
/// workgroups, or a grid whose extent is a multiple of the workgroup size on every shape the
/// spec's constraints allow (`grid = (n, m)`, `@workgroup_size(8, 8)`, `constraints(n % 8 == 0,
/// m % 8 == 0)`). Otherwise the baseline's invocations past the grid write other outputs, its
/// result depends on its workgroup size, and no tiling can reproduce it. The extent is printed
/// from the uniforms the spec fills with its sizes (`uniforms::size_in_uniform`), whether the
/// kernel reads them or not. A batch axis needs no bound: the rewrite launches one workgroup per
/// batch.
fn exact_extents(
    m: &Matmul,
    ir: &Analysis<'_>,
    subject: &Subject<'_>,
) -> Result<Vec<String>, Skip> {
    let (parent, kernel) = (subject.program, subject.kernel);
    let axes: Vec<(usize, SizeExpr, u32, bool)> = m
        .unguarded
        .iter()
        .map(|&d| {
            let (extent, exact) = super::exact_launch(parent, kernel, d);
            (d, extent, parent.workgroup_size[d], exact)
        })
        .collect();
    // Every axis whose launch is not exact, so that the hint names every constraint at once.
    let inexact: Vec<(usize, &SizeExpr, u32)> = axes
        .iter()
        .filter(|(.., exact)| !exact)
        .map(|(d, extent, w, _)| (*d, extent, *w))
        .collect();
    if !inexact.is_empty() {
        let names: Vec<&str> = inexact.iter().map(|(d, ..)| AXES[*d]).collect();
        let axes: Vec<String> = inexact
            .iter()
            .map(|(d, extent, w)| {
                format!("{} ({extent} invocations in workgroups of {w})", AXES[*d])
            })
            .collect();
        let constraints: Vec<String> = inexact
            .iter()
            .filter_map(|(_, extent, w)| kf_runtime::views::suggested_constraint(extent, *w))
            .collect();
        let hint = if constraints.is_empty() {
            String::new()
        } else {
            format!(" (with `constraints({})` it is)", constraints.join(", "))
        };
        return Err(Skip(format!(
            "{INEXACT_LAUNCH}{}, and the launch along {} is not exact on every shape{hint}: the \
             baseline's invocations past the grid write other outputs",
            names.join(" and gid."),
            axes.join(" and ")
        )));
    }
    let mut out = Vec::new();
    for (d, extent, ..) in axes {
        let axis = AXES[d];
        if d == 2 {
            // The rewrite launches one workgroup per batch: no bound to add.
            continue;
        }
        let text = super::extent_wgsl(ir.module, kernel, &extent).map_err(|name| {
            Skip(format!(
                "{INEXACT_LAUNCH}{axis}, and the grid's size `{name}` is in no uniform the \
                     kernel binds, so the bound the tiling needs cannot be written"
            ))
        })?;
        // With a flat id, `kft_gid.x` is the virtual flat id: bounded by the flat grid.
        out.push(format!("kft_gid.{axis} < {text}"));
    }
    Ok(out)
}

/// Workgroups above the flat grid `X` with digit boundary `b`: `cdiv(X, b)`.
fn flat_ceil(parent: &Program, b: &Factor) -> Vec<Op> {
    let mut ops = super::grid_extent(parent, 0);
    ops.extend_from_slice(b.size.ops());
    ops.push(Op::CeilDiv);
    ops
}

/// Workgroup counts: the parent's grid divided into blocks, the batch in z. A flat id's grid `X`
/// becomes `B₁` columns by `cdiv(X, B₁)` rows, or with a batch digit `B₁` columns by `B₂ / B₁`
/// rows by `cdiv(X, B₂)` batches.
fn launch_rule(m: &Matmul, parent: &Program, cfg: &Config) -> Dispatch {
    let grid = |dim: usize| match &m.split {
        None => super::grid_extent(parent, dim),
        Some(split) if dim == 0 => split.bounds[0].size.ops().to_vec(),
        Some(split) => match &split.rows {
            Some(rows) => rows.size.ops().to_vec(),
            None => flat_ceil(parent, &split.bounds[0]),
        },
    };
    if m.rows.is_some() {
        // One workgroup per block of rows; each walks every column.
        let mut ops = super::grid_extent(parent, 0);
        ops.extend([
            Op::Lit(u64::from(cfg.bu - 1)),
            Op::Add,
            Op::Lit(u64::from(cfg.bu)),
            Op::Div,
        ]);
        return Dispatch {
            mode: DispatchMode::Workgroups,
            size: [
                SizeExpr::from_ops(ops),
                SizeExpr::lit(1),
                SizeExpr::lit(u64::from(cfg.sk)),
            ],
        };
    }
    let blocks = |dim: usize| {
        let block = if dim == m.u_axis { cfg.bu } else { cfg.bv };
        let mut ops = grid(dim);
        ops.extend([
            Op::Lit(u64::from(block - 1)),
            Op::Add,
            Op::Lit(u64::from(block)),
            Op::Div,
        ]);
        SizeExpr::from_ops(ops)
    };
    Dispatch {
        mode: DispatchMode::Workgroups,
        size: [
            blocks(0),
            blocks(1),
            if let Some(b2) = m.split.as_ref().and_then(|s| s.bounds.get(1)) {
                SizeExpr::from_ops(flat_ceil(parent, b2))
            } else if m.batch {
                SizeExpr::from_ops(super::grid_extent(parent, 2))
            } else {
                SizeExpr::lit(u64::from(cfg.sk))
            },
        ],
    }
}

#[cfg(test)]
mod tests;
