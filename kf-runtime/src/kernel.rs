//! The embedded kernel (what `#[kernelfoundry]` expands to) and variant selection.
//!
//! Selection is a pure function of the embedded data and the adapter's identity, so it is cheap
//! (string comparisons, no parsing) and testable without a GPU. The fallback chain is:
//! a variant tuned on this exact adapter key → one tuned on the same vendor + device + backend with
//! another driver → the baseline. `KERNELFOUNDRY_VARIANT=baseline` forces the baseline;
//! `KERNELFOUNDRY_VARIANT=<variant-id>` forces one embedded variant.
//!
//! Invariant: selection never fails. Every problem (a skipped cache file, a forced id that does not
//! exist) becomes part of the [`Selection`]'s reason and the baseline is used.

use crate::adapter::{AdapterIdentity, AdapterKey};
use crate::cache::Outcome;
use crate::interface::BindingKind;
use crate::program::Program;
use std::fmt;

/// Environment variable that forces a choice: `baseline` or a variant id.
pub const VARIANT_ENV: &str = "KERNELFOUNDRY_VARIANT";

/// A binding of the baseline, enough to build its bind group layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// `@group(..)`.
    pub group: u32,
    /// `@binding(..)`.
    pub binding: u32,
    /// The WGSL variable name.
    pub name: &'static str,
    /// How it is accessed.
    pub kind: BindingKind,
}

/// A cache entry embedded at build time.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedVariant {
    /// Adapter key the entry was tuned on.
    pub adapter_key: &'static str,
    /// Adapter name (for logs).
    pub adapter_name: &'static str,
    /// Vendor id.
    pub vendor: u32,
    /// Device id.
    pub device: u32,
    /// Backend (`vulkan`, `metal`, ...).
    pub backend: &'static str,
    /// Driver name (for logs).
    pub driver: &'static str,
    /// Driver info (for logs).
    pub driver_info: &'static str,
    /// Tuned, or baseline is best.
    pub outcome: Outcome,
    /// Variant id (`baseline` when the baseline is best).
    pub id: &'static str,
    /// The variant's program, for `tuned`.
    pub program: Option<Program>,
    /// Measured speedup over the baseline on that adapter.
    pub speedup: f64,
    /// The cache file, relative to the crate root.
    pub file: &'static str,
}

/// A kernel marked with `#[kernelfoundry]`: the baseline plus the variants embedded from the cache.
///
/// Built by the macro; use [`Kernel::load`] (feature `wgpu`) to pick a variant and build its
/// pipeline, or [`Kernel::select`] to see what would be picked.
#[derive(Debug)]
pub struct Kernel {
    /// The static's name.
    pub name: &'static str,
    /// The content hash the embedded entries were matched on.
    pub content_hash: &'static str,
    /// The user's kernel.
    pub baseline: Program,
    /// The baseline's bindings; every variant is bound with these layouts.
    pub bindings: &'static [Binding],
    /// Cache entries for this content hash, any adapter.
    pub variants: &'static [EmbeddedVariant],
    /// Problems found at build time (skipped cache files), logged when the kernel loads.
    pub build_notes: &'static [&'static str],
    /// What selection by measurement needs to run the kernel on inputs of its own: a
    /// [`MeasurePlan`](crate::plan::MeasurePlan) as JSON, parsed only when measuring (empty
    /// for none).
    pub measure_plan: &'static str,
    /// The spec's constraints over sizes alone (`constraints(n % 4 == 0)`), as a JSON array of
    /// [`ParamExpr`](crate::params::ParamExpr) (empty for none): every dispatch is checked against
    /// them, since a variant may rely on them (see [`crate::views`]).
    pub size_constraints: &'static str,
}

