//! Parallel reduction: a workgroup, a group of lanes of one subgroup, or a column of lanes of a
//! workgroup, per baseline invocation, its lanes splitting the loops.
//!
//! A kernel that gives each invocation a whole row (`for (var c = 0u; c < cols; c++) { s += x[..] }`)
//! leaves a GPU nearly idle and reads memory with a stride of a row between neighbouring
//! invocations. This rewrite makes every baseline invocation a workgroup: the entry point's
//! `global_invocation_id` becomes `workgroup_id` (so every value the body computes from it,
//! such as the row, is the same for the whole workgroup), the launch rule launches one workgroup
//! per former invocation, and the workgroup's `KF_REDUCE_WG` invocations ("lanes") share the work:
//!
//! - every top-level counted loop whose iterations are independent becomes a strided loop
//!   (`for (var c = kf_lane; c < cols; c += KF_REDUCE_WG)`), so neighbouring lanes touch
//!   neighbouring addresses;
//! - after a loop, each accumulator (`acc = acc ⊕ f`, ⊕ in `+ - * max min & | ^`) is combined
//!   across the workgroup and every lane receives the total: through workgroup memory with a tree
//!   of barriers, or, where the adapter has subgroups, with `subgroupAdd`/`Max`/.. and one
//!   workgroup-memory step;
//! - a (value, index) pair of an arg-reduction (`if (v > m) { m = v; k = i; }`, see
//!   [`ir::ArgAccumulator`]) is combined the same ways (through workgroup memory, or with
//!   `subgroupShuffleXor` then workgroup memory), keeping the better value and, of equal values,
//!   the smaller index for a strict test and the larger for `>=`/`<=`: the loop's own tie rule,
//!   so the result is bit-identical to the loop's (no sum is reassociated);
//! - in the unrolled variants, each pass of a split `for`/`while` loop runs four iterations,
//!   each a copy of the body in its own block with the loop variable shadowed by a `let`
//!   (the later copies guarded by the loop's own condition), so a lane has several independent
//!   loads in flight instead of one;
//! - in the "passes written out" variants, the first 16 passes of each split loop are written as
//!   blocks with constant pass indices, and a read-only element that several split loops load at
//!   the same index form (a softmax's row) is loaded once, by the first, into a private array
//!   that the later ones read (registers, since every index is a constant); a loop does any
//!   passes after the sixteenth;
//! - global stores outside loops (`y[row] = acc`) are made by lane 0 only;
//! - everything else (guards, `let`s, loops that write only locals) runs on every lane, which
//!   all compute the same values.
//!
//! A whole workgroup per invocation is too much for short rows, and wrong for a kernel whose
//! neighbouring invocations already read neighbouring addresses: KernelBench's sum over the
//! middle dimension gives each invocation a column, read with a stride of a row, so one workgroup
//! per column makes its lanes read addresses a row apart, while the baseline leaves the GPU short
//! of loads in flight (32 768 invocations, each summing 1024 elements one after another). The "lane groups" variant
//! (adapters with subgroups) is the middle ground: every baseline invocation becomes a group of
//! `KF_REDUCE_GROUP` lanes (2, 4, 8 or 16, at most the smallest subgroup) of one subgroup, and a
//! workgroup of `KF_REDUCE_WG` lanes (whole subgroups) holds `KF_REDUCE_WG / KF_REDUCE_GROUP`
//! groups. The group's lanes split the loops as above (`for (var r = kf_sub; r < rows; r +=
//! KF_REDUCE_GROUP)`), combine accumulators and (value, index) pairs within the group with a
//! butterfly of `subgroupShuffleXor` (offsets `KF_REDUCE_GROUP / 2 .. 1` stay inside an aligned
//! group, and each lane gets the same total), and make the stores outside loops on the group's
//! lane 0. The baseline's invocation id is rebuilt from the group's place (see `group_launch`),
//! so the launch runs exactly the ids the baseline ran for every value of the two overrides.
//! There is no workgroup memory and no barrier, so a guard that differs between groups (an early
//! `return` past the end) is kept as written: the lanes of a group compute the same id and take
//! the same branches, and a shuffle only reads lanes of its own group. naga places no uniformity
//! requirement on subgroup operations (WGSL's `subgroup_uniformity` diagnostic is one naga does
//! not know), so it accepts them after such a `return`. A split loop that needs a
//! `storageBarrier()` (below) has no lane-groups variant. The variant reassociates a
//! floating-point sum or product, and its step says so (`reduce(subgroup, lane groups, float
//! sums reassociated)`).
//!
//! Lane groups still waste memory bandwidth on such columns: one subgroup load touches
//! `32 / KF_REDUCE_GROUP` columns × `KF_REDUCE_GROUP` rows, so with groups of 8 it reads 8
//! segments of 16 bytes, half of each 32-byte memory sector (KernelBench's sum over dim 1 stays at
//! 0.64× torch's speed on an H200). The "column groups" variant keeps the baseline's neighbouring
//! invocations on neighbouring lanes instead, and needs only workgroup memory, so it is offered
//! with or without subgroups: a workgroup of `KF_REDUCE_WG` lanes holds `KF_REDUCE_COLS`
//! consecutive baseline invocations (in local-invocation order), each split across
//! `S = KF_REDUCE_WG / KF_REDUCE_COLS` lanes: lane `l` takes column `l % KF_REDUCE_COLS` and split
//! index `kf_sub = l / KF_REDUCE_COLS`, so a subgroup reads whole rows of neighbouring columns
//! (`for (var r = kf_sub; r < rows; r += S)`). Each accumulator (and (value, index) pair) goes
//! through workgroup memory: every lane stores its value at its own index, and after a barrier
//! every lane folds `mem[s * KF_REDUCE_COLS + col]` for `s = 0 .. S` in that order, so all lanes
//! of a column get the same bits; a second barrier keeps the memory until all have read it.
//! Barriers need every lane, so the baseline's guard cannot stay a `return`: it becomes a flag,
//! `kf_live` (`if (i >= n) { kf_live = false; }`; a wrapping `if (i < n) { .. }` that ends the
//! function is folded into the flag before it and always taken), global stores outside loops
//! are made by live lanes of split index 0, and lanes that are not live compute harmlessly (a
//! read out of bounds is defined in WGSL) and store nothing. That is proven first, else the
//! variant is skipped with the reason (the other variants are still offered): no split loop
//! stores; every loop is counted and its bound and step are the same for every invocation
//! (`is_dispatch_uniform`), so lanes that are not live run the same trip counts (ragged rows
//! are refused); no called function loops; every other `return` is the whole body of an `if`
//! outside loops; a branch around a reduction is uniform to naga or is the wrapping guard. The
//! launch, as for lane groups, rebuilds the baseline's id from (workgroup, column) (see
//! `column_launch`), and spare columns past the baseline's workgroup are lanes that are not
//! live. Its step says when it reassociates a floating-point sum (`reduce(workgroup, column
//! groups, float sums reassociated)`).
//!
//! A top-level loop that accumulates into memory at every iteration (an attention row's
//! `for (j ..) { let p = exp(s(j) - m); den += p; for (c ..) { out[row * d + c] += p * v[..] } }`)
//! cannot be split: its iterations share the output row. When all of its global writes are in one
//! loop directly in its body, and that loop is splittable (see [`nested_map`]), every lane runs
//! the outer loop whole and the lanes split the nested one, each owning the elements of its `c`s.
//! The "outer loop in chunks" variant ([`Chunk`]) also shares the outer loop's own work: it walks
//! the range in chunks of `KF_REDUCE_WG`; lane `t` runs the statements before the nested loop for
//! iteration `chunk + t` (the score and its exponential), accumulating into lane partials that are
//! combined after the loop like any split loop's, and leaves the `let`s the nested loop reads in
//! workgroup memory; after a barrier every lane walks the chunk with those values, and where the
//! nested loop reads and writes one element that does not move with the outer loop, the walk runs
//! inside it with that element in a register (one read and one write per chunk). On an H200 the
//! KernelBench attention head went from 45 ms to 2.8 ms.
//!
//! What it proves first, from the IR ([`crate::analysis::ir`]), and skips otherwise: the kernel reads no
//! invocation builtin but `global_invocation_id`, uses no workgroup memory, barriers, atomics or
//! subgroup operations; each split loop is a counted, increasing loop whose only loop-carried
//! values are accumulators, whose global stores depend on the loop variable, and whose variable is
//! not read after it (unless a top-level store resets it first, as a counter shared by several
//! loops is); a buffer that is written is read only by the lane that writes the element
//! (the same index form in loops with the same start and step) or not at all; loops that are not
//! split write no global. Each workgroup then executes exactly what one baseline invocation did,
//! so writes to other rows or to shared outputs keep the baseline's meaning.
//!
//! Where one workgroup per row would exceed the adapter's workgroups per dimension on a declared
//! shape, a one-dimensional launch is folded into two: the baseline's workgroup count times its
//! workgroup width, which runs exactly the ids the baseline ran.
//!
//! Limits: a launch that is not one-dimensional keeps one workgroup per row and at most the
//! adapter's workgroups per dimension (the lane-groups variant keeps the baseline's workgroups
//! along y and z, and along x multiplies them by `cdiv(w * KF_REDUCE_GROUP, KF_REDUCE_WG)` for a
//! baseline workgroup of `w` invocations, which is 1 at its defaults for `w` up to 128); loops nested in other loops are not split (the outer one may be), except the one
//! nested loop of an outer loop that accumulates through memory (above);
//! builtins passed in a struct parameter are not rewritten; a guard that naga's uniformity
//! analysis cannot prove uniform before a reduction makes naga reject the variant, and the
//! operator skips.
//!
//! Invariant: the rewrite only inserts code and edits the header, step, parameter list,
//! workgroup size and global stores of the user's text; every other byte is kept.

use super::{Moves, Operator, Rewrite, Skip, Subject, Target};
use crate::analysis::ir::{
    self, AccOp, Accumulator, Analysis, Edit, InitialValue, Naming, TextRange, Var,
};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::program::{Dispatch, DispatchMode};
use naga::{BuiltIn, Expression, Handle, Statement, TypeInner};
use std::borrow::Cow;

/// The override that sets the workgroup size of a reduced kernel.
pub const WG: &str = "KF_REDUCE_WG";
/// The lane index parameter.
const LANE: &str = "kf_lane";

/// The parallel-reduction operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct ParallelReduction;

/// How partial results are combined across the workgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Combine {
    /// Workgroup memory and a tree of barriers.
    Tree,
    /// Subgroup operations, then one workgroup-memory step across subgroups.
    Subgroup,
}

struct SplitLoop {
    id: usize,
    accumulators: Vec<(Accumulator, bool)>,
    /// (value, index) pairs, combined with the loop's own tie rule.
    args: Vec<ir::ArgAccumulator>,
    /// A reduction loop in its body that the inner-split variant splits across a group of
    /// lanes of one subgroup (see [`inner_split`]).
    inner: Option<InnerSplit>,
    /// A loop nested in a top-level loop that every lane runs whole (see [`nested_map`]).
    nested: bool,
    /// For a nested loop, how the chunked variant shares the outer loop (see [`chunk_plan`]).
    chunk: Option<Chunk>,
}

/// The chunked variant of a loop nested in one every lane runs: the outer loop walks its range in
/// chunks of `KF_REDUCE_WG` iterations; in each, lane `t` runs the outer body's statements before
/// the nested loop for iteration `chunk + t` (the scores of an attention row), accumulating into
/// lane partials and leaving the `let`s the nested loop reads in workgroup memory; after a
/// barrier every lane walks the chunk's iterations with those values, splitting the nested loop
/// as before. The outer loop's accumulators are combined after it like a split loop's.
#[derive(Clone, Debug)]
struct Chunk {
    outer: usize,
    accumulators: Vec<(Accumulator, bool)>,
    /// The `let`s of the outer body before the nested loop that the nested loop reads: name and
    /// type.
    lets: Vec<(String, String)>,
}

/// A loop nested in a split loop, each iteration of which reduces into accumulators that start
/// at their identity (`var acc = 0.0; for (t ..) { acc += .. }`): in the inner-split variant the
/// outer loop's iterations go to groups of `KF_REDUCE_INNER` lanes of one subgroup, the inner
/// loop's iterations to the lanes of a group, and the group combines its partial results with
/// subgroup shuffles. A decode attention's weighted sum of values (64 channels, 1024 positions)
/// otherwise leaves most lanes idle while a few walk the whole cache.
struct InnerSplit {
    id: usize,
    accumulators: Vec<Accumulator>,
    /// Global stores of the outer loop outside the inner one, made by the group's first lane.
    stores: Vec<usize>,
}

/// The override that sets the lanes per group of the inner-split variant.
pub const INNER: &str = "KF_REDUCE_INNER";

/// The override that sets the lanes per group of the lane-groups variant, in which every baseline
/// invocation is a group of lanes of one subgroup (see [`group_launch`]).
pub const GROUP: &str = "KF_REDUCE_GROUP";

/// The override that sets the baseline invocations (columns) per workgroup of the column-groups
/// variant (see [`column_launch`]).
pub const COLS: &str = "KF_REDUCE_COLS";

struct Plan {
    gid_name: String,
    split: Vec<SplitLoop>,
    lane0: Vec<usize>,
    /// Top-level `if`s before or around a reduction whose condition naga cannot prove uniform.
    guards: Vec<usize>,
    /// Split loops that read, at elements other lanes own, a buffer earlier split loops wrote:
    /// a `storageBarrier()` goes before each.
    barriers: Vec<usize>,
    /// Rows folded into a second dispatch dimension: the baseline's workgroup width `w`, the
    /// former invocation id rebuilt as `workgroup_id.x * w + workgroup_id.y`.
    fold: Option<u32>,
    dispatch: Dispatch,
    /// Whether a split loop's accumulator is a floating-point sum or product, whose order of
    /// operations every variant changes (said in the lane-groups variant's step).
    reassociates: bool,
}

impl Operator for ParallelReduction {
    fn name(&self) -> &'static str {
        "reduce"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Parallelism, 1), (Dim::Work, -1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        super::invocations_expressible(subject)?;
        let parsed = ir::parse(&subject.program.wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&subject.program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let plan = plan(&a, subject)?;
        let sizes = workgroup_sizes(subject.target);
        let max_wg = *sizes
            .last()
            .ok_or_else(|| Skip("no workgroup size fits".into()))?;
        let mut combines = vec![Combine::Tree];
        if subject.target.has_subgroups() {
            combines.insert(0, Combine::Subgroup);
        }
        let any_unrollable = plan
            .split
            .iter()
            .any(|sl| !sl.nested && unrollable(&a, sl.id));
        // A loop nested in one every lane runs is split in the plain forms only.
        let nested = plan.split.iter().any(|sl| sl.nested);
        let mut out = Vec::new();
        let mut failures = Vec::new();
        for combine in combines {
            let mut modes = vec![Passes::Unroll(UNROLL), Passes::Plain];
            if combine == Combine::Subgroup || !subject.target.has_subgroups() {
                modes.insert(0, Passes::Registers(REGISTER_PASSES));
            }
            if combine == Combine::Subgroup {
                modes.push(Passes::Inner);
                match group_launch(subject.program) {
                    Ok((_, w)) => modes.push(Passes::Groups(w)),
                    Err(why) => failures.push(format!("lane groups: {why}")),
                }
            } else {
                // Column groups need only workgroup memory: offered wherever lane groups would
                // be, and on adapters without subgroups too.
                match column_launch(subject.program) {
                    Ok((_, w)) => modes.push(Passes::Columns(w)),
                    Err(why) => failures.push(format!("column groups: {why}")),
                }
            }
            if nested {
                modes.push(Passes::Chunked);
            }
            for passes in modes {
                let useful = match passes {
                    Passes::Groups(_)
                    | Passes::Columns(_)
                    | Passes::Registers(_)
                    | Passes::Inner
                        if nested =>
                    {
                        false
                    }
                    Passes::Chunked => plan.split.iter().any(|sl| sl.chunk.is_some()),
                    Passes::Plain | Passes::Groups(_) | Passes::Columns(_) => true,
                    Passes::Unroll(_) => any_unrollable,
                    Passes::Registers(_) => any_unrollable,
                    Passes::Inner => plan.split.iter().any(|sl| sl.inner.is_some()),
                };
                if !useful {
                    continue;
                }
                let text = match render(&a, &plan, combine, passes, max_wg, subject.target) {
                    Ok(text) => text,
                    Err(why)
                        if matches!(
                            passes,
                            Passes::Inner
                                | Passes::Groups(_)
                                | Passes::Columns(_)
                                | Passes::Chunked
                        ) =>
                    {
                        failures.push(why.0);
                        continue;
                    }
                    Err(why) => return Err(why),
                };
                match finish(subject, &plan, &text, combine, passes, &sizes) {
                    Ok(r) => out.push(r),
                    Err(why) => failures.push(why),
                }
            }
        }
        if out.is_empty() {
            return Err(Skip(format!(
                "the reduced kernel is not valid WGSL: {}",
                failures.join("; ")
            )));
        }
        Ok(out)
    }
}

