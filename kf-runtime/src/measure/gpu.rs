//! The [`Bench`] of selection by measurement on a live device: buffers from the plan, one
//! dispatch per program run, timed with the host clock after a queue sync, and the check run.
//!
//! The host clock (not timestamp queries) because the app opened its device with the features it
//! needs, which need not include timestamps; the submit-and-wait overhead it adds to every run
//! makes small differences look smaller, so it errs toward the baseline, never away from it.
//! Every GPU call runs inside validation, out-of-memory and internal error scopes, so an error
//! becomes a reason, never a panic of wgpu's default handler.

use super::decide::Bench;
use super::values;
use crate::load::block_on;
use crate::plan::MeasurePlan;
use crate::program::Program;
use crate::spec::Shape;
use std::time::Instant;
use wgpu::util::DeviceExt;

/// One program ready to run: its pipeline and its workgroup counts on both shapes.
pub(crate) struct Runnable {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) time_counts: [u32; 3],
    pub(crate) check_counts: [u32; 3],
}

/// Buffers and bind groups of one shape.
struct Bound {
    buffers: Vec<wgpu::Buffer>,
    groups: Vec<wgpu::BindGroup>,
}

pub(crate) struct GpuBench<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    plan: &'a MeasurePlan,
    layouts: &'a [wgpu::BindGroupLayout],
    pub(crate) programs: Vec<Runnable>,
    timing: Bound,
}

/// The workgroup counts of `program` on `shape`.
pub(crate) fn counts(program: &Program, shape: &Shape, max: u32) -> Result<[u32; 3], String> {
    program
        .workgroups(|n| shape.get(n).copied(), max)
        .map_err(|e| e.to_string())
}

/// Runs `f` inside validation, out-of-memory and internal error scopes; the first error wins.
fn scoped<T>(device: &wgpu::Device, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let out = f();
    let errors = [
        block_on(device, validation.pop()),
        block_on(device, oom.pop()),
        block_on(device, internal.pop()),
    ];
    match errors.into_iter().flatten().next() {
        Some(e) => Err(e
            .to_string()
            .lines()
            .take(4)
            .collect::<Vec<_>>()
            .join(" | ")),
        None => out,
    }
}

impl<'a> GpuBench<'a> {
    /// Creates the timing buffers (on the plan's timing shape) for `programs`, program 0 being
    /// the baseline.
    pub(crate) fn new(
        device: &'a wgpu::Device,
        queue: &'a wgpu::Queue,
        plan: &'a MeasurePlan,
        layouts: &'a [wgpu::BindGroupLayout],
        programs: Vec<Runnable>,
    ) -> Result<Self, String> {
        let timing = scoped(device, || bind(device, plan, layouts, &plan.time_shape, 1))?;
        Ok(GpuBench {
            device,
            queue,
            plan,
            layouts,
            programs,
            timing,
        })
    }

    fn wait(&self) -> Result<(), String> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| format!("waiting for the GPU failed: {e}"))
    }

    /// Runs program `idx` once on `bound` and copies the compared buffers to read-back buffers.
    fn run(
        &self,
        idx: usize,
        bound: &Bound,
        counts: [u32; 3],
        read_back: &[(usize, wgpu::Buffer)],
    ) -> Result<(), String> {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&self.programs[idx].pipeline);
            for (i, g) in bound.groups.iter().enumerate() {
                pass.set_bind_group(i as u32, g, &[]);
            }
            pass.dispatch_workgroups(counts[0], counts[1], counts[2]);
        }
        for (i, staging) in read_back {
            encoder.copy_buffer_to_buffer(&bound.buffers[*i], 0, staging, 0, staging.size());
        }
        self.queue.submit([encoder.finish()]);
        for (_, staging) in read_back {
            staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.wait()
    }

    /// Program `idx`'s compared buffers after one run on fresh check-shape buffers.
    fn outputs(&self, idx: usize) -> Result<Vec<Vec<u8>>, String> {
        scoped(self.device, || {
            let shape = &self.plan.check_shape;
            let bound = bind(self.device, self.plan, self.layouts, shape, 2)?;
            let read_back: Vec<(usize, wgpu::Buffer)> = self
                .plan
                .buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_compared())
                .map(|(i, _)| {
                    let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("kernelfoundry check read-back"),
                        size: bound.buffers[i].size(),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    (i, staging)
                })
                .collect();
            self.run(idx, &bound, self.programs[idx].check_counts, &read_back)?;
            read_back
                .iter()
                .map(|(_, staging)| {
                    let view = staging
                        .slice(..)
                        .get_mapped_range()
                        .map_err(|e| format!("reading the results back failed: {e}"))?;
                    Ok(view.to_vec())
                })
                .collect()
        })
    }
}

/// Buffers for every binding of `plan` on `shape`, filled for the trial `seed`, and one bind
/// group per layout.
fn bind(
    device: &wgpu::Device,
    plan: &MeasurePlan,
    layouts: &[wgpu::BindGroupLayout],
    shape: &Shape,
    seed: u64,
) -> Result<Bound, String> {
    let limits = device.limits();
    let mut buffers = Vec::with_capacity(plan.buffers.len());
    for b in &plan.buffers {
        let bytes =
            values::contents(b, shape, seed).map_err(|e| format!("binding `{}`: {e}", b.name))?;
        let max = if b.uniform {
            limits.max_uniform_buffer_binding_size
        } else {
            limits.max_storage_buffer_binding_size
        };
        if bytes.len() as u64 > max.min(limits.max_buffer_size) {
            return Err(format!(
                "binding `{}` needs {} bytes, over the device's limit of {}",
                b.name,
                bytes.len(),
                max.min(limits.max_buffer_size)
            ));
        }
        let usage = if b.uniform {
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
        } else {
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST
        };
        buffers.push(
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(&b.name),
                contents: &bytes,
                usage,
            }),
        );
    }
    let groups = layouts
        .iter()
        .enumerate()
        .map(|(g, layout)| {
            let entries: Vec<wgpu::BindGroupEntry> = plan
                .buffers
                .iter()
                .zip(&buffers)
                .filter(|(b, _)| b.group == g as u32)
                .map(|(b, buffer)| wgpu::BindGroupEntry {
                    binding: b.binding,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("kernelfoundry measurement"),
                layout,
                entries: &entries,
            })
        })
        .collect();
    Ok(Bound { buffers, groups })
}

impl Bench for GpuBench<'_> {
    fn round(&mut self, order: &[usize]) -> Result<Vec<f64>, String> {
        let mut times = vec![0.0; self.programs.len()];
        for &idx in order {
            let counts = self.programs[idx].time_counts;
            let start = Instant::now();
            scoped(self.device, || self.run(idx, &self.timing, counts, &[]))?;
            times[idx] = start.elapsed().as_secs_f64() * 1e9;
        }
        Ok(times)
    }

    fn check(&mut self, idx: usize) -> Result<(), String> {
        let baseline = self.outputs(0)?;
        let variant = self.outputs(idx)?;
        let shape = &self.plan.check_shape;
        let compared = self.plan.buffers.iter().filter(|b| b.is_compared());
        for ((b, base), var) in compared.zip(&baseline).zip(&variant) {
            let len = b.len_on(shape).map_err(|e| e.to_string())?;
            values::compare(&b.layout, len, base, var, self.plan.tolerance)
                .map_err(|e| format!("binding `{}`: {e}", b.name))?;
        }
        Ok(())
    }
}
