//! Turning a [`Kernel`] into a ready pipeline on a live device, and launching it.
//!
//! The chosen variant is checked against the device's limits (wgpu does not check a workgroup size
//! that comes from an override, nor workgroup memory) and built inside error scopes; any failure
//! falls back to the baseline with a logged reason. All variants share one explicit pipeline layout
//! derived from the baseline's bindings, so bind groups the user built for the baseline fit every
//! variant (an automatic layout would drop bindings a variant does not use).
//!
//! [`Kernel::load_with`] takes a [`LoadMode`]: the default chooses among the embedded entries as
//! above; `LoadMode::Measure` (feature `measure`) also measures the variants tuned on other GPUs
//! when no entry matches this adapter (see the `measure` module).
//!
//! Invariant: [`Kernel::load`] and [`Kernel::load_with`] return `Err` only when the *baseline*
//! cannot be built.

use crate::adapter::AdapterIdentity;
use crate::interface::{BindingKind, SampleType, TexelFormat, TextureAccess, TextureDim};
use crate::kernel::{Kernel, MatchKind};
use crate::program::{DispatchError, Program};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

/// Why a kernel could not be loaded at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The baseline itself failed to build on this device.
    #[error("kernel {kernel}: the baseline pipeline failed to build: {message}")]
    Baseline {
        /// The kernel's name.
        kernel: &'static str,
        /// wgpu's message.
        message: String,
    },
}

/// How [`Kernel::load_with`] chooses when no embedded entry was tuned on this adapter.
#[cfg(feature = "measure")]
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub enum LoadMode<'a> {
    /// Exact adapter key → same vendor, device and backend with another driver → baseline
    /// (what [`Kernel::load`] does).
    #[default]
    Embedded,
    /// As `Embedded` when an entry matches; otherwise time the variants tuned on other GPUs
    /// against the baseline within a budget, check the fastest against the baseline, use it if
    /// it is faster beyond the noise and correct, and remember the choice per user so later
    /// starts measure nothing. See [`crate::measure`].
    Measure(crate::measure::Measure<'a>),
}

/// A kernel with its selected program built into a pipeline.
#[derive(Debug)]
pub struct LoadedKernel {
    kernel: &'static Kernel,
    program: &'static Program,
    label: &'static str,
    matched: MatchKind,
    reason: String,
    /// One pipeline per launch of `program` (one for a kernel of one launch).
    pipelines: Vec<wgpu::ComputePipeline>,
    /// `program`'s launches (see [`Program::launches`]), whose rules count the workgroups.
    launches: Vec<Program>,
    layouts: Vec<wgpu::BindGroupLayout>,
    max_workgroups_per_dimension: u32,
    /// The spec's size constraints, checked at every dispatch.
    constraints: Vec<crate::params::ParamExpr>,
    /// The buffers the selected program binds for itself, allocated on first dispatch.
    workspace: Option<WorkspaceSlot>,
    #[cfg(feature = "measure")]
    measurement: Option<crate::measure::Measurement>,
}

/// A program's workspace on the app's device: its layout, and the buffers of the last dispatch
/// (reused while the sizes give the same lengths).
#[derive(Debug)]
struct WorkspaceSlot {
    device: wgpu::Device,
    layout: wgpu::BindGroupLayout,
    bound: std::sync::Mutex<Option<WorkspaceBinding>>,
}

impl Kernel {
    /// Selects the variant for the adapter described by `info` and builds its pipeline on `device`.
    ///
    /// Falls back to the baseline (and logs why) if the variant exceeds the device's limits or fails
    /// to build.
    pub fn load(
        &'static self,
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
    ) -> Result<LoadedKernel, LoadError> {
        self.load_inner(
            device,
            info,
            #[cfg(feature = "measure")]
            None,
        )
    }