/// Iterations of a split loop per pass in the unrolled variants.
pub const UNROLL: u32 = 4;
/// Passes written out (and values kept in registers) in the register variants.
pub const REGISTER_PASSES: u32 = 16;

/// How split loops are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Passes {
    /// One iteration per pass.
    Plain,
    /// `n` iterations per pass, each a copy of the body.
    Unroll(u32),
    /// The first `n` passes written out with constant indices, the values of a buffer that later
    /// loops read again kept in registers; a loop for the passes after them.
    Registers(u32),
    /// Reduction loops nested in split loops split across groups of lanes ([`InnerSplit`]).
    Inner,
    /// Loops nested in one every lane runs, that outer loop shared in chunks ([`Chunk`]).
    Chunked,
    /// Lane groups: every baseline invocation a group of `KF_REDUCE_GROUP` lanes of one
    /// subgroup, many groups per workgroup (see [`group_launch`]). Carries the baseline's
    /// workgroup size.
    Groups([u32; 3]),
    /// Column groups: `KF_REDUCE_COLS` consecutive baseline invocations per workgroup, each split
    /// across `KF_REDUCE_WG / KF_REDUCE_COLS` lanes that combine through workgroup memory (see
    /// [`column_launch`]). Carries the baseline's workgroup size.
    Columns([u32; 3]),
}

/// Loads of one read-only buffer element that several split loops repeat (`input[base + c]`
/// in each pass of a softmax): in the register variants the first loop keeps the values.
struct RowCache {
    /// The element type's WGSL name.
    ty: String,
    /// The loads to replace, by split loop (in text order; the first loop fills the registers).
    loads: Vec<(usize, TextRange)>,
    /// The text of the load that fills them, in the first loop.
    fill: TextRange,
}

/// Finds the buffers worth keeping in registers: read-only, loaded with the same index form in
/// two or more split loops that give an iteration to the same lane under the same condition,
/// loaded unconditionally in the first of them with an index computed outside its body.
fn row_caches(a: &Analysis<'_>, plan: &Plan) -> Vec<RowCache> {
    struct Candidate {
        global: Handle<naga::GlobalVariable>,
        first: usize,
        coeff: ir::Poly,
        rest: ir::IndexForm,
        cache: RowCache,
        fill: Option<TextRange>,
    }
    let split: Vec<usize> = plan
        .split
        .iter()
        .map(|sl| sl.id)
        .filter(|&id| unrollable(a, id))
        .collect();
    let bounds_text = |f: &ir::ForLoop| -> Option<Vec<String>> {
        f.bounds
            .iter()
            .map(|b| {
                Some(format!(
                    "{} {}",
                    b.cmp.wgsl(),
                    a.expr_wgsl(b.bound, Naming::Inline)?
                ))
            })
            .collect()
    };
    let mut found: Vec<Candidate> = Vec::new();
    for x in &a.accesses {
        let (false, Some(load), Some(range), Some(form)) =
            (x.write, x.load, x.span.clone(), &x.form)
        else {
            continue;
        };
        let Some(&id) = a.stmts[x.stmt].loops.first() else {
            continue;
        };
        if !split.contains(&id) || a.writes_global(x.global) {
            continue;
        }
        let f = a.loops[id]
            .for_loop
            .as_ref()
            .expect("split loops are counted");
        let var = Var::Loop(f.var);
        let coeff = form.coeff(var);
        if coeff.is_zero() || form.vars().any(|v| matches!(v, Var::Loop(w) if w != f.var)) {
            continue;
        }
        let rest = form.sub(&ir::IndexForm {
            terms: vec![(var, coeff.clone())],
            offset: Default::default(),
        });
        let same_block = |other: usize| {
            let (p, q) = (&a.stmts[a.loops[id].stmt], &a.stmts[a.loops[other].stmt]);
            p.parent == q.parent && p.part == q.part
        };
        let pos = found.iter().position(|c| {
            let g = a.loops[c.first].for_loop.as_ref().expect("counted");
            c.global == x.global
                && c.coeff == coeff
                && c.rest == rest
                && same_block(c.first)
                && same_mapping(a, g, f)
                && bounds_text(g).is_some()
                && bounds_text(g) == bounds_text(f)
        });
        let i = match pos {
            Some(i) => i,
            None => {
                found.push(Candidate {
                    global: x.global,
                    first: id,
                    coeff,
                    rest,
                    cache: RowCache {
                        ty: a.type_name_of(load),
                        loads: Vec::new(),
                        fill: range.clone(),
                    },
                    fill: None,
                });
                found.len() - 1
            }
        };
        let c = &mut found[i];
        c.cache.loads.push((id, range.clone()));
        // The fill: a load in the first loop, directly in its body, whose index needs nothing
        // computed inside the body.
        if id == c.first && c.fill.is_none() {
            let direct = a.stmts[x.stmt]
                .parent
                .is_some_and(|b| a.stmts[b].parent == Some(a.loops[id].stmt));
            let mut outside = true;
            a.visit(x.pointer, &mut |e| match *e {
                Expression::LocalVariable(v) if v != f.var && a.declared_in_loop(v, id) => {
                    outside = false
                }
                Expression::CallResult(_) => outside = false,
                _ => {}
            });
            let named_inside = a
                .function
                .named_expressions
                .keys()
                .any(|&h| a.expr_in_loop(h, id) && a.visit_contains(x.pointer, h));
            if direct && outside && !named_inside {
                c.fill = Some(range);
            }
        }
    }
    found
        .into_iter()
        .filter_map(|mut c| {
            let loops: Vec<usize> = c.cache.loads.iter().map(|(l, _)| *l).collect();
            let distinct = loops.iter().any(|&l| l != c.first);
            c.cache.fill = c.fill?;
            distinct.then_some(c.cache)
        })
        .collect()
}

/// Workgroup sizes worth trying within the adapter's limits, ascending.
fn workgroup_sizes(target: &Target) -> Vec<u32> {
    let max_inv = target.limit("max_compute_invocations_per_workgroup", 256);
    let max_x = target.limit("max_compute_workgroup_size_x", 256);
    [64u32, 128, 256, 512, 1024]
        .into_iter()
        .filter(|&w| u64::from(w) <= max_inv && u64::from(w) <= max_x)
        .collect()
}

