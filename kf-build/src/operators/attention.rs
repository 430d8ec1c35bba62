//! Flash attention: a kernel that computes `out = softmax(scale · Q Kᵀ) V` one query row per
//! invocation becomes one that streams K and V through workgroup memory in tiles, with the
//! softmax computed online.
//!
//! Written one row per invocation, attention is slow in two ways at once: each invocation walks
//! every key (twice or three times: the row maximum, the exponentials, the weighted values)
//! reading K and V alone, so neighbouring invocations fetch whole rows apart and nothing is
//! shared; and a sequence of a few thousand rows is a few thousand invocations, a fraction of a
//! large GPU. The rewrite gives each workgroup 16 query rows and 16 invocations per row. The
//! workgroup loads a tile of `BC` keys of K and V into workgroup memory side by side (coalesced)
//! and every row reads it from there; a row's 16 invocations split the tile's scores and the
//! output's columns; the row maximum and the sum of exponentials are kept as running values and
//! the output rescaled when the maximum grows (the online softmax of Milakov and Gimelshein, as
//! in FlashAttention), so K and V are read once.
//!
//! **What is recognised from naga's IR**:
//! - which storage buffer is Q, K, V and the output ([`attention_roles`]: from the index
//!   polynomials of every access, calls followed into helper functions, so a score written as a
//!   function counts where it is called): one buffer written and three read; the output and Q
//!   along the invocation's row, K and V at loop positions only; K in the innermost loop that reads
//!   Q (the dot product), V in none; and an exponential;
//! - the row stride `D` (the head dimension): the coefficient of the row id in the output's index
//!   in the entry point (`out[row * D + c]`);
//! - the sequence length `S`: the bound every outermost loop of the entry point shares that is not
//!   `D` (the loops over keys), counted from 0 by 1 (a loop that only takes the maximum may start
//!   at 1); or, where every key loop stops at the query row instead (`j <= i` or `j < i + 1`: a
//!   causal mask), the bound of the guard on the row id (`if (i >= S) { return; }`), and row `i`
//!   then attends to keys `0..=i` only;
//! - a one-dimensional launch of one invocation per row;
//! - the scale: `1/sqrt(D)` where the kernel takes a square root, else each `f32` uniform, else
//!   none. Each is its own rewrite; the one the kernel computes is the one that verifies.
//!
//! Each rewrite is a candidate like any other: the evaluator verifies it against the kernel as
//! written, on fresh inputs and unseen shapes. A kernel with another mask, another layout or
//! another normalisation matches the roles but fails verification, at the cost of an evaluation.
//!
//! **The rewrite** replaces the entry point (the rest of the module is kept): 256 invocations, 16
//! rows of 16, `cdiv(rows, 16)` workgroups. Heads wider than 64 columns take a plain path in the
//! same kernel (each row's 16 invocations split its columns and walk the keys twice), so the
//! variant computes the same on every shape. Tiles of 32 keys always, of 64 where the adapter's
//! workgroup memory allows (42 KiB). Causal: a workgroup's tiles stop after its last row's key,
//! and each row's scores past its own key are masked out before the maximum and the sum.
//!
//! Invariant: every output element the kernel writes, the rewrite writes once, with the same
//! terms summed in another order (the step says "float sums reassociated").

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::facts::attention_roles;
use crate::analysis::ir::{self, Naming, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::{Op, SizeExpr};
use naga::{BuiltIn, Expression, TypeInner};
use std::fmt::Write as _;

/// Prefix of every identifier the rewrite introduces.
const PREFIX: &str = "kfa_";

/// Invocations per query row (each holds 4 of the output's columns).
const LANES: u32 = 16;

/// The configurations offered: query rows per workgroup, keys per tile.
const CONFIGS: [(u32, u32); 4] = [(16, 64), (8, 64), (16, 32), (8, 32)];

/// The widest head the tiled path holds (16 invocations × 4 columns).
const MAX_D: u32 = 64;

/// The flash-attention operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlashAttention;

impl Operator for FlashAttention {
    fn name(&self) -> &'static str {
        "flash-attention"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Memory, 2), (Dim::Compute, 2), (Dim::Parallelism, 1)]
    }

    fn fixes_workgroup(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        if wgsl.contains(PREFIX) {
            return Err(Skip("already a flash attention".into()));
        }
        if program.workgroup_size[1] != 1 || program.workgroup_size[2] != 1 {
            return Err(Skip("the workgroup is not one-dimensional".into()));
        }
        if program.dispatch.size[2].as_constant() != Some(1) {
            return Err(Skip(
                "the launch is three-dimensional (one invocation per query row, heads along y)"
                    .into(),
            ));
        }
        // Heads along y: one invocation per (row, head), the head's block of every buffer at
        // `head * H`.
        let heads = program.dispatch.size[1].as_constant() != Some(1);
        let parsed = ir::parse(wgsl).map_err(|e| Skip(e.to_string()))?;
        let analysis = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let entry_index = parsed
            .module
            .entry_points
            .iter()
            .position(|e| e.name == program.entry.as_ref())
            .ok_or_else(|| Skip("no such entry point".into()))?;
        let roles = attention_roles(&parsed.module, &parsed.info, entry_index).map_err(Skip)?;
        let name = |g: naga::Handle<naga::GlobalVariable>| {
            parsed.module.global_variables[g]
                .name
                .clone()
                .ok_or_else(|| Skip("a buffer without a name".into()))
        };
        for g in [roles.q, roles.k, roles.v, roles.out] {
            let ty = &parsed.module.types[parsed.module.global_variables[g].ty].inner;
            let f32_array = matches!(ty, TypeInner::Array { base, .. }
                if matches!(parsed.module.types[*base].inner, TypeInner::Scalar(s) if s == naga::Scalar::F32));
            if !f32_array {
                return Err(Skip(format!("`{}` is not an array of f32", name(g)?)));
            }
        }

        // D: the row id's coefficient in the output's index, the same at every store.
        let row = Var::Builtin(BuiltIn::GlobalInvocationId, 0);
        let mut d_poly: Option<ir::Poly> = None;
        for a in analysis.accesses.iter().filter(|a| a.write) {
            if a.global != roles.out {
                return Err(Skip("a helper function writes storage".into()));
            }
            let form = a
                .form
                .as_ref()
                .ok_or_else(|| Skip("the output's index is not affine".into()))?;
            let coeff = form.coeff(row);
            if coeff.is_zero() {
                return Err(Skip(
                    "the output's index does not step with global_invocation_id.x".into(),
                ));
            }
            match &d_poly {
                Some(p) if *p != coeff => {
                    return Err(Skip("the output is written with two row strides".into()));
                }
                _ => d_poly = Some(coeff),
            }
        }
        let d_poly = d_poly.ok_or_else(|| Skip("the entry point writes no output".into()))?;
        let d_text = d_poly.to_string();
        let head = Var::Builtin(BuiltIn::GlobalInvocationId, 1);
        if analysis.accesses.iter().any(|a| {
            a.write
                && a.form.as_ref().is_some_and(|f| {
                    f.vars()
                        .any(|v| matches!(v, Var::Builtin(..)) && v != row && !(heads && v == head))
                })
        }) {
            return Err(Skip(
                "the output's index reads another invocation id".into(),
            ));
        }
        // H: the head id's coefficient, the same in every access of the four buffers.
        let h_text = if heads {
            let mut h: Option<ir::Poly> = None;
            for a in analysis
                .accesses
                .iter()
                .filter(|a| [roles.q, roles.k, roles.v, roles.out].contains(&a.global))
            {
                let coeff = a
                    .form
                    .as_ref()
                    .ok_or_else(|| Skip("an attention buffer's index is not affine".into()))?
                    .coeff(head);
                if coeff.is_zero() || h.as_ref().is_some_and(|h| *h != coeff) {
                    return Err(Skip(
                        "the buffers are not indexed by one head stride along the id's y".into(),
                    ));
                }
                h = Some(coeff);
            }
            let h = h.ok_or_else(|| Skip("no head stride".into()))?;
            if h == d_poly {
                return Err(Skip("the head stride is the row stride".into()));
            }
            format!("({h})")
        } else {
            "0u".to_owned()
        };

        // S: the bound of the outermost loops that are not over D — or, where every key loop stops
        // at the query row (`j <= i`, a causal mask), the bound of the row guard.
        let mut s_found: Option<(Option<ir::Poly>, String)> = None;
        let (mut causal, mut full) = (false, false);
        for (id, l) in analysis
            .loops
            .iter()
            .enumerate()
            .filter(|(_, l)| l.depth == 0)
        {
            let Some(f) = &l.for_loop else {
                return Err(Skip(format!(
                    "an outermost loop is not counted ({})",
                    l.not_counted.as_deref().unwrap_or("unknown form")
                )));
            };
            let [bound] = &f.bounds[..] else {
                return Err(Skip("a loop with several bounds".into()));
            };
            // A maximum may start at key 1 with key 0's score as its initial value.
            let from_zero = f.init.is_none_or(|h| analysis.const_int(h) == Some(0))
                || (f.init.is_some_and(|h| analysis.const_int(h) == Some(1))
                    && only_a_maximum(&analysis.loop_effects(id)));
            if !f.decreasing
                && analysis.const_int(f.step) == Some(1)
                && from_zero
                && bound.offset.is_none()
                && stops_at_row(&analysis, bound, row)
            {
                causal = true;
                continue;
            }
            if f.decreasing
                || analysis.const_int(f.step) != Some(1)
                || !from_zero
                || bound.offset.is_some()
                || !matches!(bound.cmp, ir::Cmp::Lt)
            {
                return Err(Skip(format!(
                    "loop `{}` does not count from 0 by 1 below a bound",
                    f.var_name
                )));
            }
            if !analysis.locals_read(bound.bound).is_empty()
                || !analysis.is_dispatch_uniform(bound.bound)
            {
                return Err(Skip(format!("loop `{}` has a varying bound", f.var_name)));
            }
            // Compared as polynomials over the uniforms, however the bound is spelled.
            let form = analysis.index_form(bound.bound);
            let bound_poly = form.filter(|f| f.is_uniform()).map(|f| f.offset);
            if bound_poly.as_ref() == Some(&d_poly) {
                continue;
            }
            full = true;
            let text = analysis
                .expr_wgsl(bound.bound, Naming::Inline)
                .ok_or_else(|| Skip("a loop bound that cannot be restated".into()))?;
            let same = |(p, t): &(Option<ir::Poly>, String)| match (p, &bound_poly) {
                (Some(a), Some(b)) => a == b,
                _ => *t == text,
            };
            match &s_found {
                Some(found) if !same(found) => {
                    return Err(Skip(format!(
                        "two sequence lengths among the key loops: {} and {text}",
                        found.1
                    )));
                }
                _ => s_found = Some((bound_poly, text)),
            }
        }
        if causal && full {
            return Err(Skip(
                "some key loops stop at the query row and others run over every key".into(),
            ));
        }
        let s_text = match s_found {
            Some((_, t)) => t,
            None if causal => row_guard_bound(&analysis, row).ok_or_else(|| {
                Skip(
                    "the key loops stop at the query row, but no guard on the row id names the sequence length"
                        .into(),
                )
            })?,
            None => return Err(Skip("no loop over the keys".into())),
        };

        let scales = scales(&parsed, &d_text);
        let range = analysis.entry_range()?;
        let names = Names {
            q: name(roles.q)?,
            k: name(roles.k)?,
            v: name(roles.v)?,
            out: name(roles.out)?,
            s: s_text,
            d: d_text,
            h: h_text,
            causal,
        };
        let target = subject.target;
        let storage = target.limit("max_compute_workgroup_storage_size", 16384);
        let invocations = target
            .limit("max_compute_invocations_per_workgroup", 256)
            .min(target.limit("max_compute_workgroup_size_x", 256));
        let mut rewrites = Vec::new();
        for (rows, bc) in CONFIGS {
            let threads = rows * LANES;
            let bytes = shared_bytes(rows, bc);
            if u64::from(bytes) > storage || u64::from(threads) > invocations {
                continue;
            }
            let mut ops = super::grid_extent(program, 0);
            ops.push(Op::Lit(u64::from(rows)));
            ops.push(Op::CeilDiv);
            let dispatch = kf_runtime::Dispatch {
                mode: kf_runtime::DispatchMode::Workgroups,
                size: [
                    SizeExpr::from_ops(ops),
                    SizeExpr::from_ops(super::grid_extent(program, 1)),
                    SizeExpr::lit(1),
                ],
            };
            for (scale, said) in &scales {
                let function = generate(&names, scale, rows, bc, &program.entry);
                let p = super::replaced_entry(
                    program,
                    range.clone(),
                    &function,
                    [threads, 1, 1],
                    bytes,
                    dispatch.clone(),
                );
                rewrites.push(Rewrite {
                    program: p,
                    step: format!(
                        "flash-attention({rows} rows x {bc}-key tiles, scale {said}{}, float sums reassociated)",
                        if causal { ", causal" } else { "" }
                    ),
                    params: Vec::new(),
                });
            }
        }
        if rewrites.is_empty() {
            return Err(Skip(format!(
                "the smallest flash tile needs {} bytes of workgroup memory and {} invocations; the adapter has {storage} and {invocations}",
                shared_bytes(8, 32),
                8 * LANES
            )));
        }
        Ok(rewrites)
    }
}

