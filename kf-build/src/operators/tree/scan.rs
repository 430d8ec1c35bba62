//! A workgroup scan in workgroup memory done with subgroup scans (`subgroup-scan`).
//!
//! Kernels that give a block to a workgroup and need each lane's prefix sum over the block (the
//! first pass of a prefix sum, radix-sort offsets, stream compaction) mostly scan the way GPU
//! textbooks did before subgroups, after Hillis and Steele: every lane stores its value in a
//! workgroup array `W`, then for strides `1, 2, 4, ..` behind barriers each lane adds the slot
//! `stride` below its own (`if (lane >= s) { r += W[lane - s]; }`, then a barrier and
//! `W[lane] = r`). That is `2 log2(WG)` barriers and as many round trips through workgroup memory.
//! With subgroups the same prefixes take one `subgroupInclusiveAdd` per lane, one slot per
//! subgroup for the subgroups' totals and two barriers.
//!
//! **What is proven from naga's IR.** The region starts at a top-level store `W[lane] = v` of the
//! entry point (after the canonical form has spelled helpers out) and is run symbolically with
//! the simulator of `subgroup-tree` (integer locals, constants and helper arguments tracked,
//! loops and `if`s with a known condition executed), which here also tracks what each value is:
//! the sum of the scanned values of lanes `lane - a ..= lane - b` (`Sym::Prefix`). A read of
//! another lane's slot `W[lane - s]` is understood only after a barrier that follows the last
//! store to `W`, and inside an `if` that proves `lane >= s`; a store `W[lane] = r` only after a
//! barrier that follows every such read, and for every lane. Adding two adjacent runs of lanes
//! gives their union; after an `if (lane >= s)`, a value the `if` changed is known when the lanes
//! below `s` already held their whole prefix. So a `for`, `while` or `loop` over strides
//! (`t *= 2u`, `1u << i`), a copy in a temporary (`var temp = W[lane]; if (..) { temp += ..; }`)
//! or the running register itself (`sum += W[lane - s]`), are one pattern. The region ends at the
//! first top-level statement after which `W[lane]` holds the prefix over the whole workgroup.
//! Nothing else may write memory in it; locals it changes must end as integers it knows or as
//! that prefix, and no other value computed in it may be used after it.
//!
//! **The rewrite** keeps the store `W[lane] = v` and replaces the rest of the region by the
//! prefix through subgroups (`kf_scan_add_T`), stored back into `W[lane]` (so every slot holds
//! what it held before, and what follows may read any of them), a barrier where the region ended
//! with one after its last store, the locals that held the prefix set to it, and counters
//! restated. Scanned types: scalars and vectors of `f32`, `i32` and `u32`, combined by `+` (WGSL
//! has no subgroup scan for `max` or `min`). A float sum is reassociated and the step says so.
//!
//! The helper takes a lane's subgroup and its place in it from `subgroup_id` and
//! `subgroup_invocation_id`, so lanes must be numbered subgroup by subgroup in a one-dimensional
//! workgroup, as every driver we know does; verification on the adapter checks it like every
//! other property of a candidate.

use super::{
    Flow, Frame, Lanes, ScanState, Sim, Sym, foldable, global_name, int_literal, is_float, lanes,
    restate_local, type_ident, with_sim,
};
use crate::analysis::ir::{self, Analysis, Edit};
use crate::evolve::descriptor::Dim;
use crate::operators::{Moves, Operator, Rewrite, Skip, Subject};
use naga::{Block, Expression, GlobalVariable, Handle, LocalVariable, Statement, TypeInner};

/// The operator.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubgroupScan;

impl Operator for SubgroupScan {
    fn name(&self) -> &'static str {
        "subgroup-scan"
    }

    fn moves(&self) -> Moves {
        &[(Dim::Parallelism, 1)]
    }

    fn apply(&self, subject: &Subject<'_>) -> Result<Vec<Rewrite>, Skip> {
        let (text, step) = with_sim(subject, "scan", |sim, slots| {
            let a = sim.a;
            let regions = sim.scan_regions()?;
            let text = render(a, &regions, slots)?;
            let mut names: Vec<String> = Vec::new();
            for r in &regions {
                let name = global_name(a, r.global);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            let float = regions.iter().any(|r| is_float(a, r.element));
            let step = format!(
                "subgroup-scan(add {}{})",
                names.join(", "),
                if float {
                    "; float sums reassociated"
                } else {
                    ""
                }
            );
            Ok((text, step))
        })?;
        Ok(vec![crate::operators::finish(
            subject,
            text,
            &[],
            step,
            Vec::new(),
        )?])
    }
}