    /// Like [`Kernel::load`], choosing as `mode` says when no embedded entry was tuned on this
    /// adapter.
    ///
    /// ```no_run
    /// # fn f(device: &wgpu::Device, queue: &wgpu::Queue, adapter: &wgpu::Adapter, k: &'static kf_runtime::Kernel) -> Result<(), kf_runtime::LoadError> {
    /// use kf_runtime::{LoadMode, Measure};
    /// let mode = LoadMode::Measure(Measure::new(queue).budget(std::time::Duration::from_millis(50)));
    /// let loaded = k.load_with(device, &adapter.get_info(), mode)?;
    /// println!("{}: {} ({})", k.name, loaded.variant(), loaded.matched()); // e.g. `measured`
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "measure")]
    pub fn load_with(
        &'static self,
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        mode: LoadMode<'_>,
    ) -> Result<LoadedKernel, LoadError> {
        let measure = match &mode {
            LoadMode::Embedded => None,
            LoadMode::Measure(options) => Some(options),
        };
        self.load_inner(device, info, measure)
    }

    fn load_inner(
        &'static self,
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        #[cfg(feature = "measure")] measure: Option<&crate::measure::Measure<'_>>,
    ) -> Result<LoadedKernel, LoadError> {
        for note in self.build_notes {
            log::warn!("kernel {}: {note}", self.name);
        }
        let identity = AdapterIdentity::from(info);
        let selection = self.select(&identity);
        let limits = device.limits();
        let layouts = self.bind_group_layouts(device);
        let layout_refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(self.name),
            bind_group_layouts: &layout_refs,
            immediate_size: 0,
        });
        let constraints = self.constraints();
        let loaded = |program: &'static Program, pipelines, label, matched, reason| LoadedKernel {
            kernel: self,
            program,
            label,
            matched,
            reason,
            pipelines,
            launches: program.launches(),
            layouts: layouts.clone(),
            max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            constraints: constraints.clone(),
            workspace: workspace_layout(device, program).map(|(_, layout)| WorkspaceSlot {
                device: device.clone(),
                layout,
                bound: std::sync::Mutex::new(None),
            }),
            #[cfg(feature = "measure")]
            measurement: None,
        };
        // A program with a workspace binds one more group than the app does.
        let own_layout = |program: &Program| -> Option<wgpu::PipelineLayout> {
            let (_, ws) = workspace_layout(device, program)?;
            Some(self::pipeline_layout(
                device,
                self.name,
                &layouts,
                Some(&ws),
            ))
        };

        #[cfg(feature = "measure")]
        if let Some(options) = measure
            && selection.matched == MatchKind::None
            && !crate::kernel::forced()
            && let Some(chosen) =
                crate::measure::choose(self, device, &identity, options, &layouts, &pipeline_layout)
        {
            use crate::measure::Chosen;
            let (program, pipeline, label, matched, reason, measurement) = match chosen {
                Chosen::Variant {
                    variant,
                    pipeline,
                    matched,
                    reason,
                    measurement,
                } => (
                    variant
                        .program
                        .as_ref()
                        .expect("measurement chooses variants with a program"),
                    Some(vec![pipeline]),
                    variant.id,
                    matched,
                    reason,
                    measurement,
                ),
                Chosen::Baseline {
                    pipeline,
                    matched,
                    reason,
                    measurement,
                } => (
                    &self.baseline,
                    pipeline.map(|p| vec![p]),
                    "baseline",
                    matched,
                    reason,
                    measurement,
                ),
            };
            let pipeline = match pipeline {
                Some(p) => p,
                None => build_pipelines(device, &pipeline_layout, program, self.name).map_err(
                    |message| LoadError::Baseline {
                        kernel: self.name,
                        message,
                    },
                )?,
            };
            log::info!(
                "kernel {}: variant={label} match={matched}: {reason}",
                self.name
            );
            let mut out = loaded(program, pipeline, label, matched, reason);
            out.measurement = measurement;
            return Ok(out);
        }

        if let Some(variant) = selection.variant {
            let program = variant
                .program
                .as_ref()
                .expect("selection only returns variants with a program");
            let attempt = check_limits(program, &limits).and_then(|()| {
                let layout = own_layout(program);
                build_pipelines(
                    device,
                    layout.as_ref().unwrap_or(&pipeline_layout),
                    program,
                    self.name,
                )
            });
            match attempt {
                Ok(pipeline) => {
                    log::info!(
                        "kernel {}: variant={} match={}: {}",
                        self.name,
                        variant.id,
                        selection.matched,
                        selection.reason
                    );
                    return Ok(loaded(
                        program,
                        pipeline,
                        variant.id,
                        selection.matched,
                        selection.reason,
                    ));
                }
                Err(message) => {
                    let reason = format!(
                        "variant {} (from {}) rejected on this device, using the baseline: {message}{}",
                        variant.id,
                        variant.file,
                        missing_feature_hint(program, device.features())
                    );
                    log::warn!("kernel {}: {reason}", self.name);
                    let pipeline =
                        build_pipelines(device, &pipeline_layout, &self.baseline, self.name)
                            .map_err(|message| LoadError::Baseline {
                                kernel: self.name,
                                message,
                            })?;
                    return Ok(loaded(
                        &self.baseline,
                        pipeline,
                        "baseline",
                        MatchKind::None,
                        reason,
                    ));
                }
            }
        }
        log::info!(
            "kernel {}: variant=baseline match={}: {}",
            self.name,
            selection.matched,
            selection.reason
        );
        let pipeline = build_pipelines(device, &pipeline_layout, &self.baseline, self.name)
            .map_err(|message| LoadError::Baseline {
                kernel: self.name,
                message,
            })?;
        Ok(loaded(
            &self.baseline,
            pipeline,
            "baseline",
            selection.matched,
            selection.reason,
        ))
    }

    /// One bind group layout per group index up to the highest used (empty for gaps).
    pub fn bind_group_layouts(&self, device: &wgpu::Device) -> Vec<wgpu::BindGroupLayout> {
        let slots: Vec<(u32, u32, BindingKind)> = self
            .bindings
            .iter()
            .map(|b| (b.group, b.binding, b.kind))
            .collect();
        bind_group_layouts(device, self.name, &slots)
    }
}

