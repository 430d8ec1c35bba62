//! De-blocking and the normalisations that prepare it, on register-blocked products spelled
//! several ways, and the near misses it must refuse.

use crate::operators::testkit;

const SPEC: &str = "sizes(m = 40, n = 40, k = 24), bind(dims = uniform(m, k, n), a = input(m * k), b = input(k * n), c = output(m * n)), workgroups = (cdiv(n, 32), cdiv(m, 32))";

const HEAD: &str = "struct Dims { M: u32, K: u32, N: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
";

/// A 2 × 2 block per invocation in `sums[i][j]`, zeroed by loops, updates written out.
const ARRAY_BLOCK: &str = "
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y * 2u;
    let col = gid.x * 2u;
    var sums: array<array<f32, 2>, 2>;
    for (var i = 0u; i < 2u; i++) {
        for (var j = 0u; j < 2u; j++) {
            sums[i][j] = 0.0;
        }
    }
    for (var k = 0u; k < dims.K; k++) {
        let a0 = a[row * dims.K + k];
        let a1 = a[(row + 1u) * dims.K + k];
        let b0 = b[k * dims.N + col];
        let b1 = b[k * dims.N + col + 1u];
        sums[0][0] += a0 * b0;
        sums[0][1] += a0 * b1;
        sums[1][0] += a1 * b0;
        sums[1][1] += a1 * b1;
    }
    if (row < dims.M) {
        if (col < dims.N) { c[row * dims.N + col] = sums[0][0]; }
        if (col + 1u < dims.N) { c[row * dims.N + col + 1u] = sums[0][1]; }
    }
    if (row + 1u < dims.M) {
        if (col < dims.N) { c[(row + 1u) * dims.N + col] = sums[1][0]; }
        if (col + 1u < dims.N) { c[(row + 1u) * dims.N + col + 1u] = sums[1][1]; }
    }
}
";

fn canon(body: &str) -> Option<(String, String)> {
    testkit::canonical_text(SPEC, &format!("{HEAD}{body}"))
}

#[test]
fn a_block_in_a_zeroed_local_array_becomes_one_output_per_invocation() {
    let (step, text) = canon(ARRAY_BLOCK).expect("a canonical form");
    println!("{step}\n{text}");
    assert!(step.contains("deblock"), "{step}");
}

/// The same block in named scalars with explicit zeros, a `while` loop, the second row's
/// loads offset by a whole row, one guard per store, and the corner's updates not first.
const NAMED_BLOCK: &str = "
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let r0 = id.y * 2u;
    let c0 = id.x * 2u;
    var s11 = 0.0;
    var s00 = 0.0;
    var s01: f32 = 0.0;
    var s10 = 0.0;
    var kk = 0u;
    while (kk < dims.K) {
        let lo = a[r0 * dims.K + kk];
        let hi = a[r0 * dims.K + dims.K + kk];
        s11 = s11 + hi * b[kk * dims.N + c0 + 1u];
        s00 += lo * b[kk * dims.N + c0];
        s01 += lo * b[kk * dims.N + c0 + 1u];
        s10 += hi * b[kk * dims.N + c0];
        kk += 1u;
    }
    if (max(r0, c0 + 1u) < min(dims.M, dims.N)) {
        c[(r0 + 1u) * dims.N - dims.N + c0 + 1u] = s01;
    }
    if (max(r0 + 1u, c0 + 1u) < min(dims.M, dims.N)) { c[(r0 + 1u) * dims.N + c0 + 1u] = s11; }
    if (max(r0, c0) < min(dims.M, dims.N)) { c[r0 * dims.N + c0] = s00; }
    if (max(r0 + 1u, c0) < min(dims.M, dims.N)) { c[(r0 + 1u) * dims.N + c0] = s10; }
}
";

#[test]
fn a_block_in_named_scalars_under_other_guards_is_deblocked_too() {
    let (step, text) = canon(NAMED_BLOCK).expect("a canonical form");
    assert!(step.contains("deblock"), "{step}\n{text}");
    assert!(
        !text.contains("s11") && !text.contains("s01") && !text.contains("s10"),
        "{text}"
    );
    assert!(text.contains("s00"), "{text}");
}

