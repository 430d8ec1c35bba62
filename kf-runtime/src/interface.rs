//! A kernel's interface as reflected from its WGSL: entry point, workgroup size, bindings with their
//! memory layout, and `override` constants.
//!
//! The interface is the contract every variant must keep — the user's bind groups are built once
//! for the baseline and must work with whatever variant the runtime picks — and it is what the
//! harness needs to create, fill, poison and compare buffers without knowing the kernel.
//! Textures and samplers are bindings too: a sampled texture is an input the harness fills with
//! texels, a storage texture an output compared texel by texel (as a tightly packed array of
//! texels, see [`TexelFormat::texel_layout`]).
//!
//! Invariant: these are plain data (serializable, no naga types), so they can cross the worker
//! protocol and be compared between baseline and variant with `==`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a binding is accessed, with what its bind group layout entry needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindingKind {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
    /// `texture_1d/2d/2d_array/3d<T>`, read with `textureLoad` or through a sampler.
    SampledTexture {
        /// Dimensionality.
        dim: TextureDim,
        /// What its texels hold.
        sample: SampleType,
    },
    /// `texture_storage_*<format, access>`.
    StorageTexture {
        /// Dimensionality.
        dim: TextureDim,
        /// The texel format the WGSL names.
        format: TexelFormat,
        /// Read, write or both.
        access: TextureAccess,
    },
    /// `sampler`.
    Sampler {
        /// Whether the layout allows linear filtering (false when a sampled texture of the
        /// kernel has a format that cannot be filtered).
        filtering: bool,
    },
}

impl BindingKind {
    /// Whether a variant with `other` at this binding fits the baseline's layout: the same kind
    /// as far as the WGSL says (filterability comes from the spec's texture formats, not from
    /// the shader, so it is not compared).
    pub fn same_in_shader(&self, other: &BindingKind) -> bool {
        match (self, other) {
            (
                BindingKind::SampledTexture { dim: a, sample: sa },
                BindingKind::SampledTexture { dim: b, sample: sb },
            ) => a == b && std::mem::discriminant(sa) == std::mem::discriminant(sb),
            (BindingKind::Sampler { .. }, BindingKind::Sampler { .. }) => true,
            (a, b) => a == b,
        }
    }

    /// Whether this is a texture (sampled or storage).
    pub fn is_texture(&self) -> bool {
        matches!(
            self,
            BindingKind::SampledTexture { .. } | BindingKind::StorageTexture { .. }
        )
    }
}

impl fmt::Display for BindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindingKind::Uniform => f.write_str("uniform"),
            BindingKind::StorageRead => f.write_str("storage, read"),
            BindingKind::StorageReadWrite => f.write_str("storage, read_write"),
            BindingKind::SampledTexture { dim, .. } => write!(f, "texture_{dim}"),
            BindingKind::StorageTexture {
                dim,
                format,
                access,
            } => write!(f, "texture_storage_{dim}<{format}, {access}>"),
            BindingKind::Sampler { .. } => f.write_str("sampler"),
        }
    }
}

/// The dimensionality of a texture binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TextureDim {
    /// `texture_1d`: one extent (width).
    #[serde(rename = "1d")]
    D1,
    /// `texture_2d`: width, height.
    #[serde(rename = "2d")]
    D2,
    /// `texture_2d_array`: width, height, layers.
    #[serde(rename = "2d-array")]
    D2Array,
    /// `texture_3d`: width, height, depth.
    #[serde(rename = "3d")]
    D3,
}

impl TextureDim {
    /// How many extents the spec gives: 1, 2 or 3.
    pub fn extents(self) -> usize {
        match self {
            TextureDim::D1 => 1,
            TextureDim::D2 => 2,
            TextureDim::D2Array | TextureDim::D3 => 3,
        }
    }
}

impl fmt::Display for TextureDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextureDim::D1 => "1d",
            TextureDim::D2 => "2d",
            TextureDim::D2Array => "2d_array",
            TextureDim::D3 => "3d",
        })
    }
}

/// What a sampled texture's texels hold (`texture_2d<f32>`, `<u32>`, `<i32>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleType {
    /// `f32`.
    Float {
        /// Whether the texture's format can be filtered.
        filterable: bool,
    },
    /// `u32`.
    Uint,
    /// `i32`.
    Sint,
}

/// Storage texture access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextureAccess {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `read_write`.
    ReadWrite,
}

