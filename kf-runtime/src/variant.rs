//! The one check that a variant fits its kernel, shared by the macro (which embeds cache entries)
//! and the tuner's evaluator (which compiles candidates).
//!
//! A variant fits when its WGSL is valid, its interface equals the baseline's (so the user's bind
//! groups work with it), every constant it sets names one of its `override`s, the constants apply
//! (naga's override processing), and its launch rule uses only sizes the spec declares and
//! integer constants the variant itself sets (so it launches with its own values). The check
//! returns what it learned by applying the constants: the real workgroup size and workgroup memory.
//!
//! Invariant: there is exactly one such check. The macro turns its errors into warnings and falls
//! back to the baseline; the evaluator turns them into fitness-ladder reasons. Every rewritten or
//! generated kernel goes through it.

use crate::cache::{CacheEntry, Outcome};
use crate::program::Program;
use crate::resolve::{self, ReflectError, ResolvedKernel};

/// Why a variant does not fit its kernel.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VariantError {
    /// The variant has no WGSL.
    #[error("the variant has no WGSL")]
    Empty,
    /// The WGSL does not parse, does not validate, or lacks the entry point.
    #[error(transparent)]
    Wgsl(#[from] ReflectError),
    /// Bindings, types or access modes differ from the baseline's.
    #[error("the variant's interface differs from the baseline's:\n  {}", .0.join("\n  "))]
    Interface(Vec<String>),
    /// A constant names no `override` of the variant.
    #[error("constant `{0}` names no `override` of the variant")]
    UnknownConstant(String),
    /// naga could not apply the constants.
    #[error("applying the constants failed: {0}")]
    Constants(String),
    /// The launch rule uses a name that is neither a size the spec declares nor a constant the
    /// variant sets.
    #[error(
        "the launch rule uses `{0}`, which is neither a size the spec declares nor an integer constant the variant sets"
    )]
    UndeclaredSize(String),
}

/// What applying the constants showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The workgroup size with the constants applied.
    pub workgroup_size: [u32; 3],
    /// Bytes of `var<workgroup>` memory with the constants applied.
    pub workgroup_storage_bytes: u32,
    /// The same for each later stage of a launch sequence, in order (empty for one launch).
    pub stages: Vec<Checked>,
}

impl Checked {
    /// Writes what was learned into `program`: the workgroup size and memory of every launch.
    pub fn apply_to(&self, program: &mut Program) {
        program.workgroup_size = self.workgroup_size;
        program.workgroup_storage_bytes = self.workgroup_storage_bytes;
        let mut then = program.then.to_vec();
        for (stage, checked) in then.iter_mut().zip(&self.stages) {
            stage.workgroup_size = checked.workgroup_size;
            stage.workgroup_storage_bytes = checked.workgroup_storage_bytes;
        }
        program.then = then.into();
    }
}

/// Checks that `program` fits `kernel` (see the module docs).
pub fn check(kernel: &ResolvedKernel, program: &Program) -> Result<Checked, VariantError> {
    if program.wgsl.trim().is_empty() {
        return Err(VariantError::Empty);
    }
    let mut reflected = resolve::reflect(&program.wgsl, Some(&program.entry), "variant.wgsl")?;
    check_workspace(kernel, program, &mut reflected.interface)?;
    let mismatches = kernel.mismatches(&reflected.interface);
    if !mismatches.is_empty() {
        return Err(VariantError::Interface(mismatches));
    }
    let mut constants = naga::back::PipelineConstants::default();
    for (name, value) in program.constants.iter() {
        if !reflected
            .interface
            .overrides
            .iter()
            .any(|o| o.name == *name)
        {
            return Err(VariantError::UnknownConstant(name.to_string()));
        }
        constants.insert(name.to_string(), *value);
    }
    let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    for expr in &program.dispatch.size {
        if let Some(n) = expr
            .names()
            .find(|n| !declared.contains(n) && program.constant(n).is_none())
        {
            return Err(VariantError::UndeclaredSize(n.to_owned()));
        }
    }
    for stage in program.then.iter() {
        for expr in &stage.dispatch.size {
            if let Some(n) = expr
                .names()
                .find(|n| !declared.contains(n) && program.constant(n).is_none())
            {
                return Err(VariantError::UndeclaredSize(n.to_owned()));
            }
        }
    }
    let first = apply_constants(
        &reflected.module,
        &reflected.info,
        &program.entry,
        &constants,
    )?;
    let mut stages = Vec::with_capacity(program.then.len());
    for stage in program.then.iter() {
        if !reflected
            .module
            .entry_points
            .iter()
            .any(|e| e.name == stage.entry && e.stage == naga::ShaderStage::Compute)
        {
            return Err(VariantError::Wgsl(ReflectError::Entry(format!(
                "the entry point `{}` of a later stage is not a compute entry point of the variant",
                stage.entry
            ))));
        }
        stages.push(apply_constants(
            &reflected.module,
            &reflected.info,
            &stage.entry,
            &constants,
        )?);
    }
    Ok(Checked { stages, ..first })
}

