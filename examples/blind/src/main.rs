//! The blind corpus as a user's crate: loads every marked kernel on the default adapter through
//! `kf-runtime` and prints `<KERNEL>: variant=<id> match=<kind>`, the variant the runtime picks
//! there (a tuned one when `kernelfoundry/` holds one for this adapter, else the baseline). The
//! variants themselves were verified against the kernels as written when `tune` accepted them;
//! `cargo kernelfoundry cache verify --manifest-path examples/blind/Cargo.toml` checks them again.
//!
//! ```text
//! cargo kernelfoundry tune --manifest-path examples/blind/Cargo.toml --time 8
//! cargo run --release -p blind
//! ```

mod kernels;

use std::process::ExitCode;

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| format!("no GPU adapter found: {e}"))?;
    let info = adapter.get_info();
    let (device, _queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("blind"),
        required_features: kf_runtime::features(&adapter),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| format!("cannot open the device: {e}"))?;
    println!("adapter: {} ({:?})", info.name, info.backend);
    for kernel in kernels::ALL {
        let loaded = kernel.load(&device, &info).map_err(|e| e.to_string())?;
        println!(
            "{}: variant={} match={}",
            kernel.name,
            loaded.variant(),
            loaded.matched()
        );
    }
    Ok(())
}