fn plan(a: &Analysis<'_>, subject: &Subject<'_>) -> Result<Plan, Skip> {
    let skip = |why: String| Err(Skip(why));
    let module = a.module;
    if module
        .global_variables
        .iter()
        .any(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
    {
        return skip("the kernel already uses workgroup memory".into());
    }
    for name in [WG, LANE, "kf_red", "kf_sg", "kf_init_", "kf_guard", "kf_wg"] {
        if a.code().contains(name) {
            return skip(format!("the kernel already uses the name `{name}`"));
        }
    }
    // Builtins: only the global invocation id, as a plain parameter.
    for b in &a.builtins {
        if b.used() && b.builtin != BuiltIn::GlobalInvocationId {
            return skip(format!(
                "the kernel reads `{}`, which a workgroup per invocation would change",
                builtin_name(b.builtin)
            ));
        }
    }
    let gid = a
        .builtin(BuiltIn::GlobalInvocationId)
        .ok_or_else(|| Skip("the kernel has no `global_invocation_id`".into()))?;
    if gid.member.is_some() {
        return skip("the invocation id is passed in a struct parameter".into());
    }
    // Statements no lane split can keep.
    for s in &a.stmts {
        let why = match s.stmt {
            Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => "a barrier",
            Statement::WorkGroupUniformLoad { .. } => "workgroupUniformLoad",
            Statement::Atomic { .. } => "an atomic",
            Statement::SubgroupBallot { .. }
            | Statement::SubgroupCollectiveOperation { .. }
            | Statement::SubgroupGather { .. } => "a subgroup operation",
            _ => continue,
        };
        return skip(format!("the kernel uses {why}"));
    }
    for (h, g) in module.global_variables.iter() {
        if g.space == naga::AddressSpace::Private && a.writes_global(h) {
            return skip("the kernel writes a `var<private>`".into());
        }
    }

    // Loops not nested in another loop: split, or run on every lane.
    let mut split = Vec::new();
    for (id, l) in a.loops.iter().enumerate() {
        if l.depth != 0 {
            continue;
        }
        match splittable(a, id) {
            Ok((accumulators, args)) => {
                let inner = if accumulators.is_empty() && args.is_empty() {
                    inner_split(a, id)
                } else {
                    None
                };
                split.push(SplitLoop {
                    id,
                    accumulators,
                    args,
                    inner,
                    nested: false,
                    chunk: None,
                })
            }
            Err(why) => {
                let fx = a.loop_effects(id);
                if !fx.global_writes.is_empty()
                    || !fx.effectful_calls.is_empty()
                    || !fx.other.is_empty()
                {
                    match nested_map(a, id) {
                        Some(n) => split.push(SplitLoop {
                            id: n,
                            accumulators: Vec::new(),
                            args: Vec::new(),
                            inner: None,
                            nested: true,
                            chunk: chunk_plan(a, id, n).ok(),
                        }),
                        None => return skip(format!("loop {}: {why}", loop_label(a, id))),
                    }
                }
            }
        }
    }
    if split.is_empty() {
        return skip("no loop whose iterations can be split across a workgroup".into());
    }

    // Global stores (and effectful calls) outside loops: lane 0 only.
    let mut lane0 = Vec::new();
    for (s, st) in a.stmts.iter().enumerate() {
        if !st.loops.is_empty() {
            continue;
        }
        match *st.stmt {
            Statement::Store { pointer, .. } if a.root_global(pointer).is_some() => {
                if st.span.is_none() {
                    return skip("a store has no source text".into());
                }
                lane0.push(s);
            }
            Statement::Call {
                function, result, ..
            } => {
                let f = &module.functions[function];
                if a.function_is_effectful(function) {
                    let shared = a
                        .accesses
                        .iter()
                        .any(|x| a.function_writes_global(function, x.global));
                    if shared {
                        return skip(format!(
                            "`{}` writes memory the kernel also accesses",
                            f.name.clone().unwrap_or_default()
                        ));
                    }
                    if result.is_some() {
                        return skip(format!(
                            "the result of `{}`, which writes memory, would exist on one lane only",
                            f.name.clone().unwrap_or_default()
                        ));
                    }
                    if st.span.is_none() {
                        return skip("a call has no source text".into());
                    }
                    lane0.push(s);
                }
            }
            _ => {}
        }
    }

    let barriers = hazards(a, &split, &lane0)?;

    // Conditions naga's uniformity analysis would call non-uniform (a local `var`, a read_write
    // buffer) ahead of a barrier: evaluated once through `workgroupUniformLoad`.
    let reduces = |s: usize| {
        split.iter().any(|sl| {
            (!sl.accumulators.is_empty() || !sl.args.is_empty() || barriers.contains(&sl.id))
                && a.within(a.loops[sl.id].stmt, s)
        })
    };
    let mut guards = Vec::new();
    for (s, st) in a.stmts.iter().enumerate() {
        let Statement::If { condition, .. } = *st.stmt else {
            continue;
        };
        if !st.loops.is_empty() || naga_uniform(a, condition) {
            continue;
        }
        let returns = (s..a.stmts.len())
            .take_while(|&o| a.within(o, s))
            .any(|o| matches!(a.stmts[o].stmt, Statement::Return { .. }));
        if returns || reduces(s) {
            if st.span.is_none() {
                return skip("a guard has no source text".into());
            }
            guards.push(s);
        }
    }

    // One workgroup per former invocation.
    let mut size = super::one_workgroup_per_invocation(subject.program).size;
    let fold = fold_rows(subject, &mut size)?;
    let reassociates = split.iter().any(|sl| {
        sl.accumulators.iter().any(|(acc, _)| {
            matches!(acc.op, AccOp::Add | AccOp::Mul)
                && match &module.types[acc.ty].inner {
                    TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => {
                        s.kind == naga::ScalarKind::Float
                    }
                    _ => false,
                }
        })
    });
    Ok(Plan {
        reassociates,
        gid_name: gid.name.clone(),
        split,
        lane0,
        guards,
        barriers,
        fold,
        dispatch: Dispatch {
            mode: DispatchMode::Workgroups,
            size,
        },
    })
}

/// Where one workgroup per former invocation would exceed the adapter's workgroups per dimension
/// on a shape the kernel declares (a vocabulary-sized matrix-vector product), the rows are folded
/// into a second dimension: the baseline's own workgroups along `x` times its workgroup width, so
/// the folded launch runs exactly the invocation ids the baseline's launch ran, no more. Only for
/// a one-dimensional launch with a workgroup wider than one; `size` is rewritten in place.
fn fold_rows(subject: &Subject<'_>, size: &mut [SizeExpr]) -> Result<Option<u32>, Skip> {
    let limit = subject
        .target
        .limit("max_compute_workgroups_per_dimension", 65535);
    let kernel = subject.kernel;
    let program = subject.program;
    let declared: Vec<&kf_runtime::spec::Shape> = kernel
        .tune_shapes
        .iter()
        .chain(&kernel.verify_shapes)
        .collect();
    let base: kf_runtime::spec::Shape = kernel.sizes.iter().cloned().collect();
    let count = |shape: &kf_runtime::spec::Shape, e: &SizeExpr| {
        e.eval(|n: &str| {
            shape
                .get(n)
                .or_else(|| base.get(n))
                .copied()
                .or_else(|| program.constant(n))
        })
        .ok()
    };
    let too_many = std::iter::once(&base)
        .chain(declared)
        .any(|shape| count(shape, &size[0]).is_some_and(|c| c > limit));
    if !too_many {
        return Ok(None);
    }
    let w = program.workgroup_size[0];
    let one = |e: &SizeExpr| e.as_constant() == Some(1);
    if w <= 1
        || !one(&size[1])
        || !one(&size[2])
        || program.workgroup_size[1] != 1
        || program.workgroup_size[2] != 1
    {
        return Err(Skip(format!(
            "a workgroup per invocation needs more than the adapter's {limit} workgroups along x, \
             and the launch is not one-dimensional with a workgroup wider than one to fold"
        )));
    }
    // The baseline's workgroup count along x.
    let mut ops = program.dispatch.size[0].ops().to_vec();
    if program.dispatch.mode != DispatchMode::Workgroups {
        ops.push(Op::Lit(u64::from(w)));
        ops.push(Op::CeilDiv);
    }
    size[0] = SizeExpr::from_ops(ops);
    size[1] = SizeExpr::from_ops(vec![Op::Lit(u64::from(w))]);
    Ok(Some(w))
}

/// The loop nested in top-level loop `outer` that the lanes can split when `outer` itself cannot
/// be: every lane runs `outer` whole, in the same order, and the lanes share the iterations of
/// the one loop `n` directly in its body that writes memory. An attention row's
/// `for (j ..) { let p = exp(s(j) - m); den += p; for (c ..) { out[row * d + c] += p * v[..] } }`
/// accumulates into its output row through memory in every `j`, so `j` cannot be split; `c` can,
/// and each lane then owns the output elements of its `c`s across all of `outer`.
///
/// Proven: every global write of `outer` is directly in `n` (not in a loop nested in it); `n` is
/// splittable with no accumulators (its iterations write memory and carry nothing); and no
/// statement of `outer` outside `n` reads a buffer `n` writes. Locals outside `n` then hold the
/// same values on every lane: they depend on values that are the same on every lane (combined
/// totals, the row) and on no lane's share of `n`. Whether other loops' accesses to `n`'s
/// buffers are the same lane's elements is [`hazards`]'s check, as for every split loop.
fn nested_map(a: &Analysis<'_>, outer: usize) -> Option<usize> {
    let fx = a.loop_effects(outer);
    if !fx.effectful_calls.is_empty() || !fx.other.is_empty() || fx.global_writes.is_empty() {
        return None;
    }
    let mut target = None;
    for &w in &fx.global_writes {
        let [o, n] = a.stmts[a.accesses[w].stmt].loops[..] else {
            return None;
        };
        if o != outer || target.is_some_and(|t| t != n) {
            return None;
        }
        target = Some(n);
    }
    let n = target?;
    let (accs, args) = splittable(a, n).ok()?;
    if !accs.is_empty() || !args.is_empty() {
        return None;
    }
    let written: Vec<Handle<naga::GlobalVariable>> = fx
        .global_writes
        .iter()
        .map(|&w| a.accesses[w].global)
        .collect();
    let in_outer: Vec<usize> = a.loop_stmts(outer).collect();
    let in_n: Vec<usize> = a.loop_stmts(n).collect();
    let read_outside = a.accesses.iter().any(|x| {
        !x.write
            && written.contains(&x.global)
            && in_outer.contains(&x.stmt)
            && !in_n.contains(&x.stmt)
    });
    (!read_outside).then_some(n)
}

/// Whether the outer loop of nested split loop `n` can be chunked (see [`Chunk`]), and what it
/// shares: it is a `for` or `while` stepping by one while `< bound` or `<= bound`, whose variable
/// is not read after it; its body is the statements before `n` and then `n` (and a `while`'s
/// step); it carries nothing but accumulators, none of which `n` reads or updates; it has no
/// `break` or `continue` of its own; and `n` reads no local the statements before it write, only
/// their scalar or vector `let`s.
fn chunk_plan(a: &Analysis<'_>, outer: usize, n: usize) -> Result<Chunk, String> {
    let l = &a.loops[outer];
    let f = l.for_loop.as_ref().ok_or("the outer loop is not counted")?;
    if !matches!(f.kind, ir::LoopKind::For | ir::LoopKind::While)
        || f.decreasing
        || f.cond_negated
        || a.const_int(f.step) != Some(1)
        || f.bounds
            .iter()
            .any(|b| !matches!(b.cmp, ir::Cmp::Lt | ir::Cmp::Le))
    {
        return Err("the outer loop is not an increasing loop stepping by one".into());
    }
    let (Some(body), Some(_), Some(_), Some(n_span)) = (
        f.body_span.clone(),
        f.cond_span.clone(),
        f.init_value_span.clone(),
        a.loops[n].span.clone(),
    ) else {
        return Err("the outer loop has no source text to restate".into());
    };
    if a.loads_of(f.var).iter().any(|&h| !a.expr_in_loop(h, outer)) {
        return Err("the outer loop's variable is read after it".into());
    }
    let fx = a.loop_effects(outer);
    if !fx.carried.is_empty() || !fx.args.is_empty() {
        return Err("the outer loop carries values".into());
    }
    let in_n: Vec<usize> = a.loop_stmts(n).collect();
    let mut accumulators = Vec::new();
    for acc in fx.accumulators {
        if acc.updates.iter().any(|u| in_n.contains(u))
            || a.loads_of(acc.var).iter().any(|&h| a.expr_in_loop(h, n))
            || !reducible_type(a, acc.ty, acc.op)
        {
            return Err(format!("the nested loop uses `{}`", acc.name));
        }
        let fix = !acc.op.idempotent()
            && !matches!(a.value_before(l.stmt, acc.var), Some(v) if is_identity(a, v, acc.op));
        accumulators.push((acc, fix));
    }
    // naga writes a `for` or `while` condition as `if !cond { break; }`: one break of its own.
    let own = |s: &usize, kind: fn(&Statement) -> bool| {
        kind(a.stmts[*s].stmt) && a.stmts[*s].loops.last() == Some(&outer)
    };
    if a.loop_stmts(outer)
        .filter(|s| own(s, |st| matches!(st, Statement::Break)))
        .count()
        > 1
        || a.loop_stmts(outer)
            .any(|s| own(&s, |st| matches!(st, Statement::Continue)))
    {
        return Err("the outer loop has a `break` or `continue` of its own".into());
    }
    for s in a.loop_stmts(outer) {
        let st = &a.stmts[s];
        // A local the statements before the nested loop write, read in it.
        if !in_n.contains(&s)
            && let Statement::Store { pointer, .. } = *st.stmt
            && let Some(v) = a.local_root(pointer)
            && v != f.var
            && Some(v) != a.loops[n].for_loop.as_ref().map(|nf| nf.var)
            && a.loads_of(v).iter().any(|&h| a.expr_in_loop(h, n))
        {
            return Err("the nested loop reads a local set before it".into());
        }
    }
    // The body's text: the statements before `n`, `n`, and only a `while`'s step after it.
    if n_span.start <= body.start || n_span.end >= body.end {
        return Err("the nested loop's text is not inside the outer body".into());
    }
    let mut rest = a.text(&(n_span.end..body.end - 1)).to_owned();
    if f.kind == ir::LoopKind::While {
        let step = a.with_semicolon(f.step_span.as_ref().ok_or("no step text")?);
        if step.start < n_span.end || step.end > body.end - 1 {
            return Err("the `while` step is not after the nested loop".into());
        }
        rest = format!(
            "{}{}",
            a.text(&(n_span.end..step.start)),
            a.text(&(step.end..body.end - 1))
        );
    }
    if !rest.trim().is_empty() {
        return Err("statements follow the nested loop".into());
    }
    let n_text = a.text(&n_span);
    let mut lets = Vec::new();
    for (&h, name) in a.function.named_expressions.iter() {
        let Some(s) = a.evaluated_at(h) else { continue };
        if a.stmts[s].loops.last() != Some(&outer) || !mentions(n_text, name) {
            continue;
        }
        if !matches!(
            a.type_of(h),
            TypeInner::Scalar(_) | TypeInner::Vector { .. }
        ) {
            return Err(format!("`{name}` is not a scalar or vector"));
        }
        lets.push((name.clone(), a.type_name_of(h)));
    }
    Ok(Chunk {
        outer,
        accumulators,
        lets,
    })
}

/// The outer loop of nested split loop `n` restated in chunks (see [`Chunk`]): `n_init` and
/// `n_step` are the nested loop's split start and step. Declarations of the workgroup arrays that
/// carry the `let`s go to `decls`.
fn chunk_text(
    a: &Analysis<'_>,
    n: usize,
    chunk: &Chunk,
    n_init: String,
    n_step: String,
    max_wg: u32,
    decls: &mut Vec<String>,
) -> Result<String, Skip> {
    let no_text = || Skip("a loop has no source text".into());
    let l = &a.loops[chunk.outer];
    let f = l.for_loop.as_ref().ok_or_else(no_text)?;
    let span = l.span.clone().ok_or_else(no_text)?;
    let ind = a.indent_at(span.start);
    let ty = a.type_name(f.var_ty);
    let j = &f.var_name;
    let init = a
        .text(f.init_value_span.as_ref().ok_or_else(no_text)?)
        .trim();
    let cond = a.text(f.cond_span.as_ref().ok_or_else(no_text)?).trim();
    let body = f.body_span.clone().ok_or_else(no_text)?;
    let nf = a.loops[n].for_loop.as_ref().ok_or_else(no_text)?;
    let n_span = a.loops[n].span.clone().ok_or_else(no_text)?;
    let inside = |r: &TextRange| r.start >= n_span.start && r.end <= n_span.end;
    let (Some(ni), Some(ns)) = (nf.init_value_span.clone(), nf.step_span.clone()) else {
        return Err(no_text());
    };
    if !inside(&ni) || !inside(&ns) {
        return Err(Skip(
            "the nested loop's start is not in its own header".into(),
        ));
    }
    let local = |r: TextRange| r.start - n_span.start..r.end - n_span.start;
    let (n_init2, n_step2) = (n_init.clone(), n_step.clone());
    let n_text = ir::apply_edits(
        a.text(&n_span),
        &[
            Edit::replace(local(ni), n_init),
            Edit::replace(local(ns), n_step),
        ],
    )
    .ok_or_else(|| Skip("the nested loop's edits overlap".into()))?;
    // The user's lines, indented for where they now sit.
    let body_indent = format!("\n{ind}    ");
    let prefix = a
        .text(&(body.start + 1..n_span.start))
        .trim()
        .replace(&body_indent, &format!("\n{ind}            "));
    let n_text = n_text.replace(&body_indent, &format!("\n{ind}        "));
    let mut o = String::new();
    o.push_str(&format!(
        "// KernelFoundry: `{j}` in chunks of KF_REDUCE_WG; each lane runs the statements before the nested loop\n\
         {ind}// for its own `{j}`, then every lane walks the chunk with their values.\n\
         {ind}for (var kf_ch: {ty} = {init}; ; kf_ch = kf_ch + {ty}(KF_REDUCE_WG)) {{\n"
    ));
    o.push_str(&format!(
        "{ind}    {{\n{ind}        let {j} = kf_ch;\n{ind}        if (!({cond})) {{\n{ind}            break;\n{ind}        }}\n{ind}    }}\n"
    ));
    o.push_str(&format!(
        "{ind}    {{\n{ind}        let {j} = kf_ch + {ty}({LANE});\n{ind}        if ({cond}) {{\n{ind}            {prefix}\n"
    ));
    for (name, t) in &chunk.lets {
        let arr = format!("kf_chunk_{}_{name}", chunk.outer);
        decls.push(format!("var<workgroup> {arr}: array<{t}, {max_wg}>;\n"));
        o.push_str(&format!("{ind}            {arr}[{LANE}] = {name};\n"));
    }
    o.push_str(&format!(
        "{ind}        }}\n{ind}    }}\n{ind}    workgroupBarrier();\n"
    ));
    let walk = |indent: &str| {
        let mut w = format!(
            "for (var kf_jj = 0u; kf_jj < KF_REDUCE_WG; kf_jj = kf_jj + 1u) {{\n\
             {indent}    let {j} = kf_ch + {ty}(kf_jj);\n\
             {indent}    if (!({cond})) {{\n{indent}        break;\n{indent}    }}\n"
        );
        for (name, _) in &chunk.lets {
            w.push_str(&format!(
                "{indent}    let {name} = kf_chunk_{}_{name}[kf_jj];\n",
                chunk.outer
            ));
        }
        w
    };
    match promoted(a, n, chunk, &n_span) {
        // The chunk's walk inside the nested loop, the element each lane owns in a register.
        Some(p) => {
            let header = ir::apply_edits(
                a.text(&(n_span.start..p.body.start)),
                &[
                    Edit::replace(local(nf.init_value_span.clone().expect("checked")), n_init2),
                    Edit::replace(local(nf.step_span.clone().expect("checked")), n_step2),
                ],
            )
            .ok_or_else(|| Skip("the nested loop's edits overlap".into()))?;
            let inner = p.body.start + 1..p.body.end - 1;
            let edits: Vec<Edit> = p
                .spans
                .iter()
                .map(|r| Edit::replace(r.start - inner.start..r.end - inner.start, "kf_elem"))
                .collect();
            let body = ir::apply_edits(a.text(&inner), &edits)
                .ok_or_else(|| Skip("the nested loop's edits overlap".into()))?
                .trim()
                .replace(
                    &format!("\n{ind}        "),
                    &format!("\n{ind}                "),
                );
            o.push_str(&format!(
                "{ind}    // KernelFoundry: each lane's element of `{elem}` stays in a register across the chunk.\n\
                 {ind}    {header}{{\n\
                 {ind}        var kf_elem = {elem};\n\
                 {ind}        {}\
                 {ind}            {body}\n\
                 {ind}        }}\n\
                 {ind}        {elem} = kf_elem;\n\
                 {ind}    }}\n",
                walk(&format!("{ind}        ")),
                elem = p.element,
            ));
        }
        None => {
            o.push_str(&format!("{ind}    {}", walk(&format!("{ind}    "))));
            o.push_str(&format!("{ind}        {n_text}\n{ind}    }}\n"));
        }
    }
    o.push_str(&format!("{ind}    workgroupBarrier();\n{ind}}}"));
    Ok(o)
}

/// The one element a nested split loop reads and writes, when the chunked walk can run inside
/// that loop with the element in a register: the loop is a `for` whose header does not mention
/// the outer variable or the chunk's `let`s, and has no `break` or `continue` of its own; every
/// access in it to a buffer it writes is at one index form, with no vector component, that does
/// not move with the outer variable; and it reads that element somewhere.
struct Promoted {
    /// The pointer's text (`out[i * d + c]`).
    element: String,
    /// Every span of it in the loop.
    spans: Vec<TextRange>,
    /// The nested loop's body block.
    body: TextRange,
}

fn promoted(a: &Analysis<'_>, n: usize, chunk: &Chunk, n_span: &TextRange) -> Option<Promoted> {
    let nf = a.loops[n].for_loop.as_ref()?;
    let of = a.loops[chunk.outer].for_loop.as_ref()?;
    if nf.kind != ir::LoopKind::For {
        return None;
    }
    let body = nf.body_span.clone()?;
    let header = a.text(&(n_span.start..body.start));
    if mentions(header, &of.var_name) || chunk.lets.iter().any(|(l, _)| mentions(header, l)) {
        return None;
    }
    let own = |s: usize, pat: fn(&Statement) -> bool| {
        pat(a.stmts[s].stmt) && a.stmts[s].loops.last() == Some(&n)
    };
    let in_n: Vec<usize> = a.loop_stmts(n).collect();
    if in_n
        .iter()
        .filter(|&&s| own(s, |st| matches!(st, Statement::Break)))
        .count()
        > 1
        || in_n
            .iter()
            .any(|&s| own(s, |st| matches!(st, Statement::Continue)))
    {
        return None;
    }
    let written: Vec<Handle<naga::GlobalVariable>> = a
        .accesses
        .iter()
        .filter(|x| x.write && in_n.contains(&x.stmt))
        .map(|x| x.global)
        .collect();
    let accesses: Vec<&ir::Access> = a
        .accesses
        .iter()
        .filter(|x| in_n.contains(&x.stmt) && written.contains(&x.global))
        .collect();
    let first = accesses.first()?;
    let form = first.form.as_ref()?;
    if !form.coeff(Var::Loop(of.var)).is_zero() || !accesses.iter().any(|x| !x.write) {
        return None;
    }
    let mut spans: Vec<TextRange> = Vec::new();
    for x in &accesses {
        if x.global != first.global
            || x.component.is_some()
            || x.form.as_ref() != Some(form)
            || !matches!(a.module.types[a.module.global_variables[x.global].ty].inner, TypeInner::Array { base, .. } if matches!(a.module.types[base].inner, TypeInner::Scalar(_)))
        {
            return None;
        }
        let span = x.span.clone()?;
        if span.start <= body.start || span.end >= body.end {
            return None;
        }
        if !spans.contains(&span) {
            spans.push(span);
        }
    }
    spans.sort_by_key(|r| r.start);
    Some(Promoted {
        element: a.text(&spans[0]).to_owned(),
        spans,
        body,
    })
}

/// Whether `text` contains the identifier `name` (not as part of a longer one).
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(word)
            && !text[i + name.len()..].chars().next().is_some_and(word)
    })
}

/// The reduction loop directly in split loop `outer`'s body that its iterations could share
/// among a group of lanes: a counted loop with no global writes whose only loop-carried values
/// are accumulators starting at their identity, in an outer loop that reads no buffer it writes
/// (its stores are made by one lane of the group).
fn inner_split(a: &Analysis<'_>, outer: usize) -> Option<InnerSplit> {
    let inner = (0..a.loops.len())
        .find(|&n| a.loops[n].parent == Some(outer) && a.stmts[a.loops[n].stmt].loops == [outer])?;
    let (accs, args) = splittable(a, inner).ok()?;
    if accs.is_empty() || !args.is_empty() || accs.iter().any(|(_, fix)| *fix) {
        return None;
    }
    if !a.loop_effects(inner).global_writes.is_empty() {
        return None;
    }
    // Accumulators a shuffle combines: 32-bit scalars.
    for (acc, _) in &accs {
        match &a.module.types[acc.ty].inner {
            TypeInner::Scalar(s) if s.width == 4 => {}
            _ => return None,
        }
    }
    let in_outer: Vec<usize> = a.loop_stmts(outer).collect();
    let written: Vec<Handle<naga::GlobalVariable>> = a
        .accesses
        .iter()
        .filter(|x| x.write && in_outer.contains(&x.stmt))
        .map(|x| x.global)
        .collect();
    if a.accesses
        .iter()
        .any(|x| !x.write && in_outer.contains(&x.stmt) && written.contains(&x.global))
    {
        return None;
    }
    let mut stores = Vec::new();
    for &s in &in_outer {
        if let Statement::Store { pointer, .. } = *a.stmts[s].stmt
            && a.root_global(pointer).is_some()
        {
            if a.stmts[s].span.is_none() || a.stmts[s].loops != [outer] {
                return None;
            }
            stores.push(s);
        }
    }
    Some(InnerSplit {
        id: inner,
        accumulators: accs.into_iter().map(|(acc, _)| acc).collect(),
        stores,
    })
}

