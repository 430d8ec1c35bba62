//! Behaviour descriptors: where a kernel sits in the archive, computed from naga's IR.
//!
//! The paper classifies kernels with regexes over source text; here every level comes from the IR
//! (uses of `var<workgroup>`, barriers, subgroup builtins, vector loads, loop structure), so
//! comments, names and formatting cannot move a kernel between cells. Override constants are
//! applied first (`process_overrides`), so a tile size or coarsening factor that lives in an
//! `override` counts with the value the variant runs with.
//!
//! The levels, tested from the top down (the first that holds wins):
//!
//! | dim | 3 | 2 | 1 | 0 |
//! |---|---|---|---|---|
//! | memory | register blocking, or double-buffered workgroup tiles | `var<workgroup>` array written and read with a workgroup barrier | vector loads/stores from storage, or provably coalesced multi-element access | plain global access |
//! | compute | a loop over tiles staged in workgroup memory feeding an accumulator | a loop carrying coupled accumulators (online softmax, Welford) | otherwise (one pass, fused, elementwise) | two loops, neither inside the other, re-reading the same storage buffer |
//! | parallelism | subgroup operations and workgroup cooperation | subgroup operations | workgroup barriers or workgroup memory | per invocation |
//! | work | more than 16 storage writes per invocation, or a loop over outputs of unknown length | 5–16 | 2–4 | one (or none) |
//!
//! The precise definitions are in `facts.rs`. Limits: the analysis proves patterns in one
//! direction only (what it reports holds; a pattern written in a form it does not follow, e.g.
//! an index computed through a private array, reads as absent), and storage writes are counted
//! as statements (a `vec4` store is one write).

use crate::analysis::facts::{self, Count, Facts};
use kf_runtime::resolve::{ReflectError, reflect};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One behaviour dimension, each with four levels (0–3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dim {
    /// 0 plain global access, 1 vectorized or coalesced, 2 workgroup-memory tiling with barriers,
    /// 3 register blocking / double buffering.
    Memory,
    /// 0 multi-pass, 1 fused, 2 single-pass streaming (online softmax, Welford), 3 tiled/blocked.
    Compute,
    /// 0 per-invocation, 1 workgroup barriers, 2 subgroup operations, 3 both hierarchically.
    Parallelism,
    /// Work per invocation: 0 one output, 1 a few (2–4), 2 many (5–16), 3 more (or a grid-stride loop).
    Work,
}

impl Dim {
    /// All dimensions, in descriptor order.
    pub const ALL: [Dim; 4] = [Dim::Memory, Dim::Compute, Dim::Parallelism, Dim::Work];

    /// The position of this dimension in [`Dim::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    fn letter(self) -> char {
        match self {
            Dim::Memory => 'm',
            Dim::Compute => 'c',
            Dim::Parallelism => 'p',
            Dim::Work => 'w',
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dim::Memory => "memory",
            Dim::Compute => "compute",
            Dim::Parallelism => "parallelism",
            Dim::Work => "work",
        })
    }
}

/// The highest level of a dimension.
pub const MAX_LEVEL: u8 = 3;

/// A cell of the archive: a level 0–3 per [`Dim`].
///
/// Serialized as a short string (`"m2c3p1w0"`) so it can key JSON maps in checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Descriptor {
    levels: [u8; 4],
}

impl Descriptor {
    /// A descriptor from levels in [`Dim::ALL`] order; levels above 3 are clamped to 3.
    pub fn new(memory: u8, compute: u8, parallelism: u8, work: u8) -> Self {
        Descriptor {
            levels: [memory, compute, parallelism, work].map(|l| l.min(MAX_LEVEL)),
        }
    }

    /// The level of one dimension.
    pub fn level(&self, dim: Dim) -> u8 {
        self.levels[dim.index()]
    }

    /// Levels in [`Dim::ALL`] order.
    pub fn levels(&self) -> [u8; 4] {
        self.levels
    }

    /// This descriptor with one dimension set (clamped to 0–3).
    pub fn with(&self, dim: Dim, level: u8) -> Self {
        let mut d = *self;
        d.levels[dim.index()] = level.min(MAX_LEVEL);
        d
    }