/// [`ARRAY_BLOCK`] with each store under one guard, `&&`-joined or the negation of an `||`
/// (naga evaluates both through temporaries), every store spelled alike.
fn joined_guards(or: bool) -> String {
    let guard = |r: &str, c: &str| {
        if or {
            format!("!({r} >= dims.M || {c} >= dims.N)")
        } else {
            format!("{r} < dims.M && {c} < dims.N")
        }
    };
    let stores: String = [
        ("row", "col", 0, 0),
        ("row", "col + 1u", 0, 1),
        ("row + 1u", "col", 1, 0),
        ("row + 1u", "col + 1u", 1, 1),
    ]
    .iter()
    .map(|(r, c, i, j)| {
        format!(
            "    if ({}) {{ c[({r}) * dims.N + {c}] = sums[{i}][{j}]; }}\n",
            guard(r, c)
        )
    })
    .collect();
    let at = ARRAY_BLOCK.find("    if (row < dims.M) {").unwrap();
    format!("{}{stores}}}\n", &ARRAY_BLOCK[..at])
}

#[test]
fn a_block_under_joined_guards_is_deblocked_too() {
    for or in [false, true] {
        let body = joined_guards(or);
        let (step, text) = canon(&body).expect("a canonical form");
        assert!(step.contains("deblock"), "{step}\n{text}");
        assert!(
            !text.contains("sums_1_1") && text.contains("sums_0_0"),
            "{text}"
        );
        // One half of one guard not the translate of the corner's.
        let wrong = body
            .replacen("row + 1u < dims.M", "row + 2u < dims.M", 1)
            .replacen("row + 1u >= dims.M", "row + 2u >= dims.M", 1);
        assert_ne!(wrong, body);
        let step = canon(&wrong).map(|c| c.0).unwrap_or_default();
        assert!(!step.contains("deblock"), "{step}");
    }
}

#[test]
fn the_launch_grows_by_the_block() {
    let k = testkit::resolve("k.wgsl", SPEC, &format!("{HEAD}{ARRAY_BLOCK}"));
    let target = testkit::lavapipe();
    let r = crate::operators::canonicalise(&crate::operators::Subject {
        kernel: &k,
        program: &k.baseline,
        target: &target,
    })
    .expect("a canonical form");
    let sizes = [("m", 40u64), ("n", 40), ("k", 24)];
    let before = k.baseline.dispatch.size.clone();
    let after = r.program.dispatch.size.clone();
    for (d, want) in [(0, 2u64), (1, 2), (2, 1)] {
        assert_eq!(
            after[d].eval_with(&sizes).unwrap(),
            want * before[d].eval_with(&sizes).unwrap(),
            "axis {d}"
        );
    }
}

/// Near misses, each a block that is not a translate of its corner, or has more to it.
#[test]
fn blocks_that_are_not_translates_are_left_alone() {
    for (what, from, to) in [
        // One accumulator reads another row's element than its place says.
        (
            "a wrong row",
            "let a1 = a[(row + 1u) * dims.K + k];",
            "let a1 = a[(row + 2u) * dims.K + k];",
        ),
        // One store lands off the block.
        (
            "a wrong column",
            "c[(row + 1u) * dims.N + col + 1u] = sums[1][1];",
            "c[(row + 1u) * dims.N + col + 2u] = sums[1][1];",
        ),
        // A guard that is not the translate of the corner's.
        (
            "a wrong guard",
            "if (row + 1u < dims.M) {",
            "if (row < dims.M) {",
        ),
        // One accumulator's update multiplies where the corner's adds a product.
        (
            "another update",
            "sums[1][1] += a1 * b1;",
            "sums[1][1] += a1 + b1;",
        ),
        // The id read once without the block's factor.
        (
            "a plain id",
            "let col = gid.x * 2u;",
            "let col = gid.x * 2u + gid.y % 2u;",
        ),
        // The output read in the loop: the new launch would read what others write.
        (
            "a written buffer read",
            "let b1 = b[k * dims.N + col + 1u];",
            "let b1 = c[k * dims.N + col + 1u];",
        ),
        // A guard whose else leaves early: the stores after it are skipped with it.
        (
            "a return in a guard's else",
            "sums[0][1]; }\n    }\n",
            "sums[0][1]; }\n    } else { return; }\n",
        ),
        // Something else done before the loop.
        (
            "another store",
            "let col = gid.x * 2u;",
            "let col = gid.x * 2u;\n    c[0] = 1.0;",
        ),
    ] {
        let body = ARRAY_BLOCK.replace(from, to);
        assert_ne!(body, ARRAY_BLOCK, "{what}: the respelling applies");
        let step = canon(&body).map(|c| c.0).unwrap_or_default();
        assert!(!step.contains("deblock"), "{what}: {step}");
    }
}