/// The launch of the lane-groups variant, and the baseline's workgroup size.
///
/// The baseline runs `w = wx * wy * wz` ids in each of its workgroups, `(nx, ny, nz)` of them.
/// The variant gives each baseline workgroup `k = cdiv(w * KF_REDUCE_GROUP, KF_REDUCE_WG)`
/// workgroups along x, enough to hold `w` groups: it launches `(nx * k, ny, nz)`, and group `g`
/// of the `j`-th of the `k` workgroups of baseline workgroup `(x, y, z)` is the baseline's local
/// invocation `j * (KF_REDUCE_WG / KF_REDUCE_GROUP) + g` (in `local_invocation_index` order) of
/// it; groups past `w` (spare groups of the last of the `k`) return at once. So the variant runs
/// exactly the ids the baseline ran, for every value of the two overrides, and its launch rule,
/// written over them, stays right when the parameter operator moves them (see
/// [`group_preamble`]).
fn group_launch(program: &kf_runtime::Program) -> Result<(Dispatch, [u32; 3]), String> {
    widened_launch(program, |w| {
        vec![
            Op::Lit(w),
            Op::Size(Cow::Borrowed(GROUP)),
            Op::Mul,
            Op::Size(Cow::Borrowed(WG)),
            Op::CeilDiv,
        ]
    })
}

/// The launch of the column-groups variant, and the baseline's workgroup size.
///
/// As in [`group_launch`], each of the baseline's `(nx, ny, nz)` workgroups of `w` ids becomes
/// `k = cdiv(w, C)` workgroups along x, for `C = min(KF_REDUCE_COLS, KF_REDUCE_WG)` columns per
/// workgroup: column `c` of the `j`-th of them is the baseline's local invocation `j * C + c`
/// (in `local_invocation_index` order), so neighbouring lanes keep neighbouring invocations.
/// Columns past `w` (spare columns of the last of the `k`) are lanes that are not live: they
/// reach every barrier but store nothing. So the variant runs exactly the ids the baseline ran,
/// for every value of the two overrides (see [`column_preamble`]).
fn column_launch(program: &kf_runtime::Program) -> Result<(Dispatch, [u32; 3]), String> {
    widened_launch(program, |w| {
        vec![
            Op::Lit(w),
            Op::Size(Cow::Borrowed(COLS)),
            Op::Size(Cow::Borrowed(WG)),
            Op::Min,
            Op::CeilDiv,
        ]
    })
}

/// The baseline's launch in workgroups, its count along x multiplied by `per(w)` for a baseline
/// workgroup of `w` invocations; and the baseline's workgroup size.
fn widened_launch(
    program: &kf_runtime::Program,
    per: impl Fn(u64) -> Vec<Op>,
) -> Result<(Dispatch, [u32; 3]), String> {
    let wgs = program.workgroup_size;
    if wgs.contains(&0) {
        return Err("the baseline's workgroup size is unknown".into());
    }
    let w: u64 = wgs.iter().map(|&d| u64::from(d)).product();
    let mut size = program.dispatch.size.clone();
    for (d, expr) in size.iter_mut().enumerate() {
        let mut ops = expr.ops().to_vec();
        if program.dispatch.mode == DispatchMode::Grid && wgs[d] != 1 {
            ops.push(Op::Lit(u64::from(wgs[d])));
            ops.push(Op::CeilDiv);
        }
        if d == 0 {
            ops.extend(per(w));
            ops.push(Op::Mul);
        }
        *expr = SizeExpr::from_ops(ops);
    }
    Ok((
        Dispatch {
            mode: DispatchMode::Workgroups,
            size,
        },
        wgs,
    ))
}

/// The baseline's invocation id `gid` (named as the baseline names it), rebuilt as a `let` from
/// `kf_grp`, the baseline's local invocation index, and `kf_k`, the workgroups along x per
/// baseline workgroup, for a baseline workgroup of size `wgs`.
fn rebuilt_id(gid: &str, wgs: [u32; 3]) -> String {
    let [wx, wy, wz] = wgs;
    let w = wx * wy * wz;
    // The baseline's local id along each dimension, from the group's place in its workgroup.
    let local = |below: u32, size: u32| -> Option<String> {
        if size == 1 {
            return None;
        }
        let q = if below == 1 {
            "kf_grp".to_owned()
        } else {
            format!("kf_grp / {below}u")
        };
        Some(if below * size == w {
            q
        } else {
            format!("({q}) % {size}u")
        })
    };
    let dim = |wg: String, size: u32, below: u32| -> String {
        let base = if size == 1 {
            wg
        } else {
            format!("{wg} * {size}u")
        };
        match local(below, size) {
            Some(l) => format!("{base} + {l}"),
            None => base,
        }
    };
    let x = dim("(kf_wg.x / kf_k)".to_owned(), wx, 1);
    let y = dim("kf_wg.y".to_owned(), wy, wx);
    let z = dim("kf_wg.z".to_owned(), wz, wx * wy);
    format!("let {gid} = vec3<u32>({x}, {y}, {z});")
}

/// The statements at the top of the lane-groups variant's body: the lane's place in its group,
/// its group, and the baseline's invocation id `gid` (named as the baseline names it) rebuilt
/// from the group, for a baseline workgroup of size `wgs` (see [`group_launch`]).
fn group_preamble(gid: &str, wgs: [u32; 3]) -> String {
    let w: u32 = wgs.iter().product();
    let id = rebuilt_id(gid, wgs);
    format!(
        "\n    // KernelFoundry: every invocation of the original kernel is a group of {GROUP} lanes of one\n    // subgroup (lane `kf_sub` of group `kf_grp`), each original workgroup `kf_k` workgroups along x;\n    // the former invocation id is rebuilt from the group.\n    let kf_sub = kf_sg_lane % {GROUP};\n    let kf_k = ({w}u * {GROUP} + {WG} - 1u) / {WG};\n    let kf_grp = (kf_wg.x % kf_k) * ({WG} / {GROUP}) + kf_sg * (kf_sg_size / {GROUP}) + kf_sg_lane / {GROUP};\n    if (kf_grp >= {w}u) {{\n        return;\n    }}\n    {id}"
    )
}

/// The statements at the top of the column-groups variant's body: the lane's column `kf_col`
/// and split index `kf_sub`, the column's place `kf_grp` in the baseline's workgroup, whether the
/// lane is live, and the baseline's invocation id `gid` rebuilt from the column, for a baseline
/// workgroup of size `wgs` (see [`column_launch`]).
fn column_preamble(gid: &str, wgs: [u32; 3]) -> String {
    let w: u32 = wgs.iter().product();
    let id = rebuilt_id(gid, wgs);
    format!(
        "\n    // KernelFoundry: column groups. A workgroup holds `kf_cols` consecutive invocations of the\n    // original kernel (column `kf_col`), each split across `kf_nsub` lanes (split index `kf_sub`),\n    // each original workgroup `kf_k` workgroups along x; the former invocation id is rebuilt from\n    // the column. A lane of a column the original did not run, or whose invocation returned, is\n    // not live (`kf_live`): it reaches every barrier but stores nothing.\n    let kf_cols = min({COLS}, {WG});\n    let kf_col = {LANE} % kf_cols;\n    let kf_sub = {LANE} / kf_cols;\n    let kf_nsub = {WG} / kf_cols;\n    let kf_k = ({w}u + kf_cols - 1u) / kf_cols;\n    let kf_grp = (kf_wg.x % kf_k) * kf_cols + kf_col;\n    var kf_live = kf_grp < {w}u;\n    {id}"
    )
}

/// Whether every invocation of a dispatch sees the same value of `h`, to naga too once the
/// invocation id comes from the lane (no local variables, call results or invocation builtins).
fn column_uniform(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    let mut reads_argument = false;
    a.visit(h, &mut |e| {
        if matches!(e, Expression::FunctionArgument(_)) {
            reads_argument = true;
        }
    });
    !reads_argument && naga_uniform(a, h)
}

/// Whether `block` (of a function of `module`), or a function it calls, holds a loop.
fn block_has_loop(module: &naga::Module, block: &naga::Block) -> bool {
    block.iter().any(|st| match st {
        Statement::Loop { .. } => true,
        Statement::Block(b) => block_has_loop(module, b),
        Statement::If { accept, reject, .. } => {
            block_has_loop(module, accept) || block_has_loop(module, reject)
        }
        Statement::Switch { cases, .. } => cases.iter().any(|c| block_has_loop(module, &c.body)),
        Statement::Call { function, .. } => {
            block_has_loop(module, &module.functions[*function].body)
        }
        _ => false,
    })
}

/// The edits the column-groups variant makes besides the split loops, after proving that lanes
/// that are not live can run the whole body harmlessly and reach every barrier:
///
/// - no split loop stores (a store is the only effect, and outside loops it is skipped by the
///   lanes that are not live);
/// - every loop is counted, with a bound and step that are the same for every invocation (the
///   start too, unless the loop counts up to a `<`/`<=` bound), so that a lane that is not live,
///   computing with an id the baseline never ran, stops as the live ones do; no called function
///   loops;
/// - each `return` (but the last statement) is the only statement of an `if` without `else`
///   outside loops, the baseline's guard: it becomes `kf_live = false;`;
/// - a branch around a reduction has a condition naga sees uniform, or is the guard's other
///   spelling, an `if` without `else` that ends the function (`if (i < n) { .. }`): its condition
///   is folded into `kf_live` before it and the branch always taken.
fn column_edits(a: &Analysis<'_>, plan: &Plan) -> Result<Vec<Edit>, Skip> {
    let skip = |why: String| Err(Skip(format!("column groups: {why}")));
    for sl in &plan.split {
        let fx = a.loop_effects(sl.id);
        if !fx.global_writes.is_empty() || !fx.effectful_calls.is_empty() {
            return skip(format!(
                "loop {} stores, and lanes that are not live would run it",
                loop_label(a, sl.id)
            ));
        }
    }
    for (id, l) in a.loops.iter().enumerate() {
        let Some(f) = l.for_loop.as_ref() else {
            return skip(format!(
                "loop {} is not a counted loop, so lanes that are not live might not stop",
                loop_label(a, id)
            ));
        };
        let counts_up = !f.decreasing
            && f.bounds
                .iter()
                .all(|b| matches!(b.cmp, ir::Cmp::Lt | ir::Cmp::Le));
        let uniform = |h: Handle<Expression>| a.is_dispatch_uniform(h);
        let start_ok = counts_up || f.init.is_none_or(uniform);
        if f.bounds.is_empty()
            || !f
                .bounds
                .iter()
                .all(|b| uniform(b.bound) && b.offset.is_none_or(uniform))
            || !uniform(f.step)
            || !start_ok
        {
            return skip(format!(
                "the trip count of loop {} depends on the invocation",
                loop_label(a, id)
            ));
        }
    }
    for st in &a.stmts {
        if let Statement::Call { function, .. } = *st.stmt
            && block_has_loop(a.module, &a.module.functions[function].body)
        {
            return skip(format!(
                "`{}` loops, and lanes that are not live would call it",
                a.module.functions[function]
                    .name
                    .clone()
                    .unwrap_or_default()
            ));
        }
    }
    // The statements of a block part, without `Emit`s.
    let part_of = |parent: usize, part: ir::Part| -> Vec<usize> {
        (0..a.stmts.len())
            .filter(|&o| {
                a.stmts[o].parent == Some(parent)
                    && a.stmts[o].part == part
                    && !matches!(a.stmts[o].stmt, Statement::Emit(_))
            })
            .collect()
    };
    // Whether statement `s` ends the function: the last of its block, in blocks and branches
    // that are each the last of theirs (a `return` there is the one at the end, which naga also
    // writes into both branches of a final `if`).
    let ends_function = |s: usize| -> bool {
        let mut x = s;
        loop {
            let last = a
                .siblings(x)
                .into_iter()
                .rfind(|&o| !matches!(a.stmts[o].stmt, Statement::Emit(_)));
            if last != Some(x) {
                return false;
            }
            match a.stmts[x].parent {
                None => return true,
                Some(p) if matches!(a.stmts[p].stmt, Statement::Loop { .. }) => return false,
                Some(p) => x = p,
            }
        }
    };
    // The statements of a branch that do something: not `Emit`s, nor the return at the end.
    let acting = |parent: usize, part: ir::Part| -> Vec<usize> {
        part_of(parent, part)
            .into_iter()
            .filter(|&o| !(matches!(a.stmts[o].stmt, Statement::Return { .. }) && ends_function(o)))
            .collect()
    };
    let mut edits = Vec::new();
    for (s, st) in a.stmts.iter().enumerate() {
        match *st.stmt {
            Statement::Return { .. } if ends_function(s) => {}
            Statement::Return { .. } => {
                let guard = st.parent.filter(|&p| {
                    st.loops.is_empty()
                        && st.part == ir::Part::Accept
                        && matches!(a.stmts[p].stmt, Statement::If { .. })
                        && part_of(p, ir::Part::Accept) == [s]
                        && acting(p, ir::Part::Reject).is_empty()
                });
                let (Some(_), Some(span)) = (guard, st.span.as_ref()) else {
                    return skip(
                        "a `return` is not the only statement of an `if` outside loops".into(),
                    );
                };
                edits.push(Edit::replace(a.with_semicolon(span), "kf_live = false;"));
            }
            Statement::If { condition, .. } if st.loops.is_empty() => {
                let reduces = plan.split.iter().any(|sl| {
                    (!sl.accumulators.is_empty() || !sl.args.is_empty())
                        && a.within(a.loops[sl.id].stmt, s)
                });
                if !reduces || column_uniform(a, condition) {
                    continue;
                }
                let span = st.span.clone();
                let (true, true, Some(span)) = (
                    acting(s, ir::Part::Reject).is_empty(),
                    ends_function(s),
                    span,
                ) else {
                    return skip(
                        "a branch around a reduction depends on the invocation and is not a guard"
                            .into(),
                    );
                };
                let code = &a.code()[span.clone()];
                let open = code
                    .strip_prefix("if")
                    .and_then(|rest| rest.find('{').map(|o| 2 + o))
                    .ok_or_else(|| Skip("column groups: a guard's text was not found".into()))?;
                let cond = span.start + 2..span.start + open;
                let indent = a.indent_at(span.start);
                edits.push(Edit::insert(
                    span.start,
                    format!(
                        "// KernelFoundry: the branch is taken by every lane (it holds barriers); lanes it would skip are not live.\n{indent}kf_live = kf_live && ({});\n{indent}",
                        a.text(&cond).trim()
                    ),
                ));
                edits.push(Edit::replace(cond, " (true) "));
            }
            Statement::Switch { .. } if st.loops.is_empty() => {
                let reduces = plan.split.iter().any(|sl| a.within(a.loops[sl.id].stmt, s));
                if reduces {
                    return skip("a reduction sits in a `switch`".into());
                }
            }
            _ => {}
        }
    }
    Ok(edits)
}

/// Lanes per group in the lane-groups variant: 2, 4, 8 and 16, at most the smallest subgroup
/// (so that a group never spans two subgroups).
fn group_sizes(target: &Target) -> Vec<u32> {
    let min_sg = target.limit("subgroup_min_size", 4);
    [2u32, 4, 8, 16]
        .into_iter()
        .filter(|&g| u64::from(g) <= min_sg)
        .collect()
}

