//! Convolution as an implicit GEMM: a loop nest that sums products of two operands, one indexed
//! by the output's pixel and the other by its channel, tiled like a matrix product.
//!
//! A direct convolution gives every invocation one output pixel of one output channel and walks
//! the input channels and the filter taps in a nest of loops (`for ic { for ky { for kx {
//! acc += input[..] * weight[..] } } }`). Each input element is then fetched once per output
//! channel that uses it, and each weight once per pixel: the kernel runs at a few percent of the
//! GPU's arithmetic rate. Seen as a matrix product, the outputs are an `M × N` matrix (M the
//! pixels, N the channels) and the nest is one reduction of length `K = Π trip counts`: the
//! input is an `M × K` operand that is never materialised (im2col), the weights `K × N`. This
//! operator stages `BK`-deep slices of both operands through workgroup memory and lets each
//! invocation accumulate `RM × RN` outputs in registers, as `tile` does for a plain matmul; a
//! slice's elements are computed by re-emitting the user's own index expressions (and padding
//! test) for the pixel and the nest's counters decoded from the flat reduction index.
//!
//! **What is proven from naga's IR** (see [`recognise`]):
//! - the entry point reads only `global_invocation_id`; its body is straight-line code, bounds
//!   guards, one nest of counted loops (each `counter < K` or `<= K` stepping by one from an
//!   invariant start to an invariant bound, written `for`, `while` or `loop`, the loops
//!   perfectly nested), straight-line code with calls to pure functions, and one store to a
//!   storage buffer;
//! - the innermost loop's only effect is `acc = acc + x * y` (or `fma(x, y, acc)`) on one `f32`
//!   local; tests with one empty arm may wrap the accumulation or an inner loop (padding, written
//!   at any level: `if inside { for ic { .. } }`); outer loops hold only `let`s, their exit test,
//!   the inner loop's start and their step;
//! - `x` and `y` are `f32` loads of read-only storage; which parts of the invocation id each
//!   depends on is computed through every `let`, cast and local ([`atoms`]), a component the
//!   kernel splits with `/` and `%` read as its digits ([`ir::Digits`]: `n = gid.z / C` and
//!   `oc = gid.z % C`, or a flat id `ox = i % W`, `oy = (i / W) % H`, `oc = (i / (W * H)) % C`,
//!   `n = i / (W * H * C)`): one operand (the channel side) reads exactly one component, or one
//!   bounded digit of it; the other (the pixel side) reads never the channel, and either one or
//!   two other components whole (the pixel's plane, or a flat pixel index) and perhaps the
//!   channel component's digits above the channel (the batch), or, where the channel is not the
//!   component's lowest digit, only that component's other digits (those below the channel are
//!   the pixel, those above the batch); the padding tests read the counters and the pixel side
//!   only;
//! - the guards bound every component the rewrite rebuilds; the guards, the stored index and
//!   value and the accumulator's start read no other component; the stored value depends on the
//!   accumulator and not on the counters.
//!
//! **The rewrite.** A workgroup of 256 invocations computes `PX × PY` pixels (a block of the
//! plane, or `PX·PY` consecutive pixels along a single pixel axis) by `BN` channels. `K` is
//! walked in slices of `BK`; each invocation loads its share of the next slice into registers
//! while the current one is multiplied (zero where a padding test fails or the slice passes
//! `K`), as `tile` does, and reads staged slices as `vec4` where its register block allows.
//! Where the loops inside the outermost have constant trip counts (`T` taps, 9 for a 3×3
//! filter), `BK` is the multiple of `T` nearest the configuration's (16 → 18): every slice
//! then starts at a step of the outermost loop, so the counters inside it, and a padding test
//! that reads only them and the pixel, depend on an element's place in the slice alone, not on
//! the slice (measured on an H100: the best configuration for KernelBench's CONV2D from 280 to
//! 268 µs). The channel block and the quotient come from `workgroup_id.z`. Every output is stored under the
//! baseline's guards with its index and epilogue re-emitted for its invocation id, and under
//! `channel < C` where the channel's component is split (a channel past the divisor would name
//! another batch's output). On a flat id whose channel digit has digits below it, the pixels are
//! those digits as one run (`PX·PY` consecutive values of `id % (W·H)`), the id of pixel `m` and
//! channel `c` of batch `q` is `(q·C + c)·(W·H) + m`, and the store is also guarded by
//! `m < W·H`.
//!
//! **What changes.** The sum is reassociated (slices of `BK`, within the verifier's tolerance);
//! a skipped tap becomes a product with zero (the same for finite weights). Limits: no batch
//! axis shared by both operands (`tile` handles batched matmuls; a depthwise convolution reads
//! the channel on both sides); a flat id whose channel is its highest digit (no bound on the
//! channels but the launch) is not read; a local the loops write must be written before it is read in
//! every iteration (`var v = 0.0; if inside { v = input[..]; }`, read as the load under a
//! padding test, as is `select(0.0, input[..], inside)` over a clamped index) and is not read
//! after the nest.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::flow::{
    Deps, Entry, Exprs, Factor, Guard, Locals, LoopPattern, Printer, TopLevel, Value,
    element_index, flatten, is_break, statement_kind, sum_of_products, unit_loop, walk_entry,
};
use crate::analysis::ir::{self, Analysis, Cmp, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::Program;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::program::{Dispatch, DispatchMode};
use kf_runtime::resolve::ResolvedKernel;
use naga::{Expression, Handle, Statement};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Prefix of every identifier the rewrite introduces.
const PREFIX: &str = "kfc_";
/// The accumulator's symbol; the nest's counters are symbols `0..depth`.
const ACC: usize = 8;
/// The deepest nest taken.
const MAX_DEPTH: usize = 6;

/// Invocation-id parts an expression depends on, as bits: per component `c` of the id, the
/// digits the kernel splits it into with `/` and `%` ([`ir::Digits`]: `t = idx % L`,
/// `co = (idx / L) % C`, `b = idx / (L * C)`), eight bits per component. A component the kernel
/// never splits is one digit; a component read whole is all of its digits.
#[derive(Clone, Copy)]
struct Parts<'d>(&'d [Option<ir::Digits>; 3]);

impl Parts<'_> {
    fn count(&self, c: usize) -> usize {
        self.0[c].as_ref().map_or(1, ir::Digits::count)
    }
    /// Digits `lo..hi` of component `c`.
    fn run(&self, c: usize, lo: usize, hi: usize) -> u32 {
        ((1u32 << hi) - (1u32 << lo)) << (8 * c)
    }
    fn digit(&self, c: usize, i: usize) -> u32 {
        self.run(c, i, i + 1)
    }
    fn whole(&self, c: usize) -> u32 {
        self.run(c, 0, self.count(c))
    }
}
const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

/// One block configuration: `PX × PY` pixels by `BN` channels per workgroup, `RM × RN` outputs
/// per invocation, slices `BK` deep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    px: u32,
    py: u32,
    bn: u32,
    rm: u32,
    rn: u32,
    bk: u32,
}

