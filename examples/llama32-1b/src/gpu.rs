//! Thin wgpu helpers for the layer: open the device, make buffers, bind a loaded kernel's
//! buffers, record dispatches and copies, and read buffers back.

use kf_runtime::LoadedKernel;
use std::num::NonZeroU64;
use wgpu::util::DeviceExt;

/// An open device.
pub struct Gpu {
    /// The device.
    pub device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter, for variant selection and the header line.
    pub info: wgpu::AdapterInfo,
}

/// One scalar of a uniform, in declaration order.
#[derive(Clone, Copy)]
pub enum U {
    /// A `u32` member.
    U(usize),
    /// An `f32` member.
    F(f64),
}

/// One step of the recorded work.
pub enum Op<'a> {
    /// Dispatch `kernel` with `group` for the named sizes.
    Dispatch(&'a LoadedKernel, wgpu::BindGroup, Vec<(&'static str, u64)>),
    /// Copy `len` floats from `src[src_at..]` to `dst[dst_at..]`.
    Copy(&'a wgpu::Buffer, usize, &'a wgpu::Buffer, usize, usize),
}

impl Gpu {
    /// Opens the default (high-performance) adapter with its full limits.
    pub fn open() -> Result<Gpu, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| format!("no GPU adapter found: {e}"))?;
        // What tuned variants may use (subgroups), and timestamps for `--bench`, where the
        // adapter has them.
        let features =
            kf_runtime::features(&adapter) | (adapter.features() & wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("llama32-1b"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| format!("cannot open the device: {e}"))?;
        Ok(Gpu {
            info: adapter.get_info(),
            device,
            queue,
        })
    }

    /// A storage buffer holding `data`.
    pub fn storage<T: bytemuck::Pod>(&self, data: &[T]) -> Result<wgpu::Buffer, String> {
        let bytes = std::mem::size_of_val(data) as u64;
        let max = self.device.limits().max_storage_buffer_binding_size;
        if bytes > max {
            return Err(format!(
                "a {bytes}-byte buffer exceeds this device's storage binding limit of {max} bytes"
            ));
        }
        Ok(self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            }))
    }

    /// A storage buffer of `n` floats, poisoned with NaN so unwritten values cannot pass a check.
    pub fn output(&self, n: usize) -> Result<wgpu::Buffer, String> {
        self.storage(&vec![0x7FC0_DEADu32; n])
    }

    /// A uniform buffer with 4-byte members in order, padded to 16 bytes.
    pub fn uniform(&self, members: &[U]) -> wgpu::Buffer {
        let mut bytes: Vec<u8> = members
            .iter()
            .flat_map(|m| match *m {
                U::U(v) => (v as u32).to_le_bytes(),
                U::F(v) => (v as f32).to_le_bytes(),
            })
            .collect();
        bytes.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            })
    }

    /// A bind group for `kernel` with `buffers` as bindings 0.. of group 0; a `Some(n)` beside a
    /// buffer binds only its first `n` floats.
    pub fn bind(
        &self,
        kernel: &LoadedKernel,
        buffers: &[(&wgpu::Buffer, Option<usize>)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, (b, floats))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: b,
                    offset: 0,
                    size: floats.and_then(|n| NonZeroU64::new(n as u64 * 4)),
                }),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.kernel().name),
            layout: kernel.bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Records `ops` in order (one compute pass per dispatch) and submits them.
    pub fn submit(&self, ops: &[Op<'_>]) -> Result<(), String> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        self.record(&mut encoder, ops, None)?;
        self.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Records `ops`; with `stamps`, dispatch `i` writes timestamps `2i` and `2i + 1` at the start
    /// and end of its pass.
    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        ops: &[Op<'_>],
        stamps: Option<&wgpu::QuerySet>,
    ) -> Result<(), String> {
        let mut dispatch = 0u32;
        for op in ops {
            match op {
                Op::Dispatch(kernel, group, sizes) => {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(kernel.kernel().name),
                        timestamp_writes: stamps.map(|q| wgpu::ComputePassTimestampWrites {
                            query_set: q,
                            beginning_of_pass_write_index: Some(2 * dispatch),
                            end_of_pass_write_index: Some(2 * dispatch + 1),
                        }),
                    });
                    kernel
                        .dispatch(&mut pass, &[group], sizes)
                        .map_err(|e| format!("{}: {e}", kernel.kernel().name))?;
                    dispatch += 1;
                }
                Op::Copy(src, src_at, dst, dst_at, len) => encoder.copy_buffer_to_buffer(
                    src,
                    *src_at as u64 * 4,
                    dst,
                    *dst_at as u64 * 4,
                    *len as u64 * 4,
                ),
            }
        }
        Ok(())
    }

    /// Times `ops` as one step on the GPU: after `warm_up` of running them back to back (the
    /// clocks of a discrete GPU ramp up under load), `repeats` submissions, each with a timestamp
    /// at the start and end of every dispatch. Returns per repeat the step's GPU time (first
    /// dispatch's start to last dispatch's end, copies and gaps included) and each dispatch's.
    pub fn time(
        &self,
        ops: &[Op<'_>],
        warm_up: std::time::Duration,
        repeats: usize,
    ) -> Result<Vec<(f64, Vec<f64>)>, String> {
        if !self
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return Err(format!(
                "{} has no timestamp queries: --bench times the step on the GPU with them",
                self.info.name
            ));
        }
        let dispatches = ops
            .iter()
            .filter(|op| matches!(op, Op::Dispatch(..)))
            .count() as u32;
        if dispatches == 0 {
            return Err("nothing to time: the step has no dispatch".into());
        }
        let count = 2 * dispatches;
        let query_set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("step timing"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let bytes = u64::from(count) * 8;
        let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("step timing resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("step timing read"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let wait = || {
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let start = std::time::Instant::now();
        while start.elapsed() < warm_up {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            for _ in 0..8 {
                self.record(&mut encoder, ops, None)?;
            }
            self.queue.submit([encoder.finish()]);
            wait()?;
        }
        let period = f64::from(self.queue.get_timestamp_period());
        let mut out = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            self.record(&mut encoder, ops, Some(&query_set))?;
            encoder.resolve_query_set(&query_set, 0..count, &resolve, 0);
            encoder.copy_buffer_to_buffer(&resolve, 0, &read, 0, bytes);
            self.queue.submit([encoder.finish()]);
            read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
            wait()?;
            let ticks: Vec<u64> = {
                let view = read
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| format!("cannot read the timestamps back: {e}"))?;
                bytemuck::cast_slice::<u8, u64>(&view).to_vec()
            };
            read.unmap();
            let ns = |a: u64, b: u64| b.saturating_sub(a) as f64 * period;
            let per: Vec<f64> = ticks.chunks(2).map(|p| ns(p[0], p[1])).collect();
            let step = ns(ticks[0], ticks[ticks.len() - 1]);
            out.push((step, per));
        }
        Ok(out)
    }

    /// Reads `buffers` back as floats (after all submitted work).
    pub fn read(&self, buffers: &[&wgpu::Buffer]) -> Result<Vec<Vec<f32>>, String> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let staging: Vec<wgpu::Buffer> = buffers
            .iter()
            .map(|b| {
                let s = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: b.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                encoder.copy_buffer_to_buffer(b, 0, &s, 0, b.size());
                s
            })
            .collect();
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
                Ok(bytemuck::cast_slice::<u8, f32>(&view).to_vec())
            })
            .collect()
    }
}