/// Workgroup sizes of the lane-groups variant, ascending: whole numbers of the largest subgroup,
/// so that every subgroup is full and the groups tile the workgroup, from one subgroup up (a
/// baseline workgroup of a few invocations fills only that many groups of a workgroup).
fn group_workgroup_sizes(target: &Target) -> Vec<u32> {
    let max_sg = target.limit("subgroup_max_size", 128).max(1);
    let max_inv = target.limit("max_compute_invocations_per_workgroup", 256);
    let max_x = target.limit("max_compute_workgroup_size_x", 256);
    [8u32, 16, 32, 64, 128, 256, 512, 1024]
        .into_iter()
        .filter(|&w| {
            let w = u64::from(w);
            w.is_multiple_of(max_sg) && w <= max_inv && w <= max_x
        })
        .collect()
}

/// The default (workgroup size, lanes per group) of the lane-groups variant for a baseline
/// workgroup of size `wgs`: 8 lanes (or the smallest subgroup), and the smallest workgroup that
/// holds the baseline workgroup's groups, else the largest.
fn group_defaults(target: &Target, wgs: [u32; 3]) -> (u32, u32) {
    let w: u32 = wgs.iter().product();
    let group = default_inner(&group_sizes(target));
    let sizes = group_workgroup_sizes(target);
    let wg = sizes
        .iter()
        .copied()
        .find(|&s| u64::from(s) >= u64::from(w) * u64::from(group))
        .or_else(|| sizes.last().copied())
        .unwrap_or(64);
    (wg, group)
}

/// The first choice of columns per workgroup of the column-groups variant: the largest
/// subgroup (so that a subgroup's lanes are neighbouring invocations and its loads coalesce),
/// or 32 on an adapter without subgroups.
fn column_base(target: &Target) -> u32 {
    if target.has_subgroups() {
        target.limit("subgroup_max_size", 32).clamp(1, 1024) as u32
    } else {
        32
    }
}

/// Workgroup sizes of the column-groups variant, ascending: those of the whole-workgroup
/// variants that are multiples of the base column count and hold at least two lanes per column.
fn column_workgroup_sizes(target: &Target) -> Vec<u32> {
    let base = column_base(target);
    workgroup_sizes(target)
        .into_iter()
        .filter(|&w| w.is_multiple_of(base) && w >= 2 * base)
        .collect()
}

/// Columns per workgroup of the column-groups variant: the base and its multiples by powers of
/// two, up to half the largest workgroup. Any pair of values is correct (the kernel takes
/// `min(KF_REDUCE_COLS, KF_REDUCE_WG)` columns, and lanes past a whole number of lanes per column
/// only repeat work no one reads), but a column count that does not divide the workgroup, or
/// leaves one lane per column, wastes lanes.
fn column_counts(target: &Target) -> Vec<u32> {
    let base = column_base(target);
    let max = column_workgroup_sizes(target).last().copied().unwrap_or(0);
    (0..8)
        .map(|j| base << j)
        .take_while(|&c| c <= max / 2)
        .collect()
}

/// The default (workgroup size, columns per workgroup) of the column-groups variant: 256 lanes
/// (or the largest size below) and the base column count.
fn column_defaults(target: &Target) -> (u32, u32) {
    let sizes = column_workgroup_sizes(target);
    let wg = sizes
        .iter()
        .copied()
        .filter(|&w| w <= 256)
        .max()
        .or_else(|| sizes.first().copied())
        .unwrap_or(256);
    (wg, column_base(target).min(wg / 2).max(1))
}

/// A helper that gives every lane of a column the total of the column's lanes: each lane stores
/// its value at its own index, and after a barrier every lane folds `mem[s * C + col]` for
/// `s = 0, 1, ..`, in that fixed order, so every lane of a column gets the same bits. A second
/// barrier keeps the memory until every lane has read it.
fn column_helper(op: AccOp, ty: &str) -> String {
    let tid = type_ident(ty);
    let mem = format!("kf_red_{tid}");
    let fold = combine_expr(op, "total", &format!("{mem}[s * cols + col]"));
    format!(
        "// The total of a column's lanes, on every lane of the column, folded in split-index order.
fn kf_cols_{op}_{tid}(value: {ty}, lane: u32, col: u32) -> {ty} {{
    let cols = min({COLS}, {WG});
    {mem}[lane] = value;
    workgroupBarrier();
    var total = {mem}[col];
    for (var s = 1u; s < {WG} / cols; s++) {{
        total = {fold};
    }}
    workgroupBarrier();
    return total;
}}
",
        op = op_name(op)
    )
}

fn column_arg_helper_name(op: AccOp, ties: ir::Ties, vt: &str, it: &str) -> String {
    arg_helper_name(op, ties, vt, it).replacen("kf_reduce_", "kf_cols_", 1)
}

/// The best (value, index) pair of a column's lanes, on every lane of the column: as
/// [`column_helper`], keeping the better pair by the loop's own tie rule (see [`arg_helper`]).
fn column_arg_helper(op: AccOp, ties: ir::Ties, vt: &str, it: &str) -> String {
    let name = column_arg_helper_name(op, ties, vt, it);
    let pair = pair_type_name(vt, it);
    let mem = pair_memory_name(vt, it);
    let cmp = if op == AccOp::Max { ">" } else { "<" };
    let tie = match ties {
        ir::Ties::First => "<",
        ir::Ties::Last => ">",
    };
    format!(
        "// The best (value, index) pair of a column's lanes, by the loop's tie rule, on every lane of the column.
fn {name}(value: {vt}, index: {it}, lane: u32, col: u32) -> {pair} {{
    let cols = min({COLS}, {WG});
    {mem}[lane] = {pair}(value, index);
    workgroupBarrier();
    var best = {mem}[col];
    for (var s = 1u; s < {WG} / cols; s++) {{
        let a = best;
        let b = {mem}[s * cols + col];
        if (b.v {cmp} a.v || (b.v == a.v && b.i {tie} a.i)) {{
            best = b;
        }}
    }}
    workgroupBarrier();
    return best;
}}
"
    )
}

/// A helper that gives every lane of a group the total of the group's lanes: a butterfly of
/// `subgroupShuffleXor` with offsets `width / 2 .. 1`, which stay inside an aligned group of
/// `width` lanes. Each step combines `x ⊕ y` on one lane and `y ⊕ x` on its partner, the same
/// value, so every lane ends with the same total.
fn inner_helper(op: AccOp, ty: &str, width: &str) -> String {
    let step = combine_expr(op, "x", "subgroupShuffleXor(x, offset)");
    format!(
        "\n// The total of a group's lanes, on every lane of the group.\nfn kf_inner_{}_{}(value: {ty}) -> {ty} {{\n    var x = value;\n    for (var offset = {width} / 2u; offset > 0u; offset = offset / 2u) {{\n        x = {step};\n    }}\n    return x;\n}}\n",
        op_name(op),
        type_ident(ty)
    )
}

fn inner_arg_helper_name(op: AccOp, ties: ir::Ties, vt: &str, it: &str) -> String {
    arg_helper_name(op, ties, vt, it).replacen("kf_reduce_", "kf_inner_", 1)
}

/// The (value, index) pair of a group's lanes, on every lane of the group: the same butterfly as
/// [`inner_helper`], keeping the better pair by the loop's own tie rule (see [`arg_helper`]),
/// whose order is total, so every lane ends with the same pair.
fn inner_arg_helper(op: AccOp, ties: ir::Ties, vt: &str, it: &str, width: &str) -> String {
    let name = inner_arg_helper_name(op, ties, vt, it);
    let pair = pair_type_name(vt, it);
    let cmp = if op == AccOp::Max { ">" } else { "<" };
    let tie = match ties {
        ir::Ties::First => "<",
        ir::Ties::Last => ">",
    };
    format!(
        "// The best (value, index) pair of a group's lanes, by the loop's tie rule, on every lane of the group.
fn {name}(value: {vt}, index: {it}) -> {pair} {{
    var best = {pair}(value, index);
    for (var offset = {width} / 2u; offset > 0u; offset = offset / 2u) {{
        let a = best;
        let b = {pair}(subgroupShuffleXor(a.v, offset), subgroupShuffleXor(a.i, offset));
        if (b.v {cmp} a.v || (b.v == a.v && b.i {tie} a.i)) {{
            best = b;
        }}
    }}
    return best;
}}
"
    )
}

/// The start and step of counted loop `f` when lane `lane` of `count` lanes takes every
/// `count`-th iteration: (`init + lane * step`, `var += count * step`).
fn lane_header(
    a: &Analysis<'_>,
    f: &ir::ForLoop,
    lane: &str,
    count: &str,
) -> Option<(String, String)> {
    let var_ty = a.type_name(f.var_ty);
    let int = |text: &str| {
        if var_ty == "u32" {
            text.to_owned()
        } else {
            format!("{var_ty}({text})")
        }
    };
    let step = match a.const_int(f.step) {
        Some(1) => None,
        Some(k) => Some(k.to_string()),
        None => Some(format!(
            "({})",
            a.expr_range(f.step)
                .map(|r| a.text(&r).to_owned())
                .or_else(|| a.expr_wgsl(f.step, Naming::Names))?
        )),
    };
    let times = |x: String| match &step {
        None => x,
        Some(s) => format!("{x} * {s}"),
    };
    let lane_term = times(int(lane));
    let init_text = f.init_value_span.as_ref().map_or("", |r| a.text(r).trim());
    let init = if f.init.and_then(|h| a.const_int(h)) == Some(0) {
        lane_term
    } else if is_simple(init_text) {
        format!("{init_text} + {lane_term}")
    } else {
        format!("({init_text}) + {lane_term}")
    };
    Some((init, format!("{} += {}", f.var_name, times(int(count)))))
}

fn loop_label(a: &Analysis<'_>, id: usize) -> String {
    match a.loops[id]
        .span
        .as_ref()
        .map(|r| a.source[..r.start].lines().count())
    {
        Some(line) => format!("at line {}", line.max(1)),
        None => format!("#{id}"),
    }
}

fn builtin_name(b: BuiltIn) -> String {
    use naga::common::wgsl::TryToWgsl;
    b.try_to_wgsl()
        .map_or_else(|| format!("{b:?}"), str::to_owned)
}

/// Whether `h`, a load of loop `id`'s variable `v` outside the loop, cannot see the value the loop
/// leaves in it (which splitting changes): the loop is a top-level statement and `h` comes before
/// it, or a top-level store to `v` comes between the loop and `h` (one counter reset for each of
/// several loops, `i = 0u; while (i < n) { ..; i++; }`).
fn cannot_see_final_value(
    a: &Analysis<'_>,
    id: usize,
    v: Handle<naga::LocalVariable>,
    h: Handle<Expression>,
) -> bool {
    let head = a.loops[id].stmt;
    if a.stmts[head].parent.is_some() {
        return false;
    }
    let Some(at) = a.evaluated_at(h) else {
        return false;
    };
    if at < head {
        return true;
    }
    let end = a.loop_stmts(id).max().unwrap_or(head);
    a.stores_to(v)
        .iter()
        .any(|&w| w > end && w < at && a.stmts[w].parent.is_none())
}

/// Whether loop `id` can be split across lanes; its accumulators, each with whether its value on
/// entry must be set aside (a sum that does not start at zero), and its (value, index) pairs.
#[allow(clippy::type_complexity)]
fn splittable(
    a: &Analysis<'_>,
    id: usize,
) -> Result<(Vec<(Accumulator, bool)>, Vec<ir::ArgAccumulator>), String> {
    let l = &a.loops[id];
    let f = l
        .for_loop
        .as_ref()
        .ok_or_else(|| l.not_counted.clone().unwrap_or_default())?;
    if f.decreasing
        || f.bounds
            .iter()
            .any(|b| !matches!(b.cmp, ir::Cmp::Lt | ir::Cmp::Le))
    {
        return Err("only increasing loops bounded by `<` or `<=` are split".into());
    }
    if f.init_value_span.is_none() || f.step_span.is_none() {
        return Err("the loop's start or step has no source text to edit".into());
    }
    match &a.module.types[f.var_ty].inner {
        TypeInner::Scalar(s)
            if matches!(s.kind, naga::ScalarKind::Uint | naga::ScalarKind::Sint) => {}
        _ => return Err("the loop variable is not an integer".into()),
    }
    if a.const_int(f.step).is_none() && a.evaluated_at(f.step).is_some_and(|s| a.in_loop(s, id)) {
        return Err("the step is computed inside the loop".into());
    }
    if a.loads_of(f.var)
        .iter()
        .any(|&h| !a.expr_in_loop(h, id) && !cannot_see_final_value(a, id, f.var, h))
    {
        return Err(format!("`{}` is read after the loop", f.var_name));
    }
    let fx = a.loop_effects(id);
    if let Some((_, why)) = fx.carried.first() {
        return Err(why.clone());
    }
    if let Some(why) = fx.other.first() {
        return Err(format!("the loop contains {why}"));
    }
    if !fx.effectful_calls.is_empty() {
        return Err("the loop calls a function that writes memory".into());
    }
    for &w in &fx.global_writes {
        let acc = &a.accesses[w];
        if a.stmts[acc.stmt].loops.last() != Some(&id) {
            return Err(format!("`{}` is written inside a nested loop", acc.name));
        }
        // Distinct iterations store distinct elements: the index's form has a term in the
        // counter, or the index is the counter plus a value the loop does not change (a row's
        // offset spelled with a division, `head_offset / 4u + i`, has no affine form).
        let coeff = digit_form(a, acc)
            .map(|form| form.coeff(Var::Loop(f.var)))
            .unwrap_or_default();
        let offset = acc
            .index
            .is_some_and(|i| a.counter_plus_invariant(i, f.var, id));
        if coeff.is_zero() && !offset {
            return Err(format!(
                "a store to `{}` does not move with the loop variable",
                acc.name
            ));
        }
    }
    let mut out = Vec::new();
    for acc in fx.accumulators {
        if !reducible_type(a, acc.ty, acc.op) {
            return Err(format!(
                "`{}` has a type the reduction does not combine",
                acc.name
            ));
        }
        let fix = !acc.op.idempotent()
            && !matches!(a.value_before(l.stmt, acc.var), Some(v) if is_identity(a, v, acc.op));
        out.push((acc, fix));
    }
    Ok((out, fx.args))
}

fn reducible_type(a: &Analysis<'_>, ty: Handle<naga::Type>, op: AccOp) -> bool {
    let scalar = match &a.module.types[ty].inner {
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => *s,
        _ => return false,
    };
    match scalar.kind {
        naga::ScalarKind::Float => !matches!(op, AccOp::And | AccOp::Or | AccOp::Xor),
        naga::ScalarKind::Sint | naga::ScalarKind::Uint => scalar.width == 4,
        _ => false,
    }
}

/// Whether `v` is the identity of `op` (0 for sums and xor, 1 for products).
fn is_identity(a: &Analysis<'_>, v: InitialValue, op: AccOp) -> bool {
    let want = match op {
        AccOp::Add | AccOp::Xor | AccOp::Or => 0.0,
        AccOp::Mul => 1.0,
        _ => return false,
    };
    let h = match v {
        InitialValue::Zero => return want == 0.0,
        InitialValue::Expr(h) => h,
    };
    literal_is(a, h, want)
}

fn literal_is(a: &Analysis<'_>, h: Handle<Expression>, want: f64) -> bool {
    match a.function.expressions[h] {
        Expression::Literal(l) => {
            let v = match l {
                naga::Literal::F32(v) => f64::from(v),
                naga::Literal::F16(v) => f64::from(f32::from(v)),
                naga::Literal::F64(v) | naga::Literal::AbstractFloat(v) => v,
                naga::Literal::U32(v) => f64::from(v),
                naga::Literal::I32(v) => f64::from(v),
                naga::Literal::AbstractInt(v) => v as f64,
                _ => return false,
            };
            v == want
        }
        Expression::ZeroValue(_) => want == 0.0,
        Expression::Splat { value, .. } => literal_is(a, value, want),
        Expression::Compose { ref components, .. } => {
            components.iter().all(|&c| literal_is(a, c, want))
        }
        Expression::As { expr, .. } => literal_is(a, expr, want),
        _ => false,
    }
}

