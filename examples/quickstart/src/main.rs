//! KernelFoundry quickstart: runs three marked kernels through `kf-runtime` on the default
//! adapter, checks each result against a CPU computation, and prints which variant ran.
//!
//! ```text
//! cargo kernelfoundry tune --manifest-path examples/quickstart/Cargo.toml
//! cargo run -p quickstart
//! cargo run -p quickstart -- --measure   # on a GPU no entry was tuned on: measure, remember
//! cargo run -p quickstart -- --measure --measure-budget-ms 200
//! ```
//!
//! With `--measure` each kernel loads with `LoadMode::Measure`: when no cache entry was tuned on
//! this adapter, the variants tuned on other GPUs are timed against the kernel on first run, and
//! the choice is remembered per user; the line of each kernel then adds `timed=<runs>`, the
//! program runs measurement made (0 when the choice was remembered).

mod kernels;

use kf_runtime::{Kernel, LoadMode, LoadedKernel, Measure};
use std::process::ExitCode;
use wgpu::util::DeviceExt;

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    /// `--measure`: load with `LoadMode::Measure`.
    measure: bool,
    /// `--measure-budget-ms <N>`: its timing budget per kernel.
    budget: Option<std::time::Duration>,
}

fn gpu() -> Result<Gpu, String> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| format!("no GPU adapter found: {e}"))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("quickstart"),
        // Subgroups (and f16) where the adapter has them: tuned variants may use them.
        required_features: kf_runtime::features(&adapter),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| format!("cannot open the device: {e}"))?;
    Ok(Gpu {
        info: adapter.get_info(),
        device,
        queue,
        measure: std::env::args().any(|a| a == "--measure"),
        budget: std::env::args()
            .skip_while(|a| a != "--measure-budget-ms")
            .nth(1)
            .and_then(|ms| ms.parse().ok())
            .map(std::time::Duration::from_millis),
    })
}

fn run() -> Result<bool, String> {
    let gpu = gpu()?;
    println!("adapter: {} ({})", gpu.info.name, gpu.info.backend.to_str());
    let mut all_ok = true;

    // saxpy
    let n = 100_003usize;
    let x: Vec<f32> = (0..n).map(|i| ((i % 97) as f32) * 0.25 - 12.0).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i % 13) as f32) - 6.0).collect();
    let a = 2.5f32;
    let params: Vec<u8> = [bytemuck::bytes_of(&(n as u32)), bytemuck::bytes_of(&a)].concat();
    let out = launch(
        &gpu,
        &kernels::SAXPY,
        &[as_bytes(&x), as_bytes(&y), params],
        1,
        &[("n", n as u64)],
    )?;
    let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    all_ok &= report(&gpu, &out.0, &out.1, &expected, 1e-6);

    // softmax
    let (rows, cols) = (300usize, 257usize);
    let input: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 7919 % 1000) as f32) / 125.0 - 4.0)
        .collect();
    let shape: Vec<u8> = [
        bytemuck::bytes_of(&(rows as u32)),
        bytemuck::bytes_of(&(cols as u32)),
    ]
    .concat();
    let out = launch(
        &gpu,
        &kernels::SOFTMAX,
        &[as_bytes(&input), vec![0u8; rows * cols * 4], shape],
        1,
        &[("rows", rows as u64), ("cols", cols as u64)],
    )?;
    let mut expected = vec![0f32; rows * cols];
    for r in 0..rows {
        let row = &input[r * cols..(r + 1) * cols];
        let m = row.iter().cloned().fold(f32::MIN, f32::max);
        let s: f64 = row.iter().map(|v| f64::from((v - m).exp())).sum();
        for c in 0..cols {
            expected[r * cols + c] = (f64::from((row[c] - m).exp()) / s) as f32;
        }
    }
    all_ok &= report(&gpu, &out.0, &out.1, &expected, 1e-5);

    // matmul
    let (m, nn, k) = (70usize, 90usize, 33usize);
    let am: Vec<f32> = (0..m * k).map(|i| ((i % 7) as f32) - 3.0).collect();
    let bm: Vec<f32> = (0..k * nn).map(|i| ((i % 5) as f32) - 2.0).collect();
    let dims: Vec<u8> = [m as u32, nn as u32, k as u32]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let out = launch(
        &gpu,
        &kernels::MATMUL,
        &[as_bytes(&am), as_bytes(&bm), vec![0u8; m * nn * 4], dims],
        2,
        &[("m", m as u64), ("n", nn as u64), ("k", k as u64)],
    )?;
    let mut expected = vec![0f32; m * nn];
    for r in 0..m {
        for c in 0..nn {
            expected[r * nn + c] = (0..k).map(|i| am[r * k + i] * bm[i * nn + c]).sum();
        }
    }
    all_ok &= report(&gpu, &out.0, &out.1, &expected, 0.0);
    Ok(all_ok)
}

fn as_bytes(v: &[f32]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// Loads `kernel` for this adapter, binds `buffers` as bindings 0.. of group 0 (the last one is a
/// uniform), dispatches for `sizes`, and reads back binding `read_back`.
fn launch(
    gpu: &Gpu,
    kernel: &'static Kernel,
    buffers: &[Vec<u8>],
    read_back: usize,
    sizes: &[(&str, u64)],
) -> Result<(LoadedKernel, Vec<f32>), String> {
    let mode = if gpu.measure {
        let measure = Measure::new(&gpu.queue);
        LoadMode::Measure(match gpu.budget {
            Some(budget) => measure.budget(budget),
            None => measure,
        })
    } else {
        LoadMode::Embedded
    };
    let loaded = kernel
        .load_with(&gpu.device, &gpu.info, mode)
        .map_err(|e| e.to_string())?;
    let last = buffers.len() - 1;
    let gpu_buffers: Vec<wgpu::Buffer> = buffers
        .iter()
        .enumerate()
        .map(|(i, data)| {
            gpu.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: data,
                    usage: if i == last {
                        wgpu::BufferUsages::UNIFORM
                    } else {
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC
                    },
                })
        })
        .collect();
    let entries: Vec<wgpu::BindGroupEntry> = gpu_buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: loaded.bind_group_layout(0),
        entries: &entries,
    });
    let size = buffers[read_back].len() as u64;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        loaded
            .dispatch(&mut pass, &[&bind_group], sizes)
            .map_err(|e| format!("{}: {e}", kernel.name))?;
    }
    encoder.copy_buffer_to_buffer(&gpu_buffers[read_back], 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    let view = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| format!("cannot read the result back: {e}"))?;
    let data = bytemuck::cast_slice::<u8, f32>(&view).to_vec();
    drop(view);
    Ok((loaded, data))
}

/// Prints `<kernel>: variant=<id> match=<kind> [timed=<runs>] ok|MISMATCH` and returns whether it
/// matched.
fn report(gpu: &Gpu, loaded: &LoadedKernel, got: &[f32], expected: &[f32], tolerance: f32) -> bool {
    let bad = got.iter().zip(expected).position(|(g, e)| {
        // NaN never compares as close.
        let close = (g - e).abs() <= tolerance * e.abs().max(1.0);
        !close
    });
    let status = match bad {
        None => "ok".to_string(),
        Some(i) => format!("MISMATCH at {i}: got {} expected {}", got[i], expected[i]),
    };
    let timed = if gpu.measure {
        format!(" timed={}", loaded.measurement().map_or(0, |m| m.runs))
    } else {
        String::new()
    };
    println!(
        "{}: variant={} match={}{timed} {status}",
        loaded.kernel().name,
        loaded.variant(),
        loaded.matched()
    );
    bad.is_none()
}