impl Config {
    fn bm(&self) -> u32 {
        self.px * self.py
    }
    fn tm(&self) -> u32 {
        self.bm() / self.rm
    }
    fn tn(&self) -> u32 {
        self.bn / self.rn
    }
    fn threads(&self) -> u32 {
        self.tm() * self.tn()
    }
    /// Whether each invocation's outputs come in runs of 4 along both sides, so that staged
    /// slices are read as `vec4<f32>` (as `tile` does).
    fn vec4(&self) -> bool {
        self.rm.is_multiple_of(4) && self.rn.is_multiple_of(4)
    }
    /// Elements of one staged slice row, padded against bank conflicts, in units of the slice's
    /// element type.
    fn stride(&self, extent: u32) -> u32 {
        if self.vec4() {
            extent / 4 + 1
        } else {
            extent + 1
        }
    }
    fn bytes(&self) -> u64 {
        let elem = if self.vec4() { 16 } else { 4 };
        u64::from((self.stride(self.bm()) + self.stride(self.bn)) * self.bk * elem)
    }
    /// The configuration with slices a whole number of `taps` deep (the trip counts of the
    /// loops inside the outermost, where they are constants: 9 for a 3×3 filter), the multiple
    /// nearest the configured depth, where that is at most twice it. Every slice then starts at
    /// a step of the outermost loop, so an element's inner counters, and the padding test that
    /// reads only them and the pixel, are the same in every slice: they are computed from the
    /// element's place in the slice, which the compiler can keep out of the slice loop.
    fn aligned(&self, taps: Option<u32>) -> Config {
        match taps {
            Some(t) if t > 1 && t <= 2 * self.bk && !self.bk.is_multiple_of(t) => Config {
                bk: ((self.bk + t / 2) / t).max(1) * t,
                ..*self
            },
            _ => *self,
        }
    }

    /// `8x8 pixels x 64 channels, 4x4 per invocation, k16`; with one pixel axis, `64 pixels ..`.
    fn label(&self, one_plane: bool) -> String {
        let pixels = if one_plane {
            format!("{}", self.bm())
        } else {
            format!("{}x{}", self.px, self.py)
        };
        format!(
            "{pixels} pixels x {} channels, {}x{} per invocation, k{}",
            self.bn, self.rm, self.rn, self.bk
        )
    }
}

/// The configurations offered: every one has 256 invocations and fits 16 KiB of workgroup memory
/// (before [`Config::aligned`] deepens its slices to whole steps of the outer loop).
pub const CONFIGS: &[Config] = &[
    Config {
        px: 8,
        py: 8,
        bn: 64,
        rm: 4,
        rn: 4,
        bk: 16,
    },
    Config {
        px: 8,
        py: 8,
        bn: 128,
        rm: 4,
        rn: 8,
        bk: 16,
    },
    Config {
        px: 16,
        py: 8,
        bn: 64,
        rm: 8,
        rn: 4,
        bk: 16,
    },
    Config {
        px: 16,
        py: 8,
        bn: 128,
        rm: 8,
        rn: 8,
        bk: 8,
    },
    Config {
        px: 8,
        py: 4,
        bn: 32,
        rm: 2,
        rn: 2,
        bk: 16,
    },
    // Rows of pixels, for a second pixel axis that is short (a batch) or images a row wide.
    Config {
        px: 64,
        py: 1,
        bn: 64,
        rm: 4,
        rn: 4,
        bk: 16,
    },
    Config {
        px: 128,
        py: 1,
        bn: 64,
        rm: 8,
        rn: 4,
        bk: 16,
    },
];

/// The operator.
pub struct ImplicitGemm;

impl Operator for ImplicitGemm {
    fn name(&self) -> &'static str {
        "implicit-gemm"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Memory, 3), (Dim::Compute, 3), (Dim::Parallelism, 1)]
    }

    fn fixes_workgroup(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        if wgsl.contains(PREFIX) || wgsl.contains("kft_") {
            return Err(Skip("already tiled".into()));
        }
        super::invocations_expressible(subject)?;
        let parsed = ir::parse(wgsl).map_err(|e| Skip(e.to_string()))?;
        let analysis = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let entry = Entry::new(&analysis)?;
        let (mut nest, locals) = recognise(&entry, &analysis, subject.kernel)?;
        // An axis without a bounds test: only where the launch runs exactly the ids below its
        // extent, which the rewrite then tests itself (its blocks round the extent up).
        for &d in &nest.unguarded {
            let axis = ["x", "y", "z"][d];
            let (extent, exact) = super::exact_launch(program, subject.kernel, d);
            if !exact {
                return Err(Skip(format!(
                    "the store is not guarded by a bound on the id's {axis}, and the launch along \
                     it ({extent} invocations in workgroups of {}) is not exact on every shape",
                    program.workgroup_size[d]
                )));
            }
            let text =
                super::extent_wgsl(analysis.module, subject.kernel, &extent).map_err(|name| {
                    Skip(format!(
                        "the store is not guarded by a bound on the id's {axis}, and the size \
                         `{name}` of its launch is in no uniform the kernel binds"
                    ))
                })?;
            nest.extents.push(format!("(kfc_gid).{axis} < {text}"));
        }
        let x = Exprs {
            e: &entry,
            locals: &locals,
        };
        let range = analysis.entry_range()?;
        let target = subject.target;
        let mut rewrites = Vec::new();
        let mut reasons = Vec::new();
        let one_plane = nest.one_plane();
        let mut seen = Vec::new();
        let fits = |cfg: &Config| {
            u64::from(cfg.threads()) <= target.limit("max_compute_invocations_per_workgroup", 256)
                && u64::from(cfg.threads()) <= target.limit("max_compute_workgroup_size_x", 256)
                && cfg.bytes() <= target.limit("max_compute_workgroup_storage_size", 16384)
        };
        for cfg in CONFIGS {
            // Slices of whole taps where they fit; deepened past the adapter's workgroup memory
            // (a 5×5 filter), the configuration as it is.
            let aligned = cfg.aligned(nest.taps());
            let cfg = if fits(&aligned) { &aligned } else { cfg };
            // With one pixel axis only the block's size counts.
            let shape = (cfg.bm(), cfg.bn, cfg.rm, cfg.rn, cfg.bk);
            if one_plane && seen.contains(&shape) {
                continue;
            }
            seen.push(shape);
            if !fits(cfg) {
                reasons.push(format!(
                    "{} exceeds the adapter's workgroup limits",
                    cfg.label(one_plane)
                ));
                continue;
            }
            let function = generate(&nest, &x, cfg, &program.entry)?;
            rewrites.push(Rewrite {
                program: super::replaced_entry(
                    program,
                    range.clone(),
                    &function,
                    [cfg.threads(), 1, 1],
                    cfg.bytes() as u32,
                    launch_rule(&nest, program, cfg),
                ),
                step: format!("{}({})", self.name(), cfg.label(one_plane)),
                params: Vec::new(),
            });
        }
        if rewrites.is_empty() {
            return Err(Skip(reasons.join("; ")));
        }
        Ok(rewrites)
    }
}

/// One loop of the nest, outermost first.
#[derive(Clone, Debug)]
struct Level {
    counter: Handle<naga::LocalVariable>,
    ty: String,
    start: Value,
    bound: Handle<Expression>,
    inclusive: bool,
    /// The trip count, where the start and bound are constants.
    trips: Option<u64>,
}

/// One operand of the product.
#[derive(Clone, Copy, Debug)]
struct Operand {
    load: Handle<Expression>,
    /// Consecutive reduction indices are adjacent in memory (else consecutive pixels or
    /// channels are).
    counter_fastest: bool,
}

