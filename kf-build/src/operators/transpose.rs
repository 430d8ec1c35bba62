//! A transposing copy through workgroup memory: a kernel that reads one buffer along one axis of
//! the invocation grid and writes along the other (`dst[c * rows + r] = src[r * cols + c]`, with
//! or without arithmetic around it) stages 32×32 tiles of the read in workgroup memory, so that
//! both the reads and the writes of a warp touch consecutive addresses.
//!
//! Written one element per invocation, a transpose reads coalesced (neighbouring invocations along
//! x read neighbouring elements) but writes a whole row apart, or the other way round: half of
//! its memory traffic moves 4 useful bytes per 32-byte sector. The rewrite lets 256 invocations
//! (32 × 8) load a 32×32 block of the grid with the read's unit-stride axis across neighbouring
//! invocations, and then run the kernel for the same block with the axes swapped, so the write's
//! unit-stride axis is across neighbouring invocations, each taking the value it needs from the
//! tile instead of from memory.
//!
//! **What is proven from naga's IR** (the checks of `coarsen`, which runs the original entry
//! point as a function of the invocation id in the same way):
//! - the entry point reads only `global_invocation_id`, component by component, and uses no
//!   workgroup memory, barriers or subgroup operations;
//! - every storage write happens only for ids below a uniform bound along x and along y (a
//!   bounds test), so the extra ids of a launch rounded up to 32 do nothing;
//! - exactly one storage write, whose index is affine with coefficient 1 along one axis of the id
//!   and a coefficient other than 0 and 1 along the other;
//! - exactly one `f32` load from a buffer the kernel never writes whose index has coefficient 1
//!   along that other axis and one other than 0 and 1 along the first: the transposed read. Its
//!   index reads no local variable, so it can be computed for any id before the kernel runs.
//!
//! **The rewrite** keeps the original entry point as a function of the id and of the loaded value
//! (`kfx_body(gid, kfx_v)`, the load's text replaced by `kfx_v`) and adds a new entry point:
//! `cdiv(X, 32) × cdiv(Y, 32)` workgroups of 32 × 8, each loading its block's 32 × 32 values (read
//! out of bounds for ids past the grid is defined in WGSL and its value unused), one barrier, then
//! calling the body for each id of the block with the axes swapped across the invocations.
//!
//! Invariant: every id the original launch runs, the rewrite runs once, with the same loaded value
//! (the buffer is read-only in the kernel); ids past the original grid fail the kernel's own
//! bounds tests. No arithmetic is reordered.

use super::{Moves, Operator, Rewrite, Skip, Subject};
use crate::analysis::ir::{self, Analysis, Edit, Naming, Var};
use crate::evolve::descriptor::Dim;
use kf_runtime::expr::{Op, SizeExpr};
use kf_runtime::{Dispatch, DispatchMode};
use naga::{BuiltIn, TypeInner};
use std::fmt::Write as _;

/// Prefix of every identifier the rewrite introduces.
const PREFIX: &str = "kfx_";

/// The tile's side, and the invocations along its second axis (each covers `TILE / ROWS` ids).
const TILE: u32 = 32;
const ROWS: u32 = 8;

/// The transposing-copy operator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct TransposeTile;

impl Operator for TransposeTile {
    fn name(&self) -> &'static str {
        "transpose-tile"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Memory, 2), (Dim::Parallelism, 1)]
    }

    fn fixes_workgroup(&self) -> bool {
        true
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let program = subject.program;
        let wgsl = program.wgsl.as_ref();
        if wgsl.contains(PREFIX) {
            return Err(Skip("already a tiled transpose".into()));
        }
        let parsed = ir::parse(wgsl).map_err(|e| Skip(e.to_string()))?;
        let a = parsed
            .analyse(&program.entry)
            .map_err(|e| Skip(e.to_string()))?;
        let plan = plan(&a)?;
        let text = render(&a, &plan)?;
        let blocks = |d: usize| {
            let mut ops = super::grid_extent(program, d);
            ops.push(Op::Lit(u64::from(TILE)));
            ops.push(Op::CeilDiv);
            SizeExpr::from_ops(ops)
        };
        let dispatch = Dispatch {
            mode: DispatchMode::Workgroups,
            size: [
                blocks(0),
                blocks(1),
                SizeExpr::from_ops(super::grid_extent(program, 2)),
            ],
        };
        let mut rewrite = super::finish(
            subject,
            text,
            &[],
            format!(
                "transpose-tile({TILE}x{TILE}, read along {}, written along {})",
                AXES[plan.read_axis],
                AXES[1 - plan.read_axis]
            ),
            Vec::new(),
        )?;
        rewrite.program.dispatch = dispatch;
        Ok(vec![rewrite])
    }
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// The pattern, proven.
struct Plan {
    /// The axis along which the transposed read has unit stride (the write's is the other).
    read_axis: usize,
    /// The read: its text range and its index printed for any id.
    load_span: ir::TextRange,
    load_index: String,
    /// The buffer read.
    source: String,
    /// How the body names the invocation id.
    gid: String,
}