impl fmt::Display for TextureAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TextureAccess::Read => "read",
            TextureAccess::Write => "write",
            TextureAccess::ReadWrite => "read_write",
        })
    }
}

macro_rules! texel_formats {
    ($($variant:ident = $name:literal: $scalar:ident x $channels:literal, $filterable:literal;)*) => {
        /// A texel format, named as in WGSL.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum TexelFormat {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )*
        }

        impl TexelFormat {
            /// Every supported format.
            pub const ALL: &'static [TexelFormat] = &[$(TexelFormat::$variant),*];

            /// The WGSL name.
            pub fn name(self) -> &'static str {
                match self {
                    $(TexelFormat::$variant => $name,)*
                }
            }

            /// The scalar of one channel and the number of channels.
            pub fn channels(self) -> (Scalar, u32) {
                match self {
                    $(TexelFormat::$variant => (Scalar::$scalar, $channels),)*
                }
            }

            /// Whether a sampler may filter it linearly (without optional features).
            pub fn is_filterable(self) -> bool {
                match self {
                    $(TexelFormat::$variant => $filterable,)*
                }
            }
        }
    };
}

texel_formats! {
    R8unorm = "r8unorm": Unorm8 x 1, true;
    Rg8unorm = "rg8unorm": Unorm8 x 2, true;
    Rgba8unorm = "rgba8unorm": Unorm8 x 4, true;
    Rgba8snorm = "rgba8snorm": Snorm8 x 4, true;
    Bgra8unorm = "bgra8unorm": Unorm8 x 4, true;
    Rgba8uint = "rgba8uint": U8 x 4, false;
    Rgba8sint = "rgba8sint": I8 x 4, false;
    R16float = "r16float": F16 x 1, true;
    Rg16float = "rg16float": F16 x 2, true;
    Rgba16float = "rgba16float": F16 x 4, true;
    Rgba16uint = "rgba16uint": U16 x 4, false;
    Rgba16sint = "rgba16sint": I16 x 4, false;
    R32float = "r32float": F32 x 1, false;
    Rg32float = "rg32float": F32 x 2, false;
    Rgba32float = "rgba32float": F32 x 4, false;
    R32uint = "r32uint": U32 x 1, false;
    Rg32uint = "rg32uint": U32 x 2, false;
    Rgba32uint = "rgba32uint": U32 x 4, false;
    R32sint = "r32sint": I32 x 1, false;
    Rg32sint = "rg32sint": I32 x 2, false;
    Rgba32sint = "rgba32sint": I32 x 4, false;
}

impl TexelFormat {
    /// The format named `name` in WGSL.
    pub fn parse(name: &str) -> Option<TexelFormat> {
        TexelFormat::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Bytes per texel.
    pub fn texel_bytes(self) -> u32 {
        let (scalar, n) = self.channels();
        scalar.size() * n
    }

    /// What a sampled texture of this format reads as.
    pub fn sample_type(self) -> SampleType {
        match self.channels().0 {
            Scalar::U32 | Scalar::U16 | Scalar::U8 => SampleType::Uint,
            Scalar::I32 | Scalar::I16 | Scalar::I8 => SampleType::Sint,
            _ => SampleType::Float {
                filterable: self.is_filterable(),
            },
        }
    }

    /// Texels as a buffer: a runtime-sized array of tightly packed texels, one field per
    /// channel, so the harness fills, poisons and compares a texture like a buffer.
    pub fn texel_layout(self) -> BufferLayout {
        let (scalar, n) = self.channels();
        BufferLayout {
            header: Vec::new(),
            header_size: 0,
            array: Some(ArrayLayout {
                stride: self.texel_bytes(),
                fields: (0..n)
                    .map(|i| Field {
                        offset: i * scalar.size(),
                        scalar,
                    })
                    .collect(),
                count: None,
            }),
        }
    }
}

impl fmt::Display for TexelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A host-shareable scalar as it sits in a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    /// 32-bit float.
    F32,
    /// 16-bit float (needs `enable f16;`).
    F16,
    /// 32-bit unsigned integer (also `atomic<u32>`).
    U32,
    /// 32-bit signed integer (also `atomic<i32>`).
    I32,
    /// A texture channel: 8-bit unsigned normalized (0..=255 read as 0.0..=1.0).
    Unorm8,
    /// A texture channel: 8-bit signed normalized (-127..=127 read as -1.0..=1.0).
    Snorm8,
    /// A texture channel: 8-bit unsigned integer.
    U8,
    /// A texture channel: 8-bit signed integer.
    I8,
    /// A texture channel: 16-bit unsigned integer.
    U16,
    /// A texture channel: 16-bit signed integer.
    I16,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            Scalar::F16 | Scalar::U16 | Scalar::I16 => 2,
            Scalar::Unorm8 | Scalar::Snorm8 | Scalar::U8 | Scalar::I8 => 1,
            _ => 4,
        }
    }

    /// Whether values compare with a tolerance rather than exactly.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Scalar::F32 | Scalar::F16 | Scalar::Unorm8 | Scalar::Snorm8
        )
    }

    /// The step between two representable values of a normalized format: a difference of one
    /// step is a rounding difference, not a wrong value.
    pub fn quantum(self) -> Option<f64> {
        match self {
            Scalar::Unorm8 => Some(1.0 / 255.0),
            Scalar::Snorm8 => Some(1.0 / 127.0),
            _ => None,
        }
    }
}