/// How the chosen entry relates to the adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    /// Tuned on this adapter key.
    Exact,
    /// Tuned on the same vendor, device and backend with another driver.
    SameDevice,
    /// No entry applies (or one was rejected); the baseline runs.
    None,
    /// No entry applies; the variants tuned elsewhere were measured on this adapter and the
    /// fastest correct one (or the baseline) was chosen (`LoadMode::Measure`).
    Measured,
    /// No entry applies; an earlier measurement's choice was read back (`LoadMode::Measure`).
    Remembered,
}

impl fmt::Display for MatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchKind::Exact => "exact",
            MatchKind::SameDevice => "same-device",
            MatchKind::None => "none",
            MatchKind::Measured => "measured",
            MatchKind::Remembered => "remembered",
        })
    }
}

/// The outcome of selection.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The variant to run; `None` runs the baseline.
    pub variant: Option<&'static EmbeddedVariant>,
    /// How the entry that decided relates to the adapter.
    pub matched: MatchKind,
    /// Why, in one sentence, for the log.
    pub reason: String,
}

impl Selection {
    /// `baseline` or the variant id.
    pub fn label(&self) -> &'static str {
        self.variant.map_or("baseline", |v| v.id)
    }
}

impl Kernel {
    /// The spec's size constraints, parsed from [`Kernel::size_constraints`]. A text that does
    /// not parse (an expansion from another version of the macro) gives none and a warning.
    pub fn constraints(&self) -> Vec<crate::params::ParamExpr> {
        if self.size_constraints.is_empty() {
            return Vec::new();
        }
        serde_json::from_str(self.size_constraints).unwrap_or_else(|e| {
            #[cfg(feature = "wgpu")]
            log::warn!(
                "kernel {}: its size constraints do not parse ({e}); none are checked",
                self.name
            );
            #[cfg(not(feature = "wgpu"))]
            let _ = e;
            Vec::new()
        })
    }

    /// A kernel with no code, emitted next to a compile error so that uses of the static do not add
    /// unrelated errors. Never runs: the crate does not compile.
    #[doc(hidden)]
    pub const fn __placeholder(name: &'static str) -> Kernel {
        const ONE: &[crate::expr::Op] = &[crate::expr::Op::Lit(1)];
        Kernel {
            name,
            content_hash: "",
            baseline: Program {
                wgsl: std::borrow::Cow::Borrowed(""),
                entry: std::borrow::Cow::Borrowed("main"),
                constants: std::borrow::Cow::Borrowed(&[]),
                workgroup_size: [1, 1, 1],
                workgroup_storage_bytes: 0,
                dispatch: crate::program::Dispatch {
                    mode: crate::program::DispatchMode::Grid,
                    size: [
                        crate::expr::SizeExpr::from_static(ONE),
                        crate::expr::SizeExpr::from_static(ONE),
                        crate::expr::SizeExpr::from_static(ONE),
                    ],
                },
                workspace: std::borrow::Cow::Borrowed(&[]),
                then: std::borrow::Cow::Borrowed(&[]),
            },
            bindings: &[],
            variants: &[],
            build_notes: &[],
            measure_plan: "",
            size_constraints: "",
        }
    }

    /// Picks the entry for `adapter`, honouring [`VARIANT_ENV`].
    pub fn select(&'static self, adapter: &AdapterIdentity) -> Selection {
        let forced = std::env::var(VARIANT_ENV).ok();
        self.select_with(adapter, forced.as_deref())
    }