/// The buffers' and sizes' WGSL spellings.
struct Names {
    q: String,
    k: String,
    v: String,
    out: String,
    s: String,
    d: String,
    /// The head stride (`0u` for one head).
    h: String,
    /// Whether row `i` attends only to keys `0..=i`.
    causal: bool,
}

/// Whether a loop may be the maximum pass: it writes no memory and sums nothing (a maximum
/// however its update is spelled: `max`, or `if (s > m) { m = s; }` around a call). Which keys
/// such a pass starts from does not change the softmax it feeds (the maximum only keeps the
/// exponentials in range; the rewrite takes its own, online); a loop that computes something else
/// gives a rewrite that fails verification.
fn only_a_maximum(fx: &ir::LoopEffects) -> bool {
    fx.accumulators.iter().all(|acc| acc.op.idempotent())
        && fx.args.is_empty()
        && fx.global_writes.is_empty()
        && fx.effectful_calls.is_empty()
        && fx.other.is_empty()
}

/// Whether a key loop's bound is the query row itself: `j <= i` or `j < i + 1`, `i` the row id.
fn stops_at_row(analysis: &ir::Analysis<'_>, bound: &ir::Bound, row: Var) -> bool {
    let Some(form) = analysis.index_form(bound.bound) else {
        return false;
    };
    let only_row = form.terms.len() == 1 && form.coeff(row) == ir::Poly::constant(1);
    let offset = form.offset.as_constant();
    only_row
        && match bound.cmp {
            ir::Cmp::Le => offset == Some(0),
            ir::Cmp::Lt => offset == Some(1),
            _ => false,
        }
}

