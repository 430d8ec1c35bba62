//! The GPU resources of one run: a buffer, a texture or a sampler per binding, created from the
//! binding's plan and the bytes the trial gives it, and read back in the same tightly packed form.
//!
//! Buffers hold the bytes as they are. Textures take their texels from the same tightly packed
//! bytes (width × texel size per row, rows then layers), are copied back through a buffer whose
//! rows are padded to wgpu's 256-byte alignment, and come back unpadded — so inputs, poison,
//! comparison and the traffic bound treat a texture exactly like a buffer of texels. Samplers
//! clamp to the edge and filter linearly where the layout allows it.
//!
//! A buffer is filled on the GPU, by a copy from a [`Masters`] buffer that holds the same bytes:
//! the bytes cross from the host once per process rather than once per run (at production
//! shapes each run's upload cost more than the kernel). Masters are only ever copied from, never
//! bound, so no program can change them.
//!
//! Invariant: every resource is created fresh for its run and holds exactly the trial's bytes.

use crate::gpu::Gpu;
use kf_runtime::interface::{BindingKind, TextureDim};
use kf_runtime::resolve::BufferPlan;
use kf_runtime::spec::{Role, Shape};
use kf_runtime::{texture_format, view_dimension};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// Bytes of master buffers kept before they are dropped and made again.
const MASTER_BYTES: u64 = 1 << 30;

/// GPU copies of trial contents ([`super::inputs::Cache`]'s bytes), by the address of the bytes;
/// each entry holds its `Arc`, so that address cannot be reused for other bytes while it lives.
#[derive(Default)]
pub(crate) struct Masters {
    held: RefCell<(HashMap<usize, Master>, u64)>,
}

/// The bytes and their GPU copy.
type Master = (Arc<Vec<u8>>, wgpu::Buffer);

impl Masters {
    /// The master holding `data`, created (uploaded) on first use.
    fn source(&self, gpu: &Gpu, data: &Arc<Vec<u8>>) -> wgpu::Buffer {
        let mut held = self.held.borrow_mut();
        let (map, bytes) = &mut *held;
        let key = Arc::as_ptr(data) as usize;
        if let Some((_, buffer)) = map.get(&key) {
            return buffer.clone();
        }
        if *bytes + data.len() as u64 > MASTER_BYTES {
            map.clear();
            *bytes = 0;
        }
        let buffer = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("kernelfoundry contents"),
                contents: data,
                usage: wgpu::BufferUsages::COPY_SRC,
            });
        *bytes += data.len() as u64;
        map.insert(key, (data.clone(), buffer.clone()));
        buffer
    }
}

/// One binding's resource.
pub(crate) enum Resource {
    /// A uniform or storage buffer.
    Buffer(wgpu::Buffer),
    /// A sampled or storage texture with its view.
    Texture {
        texture: wgpu::Texture,
        view: wgpu::TextureView,
        /// Width, height, depth or layers.
        size: wgpu::Extent3d,
        texel_bytes: u32,
    },
    /// A sampler.
    Sampler(wgpu::Sampler),
}

/// The usages of a buffer for `plan` of `size` bytes, or why the adapter cannot bind it.
fn buffer_usage(gpu: &Gpu, plan: &BufferPlan, size: u64) -> Result<wgpu::BufferUsages, String> {
    let limits = gpu.limits();
    let max = if plan.role == Role::Uniform {
        limits.max_uniform_buffer_binding_size
    } else {
        limits.max_storage_buffer_binding_size
    };
    if size > max {
        return Err(format!(
            "binding `{}` needs {size} bytes, above the adapter's binding limit of {max}; use smaller shapes",
            plan.binding.name,
        ));
    }
    Ok(if plan.role == Role::Uniform {
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
    } else {
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
    })
}

/// Rows copied back from a texture are padded to this many bytes.
const ROW_ALIGN: u32 = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;

