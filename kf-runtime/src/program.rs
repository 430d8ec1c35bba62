//! A runnable kernel program (WGSL + entry point + override constants + launch rule) and the
//! dispatch rule that turns named sizes into workgroup counts.
//!
//! A launch rule may name the program's own parameters besides the sizes
//! (`workgroups = (cdiv(m, OUTPUTS_PER_WG))`): a GEMV that computes several outputs per workgroup
//! needs as many workgroups as its tuned value says. [`Program::workgroups`] is the one place
//! that looks names up (the caller's sizes first, then the program's constants), so every
//! variant is launched with its own values.
//!
//! The same types are embedded in a user's binary (borrowed `'static` data built by the macro) and
//! stored in cache files (owned data read by serde), so everything is `Cow<'static, _>`.
//!
//! A program may be a *launch sequence*: several entry points of one module launched in order
//! over the same bindings (a two-pass reduction, a scan and its carry stage). The program's own
//! entry point and launch rule are the first launch; [`Program::then`] lists the later ones,
//! each with its own entry point, workgroup size and launch rule, and the override constants are
//! the module's, shared by every launch. A program of one launch has an empty `then`, which is
//! left out of its JSON, so cache entries written before sequences existed read the same.
//!
//! Invariant: a variant's dispatch rule is evaluated with the variant's workgroup size and
//! constants, never the baseline's; that is what lets a variant change its workgroup size or a
//! parameter of its launch rule safely.

use crate::expr::{ExprError, SizeExpr};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// How the three dispatch expressions are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DispatchMode {
    /// The expressions count logical invocations; workgroups = ceil(invocations / workgroup size).
    Grid,
    /// The expressions count workgroups directly (e.g. one workgroup per row), whatever their size.
    Workgroups,
}

/// The launch rule of a program: a mode and one size expression per dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dispatch {
    /// How `size` is read.
    pub mode: DispatchMode,
    /// Invocations or workgroups in x, y, z.
    pub size: [SizeExpr; 3],
}

/// Why workgroup counts could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// A dispatch expression could not be evaluated.
    #[error(transparent)]
    Expr(#[from] ExprError),
    /// The sizes break one of the kernel's size constraints (`constraints(n % 4 == 0)`), which
    /// its variants may rely on.
    #[error("{0}")]
    Constraint(String),
    /// The count does not fit the dispatch call.
    #[error("dispatch needs {count} workgroups in dimension {dim}, more than {max}")]
    TooManyWorkgroups {
        /// 0 for x, 1 for y, 2 for z.
        dim: usize,
        /// The count needed.
        count: u64,
        /// The largest count allowed.
        max: u64,
    },
}

impl Dispatch {
    /// Workgroup counts for `workgroup_size`, with sizes looked up by `lookup`.
    pub fn workgroups(
        &self,
        workgroup_size: [u32; 3],
        lookup: impl Fn(&str) -> Option<u64>,
        max_per_dimension: u32,
    ) -> Result<[u32; 3], DispatchError> {
        let mut counts = [0u32; 3];
        for dim in 0..3 {
            let value = self.size[dim].eval(&lookup)?;
            let count = match self.mode {
                DispatchMode::Grid => value.div_ceil(u64::from(workgroup_size[dim].max(1))),
                DispatchMode::Workgroups => value,
            };
            if count > u64::from(max_per_dimension) {
                return Err(DispatchError::TooManyWorkgroups {
                    dim,
                    count,
                    max: u64::from(max_per_dimension),
                });
            }
            counts[dim] = count as u32;
        }
        Ok(counts)
    }

    /// Total logical invocations this rule launches with `workgroup_size` (for reports).
    pub fn invocations(
        &self,
        workgroup_size: [u32; 3],
        lookup: impl Fn(&str) -> Option<u64>,
    ) -> Result<u64, DispatchError> {
        let counts = self.workgroups(workgroup_size, lookup, u32::MAX)?;
        Ok((0..3)
            .map(|d| u64::from(counts[d]) * u64::from(workgroup_size[d]))
            .product())
    }
}

impl fmt::Display for Dispatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            DispatchMode::Grid => "grid",
            DispatchMode::Workgroups => "workgroups",
        };
        write!(
            f,
            "{mode}({}, {}, {})",
            self.size[0], self.size[1], self.size[2]
        )
    }
}

/// A launch after the first one of a sequence: an entry point of the program's module and its
/// launch rule, run after the launches before it, over the same bindings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Entry point name.
    pub entry: Cow<'static, str>,
    /// The entry point's workgroup size after the program's constants are applied.
    pub workgroup_size: [u32; 3],
    /// Bytes of `var<workgroup>` memory this entry point uses after the constants are applied.
    #[serde(default)]
    pub workgroup_storage_bytes: u32,
    /// The launch rule.
    pub dispatch: Dispatch,
}

