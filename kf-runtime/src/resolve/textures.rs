//! Textures and samplers: reflection of handle bindings and resolution of `texture(..)` and
//! `storage_texture(..)` specs.
//!
//! Image kernels are a large part of what wgpu apps compute. A sampled texture is an input (the
//! harness fills it with seeded random texels in the format's range); a storage texture is an
//! output when written (poisoned, then compared texel by texel), an `inout` when read and
//! written, an input when only read. A sampler needs no description. The format of a sampled
//! texture is not in the WGSL, so the spec may give it (`format = rgba16float`); the default is
//! `rgba8unorm` for float textures and `r32uint`/`r32sint` for integer ones. Whether the layout
//! declares textures filterable and samplers filtering follows from those formats, so the
//! layout the runtime builds accepts the textures the app binds.
//!
//! Invariant: a resolved texture plan has a format whose sample type matches the WGSL, as many
//! extents as its dimensionality needs, and a role its access allows.

use super::{BufferPlan, SpecError};
use crate::interface::{
    BindingInterface, BindingKind, SampleType, TexelFormat, TextureAccess, TextureDim,
};
use crate::spec::{BindingSpec, Init, Loc, Role};

/// The binding kind of a texture or sampler type, or why it is not supported.
pub(super) fn handle_kind(ty: &naga::TypeInner) -> Result<BindingKind, String> {
    match ty {
        naga::TypeInner::Image {
            dim,
            arrayed,
            class,
        } => {
            let dim = match (dim, arrayed) {
                (naga::ImageDimension::D1, false) => TextureDim::D1,
                (naga::ImageDimension::D2, false) => TextureDim::D2,
                (naga::ImageDimension::D2, true) => TextureDim::D2Array,
                (naga::ImageDimension::D3, false) => TextureDim::D3,
                (d, a) => {
                    return Err(format!(
                        "{}{d:?} textures are not supported yet (1d, 2d, 2d_array and 3d are)",
                        if *a { "arrayed " } else { "" }
                    ));
                }
            };
            match class {
                naga::ImageClass::Sampled { kind, multi: false } => {
                    Ok(BindingKind::SampledTexture {
                        dim,
                        sample: match kind {
                            naga::ScalarKind::Float => SampleType::Float { filterable: true },
                            naga::ScalarKind::Uint => SampleType::Uint,
                            naga::ScalarKind::Sint => SampleType::Sint,
                            other => return Err(format!("{other:?} textures cannot be sampled")),
                        },
                    })
                }
                naga::ImageClass::Storage { format, access } => {
                    let name = naga_format_name(*format);
                    let format = name.and_then(TexelFormat::parse).ok_or_else(|| {
                        format!(
                            "storage texture format {format:?} is not supported yet; supported: {}",
                            formats()
                        )
                    })?;
                    let load = access.contains(naga::StorageAccess::LOAD);
                    let store = access.contains(naga::StorageAccess::STORE);
                    Ok(BindingKind::StorageTexture {
                        dim,
                        format,
                        access: match (load, store) {
                            (true, true) => TextureAccess::ReadWrite,
                            (false, _) => TextureAccess::Write,
                            (true, false) => TextureAccess::Read,
                        },
                    })
                }
                naga::ImageClass::Sampled { multi: true, .. } => {
                    Err("multisampled textures are not supported yet".into())
                }
                naga::ImageClass::Depth { .. } => Err(
                    "depth textures are not supported yet (they cannot be filled from the host)"
                        .into(),
                ),
                _ => Err("this kind of texture is not supported yet".into()),
            }
        }
        naga::TypeInner::Sampler { comparison: false } => {
            Ok(BindingKind::Sampler { filtering: true })
        }
        naga::TypeInner::Sampler { comparison: true } => {
            Err("comparison samplers (for depth textures) are not supported yet".into())
        }
        naga::TypeInner::BindingArray { .. } => Err("binding arrays are not supported yet".into()),
        _ => Err("this kind of handle binding is not supported".into()),
    }
}