    /// Like [`Kernel::select`] with the forced choice passed in rather than read from the environment.
    pub fn select_with(
        &'static self,
        adapter: &AdapterIdentity,
        forced: Option<&str>,
    ) -> Selection {
        if let Some(forced) = forced.map(str::trim).filter(|f| !f.is_empty()) {
            if forced == "baseline" {
                return Selection {
                    variant: None,
                    matched: MatchKind::None,
                    reason: format!("{VARIANT_ENV}=baseline forces the baseline"),
                };
            }
            return match self
                .variants
                .iter()
                .find(|v| v.id == forced && v.program.is_some())
            {
                Some(v) => Selection {
                    variant: Some(v),
                    matched: match_kind(v, adapter, &adapter.key()),
                    reason: format!(
                        "{VARIANT_ENV}={forced} forces the variant tuned on {}",
                        v.adapter_name
                    ),
                },
                None => Selection {
                    variant: None,
                    matched: MatchKind::None,
                    reason: format!(
                        "{VARIANT_ENV}={forced} names no embedded variant; using the baseline"
                    ),
                },
            };
        }
        let key = adapter.key();
        if let Some(v) = self.variants.iter().find(|v| v.adapter_key == key.as_str()) {
            return match v.outcome {
                Outcome::Tuned => Selection {
                    variant: Some(v),
                    matched: MatchKind::Exact,
                    reason: format!(
                        "tuned on this adapter ({}), {:.2}x over the baseline",
                        key, v.speedup
                    ),
                },
                Outcome::BaselineBest => Selection {
                    variant: None,
                    matched: MatchKind::Exact,
                    reason: format!("tuned on this adapter ({key}): the baseline is fastest"),
                },
            };
        }
        // Same device on another driver: prefer the entry with the largest measured speedup.
        let same_device = self
            .variants
            .iter()
            .filter(|v| match_kind(v, adapter, &key) == MatchKind::SameDevice)
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup));
        if let Some(v) = same_device {
            return Selection {
                variant: v.program.is_some().then_some(v),
                matched: MatchKind::SameDevice,
                reason: format!(
                    "no entry for this driver ({} {}); using the one tuned with driver {} {}",
                    adapter.driver, adapter.driver_info, v.driver, v.driver_info
                ),
            };
        }
        Selection {
            variant: None,
            matched: MatchKind::None,
            reason: if self.variants.is_empty() {
                format!(
                    "no tuned variants embedded for content hash {}",
                    self.content_hash
                )
            } else {
                format!(
                    "none of the {} embedded entries was tuned on {} (key {key})",
                    self.variants.len(),
                    adapter.describe()
                )
            },
        }
    }
}

/// Whether [`VARIANT_ENV`] forces a choice.
#[cfg(feature = "measure")]
pub(crate) fn forced() -> bool {
    std::env::var(VARIANT_ENV).is_ok_and(|v| !v.trim().is_empty())
}