/// A buffer a program needs for itself, which the runtime allocates and binds in a bind group of
/// its own after the app's groups: what a split-K GEMM's partial launch leaves for its combine
/// launch. The app's bind group layouts stay as the kernel declares them; only a variant that is
/// a launch sequence where the kernel is one launch needs one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workspace {
    /// The bind group (one past the kernel's highest).
    pub group: u32,
    /// The binding within that group.
    pub binding: u32,
    /// Length in 4-byte words, over the launch rule's names (sizes, then the program's constants).
    pub words: SizeExpr,
}

/// A pipeline-overridable constant's value, by name.
pub type Constant = (Cow<'static, str>, f64);

/// Everything needed to build a compute pipeline and launch it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// WGSL source.
    pub wgsl: Cow<'static, str>,
    /// Entry point name.
    pub entry: Cow<'static, str>,
    /// Values for `override` declarations, passed as pipeline constants.
    #[serde(with = "constants_map", default)]
    pub constants: Cow<'static, [Constant]>,
    /// The workgroup size after the constants are applied.
    pub workgroup_size: [u32; 3],
    /// Bytes of `var<workgroup>` memory after the constants are applied (0 when unknown).
    #[serde(default)]
    pub workgroup_storage_bytes: u32,
    /// The launch rule.
    pub dispatch: Dispatch,
    /// The launches after the first, in order (empty for a program of one launch).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub then: Cow<'static, [Stage]>,
    /// Buffers the program binds for itself (empty for most programs; left out of the JSON
    /// then). Its WGSL declares each as `var<storage, read_write> _: array<f32>` (or `u32`).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub workspace: Cow<'static, [Workspace]>,
}

impl Program {
    /// Whether this program is a sequence of several launches.
    pub fn is_sequence(&self) -> bool {
        !self.then.is_empty()
    }

    /// Every launch as a program of one launch, in order: the first is this program without
    /// `then`, each later one the same module and constants with the stage's entry point,
    /// workgroup size and launch rule. Pipelines are built, limits checked and workgroups counted
    /// per launch on these.
    pub fn launches(&self) -> Vec<Program> {
        let first = Program {
            then: Cow::Borrowed(&[]),
            ..self.clone()
        };
        let mut out = Vec::with_capacity(1 + self.then.len());
        for stage in self.then.iter() {
            out.push(Program {
                entry: stage.entry.clone(),
                workgroup_size: stage.workgroup_size,
                workgroup_storage_bytes: stage.workgroup_storage_bytes,
                dispatch: stage.dispatch.clone(),
                ..first.clone()
            });
        }
        out.insert(0, first);
        out
    }

    /// The launch rule as text: the dispatch rule for a program of one launch (what hashes and
    /// variant ids have always covered), each launch's entry point and rule for a sequence.
    pub fn launch_rule(&self) -> String {
        if self.then.is_empty() {
            return self.dispatch.to_string();
        }
        let mut out = format!("{}: {}", self.entry, self.dispatch);
        for stage in self.then.iter() {
            out.push_str(&format!("; {}: {}", stage.entry, stage.dispatch));
        }
        out
    }

    /// Workgroup counts of every launch, in order (see [`Program::workgroups`]).
    pub fn launch_workgroups(
        &self,
        sizes: impl Fn(&str) -> Option<u64>,
        max_per_dimension: u32,
    ) -> Result<Vec<[u32; 3]>, DispatchError> {
        let mut out = vec![self.workgroups(&sizes, max_per_dimension)?];
        for stage in self.then.iter() {
            out.push(stage.dispatch.workgroups(
                stage.workgroup_size,
                |n| self.launch_value(n, &sizes),
                max_per_dimension,
            )?);
        }
        Ok(out)
    }

    /// Invocations per workgroup.
    pub fn invocations_per_workgroup(&self) -> u64 {
        self.workgroup_size.iter().map(|&d| u64::from(d)).product()
    }