/// The optional features a tuned variant may use, as far as `adapter` has them: request these in
/// `wgpu::DeviceDescriptor::required_features` so a variant the tuner verified with subgroup
/// operations (or f16) also builds on your device. A device opened without them still runs: such
/// a variant is rejected at load and your kernel runs instead, with the reason in the log.
pub fn features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features() & TUNED_FEATURES
}

/// The shader features the tuner enables where the adapter has them (its evaluation device opens
/// with these and timestamps), so a verified variant may use any of them.
pub const TUNED_FEATURES: wgpu::Features = wgpu::Features::SUBGROUP
    .union(wgpu::Features::SUBGROUP_BARRIER)
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::SHADER_FLOAT32_ATOMIC);

/// A hint for a variant that failed to build because it uses a feature the device lacks; empty
/// when that is not the likely cause.
fn missing_feature_hint(program: &Program, have: wgpu::Features) -> String {
    let uses = |word: &str| program.wgsl.contains(word);
    let missing: Vec<&str> = [
        (
            wgpu::Features::SUBGROUP | wgpu::Features::SUBGROUP_BARRIER,
            "SUBGROUP",
            uses("subgroup"),
        ),
        (wgpu::Features::SHADER_F16, "SHADER_F16", uses("enable f16")),
        (
            wgpu::Features::SHADER_FLOAT32_ATOMIC,
            "SHADER_FLOAT32_ATOMIC",
            uses("atomic<f32>"),
        ),
    ]
    .into_iter()
    .filter(|(f, _, used)| *used && !have.contains(*f))
    .map(|(_, name, _)| name)
    .collect();
    if missing.is_empty() {
        return String::new();
    }
    format!(
        " (hint: the variant uses wgpu::Features::{}, which this device was opened without; \
     open it with `required_features: kf_runtime::features(&adapter)`)",
        missing.join(" | wgpu::Features::")
    )
}

/// Bind group layouts for `(group, binding, kind)` bindings: one per group index up to the
/// highest used, empty for gaps. The tuner builds its layouts with this too, so what it measures
/// is bound exactly as the app binds it.
pub fn bind_group_layouts(
    device: &wgpu::Device,
    label: &str,
    bindings: &[(u32, u32, BindingKind)],
) -> Vec<wgpu::BindGroupLayout> {
    let groups = bindings.iter().map(|b| b.0 + 1).max().unwrap_or(0);
    (0..groups)
        .map(|group| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
                .iter()
                .filter(|b| b.0 == group)
                .map(|&(_, binding, kind)| layout_entry(binding, kind))
                .collect();
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries: &entries,
            })
        })
        .collect()
}

/// The bind group layout entry for a compute-visible binding of `kind`: a buffer, a texture or a
/// sampler.
pub fn layout_entry(binding: u32, kind: BindingKind) -> wgpu::BindGroupLayoutEntry {
    let ty = match kind {
        BindingKind::Uniform => buffer(wgpu::BufferBindingType::Uniform),
        BindingKind::StorageRead => buffer(wgpu::BufferBindingType::Storage { read_only: true }),
        BindingKind::StorageReadWrite => {
            buffer(wgpu::BufferBindingType::Storage { read_only: false })
        }
        BindingKind::SampledTexture { dim, sample } => wgpu::BindingType::Texture {
            sample_type: match sample {
                SampleType::Float { filterable } => wgpu::TextureSampleType::Float { filterable },
                SampleType::Uint => wgpu::TextureSampleType::Uint,
                SampleType::Sint => wgpu::TextureSampleType::Sint,
            },
            view_dimension: view_dimension(dim),
            multisampled: false,
        },
        BindingKind::StorageTexture {
            dim,
            format,
            access,
        } => wgpu::BindingType::StorageTexture {
            access: match access {
                TextureAccess::Read => wgpu::StorageTextureAccess::ReadOnly,
                TextureAccess::Write => wgpu::StorageTextureAccess::WriteOnly,
                TextureAccess::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            },
            format: texture_format(format),
            view_dimension: view_dimension(dim),
        },
        BindingKind::Sampler { filtering } => wgpu::BindingType::Sampler(if filtering {
            wgpu::SamplerBindingType::Filtering
        } else {
            wgpu::SamplerBindingType::NonFiltering
        }),
    };
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty,
        count: None,
    }
}