/// Whether naga's uniformity analysis sees `h` as uniform in the rewritten kernel (where the
/// invocation id has become `workgroup_id`): no local variables, no read_write or private memory,
/// no call results.
fn naga_uniform(a: &Analysis<'_>, h: Handle<Expression>) -> bool {
    let mut ok = true;
    a.visit(h, &mut |e| match *e {
        Expression::LocalVariable(_)
        | Expression::CallResult(_)
        | Expression::AtomicResult { .. } => ok = false,
        Expression::GlobalVariable(g) => match a.module.global_variables[g].space {
            naga::AddressSpace::Uniform => {}
            naga::AddressSpace::Storage { access }
                if !access.contains(naga::StorageAccess::STORE) => {}
            _ => ok = false,
        },
        Expression::FunctionArgument(i) => {
            let arg = &a.function.arguments[i as usize];
            if arg.binding != Some(naga::Binding::BuiltIn(BuiltIn::GlobalInvocationId)) {
                ok = false;
            }
        }
        _ => {}
    });
    ok
}

/// Rejects buffers that a lane could read after another lane wrote them, unless a barrier can
/// order the two: a split loop that only reads a buffer, after every split loop that writes it,
/// may read any element (a decode attention's weights, written by one loop and summed over by
/// the next), with a `storageBarrier()` before it. The split loops that need one are returned.
fn hazards(a: &Analysis<'_>, split: &[SplitLoop], lane0: &[usize]) -> Result<Vec<usize>, Skip> {
    let mut barriers = Vec::new();
    let split_of = |stmt: usize| -> Option<&SplitLoop> {
        let loops = &a.stmts[stmt].loops;
        split.iter().find(|s| loops.contains(&s.id))
    };
    let written: Vec<Handle<naga::GlobalVariable>> = {
        let mut w: Vec<Handle<naga::GlobalVariable>> = Vec::new();
        for x in a.accesses.iter().filter(|x| x.write) {
            if !w.contains(&x.global) {
                w.push(x.global);
            }
        }
        w
    };
    for g in written {
        let accesses: Vec<&ir::Access> = a.accesses.iter().filter(|x| x.global == g).collect();
        let name = &accesses[0].name;
        let in_lane0 = |x: &ir::Access| lane0.iter().any(|&s| a.within(x.stmt, s));
        let lane0_writes = accesses.iter().any(|x| x.write && in_lane0(x));
        let loop_writes: Vec<&&ir::Access> = accesses
            .iter()
            .filter(|x| x.write && split_of(x.stmt).is_some())
            .collect();
        if lane0_writes {
            // Only the writing statements themselves may read it (`y[row] += s`).
            if !loop_writes.is_empty() || accesses.iter().any(|x| !in_lane0(x)) {
                return Err(Skip(format!(
                    "`{name}` is written by one lane and accessed by others"
                )));
            }
            continue;
        }
        // Written in split loops: every access must touch the element its own lane writes.
        let reference = loop_writes[0];
        let ref_loop = split_of(reference.stmt).expect("filtered");
        let ref_for = a.loops[ref_loop.id]
            .for_loop
            .as_ref()
            .expect("split loops are counted");
        // Reads before every write, where no loop runs both a read and a write: every lane makes
        // them before a barrier ahead of the first loop that writes, so they see the values as
        // they were, whichever lane reads which element (a softmax in place that reads its row's
        // first element, or takes its maximum from the second on, before overwriting the row).
        let first_write = loop_writes
            .iter()
            .map(|w| split_of(w.stmt).expect("filtered"))
            .min_by_key(|sl| a.loops[sl.id].stmt)
            .expect("a buffer no lane 0 statement writes is written in a split loop");
        let first_head = a.loops[first_write.id].stmt;
        let early = |x: &ir::Access| {
            !x.write
                && x.stmt < first_head
                && loop_writes.iter().all(|w| {
                    a.stmts[x.stmt]
                        .loops
                        .iter()
                        .all(|l| !a.stmts[w.stmt].loops.contains(l))
                })
        };
        let mut early_read = false;
        // Offsets, in units of the counter's coefficient, of the accesses on the elements of
        // their own iteration (`c[(k + 1) * s + r]` beside `c[k * s + r]`: offset 1).
        let mut offsets: Vec<i64> = Vec::new();
        for x in &accesses {
            let Some(sl) = split_of(x.stmt) else {
                if early(x) {
                    early_read = true;
                    continue;
                }
                return Err(Skip(format!(
                    "`{name}` is written in a split loop and accessed outside it"
                )));
            };
            let fl = a.loops[sl.id]
                .for_loop
                .as_ref()
                .expect("split loops are counted");
            let same_lane = same_mapping(a, ref_for, fl)
                && match (&digit_form(a, reference), &digit_form(a, x)) {
                    (Some(r), Some(f)) => {
                        let r_rest = r.sub(&ir::IndexForm {
                            terms: vec![(Var::Loop(ref_for.var), r.coeff(Var::Loop(ref_for.var)))],
                            offset: Default::default(),
                        });
                        let f_rest = f.sub(&ir::IndexForm {
                            terms: vec![(Var::Loop(fl.var), f.coeff(Var::Loop(fl.var)))],
                            offset: Default::default(),
                        });
                        let coeff = r.coeff(Var::Loop(ref_for.var));
                        let offset = if r_rest == f_rest {
                            Some(0)
                        } else if r_rest.reads_no_loop_counter() && f_rest.reads_no_loop_counter() {
                            let d = f_rest.sub(&r_rest);
                            d.is_uniform()
                                .then(|| d.offset.integer_multiple_of(&coeff))
                                .flatten()
                        } else {
                            None
                        };
                        match offset {
                            Some(c) if coeff == f.coeff(Var::Loop(fl.var)) => {
                                offsets.push(c);
                                true
                            }
                            _ => false,
                        }
                    }
                    // No affine form: both indices the counter plus one fixed value (a row's
                    // offset spelled with a division), so equal counters reach equal elements.
                    _ => match (
                        reference
                            .index
                            .and_then(|i| a.counter_offset(i, ref_for.var, ref_loop.id)),
                        x.index.and_then(|i| a.counter_offset(i, fl.var, sl.id)),
                    ) {
                        (Some(None), Some(None)) => true,
                        (Some(Some(r)), Some(Some(o))) => {
                            naga_uniform(a, r)
                                && naga_uniform(a, o)
                                && matches!(
                                    (a.expr_wgsl(r, Naming::Inline), a.expr_wgsl(o, Naming::Inline)),
                                    (Some(p), Some(q)) if p == q
                                )
                        }
                        _ => false,
                    },
                };
            if !same_lane && early(x) {
                early_read = true;
            } else if !same_lane {
                // Another lane's element: only in a loop that does not write the buffer and
                // starts after every loop that does, the two ordered by a barrier.
                let head = a.loops[sl.id].stmt;
                let after_every_write = loop_writes.iter().all(|w| {
                    let wl = split_of(w.stmt).expect("filtered").id;
                    wl != sl.id && a.loop_stmts(wl).all(|s| s < head)
                });
                if !after_every_write || x.write {
                    return Err(Skip(format!(
                        "`{name}` is written and read at indices another lane may own (a loop-carried dependency through memory)"
                    )));
                }
                if sl.nested {
                    // Its barrier would sit in a loop every lane runs, which naga cannot prove
                    // uniform.
                    return Err(Skip(format!(
                        "`{name}` is read at indices another lane wrote inside a loop every lane runs"
                    )));
                }
                if !barriers.contains(&sl.id) {
                    barriers.push(sl.id);
                }
            }
        }
        if early_read {
            if first_write.nested {
                return Err(Skip(format!(
                    "`{name}` is read by other lanes before a loop every lane runs overwrites it"
                )));
            }
            if !barriers.contains(&first_write.id) {
                barriers.push(first_write.id);
            }
        }
        // Iterations' counters differ by multiples of the step, so accesses whose offsets span
        // less than the step reach disjoint elements in distinct iterations (a block of columns
        // `k .. k + 4` per iteration of `k += 4u`).
        if let (Some(lo), Some(hi)) = (offsets.iter().min(), offsets.iter().max())
            && hi > lo
            && !a
                .const_int(ref_for.step)
                .is_some_and(|step| !ref_for.decreasing && hi - lo < step)
        {
            return Err(Skip(format!(
                "`{name}` is accessed at offsets that reach another iteration's elements, which another lane may own"
            )));
        }
    }
    Ok(barriers)
}

/// The index form of `x` in which a flat id taken apart by `/` and `%` reads as its digits
/// ([`Analysis::split_index_form`]): a row rebuilt from them (`b = idx / T; t = idx % T; out[b *
/// T * C + t * C + i]`) has no affine form over the id, but one over its digits, which is all
/// that comparing two accesses of one invocation, or finding the loop variable's coefficient,
/// needs. Both sides of a comparison must come from here.
fn digit_form(a: &Analysis<'_>, x: &ir::Access) -> Option<ir::IndexForm> {
    x.index
        .and_then(|i| a.split_index_form(i))
        .or_else(|| x.form.clone())
}

/// Whether two split loops give iteration `k` to the same lane: same start and step.
fn same_mapping(a: &Analysis<'_>, x: &ir::ForLoop, y: &ir::ForLoop) -> bool {
    let value = |h: Option<Handle<Expression>>| match h {
        None => Some("0".to_owned()),
        Some(h) => match a.const_int(h) {
            Some(k) => Some(k.to_string()),
            None => a.expr_wgsl(h, Naming::Inline),
        },
    };
    let (ix, iy) = (value(x.init), value(y.init));
    let (sx, sy) = (value(Some(x.step)), value(Some(y.step)));
    ix.is_some() && ix == iy && sx.is_some() && sx == sy
}

/// The struct that holds a (value, index) pair in workgroup memory.
fn pair_type_name(vt: &str, it: &str) -> String {
    format!("kf_red_pair_{}_{}", type_ident(vt), type_ident(it))
}

/// The workgroup memory the lanes' pairs are combined in.
fn pair_memory_name(vt: &str, it: &str) -> String {
    format!("kf_red_pairs_{}_{}", type_ident(vt), type_ident(it))
}

fn arg_helper_name(op: AccOp, ties: ir::Ties, vt: &str, it: &str) -> String {
    format!(
        "kf_reduce_arg{}_{}_{}_{}",
        op_name(op),
        match ties {
            ir::Ties::First => "first",
            ir::Ties::Last => "last",
        },
        type_ident(vt),
        type_ident(it)
    )
}

/// A helper that combines the lanes' (value, index) pairs so that the result is the loop's:
/// the better value, of equal values the smaller index (`Ties::First`) or the larger
/// (`Ties::Last`). This order is total on the pairs lanes can hold (an element is only taken
/// when the comparison holds, so a NaN appears only as the starting value, which every lane then
/// keeps), so any combining order gives the same pair, bit for bit.
fn arg_helper(op: AccOp, ties: ir::Ties, vt: &str, it: &str, combine: Combine) -> String {
    let name = arg_helper_name(op, ties, vt, it);
    let pair = pair_type_name(vt, it);
    let mem = pair_memory_name(vt, it);
    let cmp = if op == AccOp::Max { ">" } else { "<" };
    let tie = match ties {
        ir::Ties::First => "<",
        ir::Ties::Last => ">",
    };
    // Whether `b` replaces `a`.
    let better = format!("b.v {cmp} a.v || (b.v == a.v && b.i {tie} a.i)");
    match combine {
        Combine::Tree => format!(
            "fn {name}(value: {vt}, index: {it}, lane: u32) -> {pair} {{
    {mem}[lane] = {pair}(value, index);
    workgroupBarrier();
    for (var stride = 1u << firstLeadingBit({WG} - 1u); stride > 0u; stride = stride / 2u) {{
        if (lane < stride && lane + stride < {WG}) {{
            let a = {mem}[lane];
            let b = {mem}[lane + stride];
            if ({better}) {{
                {mem}[lane] = b;
            }}
        }}
        workgroupBarrier();
    }}
    let total = {mem}[0];
    workgroupBarrier();
    return total;
}}
"
        ),
        Combine::Subgroup => format!(
            "fn {name}(value: {vt}, index: {it}, site: u32, sg: u32, sg_lane: u32, n_sg: u32, sg_size: u32) -> {pair} {{
    var best = {pair}(value, index);
    for (var mask = sg_size / 2u; mask > 0u; mask = mask / 2u) {{
        let a = best;
        let b = {pair}(subgroupShuffleXor(a.v, mask), subgroupShuffleXor(a.i, mask));
        if ({better}) {{
            best = b;
        }}
    }}
    if (sg_lane == 0u) {{
        {mem}[site * KF_RED_SUBGROUPS + sg] = best;
    }}
    workgroupBarrier();
    var total = {mem}[site * KF_RED_SUBGROUPS];
    for (var s = 1u; s < n_sg; s++) {{
        let a = total;
        let b = {mem}[site * KF_RED_SUBGROUPS + s];
        if ({better}) {{
            total = b;
        }}
    }}
    return total;
}}
"
        ),
    }
}

/// A WGSL identifier fragment for a type (`vec4<f32>` → `vec4f32`).
pub(crate) fn type_ident(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// `x ⊕ y` in WGSL.
pub(crate) fn combine_expr(op: AccOp, x: &str, y: &str) -> String {
    match op {
        AccOp::Add => format!("{x} + {y}"),
        AccOp::Mul => format!("{x} * {y}"),
        AccOp::Max => format!("max({x}, {y})"),
        AccOp::Min => format!("min({x}, {y})"),
        AccOp::And => format!("{x} & {y}"),
        AccOp::Or => format!("{x} | {y}"),
        AccOp::Xor => format!("{x} ^ {y}"),
    }
}

/// The operation's short name, for helper names and steps.
pub(crate) fn op_name(op: AccOp) -> &'static str {
    match op {
        AccOp::Add => "add",
        AccOp::Mul => "mul",
        AccOp::Max => "max",
        AccOp::Min => "min",
        AccOp::And => "and",
        AccOp::Or => "or",
        AccOp::Xor => "xor",
    }
}

/// The subgroup builtin that folds with the operation.
pub(crate) fn subgroup_fn(op: AccOp) -> &'static str {
    match op {
        AccOp::Add => "subgroupAdd",
        AccOp::Mul => "subgroupMul",
        AccOp::Max => "subgroupMax",
        AccOp::Min => "subgroupMin",
        AccOp::And => "subgroupAnd",
        AccOp::Or => "subgroupOr",
        AccOp::Xor => "subgroupXor",
    }
}

/// The identity of `op` for type `ty` (used when a sum's starting value is set aside).
fn identity(op: AccOp, ty: &str) -> String {
    match op {
        AccOp::Mul => format!("{ty}(1)"),
        _ => format!("{ty}()"),
    }
}