    /// The value of the constant `name` as a launch rule reads it: a non-negative integer, else
    /// `None` (also when the program does not set `name`).
    pub fn constant(&self, name: &str) -> Option<u64> {
        self.constants
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
            .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v < 9.0e15)
            .map(|v| v as u64)
    }

    /// The value of a name of the launch rule: the size from `sizes`, else this program's own
    /// constant ([`Program::constant`]).
    pub fn launch_value(&self, name: &str, sizes: impl Fn(&str) -> Option<u64>) -> Option<u64> {
        sizes(name).or_else(|| self.constant(name))
    }

    /// Workgroup counts of this program's launch rule, with its own workgroup size and its names
    /// looked up by [`Program::launch_value`].
    pub fn workgroups(
        &self,
        sizes: impl Fn(&str) -> Option<u64>,
        max_per_dimension: u32,
    ) -> Result<[u32; 3], DispatchError> {
        self.dispatch.workgroups(
            self.workgroup_size,
            |n| self.launch_value(n, &sizes),
            max_per_dimension,
        )
    }

    /// Total logical invocations this program launches on `sizes` (for reports).
    pub fn invocations(&self, sizes: impl Fn(&str) -> Option<u64>) -> Result<u64, DispatchError> {
        self.dispatch
            .invocations(self.workgroup_size, |n| self.launch_value(n, &sizes))
    }

    /// The length in bytes of each [`Workspace`] buffer on `sizes` (at least 4), in order.
    pub fn workspace_bytes(
        &self,
        sizes: impl Fn(&str) -> Option<u64>,
    ) -> Result<Vec<u64>, DispatchError> {
        self.workspace
            .iter()
            .map(|w| {
                let words = w.words.eval(|n| self.launch_value(n, &sizes))?;
                Ok(words.max(1).saturating_mul(4))
            })
            .collect()
    }

    /// Constants as `(&str, f64)` pairs, in declaration order.
    pub fn constants_pairs(&self) -> Vec<(&str, f64)> {
        self.constants
            .iter()
            .map(|(k, v)| (k.as_ref(), *v))
            .collect()
    }
}

mod constants_map {
    //! Constants serialize as a JSON object (`{"WG": 256}`) so committed cache files read well.
    use super::Constant;
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::borrow::Cow;