/// The pattern, proven.
#[derive(Clone, Debug)]
pub struct Nest {
    levels: Vec<Level>,
    acc_init: Value,
    /// The pixel-side and the channel-side operands.
    operands: [Operand; 2],
    /// The tests around the accumulation (on the pixel side), and when each lets it run.
    padding: Vec<Guard>,
    guards: Vec<Guard>,
    store_pointer: Handle<Expression>,
    store_value: Handle<Expression>,
    /// The components of the id that locate the pixel (one or two, ascending).
    planes: Vec<usize>,
    /// The component that holds the channel.
    channel_axis: usize,
    /// Where the channel sits in its component when the kernel splits it; `None` when the
    /// channel is the component whole.
    split: Option<ChannelSplit>,
    /// The components of the id the output uses that no guard bounds: the baseline's launch
    /// must be exact along them, and the rewrite bounds them by its extent ([`Nest::extents`]).
    unguarded: Vec<usize>,
    /// Those bounds, `(kfc_gid).d < extent`, printed from the uniforms that hold the sizes.
    extents: Vec<String>,
}

impl Nest {
    /// The product of the constant trip counts of the loops inside the outermost (`None` where
    /// one is not a constant, or there is only one loop).
    fn taps(&self) -> Option<u32> {
        if self.levels.len() < 2 {
            return None;
        }
        let t = self.levels[1..]
            .iter()
            .try_fold(1u64, |t, l| l.trips.map(|n| t * n))?;
        u32::try_from(t).ok().filter(|&t| t > 0)
    }

    /// Whether the pixel is one run of ids (one component, or digits of the channel's), so that
    /// only the block's size counts.
    fn one_plane(&self) -> bool {
        self.planes.len() == 1
            || self
                .split
                .as_ref()
                .is_some_and(|s| !matches!(s.pixel, PixelDigits::Elsewhere))
    }
}

/// The channel as one digit of a component split by `/` and `%` ([`ir::Digits`]): the digits
/// above it are the batch, those below it (if any) the pixel.
#[derive(Clone, Debug)]
struct ChannelSplit {
    /// The channel digit's radix: how many channels.
    radix: Factor,
    /// Which of the component's other digits are the pixel.
    pixel: PixelDigits,
}

/// Where the pixel is, relative to a split channel component.
#[derive(Clone, Debug)]
enum PixelDigits {
    /// On other components; the digits above the channel are the batch.
    Elsewhere,
    /// The digits below the channel, whose radices multiply to this (the pixels per channel);
    /// those above are the batch. A flat NCHW id: `(n·C + c)·(H·W) + p`.
    Below(Factor),
    /// The digits above the channel, the lowest one: a flat NHWC id, `p·C + c`.
    Above,
}

/// A uniform product `k · Π atoms` that the rewrite re-emits and the launch rule sizes.
/// The monomial `m` as a [`Factor`], or why not.
fn factor(ir: &Analysis<'_>, kernel: &ResolvedKernel, m: &ir::Mono) -> Result<Factor, Skip> {
    Factor::of(ir, kernel, m).ok_or_else(|| {
        Skip(
            "a divisor of the channel's component is neither a literal nor a uniform the spec gives a size"
                .into(),
        )
    })
}

/// Where in the nest a statement is.
struct Place {
    id: usize,
    counter: Handle<naga::LocalVariable>,
    next_counter: Option<Handle<naga::LocalVariable>>,
    innermost: bool,
}

/// What a loop's body has shown so far.
#[derive(Default)]
struct State {
    exit_seen: bool,
    inner_seen: bool,
}

/// Walks the entry point's statements, proving the pattern.
struct Walk<'a> {
    e: &'a Entry<'a>,
    ir: &'a Analysis<'a>,
    top: TopLevel,
    levels: Vec<Level>,
    acc: Option<(Handle<naga::LocalVariable>, Value)>,
    update: Option<Handle<Expression>>,
    /// Tests around the accumulation (in the innermost loop or around an inner loop).
    padding: Vec<Guard>,
    /// Locals the nest's iterations write before reading (`var v = 0.0;` in a loop's body).
    scoped: Vec<Handle<naga::LocalVariable>>,
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
        self.level(0, body, continuing, break_if)?;
        let (acc, _) = self.acc.expect("set by the innermost level");
        self.top.locals.current.insert(acc, Value::Symbol(ACC));
        // What the nest's iterations wrote in their own locals is not read after it (a loop
        // that never ran would leave the value from before).
        for l in std::mem::take(&mut self.scoped) {
            self.top.locals.current.remove(&l);
        }
        Ok(())
    }
}