    /// This descriptor moved by `delta` levels on `dim`, or `None` if that leaves 0–3.
    pub fn moved(&self, dim: Dim, delta: i8) -> Option<Self> {
        let level = i16::from(self.level(dim)) + i16::from(delta);
        (0..=i16::from(MAX_LEVEL))
            .contains(&level)
            .then(|| self.with(dim, level as u8))
    }

    /// The sum of the levels: how much optimization the cell stands for.
    pub fn level_sum(&self) -> u32 {
        self.levels.iter().map(|&l| u32::from(l)).sum()
    }

    /// Manhattan distance between two cells.
    pub fn distance(&self, other: &Descriptor) -> u32 {
        self.levels
            .iter()
            .zip(other.levels)
            .map(|(&a, b)| u32::from(a.abs_diff(b)))
            .sum()
    }

    /// All 256 cells, in order.
    pub fn all() -> impl Iterator<Item = Descriptor> {
        (0..256u32).map(|i| {
            let l = |shift: u32| ((i >> shift) & 3) as u8;
            Descriptor::new(l(6), l(4), l(2), l(0))
        })
    }
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in Dim::ALL {
            write!(f, "{}{}", d.letter(), self.level(d))?;
        }
        Ok(())
    }
}

/// A string that is not a descriptor (`m0c1p0w3` is one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a descriptor (expected e.g. `m2c3p1w0`)")]
pub struct ParseDescriptorError(String);

impl FromStr for Descriptor {
    type Err = ParseDescriptorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseDescriptorError(s.to_owned());
        let b = s.as_bytes();
        if b.len() != 8 {
            return Err(bad());
        }
        let mut levels = [0u8; 4];
        for (i, d) in Dim::ALL.iter().enumerate() {
            let (letter, digit) = (b[2 * i] as char, b[2 * i + 1]);
            if letter != d.letter() || !(b'0'..=b'3').contains(&digit) {
                return Err(bad());
            }
            levels[i] = digit - b'0';
        }
        Ok(Descriptor { levels })
    }
}

impl Serialize for Descriptor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Descriptor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Why a program could not be described.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DescribeError {
    /// The WGSL does not parse, validate or reflect.
    #[error(transparent)]
    Reflect(#[from] ReflectError),
    /// The override constants could not be applied.
    #[error("applying the override constants failed: {0}")]
    Overrides(String),
}

/// Describes entry point `entry` of `wgsl`, with `constants` applied to its `override`s.
pub fn describe(
    wgsl: &str,
    entry: &str,
    constants: &[(&str, f64)],
) -> Result<Descriptor, DescribeError> {
    let reflected = reflect(wgsl, Some(entry), "kernel.wgsl")?;
    let values: naga::back::PipelineConstants = constants
        .iter()
        .map(|(name, v)| ((*name).to_owned(), *v))
        .collect();
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &reflected.module,
        &reflected.info,
        Some((naga::ShaderStage::Compute, entry)),
        &values,
    )
    .map_err(|e| DescribeError::Overrides(e.to_string()))?;
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry)
        .ok_or_else(|| {
            DescribeError::Overrides(format!("entry point `{entry}` is gone after applying them"))
        })?;
    Ok(levels(&facts::analyze(&module, &info, index)))
}

/// Describes a program (its WGSL, entry point and constants).
pub fn describe_program(program: &kf_runtime::Program) -> Result<Descriptor, DescribeError> {
    describe(&program.wgsl, &program.entry, &program.constants_pairs())
}

/// The level rules of the table in the module docs.
fn levels(f: &Facts) -> Descriptor {
    let memory = if f.register_blocking || f.double_buffered {
        3
    } else if f.workgroup_tiling {
        2
    } else if f.vector_access || f.coalesced_multi {
        1
    } else {
        0
    };
    let compute = if f.tiled_loop {
        3
    } else if f.streaming_loop {
        2
    } else if f.multi_pass {
        0
    } else {
        1
    };
    let parallelism = match (f.workgroup_cooperation, f.subgroup_ops) {
        (true, true) => 3,
        (false, true) => 2,
        (true, false) => 1,
        (false, false) => 0,
    };
    let work = match f.outputs {
        Count::N(0..=1) => 0,
        Count::N(2..=4) => 1,
        Count::N(5..=16) => 2,
        _ => 3,
    };
    Descriptor::new(memory, compute, parallelism, work)
}

#[cfg(test)]
mod tests;
