//! The GPU side of the suite: open the default adapter, run a marked kernel through `kf-runtime`
//! (the variant tuned for this adapter, or the baseline), run a hand-written reference on the
//! same bind group layout, and read the outputs back.
//!
//! Every binding is in group 0, in binding order; outputs start out poisoned with NaN (or
//! `0xDEADBEEF` for integers), so an element a kernel never writes cannot pass the check.

use crate::cases::{Binding, Case, Reference};
use kf_runtime::expr::SizeExpr;
use kf_runtime::{Dispatch, DispatchMode, Kernel, LoadedKernel, Program};
use std::borrow::Cow;
use wgpu::util::DeviceExt;

/// An open device.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter, for variant selection and the header line.
    pub info: wgpu::AdapterInfo,
    /// Whether the device has subgroup operations (the softmax and LayerNorm references use them).
    pub subgroups: bool,
}

impl Gpu {
    /// Opens the default (high-performance) adapter with its full limits, and subgroups if it
    /// has them.
    pub fn open() -> Result<Gpu, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| format!("no GPU adapter found: {e}"))?;
        let subgroups = adapter.features().contains(wgpu::Features::SUBGROUP);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kernelbench"),
            required_features: kf_runtime::features(&adapter),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| format!("cannot open the device: {e}"))?;
        Ok(Gpu {
            info: adapter.get_info(),
            device,
            queue,
            subgroups,
        })
    }

    /// Loads `case.kernel` for this adapter and runs it; returns the loaded kernel (which variant
    /// ran) and the bytes of each checked binding, in the order of `case.checks`.
    pub fn run(&self, case: &Case) -> Result<(LoadedKernel, Vec<Vec<u8>>), String> {
        let kernel: &'static Kernel = case.kernel;
        let loaded = kernel
            .load(&self.device, &self.info)
            .map_err(|e| e.to_string())?;
        let outputs = self.execute(loaded.bind_group_layout(0), case, |pass, group| {
            loaded
                .dispatch(pass, &[group], &case.sizes)
                .map(|_| ())
                .map_err(|e| format!("{}: {e}", kernel.name))
        })?;
        Ok((loaded, outputs))
    }

    /// Runs the hand-written `reference` of `case` with its own launch rule, bound with the
    /// layout of the kernel `loaded` (a reference has the kernel's bindings).
    pub fn run_reference(
        &self,
        case: &Case,
        loaded: &LoadedKernel,
        reference: &Reference,
    ) -> Result<Vec<Vec<u8>>, String> {
        let layout = loaded.bind_group_layout(0);
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(reference.label),
                bind_group_layouts: &[Some(layout)],
                immediate_size: 0,
            });
        let rule: Vec<SizeExpr> = reference
            .workgroups
            .iter()
            .map(|e| SizeExpr::parse(e).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let dim = |i: usize| rule.get(i).cloned().unwrap_or_else(|| SizeExpr::lit(1));
        let program = Program {
            wgsl: Cow::Borrowed(reference.wgsl),
            entry: Cow::Borrowed("main"),
            constants: Cow::Borrowed(&[]),
            // Unused: the rule counts workgroups, whatever their size.
            workgroup_size: [1, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: Dispatch {
                mode: DispatchMode::Workgroups,
                size: [dim(0), dim(1), dim(2)],
            },
            workspace: Cow::Borrowed(&[]),
            then: Cow::Borrowed(&[]),
        };
        let pipeline =
            kf_runtime::build_pipeline(&self.device, &pipeline_layout, &program, reference.label)
                .map_err(|e| format!("{}: {e}", reference.label))?;
        let counts = program
            .workgroups(
                |name| case.sizes.iter().find(|(n, _)| *n == name).map(|(_, v)| *v),
                self.device.limits().max_compute_workgroups_per_dimension,
            )
            .map_err(|e| format!("{}: {e}", reference.label))?;
        self.execute(layout, case, |pass, group| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, Some(group), &[]);
            pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
            Ok(())
        })
    }

    /// Creates the case's buffers, binds them with `layout`, records one compute pass with
    /// `record`, and reads back the checked bindings.
    fn execute(
        &self,
        layout: &wgpu::BindGroupLayout,
        case: &Case,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>, &wgpu::BindGroup) -> Result<(), String>,
    ) -> Result<Vec<Vec<u8>>, String> {
        let buffers: Vec<wgpu::Buffer> = case
            .bindings
            .iter()
            .map(|b| {
                let (contents, usage) = match b {
                    Binding::Storage(bytes) => (
                        bytes.as_slice(),
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    ),
                    Binding::Uniform(bytes) => (bytes.as_slice(), wgpu::BufferUsages::UNIFORM),
                };
                self.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: None,
                        contents,
                        usage,
                    })
            })
            .collect();
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout,
            entries: &entries,
        });
        let staging: Vec<wgpu::Buffer> = case
            .checks
            .iter()
            .map(|c| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: buffers[c.binding].size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            record(&mut pass, &group)?;
        }
        for (c, s) in case.checks.iter().zip(&staging) {
            encoder.copy_buffer_to_buffer(&buffers[c.binding], 0, s, 0, s.size());
        }
        self.queue.submit([encoder.finish()]);
        for s in &staging {
            s.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| e.to_string())?;
        staging
            .iter()
            .map(|s| {
                let view = s
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| format!("cannot read the result back: {e}"))?;
                Ok(view.to_vec())
            })
            .collect()
    }
}
