//! The loop queries on the spellings real kernels use: a counter's uses as naga resolves names,
//! and which loops count.

use super::*;

fn uses_of(wgsl: &str, counter: &str) -> Result<Vec<String>, Skip> {
    let m = naga::front::wgsl::parse_str(wgsl).unwrap();
    let f = &m.entry_points[0].function;
    let loops = for_loops(&m, wgsl, FnRef::Entry(0), f);
    let lp = loops
        .iter()
        .find(|l| f.local_variables[l.counter].name.as_deref() == Some(counter))
        .expect("the loop is recognised");
    let uses = counter_uses(&m, wgsl, f, lp)?;
    Ok(uses
        .iter()
        .map(|r| format!("{}@{}", &wgsl[r.clone()], line_col(wgsl, r.start)))
        .collect())
}

fn line_col(src: &str, pos: usize) -> String {
    let line = text::line_of(src, pos);
    let col = pos - src[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
    format!("{line}:{col}")
}

#[test]
fn counter_uses_follow_naga_name_resolution() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1) fn main() {
    for (var i = 0u; i < 4u; i++) { y[i] = i; }
    for (var i /* again */ : u32 = 1u; i < 3u; i = i + 1u) { let j = i; { let i = 7u; y[j] = i; } y[i] += 1u; }
}";
    // The second loop: its uses, not the sibling loop's nor the shadowing `let i` block's.
    let m = naga::front::wgsl::parse_str(wgsl).unwrap();
    let f = &m.entry_points[0].function;
    let loops = for_loops(&m, wgsl, FnRef::Entry(0), f);
    assert_eq!(loops.len(), 2);
    let uses = counter_uses(&m, wgsl, f, &loops[1]).unwrap();
    let at: Vec<String> = uses
        .iter()
        .map(|r| format!("{}@{}", &wgsl[r.clone()], line_col(wgsl, r.start)))
        .collect();
    assert_eq!(at, ["i@4:40", "i@4:70", "i@4:101"]);
    let first = counter_uses(&m, wgsl, f, &loops[0]).unwrap();
    assert_eq!(first.len(), 3, "condition and two body uses");
}

#[test]
fn an_enclosing_declaration_of_the_same_name_refuses_the_loop() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1) fn main() {
    for (var k = 0u; k < 2u; k++) {
        for (var i = 0u; i < 4u; i++) { y[i] = k; }
    }
    let i = 3u;
    y[i] = 0u;
}";
    assert!(uses_of(wgsl, "i").is_ok());
    let shadowing = "@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) i: u32) {
    for (var i = 0u; i < 4u; i++) { y[i] = 1u; }
}";
    assert!(uses_of(shadowing, "i").is_err());
    let outer_var = "@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1) fn main() {
    var i = 5u;
    { for (var i = 0u; i < 4u; i++) { y[i] = 1u; } }
    y[i] = 2u;
}";
    let e = uses_of(outer_var, "i").unwrap_err();
    assert!(e.0.contains("0 uses in the text, 2 loads"), "{e}");
}

#[test]
fn only_for_loops_with_a_header_counter_are_counted() {
    let wgsl = "@group(0) @binding(0) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(1) fn main() {
    var i = 0u;
    while (i < 4u) { y[i] = i; i++; }
    var j = 0u;
    loop { if (j >= 4u) { break; } y[j] = j; continuing { j += 1u; } }
    for (; j < 8u; j++) { y[j] = 0u; }
    for (var k = 0u; k < 4u; k++) { y[k] = k; }
}";
    let m = naga::front::wgsl::parse_str(wgsl).unwrap();
    let f = &m.entry_points[0].function;
    let loops = for_loops(&m, wgsl, FnRef::Entry(0), f);
    let names: Vec<&str> = loops
        .iter()
        .map(|l| f.local_variables[l.counter].name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["k"]);
}