fn render(
    a: &Analysis<'_>,
    plan: &Plan,
    combine: Combine,
    passes: Passes,
    max_wg: u32,
    target: &Target,
) -> Result<String, Skip> {
    let caches = match passes {
        Passes::Registers(_) => row_caches(a, plan),
        _ => Vec::new(),
    };
    let sig = a
        .entry_signature()
        .ok_or_else(|| Skip("the entry point's signature was not found in the text".into()))?;
    let mut edits = Vec::new();
    let groups = match passes {
        Passes::Groups(w) => Some(w),
        _ => None,
    };
    if groups.is_some() {
        if let Some(&id) = plan.barriers.first() {
            return Err(Skip(format!(
                "loop {} reads elements other lanes wrote, and lanes of different groups cannot wait for each other",
                loop_label(a, id)
            )));
        }
        for name in [GROUP, "kf_sub", "kf_grp"] {
            if a.code().contains(name) {
                return Err(Skip(format!("the kernel already uses the name `{name}`")));
            }
        }
    }
    let columns = match passes {
        Passes::Columns(w) => Some(w),
        _ => None,
    };
    if columns.is_some() {
        for name in [
            COLS, "kf_sub", "kf_grp", "kf_col", "kf_live", "kf_nsub", "kf_k",
        ] {
            if a.code().contains(name) {
                return Err(Skip(format!("the kernel already uses the name `{name}`")));
            }
        }
        edits.extend(column_edits(a, plan)?);
    }
    let wg_name = if plan.fold.is_some() || groups.is_some() || columns.is_some() {
        "kf_wg"
    } else {
        plan.gid_name.as_str()
    };
    let mut new_params = format!(
        "@builtin(workgroup_id) {wg_name}: vec3<u32>, @builtin(local_invocation_index) {LANE}: u32"
    );
    if let Some(wgs) = groups {
        edits.push(Edit::insert(
            sig.body.start + 1,
            group_preamble(&plan.gid_name, wgs),
        ));
    } else if let Some(wgs) = columns {
        edits.push(Edit::insert(
            sig.body.start + 1,
            column_preamble(&plan.gid_name, wgs),
        ));
    } else if let Some(w) = plan.fold {
        edits.push(Edit::insert(
            sig.body.start + 1,
            format!(
                "\n    // KernelFoundry: rows folded into two dispatch dimensions; the former invocation id.\n    let {} = vec3<u32>(kf_wg.x * {w}u + kf_wg.y, 0u, 0u);",
                plan.gid_name
            ),
        ));
    }
    if combine == Combine::Subgroup {
        new_params.push_str(
            ", @builtin(subgroup_id) kf_sg: u32, @builtin(subgroup_invocation_id) kf_sg_lane: u32, @builtin(num_subgroups) kf_n_sg: u32",
        );
        if plan.split.iter().any(|sl| !sl.args.is_empty())
            || matches!(passes, Passes::Inner | Passes::Groups(_))
        {
            new_params.push_str(", @builtin(subgroup_size) kf_sg_size: u32");
        }
    }
    edits.push(Edit::replace(sig.params, new_params));
    edits.push(Edit::replace(sig.workgroup_size, WG));
    if passes == Passes::Inner {
        edits.push(Edit::insert(
            sig.body.start + 1,
            format!(
                "\n    // KernelFoundry: groups of {INNER} lanes of one subgroup; lane `kf_sub` of group `kf_grp` of `kf_ngrp`.\n    let kf_sub = kf_sg_lane % {INNER};\n    let kf_grp = kf_sg * (kf_sg_size / {INNER}) + kf_sg_lane / {INNER};\n    let kf_ngrp = kf_n_sg * (kf_sg_size / {INNER});"
            ),
        ));
    }
    let mut inner_helpers: Vec<(AccOp, String)> = Vec::new();
    // Arg-reductions within a group: helpers by (op, ties, value type, index type).
    let mut inner_arg_helpers: Vec<(AccOp, ir::Ties, String, String)> = Vec::new();
    // Column groups: helpers by (op, type), and by (op, ties, value type, index type).
    let mut column_helpers: Vec<(AccOp, String)> = Vec::new();
    let mut column_arg_helpers: Vec<(AccOp, ir::Ties, String, String)> = Vec::new();

    // Reduction helpers needed: (op, type) → sites.
    let mut helpers: Vec<(AccOp, String)> = Vec::new();
    let mut types: Vec<String> = Vec::new();
    let mut sites: Vec<usize> = Vec::new(); // per type, for the subgroup layout
    // Arg-reductions: helpers by (op, ties, value type, index type); pair types with their sites.
    let mut arg_helpers: Vec<(AccOp, ir::Ties, String, String)> = Vec::new();
    let mut pair_types: Vec<(String, String)> = Vec::new();
    let mut pair_sites: Vec<usize> = Vec::new();
    // The chunked variant's workgroup arrays.
    let mut chunk_decls: Vec<String> = Vec::new();
    for sl in &plan.split {
        let f = a.loops[sl.id]
            .for_loop
            .as_ref()
            .expect("split loops are counted");
        let var_ty = a.type_name(f.var_ty);
        let int = |text: &str| {
            if var_ty == "u32" {
                text.to_owned()
            } else {
                format!("{var_ty}({text})")
            }
        };
        let step_text = match a.const_int(f.step) {
            Some(1) => None,
            Some(k) => Some(k.to_string()),
            None => Some(format!(
                "({})",
                a.expr_range(f.step)
                    .map(|r| a.text(&r).to_owned())
                    .or_else(|| a.expr_wgsl(f.step, Naming::Names))
                    .ok_or_else(|| Skip("the loop step cannot be restated".into()))?
            )),
        };
        // The loop variable's start for a lane expression (`kf_lane`, `kf_lane + 3u * WG`).
        let start_for = |lane: &str| -> String {
            let lane = if lane == LANE {
                int(LANE)
            } else {
                format!("({})", int(lane))
            };
            let lane_term = match &step_text {
                None => lane,
                Some(s) => format!("{lane} * {s}"),
            };
            let init_text = f.init_value_span.as_ref().map_or("", |r| a.text(r).trim());
            if f.init.and_then(|h| a.const_int(h)) == Some(0) {
                lane_term
            } else if is_simple(init_text) {
                format!("{init_text} + {lane_term}")
            } else {
                format!("({init_text}) + {lane_term}")
            }
        };
        let stride = match &step_text {
            None => int(WG),
            Some(s) => format!("{} * {s}", int(WG)),
        };
        let init_range = f.init_value_span.clone().expect("checked in splittable");
        let step_range = f.step_span.clone().expect("checked in splittable");
        let v = &f.var_name;
        let loop_span = a.loops[sl.id]
            .span
            .clone()
            .ok_or_else(|| Skip("a loop has no source text".into()))?;
        let indent = a.indent_at(loop_span.start);
        let can_copy = !sl.nested && unrollable(a, sl.id);
        // The body without a `while`'s update, for copies.
        let body_copy = |edits: &[Edit]| -> Result<String, Skip> {
            let body = f.body_span.clone().expect("counted loops have a body");
            let mut local: Vec<Edit> = edits
                .iter()
                .map(|e| Edit {
                    range: e.range.start - body.start..e.range.end - body.start,
                    text: e.text.clone(),
                })
                .collect();
            if f.kind == ir::LoopKind::While {
                let full = a.with_semicolon(&step_range);
                local.push(Edit::replace(
                    full.start - body.start..full.end - body.start,
                    "",
                ));
            }
            ir::apply_edits(a.text(&body), &local)
                .ok_or_else(|| Skip("the loop body's edits overlap".into()))
        };
        let cond = f.cond_span.as_ref().map(|r| a.text(r).to_owned());
        let mut copies = None;
        match passes {
            Passes::Unroll(n) if can_copy => {
                // `n` iterations per pass, each in its own block with the loop variable shadowed
                // by a `let`, the later ones guarded by the loop's own condition: independent
                // loads the compiler can issue together.
                let cond = cond.clone().expect("unrollable loops have a condition");
                let inner = body_copy(&[])?;
                let base = format!("kf_{v}_{}", sl.id);
                let mut text = format!(
                    "{{\n{indent}    // KernelFoundry: {n} iterations per pass, `{v}` shadowed in each.\n{indent}    let {base} = {v};\n"
                );
                for j in 0..n {
                    let offset = match (j, &step_text) {
                        (0, _) => String::new(),
                        (j, None) => format!(" + {} * {}", int(&format!("{j}u")), int(WG)),
                        (j, Some(st)) => {
                            format!(" + {} * {} * {st}", int(&format!("{j}u")), int(WG))
                        }
                    };
                    let guarded = if j == 0 {
                        inner.clone()
                    } else {
                        format!("if ({cond}) {inner}")
                    };
                    text.push_str(&format!(
                        "{indent}    {{ let {v} = {base}{offset}; {guarded} }}\n"
                    ));
                }
                let new_step = format!("{v} += {} * {stride}", int(&format!("{n}u")));
                if f.kind == ir::LoopKind::While {
                    text.push_str(&format!("{indent}    {new_step};\n"));
                } else {
                    edits.push(Edit::replace(step_range, new_step));
                }
                text.push_str(&format!("{indent}}}"));
                edits.push(Edit::replace(f.body_span.clone().expect("checked"), text));
                edits.push(Edit::replace(init_range, start_for(LANE)));
            }
            Passes::Registers(k) if can_copy => {
                // The first `k` passes written out, each a block with the loop variable shadowed
                // and constant register indices; a loop does the passes after them.
                let cond = cond.clone().expect("unrollable loops have a condition");
                let mut text = format!(
                    "// KernelFoundry: the first {k} passes written out (values read again later kept in registers), then a loop for the rest.\n"
                );
                for j in 0..k {
                    let mut local = Vec::new();
                    for (g, cache) in caches.iter().enumerate() {
                        for (l, range) in &cache.loads {
                            if *l == sl.id {
                                local.push(Edit::replace(range.clone(), format!("kf_row{g}[{j}]")));
                            }
                        }
                    }
                    let mut inner = body_copy(&local)?;
                    for (g, cache) in caches.iter().enumerate() {
                        if cache.loads.first().map(|(l, _)| *l) == Some(sl.id) {
                            inner.insert_str(
                                1,
                                &format!(" kf_row{g}[{j}] = {};", a.text(&cache.fill)),
                            );
                        }
                    }
                    text.push_str(&format!(
                        "{indent}{{ let {v} = {}; if ({cond}) {inner} }}\n",
                        start_for(&format!("{LANE} + {j}u * {WG}"))
                    ));
                }
                text.push_str(indent);
                copies = Some((loop_span.start, text));
                edits.push(Edit::replace(
                    init_range,
                    start_for(&format!("{LANE} + {k}u * {WG}")),
                ));
                edits.push(Edit::replace(step_range, format!("{v} += {stride}")));
            }
            Passes::Inner if sl.inner.is_some() => {
                let inner = sl.inner.as_ref().expect("guarded");
                let (init, step) = lane_header(a, f, "kf_grp", "kf_ngrp")
                    .ok_or_else(|| Skip("the loop step cannot be restated".into()))?;
                edits.push(Edit::replace(init_range, init));
                edits.push(Edit::replace(step_range, step));
                let fi = a.loops[inner.id]
                    .for_loop
                    .as_ref()
                    .expect("inner loops are counted");
                let (init, step) = lane_header(a, fi, "kf_sub", INNER)
                    .ok_or_else(|| Skip("the inner loop's step cannot be restated".into()))?;
                edits.push(Edit::replace(
                    fi.init_value_span.clone().expect("checked in splittable"),
                    init,
                ));
                edits.push(Edit::replace(
                    fi.step_span.clone().expect("checked in splittable"),
                    step,
                ));
                let inner_span = a.loops[inner.id]
                    .span
                    .clone()
                    .ok_or_else(|| Skip("a loop has no source text".into()))?;
                let indent = a.indent_at(inner_span.start);
                let mut after = String::new();
                for acc in &inner.accumulators {
                    let ty = a.type_name(acc.ty);
                    if !inner_helpers.iter().any(|(o, t)| *o == acc.op && *t == ty) {
                        inner_helpers.push((acc.op, ty.clone()));
                    }
                    after.push_str(&format!(
                        "\n{indent}{} = kf_inner_{}_{}({});",
                        acc.name,
                        op_name(acc.op),
                        type_ident(&ty),
                        acc.name
                    ));
                }
                edits.push(Edit::insert(inner_span.end, after));
                for &st in &inner.stores {
                    let range = a.with_semicolon(&a.stmts[st].span.clone().expect("checked"));
                    let text = a.text(&range).trim_end_matches(';');
                    edits.push(Edit::replace(
                        range,
                        format!("if (kf_sub == 0u) {{ {text}; }}"),
                    ));
                }
            }
            Passes::Groups(_) | Passes::Columns(_) => {
                let count = if columns.is_some() { "kf_nsub" } else { GROUP };
                let (init, step) = lane_header(a, f, "kf_sub", count)
                    .ok_or_else(|| Skip("the loop step cannot be restated".into()))?;
                edits.push(Edit::replace(init_range, init));
                edits.push(Edit::replace(step_range, step));
            }
            Passes::Chunked if sl.chunk.is_some() => {}
            _ => {
                edits.push(Edit::replace(init_range, start_for(LANE)));
                edits.push(Edit::replace(step_range, format!("{v} += {stride}")));
            }
        }
        // The chunked variant restates the whole outer loop.
        let chunk = match passes {
            Passes::Chunked => sl.chunk.as_ref(),
            _ => None,
        };
        let chunked = match chunk {
            Some(c) => Some(chunk_text(
                a,
                sl.id,
                c,
                start_for(LANE),
                format!("{v} += {stride}"),
                max_wg,
                &mut chunk_decls,
            )?),
            None => None,
        };
        // Accumulators: set aside non-identity starting values, combine after the loop.
        let span = a.loops[chunk.map_or(sl.id, |c| c.outer)]
            .span
            .clone()
            .ok_or_else(|| Skip("a loop has no source text".into()))?;
        let indent = a.indent_at(span.start);
        let mut before = String::new();
        if plan.barriers.contains(&sl.id) {
            before.push_str(&format!(
                "// KernelFoundry: the loop reads elements other lanes wrote.\n{indent}storageBarrier();\n{indent}"
            ));
        }
        let mut after = String::new();
        // The accumulator gets the combined partial results after the loop (`call`); one that
        // does not start at its identity (`fix`) is saved and reset before the loop and its saved
        // value added back.
        let combined =
            |before: &mut String, after: &mut String, acc: &Accumulator, fix: bool, call: &str| {
                let ty = a.type_name(acc.ty);
                let saved = format!("kf_init_{}_{}", acc.name, sl.id);
                if fix {
                    before.push_str(&format!(
                        "let {saved} = {name};\n{indent}{name} = {};\n{indent}",
                        identity(acc.op, &ty),
                        name = acc.name
                    ));
                    after.push_str(&format!(
                        "\n{indent}{} = {};",
                        acc.name,
                        combine_expr(acc.op, &saved, call)
                    ));
                } else {
                    after.push_str(&format!("\n{indent}{} = {call};", acc.name));
                }
            };
        // An arg pair gets the combined pair after the loop (`call` returns it).
        let pair_combined = |after: &mut String, p: &ir::ArgAccumulator, call: &str| {
            after.push_str(&format!(
                "\n{indent}{{ let kf_red_pair = {call}; {} = kf_red_pair.v; {} = kf_red_pair.i; }}",
                p.value_name, p.index_name
            ));
        };
        let accumulators = chunk.map_or(&sl.accumulators, |c| &c.accumulators);
        for (acc, fix) in accumulators {
            let ty = a.type_name(acc.ty);
            let tid = type_ident(&ty);
            if columns.is_some() {
                // Within the column only: its lanes' partial results, through workgroup memory.
                if !column_helpers.iter().any(|(o, t)| *o == acc.op && *t == ty) {
                    column_helpers.push((acc.op, ty.clone()));
                }
                if !types.contains(&ty) {
                    types.push(ty.clone());
                    sites.push(1);
                }
                let call = format!(
                    "kf_cols_{}_{tid}({}, {LANE}, kf_col)",
                    op_name(acc.op),
                    acc.name
                );
                combined(&mut before, &mut after, acc, *fix, &call);
                continue;
            }
            if groups.is_some() {
                // Within the group only: its lanes' partial results, shuffled together.
                if !inner_helpers.iter().any(|(o, t)| *o == acc.op && *t == ty) {
                    inner_helpers.push((acc.op, ty.clone()));
                }
                let call = format!("kf_inner_{}_{tid}({})", op_name(acc.op), acc.name);
                combined(&mut before, &mut after, acc, *fix, &call);
                continue;
            }
            if !helpers.iter().any(|(o, t)| *o == acc.op && *t == ty) {
                helpers.push((acc.op, ty.clone()));
            }
            let type_index = match types.iter().position(|t| *t == ty) {
                Some(i) => i,
                None => {
                    types.push(ty.clone());
                    sites.push(0);
                    types.len() - 1
                }
            };
            let site = sites[type_index];
            sites[type_index] += 1;
            let call = match combine {
                Combine::Tree => {
                    format!("kf_reduce_{}_{tid}({}, {LANE})", op_name(acc.op), acc.name)
                }
                Combine::Subgroup => format!(
                    "kf_reduce_{}_{tid}({}, {site}u, kf_sg, kf_sg_lane, kf_n_sg)",
                    op_name(acc.op),
                    acc.name
                ),
            };
            combined(&mut before, &mut after, acc, *fix, &call);
        }
        for p in &sl.args {
            let (vt, it) = (a.type_name(p.value_ty), a.type_name(p.index_ty));
            if columns.is_some() {
                let key = (p.op, p.ties, vt.clone(), it.clone());
                if !column_arg_helpers.contains(&key) {
                    column_arg_helpers.push(key);
                }
                if !pair_types.contains(&(vt.clone(), it.clone())) {
                    pair_types.push((vt.clone(), it.clone()));
                    pair_sites.push(1);
                }
                let call = format!(
                    "{}({}, {}, {LANE}, kf_col)",
                    column_arg_helper_name(p.op, p.ties, &vt, &it),
                    p.value_name,
                    p.index_name
                );
                pair_combined(&mut after, p, &call);
                continue;
            }
            if groups.is_some() {
                let key = (p.op, p.ties, vt.clone(), it.clone());
                if !inner_arg_helpers.contains(&key) {
                    inner_arg_helpers.push(key);
                }
                let call = format!(
                    "{}({}, {})",
                    inner_arg_helper_name(p.op, p.ties, &vt, &it),
                    p.value_name,
                    p.index_name
                );
                pair_combined(&mut after, p, &call);
                continue;
            }
            let key = (p.op, p.ties, vt.clone(), it.clone());
            if !arg_helpers.contains(&key) {
                arg_helpers.push(key);
            }
            let type_index = match pair_types
                .iter()
                .position(|t| *t == (vt.clone(), it.clone()))
            {
                Some(i) => i,
                None => {
                    pair_types.push((vt.clone(), it.clone()));
                    pair_sites.push(0);
                    pair_types.len() - 1
                }
            };
            let site = pair_sites[type_index];
            pair_sites[type_index] += 1;
            let name = arg_helper_name(p.op, p.ties, &vt, &it);
            let call = match combine {
                Combine::Tree => format!("{name}({}, {}, {LANE})", p.value_name, p.index_name),
                Combine::Subgroup => format!(
                    "{name}({}, {}, {site}u, kf_sg, kf_sg_lane, kf_n_sg, kf_sg_size)",
                    p.value_name, p.index_name
                ),
            };
            pair_combined(&mut after, p, &call);
        }
        if let Passes::Registers(k) = passes {
            // Register arrays are declared before the first loop that fills one.
            for (g, c) in caches.iter().enumerate() {
                if c.loads.first().map(|(l, _)| *l) == Some(sl.id) {
                    before.insert_str(
                        0,
                        &format!("var kf_row{g}: array<{}, {k}>;\n{indent}", c.ty),
                    );
                }
            }
        }
        if let Some(text) = chunked {
            edits.push(Edit::replace(span, format!("{before}{text}{after}")));
            continue;
        }
        if !before.is_empty() {
            edits.push(Edit::insert(span.start, before));
        }
        if let Some((at, text)) = copies {
            edits.push(Edit::insert(at, text));
        }
        if !after.is_empty() {
            edits.push(Edit::insert(span.end, after));
        }
    }
    // Lane groups have no barrier, so a guard that differs between groups needs no uniform load:
    // the lanes of one group compute the same condition.
    // Column groups turn guards into `kf_live` instead (see `column_edits`).
    let guards: &[usize] = if groups.is_some() || columns.is_some() {
        &[]
    } else {
        &plan.guards
    };
    for (n, &s) in guards.iter().enumerate() {
        let span = a.stmts[s].span.clone().expect("checked in plan");
        let code = &a.code()[span.clone()];
        let after_if = code
            .strip_prefix("if")
            .ok_or_else(|| Skip("a guard's text does not start with `if`".into()))?;
        let open = code.len() - after_if.len()
            + after_if
                .find('{')
                .ok_or_else(|| Skip("a guard's block was not found".into()))?;
        let cond = span.start + 2..span.start + open;
        let cond_text = a.text(&cond).trim();
        let indent = a.indent_at(span.start);
        edits.push(Edit::insert(
            span.start,
            format!(
                "// The same on every lane; read through workgroup memory so that naga sees it is uniform.\n{indent}if ({LANE} == 0u) {{ kf_guard_{n} = u32({cond_text}); }}\n{indent}"
            ),
        ));
        edits.push(Edit::replace(
            cond,
            format!(" (workgroupUniformLoad(&kf_guard_{n}) != 0u) "),
        ));
    }
    let first_lane = if groups.is_some() {
        "kf_sub == 0u".to_owned()
    } else if columns.is_some() {
        "kf_live && kf_sub == 0u".to_owned()
    } else {
        format!("{LANE} == 0u")
    };
    for &s in &plan.lane0 {
        let range = a.with_semicolon(&a.stmts[s].span.clone().expect("checked in plan"));
        let text = a.text(&range).trim_end_matches(';');
        edits.push(Edit::replace(
            range,
            format!("if ({first_lane}) {{ {text}; }}"),
        ));
    }

    // Module-scope declarations, appended.
    let mut decls = String::new();
    let min_sg = target.limit("subgroup_min_size", 4).max(1);
    let max_inv = target.limit("max_compute_invocations_per_workgroup", 256);
    let subgroups = (u64::from(max_wg).min(max_inv) / min_sg).max(1);
    if let Some(wgs) = groups {
        let (wg, group) = group_defaults(target, wgs);
        decls.push_str(&format!(
            "\n// KernelFoundry: every invocation of the original kernel is a group of {GROUP} lanes of one\n// subgroup, {WG} / {GROUP} groups per workgroup; a group's lanes split the loops and combine\n// partial results with subgroup shuffles (no workgroup memory, no barrier).\noverride {WG}: u32 = {wg}u;\n// Lanes per group: a power of two, at most the smallest subgroup.\noverride {GROUP}: u32 = {group}u;\n"
        ));
    } else if columns.is_some() {
        let (wg, cols) = column_defaults(target);
        decls.push_str(&format!(
            "\n// KernelFoundry: column groups. {COLS} consecutive invocations of the original kernel\n// per workgroup of {WG} lanes, each split across {WG} / {COLS} lanes\n// that combine their partial results through workgroup memory; neighbouring lanes keep\n// neighbouring invocations, so loads stay coalesced.\noverride {WG}: u32 = {wg}u;\n// Invocations per workgroup: the subgroup size or a multiple of it, at most half the workgroup.\noverride {COLS}: u32 = {cols}u;\n"
        ));
    } else {
        decls.push_str(&format!(
        "\n// KernelFoundry: one workgroup per invocation of the original kernel; its lanes split\n// the loops and combine partial results ({}).\noverride {WG}: u32 = {}u;\n",
        match combine {
            Combine::Tree => "workgroup memory, tree of barriers",
            Combine::Subgroup => "subgroup operations, then workgroup memory across subgroups",
        },
        default_wg(max_wg)
    ));
        if combine == Combine::Subgroup {
            decls.push_str(&format!(
            "// The most subgroups a workgroup can have on this adapter.\nconst KF_RED_SUBGROUPS: u32 = {subgroups}u;\n"
        ));
        }
    }
    for n in 0..guards.len() {
        decls.push_str(&format!("var<workgroup> kf_guard_{n}: u32;\n"));
    }
    for d in &chunk_decls {
        decls.push_str(d);
    }
    if passes == Passes::Inner {
        decls.push_str(&format!(
            "// Lanes per group of an inner loop split; at most the smallest subgroup.\noverride {INNER}: u32 = {}u;\n",
            default_inner(&inner_group_sizes(target))
        ));
    }
    // The override that sets a group's lanes.
    let width = if groups.is_some() { GROUP } else { INNER };
    for (op, ty) in &inner_helpers {
        decls.push_str(&inner_helper(*op, ty, width));
    }
    for (op, ties, vt, it) in &inner_arg_helpers {
        decls.push_str(&format!(
            "\nstruct {} {{ v: {vt}, i: {it} }}\n",
            pair_type_name(vt, it)
        ));
        decls.push_str(&inner_arg_helper(*op, *ties, vt, it, width));
    }
    for (i, ty) in types.iter().enumerate() {
        let len = match combine {
            Combine::Tree => u64::from(max_wg),
            Combine::Subgroup => subgroups * sites[i] as u64,
        };
        decls.push_str(&format!(
            "var<workgroup> kf_red_{}: array<{ty}, {len}>;\n",
            type_ident(ty)
        ));
    }
    for (i, (vt, it)) in pair_types.iter().enumerate() {
        let len = match combine {
            Combine::Tree => u64::from(max_wg),
            Combine::Subgroup => subgroups * pair_sites[i] as u64,
        };
        let pair = pair_type_name(vt, it);
        decls.push_str(&format!(
            "struct {pair} {{ v: {vt}, i: {it} }}\nvar<workgroup> {}: array<{pair}, {len}>;\n",
            pair_memory_name(vt, it)
        ));
    }
    for (op, ties, vt, it) in &arg_helpers {
        decls.push('\n');
        decls.push_str(&arg_helper(*op, *ties, vt, it, combine));
    }
    for (op, ties, vt, it) in &column_arg_helpers {
        decls.push('\n');
        decls.push_str(&column_arg_helper(*op, *ties, vt, it));
    }
    for (op, ty) in &column_helpers {
        decls.push('\n');
        decls.push_str(&column_helper(*op, ty));
    }
    for (op, ty) in &helpers {
        let tid = type_ident(ty);
        let mem = format!("kf_red_{tid}");
        let name = format!("kf_reduce_{}_{tid}", op_name(*op));
        decls.push('\n');
        match combine {
            Combine::Tree => decls.push_str(&format!(
                "fn {name}(value: {ty}, lane: u32) -> {ty} {{
    {mem}[lane] = value;
    workgroupBarrier();
    for (var stride = 1u << firstLeadingBit({WG} - 1u); stride > 0u; stride = stride / 2u) {{
        if (lane < stride && lane + stride < {WG}) {{
            {mem}[lane] = {};
        }}
        workgroupBarrier();
    }}
    let total = {mem}[0];
    workgroupBarrier();
    return total;
}}
",
                combine_expr(
                    *op,
                    &format!("{mem}[lane]"),
                    &format!("{mem}[lane + stride]")
                )
            )),
            Combine::Subgroup => decls.push_str(&format!(
                "fn {name}(value: {ty}, site: u32, sg: u32, sg_lane: u32, n_sg: u32) -> {ty} {{
    let partial = {}(value);
    if (sg_lane == 0u) {{
        {mem}[site * KF_RED_SUBGROUPS + sg] = partial;
    }}
    workgroupBarrier();
    var total = {mem}[site * KF_RED_SUBGROUPS];
    for (var i = 1u; i < n_sg; i++) {{
        total = {};
    }}
    return total;
}}
",
                subgroup_fn(*op),
                combine_expr(*op, "total", &format!("{mem}[site * KF_RED_SUBGROUPS + i]"))
            )),
        }
    }
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&decls);
    Ok(text)
}