fn buffer(ty: wgpu::BufferBindingType) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// The texture view dimension of a texture binding of dimensionality `dim`.
pub fn view_dimension(dim: TextureDim) -> wgpu::TextureViewDimension {
    match dim {
        TextureDim::D1 => wgpu::TextureViewDimension::D1,
        TextureDim::D2 => wgpu::TextureViewDimension::D2,
        TextureDim::D2Array => wgpu::TextureViewDimension::D2Array,
        TextureDim::D3 => wgpu::TextureViewDimension::D3,
    }
}

/// The wgpu texture format of a texel format.
pub fn texture_format(format: TexelFormat) -> wgpu::TextureFormat {
    use wgpu::TextureFormat as W;
    match format {
        TexelFormat::R8unorm => W::R8Unorm,
        TexelFormat::Rg8unorm => W::Rg8Unorm,
        TexelFormat::Rgba8unorm => W::Rgba8Unorm,
        TexelFormat::Rgba8snorm => W::Rgba8Snorm,
        TexelFormat::Bgra8unorm => W::Bgra8Unorm,
        TexelFormat::Rgba8uint => W::Rgba8Uint,
        TexelFormat::Rgba8sint => W::Rgba8Sint,
        TexelFormat::R16float => W::R16Float,
        TexelFormat::Rg16float => W::Rg16Float,
        TexelFormat::Rgba16float => W::Rgba16Float,
        TexelFormat::Rgba16uint => W::Rgba16Uint,
        TexelFormat::Rgba16sint => W::Rgba16Sint,
        TexelFormat::R32float => W::R32Float,
        TexelFormat::Rg32float => W::Rg32Float,
        TexelFormat::Rgba32float => W::Rgba32Float,
        TexelFormat::R32uint => W::R32Uint,
        TexelFormat::Rg32uint => W::Rg32Uint,
        TexelFormat::Rgba32uint => W::Rgba32Uint,
        TexelFormat::R32sint => W::R32Sint,
        TexelFormat::Rg32sint => W::Rg32Sint,
        TexelFormat::Rgba32sint => W::Rgba32Sint,
    }
}

/// The bind group layout of `program`'s workspace (see [`crate::program::Workspace`]) and its
/// group index, if it has one.
pub fn workspace_layout(
    device: &wgpu::Device,
    program: &Program,
) -> Option<(u32, wgpu::BindGroupLayout)> {
    let group = program.workspace.first()?.group;
    let entries: Vec<wgpu::BindGroupLayoutEntry> = program
        .workspace
        .iter()
        .map(|w| layout_entry(w.binding, BindingKind::StorageReadWrite))
        .collect();
    Some((
        group,
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kernelfoundry workspace"),
            entries: &entries,
        }),
    ))
}

/// The pipeline layout of the kernel's bind group layouts, then a program's workspace group.
pub fn pipeline_layout(
    device: &wgpu::Device,
    label: &str,
    layouts: &[wgpu::BindGroupLayout],
    workspace: Option<&wgpu::BindGroupLayout>,
) -> wgpu::PipelineLayout {
    let refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts
        .iter()
        .map(Some)
        .chain(workspace.map(Some))
        .collect();
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &refs,
        immediate_size: 0,
    })
}

/// A program's workspace buffers and the bind group that holds them.
#[derive(Debug)]
pub struct WorkspaceBinding {
    /// The group index to bind at.
    pub group: u32,
    /// The bind group.
    pub bind_group: wgpu::BindGroup,
    /// Each buffer's length in bytes.
    pub bytes: Vec<u64>,
    /// The buffers (kept alive with the bind group).
    pub buffers: Vec<wgpu::Buffer>,
}

/// Fresh workspace buffers for `program` on `sizes`, every 4-byte word set to `fill` (the tuner
/// poisons them; the runtime leaves them zero), and their bind group on `layout` (from
/// [`workspace_layout`]). `None` when the program has no workspace.
pub fn bind_workspace(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    program: &Program,
    sizes: impl Fn(&str) -> Option<u64>,
    fill: u32,
) -> Result<Option<WorkspaceBinding>, DispatchError> {
    let Some(first) = program.workspace.first() else {
        return Ok(None);
    };
    let bytes = program.workspace_bytes(sizes)?;
    let max = device.limits().max_storage_buffer_binding_size;
    if let Some(&b) = bytes.iter().find(|&&b| b > max) {
        return Err(DispatchError::Constraint(format!(
            "the variant's workspace needs {b} bytes, more than a storage binding may hold here ({max})"
        )));
    }
    let buffers: Vec<wgpu::Buffer> = bytes
        .iter()
        .map(|&size| {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("kernelfoundry workspace"),
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: fill != 0,
            });
            if fill != 0 {
                let words: Vec<u8> = std::iter::repeat_n(fill.to_le_bytes(), (size / 4) as usize)
                    .flatten()
                    .collect();
                if let Ok(mut view) = buffer.slice(..).get_mapped_range_mut() {
                    view.copy_from_slice(&words);
                }
                buffer.unmap();
            }
            buffer
        })
        .collect();
    let entries: Vec<wgpu::BindGroupEntry> = program
        .workspace
        .iter()
        .zip(&buffers)
        .map(|(w, b)| wgpu::BindGroupEntry {
            binding: w.binding,
            resource: b.as_entire_binding(),
        })
        .collect();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("kernelfoundry workspace"),
        layout,
        entries: &entries,
    });
    Ok(Some(WorkspaceBinding {
        group: first.group,
        bind_group,
        bytes,
        buffers,
    }))
}