/// The sequence length a causal kernel names in its row guard: `X` in `if (i >= X) { return; }`
/// (or `X <= i`, or the rest of the body under `if (i < X) { .. }`), `i` the row id, `X` the same
/// for every invocation; searched at the top of the entry point and inside wrapping guards.
fn row_guard_bound(analysis: &ir::Analysis<'_>, row: Var) -> Option<String> {
    use naga::BinaryOperator as B;
    let func = analysis.function;
    let is_row = |h| {
        analysis.index_form(h).is_some_and(|f| {
            f.terms.len() == 1 && f.coeff(row) == ir::Poly::constant(1) && f.offset.is_zero()
        })
    };
    let bound_of = |cond, active_when: bool| -> Option<naga::Handle<Expression>> {
        let Expression::Binary { op, left, right } = func.expressions[cond] else {
            return None;
        };
        // Normalised to `row < X` (the invocation goes on) or `row >= X` (it returns).
        let (op, x) = match (is_row(left), is_row(right)) {
            (true, false) => (op, right),
            (false, true) => match op {
                B::Less => (B::Greater, left),
                B::Greater => (B::Less, left),
                B::LessEqual => (B::GreaterEqual, left),
                B::GreaterEqual => (B::LessEqual, left),
                _ => return None,
            },
            _ => return None,
        };
        let goes_on_below = matches!(
            (op, active_when),
            (B::Less, true) | (B::GreaterEqual, false)
        );
        (goes_on_below && analysis.is_dispatch_uniform(x) && analysis.locals_read(x).is_empty())
            .then_some(x)
    };
    let mut block = &func.body;
    loop {
        let list: Vec<&naga::Statement> = block.iter().collect();
        let mut inner = None;
        for (i, st) in list.iter().enumerate() {
            let naga::Statement::If {
                condition,
                accept,
                reject,
            } = st
            else {
                continue;
            };
            let rest_is_return = list[i + 1..]
                .iter()
                .all(|s| matches!(s, naga::Statement::Return { value: None }));
            let Some((guard, wrapped)) =
                crate::analysis::flow::bounds_guard(*condition, accept, reject, rest_is_return)
            else {
                continue;
            };
            if let Some(x) = bound_of(guard.cond, guard.active_when) {
                return analysis.expr_wgsl(x, Naming::Inline);
            }
            if wrapped.is_some() {
                inner = wrapped;
                break;
            }
        }
        block = inner?;
    }
}

