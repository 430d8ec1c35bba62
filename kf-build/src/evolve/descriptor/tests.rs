//! Descriptor levels on small hand-written kernels, and invariance under cosmetic edits.

use super::*;

#[track_caller]
fn check(wgsl: &str, constants: &[(&str, f64)], expected: &str) {
    let d = describe(wgsl, "main", constants).unwrap_or_else(|e| panic!("describe failed: {e}"));
    assert_eq!(d.to_string(), expected, "descriptor of:\n{wgsl}");
}

const NAIVE_MATMUL: &str = r#"
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= dims.m || col >= dims.n) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < dims.k; k++) {
        acc += a[row * dims.k + k] * b[k * dims.n + col];
    }
    c[row * dims.n + col] = acc;
}
"#;

const TILED_MATMUL: &str = r#"
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

const T: u32 = 16u;
var<workgroup> ta: array<f32, 256>;
var<workgroup> tb: array<f32, 256>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    var acc = 0.0;
    for (var t = 0u; t < dims.k; t += T) {
        ta[lid.y * T + lid.x] = a[row * dims.k + t + lid.x];
        tb[lid.y * T + lid.x] = b[(t + lid.y) * dims.n + col];
        workgroupBarrier();
        for (var k = 0u; k < T; k++) {
            acc += ta[lid.y * T + k] * tb[k * T + lid.x];
        }
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) {
        c[row * dims.n + col] = acc;
    }
}
"#;

/// 64×64 blocks, 16×16 invocations, 4 outputs per invocation held in four accumulators.
const BLOCKED_MATMUL: &str = r#"
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> ta: array<f32, 1024>;
var<workgroup> tb: array<f32, 256>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row0 = wid.y * 64u + lid.y * 4u;
    let col = wid.x * 16u + lid.x;
    var acc0 = 0.0;
    var acc1 = 0.0;
    var acc2 = 0.0;
    var acc3 = 0.0;
    for (var t = 0u; t < dims.k; t += 16u) {
        for (var r = 0u; r < 4u; r++) {
            ta[(lid.y * 4u + r) * 16u + lid.x] = a[(row0 + r) * dims.k + t + lid.x];
        }
        tb[lid.y * 16u + lid.x] = b[(t + lid.y) * dims.n + col];
        workgroupBarrier();
        for (var k = 0u; k < 16u; k++) {
            let bv = tb[k * 16u + lid.x];
            acc0 += ta[(lid.y * 4u + 0u) * 16u + k] * bv;
            acc1 += ta[(lid.y * 4u + 1u) * 16u + k] * bv;
            acc2 += ta[(lid.y * 4u + 2u) * 16u + k] * bv;
            acc3 += ta[(lid.y * 4u + 3u) * 16u + k] * bv;
        }
        workgroupBarrier();
    }
    c[(row0 + 0u) * dims.n + col] = acc0;
    c[(row0 + 1u) * dims.n + col] = acc1;
    c[(row0 + 2u) * dims.n + col] = acc2;
    c[(row0 + 3u) * dims.n + col] = acc3;
}
"#;

/// One invocation per row, three passes over the row.
const SOFTMAX_PER_ROW: &str = r#"
struct Params { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= p.rows) {
        return;
    }
    let base = row * p.cols;
    var m = -3.4e38;
    for (var j = 0u; j < p.cols; j++) {
        m = max(m, x[base + j]);
    }
    var s = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        s += exp(x[base + j] - m);
    }
    for (var j = 0u; j < p.cols; j++) {
        y[base + j] = exp(x[base + j] - m) / s;
    }
}
"#;