/// Checks what wgpu does not: override-driven workgroup sizes and workgroup memory, of every
/// launch of a sequence, and that a workspace's group is one the device has.
pub fn check_limits(program: &Program, limits: &wgpu::Limits) -> Result<(), String> {
    if let Some(w) = program
        .workspace
        .iter()
        .find(|w| w.group >= limits.max_bind_groups)
    {
        return Err(format!(
            "its workspace is bound at group {}, past the device's {} bind groups",
            w.group, limits.max_bind_groups
        ));
    }
    if !program.is_sequence() {
        return check_launch_limits(program, limits);
    }
    for launch in program.launches() {
        check_launch_limits(&launch, limits)
            .map_err(|e| format!("stage `{}`: {e}", launch.entry))?;
    }
    Ok(())
}

fn check_launch_limits(program: &Program, limits: &wgpu::Limits) -> Result<(), String> {
    let [x, y, z] = program.workgroup_size;
    let max = [
        limits.max_compute_workgroup_size_x,
        limits.max_compute_workgroup_size_y,
        limits.max_compute_workgroup_size_z,
    ];
    if x > max[0] || y > max[1] || z > max[2] || x == 0 || y == 0 || z == 0 {
        return Err(format!(
            "workgroup size {x}x{y}x{z} is outside the device's per-dimension limits {}x{}x{}",
            max[0], max[1], max[2]
        ));
    }
    if program.invocations_per_workgroup() > u64::from(limits.max_compute_invocations_per_workgroup)
    {
        return Err(format!(
            "workgroup size {x}x{y}x{z} exceeds {} invocations per workgroup",
            limits.max_compute_invocations_per_workgroup
        ));
    }
    if program.workgroup_storage_bytes > limits.max_compute_workgroup_storage_size {
        return Err(format!(
            "{} bytes of workgroup memory exceed the device's {}",
            program.workgroup_storage_bytes, limits.max_compute_workgroup_storage_size
        ));
    }
    Ok(())
}

/// Builds one pipeline per launch of `program` (see [`Program::launches`]) with
/// [`build_pipeline`]; the first failure is the error, naming the stage of a sequence.
pub fn build_pipelines(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    program: &Program,
    label: &str,
) -> Result<Vec<wgpu::ComputePipeline>, String> {
    if !program.is_sequence() {
        return build_pipeline(device, layout, program, label).map(|p| vec![p]);
    }
    program
        .launches()
        .iter()
        .map(|launch| {
            build_pipeline(device, layout, launch, label)
                .map_err(|e| format!("stage `{}`: {e}", launch.entry))
        })
        .collect()
}

/// Builds `program`'s first launch under validation, out-of-memory and internal error scopes; the
/// error is wgpu's message, shortened to its first lines. See [`build_pipeline_with`].
pub fn build_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    program: &Program,
    label: &str,
) -> Result<wgpu::ComputePipeline, String> {
    build_pipeline_with(device, layout, program, label).map(|(pipeline, _)| pipeline)
}

/// How a pipeline's loops were built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopBound {
    /// Every loop was proven to end; built without naga's forced loop bound.
    Proven(crate::termination::Proof),
    /// Built with the forced bound, and why.
    Forced(String),
}

/// [`build_pipeline`], saying how the loops were built.
///
/// When every loop of the program is proven to end ([`crate::termination`]), the module is built
/// from that proof's naga IR without naga's forced loop bound; should that build fail, the program
/// is built again from its WGSL with every check, and only that failure is reported.
/// `KERNELFOUNDRY_LOOP_BOUND=forced` keeps the forced bound on every program.
pub fn build_pipeline_with(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    program: &Program,
    label: &str,
) -> Result<(wgpu::ComputePipeline, LoopBound), String> {
    let why = match loop_plan(&program.wgsl, &program.constants_pairs()) {
        Ok((source, checks, proof)) => {
            match build_with(device, layout, program, label, source, Some(checks)) {
                Ok(pipeline) => return Ok((pipeline, LoopBound::Proven(proof))),
                Err(e) => {
                    log::warn!(
                        "{label}: the build without the forced loop bound failed ({e}); \
                         building with it"
                    );
                    format!("the build without it failed: {e}")
                }
            }
        }
        Err(why) => {
            log::debug!("{label}: loops keep the forced bound: {why}");
            why
        }
    };
    let source = wgpu::ShaderSource::Wgsl(program.wgsl.clone());
    build_with(device, layout, program, label, source, plain_checks())
        .map(|pipeline| (pipeline, LoopBound::Forced(why)))
}