/// Workgroup memory of `rows` query rows over a tile of `bc` keys: K (padded to 17 vec4 a key,
/// so that 16 lanes reading 16 keys hit distinct banks), V, and the rows' scores and weights.
fn shared_bytes(rows: u32, bc: u32) -> u32 {
    (bc * 17 + bc * 16 + 2 * rows * bc / 4) * 16
}

/// The scale hypotheses, each with how the step names it: `1/sqrt(D)` where the kernel takes a
/// square root, each `f32` scalar of a uniform, and none where there is neither.
fn scales(parsed: &ir::Parsed, d: &str) -> Vec<(String, String)> {
    let module = &parsed.module;
    let mut out = Vec::new();
    let sqrt = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function))
        .any(|f| {
            f.expressions.iter().any(|(_, e)| {
                matches!(
                    e,
                    Expression::Math {
                        fun: naga::MathFunction::Sqrt | naga::MathFunction::InverseSqrt,
                        ..
                    }
                )
            })
        });
    if sqrt {
        out.push((format!("inverseSqrt(f32({d}))"), "1/sqrt(d)".to_owned()));
    }
    for (_, g) in module.global_variables.iter() {
        if g.space != naga::AddressSpace::Uniform {
            continue;
        }
        let Some(gname) = &g.name else { continue };
        match &module.types[g.ty].inner {
            TypeInner::Struct { members, .. } => {
                for m in members {
                    if matches!(module.types[m.ty].inner, TypeInner::Scalar(s) if s == naga::Scalar::F32)
                        && let Some(mname) = &m.name
                    {
                        out.push((format!("{gname}.{mname}"), format!("{gname}.{mname}")));
                    }
                }
            }
            TypeInner::Scalar(s) if *s == naga::Scalar::F32 => {
                out.push((gname.clone(), gname.clone()));
            }
            _ => {}
        }
    }
    if out.is_empty() {
        out.push(("1.0".to_owned(), "1".to_owned()));
    }
    out
}

