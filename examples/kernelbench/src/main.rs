//! KernelFoundry's WGSL KernelBench: every marked kernel of the suite runs through `kf-runtime`
//! on the default adapter (the variant tuned for it, or the baseline), is checked against a CPU
//! computation, and prints `<KERNEL>: variant=<id> match=<kind> ok`. Kernels with a hand-written
//! reference also run it and print `<KERNEL>: reference=<file> ok`.
//!
//! ```text
//! cargo run --release -p kernelbench                 # the realistic shapes of each spec
//! cargo run -p kernelbench -- --small                # tiny shapes (CPU drivers such as lavapipe)
//! cargo run --release -p kernelbench -- --kernel GEMM --kernel SOFTMAX
//! ```

mod cases;
mod gpu;
mod kernels;

use cases::{Case, Scale};
use std::process::ExitCode;

const USAGE: &str = "usage: kernelbench [--small] [--kernel NAME]...";

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
            "no kernel named `{unknown}`; the suite has {}",
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

/// Runs one case (and its reference), prints its lines, and returns whether everything matched.
fn run_case(gpu: &gpu::Gpu, case: &Case) -> Result<bool, String> {
    let (loaded, outputs) = gpu.run(case)?;
    let status = verdict(case, &outputs);
    println!(
        "{}: variant={} match={} {}",
        case.kernel.name,
        loaded.variant(),
        loaded.matched(),
        status.as_deref().unwrap_or("ok")
    );
    let mut ok = status.is_none();
    if let Some(reference) = &case.reference {
        if reference.needs_subgroups && !gpu.subgroups {
            println!(
                "{}: reference={} skipped (the adapter has no subgroup operations)",
                case.kernel.name, reference.label
            );
        } else {
            let outputs = gpu.run_reference(case, &loaded, reference)?;
            let status = verdict(case, &outputs);
            println!(
                "{}: reference={} {}",
                case.kernel.name,
                reference.label,
                status.as_deref().unwrap_or("ok")
            );
            ok &= status.is_none();
        }
    }
    Ok(ok)
}

/// `None` when every checked output matches, else the first mismatch.
fn verdict(case: &Case, outputs: &[Vec<u8>]) -> Option<String> {
    case.checks.iter().zip(outputs).find_map(|(check, got)| {
        cases::compare(got, &check.expected, check.tolerance)
            .err()
            .map(|e| format!("binding {}: {e}", check.binding))
    })
}