impl Walk<'_> {
    /// Loop `id` of the nest (the `id`-th loop of the function, which must be nested in loop
    /// `id - 1` and hold loop `id + 1` when there is one).
    fn level(
        &mut self,
        id: usize,
        body: &naga::Block,
        continuing: &naga::Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<(), Skip> {
        let (e, a) = (self.e, self.ir);
        let depth = a.loops.len();
        if depth > MAX_DEPTH {
            return Err(Skip(format!("a nest of {depth} loops")));
        }
        let info = &a.loops[id];
        if !std::ptr::eq(info.body, body)
            || info.parent != id.checked_sub(1)
            || (id + 1 < depth && a.loops[id + 1].parent != Some(id))
        {
            return Err(Skip("the loops are not one perfect nest".into()));
        }
        if break_if.is_some() {
            return Err(Skip("a loop with a `break if`".into()));
        }
        let fl = unit_loop(a, id)?;
        let start = *self
            .top
            .locals
            .current
            .get(&fl.var)
            .ok_or_else(|| Skip("a loop counter has no value before its loop".into()))?;
        let x = Exprs {
            e,
            locals: &self.top.locals,
        };
        let invariant = |v: Value| match v {
            Value::Expr(h) => x.deps(h).is_invariant(),
            _ => false,
        };
        if !invariant(start) || !x.deps(fl.bounds[0].bound).is_invariant() {
            return Err(Skip(
                "a loop's start or bound varies between invocations or iterations".into(),
            ));
        }
        let innermost = id + 1 == depth;
        if innermost {
            let acc = self.accumulator(id)?;
            let init = *self
                .top
                .locals
                .current
                .get(&acc)
                .ok_or_else(|| Skip("the accumulator has no value before the loops".into()))?;
            self.acc = Some((acc, init));
            self.top.locals.current.insert(acc, Value::Symbol(ACC));
        }
        self.levels.push(Level {
            counter: fl.var,
            ty: e.type_name(fl.var_ty),
            start,
            bound: fl.bounds[0].bound,
            inclusive: fl.bounds[0].cmp == Cmp::Le,
            trips: a.const_trip_count(fl),
        });
        self.top.locals.current.insert(fl.var, Value::Symbol(id));
        let next_counter = (!innermost)
            .then(|| a.loops[id + 1].for_loop.as_ref().map(|f| f.var))
            .flatten();

        let mut list = Vec::new();
        flatten(body, &mut list);
        let mut cont = Vec::new();
        flatten(continuing, &mut cont);
        let at = Place {
            id,
            counter: fl.var,
            next_counter,
            innermost,
        };
        let mut state = State::default();
        for s in list.into_iter().chain(cont) {
            self.statement(&at, s, &mut state)?;
        }
        if !state.exit_seen || (!innermost && !state.inner_seen) {
            return Err(Skip("a loop without its exit test or inner loop".into()));
        }
        if innermost && self.update.is_none() {
            return Err(Skip("the innermost loop does not accumulate".into()));
        }
        self.top.locals.current.remove(&fl.var);
        Ok(())
    }

    /// One statement of loop `at.id`'s body: its exit test, `let`s, the next loop's start, the
    /// next loop (or, innermost, the accumulation), the step, and padding tests (`if` with one
    /// empty arm) around the next loop or the accumulation.
    fn statement(&mut self, at: &Place, s: &Statement, state: &mut State) -> Result<(), Skip> {
        let e = self.e;
        match s {
            Statement::Emit(r) => self.top.locals.emit(e, r)?,
            Statement::If { accept, reject, .. }
                if !state.exit_seen
                    && ((accept.is_empty() && is_break(reject))
                        || (is_break(accept) && reject.is_empty())) =>
            {
                state.exit_seen = true;
            }
            Statement::If {
                condition,
                accept,
                reject,
            } if state.exit_seen => {
                if self
                    .top
                    .locals
                    .short_circuit(e, *condition, accept, reject)?
                {
                    return Ok(());
                }
                let (arm, active_when) = if reject.is_empty() {
                    (accept, true)
                } else if accept.is_empty() {
                    (reject, false)
                } else {
                    return Err(Skip("a branch in the nest with two arms".into()));
                };
                self.padding.push(Guard {
                    cond: *condition,
                    active_when,
                });
                let before = (state.inner_seen, self.update.is_some());
                let mut list = Vec::new();
                flatten(arm, &mut list);
                for s in list {
                    self.statement(at, s, state)?;
                }
                let wraps = if at.innermost {
                    !before.1 && self.update.is_some()
                } else {
                    !before.0 && state.inner_seen
                };
                if !wraps {
                    return Err(Skip(
                        "a branch in the nest that is not a test around the inner loop or the accumulation"
                            .into(),
                    ));
                }
            }
            Statement::Store { pointer, value } if state.exit_seen => {
                let acc = self.acc.map(|a| a.0);
                match e.as_local(*pointer) {
                    // The step (`ir` proved it is `+ 1`).
                    Some(l) if l == at.counter => {
                        self.top.locals.current.remove(&l);
                    }
                    Some(l) if Some(l) == at.next_counter && !state.inner_seen => {
                        self.top.locals.current.insert(l, Value::Expr(*value));
                    }
                    Some(l) if at.innermost && Some(l) == acc && self.update.is_none() => {
                        self.update = Some(*value);
                        self.top.locals.current.remove(&l);
                    }
                    // A local written before it is read in every iteration (`var v = 0.0;`): a
                    // value like a `let`, which no iteration hands to the next.
                    Some(l) if Some(l) != acc && self.iteration_local(at.id, l) => {
                        self.top.locals.current.insert(l, Value::Expr(*value));
                        self.scoped.push(l);
                    }
                    _ => {
                        return Err(Skip(
                            "the nest stores to something besides its counters and one accumulator"
                                .into(),
                        ));
                    }
                }
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } if state.exit_seen && !at.innermost && !state.inner_seen => {
                state.inner_seen = true;
                self.level(at.id + 1, body, continuing, *break_if)?;
            }
            other => {
                return Err(Skip(format!(
                    "the nest has {} besides its tests, accumulation and steps",
                    statement_kind(other)
                )));
            }
        }
        Ok(())
    }

    /// Whether loop `id` neither carries `l` from one iteration to the next nor accumulates into
    /// it.
    fn iteration_local(&self, id: usize, l: Handle<naga::LocalVariable>) -> bool {
        let fx = self.ir.loop_effects(id);
        !fx.carried.iter().any(|(v, _)| *v == l) && !fx.accumulators.iter().any(|a| a.var == l)
    }

    /// The innermost loop's one `f32` sum accumulator.
    fn accumulator(&self, id: usize) -> Result<Handle<naga::LocalVariable>, Skip> {
        let e = self.e;
        let fx = self.ir.loop_effects(id);
        let mut candidates: Vec<_> = fx
            .accumulators
            .iter()
            .filter(|a| a.op == ir::AccOp::Add)
            .map(|a| a.var)
            .chain(fx.carried.iter().map(|(v, _)| *v))
            .collect();
        candidates.dedup();
        let [acc] = candidates[..] else {
            return Err(Skip(
                "the innermost loop does not update exactly one accumulator".into(),
            ));
        };
        if !matches!(
            e.module.types[e.func.local_variables[acc].ty].inner,
            naga::TypeInner::Scalar(naga::Scalar::F32)
        ) || !fx.global_writes.is_empty()
            || !fx.effectful_calls.is_empty()
        {
            return Err(Skip(
                "the innermost loop does more than update one f32 sum".into(),
            ));
        }
        Ok(acc)
    }
}

/// Which invocation-id parts `h` depends on (see [`whole`]), through `let`s, casts, locals and
/// the indices of loads; `split[c]` says whether the kernel divides component `c` by one divisor.
fn atoms(
    x: &Exprs<'_>,
    ir: &Analysis<'_>,
    parts: Parts<'_>,
    h: Handle<Expression>,
    memo: &mut HashMap<Handle<Expression>, u32>,
) -> Result<u32, Skip> {
    if let Some(a) = memo.get(&h) {
        return Ok(*a);
    }
    let e = x.e;
    // The digits of a split component `h` reads exactly, when it is a run of them.
    let digit_run = |h: Handle<Expression>| {
        (0..3).find_map(|c| {
            let d = parts.0[c].as_ref()?;
            let (lo, hi) = ir.digit_run(h, d)?;
            Some(parts.run(c, lo, hi))
        })
    };
    let value = |v: Value, memo: &mut HashMap<_, _>| -> Result<u32, Skip> {
        match v {
            Value::Expr(h) => atoms(x, ir, parts, h, memo),
            Value::Select {
                cond,
                accept,
                reject,
            } => Ok(atoms(x, ir, parts, cond, memo)?
                | atoms(x, ir, parts, accept, memo)?
                | atoms(x, ir, parts, reject, memo)?),
            Value::Symbol(_) => Ok(0),
        }
    };
    use Expression as E;
    let out = match &e.func.expressions[h] {
        E::FunctionArgument(i) if Some(*i) == e.gid_arg => {
            return Err(Skip("the invocation id is read as a whole vector".into()));
        }
        E::FunctionArgument(_) => return Err(Skip("reads a builtin besides the id".into())),
        E::AccessIndex { base, index } if matches!(e.func.expressions[*base], E::FunctionArgument(i) if Some(i) == e.gid_arg) => {
            parts.whole((*index).min(2) as usize)
        }
        // `/`, `%`, and `x - (x / r) * r`.
        E::Binary { .. } if digit_run(h).is_some() => digit_run(h).expect("checked"),
        E::Load { pointer } => match e.func.expressions[*pointer] {
            E::LocalVariable(_) => match x.locals.loads.get(&h) {
                Some(v) => value(*v, memo)?,
                None => return Err(Skip("a local read before it is written".into())),
            },
            _ => pointer_atoms(x, ir, parts, *pointer, memo)?,
        },
        E::CallResult(_) => match x.locals.calls.get(&h) {
            Some((_, args)) => {
                let mut a = 0;
                for arg in args.clone() {
                    a |= atoms(x, ir, parts, arg, memo)?;
                }
                a
            }
            None => return Err(Skip("the result of a call that is not pure".into())),
        },
        other => {
            let mut a = 0;
            for o in crate::analysis::expr::operands(other) {
                a |= atoms(x, ir, parts, o, memo)?;
            }
            a
        }
    };
    memo.insert(h, out);
    Ok(out)
}