/// Four consecutive elements `base + c .. base + c + 3` of `buf` as a vec4 into `dst`, zero
/// where `ok` fails or past column `kfa_d`.
fn load4(w: &mut String, indent: &str, dst: &str, buf: &str, ok: &str, base: &str, c: &str) {
    let _ = writeln!(w, "{indent}{dst} = vec4<f32>();");
    for (e, comp) in ["x", "y", "z", "w"].iter().enumerate() {
        let _ = writeln!(
            w,
            "{indent}if ({ok} && {c} + {e}u < kfa_d) {{ {dst}.{comp} = {buf}[{base} + {c} + {e}u]; }}"
        );
    }
}

/// The new entry point (see the module documentation).
fn generate(n: &Names, scale: &str, rows: u32, bc: u32, entry: &str) -> String {
    let Names {
        q,
        k,
        v,
        out,
        s,
        d,
        h,
        causal,
    } = n;
    // Keys row `kfa_i` attends to: `j < kfa_kn`; the workgroup's tiles stop at `kfa_jend`
    // (the same for all its invocations, so the barriers stay in uniform control flow).
    let (keys, tiles_end) = if *causal {
        (
            "min(kfa_i + 1u, kfa_s)".to_owned(),
            format!("min(kfa_s, (kfa_wid.x + 1u) * {rows}u)"),
        )
    } else {
        ("kfa_s".to_owned(), "kfa_s".to_owned())
    };
    let threads = rows * LANES;
    let spt = bc / LANES;
    let per = bc / rows; // (key, 4 columns) pairs each invocation stages per tile
    let quads = bc / 4;
    let mut w = String::new();
    let _ = write!(
        w,
        "// KernelFoundry flash attention: {rows} query rows per workgroup, 16 invocations a row (each 4 of
// the output's columns), K and V in tiles of {bc} keys through workgroup memory (the next tile
// prefetched into registers), the softmax online (running maximum and sum).
var<workgroup> kfa_k: array<vec4<f32>, {kn}>;
var<workgroup> kfa_v: array<vec4<f32>, {vn}>;
var<workgroup> kfa_sc: array<vec4<f32>, {sn}>;
var<workgroup> kfa_pr: array<vec4<f32>, {sn}>;

@compute @workgroup_size({threads}, 1, 1)
fn {entry}(@builtin(local_invocation_index) kfa_t: u32, @builtin(workgroup_id) kfa_wid: vec3<u32>) {{
    let kfa_s = {s};
    let kfa_d = {d};
    let kfa_h = kfa_wid.y * {h};
    let kfa_scale = {scale};
    let kfa_r = kfa_t / 16u;
    let kfa_lane = kfa_t % 16u;
    let kfa_i = kfa_wid.x * {rows}u + kfa_r;
    let kfa_kn = {keys};
    let kfa_jend = {tiles_end};
    if (kfa_d > {MAX_D}u) {{
        // Heads wider than the tiles: each row's 16 invocations split its columns.
        if (kfa_i < kfa_s) {{
            var kfa_m = -3.402823e38;
            for (var kfa_j = 0u; kfa_j < kfa_kn; kfa_j = kfa_j + 1u) {{
                var kfa_dot = 0.0;
                for (var kfa_c = 0u; kfa_c < kfa_d; kfa_c = kfa_c + 1u) {{
                    kfa_dot = kfa_dot + {q}[kfa_h + kfa_i * kfa_d + kfa_c] * {k}[kfa_h + kfa_j * kfa_d + kfa_c];
                }}
                kfa_m = max(kfa_m, kfa_dot * kfa_scale);
            }}
            for (var kfa_c = kfa_lane; kfa_c < kfa_d; kfa_c = kfa_c + 16u) {{
                var kfa_num = 0.0;
                var kfa_den = 0.0;
                for (var kfa_j = 0u; kfa_j < kfa_kn; kfa_j = kfa_j + 1u) {{
                    var kfa_dot = 0.0;
                    for (var kfa_e = 0u; kfa_e < kfa_d; kfa_e = kfa_e + 1u) {{
                        kfa_dot = kfa_dot + {q}[kfa_h + kfa_i * kfa_d + kfa_e] * {k}[kfa_h + kfa_j * kfa_d + kfa_e];
                    }}
                    let kfa_pj = exp(kfa_dot * kfa_scale - kfa_m);
                    kfa_den = kfa_den + kfa_pj;
                    kfa_num = kfa_num + kfa_pj * {v}[kfa_h + kfa_j * kfa_d + kfa_c];
                }}
                {out}[kfa_h + kfa_i * kfa_d + kfa_c] = kfa_num / kfa_den;
            }}
        }}
        return;
    }}
    // The row's query in registers (zero past the head's width).
    let kfa_qok = kfa_i < kfa_s;
    let kfa_qb = kfa_h + kfa_i * kfa_d;
",
        kn = bc * 17,
        vn = bc * 16,
        sn = rows * bc / 4,
    );
    for c4 in 0..16 {
        let _ = writeln!(w, "    var kfa_q{c4}: vec4<f32>;");
        load4(
            &mut w,
            "    ",
            &format!("kfa_q{c4}"),
            q,
            "kfa_qok",
            "kfa_qb",
            &format!("{}u", c4 * 4),
        );
    }
    // Staging: pair e of invocation t is key (t + e * threads) / 16, columns 4 * ((t + ..) % 16).
    let stage_loads = |w: &mut String, indent: &str, j0: &str| {
        for e in 0..per {
            let _ = writeln!(
                w,
                "{indent}{{ let kfa_x = kfa_t + {o}u; let kfa_j = {j0} + kfa_x / 16u; let kfa_c = (kfa_x % 16u) * 4u; let kfa_ok = kfa_j < kfa_s; let kfa_b = kfa_h + kfa_j * kfa_d;",
                o = e * threads
            );
            load4(
                w,
                &format!("{indent}    "),
                &format!("kfa_nk{e}"),
                k,
                "kfa_ok",
                "kfa_b",
                "kfa_c",
            );
            load4(
                w,
                &format!("{indent}    "),
                &format!("kfa_nv{e}"),
                v,
                "kfa_ok",
                "kfa_b",
                "kfa_c",
            );
            let _ = writeln!(w, "{indent}}}");
        }
    };
    for e in 0..per {
        let _ = writeln!(
            w,
            "    var kfa_nk{e}: vec4<f32>;\n    var kfa_nv{e}: vec4<f32>;"
        );
    }
    stage_loads(&mut w, "    ", "0u");
    let _ = write!(
        w,
        "    var kfa_m = -3.402823e38;
    var kfa_l = 0.0;
    var kfa_acc = vec4<f32>();
    for (var kfa_j0 = 0u; kfa_j0 < kfa_jend; kfa_j0 = kfa_j0 + {bc}u) {{
        workgroupBarrier();
"
    );
    for e in 0..per {
        let _ = writeln!(
            w,
            "        {{ let kfa_x = kfa_t + {o}u; kfa_k[(kfa_x / 16u) * 17u + kfa_x % 16u] = kfa_nk{e}; kfa_v[kfa_x] = kfa_nv{e}; }}",
            o = e * threads
        );
    }
    let _ = writeln!(w, "        workgroupBarrier();");
    let _ = writeln!(w, "        if (kfa_j0 + {bc}u < kfa_jend) {{");
    stage_loads(&mut w, "            ", &format!("kfa_j0 + {bc}u"));
    let _ = writeln!(w, "        }}");
    for jj in 0..spt {
        let _ = writeln!(
            w,
            "        var kfa_s{jj}: f32;\n        {{\n            let kfa_j = kfa_lane + {o}u;\n            var kfa_dv = vec4<f32>();",
            o = jj * 16
        );
        for c4 in 0..16 {
            let _ = writeln!(
                w,
                "            kfa_dv = fma(kfa_q{c4}, kfa_k[kfa_j * 17u + {c4}u], kfa_dv);"
            );
        }
        let _ = write!(
            w,
            "            kfa_s{jj} = select(-3.402823e38, ((kfa_dv.x + kfa_dv.y) + (kfa_dv.z + kfa_dv.w)) * kfa_scale, kfa_j0 + kfa_j < kfa_kn);
            kfa_sc[kfa_r * {quads}u + kfa_j / 4u][kfa_j % 4u] = kfa_s{jj};
        }}
"
        );
    }
    let _ = write!(
        w,
        "        workgroupBarrier();
        var kfa_mt = kfa_m;
        for (var kfa_g = 0u; kfa_g < {quads}u; kfa_g = kfa_g + 1u) {{
            let kfa_x = kfa_sc[kfa_r * {quads}u + kfa_g];
            kfa_mt = max(kfa_mt, max(max(kfa_x.x, kfa_x.y), max(kfa_x.z, kfa_x.w)));
        }}
"
    );
    for jj in 0..spt {
        let _ = writeln!(
            w,
            "        {{ let kfa_j = kfa_lane + {o}u; kfa_pr[kfa_r * {quads}u + kfa_j / 4u][kfa_j % 4u] = select(0.0, exp(kfa_s{jj} - kfa_mt), kfa_j0 + kfa_j < kfa_kn); }}",
            o = jj * 16
        );
    }
    let _ = write!(
        w,
        "        workgroupBarrier();
        let kfa_corr = exp(kfa_m - kfa_mt);
        kfa_m = kfa_mt;
        var kfa_lt = 0.0;
        kfa_acc = kfa_acc * kfa_corr;
        for (var kfa_g = 0u; kfa_g < {quads}u; kfa_g = kfa_g + 1u) {{
            let kfa_pg = kfa_pr[kfa_r * {quads}u + kfa_g];
            kfa_lt = kfa_lt + ((kfa_pg.x + kfa_pg.y) + (kfa_pg.z + kfa_pg.w));
            kfa_acc = fma(vec4<f32>(kfa_pg.x), kfa_v[kfa_g * 64u + kfa_lane], kfa_acc);
            kfa_acc = fma(vec4<f32>(kfa_pg.y), kfa_v[kfa_g * 64u + 16u + kfa_lane], kfa_acc);
            kfa_acc = fma(vec4<f32>(kfa_pg.z), kfa_v[kfa_g * 64u + 32u + kfa_lane], kfa_acc);
            kfa_acc = fma(vec4<f32>(kfa_pg.w), kfa_v[kfa_g * 64u + 48u + kfa_lane], kfa_acc);
        }}
        kfa_l = kfa_l * kfa_corr + kfa_lt;
    }}
    if (kfa_i < kfa_s) {{
        let kfa_o = kfa_acc / kfa_l;
        let kfa_c = kfa_lane * 4u;
        if (kfa_c < kfa_d) {{ {out}[kfa_h + kfa_i * kfa_d + kfa_c] = kfa_o.x; }}
        if (kfa_c + 1u < kfa_d) {{ {out}[kfa_h + kfa_i * kfa_d + kfa_c + 1u] = kfa_o.y; }}
        if (kfa_c + 2u < kfa_d) {{ {out}[kfa_h + kfa_i * kfa_d + kfa_c + 2u] = kfa_o.z; }}
        if (kfa_c + 3u < kfa_d) {{ {out}[kfa_h + kfa_i * kfa_d + kfa_c + 3u] = kfa_o.w; }}
    }}
}}
"
    );
    w
}

#[cfg(test)]
mod tests;