/// Checks the buffers a variant binds for itself ([`Program::workspace`]) and takes them out of
/// `interface`, so that what is left must equal the baseline's: each lies in a group past every
/// group the kernel uses (the app's bind groups stay as they are), is a read-write storage array
/// of 4-byte scalars in the one group after the kernel's, and is declared by the program, with a length over declared sizes and the
/// variant's own constants; every binding in those groups is declared.
fn check_workspace(
    kernel: &ResolvedKernel,
    program: &Program,
    interface: &mut crate::interface::Interface,
) -> Result<(), VariantError> {
    use crate::interface::BindingKind;
    let first_free = kernel.interface.workspace_group();
    let declared: Vec<&str> = kernel.sizes.iter().map(|(n, _)| n.as_str()).collect();
    let mut problems = Vec::new();
    for w in program.workspace.iter() {
        if w.group != first_free {
            problems.push(format!(
                "workspace @group({}) @binding({}) must be in @group({first_free}), the group after the kernel's",
                w.group, w.binding
            ));
        }
        match interface.binding(w.group, w.binding) {
            None => problems.push(format!(
                "workspace @group({}) @binding({}) is not declared by the WGSL",
                w.group, w.binding
            )),
            Some(b)
                if b.kind != BindingKind::StorageReadWrite
                    || !(b.ty == "array<f32>" || b.ty == "array<u32>" || b.ty == "array<i32>") =>
            {
                problems.push(format!(
                    "workspace `{}` must be `var<storage, read_write>` of `array<f32>`, `array<u32>` or `array<i32>`, not {}",
                    b.name, b.ty
                ))
            }
            Some(_) => {}
        }
        if let Some(n) = w
            .words
            .names()
            .find(|n| !declared.contains(n) && program.constant(n).is_none())
        {
            return Err(VariantError::UndeclaredSize(n.to_owned()));
        }
    }
    for b in &interface.bindings {
        if b.group >= first_free
            && !program
                .workspace
                .iter()
                .any(|w| w.group == b.group && w.binding == b.binding)
        {
            problems.push(format!(
                "@group({}) @binding({}) `{}` is not a binding of the baseline nor a workspace the variant declares",
                b.group, b.binding, b.name
            ));
        }
    }
    if !problems.is_empty() {
        return Err(VariantError::Interface(problems));
    }
    interface.bindings.retain(|b| {
        !program
            .workspace
            .iter()
            .any(|w| w.group == b.group && w.binding == b.binding)
    });
    Ok(())
}

/// The workgroup size and workgroup memory of `entry` once `constants` are applied (naga's
/// override processing, the pass wgpu runs when it builds the pipeline).
pub(crate) fn apply_constants(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    constants: &naga::back::PipelineConstants,
) -> Result<Checked, VariantError> {
    let (module, _info) = naga::back::pipeline_constants::process_overrides(
        module,
        info,
        Some((naga::ShaderStage::Compute, entry)),
        constants,
    )
    .map_err(|e| VariantError::Constants(e.to_string()))?;
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .ok_or_else(|| {
            VariantError::Constants(format!(
                "entry point `{entry}` disappeared after applying the constants"
            ))
        })?;
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| VariantError::Constants(format!("cannot lay out types: {e}")))?;
    let workgroup_storage_bytes = module
        .global_variables
        .iter()
        .filter(|(_, v)| v.space == naga::AddressSpace::WorkGroup)
        .map(|(_, v)| layouter[v.ty].size)
        .sum();
    Ok(Checked {
        workgroup_size: ep.workgroup_size,
        workgroup_storage_bytes,
        stages: Vec::new(),
    })
}