/// One workgroup per row: each invocation keeps an online (max, sum) pair over a strided slice,
/// combined across the subgroup with subgroup operations and across subgroups in workgroup memory.
const SOFTMAX_PER_WORKGROUP: &str = r#"
struct Params { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> part_m: array<f32, 64>;
var<workgroup> part_s: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) width: u32) {
    let base = wid.x * p.cols;
    var m = -3.4e38;
    var s = 0.0;
    for (var j = lid.x; j < p.cols; j += 64u) {
        let v = x[base + j];
        let m_new = max(m, v);
        s = s * exp(m - m_new) + exp(v - m_new);
        m = m_new;
    }
    let sm = subgroupMax(m);
    let ss = subgroupAdd(s * exp(m - sm));
    if (lane == 0u) {
        part_m[lid.x / width] = sm;
        part_s[lid.x / width] = ss;
    }
    workgroupBarrier();
    var gm = -3.4e38;
    for (var i = 0u; i < 64u / width; i++) {
        gm = max(gm, part_m[i]);
    }
    var gs = 0.0;
    for (var i = 0u; i < 64u / width; i++) {
        gs += part_s[i] * exp(part_m[i] - gm);
    }
    for (var j = lid.x; j < p.cols; j += 64u) {
        y[base + j] = exp(x[base + j] - gm) / gs;
    }
}
"#;

const WELFORD_LAYERNORM: &str = r#"
struct Params { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= p.rows) {
        return;
    }
    let base = row * p.cols;
    var n = 0.0;
    var mean = 0.0;
    var m2 = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        let v = x[base + j];
        n += 1.0;
        let d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
    }
    let rstd = inverseSqrt(m2 / n + 1e-5);
    for (var j = 0u; j < p.cols; j++) {
        y[base + j] = (x[base + j] - mean) * rstd;
    }
}
"#;

/// Two-pass layernorm (mean, then variance, then normalize): the multi-pass baseline.
const TWO_PASS_LAYERNORM: &str = r#"
struct Params { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    if (row >= p.rows) {
        return;
    }
    let base = row * p.cols;
    var sum = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        sum += x[base + j];
    }
    let mean = sum / f32(p.cols);
    var var_sum = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        let d = x[base + j] - mean;
        var_sum += d * d;
    }
    let rstd = inverseSqrt(var_sum / f32(p.cols) + 1e-5);
    for (var j = 0u; j < p.cols; j++) {
        y[base + j] = (x[base + j] - mean) * rstd;
    }
}
"#;

/// Sum and sum of squares in one loop: two independent accumulators, but they meet in one write,
/// so this is not register blocking.
const VARIANCE: &str = r#"
struct Params { rows: u32, cols: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = gid.x * p.cols;
    var s = 0.0;
    var sq = 0.0;
    for (var j = 0u; j < p.cols; j++) {
        let v = x[base + j];
        s += v;
        sq += v * v;
    }
    let mean = s / f32(p.cols);
    y[gid.x] = sq / f32(p.cols) - mean * mean;
}
"#;

const SAXPY: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}
"#;

/// Four elements per invocation, a workgroup's worth apart (coalesced); the factor is an override.
const SAXPY_COARSENED: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

override WG: u32 = 64u;
override COARSEN: u32 = 4u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.x * WG * COARSEN + lid.x;
    for (var c = 0u; c < COARSEN; c++) {
        let i = base + c * WG;
        if (i < p.n) {
            y[i] = p.a * x[i] + y[i];
        }
    }
}
"#;

/// Four contiguous elements per invocation: more work, but adjacent invocations are 4 apart.
const SAXPY_CONTIGUOUS: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    for (var c = 0u; c < 4u; c++) {
        let i = gid.x * 4u + c;
        if (i < p.n) {
            y[i] = p.a * x[i] + y[i];
        }
    }
}
"#;

const SAXPY_UNROLLED: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = wid.x * 128u + lid.x;
    y[i] = p.a * x[i] + y[i];
    y[i + 64u] = p.a * x[i + 64u] + y[i + 64u];
}
"#;

const SAXPY_GRID_STRIDE: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += groups.x * 64u) {
        y[i] = p.a * x[i] + y[i];
    }
}
"#;

const SAXPY_VEC4: &str = r#"
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}
"#;

/// A reduction with a workgroup tree; the partial sums live in two tiles of a double buffer.
const DOUBLE_BUFFERED: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