#[test]
fn zeroing_loops_go_only_before_anything_else_touches_the_array() {
    // A store before the loops: they no longer write what the array holds.
    let body = ARRAY_BLOCK.replace(
        "var sums: array<array<f32, 2>, 2>;",
        "var sums: array<array<f32, 2>, 2>;\n    sums[1][1] = 3.0;",
    );
    let step = canon(&body).map(|c| c.0).unwrap_or_default();
    assert!(!step.contains("zero-stores"), "{step}");
    assert!(!step.contains("deblock"), "{step}");
    // A non-zero fill.
    let body = ARRAY_BLOCK.replace("sums[i][j] = 0.0;", "sums[i][j] = 1.0;");
    let step = canon(&body).map(|c| c.0).unwrap_or_default();
    assert!(!step.contains("zero-stores"), "{step}");
}

#[test]
fn arrays_indexed_by_a_variable_are_not_split() {
    let wgsl = format!(
        "{HEAD}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    var t: array<f32, 4>;
    t[1] = a[gid.x];
    t[gid.x % 4u] = 2.0;
    c[gid.x] = t[1];
}}
"
    );
    let step = testkit::canonical_text(SPEC, &wgsl)
        .map(|c| c.0)
        .unwrap_or_default();
    assert!(!step.contains("scalarise"), "{step}");
    let split = wgsl.replace("t[gid.x % 4u] = 2.0;", "t[3] = 2.0;");
    let (step, text) = testkit::canonical_text(SPEC, &split).expect("a canonical form");
    assert!(step.contains("scalarise"), "{step}");
    assert!(text.contains("t_1") && !text.contains("t["), "{text}");
}

#[test]
fn unused_lets_go_but_calls_stay() {
    // `g` writes memory: its result is read by nothing, but the call (or the statements it is
    // spelled out as) must stay.
    let wgsl = format!(
        "{HEAD}
fn g(i: u32) -> f32 {{ c[i + 1u] = 7.0; return a[i]; }}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let unused = a[gid.x + 1u];
    let kept = g(gid.x);
    let used = a[gid.x];
    c[gid.x] = used;
}}
"
    );
    let (step, text) = testkit::canonical_text(SPEC, &wgsl).expect("a canonical form");
    assert!(step.contains("unused-let"), "{step}");
    assert!(!text.contains("unused"), "{text}");
    assert!(text.contains("let used"), "{text}");
    let body = &text[text.find("fn main").unwrap()..];
    assert!(body.contains("7.0") || body.contains("g(gid.x)"), "{text}");
    // Behind `&&` the call is not spelled out; the unread `let` holding it must stay.
    let behind = wgsl.replace(
        "let kept = g(gid.x);",
        "let kept = (gid.x > 3u) && (g(gid.x) > 0.0);",
    );
    let text = testkit::canonical_text(SPEC, &behind)
        .map(|c| c.1)
        .unwrap_or(behind.clone());
    let body = &text[text.find("fn main").unwrap()..];
    assert!(body.contains("g(gid.x)") || body.contains("7.0"), "{text}");
}