/// What a local holds after the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Final {
    Int(i64),
    /// The lane's prefix over the whole workgroup.
    Prefix,
}

/// One recognised scan: top-level statements `store..=last` of the entry point.
#[derive(Clone, Debug)]
struct ScanRegion {
    /// The store `W[lane] = v` that starts it (kept as written).
    store: usize,
    last: usize,
    global: Handle<GlobalVariable>,
    element: Handle<naga::Type>,
    /// Whether a barrier followed the last store to `W` inside the region.
    published: bool,
    /// Locals to restate after it, with whether they are declared inside it.
    finals: Vec<(Handle<LocalVariable>, Final, bool)>,
}

/// The error of a candidate region that never read another lane's slot (not worth reporting).
const NOT_A_SCAN: &str = super::NOT_STARTED;

impl<'m> Sim<'_, 'm> {
    /// A load of `base[index]` while a scan runs.
    pub(super) fn scan_read(
        &self,
        fr: &mut Frame<'m>,
        base: Handle<Expression>,
        index: Handle<Expression>,
    ) -> Sym {
        let Some(scan) = fr.scan else {
            return Sym::Unknown;
        };
        if !matches!(fr.f.expressions[base], Expression::GlobalVariable(g) if g == scan.global) {
            return Sym::Unknown;
        }
        let Sym::Lane(k) = self.eval(fr, index) else {
            return Sym::Unknown;
        };
        let Sym::Prefix(a, b) = scan.held else {
            return Sym::Unknown;
        };
        if k == 0 {
            return scan.held;
        }
        // Only slots below the lane, published by a barrier, and proven to exist.
        if k > 0 || !scan.published || scan.at_least < -k {
            return Sym::Unknown;
        }
        if let Some(s) = fr.scan.as_mut() {
            s.read_across = true;
            s.steps += 1;
        }
        Sym::Prefix(a - k, b - k)
    }

    /// A store to `base[index]` while a scan runs: only `W[lane]`, by every lane, after the
    /// reads of other lanes' slots were fenced by a barrier.
    pub(super) fn scan_store(
        &self,
        fr: &mut Frame<'m>,
        base: Handle<Expression>,
        index: Handle<Expression>,
        value: Handle<Expression>,
    ) -> Result<(), String> {
        let Some(scan) = fr.scan else {
            return Err("a store outside a scan".into());
        };
        if !matches!(fr.f.expressions[base], Expression::GlobalVariable(g) if g == scan.global) {
            return Err("a store to memory other than the scanned array".into());
        }
        if self.eval(fr, index) != Sym::Lane(0) {
            return Err("a store to a slot other than the lane's own".into());
        }
        if scan.at_least > 0 {
            return Err("a store to the array inside an `if` on the lane".into());
        }
        if scan.read_across {
            return Err(
                "a store to the array with no barrier after reads of other lanes' slots".into(),
            );
        }
        let held = self.eval(fr, value);
        if let Some(s) = fr.scan.as_mut() {
            s.held = held;
            s.published = false;
        }
        Ok(())
    }

    /// `if (lane >= k) { accept } else { reject }` while a scan runs. Both branches run; a local
    /// they leave different is known where the lanes below `k` already held their whole prefix.
    pub(super) fn scan_if(
        &self,
        fr: &mut Frame<'m>,
        k: i64,
        accept: &'m Block,
        reject: &'m Block,
        depth: usize,
    ) -> Result<Flow, String> {
        let before = fr.scan.ok_or("an `if` on the lane outside a scan")?;
        let mut yes = fr.clone();
        if let Some(s) = yes.scan.as_mut() {
            s.at_least = s.at_least.max(k);
        }
        let mut no = fr.clone();
        let mut inner = Vec::new();
        let flows = (
            self.run(&mut yes, accept, &mut inner, depth)?,
            self.run(&mut no, reject, &mut inner, depth)?,
        );
        if flows != (Flow::Next, Flow::Next) {
            return Err("control leaves an `if` on the lane".into());
        }
        if !inner.is_empty() {
            return Err("a barrier inside an `if` on the lane".into());
        }
        let (sy, sn) = (yes.scan.unwrap_or(before), no.scan.unwrap_or(before));
        if sy.held != before.held || sn.held != before.held {
            return Err("a store to the array inside an `if` on the lane".into());
        }
        let mut merged = before;
        merged.read_across = sy.read_across || sn.read_across;
        merged.steps = sy.steps + sn.steps - before.steps;
        let keys: Vec<Handle<LocalVariable>> = yes.locals.keys().copied().collect();
        for v in keys {
            let y = yes.locals.get(&v).copied().unwrap_or(Sym::Unknown);
            let n = no.locals.get(&v).copied().unwrap_or(Sym::Unknown);
            let value = match (y, n) {
                _ if y == n => y,
                (Sym::Prefix(a1, 0), Sym::Prefix(a2, 0)) if k - 1 <= a1.min(a2) => {
                    Sym::Prefix(a1, 0)
                }
                _ => Sym::Unknown,
            };
            fr.locals.insert(v, value);
        }
        fr.values.extend(yes.values);
        fr.values.extend(no.values);
        fr.scan = Some(merged);
        Ok(Flow::Next)
    }

    /// Every scan among the entry point's top-level statements.
    fn scan_regions(&self) -> Result<Vec<ScanRegion>, Skip> {
        self.top_level(
            |s| matches!(s, Statement::Store { .. }),
            |fr, body, i| {
                let (region, mut after) = self.scan_at(fr, body, i)?;
                self.values_stay_inside(region.store, region.last)?;
                after.scan = None;
                let last = region.last;
                Ok((region, last, after))
            },
            "no workgroup scan (`W[lane] = v`, then barrier-separated steps `if (lane >= s) { r += W[lane - s]; }` and `W[lane] = r` for s = 1, 2, 4, ..)",
        )
    }

    /// The scan starting at top-level statement `i` (a store `W[lane] = v`), and the frame after it.
    fn scan_at(
        &self,
        fr: &Frame<'m>,
        body: &[&'m Statement],
        i: usize,
    ) -> Result<(ScanRegion, Frame<'m>), String> {
        let f = self.a.function;
        let Statement::Store { pointer, value } = *body[i] else {
            return Err(NOT_A_SCAN.into());
        };
        let Expression::Access { base, index } = f.expressions[pointer] else {
            return Err(NOT_A_SCAN.into());
        };
        let Expression::GlobalVariable(global) = f.expressions[base] else {
            return Err(NOT_A_SCAN.into());
        };
        let var = &self.a.module.global_variables[global];
        if var.space != naga::AddressSpace::WorkGroup {
            return Err(NOT_A_SCAN.into());
        }
        let TypeInner::Array { base: element, .. } = self.a.module.types[var.ty].inner else {
            return Err(NOT_A_SCAN.into());
        };
        let mut run = fr.clone();
        if self.eval(&mut run, index) != Sym::Lane(0) {
            return Err(NOT_A_SCAN.into());
        }
        run.scan = Some(ScanState {
            global,
            held: Sym::Prefix(0, 0),
            published: false,
            read_across: false,
            at_least: 0,
            steps: 0,
        });
        // The register stored is the lane's own value too.
        if let Expression::Load { pointer: p } = f.expressions[value]
            && let Expression::LocalVariable(r) = f.expressions[p]
        {
            run.locals.insert(r, Sym::Prefix(0, 0));
        }
        // What the region must restate is what it changes from here.
        let start = run.clone();
        // Why the statements from `i` are not a whole scan, once `run` stopped short.
        let short = |run: &Frame<'m>, e: String| -> String {
            match run.scan {
                Some(s) if s.steps > 0 => match s.held {
                    Sym::Prefix(a, 0) => format!(
                        "`{}` never holds every lane's prefix over the workgroup of {}: its slots hold sums of {} lanes when the scan stops ({e})",
                        global_name(self.a, global),
                        self.wg,
                        a + 1
                    ),
                    _ => e,
                },
                _ => NOT_A_SCAN.into(),
            }
        };
        let mut end = None;
        for (j, stmt) in body.iter().enumerate().skip(i + 1) {
            let mut events = Vec::new();
            match self.run_stmt(&mut run, stmt, &mut events, 0) {
                Ok(Flow::Next) => {}
                Ok(_) => return Err(short(&run, "control leaves the entry point".into())),
                Err(e) => return Err(short(&run, e)),
            }
            let s = run.scan.expect("the scan runs");
            if s.steps > 0 && matches!(s.held, Sym::Prefix(a, 0) if a + 1 >= self.wg) {
                end = Some(j);
                break;
            }
        }
        let Some(last) = end else {
            return Err(short(&run, "the entry point ends".into()));
        };
        if !foldable(self.a, element) {
            return Err(format!(
                "the scan adds `{}`, not a scalar or vector of f32, i32 or u32",
                self.a.type_name(element)
            ));
        }
        let mut finals = Vec::new();
        for (v, value, inside) in self.changed_locals(&start, &run, i + 1, last)? {
            let kept = match value {
                Sym::Int(k) => Final::Int(k),
                Sym::Prefix(a, 0) if a + 1 >= self.wg => Final::Prefix,
                _ => return Err("the scan leaves a local with a value it cannot restate".into()),
            };
            finals.push((v, kept, inside));
        }
        let published = run.scan.is_some_and(|s| s.published);
        Ok((
            ScanRegion {
                store: i,
                last,
                global,
                element,
                published,
                finals,
            },
            run,
        ))
    }
}