var<workgroup> tiles: array<array<f32, 64>, 2>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    var acc = 0.0;
    tiles[0][lid.x] = x[wid.x * 512u + lid.x];
    workgroupBarrier();
    for (var t = 0u; t < 8u; t++) {
        let cur = t % 2u;
        if (t + 1u < 8u) {
            tiles[1u - cur][lid.x] = x[wid.x * 512u + (t + 1u) * 64u + lid.x];
        }
        for (var k = 0u; k < 64u; k++) {
            acc += tiles[cur][k];
        }
        workgroupBarrier();
    }
    y[wid.x * 64u + lid.x] = acc;
}
"#;

/// An accumulator update in a helper function, with a pointer to the caller's variable.
const HELPER_CALL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

fn accumulate(m: ptr<function, f32>, s: ptr<function, f32>, v: f32) {
    let m_new = max(*m, v);
    *s = *s * exp(*m - m_new) + exp(v - m_new);
    *m = m_new;
}

fn load(i: u32) -> f32 {
    return x[i];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var m = -3.4e38;
    var s = 0.0;
    for (var j = 0u; j < 32u; j++) {
        accumulate(&m, &s, load(gid.x * 32u + j));
    }
    y[gid.x] = m + log(s);
}
"#;

#[test]
fn naive_matmul_is_the_origin_but_for_nothing() {
    check(NAIVE_MATMUL, &[], "m0c1p0w0");
}

#[test]
fn tiled_matmul_tiles_memory_and_compute() {
    check(TILED_MATMUL, &[], "m2c3p1w0");
}

#[test]
fn register_blocked_matmul_reaches_memory_three() {
    check(BLOCKED_MATMUL, &[], "m3c3p1w1");
}

#[test]
fn softmax_per_row_is_multi_pass() {
    check(SOFTMAX_PER_ROW, &[], "m0c0p0w3");
}

#[test]
fn softmax_per_workgroup_streams_with_subgroups() {
    check(SOFTMAX_PER_WORKGROUP, &[], "m2c2p3w3");
}

#[test]
fn welford_layernorm_streams_two_pass_does_not() {
    check(WELFORD_LAYERNORM, &[], "m0c2p0w3");
    check(TWO_PASS_LAYERNORM, &[], "m0c0p0w3");
}

#[test]
fn accumulators_meeting_in_one_write_are_not_register_blocking() {
    check(VARIANCE, &[], "m0c1p0w0");
}

#[test]
fn saxpy_variants() {
    check(SAXPY, &[], "m0c1p0w0");
    check(SAXPY_COARSENED, &[], "m1c1p0w1");
    check(SAXPY_CONTIGUOUS, &[], "m0c1p0w1");
    check(SAXPY_UNROLLED, &[], "m1c1p0w1");
    check(SAXPY_GRID_STRIDE, &[], "m1c1p0w3");
    check(SAXPY_VEC4, &[], "m1c1p0w0");
}

#[test]
fn override_constants_are_applied() {
    check(SAXPY_COARSENED, &[("COARSEN", 1.0)], "m0c1p0w0");
    check(SAXPY_COARSENED, &[("COARSEN", 8.0)], "m1c1p0w2");
    check(SAXPY_COARSENED, &[("COARSEN", 32.0)], "m1c1p0w3");
}

#[test]
fn double_buffered_tiles_reach_memory_three() {
    check(DOUBLE_BUFFERED, &[], "m3c3p1w0");
}

#[test]
fn calls_are_followed() {
    check(HELPER_CALL, &[], "m0c2p0w0");
}

/// Comment-only, rename-only and formatting-only edits leave every kernel's cell unchanged.
#[test]
fn cosmetic_edits_do_not_move_a_kernel() {
    let kernels = [
        NAIVE_MATMUL,
        TILED_MATMUL,
        BLOCKED_MATMUL,
        SOFTMAX_PER_ROW,
        SOFTMAX_PER_WORKGROUP,
        WELFORD_LAYERNORM,
        SAXPY_COARSENED,
        HELPER_CALL,
    ];
    for k in kernels {
        let original = describe(k, "main", &[]).expect("describes");
        let commented = comment(k);
        let renamed = rename(k);
        let formatted = reformat(k);
        for (what, edited) in [
            ("comments", &commented),
            ("renames", &renamed),
            ("formatting", &formatted),
        ] {
            assert_ne!(edited, k, "the {what} edit changed nothing");
            let d = describe(edited, "main", &[])
                .unwrap_or_else(|e| panic!("{what} edit broke the kernel: {e}\n{edited}"));
            assert_eq!(d, original, "{what} moved the kernel:\n{edited}");
        }
    }
}