impl Resource {
    /// Creates the resource for `plan` on `shape` holding `data`, or says why the adapter
    /// cannot hold it.
    pub(crate) fn create(
        gpu: &Gpu,
        plan: &BufferPlan,
        shape: &Shape,
        data: &[u8],
    ) -> Result<Resource, String> {
        let device = &gpu.device;
        let limits = gpu.limits();
        match plan.binding.kind {
            BindingKind::Sampler { filtering } => {
                let filter = if filtering {
                    wgpu::FilterMode::Linear
                } else {
                    wgpu::FilterMode::Nearest
                };
                Ok(Resource::Sampler(device.create_sampler(
                    &wgpu::SamplerDescriptor {
                        label: Some(&plan.binding.name),
                        address_mode_u: wgpu::AddressMode::ClampToEdge,
                        address_mode_v: wgpu::AddressMode::ClampToEdge,
                        address_mode_w: wgpu::AddressMode::ClampToEdge,
                        mag_filter: filter,
                        min_filter: filter,
                        ..Default::default()
                    },
                )))
            }
            BindingKind::SampledTexture { dim, .. } | BindingKind::StorageTexture { dim, .. } => {
                let format = plan
                    .format
                    .ok_or_else(|| format!("texture `{}` has no format", plan.binding.name))?;
                let [w, h, d] = plan.extent_on(shape).map_err(|e| e.to_string())?;
                let (max, what) = match dim {
                    TextureDim::D1 => (u64::from(limits.max_texture_dimension_1d), "1d"),
                    TextureDim::D2 | TextureDim::D2Array => {
                        (u64::from(limits.max_texture_dimension_2d), "2d")
                    }
                    TextureDim::D3 => (u64::from(limits.max_texture_dimension_3d), "3d"),
                };
                let layers_ok =
                    dim != TextureDim::D2Array || d <= u64::from(limits.max_texture_array_layers);
                if w.max(h).max(if dim == TextureDim::D3 { d } else { 1 }) > max || !layers_ok {
                    return Err(format!(
                        "texture `{}` of {w}x{h}x{d} texels is beyond the adapter's {what} texture limit of {max} (and {} layers); use smaller shapes",
                        plan.binding.name, limits.max_texture_array_layers
                    ));
                }
                let size = wgpu::Extent3d {
                    width: w as u32,
                    height: h as u32,
                    depth_or_array_layers: d as u32,
                };
                let binding_usage =
                    if matches!(plan.binding.kind, BindingKind::StorageTexture { .. }) {
                        wgpu::TextureUsages::STORAGE_BINDING
                    } else {
                        wgpu::TextureUsages::TEXTURE_BINDING
                    };
                let texture = device.create_texture(&wgpu::TextureDescriptor {
                    label: Some(&plan.binding.name),
                    size,
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: match dim {
                        TextureDim::D1 => wgpu::TextureDimension::D1,
                        TextureDim::D2 | TextureDim::D2Array => wgpu::TextureDimension::D2,
                        TextureDim::D3 => wgpu::TextureDimension::D3,
                    },
                    format: texture_format(format),
                    usage: binding_usage
                        | wgpu::TextureUsages::COPY_DST
                        | wgpu::TextureUsages::COPY_SRC,
                    view_formats: &[],
                });
                let view = texture.create_view(&wgpu::TextureViewDescriptor {
                    dimension: Some(view_dimension(dim)),
                    ..Default::default()
                });
                let resource = Resource::Texture {
                    texture,
                    view,
                    size,
                    texel_bytes: format.texel_bytes(),
                };
                resource.write(&gpu.queue, data);
                Ok(resource)
            }
            _ => Ok(Resource::Buffer(device.create_buffer_init(
                &wgpu::util::BufferInitDescriptor {
                    label: Some(&plan.binding.name),
                    contents: data,
                    usage: buffer_usage(gpu, plan, data.len() as u64)?,
                },
            ))),
        }
    }

    /// [`Resource::create`], but a buffer is created empty and `encoder` copies `data` into it
    /// from its master in `masters` (submit the encoder before running on the resource).
    pub(crate) fn create_copied(
        gpu: &Gpu,
        plan: &BufferPlan,
        shape: &Shape,
        data: &Arc<Vec<u8>>,
        masters: &Masters,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<Resource, String> {
        if !matches!(
            plan.binding.kind,
            BindingKind::Uniform | BindingKind::StorageRead | BindingKind::StorageReadWrite
        ) {
            return Resource::create(gpu, plan, shape, data);
        }
        let size = data.len() as u64;
        let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&plan.binding.name),
            size,
            usage: buffer_usage(gpu, plan, size)?,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(&masters.source(gpu, data), 0, &buffer, 0, size);
        Ok(Resource::Buffer(buffer))
    }