fn render(a: &Analysis<'_>, regions: &[ScanRegion], slots: u64) -> Result<String, Skip> {
    let Lanes {
        params_range,
        params,
        lane,
        sg,
        sg_lane,
        ..
    } = lanes(a, "kf_scan", false)?;
    let sim = Sim::for_text(a);
    let mut edits = vec![Edit::replace(params_range, params)];
    let mut types: Vec<String> = Vec::new();
    for (n, r) in regions.iter().enumerate() {
        let (start, end) = sim.text_bounds(r.store + 1, r.last).map_err(Skip)?;
        let indent = a.indent_at(start);
        let ty = a.type_name(r.element);
        let tid = type_ident(&ty);
        let name = global_name(a, r.global);
        let value = format!("kf_scan_{n}");
        let mut text = format!(
            "// KernelFoundry: the workgroup scan of `{name}` done in subgroups; every slot holds its lane's inclusive prefix, as before.\n{indent}let {value} = kf_scan_add_{tid}({name}[{lane}], {sg}, {sg_lane});\n{indent}{name}[{lane}] = {value};"
        );
        if r.published {
            text.push_str(&format!("\n{indent}workgroupBarrier();"));
        }
        for (v, kept, declare) in &r.finals {
            let v_text = match kept {
                Final::Int(k) => int_literal(a, *v, *k),
                Final::Prefix => value.clone(),
            };
            text.push_str(&restate_local(a, *v, &v_text, *declare, indent)?);
        }
        edits.push(Edit::replace(start..end, text));
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    let mut text = ir::apply_edits(a.source, &edits)
        .ok_or_else(|| Skip("the rewrite's edits overlap".into()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    for ty in &types {
        let tid = type_ident(ty);
        text.push_str(&format!(
            "\n// KernelFoundry: one slot per subgroup for the scans' subgroup totals ({slots}: the most invocations over the smallest subgroup).\nvar<workgroup> kf_scan_mem_{tid}: array<{ty}, {slots}>;\n\n// KernelFoundry: the workgroup's inclusive sum up to each lane: the lane's subgroup scan plus the totals of the subgroups before it (lanes are numbered subgroup by subgroup).\nfn kf_scan_add_{tid}(value: {ty}, sg: u32, sg_lane: u32) -> {ty} {{\n    let inclusive = subgroupInclusiveAdd(value);\n    let total = subgroupAdd(value);\n    if (sg_lane == 0u) {{\n        kf_scan_mem_{tid}[sg] = total;\n    }}\n    workgroupBarrier();\n    var before = {ty}();\n    for (var i = 0u; i < sg; i++) {{\n        before += kf_scan_mem_{tid}[i];\n    }}\n    workgroupBarrier();\n    return before + inclusive;\n}}\n"
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