fn plan(a: &Analysis<'_>) -> Result<Plan, Skip> {
    let skip = |why: &str| Err(Skip(why.to_owned()));
    let gid = super::coarsen::one_invocation(a, "the tiling")?;
    if gid.member.is_some() || gid.whole {
        return skip("the invocation id is not read component by component");
    }
    if !(gid.components[0] && gid.components[1]) {
        return skip("the kernel does not use a two-dimensional id");
    }
    for d in 0..2 {
        if !super::coarsen::guarded(a, d) {
            return Err(Skip(format!(
                "no bounds test of the invocation id's {} before the kernel's stores",
                AXES[d as usize]
            )));
        }
    }
    let id = |d: usize| Var::Builtin(BuiltIn::GlobalInvocationId, d as u32);
    let storage = |x: &ir::Access| matches!(x.space, naga::AddressSpace::Storage { .. });
    let writes: Vec<&ir::Access> = a
        .accesses
        .iter()
        .filter(|x| x.write && storage(x))
        .collect();
    let [write] = writes[..] else {
        return Err(Skip(format!(
            "{} storage writes; a transposing copy has one",
            writes.len()
        )));
    };
    let form = write
        .form
        .as_ref()
        .ok_or_else(|| Skip("the write's index is not affine".into()))?;
    // Unit stride along `axis`, a stride other than 0 and 1 along the other.
    let crosses = |f: &ir::IndexForm, axis: usize| {
        f.coeff(id(axis)).as_constant() == Some(1) && {
            let other = f.coeff(id(1 - axis));
            !other.is_zero() && other.as_constant() != Some(1)
        }
    };
    let write_axis = (0..2)
        .find(|&d| crosses(form, d))
        .ok_or_else(|| Skip("the write does not run along one axis and across the other".into()))?;
    let read_axis = 1 - write_axis;
    let written: Vec<_> = writes.iter().map(|w| w.global).collect();
    let reads: Vec<&ir::Access> = a
        .accesses
        .iter()
        .filter(|x| {
            !x.write
                && storage(x)
                && !written.contains(&x.global)
                && x.form.as_ref().is_some_and(|f| crosses(f, read_axis))
        })
        .collect();
    let [read] = reads[..] else {
        return Err(Skip(format!(
            "{} reads run across the write's axis; a transposing copy has one",
            reads.len()
        )));
    };
    let load = read
        .load
        .ok_or_else(|| Skip("the transposed read is not a value".into()))?;
    if !matches!(a.type_of(load), TypeInner::Scalar(s) if *s == naga::Scalar::F32) {
        return skip("the transposed read is not an f32");
    }
    let index = read
        .index
        .ok_or_else(|| Skip("the transposed read has no index".into()))?;
    if !a.locals_read(index).is_empty() {
        return skip("the transposed read's index reads a local variable");
    }
    let load_index = a
        .expr_wgsl(index, Naming::Inline)
        .ok_or_else(|| Skip("the transposed read's index cannot be restated".into()))?;
    let load_span = read
        .span
        .clone()
        .ok_or_else(|| Skip("the transposed read has no text".into()))?;
    Ok(Plan {
        read_axis,
        load_span,
        load_index,
        source: a
            .array_text(read)
            .ok_or_else(|| Skip("the transposed read's array cannot be restated".into()))?,
        gid: gid.name.clone(),
    })
}

fn render(a: &Analysis<'_>, plan: &Plan) -> Result<String, Skip> {
    let sig = a
        .entry_signature()
        .ok_or_else(|| Skip("the entry point's signature was not found in the text".into()))?;
    let entry = &a.entry.name;
    let body_fn = format!("{PREFIX}body");
    let gid = &plan.gid;
    let edits = vec![
        Edit::replace(sig.attributes.clone(), ""),
        Edit::replace(sig.name.clone(), body_fn.clone()),
        Edit::replace(sig.params.clone(), format!("{gid}: vec3<u32>, kfx_v: f32")),
        Edit::replace(plan.load_span.clone(), "kfx_v"),
    ];
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // The id of tile position (`along` the read's unit axis, `across` it).
    let id_at = |along: &str, across: &str| {
        let mut c = ["".to_owned(), "".to_owned(), "kfx_w.z".to_owned()];
        c[plan.read_axis] = format!("kfx_b{} + {along}", AXES[plan.read_axis]);
        c[1 - plan.read_axis] = format!("kfx_b{} + {across}", AXES[1 - plan.read_axis]);
        format!("vec3<u32>({}, {}, {})", c[0], c[1], c[2])
    };
    let stride = TILE + 1;
    let _ = write!(
        text,
        "
// KernelFoundry: a transposing copy through workgroup memory: each workgroup loads a {TILE}x{TILE}
// block of `{src}` with neighbouring invocations along its unit-stride axis ({ra}), then runs the
// kernel for the block with the axes swapped, so its writes run along theirs ({wa}).
var<workgroup> kfx_tile: array<f32, {n}>;

@compute @workgroup_size({TILE}, {ROWS}, 1)
fn {entry}(@builtin(local_invocation_id) kfx_l: vec3<u32>, @builtin(workgroup_id) kfx_w: vec3<u32>) {{
    let kfx_bx = kfx_w.x * {TILE}u;
    let kfx_by = kfx_w.y * {TILE}u;
",
        src = plan.source,
        ra = AXES[plan.read_axis],
        wa = AXES[1 - plan.read_axis],
        n = TILE * stride,
    );
    for i in 0..TILE / ROWS {
        let across = format!("kfx_l.y + {}u", i * ROWS);
        let _ = writeln!(
            text,
            "    {{\n        let {gid} = {};\n        kfx_tile[({across}) * {stride}u + kfx_l.x] = {}[{}];\n    }}",
            id_at("kfx_l.x", &across),
            plan.source,
            plan.load_index
        );
    }
    let _ = writeln!(text, "    workgroupBarrier();");
    for i in 0..TILE / ROWS {
        let along = format!("kfx_l.y + {}u", i * ROWS);
        let _ = writeln!(
            text,
            "    {body_fn}({}, kfx_tile[kfx_l.x * {stride}u + {along}]);",
            id_at(&along, "kfx_l.x")
        );
    }
    let _ = writeln!(text, "}}");
    Ok(text)
}

#[cfg(test)]
mod tests;
