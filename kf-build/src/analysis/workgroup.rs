//! Source rewrites that make a kernel tunable without changing what it computes.
//!
//! Today: lifting a literal `@workgroup_size(x, y)` into `override` constants, so the workgroup
//! size becomes a pipeline constant the search can set. The rewrite edits the user's text in place
//! rather than regenerating WGSL with naga's writer, which is not a faithful round trip once
//! overrides are involved (it writes `@workgroup_size(WG)` back as `(1, 1, 1)`).
//!
//! Invariant: every rewrite is re-parsed and re-validated by the caller, and with the constants at
//! their defaults the rewritten kernel is the original kernel.

/// Names of the overrides a lifted workgroup size uses.
pub const LIFTED: [&str; 3] = ["KF_WG_X", "KF_WG_Y", "KF_WG_Z"];

/// The text between the parentheses of `entry`'s `@workgroup_size(..)` attribute (`16, 16, 1`),
/// and where the entry point's attributes start; `None` when the attribute cannot be found
/// unambiguously. Comments are skipped.
pub fn workgroup_size_args(wgsl: &str, entry: &str) -> Option<(std::ops::Range<usize>, usize)> {
    let clean = super::text::blank_comments(wgsl);
    let (fn_pos, _, _) = super::text::fn_declaration(&clean, entry)?;
    // The attributes of the entry point sit between the previous item's end and `fn`.
    let item_start = clean[..fn_pos].rfind(['}', ';']).map_or(0, |p| p + 1);
    let attrs = &clean[item_start..fn_pos];
    let rel = attrs.find("@workgroup_size")?;
    let open = item_start + rel + attrs[rel..].find('(')?;
    let close = open + clean[open..].find(')')?;
    let attr_start = item_start + clean[item_start..fn_pos].find('@').unwrap_or(0);
    Some((open + 1..close, attr_start))
}

/// Rewrites `@workgroup_size(..)` of `entry` to use `KF_WG_*` overrides with `size` as defaults.
/// `dims` is how many dimensions become overridable (1 or 2; the rest keep their literal).
/// Returns `None` when the attribute cannot be found unambiguously.
pub fn lift_workgroup_size(wgsl: &str, entry: &str, size: [u32; 3], dims: usize) -> Option<String> {
    let (inside, attr_start) = workgroup_size_args(wgsl, entry)?;
    let (open, close) = (inside.start - 1, inside.end);
    let args: Vec<&str> = wgsl[inside]
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    if args.is_empty() || args.len() > 3 {
        return None;
    }
    let dims = dims.clamp(1, 3);
    let new_args: Vec<String> = (0..dims.max(args.len()))
        .map(|d| {
            if d < dims {
                LIFTED[d].to_owned()
            } else {
                size[d].to_string()
            }
        })
        .collect();
    let decls: String = (0..dims)
        .map(|d| format!("override {}: u32 = {}u;\n", LIFTED[d], size[d]))
        .collect();
    // Declarations go before the entry point's attributes (module scope allows use before declaration).
    let mut out = String::with_capacity(wgsl.len() + 128);
    out.push_str(&wgsl[..attr_start]);
    out.push_str("// KernelFoundry: workgroup size lifted into overrides.\n");
    out.push_str(&decls);
    out.push_str(&wgsl[attr_start..open + 1]);
    out.push_str(&new_args.join(", "));
    out.push_str(&wgsl[close..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "// @workgroup_size(999) in a comment\nfn helper() {}\n/* fn main( */\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {}\n";

    #[test]
    fn lifts_the_entry_points_attribute_only() {
        let out = lift_workgroup_size(K, "main", [64, 1, 1], 1).unwrap();
        assert!(
            out.contains(
                "override KF_WG_X: u32 = 64u;\n@compute @workgroup_size(KF_WG_X)\nfn main("
            ),
            "{out}"
        );
        assert!(
            out.contains("// @workgroup_size(999) in a comment"),
            "comments are kept"
        );
        let r = kf_runtime::resolve::reflect(&out, Some("main"), "x")
            .unwrap()
            .interface;
        assert_eq!(r.workgroup_size, [64, 1, 1]);
        assert_eq!(r.workgroup_size_overrides[0].as_deref(), Some("KF_WG_X"));
    }

    #[test]
    fn lifts_two_dimensions() {
        let k = "@compute\n@workgroup_size(8, 8)\nfn mm() {}\n";
        let out = lift_workgroup_size(k, "mm", [8, 8, 1], 2).unwrap();
        assert!(out.contains("@workgroup_size(KF_WG_X, KF_WG_Y)"), "{out}");
        let r = kf_runtime::resolve::reflect(&out, Some("mm"), "x")
            .unwrap()
            .interface;
        assert_eq!(r.workgroup_size, [8, 8, 1]);
        assert_eq!(r.workgroup_size_overrides[1].as_deref(), Some("KF_WG_Y"));
    }

    #[test]
    fn missing_entry_is_none() {
        assert!(lift_workgroup_size(K, "nope", [64, 1, 1], 1).is_none());
        assert!(lift_workgroup_size(K, "mai", [64, 1, 1], 1).is_none());
    }
}