/// A shader module of `wgsl` built the way [`build_pipeline_with`] builds programs: without
/// naga's forced loop bound when every loop is proven to end (with `constants`, the pipeline's
/// override values), else with every check. For the tool's own kernels (the ceilings probe), which
/// must be compiled like the kernels they are compared with; there is no fallback build.
pub fn shader_module(
    device: &wgpu::Device,
    label: &str,
    wgsl: &str,
    constants: &[(&str, f64)],
) -> (wgpu::ShaderModule, LoopBound) {
    match loop_plan(wgsl, constants) {
        Ok((source, checks, proof)) => (
            create_module(device, label, source, Some(checks)),
            LoopBound::Proven(proof),
        ),
        Err(why) => {
            let source = wgpu::ShaderSource::Wgsl(wgsl.to_owned().into());
            (
                create_module(device, label, source, plain_checks()),
                LoopBound::Forced(why),
            )
        }
    }
}

/// How to build `wgsl` without naga's forced loop bound: its proven IR as the source, the checks
/// to build it with, and the proof; or why it keeps the bound (not proven, or the process asked).
fn loop_plan(
    wgsl: &str,
    constants: &[(&str, f64)],
) -> Result<
    (
        wgpu::ShaderSource<'static>,
        wgpu::ShaderRuntimeChecks,
        crate::termination::Proof,
    ),
    String,
> {
    let off = RuntimeChecksOff::from_env();
    if off.loops || loop_bound_forced() {
        return Err("the process asked for it".into());
    }
    let mut module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.to_string())?;
    let proof = crate::termination::prove(&mut module, constants)?;
    let mut checks = off.shader_checks();
    checks.force_loop_bounding = false;
    let source = wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module));
    Ok((source, checks, proof))
}

/// The checks a program keeps its loop bound with: all, unless `KERNELFOUNDRY_UNCHECKED` drops
/// some (`None`: wgpu's default build).
fn plain_checks() -> Option<wgpu::ShaderRuntimeChecks> {
    let off = RuntimeChecksOff::from_env();
    off.any_shader_check().then(|| off.shader_checks())
}

/// The one place a module is built with checks turned off (`trusted`).
fn create_module(
    device: &wgpu::Device,
    label: &str,
    source: wgpu::ShaderSource,
    trusted: Option<wgpu::ShaderRuntimeChecks>,
) -> wgpu::ShaderModule {
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source,
    };
    match trusted {
        // SAFETY: the checks turned off are either the forced loop bound of a module whose every
        // loop `termination::prove` showed to end (`loop_plan`), or checks the process was told
        // to drop by `KERNELFOUNDRY_UNCHECKED`, which documents that the caller then vouches for
        // every program it builds (no out-of-bounds index, no integer division by zero).
        #[allow(unsafe_code)]
        Some(checks) => unsafe { device.create_shader_module_trusted(descriptor, checks) },
        None => device.create_shader_module(descriptor),
    }
}

/// The environment variable that, set to `forced`, keeps naga's loop bound on every program.
pub const LOOP_BOUND_ENV: &str = "KERNELFOUNDRY_LOOP_BOUND";

fn loop_bound_forced() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var(LOOP_BOUND_ENV).is_ok_and(|v| v.trim() == "forced"))
}

fn build_with(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    program: &Program,
    label: &str,
    source: wgpu::ShaderSource,
    trusted: Option<wgpu::ShaderRuntimeChecks>,
) -> Result<wgpu::ComputePipeline, String> {
    let off = RuntimeChecksOff::from_env();
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = create_module(device, label, source, trusted);
    let constants = program.constants_pairs();
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        module: &module,
        entry_point: Some(&program.entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: !off.zero_workgroup,
        },
        cache: None,
    });
    let errors = [
        block_on(device, validation.pop()),
        block_on(device, oom.pop()),
        block_on(device, internal.pop()),
    ];
    match errors.into_iter().flatten().next() {
        None => Ok(pipeline),
        Some(error) => Err(first_lines(&error.to_string(), 6)),
    }
}

/// Which of wgpu's shader runtime checks `KERNELFOUNDRY_UNCHECKED` turns off for every pipeline
/// this process builds: a comma-separated list of `bounds` (index clamping), `loops` (the forced
/// loop bound), `div` (integer division and remainder checks) and `zero-workgroup` (zeroing
/// workgroup memory before the first invocation), or `all`.
///
/// This exists to measure what the checks cost on a GPU. Turning one off is only sound for
/// programs known to stay in bounds, terminate and never divide by zero; the tool's variants are
/// verified on the tuning shapes, not proven so for every input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeChecksOff {
    /// Array and buffer indices are not clamped.
    pub bounds: bool,
    /// Loops are not given an iteration bound.
    pub loops: bool,
    /// Integer division and remainder are not guarded.
    pub div: bool,
    /// Workgroup memory is not zeroed before use.
    pub zero_workgroup: bool,
}