fn pointer_atoms(
    x: &Exprs<'_>,
    ir: &Analysis<'_>,
    parts: Parts<'_>,
    pointer: Handle<Expression>,
    memo: &mut HashMap<Handle<Expression>, u32>,
) -> Result<u32, Skip> {
    match x.e.func.expressions[pointer] {
        Expression::Access { base, index } => {
            Ok(pointer_atoms(x, ir, parts, base, memo)? | atoms(x, ir, parts, index, memo)?)
        }
        Expression::AccessIndex { base, .. } => pointer_atoms(x, ir, parts, base, memo),
        Expression::GlobalVariable(_) => Ok(0),
        _ => Err(Skip("reads memory through a local pointer".into())),
    }
}

/// Proves the pattern on `e`, or says why it does not hold.
pub fn recognise(
    e: &Entry<'_>,
    ir: &Analysis<'_>,
    kernel: &ResolvedKernel,
) -> Result<(Nest, Locals), Skip> {
    if e.gid_arg.is_none() {
        return Err(Skip(
            "the entry point does not read global_invocation_id".into(),
        ));
    }
    let gid = naga::BuiltIn::GlobalInvocationId;
    if ir.loops.is_empty() {
        return Err(Skip("no loop".into()));
    }
    let mut walk = Walk {
        e,
        ir,
        top: TopLevel::new(e.func),
        levels: Vec::new(),
        acc: None,
        update: None,
        padding: Vec::new(),
        scoped: Vec::new(),
    };
    walk_entry(&mut walk, e, &e.func.body)?;
    let (store_pointer, store_value) = walk
        .top
        .store
        .ok_or_else(|| Skip("no store after the loops".into()))?;
    let (_, acc_init) = walk.acc.ok_or_else(|| Skip("no loop nest".into()))?;
    let update = walk.update.expect("checked by the walk");
    let padding = walk.padding;
    let levels = walk.levels;
    let guards = walk.top.guards;
    let locals = walk.top.locals;
    let x = Exprs { e, locals: &locals };

    // The accumulation: acc + p*q, p*q + acc, or fma(p, q, acc).
    let is_acc = |h: Handle<Expression>| locals.loads.get(&h) == Some(&Value::Symbol(ACC));
    let pair = sum_of_products(e, update, is_acc);
    let (p, q) =
        pair.ok_or_else(|| Skip("the accumulator is not updated by a sum of products".into()))?;

    let out = e
        .root_global(store_pointer)
        .filter(|g| e.is_writable_storage(*g))
        .ok_or_else(|| Skip("the result is not stored to a storage buffer".into()))?;
    let counters: u32 = (1 << levels.len()) - 1;
    let digits = [0, 1, 2].map(|c| ir.digits(gid, c).filter(|d| d.count() <= 8));
    let parts = Parts(&digits);
    let mut memo = HashMap::new();

    // The operands and the side each stands on.
    let mut sides = [0u32; 2];
    let mut loads = [None, None];
    // A factor read under a test (`select(0.0, input[..], inside)`, or `var v = 0.0; if inside
    // { v = input[..]; }`) is the load with the test as padding: a product with zero adds
    // nothing either way.
    let mut padding = padding;
    let mut conditional = |h: Handle<Expression>| match x.padded_load(h) {
        Some((load, guard)) => {
            padding.push(guard);
            load
        }
        None => h,
    };
    let (p, q) = (conditional(p), conditional(q));
    for (n, load) in [p, q].into_iter().enumerate() {
        let Expression::Load { pointer } = e.func.expressions[load] else {
            return Err(Skip(
                "a factor of the product is not a load from memory".into(),
            ));
        };
        let g = e
            .root_global(pointer)
            .ok_or_else(|| Skip("a factor of the product is not a load from memory".into()))?;
        if g == out || (e.is_writable_storage(g) && crate::analysis::access::written(e.module, g)) {
            return Err(Skip("an operand is a buffer the kernel writes".into()));
        }
        if !matches!(
            e.module.global_variables[g].space,
            naga::AddressSpace::Storage { .. }
        ) || !matches!(e.ty(load), naga::TypeInner::Scalar(naga::Scalar::F32))
        {
            return Err(Skip("an operand is not an f32 storage buffer".into()));
        }
        let d = x.deps(load);
        if d.unknown || d.gid_whole || d.symbols & !counters != 0 {
            return Err(Skip("an operand's index is not understood".into()));
        }
        sides[n] = atoms(&x, ir, parts, load, &mut memo)?;
        loads[n] = Some(load);
    }
    // The channel side reads one component of the id, or one bounded digit of it where the kernel
    // splits it; the pixel side reads other components whole (one or two: the pixel's plane, or
    // a flat pixel index) and perhaps the channel component's digits above the channel (the
    // batch). Where the channel is not the component's lowest digit, the digits below it are the
    // pixel (a flat id over batch, channel and position), and no other component may be read.
    let layout = (0..3).rev().find_map(|cc| {
        let n = parts.count(cc);
        (0..n).filter(|&i| n == 1 || i + 1 < n).find_map(|i| {
            let channel_atoms = parts.digit(cc, i);
            [(0, 1), (1, 0)].into_iter().find_map(|(pi, ci)| {
                let pix = sides[pi];
                if sides[ci] != channel_atoms || pix & channel_atoms != 0 {
                    return None;
                }
                let planes: Vec<usize> = (0..3)
                    .filter(|&c| c != cc && pix & parts.whole(c) != 0)
                    .collect();
                let partial = planes
                    .iter()
                    .any(|&c| pix & parts.whole(c) != parts.whole(c));
                // Without other components the pixel is the channel component's other digits.
                let fits = !planes.is_empty() || n > 1;
                let fits = fits && (i == 0 || planes.is_empty());
                (fits && !partial).then_some((pi, ci, cc, i, planes))
            })
        })
    });
    let Some((pi, ci, channel_axis, channel_digit, planes)) = layout else {
        return Err(Skip(
            "the operands are not one read by the output's pixel and one by its channel (each on components of the id of its own)"
                .into(),
        ));
    };
    let (pixel, channel) = (loads[pi].unwrap(), loads[ci].unwrap());
    let reconstructed = planes
        .iter()
        .fold(parts.whole(channel_axis), |m, &c| m | parts.whole(c));
    let above = parts.run(
        channel_axis,
        channel_digit + 1,
        parts.count(channel_axis).max(channel_digit + 1),
    );
    for g in &padding {
        let d = x.deps(g.cond);
        if d.unknown || d.gid_whole || d.symbols & !counters != 0 {
            return Err(Skip("the padding test is not understood".into()));
        }
        if atoms(&x, ir, parts, g.cond, &mut memo)? & !sides[pi] & !above != 0 {
            return Err(Skip("the padding test reads the channel".into()));
        }
    }

    // The guards bound every axis; nothing else may read memory that varies.
    let mut guarded = [false; 3];
    for g in &guards {
        let d = x.deps(g.cond);
        if d.symbols != 0 || d.unknown || d.gid_whole || d.varying_load {
            return Err(Skip(
                "a guard is not a bounds test on the invocation id".into(),
            ));
        }
        for (seen, used) in guarded.iter_mut().zip(d.gid) {
            *seen |= used;
        }
    }
    // A component no guard bounds is bounded by the rewrite where the launch is exact along
    // it (checked against the program in `apply`).
    let unguarded: Vec<usize> = planes
        .iter()
        .chain([&channel_axis])
        .copied()
        .filter(|&c| !guarded[c])
        .collect();
    // Components the rewrite leaves at zero must not matter.
    let mut used = pointer_atoms(&x, ir, parts, store_pointer, &mut memo)?
        | atoms(&x, ir, parts, store_value, &mut memo)?;
    for g in &guards {
        used |= atoms(&x, ir, parts, g.cond, &mut memo)?;
    }
    if let Value::Expr(h) = acc_init {
        used |= atoms(&x, ir, parts, h, &mut memo)?;
    }
    if used & !reconstructed != 0 {
        return Err(Skip(
            "the guards or the store read a component of the id neither operand reads".into(),
        ));
    }
    let value_deps = x.deps(store_value);
    if value_deps.symbols != 1 << ACC || value_deps.unknown || value_deps.gid_whole {
        return Err(Skip(
            "the stored value is not a function of the accumulator".into(),
        ));
    }
    let init_deps: Deps = match acc_init {
        Value::Expr(h) => x.deps(h),
        _ => Deps {
            unknown: true,
            ..Deps::default()
        },
    };
    if init_deps.symbols != 0 || init_deps.unknown || init_deps.gid_whole {
        return Err(Skip(
            "the accumulator's initial value is not understood".into(),
        ));
    }
    let split = match &digits[channel_axis] {
        Some(d) => {
            let radix = d.radix(channel_digit).expect("a bounded digit");
            Some(ChannelSplit {
                radix: factor(ir, kernel, &radix)?,
                pixel: match channel_digit {
                    0 if planes.is_empty() => PixelDigits::Above,
                    0 => PixelDigits::Elsewhere,
                    i => PixelDigits::Below(factor(ir, kernel, &d.bound(i))?),
                },
            })
        }
        None => None,
    };

    // Which reads are coalesced along which index.
    let innermost = Var::Loop(levels.last().expect("a nest").counter);
    let unit = |load: Handle<Expression>, v: Var| {
        let Expression::Load { pointer } = e.func.expressions[load] else {
            return false;
        };
        element_index(e, pointer)
            .and_then(|i| ir.index_form(i))
            .is_some_and(|f| f.coeff(v).as_constant() == Some(1))
    };
    let pixel_counter_fastest = planes
        .first()
        .is_none_or(|&p| !unit(pixel, Var::Builtin(gid, p as u32)))
        && unit(pixel, innermost);
    let channel_counter_fastest = unit(channel, innermost);
    Ok((
        Nest {
            levels,
            acc_init,
            operands: [
                Operand {
                    load: pixel,
                    counter_fastest: pixel_counter_fastest,
                },
                Operand {
                    load: channel,
                    counter_fastest: channel_counter_fastest,
                },
            ],
            padding,
            guards,
            store_pointer,
            store_value,
            planes,
            channel_axis,
            split,
            unguarded,
            extents: Vec::new(),
        },
        locals,
    ))
}