    /// Restores a resource created by [`Resource::create_copied`] with `data` to that state,
    /// where a run may have changed it: a read-write storage buffer is copied again from its
    /// master by `encoder`, a storage texture written again. Uniforms, read-only storage,
    /// sampled textures and samplers cannot be written by any program bound to the baseline's
    /// interface, so they are left as they are.
    pub(crate) fn refill(
        &self,
        gpu: &Gpu,
        plan: &BufferPlan,
        data: &Arc<Vec<u8>>,
        masters: &Masters,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        if matches!(
            plan.binding.kind,
            BindingKind::StorageReadWrite | BindingKind::StorageTexture { .. }
        ) {
            self.copy_in(gpu, data, masters, encoder);
        }
    }

    /// Replaces the contents with `data`, as [`Resource::write`] does: a buffer by a copy from
    /// its master on the GPU, recorded in `encoder` (no upload from the host once the master
    /// exists), a texture written from the host.
    pub(crate) fn copy_in(
        &self,
        gpu: &Gpu,
        data: &Arc<Vec<u8>>,
        masters: &Masters,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        match self {
            Resource::Buffer(buffer) => {
                let size = data.len() as u64;
                encoder.copy_buffer_to_buffer(&masters.source(gpu, data), 0, buffer, 0, size);
            }
            _ => self.write(&gpu.queue, data),
        }
    }

    /// What the bind group entry binds.
    pub(crate) fn binding(&self) -> wgpu::BindingResource<'_> {
        match self {
            Resource::Buffer(b) => b.as_entire_binding(),
            Resource::Texture { view, .. } => wgpu::BindingResource::TextureView(view),
            Resource::Sampler(s) => wgpu::BindingResource::Sampler(s),
        }
    }

    /// Replaces the contents with `data` (tightly packed, as created).
    pub(crate) fn write(&self, queue: &wgpu::Queue, data: &[u8]) {
        match self {
            Resource::Buffer(b) => queue.write_buffer(b, 0, data),
            Resource::Texture {
                texture,
                size,
                texel_bytes,
                ..
            } => {
                let row = size.width * texel_bytes;
                let needed = (row * size.height * size.depth_or_array_layers) as usize;
                queue.write_texture(
                    texture.as_image_copy(),
                    &data[..needed.min(data.len())],
                    wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(row),
                        rows_per_image: Some(size.height),
                    },
                    *size,
                );
            }
            Resource::Sampler(_) => {}
        }
    }

    /// Bytes of the staging buffer a read-back needs.
    pub(crate) fn staging_size(&self) -> u64 {
        match self {
            Resource::Buffer(b) => b.size(),
            Resource::Texture {
                size, texel_bytes, ..
            } => {
                u64::from((size.width * texel_bytes).next_multiple_of(ROW_ALIGN))
                    * u64::from(size.height)
                    * u64::from(size.depth_or_array_layers)
            }
            Resource::Sampler(_) => 4,
        }
    }

    /// Encodes the copy of the contents into `staging`.
    pub(crate) fn copy_to(&self, encoder: &mut wgpu::CommandEncoder, staging: &wgpu::Buffer) {
        match self {
            Resource::Buffer(b) => encoder.copy_buffer_to_buffer(b, 0, staging, 0, staging.size()),
            Resource::Texture {
                texture,
                size,
                texel_bytes,
                ..
            } => encoder.copy_texture_to_buffer(
                texture.as_image_copy(),
                wgpu::TexelCopyBufferInfo {
                    buffer: staging,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some((size.width * texel_bytes).next_multiple_of(ROW_ALIGN)),
                        rows_per_image: Some(size.height),
                    },
                },
                *size,
            ),
            Resource::Sampler(_) => {}
        }
    }

    /// The tightly packed contents from a mapped staging buffer.
    pub(crate) fn unpack(&self, mapped: &[u8]) -> Vec<u8> {
        match self {
            Resource::Texture {
                size, texel_bytes, ..
            } => {
                let row = (size.width * texel_bytes) as usize;
                let padded = row.next_multiple_of(ROW_ALIGN as usize);
                let rows = (size.height * size.depth_or_array_layers) as usize;
                let mut out = Vec::with_capacity(row * rows);
                for r in 0..rows {
                    out.extend_from_slice(&mapped[r * padded..r * padded + row]);
                }
                out
            }
            _ => mapped.to_vec(),
        }
    }
}