/// One scalar inside a buffer layout, at a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Field {
    /// Byte offset from the start of the enclosing part (header or array element).
    pub offset: u32,
    /// The scalar stored there.
    pub scalar: Scalar,
}

/// The array part of a buffer: `array<T>` or `array<T, N>`, possibly after a struct header.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArrayLayout {
    /// Bytes from one element to the next.
    pub stride: u32,
    /// The scalars inside one element.
    pub fields: Vec<Field>,
    /// `Some(N)` for a fixed-size array, `None` for a runtime-sized one (its length comes from the spec).
    pub count: Option<u32>,
}

/// The memory layout of a buffer binding: a fixed header followed by an optional array.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BufferLayout {
    /// Scalars of the fixed part (a scalar, vector, matrix or the leading members of a struct).
    pub header: Vec<Field>,
    /// Bytes of the fixed part, up to where the array starts.
    pub header_size: u32,
    /// The array part, if any.
    pub array: Option<ArrayLayout>,
}

impl BufferLayout {
    /// Buffer size in bytes for `len` elements of a runtime-sized array (ignored for fixed layouts).
    pub fn byte_size(&self, len: u64) -> u64 {
        match &self.array {
            None => u64::from(self.header_size),
            Some(a) => {
                u64::from(self.header_size) + u64::from(a.stride) * a.count.map_or(len, u64::from)
            }
        }
    }

    /// Whether the buffer's length must come from the spec.
    pub fn is_runtime_sized(&self) -> bool {
        matches!(&self.array, Some(ArrayLayout { count: None, .. }))
    }

    /// How many scalars a buffer of `len` array elements holds (what [`Self::scalars`] yields).
    pub fn scalar_count(&self, len: u64) -> u64 {
        let array = self.array.as_ref().map_or(0, |a| {
            a.count.map_or(len, u64::from) * a.fields.len() as u64
        });
        self.header.len() as u64 + array
    }

    /// Every scalar of a buffer of `len` elements, as `(byte offset, scalar)`, in address order.
    pub fn scalars(&self, len: u64) -> impl Iterator<Item = (u64, Scalar)> + '_ {
        let header = self.header.iter().map(|f| (u64::from(f.offset), f.scalar));
        let array = self.array.iter().flat_map(move |a| {
            let n = a.count.map_or(len, u64::from);
            let base = u64::from(self.header_size);
            (0..n).flat_map(move |i| {
                a.fields.iter().map(move |f| {
                    (
                        base + i * u64::from(a.stride) + u64::from(f.offset),
                        f.scalar,
                    )
                })
            })
        });
        header.chain(array)
    }
}

/// One resource binding of the entry point.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BindingInterface {
    /// `@group(..)`.
    pub group: u32,
    /// `@binding(..)`.
    pub binding: u32,
    /// The WGSL variable name.
    pub name: String,
    /// Uniform, read-only storage or read-write storage.
    pub kind: BindingKind,
    /// The WGSL type as written by naga's type printer (for messages and the interface check).
    pub ty: String,
    /// Where each scalar lives.
    pub layout: BufferLayout,
}

/// One `override` declaration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverrideInterface {
    /// The name.
    pub name: String,
    /// `@id(..)`, if given.
    pub id: Option<u16>,
    /// `u32`, `i32`, `f32`, `f16` or `bool`.
    pub ty: String,
    /// The default value, if it is a literal or constant expression.
    pub default: Option<f64>,
    /// Whether the declaration has no initializer at all, so a pipeline needs a value for it
    /// (the spec gives candidates with `params(..)`).
    #[serde(default)]
    pub required: bool,
}