/// [`ARRAY_BLOCK`] with its updates and stores in loops over the block, the stores reading a
/// `let` array gathered from named accumulators as meganeura writes it.
const LOOPED_BLOCK: &str = "
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y * 2u;
    let col = gid.x * 2u;
    var acc: array<array<f32, 2>, 2>;
    var bc: array<f32, 2>;
    for (var k = 0u; k < dims.K; k++) {
        for (var j = 0u; j < 2u; j++) {
            bc[j] = b[k * dims.N + col + j];
        }
        for (var i = 0u; i < 2u; i++) {
            let av = a[(row + i) * dims.K + k];
            for (var j = 0u; j < 2u; j++) {
                acc[i][j] = fma(av, bc[j], acc[i][j]);
            }
        }
    }
    for (var i = 0u; i < 2u; i++) {
        for (var j = 0u; j < 2u; j++) {
            if (row + i < dims.M && col + j < dims.N) {
                c[(row + i) * dims.N + col + j] = acc[i][j];
            }
        }
    }
}
";

#[test]
fn a_block_addressed_by_loops_is_written_out_and_deblocked() {
    let (step, text) = canon(LOOPED_BLOCK).expect("a canonical form");
    assert!(step.contains("unroll-registers"), "{step}");
    assert!(step.contains("deblock"), "{step}\n{text}");
    assert!(
        !text.contains("acc_1_1") && text.contains("acc_0_0"),
        "{text}"
    );
}

#[test]
fn a_let_array_gathered_from_named_sums_reads_as_the_sums() {
    let body = "
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y * 2u;
    let col = gid.x * 2u;
    var s0_0 = 0.0; var s0_1 = 0.0; var s1_0 = 0.0; var s1_1 = 0.0;
    for (var k = 0u; k < dims.K; k++) {
        let a0 = a[row * dims.K + k];
        let a1 = a[(row + 1u) * dims.K + k];
        let b0 = b[k * dims.N + col];
        let b1 = b[k * dims.N + col + 1u];
        s0_0 += a0 * b0; s0_1 += a0 * b1; s1_0 += a1 * b0; s1_1 += a1 * b1;
    }
    let s = array<array<f32, 2>, 2>(
        array<f32, 2>(s0_0, s0_1),
        array<f32, 2>(s1_0, s1_1),
    );
    for (var i = 0u; i < 2u; i++) {
        for (var j = 0u; j < 2u; j++) {
            let r = row + i;
            let q = col + j;
            if r < dims.M && q < dims.N {
                c[r * dims.N + q] = s[i][j];
            }
        }
    }
}
";
    let (step, text) = canon(body).expect("a canonical form");
    assert!(step.contains("let-element"), "{step}");
    assert!(step.contains("deblock"), "{step}\n{text}");
    // A sum written again after the gather: its element is not the variable any more.
    let late = body.replace(
        "    for (var i = 0u; i < 2u; i++) {\n        for",
        "    s1_1 = 0.0;\n    for (var i = 0u; i < 2u; i++) {\n        for",
    );
    assert_ne!(late, body);
    let step = canon(&late).map(|c| c.0).unwrap_or_default();
    assert!(!step.contains("deblock"), "{step}");
}

#[test]
fn a_block_placed_by_workgroup_and_local_ids_is_deblocked_too() {
    // meganeura's spelling of the block's corner: `wid.y * 32u + lid.y * 2u` over a workgroup
    // 16 high, which the canonical form reads as `gid.y * 2u`.
    let body = ARRAY_BLOCK
        .replace(
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
        )
        .replace("let row = gid.y * 2u;", "let row = wid.y * 32u + lid.y * 2u;")
        .replace("let col = gid.x * 2u;", "let col = lid.x * 2u + wid.x * 32u;");
    let (step, text) = canon(&body).expect("a canonical form");
    assert!(
        step.contains("global-id") && step.contains("deblock"),
        "{step}\n{text}"
    );
    // Not a multiple of the workgroup's ids: `wid.y * 30u + lid.y * 2u` skips rows.
    let gaps = body.replace("wid.y * 32u", "wid.y * 30u");
    let step = canon(&gaps).map(|c| c.0).unwrap_or_default();
    assert!(!step.contains("deblock"), "{step}");
}
