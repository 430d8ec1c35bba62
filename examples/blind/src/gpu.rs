//! The GPU side of the app: open the default adapter, run a marked kernel through `kf-runtime`
//! (the variant tuned for this adapter, or the baseline), and read the outputs back.
//!
//! The corpus binds in any order and in more than one bind group (`transpose_groups.wgsl` reads
//! its input from group 1, `b2_gemv_at.wgsl` its uniform), so a case names its bindings by WGSL
//! variable and each is placed at the `@group`/`@binding` the kernel's embedded interface gives,
//! in bind groups built with the loaded kernel's own layouts. Outputs start out poisoned with NaN
//! (or `0xDEADBEEF` for integers), so an element a kernel never writes cannot pass the check.

use crate::cases::{Binding, Case};
use kf_runtime::LoadedKernel;
use kf_runtime::interface::BindingKind;
use wgpu::util::DeviceExt;

/// An open device.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter, for variant selection and the header line.
    pub info: wgpu::AdapterInfo,
}

impl Gpu {
    /// Opens the default (high-performance) adapter with its full limits and the optional
    /// features tuned variants may use.
    pub fn open() -> Result<Gpu, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| format!("no GPU adapter found: {e}"))?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("blind"),
            required_features: kf_runtime::features(&adapter),
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

    /// Why this device cannot bind one of the case's buffers, if it cannot: a real shape may
    /// need more than a CPU driver allows (lavapipe binds at most 128 MiB, less than the real
    /// embedding table), and wgpu treats an oversized binding as a fatal error.
    pub fn unfit(&self, case: &Case) -> Option<String> {
        let limits = self.device.limits();
        case.bindings.iter().find_map(|(name, b)| {
            let (len, max, limit) = match b {
                Binding::Storage(bytes) => (
                    bytes.len() as u64,
                    limits.max_storage_buffer_binding_size,
                    "max_storage_buffer_binding_size",
                ),
                Binding::Uniform(bytes) => (
                    bytes.len() as u64,
                    limits.max_uniform_buffer_binding_size,
                    "max_uniform_buffer_binding_size",
                ),
            };
            let (max, limit) = if limits.max_buffer_size < max {
                (limits.max_buffer_size, "max_buffer_size")
            } else {
                (max, limit)
            };
            (len > max).then(|| {
                format!("binding `{name}` is {len} bytes, over this device's {limit} of {max}")
            })
        })
    }

    /// Loads `case.kernel` for this adapter and runs it; returns the loaded kernel (which variant
    /// ran) and the bytes of each checked binding, in the order of `case.checks`.
    pub fn run(&self, case: &Case) -> Result<(LoadedKernel, Vec<Vec<u8>>), String> {
        let kernel = case.kernel;
        let loaded = kernel
            .load(&self.device, &self.info)
            .map_err(|e| e.to_string())?;
        let slots = slots(case)?;
        let buffers: Vec<wgpu::Buffer> = case
            .bindings
            .iter()
            .map(|(name, b)| {
                let (contents, usage) = match b {
                    Binding::Storage(bytes) => (
                        bytes.as_slice(),
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    ),
                    Binding::Uniform(bytes) => (bytes.as_slice(), wgpu::BufferUsages::UNIFORM),
                };
                self.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(name),
                        contents,
                        usage,
                    })
            })
            .collect();
        // One bind group per group index up to the highest used (empty for a gap), as the
        // runtime's layouts are.
        let groups = slots.iter().map(|s| s.0 + 1).max().unwrap_or(0);
        let bind_groups: Vec<wgpu::BindGroup> = (0..groups)
            .map(|group| {
                let entries: Vec<wgpu::BindGroupEntry> = slots
                    .iter()
                    .zip(&buffers)
                    .filter(|((g, _), _)| *g == group)
                    .map(|(&(_, binding), buffer)| wgpu::BindGroupEntry {
                        binding,
                        resource: buffer.as_entire_binding(),
                    })
                    .collect();
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(kernel.name),
                    layout: loaded.bind_group_layout(group),
                    entries: &entries,
                })
            })
            .collect();
        let checked: Vec<&wgpu::Buffer> = case
            .checks
            .iter()
            .map(|c| {
                let at = case.bindings.iter().position(|(n, _)| *n == c.binding);
                at.map(|i| &buffers[i])
                    .ok_or_else(|| format!("{}: no binding `{}` to check", kernel.name, c.binding))
            })
            .collect::<Result<_, _>>()?;
        let staging: Vec<wgpu::Buffer> = checked
            .iter()
            .map(|b| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: b.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            let refs: Vec<&wgpu::BindGroup> = bind_groups.iter().collect();
            loaded
                .dispatch(&mut pass, &refs, &case.sizes)
                .map_err(|e| format!("{}: {e}", kernel.name))?;
        }
        for (b, s) in checked.iter().zip(&staging) {
            encoder.copy_buffer_to_buffer(b, 0, s, 0, s.size());
        }
        self.queue.submit([encoder.finish()]);
        for s in &staging {
            s.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| e.to_string())?;
        let outputs = staging
            .iter()
            .map(|s| {
                let view = s
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| format!("cannot read the result back: {e}"))?;
                Ok(view.to_vec())
            })
            .collect::<Result<_, String>>()?;
        Ok((loaded, outputs))
    }
}

/// The `(group, binding)` of each of the case's bindings, in the case's order, from the kernel's
/// interface; a name the kernel does not have, a binding of the wrong kind (uniform or storage)
/// or one the case leaves out is an error in the case.
fn slots(case: &Case) -> Result<Vec<(u32, u32)>, String> {
    let kernel = case.kernel;
    if let Some(missing) = kernel
        .bindings
        .iter()
        .find(|b| !case.bindings.iter().any(|(n, _)| *n == b.name))
    {
        return Err(format!(
            "{}: the case gives no contents for binding `{}`",
            kernel.name, missing.name
        ));
    }
    case.bindings
        .iter()
        .map(|(name, contents)| {
            let b = kernel
                .bindings
                .iter()
                .find(|b| b.name == *name)
                .ok_or_else(|| format!("{}: the kernel has no binding `{name}`", kernel.name))?;
            let fits = matches!(
                (contents, b.kind),
                (Binding::Uniform(_), BindingKind::Uniform)
                    | (
                        Binding::Storage(_),
                        BindingKind::StorageRead | BindingKind::StorageReadWrite
                    )
            );
            if !fits {
                return Err(format!(
                    "{}: binding `{name}` is {:?}, the case gives other contents",
                    kernel.name, b.kind
                ));
            }
            Ok((b.group, b.binding))
        })
        .collect()
}