    #[allow(clippy::ptr_arg)] // serde's `with` passes the field type itself
    pub fn serialize<S: Serializer>(
        value: &Cow<'static, [Constant]>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(value.len()))?;
        for (k, v) in value.iter() {
            map.serialize_entry(k.as_ref(), v)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Cow<'static, [Constant]>, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Vec<Constant>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map from override name to number")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, f64>()? {
                    out.push((Cow::Owned(k), v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visitor).map(Cow::Owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(x: &str) -> Dispatch {
        Dispatch {
            mode: DispatchMode::Grid,
            size: [
                SizeExpr::parse(x).unwrap(),
                SizeExpr::lit(1),
                SizeExpr::lit(1),
            ],
        }
    }

    #[test]
    fn grid_rounds_up_per_workgroup_size() {
        let d = grid("n");
        let lookup = |n: &str| (n == "n").then_some(1000);
        assert_eq!(d.workgroups([64, 1, 1], lookup, 65535), Ok([16, 1, 1]));
        assert_eq!(d.workgroups([256, 1, 1], lookup, 65535), Ok([4, 1, 1]));
        assert_eq!(d.invocations([256, 1, 1], lookup), Ok(1024));
        assert!(matches!(
            d.workgroups([1, 1, 1], lookup, 999),
            Err(DispatchError::TooManyWorkgroups {
                dim: 0,
                count: 1000,
                ..
            })
        ));
    }

    #[test]
    fn workgroups_mode_ignores_workgroup_size() {
        let d = Dispatch {
            mode: DispatchMode::Workgroups,
            size: [SizeExpr::size("rows"), SizeExpr::lit(1), SizeExpr::lit(1)],
        };
        assert_eq!(
            d.workgroups([256, 1, 1], |n| (n == "rows").then_some(7), 65535),
            Ok([7, 1, 1])
        );
        assert_eq!(d.to_string(), "workgroups(rows, 1, 1)");
    }

    #[test]
    fn a_launch_rule_reads_sizes_first_then_the_programs_own_constants() {
        let mut p = Program {
            wgsl: "x".into(),
            entry: "main".into(),
            constants: vec![(Cow::Borrowed("OUTPUTS_PER_WG"), 4.0)].into(),
            workgroup_size: [64, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: Dispatch {
                mode: DispatchMode::Workgroups,
                size: [
                    SizeExpr::parse("cdiv(m, OUTPUTS_PER_WG)").unwrap(),
                    SizeExpr::lit(1),
                    SizeExpr::lit(1),
                ],
            },
            workspace: Cow::Borrowed(&[]),
            then: Cow::Borrowed(&[]),
        };
        let sizes = |n: &str| (n == "m").then_some(1001);
        assert_eq!(p.workgroups(sizes, 65535), Ok([251, 1, 1]));
        assert_eq!(p.invocations(sizes), Ok(251 * 64));
        // Each variant launches with its own value.
        p.constants = vec![(Cow::Borrowed("OUTPUTS_PER_WG"), 16.0)].into();
        assert_eq!(p.workgroups(sizes, 65535), Ok([63, 1, 1]));
        // A size of the same name wins over the constant.
        let shadowing = |n: &str| match n {
            "m" => Some(1001),
            "OUTPUTS_PER_WG" => Some(1),
            _ => None,
        };
        assert_eq!(p.workgroups(shadowing, 65535), Ok([1001, 1, 1]));
        // A constant a launch rule cannot count with is no value.
        for bad in [-1.0, 2.5] {
            p.constants = vec![(Cow::Borrowed("OUTPUTS_PER_WG"), bad)].into();
            assert!(matches!(
                p.workgroups(sizes, 65535),
                Err(DispatchError::Expr(ExprError::UnknownSize { .. }))
            ));
        }
        p.constants = Cow::Borrowed(&[]);
        assert!(matches!(
            p.workgroups(sizes, 65535),
            Err(DispatchError::Expr(ExprError::UnknownSize { .. }))
        ));
    }

    #[test]
    fn program_serializes_constants_as_a_map() {
        let p = Program {
            wgsl: "x".into(),
            entry: "main".into(),
            constants: vec![(Cow::Borrowed("WG"), 256.0)].into(),
            workgroup_size: [256, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: grid("n"),
            workspace: Cow::Borrowed(&[]),
            then: Cow::Borrowed(&[]),
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["constants"], serde_json::json!({"WG": 256.0}));
        assert_eq!(
            json["dispatch"],
            serde_json::json!({"mode": "grid", "size": ["n", "1", "1"]})
        );
        // A program of one launch writes no `then`: entries read the same as before sequences.
        assert!(json.get("then").is_none(), "{json}");
        let back: Program = serde_json::from_value(json).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn a_sequence_launches_each_stage_with_its_own_size_and_rule() {
        let p = Program {
            wgsl: "x".into(),
            entry: "partial".into(),
            constants: vec![(Cow::Borrowed("WG"), 64.0)].into(),
            workgroup_size: [64, 1, 1],
            workgroup_storage_bytes: 256,
            dispatch: grid("n"),
            workspace: Cow::Borrowed(&[]),
            then: vec![Stage {
                entry: "combine".into(),
                workgroup_size: [1, 1, 1],
                workgroup_storage_bytes: 0,
                dispatch: Dispatch {
                    mode: DispatchMode::Workgroups,
                    size: [
                        SizeExpr::parse("cdiv(n, WG * 1000)").unwrap(),
                        SizeExpr::lit(1),
                        SizeExpr::lit(1),
                    ],
                },
            }]
            .into(),
        };
        assert!(p.is_sequence());
        let launches = p.launches();
        assert_eq!(launches.len(), 2);
        assert!(
            launches
                .iter()
                .all(|l| !l.is_sequence() && l.constants == p.constants)
        );
        assert_eq!(launches[1].entry, "combine");
        assert_eq!(launches[1].workgroup_size, [1, 1, 1]);
        let sizes = |n: &str| (n == "n").then_some(100_000);
        assert_eq!(
            p.launch_workgroups(sizes, 65535),
            Ok(vec![[1563, 1, 1], [2, 1, 1]])
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["then"][0]["entry"], "combine");
        assert_eq!(serde_json::from_value::<Program>(json).unwrap(), p);
    }

    /// A workspace is kept through JSON, sized over the launch rule's names and the program's
    /// constants, and left out of the JSON of a program without one.
    #[test]
    fn a_workspace_round_trips_and_is_sized_from_sizes_and_constants() {
        let mut p = Program {
            wgsl: "".into(),
            entry: "main".into(),
            constants: vec![(Cow::Borrowed("SPLIT"), 8.0)].into(),
            workgroup_size: [64, 1, 1],
            workgroup_storage_bytes: 0,
            dispatch: grid("n"),
            then: Cow::Borrowed(&[]),
            workspace: Cow::Borrowed(&[]),
        };
        assert!(!serde_json::to_string(&p).unwrap().contains("workspace"));
        p.workspace = vec![Workspace {
            group: 1,
            binding: 0,
            words: SizeExpr::parse("SPLIT * n").unwrap(),
        }]
        .into();
        let json = serde_json::to_string(&p).unwrap();
        let back: Program = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        let sizes = |n: &str| (n == "n").then_some(1000);
        assert_eq!(p.workspace_bytes(sizes).unwrap(), vec![32_000]);
        assert!(p.workspace_bytes(|_| None).is_err());
        // Every launch of a sequence binds it.
        assert!(p.launches().iter().all(|l| l.workspace.len() == 1));
    }
}
