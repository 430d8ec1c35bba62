//! A kernel's interface as reflected from its WGSL: entry point, workgroup size, bindings with their
//! memory layout, and `override` constants.
//!
//! The interface is the contract every variant must keep — the user's bind groups are built once
//! for the baseline and must work with whatever variant the runtime picks — and it is what the
//! harness needs to create, fill, poison and compare buffers without knowing the kernel.
//!
//! Invariant: these are plain data (serializable, no naga types), so they can cross the worker
//! protocol and be compared between baseline and variant with `==`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a binding is accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindingKind {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
}

impl fmt::Display for BindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BindingKind::Uniform => "uniform",
            BindingKind::StorageRead => "storage, read",
            BindingKind::StorageReadWrite => "storage, read_write",
        })
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
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            Scalar::F16 => 2,
            _ => 4,
        }
    }

    /// Whether values compare with a tolerance rather than exactly.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F16)
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

impl Interface {
    /// The binding at `(group, binding)`.
    pub fn binding(&self, group: u32, binding: u32) -> Option<&BindingInterface> {
        self.bindings
            .iter()
            .find(|b| b.group == group && b.binding == binding)
    }

    /// Differences between this (baseline) interface and a variant's, as readable lines; empty when
    /// a variant can be bound with the baseline's bind groups.
    pub fn mismatches(&self, variant: &Interface) -> Vec<String> {
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
                Some(v) if v.kind != b.kind => out.push(format!(
                    "@group({}) @binding({}) `{}` is var<{}> instead of var<{}>",
                    b.group, b.binding, v.name, v.kind, b.kind
                )),
                Some(v) if v.ty != b.ty || v.layout != b.layout => out.push(format!(
                    "@group({}) @binding({}) `{}` has type `{}` instead of `{}`",
                    b.group, b.binding, v.name, v.ty, b.ty
                )),
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
