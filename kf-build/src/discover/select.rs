//! Which of the found kernels a verb works on: `--kernel` names and glob patterns (one selection,
//! so `tune`, `bench` and `ablate` agree on what a name or pattern means), and the kernels a build
//! of the selected features does not compile.

use super::Found;

/// A selection that leaves nothing to work on.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// A name or pattern that selects nothing, or is not a pattern (the message lists the kernels).
    #[error("{0}")]
    NoMatch(String),
    /// Every kernel selected is behind a disabled `#[cfg(..)]`.
    #[error(
        "every kernel selected is behind a disabled `#[cfg(..)]`; select features with --features or --all-features"
    )]
    AllSkipped,
}

/// Keeps the kernels of `found` that `wanted` (names or glob patterns) selects, in their
/// discovery order (all when `wanted` is empty).
pub fn select(found: &mut Vec<Found>, wanted: &[String]) -> Result<(), SelectError> {
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    let keep = select_names(&names, wanted).map_err(SelectError::NoMatch)?;
    let mut keep = keep.into_iter();
    found.retain(|_| keep.next().unwrap_or(false));
    Ok(())
}

/// Which of `names` the `wanted` names and glob patterns select (all when `wanted` is empty);
/// the error names the first entry that selects nothing and lists `names`.
fn select_names(names: &[&str], wanted: &[String]) -> Result<Vec<bool>, String> {
    if wanted.is_empty() {
        return Ok(vec![true; names.len()]);
    }
    let mut keep = vec![false; names.len()];
    let listed = names;
    for w in wanted {
        let pattern = glob::Pattern::new(w).map_err(|e| {
            format!(
                "`{w}` is neither a kernel name nor a glob pattern ({e}); the workspace has: {}",
                listed.join(", ")
            )
        })?;
        let mut hit = false;
        for (k, name) in keep.iter_mut().zip(names) {
            if pattern.matches(name) {
                *k = true;
                hit = true;
            }
        }
        if !hit {
            let what = if glob::Pattern::escape(w) == *w {
                format!("no kernel named `{w}`")
            } else {
                format!("no kernel matches `{w}`")
            };
            return Err(format!("{what}; the workspace has: {}", listed.join(", ")));
        }
    }
    Ok(keep)
}

/// Removes the kernels a build of the selected features does not compile, passing each to
/// `skipped`; an error when nothing is left to work on.
pub fn drop_skipped(
    found: &mut Vec<Found>,
    mut skipped: impl FnMut(&Found),
) -> Result<(), SelectError> {
    let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(found)
        .into_iter()
        .partition(|f| f.skipped.is_some());
    *found = kept;
    for f in &gone {
        skipped(f);
    }
    if found.is_empty() && !gone.is_empty() {
        return Err(SelectError::AllSkipped);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_selected_by_name_and_by_pattern() {
        let names = ["GEMM", "GEMM_T", "SAXPY", "SOFTMAX"];
        let pick = |wanted: &[&str]| {
            let wanted: Vec<String> = wanted.iter().map(|w| w.to_string()).collect();
            select_names(&names, &wanted).map(|keep| {
                names
                    .iter()
                    .zip(keep)
                    .filter(|(_, k)| *k)
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(pick(&[]).unwrap(), names);
        assert_eq!(pick(&["SAXPY", "GEMM"]).unwrap(), ["GEMM", "SAXPY"]);
        assert_eq!(pick(&["GEMM*"]).unwrap(), ["GEMM", "GEMM_T"]);
        assert_eq!(pick(&["S*", "S?XPY"]).unwrap(), ["SAXPY", "SOFTMAX"]);
        let e = pick(&["SAXPY", "GEMV"]).unwrap_err();
        assert_eq!(
            e,
            "no kernel named `GEMV`; the workspace has: GEMM, GEMM_T, SAXPY, SOFTMAX"
        );
        let e = pick(&["CONV*"]).unwrap_err();
        assert!(
            e.starts_with("no kernel matches `CONV*`; the workspace has: GEMM"),
            "{e}"
        );
        let e = pick(&["[GEMM"]).unwrap_err();
        assert!(
            e.contains("neither a kernel name nor a glob pattern"),
            "{e}"
        );
        // Names are case-sensitive, as the statics are.
        assert!(pick(&["saxpy"]).is_err());
    }
}