/// The environment variable [`RuntimeChecksOff::from_env`] reads.
pub const UNCHECKED_ENV: &str = "KERNELFOUNDRY_UNCHECKED";

impl RuntimeChecksOff {
    /// Parses `KERNELFOUNDRY_UNCHECKED`; unknown items are ignored with a warning, once.
    pub fn from_env() -> Self {
        static PARSED: std::sync::OnceLock<RuntimeChecksOff> = std::sync::OnceLock::new();
        *PARSED.get_or_init(|| match std::env::var(UNCHECKED_ENV) {
            Ok(list) => {
                let off = Self::parse(&list);
                if off != Self::default() {
                    log::warn!(
                        "{UNCHECKED_ENV}={list}: wgpu's shader checks are off for every pipeline \
                         of this process; a program that leaves its bounds or never ends is now \
                         undefined behaviour. Meant for measuring what the checks cost."
                    );
                }
                off
            }
            Err(_) => Self::default(),
        })
    }

    /// Parses a comma-separated list (see the type's docs).
    pub fn parse(list: &str) -> Self {
        let mut off = Self::default();
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match item {
                "all" => {
                    off = Self {
                        bounds: true,
                        loops: true,
                        div: true,
                        zero_workgroup: true,
                    }
                }
                "bounds" => off.bounds = true,
                "loops" => off.loops = true,
                "div" => off.div = true,
                "zero-workgroup" => off.zero_workgroup = true,
                other => log::warn!("{UNCHECKED_ENV}: unknown check `{other}` ignored"),
            }
        }
        off
    }

    fn any_shader_check(&self) -> bool {
        self.bounds || self.loops || self.div
    }

    fn shader_checks(&self) -> wgpu::ShaderRuntimeChecks {
        let mut checks = wgpu::ShaderRuntimeChecks::checked();
        checks.bounds_checks = !self.bounds;
        checks.force_loop_bounding = !self.loops;
        checks.int_div_checks = !self.div;
        checks
    }
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join(" | ")
}

/// Drives a wgpu future to completion. Native error-scope futures are ready at once; the loop
/// only matters for backends that resolve them asynchronously.
pub(crate) fn block_on<F: Future>(device: &wgpu::Device, future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        let _ = device.poll(wgpu::PollType::Poll);
        std::thread::yield_now();
    }
}