/// Whether split loop `id` can be unrolled by copying its body: a `for` or `while` (not a
/// `loop` with a continuing block), with no `continue` that a copy would turn into skipping the
/// next copies.
fn unrollable(a: &Analysis<'_>, id: usize) -> bool {
    let Some(f) = a.loops[id].for_loop.as_ref() else {
        return false;
    };
    matches!(f.kind, ir::LoopKind::For | ir::LoopKind::While)
        && f.body_span.is_some()
        && f.cond_span.is_some()
        && !f.cond_negated
        && !a.loop_stmts(id).any(|s| {
            matches!(a.stmts[s].stmt, Statement::Continue) && a.stmts[s].loops.last() == Some(&id)
        })
}

/// Whether `text` can be followed by `+ x` without parentheses.
fn is_simple(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

fn default_wg(max_wg: u32) -> u32 {
    max_wg.min(256)
}

/// Validates the rewrite and builds its program.
fn finish(
    subject: &Subject<'_>,
    plan: &Plan,
    text: &str,
    combine: Combine,
    passes: Passes,
    sizes: &[u32],
) -> Result<Rewrite, String> {
    let entry = subject.program.entry.as_ref();
    let reflected =
        kf_runtime::resolve::reflect(text, Some(entry), "reduce").map_err(|e| e.to_string())?;
    let mismatches = subject.kernel.mismatches(&reflected.interface);
    if !mismatches.is_empty() {
        return Err(mismatches.join("; "));
    }
    let mut sizes = sizes.to_vec();
    let mut params = Vec::new();
    let mut constants: Vec<(Cow<'static, str>, f64)> = subject.program.constants.to_vec();
    if passes == Passes::Inner {
        // Groups tile whole subgroups only when the workgroup is a multiple of the subgroup.
        let max_sg = subject.target.limit("subgroup_max_size", 128);
        sizes.retain(|&w| u64::from(w).is_multiple_of(max_sg));
        if sizes.is_empty() {
            return Err("no workgroup size is a multiple of the subgroup size".into());
        }
        let groups = inner_group_sizes(subject.target);
        constants.push((Cow::Borrowed(INNER), f64::from(default_inner(&groups))));
        params.push((
            INNER.to_owned(),
            groups.iter().map(|&g| f64::from(g)).collect(),
        ));
    }
    let mut dispatch = plan.dispatch.clone();
    let mut wg = default_wg(*sizes.last().expect("non-empty"));
    if let Passes::Groups(wgs) = passes {
        sizes = group_workgroup_sizes(subject.target);
        let groups = group_sizes(subject.target);
        if sizes.is_empty() || groups.is_empty() {
            return Err(
                "lane groups: no workgroup size is a multiple of the subgroup size, or subgroups are narrower than two lanes".into(),
            );
        }
        let (size, group) = group_defaults(subject.target, wgs);
        wg = size;
        constants.push((Cow::Borrowed(GROUP), f64::from(group)));
        params.push((
            GROUP.to_owned(),
            groups.iter().map(|&g| f64::from(g)).collect(),
        ));
        dispatch = group_launch(subject.program)
            .map_err(|why| format!("lane groups: {why}"))?
            .0;
    }
    if let Passes::Columns(_) = passes {
        sizes = column_workgroup_sizes(subject.target);
        let counts = column_counts(subject.target);
        if sizes.is_empty() || counts.is_empty() {
            return Err(
                "column groups: no workgroup size holds two lanes per column of a subgroup".into(),
            );
        }
        let (size, cols) = column_defaults(subject.target);
        wg = size;
        constants.push((Cow::Borrowed(COLS), f64::from(cols)));
        params.push((
            COLS.to_owned(),
            counts.iter().map(|&c| f64::from(c)).collect(),
        ));
        dispatch = column_launch(subject.program)
            .map_err(|why| format!("column groups: {why}"))?
            .0;
    }
    constants.push((Cow::Borrowed(WG), f64::from(wg)));
    let storage = reflected.interface.workgroup_storage_bytes.unwrap_or(0);
    let limit = subject
        .target
        .limit("max_compute_workgroup_storage_size", 16384);
    if u64::from(storage) > limit {
        return Err(format!(
            "{storage} bytes of workgroup memory, more than the adapter's {limit}"
        ));
    }
    Ok(Rewrite {
        program: kf_runtime::Program {
            wgsl: Cow::Owned(text.to_owned()),
            entry: subject.program.entry.clone(),
            constants: Cow::Owned(constants),
            workgroup_size: [wg, 1, 1],
            workgroup_storage_bytes: storage,
            dispatch,
            workspace: Cow::Borrowed(&[]),
            then: Cow::Borrowed(&[]),
        },
        step: format!(
            "reduce({}{})",
            match combine {
                Combine::Tree => "workgroup",
                Combine::Subgroup => "subgroup",
            },
            match passes {
                Passes::Plain => String::new(),
                Passes::Unroll(n) => format!(", unroll {n}"),
                Passes::Registers(n) => format!(", {n} passes written out"),
                Passes::Inner => ", inner loops split".to_owned(),
                Passes::Groups(_) if plan.reassociates => {
                    ", lane groups, float sums reassociated".to_owned()
                }
                Passes::Groups(_) => ", lane groups".to_owned(),
                Passes::Columns(_) if plan.reassociates => {
                    ", column groups, float sums reassociated".to_owned()
                }
                Passes::Columns(_) => ", column groups".to_owned(),
                Passes::Chunked => ", outer loop in chunks".to_owned(),
            }
        ),
        params: std::iter::once((WG.to_owned(), sizes.iter().map(|&s| f64::from(s)).collect()))
            .chain(params)
            .collect(),
    })
}

/// Lanes per group in the inner-split variant: powers of two from 2 up to the smallest subgroup.
fn inner_group_sizes(target: &Target) -> Vec<u32> {
    let min_sg = target.limit("subgroup_min_size", 4).clamp(2, 64) as u32;
    (1..=6)
        .map(|k| 1u32 << k)
        .filter(|&g| g <= min_sg)
        .collect()
}

/// The default group: 8 lanes, or the smallest subgroup when it is smaller.
fn default_inner(groups: &[u32]) -> u32 {
    groups
        .iter()
        .copied()
        .filter(|&g| g <= 8)
        .max()
        .unwrap_or(2)
}

#[cfg(test)]
mod tests;
