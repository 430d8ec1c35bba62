//! A program whose loops are proven to end is built without naga's forced loop bound, clamped
//! bounds included, and computes on a real adapter what the same loops compute on the CPU.
//! wgpu's default adapter (lavapipe in CI); no adapter is a failure, not a skip.

use kf_runtime::expr::SizeExpr;
use kf_runtime::interface::BindingKind;
use kf_runtime::{Dispatch, DispatchMode, LoopBound, Program};
use std::borrow::Cow;
use wgpu::util::DeviceExt;

/// Seven loops the proof must clamp or take as they are: a stride with an offset (`i + 3u < n`,
/// step `4 * STRIDE`), halving down to one (`>=`, clamped to 1), counting down by one under a
/// `loop`/`break`, a `break if` stepping by 3 (clamped), a stride read from a uniform (clamped at
/// run time), a counted test `&&` a data test, stepping by 2 (clamped), and a counter tripled
/// from the invocation's index (clamped, and stopped at 0, where the loop as written never ends).
const WGSL: &str = "
struct P { n: u32, stride: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
override STRIDE: u32 = 1u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var s = 0u;
    for (var i = gid.x; i + 3u < p.n; i += 4u * STRIDE) {
        s += x[i] + x[i + 1u] + x[i + 2u] + x[i + 3u];
    }
    var h = 0u;
    for (var k = p.n + gid.x; k >= 1u; k = k / 2u) { h += k; }
    var d = 0u;
    var j = gid.x;
    loop {
        if j <= 0u { break; }
        d += x[j];
        j--;
    }
    var t = 0u;
    var m = gid.x;
    loop {
        t += m;
        continuing {
            m += 3u;
            break if m >= p.n;
        }
    }
    var r = 0u;
    for (var i = gid.x; i < p.n; i += p.stride) { r += x[i]; }
    var e = 0u;
    for (var i = gid.x; i < p.n && x[i] % 5u != 0u; i += 2u) { e += 1u; }
    var q = 0u;
    for (var v = gid.x; v < p.n; v *= 3u) { q += v; }
    out[gid.x] = s * 1000003u + h * 31u + d * 7u + t + r * 13u + e * 101u + q * 17u;
}
";

fn cpu(x: &[u32], n: u32, runtime_stride: u32, g: u32, stride: u32) -> u32 {
    let mut s = 0u32;
    let mut i = g;
    while i + 3 < n {
        s = s.wrapping_add(
            x[i as usize] + x[i as usize + 1] + x[i as usize + 2] + x[i as usize + 3],
        );
        i += 4 * stride;
    }
    let mut h = 0u32;
    let mut k = n + g;
    while k >= 1 {
        h = h.wrapping_add(k);
        k /= 2;
    }
    let mut d = 0u32;
    let mut j = g;
    while j > 0 {
        d = d.wrapping_add(x[j as usize]);
        j -= 1;
    }
    let mut t = 0u32;
    let mut m = g;
    loop {
        t = t.wrapping_add(m);
        m += 3;
        if m >= n {
            break;
        }
    }
    let mut r = 0u32;
    let mut i = g;
    while i < n {
        r = r.wrapping_add(x[i as usize]);
        i += runtime_stride;
    }
    let mut e = 0u32;
    let mut i = g;
    while i < n && !x[i as usize].is_multiple_of(5) {
        e += 1;
        i += 2;
    }
    // From 0 the tripled counter stops at once (the clamp's `v != 0`): the original loop would
    // never end there.
    let mut q = 0u32;
    let mut v = g;
    while v < n && v != 0 {
        q = q.wrapping_add(v);
        v *= 3;
    }
    s.wrapping_mul(1_000_003)
        .wrapping_add(h.wrapping_mul(31))
        .wrapping_add(d.wrapping_mul(7))
        .wrapping_add(t)
        .wrapping_add(r.wrapping_mul(13))
        .wrapping_add(e.wrapping_mul(101))
        .wrapping_add(q.wrapping_mul(17))
}

#[test]
fn proven_loops_build_without_the_counter_and_compute_the_same() {
    const STRIDE: u32 = 16;
    let program = Program {
        wgsl: Cow::Borrowed(WGSL),
        entry: Cow::Borrowed("main"),
        constants: Cow::Owned(vec![(Cow::Borrowed("STRIDE"), f64::from(STRIDE))]),
        workgroup_size: [64, 1, 1],
        workgroup_storage_bytes: 0,
        dispatch: Dispatch {
            mode: DispatchMode::Grid,
            size: [
                SizeExpr::parse("64").unwrap(),
                SizeExpr::parse("1").unwrap(),
                SizeExpr::parse("1").unwrap(),
            ],
        },
        then: Cow::Borrowed(&[]),
        workspace: Cow::Borrowed(&[]),
    };
    let proof = kf_runtime::termination::prove_program(&program).expect("every loop is proven");
    assert_eq!((proof.loops, proof.clamped), (7, 6), "{proof:?}");

    let instance = wgpu::Instance::default();
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("no wgpu adapter: this test needs one (lavapipe will do)");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .expect("device");
    let slots = [
        (0, 0, BindingKind::StorageRead),
        (0, 1, BindingKind::StorageReadWrite),
        (0, 2, BindingKind::Uniform),
    ];
    let layouts = kf_runtime::bind_group_layouts(&device, "loops", &slots);
    let layout = kf_runtime::pipeline_layout(&device, "loops", &layouts, None);
    let (pipeline, bound) = kf_runtime::build_pipeline_with(&device, &layout, &program, "loops")
        .expect("the program builds");
    assert_eq!(bound, LoopBound::Proven(proof), "built with the counter");
    let constants = [("STRIDE", f64::from(STRIDE))];
    let (_, module_bound) = kf_runtime::shader_module(&device, "loops", WGSL, &constants);
    assert_eq!(module_bound, LoopBound::Proven(proof), "the module alike");

    let n: u32 = 1000;
    let x: Vec<u32> = (0..n)
        .map(|v| v.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let storage = |contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents,
            usage,
        })
    };
    let xb = storage(bytemuck::cast_slice(&x), wgpu::BufferUsages::STORAGE);
    let out = storage(
        &[0u8; 64 * 4],
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    );
    let runtime_stride: u32 = 7;
    let params = storage(
        bytemuck::cast_slice(&[n, runtime_stride, 0, 0]),
        wgpu::BufferUsages::UNIFORM,
    );
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64 * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layouts[0],
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: xb.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: out.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: params.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, 64 * 4);
    queue.submit([encoder.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let got: Vec<u32> =
        bytemuck::cast_slice(&read.slice(..).get_mapped_range().expect("mapped")).to_vec();
    for (g, &v) in got.iter().enumerate() {
        assert_eq!(
            v,
            cpu(&x, n, runtime_stride, g as u32, STRIDE),
            "invocation {g}"
        );
    }
}