/// Adds comments that name every optimization the paper's regexes look for.
fn comment(k: &str) -> String {
    let mut out =
        String::from("// tiled, vectorized, subgroup, workgroupBarrier, online softmax\n");
    for line in k.lines() {
        out.push_str(line);
        if line.trim_end().ends_with(';') {
            out.push_str(" // fused float4 shared memory register blocking /* var<workgroup> */");
        }
        out.push('\n');
    }
    out
}

/// Renames identifiers the kernel declares (variables, parameters, helpers, structs and their
/// members), keeping keywords, builtins, types, the entry point and the components `x y z`
/// (which also keeps the bindings named `x` and `y`).
fn rename(k: &str) -> String {
    const KEEP: &[&str] = &[
        "struct",
        "var",
        "let",
        "const",
        "override",
        "fn",
        "for",
        "if",
        "return",
        "storage",
        "read",
        "read_write",
        "uniform",
        "workgroup",
        "group",
        "binding",
        "compute",
        "workgroup_size",
        "builtin",
        "global_invocation_id",
        "local_invocation_id",
        "workgroup_id",
        "num_workgroups",
        "subgroup_invocation_id",
        "subgroup_size",
        "array",
        "vec3",
        "vec4",
        "u32",
        "f32",
        "ptr",
        "function",
        "max",
        "exp",
        "log",
        "inverseSqrt",
        "workgroupBarrier",
        "subgroupMax",
        "subgroupAdd",
        "main",
        "x",
        "y",
        "z",
    ];
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let starts_alpha = word
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if starts_alpha && !KEEP.contains(&word.as_str()) {
            out.push_str("renamed_");
        }
        out.push_str(word);
        word.clear();
    };
    for c in k.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Reflows whitespace: every token separated by single spaces or extra newlines and indentation.
fn reformat(k: &str) -> String {
    k.lines()
        .map(|l| {
            format!(
                "        {}  ",
                l.split_whitespace().collect::<Vec<_>>().join("   ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn descriptor_strings_round_trip() {
    for d in Descriptor::all() {
        let s = d.to_string();
        assert_eq!(s.parse::<Descriptor>(), Ok(d));
        let json = serde_json::to_string(&d).expect("serializes");
        assert_eq!(
            serde_json::from_str::<Descriptor>(&json).expect("parses"),
            d
        );
    }
    assert_eq!(Descriptor::all().count(), 256);
    assert!("m4c0p0w0".parse::<Descriptor>().is_err());
    assert!("c0m0p0w0".parse::<Descriptor>().is_err());
    assert!("m0c0p0".parse::<Descriptor>().is_err());
}

#[test]
fn descriptor_moves_stay_in_range() {
    let d = Descriptor::new(3, 0, 1, 2);
    assert_eq!(d.moved(Dim::Memory, 1), None);
    assert_eq!(d.moved(Dim::Compute, -1), None);
    assert_eq!(
        d.moved(Dim::Parallelism, 1),
        Some(Descriptor::new(3, 0, 2, 2))
    );
    assert_eq!(d.level_sum(), 6);
    assert_eq!(d.distance(&Descriptor::default()), 6);
    assert_eq!(Descriptor::new(9, 9, 9, 9), Descriptor::new(3, 3, 3, 3));
}

#[test]
fn broken_programs_are_errors() {
    assert!(matches!(
        describe("fn main( {", "main", &[]),
        Err(DescribeError::Reflect(_))
    ));
    assert!(matches!(
        describe(SAXPY, "other", &[]),
        Err(DescribeError::Reflect(_))
    ));
}