impl LoadedKernel {
    /// The kernel this was loaded from.
    pub fn kernel(&self) -> &'static Kernel {
        self.kernel
    }

    /// `baseline` or the variant id.
    pub fn variant(&self) -> &'static str {
        self.label
    }

    /// How the chosen entry relates to this adapter.
    pub fn matched(&self) -> MatchKind {
        self.matched
    }

    /// Why this program was chosen.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// What selection by measurement did on this load: `Some` only when it timed the variants
    /// now (`matched() == MatchKind::Measured`); a remembered choice measured nothing.
    #[cfg(feature = "measure")]
    pub fn measurement(&self) -> Option<&crate::measure::Measurement> {
        self.measurement.as_ref()
    }

    /// The program that runs.
    pub fn program(&self) -> &'static Program {
        self.program
    }

    /// The compute pipeline (of the first launch, for a launch sequence).
    pub fn pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipelines[0]
    }

    /// One compute pipeline per launch, in order (one for a kernel of one launch). An app that
    /// records the launches itself instead of calling [`LoadedKernel::dispatch`] binds
    /// [`LoadedKernel::workspace`] after its own groups in each.
    pub fn pipelines(&self) -> &[wgpu::ComputePipeline] {
        &self.pipelines
    }

    /// The layout for bind group `group` (build your bind groups with it).
    ///
    /// # Panics
    /// If the kernel has no bindings in a group with that index or a higher one.
    pub fn bind_group_layout(&self, group: u32) -> &wgpu::BindGroupLayout {
        &self.layouts[group as usize]
    }

    /// Workgroup counts for the selected program at the given named sizes; parameters its launch
    /// rule names take the selected program's own values. For a launch sequence, the first
    /// launch's counts ([`LoadedKernel::launch_workgroups`] gives every launch's).
    pub fn workgroups(&self, sizes: &[(&str, u64)]) -> Result<[u32; 3], DispatchError> {
        self.check_sizes(sizes)?;
        self.program.workgroups(
            |name| sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v),
            self.max_workgroups_per_dimension,
        )
    }

    /// Workgroup counts of every launch of the selected program, in order.
    pub fn launch_workgroups(&self, sizes: &[(&str, u64)]) -> Result<Vec<[u32; 3]>, DispatchError> {
        self.check_sizes(sizes)?;
        self.launches
            .iter()
            .map(|launch| {
                launch.workgroups(
                    |name| sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v),
                    self.max_workgroups_per_dimension,
                )
            })
            .collect()
    }

    /// The sizes against the spec's size constraints: a variant may rely on them (reading a
    /// buffer 16 bytes at a time when its length is a multiple of 4), so sizes that break one are
    /// refused whichever program was selected, the same on every GPU.
    fn check_sizes(&self, sizes: &[(&str, u64)]) -> Result<(), DispatchError> {
        crate::views::check_sizes(&self.constraints, &|name| {
            sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        })
        .map_err(|e| DispatchError::Constraint(format!("kernel {}: {e}", self.kernel.name)))
    }

    /// Sets the pipeline and bind groups (group `i` = `bind_groups[i]`) and dispatches the workgroup
    /// counts the selected program needs for `sizes`: every launch of a sequence, in order, in
    /// `pass` (wgpu orders the launches' reads after the writes before them). Returns the first
    /// launch's counts. Nothing is recorded when a launch's counts cannot be computed.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        bind_groups: &[&wgpu::BindGroup],
        sizes: &[(&str, u64)],
    ) -> Result<[u32; 3], DispatchError> {
        let counts = self.launch_workgroups(sizes)?;
        let workspace = self.workspace(sizes)?;
        for (pipeline, counts) in self.pipelines.iter().zip(&counts) {
            pass.set_pipeline(pipeline);
            for (i, group) in bind_groups.iter().enumerate() {
                pass.set_bind_group(i as u32, Some(*group), &[]);
            }
            if let Some((group, bind_group)) = &workspace {
                pass.set_bind_group(*group, Some(bind_group), &[]);
            }
            pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
        }
        Ok(counts[0])
    }

    /// The bind group of the selected program's workspace for `sizes` and the group index to
    /// bind it at (after the app's groups), or `None` when the program has none: buffers a tuned
    /// variant needs for itself, such as a split-K product's partial sums. The buffers of the
    /// last call are reused while `sizes` give the same lengths; otherwise new ones are allocated
    /// (zeroed: the program writes what it reads). [`LoadedKernel::dispatch`] binds it for you.
    pub fn workspace(
        &self,
        sizes: &[(&str, u64)],
    ) -> Result<Option<(u32, wgpu::BindGroup)>, DispatchError> {
        let Some(slot) = &self.workspace else {
            return Ok(None);
        };
        let lookup = |name: &str| sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let bytes = self.program.workspace_bytes(lookup)?;
        let mut bound = slot.bound.lock().unwrap_or_else(|e| e.into_inner());
        if bound.as_ref().is_none_or(|b| b.bytes != bytes) {
            *bound = bind_workspace(&slot.device, &slot.layout, self.program, lookup, 0)?;
        }
        Ok(bound.as_ref().map(|b| (b.group, b.bind_group.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::program;

    #[test]
    fn unchecked_list_names_each_check() {
        assert_eq!(RuntimeChecksOff::parse(""), RuntimeChecksOff::default());
        let off = RuntimeChecksOff::parse("loops, div");
        assert!(off.loops && off.div && !off.bounds && !off.zero_workgroup);
        let all = RuntimeChecksOff::parse("all");
        assert!(all.bounds && all.loops && all.div && all.zero_workgroup);
        let checks = RuntimeChecksOff::parse("bounds").shader_checks();
        assert!(!checks.bounds_checks && checks.force_loop_bounding && checks.int_div_checks);
    }

    #[test]
    fn a_variant_rejected_for_a_feature_the_device_lacks_names_it() {
        let subgroup = program("fn f(x: f32) -> f32 { return subgroupAdd(x); }");
        let hint = missing_feature_hint(&subgroup, wgpu::Features::empty());
        assert!(hint.contains("wgpu::Features::SUBGROUP"), "{hint}");
        assert!(hint.contains("kf_runtime::features(&adapter)"), "{hint}");
        assert_eq!(missing_feature_hint(&subgroup, TUNED_FEATURES), "");
        let plain = program("fn f(x: f32) -> f32 { return x; }");
        assert_eq!(missing_feature_hint(&plain, wgpu::Features::empty()), "");
        let both = program("enable f16;\nfn f(x: f16) -> f16 { return subgroupMax(x); }");
        let hint = missing_feature_hint(
            &both,
            wgpu::Features::SUBGROUP | wgpu::Features::SUBGROUP_BARRIER,
        );
        assert!(
            hint.contains("SHADER_F16") && !hint.contains("SUBGROUP"),
            "{hint}"
        );
    }
}