/// What a kernel looks like from the outside.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interface {
    /// The compute entry point.
    pub entry: String,
    /// The workgroup size with every override at its default; 0 in a dimension set by an
    /// override without a literal default (resolution fills in the baseline's value).
    pub workgroup_size: [u32; 3],
    /// For each dimension, the override that sets it, if one does.
    pub workgroup_size_overrides: [Option<String>; 3],
    /// Bindings used by the module, sorted by (group, binding).
    pub bindings: Vec<BindingInterface>,
    /// `override` declarations, in declaration order.
    pub overrides: Vec<OverrideInterface>,
    /// Bytes of `var<workgroup>` memory, when every array size is known without overrides.
    pub workgroup_storage_bytes: Option<u32>,
    /// `enable` extensions the module declares (e.g. `f16`, `subgroups`).
    pub enables: Vec<String>,
}

/// `var<uniform>`, `var<storage, read>`, `texture_2d`, `sampler`.
fn kind_text(kind: &BindingKind) -> String {
    match kind {
        BindingKind::Uniform | BindingKind::StorageRead | BindingKind::StorageReadWrite => {
            format!("var<{kind}>")
        }
        other => other.to_string(),
    }
}

impl Interface {
    /// The bind group a variant's workspace goes in ([`crate::program::Workspace`]): the one
    /// after the highest group these bindings use, so the app's groups stay as they are.
    pub fn workspace_group(&self) -> u32 {
        self.bindings.iter().map(|b| b.group + 1).max().unwrap_or(0)
    }

    /// The binding at `(group, binding)`.
    pub fn binding(&self, group: u32, binding: u32) -> Option<&BindingInterface> {
        self.bindings
            .iter()
            .find(|b| b.group == group && b.binding == binding)
    }

    /// Differences between this (baseline) interface and a variant's, as readable lines; empty when
    /// a variant can be bound with the baseline's bind groups.
    pub fn mismatches(&self, variant: &Interface) -> Vec<String> {
        self.mismatches_with(variant, &|_, w| {
            Err(format!(
                "a view of {w} elements at a time needs a length the spec guarantees to be a multiple of {w}"
            ))
        })
    }

    /// [`Interface::mismatches`], where a variant may declare a buffer as the baseline's array
    /// regrouped `w` elements at a time ([`crate::views::regrouping`]) when `view` accepts it for
    /// that binding (the spec's length must be a multiple of `w`; see [`crate::views`]); `view`'s
    /// error says why not. A finer view, the baseline's elements taken apart into the scalars
    /// they hold (`array<vec4<f32>>` read as `array<f32>`), is always the same buffer: every
    /// length is a whole number of the smaller elements.
    pub fn mismatches_with(
        &self,
        variant: &Interface,
        view: &dyn Fn(&BindingInterface, u32) -> Result<(), String>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if self.entry != variant.entry {
            out.push(format!(
                "entry point `{}` instead of `{}`",
                variant.entry, self.entry
            ));
        }
        for b in &self.bindings {
            match variant.binding(b.group, b.binding) {
                None => {}
                Some(v) if !b.kind.same_in_shader(&v.kind) => out.push(format!(
                    "@group({}) @binding({}) `{}` is {} instead of {}",
                    b.group,
                    b.binding,
                    v.name,
                    kind_text(&v.kind),
                    kind_text(&b.kind)
                )),
                Some(v)
                    if (v.ty != b.ty || v.layout != b.layout)
                        && crate::views::regrouping(&v.layout, &b.layout).is_none() =>
                {
                    let why = match crate::views::regrouping(&b.layout, &v.layout) {
                        Some(w) => match view(b, w) {
                            Ok(()) => continue,
                            Err(why) => format!(" ({why})"),
                        },
                        None => String::new(),
                    };
                    out.push(format!(
                        "@group({}) @binding({}) `{}` has type `{}` instead of `{}`{why}",
                        b.group, b.binding, v.name, v.ty, b.ty
                    ))
                }
                Some(_) => {}
            }
        }
        for v in &variant.bindings {
            if self.binding(v.group, v.binding).is_none() {
                out.push(format!(
                    "@group({}) @binding({}) `{}` is not a binding of the baseline",
                    v.group, v.binding, v.name
                ));
            }
        }
        out
    }
}