fn naga_format_name(format: naga::StorageFormat) -> Option<&'static str> {
    use naga::StorageFormat as F;
    Some(match format {
        F::R8Unorm => "r8unorm",
        F::Rg8Unorm => "rg8unorm",
        F::Rgba8Unorm => "rgba8unorm",
        F::Rgba8Snorm => "rgba8snorm",
        F::Bgra8Unorm => "bgra8unorm",
        F::Rgba8Uint => "rgba8uint",
        F::Rgba8Sint => "rgba8sint",
        F::R16Float => "r16float",
        F::Rg16Float => "rg16float",
        F::Rgba16Float => "rgba16float",
        F::Rgba16Uint => "rgba16uint",
        F::Rgba16Sint => "rgba16sint",
        F::R32Float => "r32float",
        F::Rg32Float => "rg32float",
        F::Rgba32Float => "rgba32float",
        F::R32Uint => "r32uint",
        F::Rg32Uint => "rg32uint",
        F::Rgba32Uint => "rgba32uint",
        F::R32Sint => "r32sint",
        F::Rg32Sint => "rg32sint",
        F::Rgba32Sint => "rgba32sint",
        _ => return None,
    })
}

fn formats() -> String {
    TexelFormat::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reports size names that `sizes(..)` does not declare.
pub(super) type NameCheck<'a> = dyn Fn(Vec<&str>, Loc, &mut Vec<SpecError>) + 'a;

/// Resolves the `i`-th binding spec `b` against the texture or sampler binding `r` (or a texture
/// spec against a buffer binding, which is an error); problems go to `errors`.
pub(super) fn resolve_texture(
    i: usize,
    b: &BindingSpec,
    r: &BindingInterface,
    check_names: &NameCheck<'_>,
    errors: &mut Vec<SpecError>,
) -> Option<BufferPlan> {
    let mismatch =
        |message: String, hint: String| SpecError::new(Loc::BindingRole(i), message).hint(hint);
    let spec = match (&r.kind, &b.texture) {
        (BindingKind::Sampler { .. }, _) => {
            errors.push(mismatch(
                format!(
                    "binding `{}` is a sampler; samplers need no description",
                    r.name
                ),
                format!(
                    "remove `{}` from `bind(..)`: the harness binds a clamp-to-edge sampler",
                    r.name
                ),
            ));
            return None;
        }
        (BindingKind::SampledTexture { .. }, Some(t)) if !t.storage => t,
        (BindingKind::StorageTexture { .. }, Some(t)) if t.storage => t,
        (BindingKind::SampledTexture { .. }, _) => {
            errors.push(mismatch(
                format!("binding `{}` is a sampled `{}`", r.name, r.ty),
                format!(
                    "describe it with its extents: `{} = texture(width, height)`",
                    r.name
                ),
            ));
            return None;
        }
        (BindingKind::StorageTexture { .. }, _) => {
            errors.push(mismatch(
                format!("binding `{}` is a storage texture `{}`", r.name, r.ty),
                format!(
                    "describe it with its extents: `{} = storage_texture(width, height)`",
                    r.name
                ),
            ));
            return None;
        }
        (_, Some(_)) => {
            errors.push(mismatch(
                format!("binding `{}` is a buffer (`{}`), not a texture", r.name, r.ty),
                "describe a buffer with `input(len)`, `output(len)`, `inout(len)`, `scratch(len)` or `uniform(values..)`".into(),
            ));
            return None;
        }
        (_, None) => unreachable!("called for textures, samplers and texture specs"),
    };
    for e in &spec.extent {
        check_names(e.names().collect(), Loc::BindingLen(i), errors);
    }
    let (dim, format, role) = match r.kind {
        BindingKind::SampledTexture { dim, sample } => {
            let format = spec.format.unwrap_or(match sample {
                SampleType::Float { .. } => TexelFormat::Rgba8unorm,
                SampleType::Uint => TexelFormat::R32uint,
                SampleType::Sint => TexelFormat::R32sint,
            });
            if std::mem::discriminant(&format.sample_type()) != std::mem::discriminant(&sample) {
                errors.push(mismatch(
                    format!(
                        "`{}` is `{}`, but `{format}` texels read as another type",
                        r.name, r.ty
                    ),
                    format!(
                        "give a format of the texture's type: {}",
                        TexelFormat::ALL
                            .iter()
                            .filter(|f| std::mem::discriminant(&f.sample_type())
                                == std::mem::discriminant(&sample))
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                return None;
            }
            (dim, format, Role::Input)
        }
        BindingKind::StorageTexture {
            dim,
            format,
            access,
        } => {
            if let Some(given) = spec.format
                && given != format
            {
                errors.push(mismatch(
                    format!(
                        "`{}` is `{}`; its format is `{format}`, not `{given}`",
                        r.name, r.ty
                    ),
                    "a storage texture's format comes from the WGSL: leave out `format = ..`"
                        .into(),
                ));
                return None;
            }
            let role = match access {
                TextureAccess::Write => Role::Output,
                TextureAccess::ReadWrite => Role::Inout,
                TextureAccess::Read => Role::Input,
            };
            if role == Role::Output && b.init.is_some() {
                errors.push(mismatch(
                    format!("`{}` is write-only: it is poisoned before every run, so it takes no input distribution", r.name),
                    format!("`{} = storage_texture(width, height)`", r.name),
                ));
                return None;
            }
            (dim, format, role)
        }
        _ => unreachable!("matched above"),
    };
    if spec.extent.len() != dim.extents() {
        let names = ["width", "height", "depth or layers"];
        errors.push(
            SpecError::new(
                Loc::BindingLen(i),
                format!(
                    "`{}` is `{}`: it takes {} extent(s), {} given",
                    r.name,
                    r.ty,
                    dim.extents(),
                    spec.extent.len()
                ),
            )
            .hint(format!("give {}", names[..dim.extents()].join(", "))),
        );
        return None;
    }
    if let Some(
        init @ (Init::Values(_) | Init::CausalMask(..) | Init::Probabilities(_) | Init::Bits),
    ) = &b.init
    {
        errors.push(mismatch(
            format!(
                "`{init}` does not apply to a texture: a texture is filled with `range(lo, hi)` or `constant(v)` per channel"
            ),
            "e.g. `img = texture(w, h, range(0.0, 1.0))`; a mask or probabilities go in a storage buffer".into(),
        ));
        return None;
    }
    Some(BufferPlan {
        binding: r.clone(),
        role,
        len: None,
        init: b.init.clone(),
        values: Vec::new(),
        extent: spec.extent.clone(),
        format: Some(format),
    })
}

/// Sets each sampled float texture's filterability from its format, and makes every sampler
/// non-filtering when one such texture cannot be filtered (a filtering sampler may not be used
/// with it).
pub(super) fn settle_filtering(plans: &mut [Option<BufferPlan>]) {
    let mut all_filterable = true;
    for plan in plans.iter_mut().flatten() {
        if let (
            BindingKind::SampledTexture {
                dim,
                sample: SampleType::Float { .. },
            },
            Some(f),
        ) = (plan.binding.kind, plan.format)
        {
            plan.binding.kind = BindingKind::SampledTexture {
                dim,
                sample: SampleType::Float {
                    filterable: f.is_filterable(),
                },
            };
            all_filterable &= f.is_filterable();
        }
    }
    for plan in plans.iter_mut().flatten() {
        if let BindingKind::Sampler { .. } = plan.binding.kind {
            plan.binding.kind = BindingKind::Sampler {
                filtering: all_filterable,
            };
        }
    }
}
