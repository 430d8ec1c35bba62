//! The blind corpus as a user's crate: every marked kernel runs through `kf-runtime` on the
//! default adapter (the variant tuned for it when `kernelfoundry/` holds one, else the baseline),
//! is checked against a CPU computation of what its WGSL computes, and prints
//! `<KERNEL>: variant=<id> match=<kind> ok` or its first mismatch; any mismatch exits with 1 (a
//! kernel whose real-shape buffers the device cannot bind prints `<KERNEL>: skipped (..)`).
//! So a variant `tune` accepted on another machine is checked again here, on this adapter, at
//! the shapes the app runs. `cargo kernelfoundry cache verify --manifest-path
//! examples/blind/Cargo.toml` checks the cache files themselves.
//!
//! ```text
//! cargo kernelfoundry tune --manifest-path examples/blind/Cargo.toml --time 8
//! cargo run --release -p blind                       # the realistic shapes of kernels.rs
//! cargo run -p blind -- --small                      # the headers' CI shapes (lavapipe)
//! cargo run --release -p blind -- --kernel B2_GEMM_VEC4 --kernel TRANSPOSE_GROUPS
//! ```

mod cases;
mod gpu;
mod kernels;

use cases::{Case, Scale};
use std::process::ExitCode;

const USAGE: &str = "usage: blind [--small] [--kernel NAME]...";

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    let mut scale = Scale::Real;
    let mut only: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--small" => scale = Scale::Small,
            "--kernel" => match args.next() {
                Some(name) => only.push(name),
                None => {
                    eprintln!("error: --kernel needs a kernel name\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: unexpected argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match run(scale, &only) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(scale: Scale, only: &[String]) -> Result<bool, String> {
    let all = cases::all();
    if let Some(unknown) = only.iter().find(|n| !all.iter().any(|(k, _)| k == n)) {
        return Err(format!(
            "no kernel named `{unknown}`; the corpus has {}",
            all.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
        ));
    }
    let gpu = gpu::Gpu::open()?;
    println!(
        "adapter: {} ({}), {} shapes",
        gpu.info.name,
        gpu.info.backend.to_str(),
        scale.pick("real", "small")
    );
    let mut all_ok = true;
    for (name, make) in all {
        if !only.is_empty() && !only.iter().any(|n| n == name) {
            continue;
        }
        let case = make(scale);
        all_ok &= run_case(&gpu, &case)?;
    }
    Ok(all_ok)
}

/// Runs one case, prints its line, and returns whether every output matched. A case whose
/// buffers this device cannot bind is skipped, as kernelbench skips a reference the adapter
/// cannot run: the kernel is not wrong, the shape is too big for this device.
fn run_case(gpu: &gpu::Gpu, case: &Case) -> Result<bool, String> {
    if let Some(why) = gpu.unfit(case) {
        println!("{}: skipped ({why})", case.kernel.name);
        return Ok(true);
    }
    let (loaded, outputs) = gpu.run(case)?;
    let status = verdict(case, &outputs);
    println!(
        "{}: variant={} match={} {}",
        case.kernel.name,
        loaded.variant(),
        loaded.matched(),
        status.as_deref().unwrap_or("ok")
    );
    Ok(status.is_none())
}

/// `None` when every checked output matches, else the first mismatch.
fn verdict(case: &Case, outputs: &[Vec<u8>]) -> Option<String> {
    case.checks.iter().zip(outputs).find_map(|(check, got)| {
        cases::compare(got, &check.expected, check.tolerance)
            .err()
            .map(|e| format!("binding `{}`: {e}", check.binding))
    })
}