/// The rewritten entry point (with its workgroup arrays), as WGSL text.
fn generate(n: &Nest, x: &Exprs<'_>, cfg: &Config, entry: &str) -> Result<String, Skip> {
    let (px, bm, bn, bk, rm, rn) = (cfg.px, cfg.bm(), cfg.bn, cfg.bk, cfg.rm, cfg.rn);
    let (tm, nt) = (cfg.tm(), cfg.threads());
    let depth = n.levels.len();
    let counter_names: Vec<Option<String>> =
        (0..depth).map(|i| Some(format!("kfc_c{i}"))).collect();
    let mut symbols = counter_names.clone();
    symbols.resize(ACC + 1, None);
    let plain = Printer {
        x,
        gid: "kfc_gid",
        symbols: &[],
    };
    let in_nest = Printer {
        x,
        gid: "kfc_gid",
        symbols: &symbols,
    };
    let divisor = match &n.split {
        Some(s) => Some(s.radix.text(&plain)?),
        None => None,
    };
    let pixel = n.split.as_ref().map(|s| &s.pixel);
    let below = match pixel {
        Some(PixelDigits::Below(f)) => Some(f.text(&plain)?),
        _ => None,
    };
    let above = matches!(pixel, Some(PixelDigits::Above));
    let loads = [
        in_nest.expr(n.operands[0].load)?,
        in_nest.expr(n.operands[1].load)?,
    ];
    let padding = n
        .padding
        .iter()
        .map(|g| {
            in_nest
                .expr(g.cond)
                .map(|c| if g.active_when { c } else { format!("!{c}") })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let padding = (!padding.is_empty()).then(|| padding.join(" && "));

    let mut w = String::new();
    let _ = writeln!(
        w,
        "// KernelFoundry implicit GEMM: each workgroup computes {}x{} pixels by {bn} channels \
         ({rm}x{rn} per invocation),\n// staging {bk}-deep slices of the loop nest's products \
         through workgroup memory.",
        cfg.px, cfg.py
    );
    let vec4 = cfg.vec4();
    let elem = if vec4 { "vec4<f32>" } else { "f32" };
    let (sa, sb) = (cfg.stride(bm), cfg.stride(bn));
    let _ = writeln!(w, "var<workgroup> kfc_ta: array<{elem}, {}>;", bk * sa);
    let _ = writeln!(w, "var<workgroup> kfc_tb: array<{elem}, {}>;", bk * sb);
    let _ = writeln!(w);
    let _ = writeln!(w, "@compute @workgroup_size({nt})");
    let _ = writeln!(
        w,
        "fn {entry}(@builtin(local_invocation_index) kfc_tid: u32, @builtin(workgroup_id) kfc_wid: vec3<u32>) {{"
    );
    match &divisor {
        Some(d) => {
            let _ = writeln!(w, "    let kfc_d = {d};");
            if above {
                // No batch: the quotient is the pixel.
                let _ = writeln!(w, "    let kfc_n0 = kfc_wid.z * {bn}u;");
                let _ = writeln!(w, "    let kfc_zp = 0u;");
            }
        }
        None => {
            let _ = writeln!(w, "    let kfc_n0 = kfc_wid.z * {bn}u;");
            let _ = writeln!(w, "    let kfc_zp = 0u;");
        }
    }
    match &divisor {
        Some(_) if above => {}
        Some(_) => {
            let _ = writeln!(w, "    let kfc_nb = (kfc_d + {}u) / {bn}u;", bn - 1);
            let _ = writeln!(w, "    let kfc_q = kfc_wid.z / kfc_nb;");
            let _ = writeln!(w, "    let kfc_n0 = (kfc_wid.z % kfc_nb) * {bn}u;");
            let _ = writeln!(w, "    let kfc_zp = kfc_q * kfc_d;");
        }
        None => {}
    }
    if let Some(b) = &below {
        let _ = writeln!(w, "    let kfc_p = {b};");
    }
    let one_plane = n.one_plane();
    if one_plane {
        let _ = writeln!(w, "    let kfc_x0 = kfc_wid.x * {bm}u;");
    } else {
        let _ = writeln!(w, "    let kfc_x0 = kfc_wid.x * {px}u;");
        let _ = writeln!(w, "    let kfc_y0 = kfc_wid.y * {}u;", cfg.py);
    }
    // The invocation id of pixel `m` of the block (`None`: any pixel) and channel `c`.
    let gid3 = |m: Option<&str>, c: &str| {
        let mut comps = ["0u".to_owned(), "0u".to_owned(), "0u".to_owned()];
        if below.is_some() {
            // The channel digit with the pixel's digits below it.
            comps[n.channel_axis] = match m {
                Some(m) => format!("({c}) * kfc_p + kfc_x0 + {m}"),
                None => format!("({c}) * kfc_p"),
            };
            return format!("vec3<u32>({}, {}, {})", comps[0], comps[1], comps[2]);
        }
        if above {
            // The pixel's digits above the channel.
            comps[n.channel_axis] = match m {
                Some(m) => format!("(kfc_x0 + {m}) * kfc_d + {c}"),
                None => c.to_owned(),
            };
            return format!("vec3<u32>({}, {}, {})", comps[0], comps[1], comps[2]);
        }
        if let Some(m) = m {
            if one_plane {
                comps[n.planes[0]] = format!("kfc_x0 + {m}");
            } else {
                comps[n.planes[0]] = format!("kfc_x0 + {m} % {px}u");
                comps[n.planes[1]] = format!("kfc_y0 + {m} / {px}u");
            }
        }
        comps[n.channel_axis] = c.to_owned();
        format!("vec3<u32>({}, {}, {})", comps[0], comps[1], comps[2])
    };
    let _ = writeln!(w, "    let kfc_tm = kfc_tid % {tm}u;");
    let _ = writeln!(w, "    let kfc_tn = kfc_tid / {tm}u;");
    // Trip counts, and the reduction's length.
    for (i, l) in n.levels.iter().enumerate() {
        let start = plain.value(l.start)?;
        let bound = plain.expr(l.bound)?;
        let t = if l.ty == "u32" {
            if l.inclusive {
                format!("select(0u, {bound} - {start} + 1u, {bound} >= {start})")
            } else {
                format!("select(0u, {bound} - {start}, {bound} > {start})")
            }
        } else if l.inclusive {
            format!("u32(max({bound} - {start} + 1, 0))")
        } else {
            format!("u32(max({bound} - {start}, 0))")
        };
        let _ = writeln!(w, "    let kfc_t{i} = {t};");
        let _ = writeln!(w, "    let kfc_s{i} = {start};");
    }
    let total: Vec<String> = (0..depth).map(|i| format!("kfc_t{i}")).collect();
    let _ = writeln!(w, "    let kfc_kn = {};", total.join(" * "));
    let acc_cols = if vec4 { rn / 4 } else { rn };
    for r in 0..rm {
        for c in 0..acc_cols {
            let _ = writeln!(w, "    var kfc_acc_{r}_{c} = {elem}();");
        }
    }
    // Each invocation's share of a slice: the last element of a share past the slice's end
    // (slices deepened to whole taps) is skipped.
    let (la, lb) = ((bk * bm).div_ceil(nt), (bk * bn).div_ceil(nt));
    let within = |extent: u32, l: u32| -> Option<String> {
        let total = bk * extent;
        ((l + 1) * nt > total).then(|| format!("kfc_tid < {}u", total - l * nt))
    };
    for l in 0..la {
        let _ = writeln!(w, "    var kfc_pa_{l} = 0.0f;");
    }
    for l in 0..lb {
        let _ = writeln!(w, "    var kfc_pb_{l} = 0.0f;");
    }
    // Where element `l` of an invocation's share of a slice sits: (row of the side, depth in the
    // slice).
    let position = |extent: u32, counter_fastest: bool, l: u32| -> String {
        let e = format!("kfc_tid + {}u", l * nt);
        if counter_fastest {
            format!("let kfc_i = ({e}) / {bk}u; let kfc_kk = ({e}) % {bk}u;")
        } else {
            format!("let kfc_i = ({e}) % {extent}u; let kfc_kk = ({e}) / {extent}u;")
        }
    };
    // The nest's counters at reduction index `kfc_k`, innermost fastest. Where slices are a
    // whole number of taps deep (`kfc_k = slice + kfc_kk`, `slice` a multiple of the taps), the
    // inner counters are those of `kfc_kk`, and the outer one adds the slice's steps.
    let taps = n.taps().filter(|t| bk.is_multiple_of(*t));
    let mut decode = String::new();
    let mut rest = if taps.is_some() { "kfc_kk" } else { "kfc_k" }.to_owned();
    for i in (0..depth).rev() {
        let ty = &n.levels[i].ty;
        if i == 0 {
            if let Some(t) = taps {
                rest = format!("kfc_k0s / {t}u + {rest}");
            }
            let _ = write!(decode, "let kfc_c{i} = kfc_s{i} + {ty}({rest}); ");
        } else {
            let _ = write!(
                decode,
                "let kfc_c{i} = kfc_s{i} + {ty}({rest} % kfc_t{i}); let kfc_r{i} = {rest} / kfc_t{i}; "
            );
            rest = format!("kfc_r{i}");
        }
    }
    let fetch = |w: &mut String, indent: &str, slice: &str| {
        let sides = [
            ("a", bm, la, n.operands[0].counter_fastest),
            ("b", bn, lb, n.operands[1].counter_fastest),
        ];
        for (side, (name, extent, count, fastest)) in sides.into_iter().enumerate() {
            for l in 0..count {
                let _ = writeln!(w, "{indent}{{");
                let _ = writeln!(w, "{indent}    {}", position(extent, fastest, l));
                let _ = writeln!(w, "{indent}    let kfc_k0s = {slice};");
                let _ = writeln!(w, "{indent}    let kfc_k = kfc_k0s + kfc_kk;");
                let gid = if side == 0 {
                    gid3(Some("kfc_i"), "kfc_zp")
                } else {
                    gid3(None, "kfc_n0 + kfc_i")
                };
                let _ = writeln!(w, "{indent}    let kfc_gid = {gid};");
                let _ = writeln!(w, "{indent}    kfc_p{name}_{l} = 0.0f;");
                let live = match within(extent, l) {
                    Some(c) => format!("{c} && kfc_k < kfc_kn"),
                    None => "kfc_k < kfc_kn".to_owned(),
                };
                let _ = writeln!(w, "{indent}    if {live} {{");
                let _ = writeln!(w, "{indent}        {decode}");
                match (&padding, side) {
                    (Some(p), 0) => {
                        let _ = writeln!(w, "{indent}        if {p} {{");
                        let _ =
                            writeln!(w, "{indent}            kfc_p{name}_{l} = {};", loads[side]);
                        let _ = writeln!(w, "{indent}        }}");
                    }
                    _ => {
                        let _ = writeln!(w, "{indent}        kfc_p{name}_{l} = {};", loads[side]);
                    }
                }
                let _ = writeln!(w, "{indent}    }}");
                let _ = writeln!(w, "{indent}}}");
            }
        }
    };
    fetch(&mut w, "    ", "0u");
    let _ = writeln!(
        w,
        "    for (var kfc_k0 = 0u; kfc_k0 < kfc_kn; kfc_k0 = kfc_k0 + {bk}u) {{"
    );
    for (name, extent, stride, count, fastest) in [
        ("a", bm, sa, la, n.operands[0].counter_fastest),
        ("b", bn, sb, lb, n.operands[1].counter_fastest),
    ] {
        for l in 0..count {
            let target = if vec4 {
                format!("kfc_t{name}[kfc_kk * {stride}u + kfc_i / 4u][kfc_i % 4u]")
            } else {
                format!("kfc_t{name}[kfc_kk * {stride}u + kfc_i]")
            };
            let store = match within(extent, l) {
                Some(c) => format!("if {c} {{ {target} = kfc_p{name}_{l}; }}"),
                None => format!("{target} = kfc_p{name}_{l};"),
            };
            let _ = writeln!(w, "        {{ {} {store} }}", position(extent, fastest, l));
        }
    }
    let _ = writeln!(w, "        workgroupBarrier();");
    let _ = writeln!(w, "        if kfc_k0 + {bk}u < kfc_kn {{");
    fetch(&mut w, "            ", &format!("(kfc_k0 + {bk}u)"));
    let _ = writeln!(w, "        }}");
    let _ = writeln!(
        w,
        "        for (var kfc_kk = 0u; kfc_kk < {bk}u; kfc_kk = kfc_kk + 1u) {{"
    );
    let tn = cfg.tn();
    if vec4 {
        for g in 0..rm / 4 {
            let _ = writeln!(
                w,
                "            let kfc_a_{g} = kfc_ta[kfc_kk * {sa}u + {}u + kfc_tm];",
                g * tm
            );
        }
        for h in 0..rn / 4 {
            let _ = writeln!(
                w,
                "            let kfc_b_{h} = kfc_tb[kfc_kk * {sb}u + {}u + kfc_tn];",
                h * tn
            );
        }
        for r in 0..rm {
            for h in 0..rn / 4 {
                let _ = writeln!(
                    w,
                    "            kfc_acc_{r}_{h} = kfc_acc_{r}_{h} + kfc_a_{}.{} * kfc_b_{h};",
                    r / 4,
                    COMPONENTS[(r % 4) as usize]
                );
            }
        }
    } else {
        for r in 0..rm {
            let _ = writeln!(
                w,
                "            let kfc_a_{r} = kfc_ta[kfc_kk * {sa}u + {}u + kfc_tm];",
                r * tm
            );
        }
        for c in 0..rn {
            let _ = writeln!(
                w,
                "            let kfc_b_{c} = kfc_tb[kfc_kk * {sb}u + {}u + kfc_tn];",
                c * tn
            );
        }
        for r in 0..rm {
            for c in 0..rn {
                let _ = writeln!(
                    w,
                    "            kfc_acc_{r}_{c} = kfc_acc_{r}_{c} + kfc_a_{r} * kfc_b_{c};"
                );
            }
        }
    }
    let _ = writeln!(w, "        }}");
    let _ = writeln!(w, "        workgroupBarrier();");
    let _ = writeln!(w, "    }}");

    // One guarded store per output, with the baseline's guards, index and epilogue.
    let active: Vec<String> = n
        .guards
        .iter()
        .map(|g| {
            plain
                .expr(g.cond)
                .map(|c| if g.active_when { c } else { format!("!{c}") })
        })
        .collect::<Result<_, _>>()?;
    let mut active = n
        .extents
        .iter()
        .cloned()
        .chain(active)
        .collect::<Vec<_>>()
        .join(" && ");
    if active.is_empty() {
        active = "true".to_owned();
    }
    if divisor.is_some() {
        active = format!("kfc_n0 + kfc_j < kfc_d && {active}");
    }
    if below.is_some() {
        // A pixel past the digits below the channel would name the next channel's output.
        active = format!("kfc_x0 + kfc_m < kfc_p && {active}");
    }
    let init = if x.is_float_zero(n.acc_init) {
        None
    } else {
        Some(plain.value(n.acc_init)?)
    };
    for r in 0..rm {
        for c in 0..rn {
            // The output's row and column in the block, and its register.
            let (m, j, reg) = if vec4 {
                (
                    format!("({}u + kfc_tm) * 4u + {}u", (r / 4) * tm, r % 4),
                    format!("({}u + kfc_tn) * 4u + {}u", (c / 4) * tn, c % 4),
                    format!("kfc_acc_{r}_{}.{}", c / 4, COMPONENTS[(c % 4) as usize]),
                )
            } else {
                (
                    format!("{}u + kfc_tm", r * tm),
                    format!("{}u + kfc_tn", c * tn),
                    format!("kfc_acc_{r}_{c}"),
                )
            };
            let acc = match &init {
                Some(i) => format!("{i} + {reg}"),
                None => reg,
            };
            let mut syms: Vec<Option<String>> = vec![None; ACC + 1];
            syms[ACC] = Some(acc);
            let p = Printer {
                x,
                gid: "kfc_gid",
                symbols: &syms,
            };
            let _ = writeln!(w, "    {{");
            let _ = writeln!(w, "        let kfc_m = {m};");
            let _ = writeln!(w, "        let kfc_j = {j};");
            let _ = writeln!(
                w,
                "        let kfc_gid = {};",
                gid3(Some("kfc_m"), "kfc_zp + kfc_n0 + kfc_j")
            );
            let _ = writeln!(w, "        if {active} {{");
            let _ = writeln!(
                w,
                "            {} = {};",
                p.place(n.store_pointer)?,
                p.expr(n.store_value)?
            );
            let _ = writeln!(w, "        }}");
            let _ = writeln!(w, "    }}");
        }
    }
    let _ = writeln!(w, "}}");
    Ok(w)
}

/// Workgroup counts: blocks of `PX × PY` pixels over the parent's x-y grid, and along z the
/// channel blocks of every quotient.
fn launch_rule(n: &Nest, parent: &Program, cfg: &Config) -> Dispatch {
    let cdiv = |mut ops: Vec<Op>, b: u32| {
        ops.extend([
            Op::Lit(u64::from(b - 1)),
            Op::Add,
            Op::Lit(u64::from(b)),
            Op::Div,
        ]);
        ops
    };
    let z = match &n.split {
        Some(s) if matches!(s.pixel, PixelDigits::Above) => {
            cdiv(s.radix.size.ops().to_vec(), cfg.bn)
        }
        Some(s) => {
            // The batch: the id's extent over everything below it.
            let mut ops = super::grid_extent(parent, n.channel_axis);
            ops.extend_from_slice(s.radix.size.ops());
            if let PixelDigits::Below(b) = &s.pixel {
                ops.extend_from_slice(b.size.ops());
                ops.push(Op::Mul);
            }
            ops.push(Op::CeilDiv);
            ops.extend(cdiv(s.radix.size.ops().to_vec(), cfg.bn));
            ops.push(Op::Mul);
            ops
        }
        None => cdiv(super::grid_extent(parent, n.channel_axis), cfg.bn),
    };
    let (x, y) = match (n.planes.as_slice(), n.split.as_ref().map(|s| (&s.pixel, s))) {
        ([], Some((PixelDigits::Below(b), _))) => {
            (cdiv(b.size.ops().to_vec(), cfg.bm()), vec![Op::Lit(1)])
        }
        ([], Some((PixelDigits::Above, s))) => {
            // The pixels: the id's extent over the channels.
            let mut ops = super::grid_extent(parent, n.channel_axis);
            ops.extend_from_slice(s.radix.size.ops());
            ops.push(Op::CeilDiv);
            (cdiv(ops, cfg.bm()), vec![Op::Lit(1)])
        }
        ([a], _) => (
            cdiv(super::grid_extent(parent, *a), cfg.bm()),
            vec![Op::Lit(1)],
        ),
        _ => (
            cdiv(super::grid_extent(parent, n.planes[0]), cfg.px),
            cdiv(super::grid_extent(parent, n.planes[1]), cfg.py),
        ),
    };
    Dispatch {
        mode: DispatchMode::Workgroups,
        size: [
            SizeExpr::from_ops(x),
            SizeExpr::from_ops(y),
            SizeExpr::from_ops(z),
        ],
    }
}

#[cfg(test)]
mod tests;