/// Checks a cache entry for `kernel`: that it is this kernel's, and that its variant (if any) fits
/// and records the workgroup size its constants give. The macro skips an entry that fails (with a
/// warning); `cargo kernelfoundry list` shows it as broken and `tune` replaces it.
pub fn check_entry(kernel: &ResolvedKernel, entry: &CacheEntry) -> Result<(), String> {
    if entry.kernel.name != kernel.name {
        return Err(format!("it belongs to kernel `{}`", entry.kernel.name));
    }
    let Some(variant) = &entry.variant else {
        return Ok(());
    };
    if entry.outcome != Outcome::Tuned {
        return Ok(());
    }
    let program = &variant.program;
    let checked = check(kernel, program).map_err(|e| {
        let what = match &e {
            VariantError::Empty
            | VariantError::Wgsl(ReflectError::Parse { .. } | ReflectError::Validation { .. }) => {
                "is not valid WGSL"
            }
            VariantError::Wgsl(ReflectError::Unsupported(_)) => {
                "uses WGSL that KernelFoundry cannot handle"
            }
            VariantError::Interface(_) => "changes the kernel's interface",
            _ => "does not fit the kernel",
        };
        format!(
            "its variant {} {what}: {}",
            variant.id,
            first_line(&e.to_string())
        )
    })?;
    if checked.workgroup_size != program.workgroup_size {
        return Err(format!(
            "its recorded workgroup size {:?} does not match its WGSL and constants ({:?})",
            program.workgroup_size, checked.workgroup_size
        ));
    }
    for (stage, checked) in program.then.iter().zip(&checked.stages) {
        if checked.workgroup_size != stage.workgroup_size {
            return Err(format!(
                "its recorded workgroup size {:?} of stage `{}` does not match its WGSL and constants ({:?})",
                stage.workgroup_size, stage.entry, checked.workgroup_size
            ));
        }
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    const BASE: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; } }
"#;

    fn kernel() -> ResolvedKernel {
        let (spec, _) = crate::syntax::parse_spec(
            r#"source = "", sizes(n = 1024), bind(x = input(n), y = output(n))"#
                .parse()
                .unwrap(),
        )
        .unwrap();
        resolve::resolve("K", &spec, BASE, "k.wgsl").unwrap()
    }

    fn with(wgsl: &str, constants: &[(&'static str, f64)]) -> Program {
        let mut p = kernel().baseline;
        p.wgsl = Cow::Owned(wgsl.to_owned());
        p.constants = Cow::Owned(
            constants
                .iter()
                .map(|(k, v)| (Cow::Borrowed(*k), *v))
                .collect(),
        );
        p
    }

    #[test]
    fn constants_give_the_real_workgroup_size_and_memory() {
        let wgsl = BASE
            .replace("@workgroup_size(4)", "@workgroup_size(WG)")
            .replace(
                "@group(0) @binding(0)",
                "override WG: u32 = 4;\nvar<workgroup> t: array<f32, WG>;\n@group(0) @binding(0)",
            )
            .replace(
                "y[g.x] = 2.0 * x[g.x];",
                "t[0] = x[g.x]; y[g.x] = 2.0 * t[0];",
            );
        let c = check(&kernel(), &with(&wgsl, &[("WG", 64.0)])).unwrap();
        assert_eq!(c.workgroup_size, [64, 1, 1]);
        assert_eq!(c.workgroup_storage_bytes, 256);
    }

    /// A variant may bind buffers of its own only as a declared workspace, in the group after
    /// the kernel's, as a read-write array of 4-byte scalars sized over declared sizes.
    #[test]
    fn a_workspace_binding_must_be_declared_in_the_next_group() {
        let k = kernel();
        let wgsl = |group: u32, ty: &str| {
            let body = if ty.contains("vec4") {
                "ws[g.x] = vec4<f32>(x[g.x]); y[g.x] = 2.0 * ws[g.x].x;"
            } else {
                "ws[g.x] = x[g.x]; y[g.x] = 2.0 * ws[g.x];"
            };
            format!(
                "@group({group}) @binding(0) var<storage, read_write> ws: {ty};\n{}",
                BASE.replace("y[g.x] = 2.0 * x[g.x];", body)
            )
        };
        let declare = |p: &mut Program, group: u32, words: &str| {
            p.workspace = vec![crate::program::Workspace {
                group,
                binding: 0,
                words: crate::expr::SizeExpr::parse(words).unwrap(),
            }]
            .into();
        };
        let interface = |r: Result<Checked, VariantError>| match r {
            Err(VariantError::Interface(m)) => m.join("; "),
            other => panic!("expected an interface error, got {other:?}"),
        };
        // Undeclared: an extra binding is still a changed interface.
        let p = with(&wgsl(1, "array<f32>"), &[]);
        assert!(interface(check(&k, &p)).contains("nor a workspace"));
        // Declared and well placed.
        let mut p = with(&wgsl(1, "array<f32>"), &[]);
        declare(&mut p, 1, "2 * n");
        check(&k, &p).unwrap();
        // In a later group than the next one, or in the kernel's own group.
        let mut p = with(&wgsl(2, "array<f32>"), &[]);
        declare(&mut p, 2, "n");
        assert!(interface(check(&k, &p)).contains("must be in @group(1)"));
        // Not an array of 4-byte scalars.
        let mut p = with(&wgsl(1, "array<vec4<f32>>"), &[]);
        declare(&mut p, 1, "n");
        assert!(interface(check(&k, &p)).contains("array<f32>"));
        // Declared but absent from the WGSL.
        let mut p = with(BASE, &[]);
        declare(&mut p, 1, "n");
        assert!(interface(check(&k, &p)).contains("not declared by the WGSL"));
        // Sized by a name the spec does not declare.
        let mut p = with(&wgsl(1, "array<f32>"), &[]);
        declare(&mut p, 1, "rows * n");
        assert_eq!(
            check(&k, &p),
            Err(VariantError::UndeclaredSize("rows".into()))
        );
    }

    #[test]
    fn each_misfit_is_its_own_error() {
        let k = kernel();
        assert_eq!(check(&k, &with(" ", &[])), Err(VariantError::Empty));
        assert!(matches!(
            check(&k, &with("fn (", &[])),
            Err(VariantError::Wgsl(ReflectError::Parse { .. }))
        ));
        let retyped = BASE.replace("var<storage, read> x", "var<storage, read_write> x");
        assert!(matches!(
            check(&k, &with(&retyped, &[])),
            Err(VariantError::Interface(_))
        ));
        assert_eq!(
            check(&k, &with(BASE, &[("TILE", 2.0)])),
            Err(VariantError::UnknownConstant("TILE".into()))
        );
        let mut p = with(BASE, &[]);
        p.dispatch.size[0] = crate::expr::SizeExpr::size("m");
        assert_eq!(check(&k, &p), Err(VariantError::UndeclaredSize("m".into())));
    }

    #[test]
    fn a_launch_rule_may_read_the_variants_own_constants() {
        let k = kernel();
        let wgsl = BASE.replace(
            "@group(0) @binding(0)",
            "override PER_WG: u32 = 4;\n@group(0) @binding(0)",
        );
        let mut p = with(&wgsl, &[("PER_WG", 4.0)]);
        p.dispatch.mode = crate::DispatchMode::Workgroups;
        p.dispatch.size[0] = crate::expr::SizeExpr::parse("cdiv(n, PER_WG)").unwrap();
        assert!(check(&k, &p).is_ok());
        // Without the constant the rule has no value for it; a fraction is no count either.
        for constants in [&[][..], &[("PER_WG", 2.5)][..]] {
            let mut q = with(&wgsl, constants);
            q.dispatch = p.dispatch.clone();
            assert_eq!(
                check(&k, &q),
                Err(VariantError::UndeclaredSize("PER_WG".into()))
            );
        }
    }
}