fn match_kind(v: &EmbeddedVariant, adapter: &AdapterIdentity, key: &AdapterKey) -> MatchKind {
    if v.adapter_key == key.as_str() {
        MatchKind::Exact
    } else if v.vendor == adapter.vendor
        && v.device == adapter.device
        && v.backend == adapter.backend
    {
        MatchKind::SameDevice
    } else {
        MatchKind::None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::expr::SizeExpr;
    use crate::program::{Dispatch, DispatchMode};
    use std::borrow::Cow;

    /// A program of `wgsl` launched over `n` invocations of 64-wide workgroups (unit tests).
    pub(crate) const fn program(wgsl: &'static str) -> Program {
        Program {
            wgsl: Cow::Borrowed(wgsl),
            entry: Cow::Borrowed("main"),
            constants: Cow::Borrowed(&[]),
            workgroup_size: [64, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: Dispatch {
                mode: DispatchMode::Grid,
                size: [
                    SizeExpr::from_static(&[crate::expr::Op::Size(Cow::Borrowed("n"))]),
                    SizeExpr::from_static(&[crate::expr::Op::Lit(1)]),
                    SizeExpr::from_static(&[crate::expr::Op::Lit(1)]),
                ],
            },
            workspace: Cow::Borrowed(&[]),
            then: Cow::Borrowed(&[]),
        }
    }

    fn adapter(driver_info: &str) -> AdapterIdentity {
        AdapterIdentity {
            name: "GPU".into(),
            vendor: 0x10de,
            device: 0x2335,
            backend: "vulkan".into(),
            device_type: "DiscreteGpu".into(),
            driver: "NVIDIA".into(),
            driver_info: driver_info.into(),
        }
    }

    fn leak_variant(
        a: &AdapterIdentity,
        id: &'static str,
        outcome: Outcome,
        speedup: f64,
    ) -> EmbeddedVariant {
        EmbeddedVariant {
            adapter_key: Box::leak(a.key().to_string().into_boxed_str()),
            adapter_name: "GPU",
            vendor: a.vendor,
            device: a.device,
            backend: "vulkan",
            driver: "NVIDIA",
            driver_info: Box::leak(a.driver_info.clone().into_boxed_str()),
            outcome,
            id,
            program: (outcome == Outcome::Tuned).then(|| program("variant")),
            speedup,
            file: "kernelfoundry/K/h/x.json",
        }
    }

    fn kernel(variants: Vec<EmbeddedVariant>) -> &'static Kernel {
        Box::leak(Box::new(Kernel {
            name: "K",
            content_hash: "0123456789abcdef",
            baseline: program("baseline"),
            bindings: &[],
            variants: Box::leak(variants.into_boxed_slice()),
            build_notes: &[],
            measure_plan: "",
            size_constraints: "",
        }))
    }

    #[test]
    fn exact_then_same_device_then_baseline() {
        let here = adapter("580.1");
        let k = kernel(vec![
            leak_variant(&adapter("570.0"), "vold", Outcome::Tuned, 1.5),
            leak_variant(&here, "vnew", Outcome::Tuned, 1.2),
        ]);
        let s = k.select_with(&here, None);
        assert_eq!((s.label(), s.matched), ("vnew", MatchKind::Exact));

        let other_driver = adapter("590.9");
        let s = k.select_with(&other_driver, None);
        assert_eq!(
            (s.label(), s.matched),
            ("vold", MatchKind::SameDevice),
            "{}",
            s.reason
        );

        let mut other_gpu = adapter("580.1");
        other_gpu.device = 1;
        let s = k.select_with(&other_gpu, None);
        assert_eq!((s.label(), s.matched), ("baseline", MatchKind::None));
        assert!(
            s.reason.contains("none of the 2 embedded entries"),
            "{}",
            s.reason
        );
    }

    #[test]
    fn baseline_best_is_an_exact_match_running_the_baseline() {
        let here = adapter("580.1");
        let k = kernel(vec![leak_variant(
            &here,
            "baseline",
            Outcome::BaselineBest,
            1.0,
        )]);
        let s = k.select_with(&here, None);
        assert_eq!((s.label(), s.matched), ("baseline", MatchKind::Exact));
        assert!(s.reason.contains("baseline is fastest"));
    }

    #[test]
    fn forcing() {
        let here = adapter("580.1");
        let k = kernel(vec![leak_variant(&here, "vnew", Outcome::Tuned, 1.2)]);
        let s = k.select_with(&here, Some("baseline"));
        assert_eq!((s.label(), s.matched), ("baseline", MatchKind::None));
        let s = k.select_with(&adapter("1"), Some("vnew"));
        assert_eq!(s.label(), "vnew");
        let s = k.select_with(&here, Some("vmissing"));
        assert_eq!(s.label(), "baseline");
        assert!(s.reason.contains("names no embedded variant"));
    }

    #[test]
    fn selection_is_fast() {
        let here = adapter("580.1");
        let variants = (0..32)
            .map(|i| leak_variant(&adapter(&format!("{i}")), "v", Outcome::Tuned, 1.0))
            .collect();
        let k = kernel(variants);
        let start = std::time::Instant::now();
        for _ in 0..100 {
            std::hint::black_box(k.select_with(&here, None));
        }
        // 100 selections over 32 entries: far below a millisecond each even in a debug build.
        assert!(start.elapsed().as_millis() < 100, "{:?}", start.elapsed());
    }
}
