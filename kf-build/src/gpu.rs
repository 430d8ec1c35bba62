//! Finding adapters and opening a device for tuning.
//!
//! Adapters are enumerated over every backend wgpu was built with, in wgpu's order, so an index
//! given on the command line names the same adapter in the tuner and in its worker process. The
//! device is opened with the adapter's full limits and with the optional features a candidate may
//! use (timestamp queries, subgroups, f16) when the adapter has them.
//!
//! Invariant: nothing here panics on a missing GPU; "no adapter" is a [`GpuError`] that says what
//! to install.

pub use crate::evaluate::protocol::{AdapterReport, AdapterSelector};
use kf_runtime::AdapterIdentity;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// `KERNELFOUNDRY_TIMING=wall-clock` times with the host clock after a queue sync even where the
/// adapter has timestamp queries (to compare methods, or to work around a driver's timestamps).
pub const TIMING_ENV: &str = "KERNELFOUNDRY_TIMING";

/// Why no device could be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// wgpu found no adapter at all.
    #[error(
        "no GPU adapter found; on Linux without a GPU install Mesa's software Vulkan driver (Debian/Ubuntu: `apt-get install mesa-vulkan-drivers`)"
    )]
    NoAdapter,
    /// The selector matched nothing.
    #[error(
        "no adapter matches `{selector}`; run `cargo kernelfoundry adapters` to list them:\n{available}"
    )]
    NoMatch {
        /// What the user asked for.
        selector: String,
        /// One line per adapter.
        available: String,
    },
    /// The selector matched several adapters by name.
    #[error("`{selector}` matches several adapters; pick one by index or key:\n{matches}")]
    Ambiguous {
        /// What the user asked for.
        selector: String,
        /// One line per match.
        matches: String,
    },
    /// `request_device` failed.
    #[error("cannot open a device on {adapter}: {message}")]
    Device {
        /// The adapter.
        adapter: String,
        /// wgpu's message.
        message: String,
    },
}

/// Keeps the driver's `XDG_RUNTIME_DIR is invalid or not set` noise away from the user.
///
/// Mesa ships an implicit Vulkan layer, `VK_LAYER_MESA_device_select`, that on every adapter
/// enumeration asks libwayland for a compositor to learn which GPU drives the display. Without a
/// login session (`XDG_RUNTIME_DIR` unset: containers, CI, `su`, plain remote shells) there is no
/// compositor to find, and libwayland prints that error several times per enumeration. In exactly
/// that case this re-executes the process with `NODEVICE_SELECT=1`, the switch Mesa's layer
/// manifest declares for turning it off; the layer's only job is ordering the adapters by the
/// display's choice, which cannot apply without a display. It does nothing when a session exists,
/// when the user chose a device for the layer (`MESA_VK_DEVICE_SELECT`), or when `NODEVICE_SELECT`
/// is already set (which also keeps it from re-executing twice). Adapter keys do not depend on
/// it; the worker process inherits the setting, so indices agree between the two.
///
/// Returns only when it did not re-execute (or the exec failed, which costs only the noise).
pub fn quiet_display_probe() {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        use std::os::unix::process::CommandExt;
        let set = |name: &str| std::env::var_os(name).is_some();
        if set("XDG_RUNTIME_DIR") || set("MESA_VK_DEVICE_SELECT") || set(NODEVICE_SELECT) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        let error = std::process::Command::new(&exe)
            .arg0(arg0)
            .args(args)
            .env(NODEVICE_SELECT, "1")
            .exec();
        log::debug!(
            "could not re-execute {} without the device-select layer: {error}",
            exe.display()
        );
    }
}

/// The environment variable that turns off Mesa's device-select Vulkan layer.
pub const NODEVICE_SELECT: &str = "NODEVICE_SELECT";

/// A new instance over all backends, honouring `WGPU_BACKEND` and friends.
pub fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env())
}

/// Every adapter wgpu finds, in a stable order.
pub fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
}

/// The report for `adapter` at `index`.
pub fn report(index: usize, adapter: &wgpu::Adapter) -> AdapterReport {
    let info = adapter.get_info();
    let identity = AdapterIdentity::from(&info);
    let mut limits = limits_map(&adapter.limits());
    limits.insert(
        "subgroup_min_size".into(),
        u64::from(info.subgroup_min_size),
    );
    limits.insert(
        "subgroup_max_size".into(),
        u64::from(info.subgroup_max_size),
    );
    AdapterReport {
        index,
        key: identity.key(),
        identity,
        limits,
        features: feature_names(adapter.features()),
    }
}

/// The compute limits the tuner checks and records.
pub fn limits_map(l: &wgpu::Limits) -> BTreeMap<String, u64> {
    [
        (
            "max_compute_workgroup_size_x",
            l.max_compute_workgroup_size_x as u64,
        ),
        (
            "max_compute_workgroup_size_y",
            l.max_compute_workgroup_size_y as u64,
        ),
        (
            "max_compute_workgroup_size_z",
            l.max_compute_workgroup_size_z as u64,
        ),
        (
            "max_compute_invocations_per_workgroup",
            l.max_compute_invocations_per_workgroup as u64,
        ),
        (
            "max_compute_workgroup_storage_size",
            l.max_compute_workgroup_storage_size as u64,
        ),
        (
            "max_compute_workgroups_per_dimension",
            l.max_compute_workgroups_per_dimension as u64,
        ),
        (
            "max_storage_buffer_binding_size",
            l.max_storage_buffer_binding_size,
        ),
        (
            "max_uniform_buffer_binding_size",
            l.max_uniform_buffer_binding_size,
        ),
        ("max_buffer_size", l.max_buffer_size),
        (
            "max_storage_buffers_per_shader_stage",
            l.max_storage_buffers_per_shader_stage as u64,
        ),
        ("max_bind_groups", l.max_bind_groups as u64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Feature flag names, as wgpu spells them.
pub fn feature_names(f: wgpu::Features) -> Vec<String> {
    f.iter_names().map(|(name, _)| name.to_owned()).collect()
}

/// One line describing an adapter, for lists and errors.
pub fn line(r: &AdapterReport) -> String {
    format!(
        "  [{}] {} ({}, {}) key {}",
        r.index, r.identity.name, r.identity.backend, r.identity.device_type, r.key
    )
}

/// Picks an adapter by index, key or name substring (case-insensitive); the default is wgpu's
/// high-performance choice.
pub fn select(
    instance: &wgpu::Instance,
    selector: &AdapterSelector,
) -> Result<(usize, wgpu::Adapter), GpuError> {
    let all = adapters(instance);
    if all.is_empty() {
        return Err(GpuError::NoAdapter);
    }
    let reports: Vec<AdapterReport> = all.iter().enumerate().map(|(i, a)| report(i, a)).collect();
    let available = || reports.iter().map(line).collect::<Vec<_>>().join("\n");
    let Some(sel) = selector
        .0
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        let preferred =
            pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            }));
        let idx = preferred
            .ok()
            .and_then(|p| {
                let key = AdapterIdentity::from(&p.get_info()).key();
                reports.iter().position(|r| r.key == key)
            })
            .unwrap_or(0);
        return Ok((
            idx,
            all.into_iter().nth(idx).expect("index from enumeration"),
        ));
    };
    let matches: Vec<usize> = if let Ok(i) = sel.parse::<usize>() {
        (i < all.len()).then_some(i).into_iter().collect()
    } else if let Some(i) = reports
        .iter()
        .position(|r| r.key.as_str() == sel.to_ascii_lowercase())
    {
        vec![i]
    } else {
        let needle = sel.to_lowercase();
        reports
            .iter()
            .filter(|r| {
                r.identity.name.to_lowercase().contains(&needle) || r.identity.backend == needle
            })
            .map(|r| r.index)
            .collect()
    };
    match matches.as_slice() {
        [] => Err(GpuError::NoMatch {
            selector: sel.to_owned(),
            available: available(),
        }),
        [i] => Ok((*i, all.into_iter().nth(*i).expect("index from enumeration"))),
        many => Err(GpuError::Ambiguous {
            selector: sel.to_owned(),
            matches: many
                .iter()
                .map(|&i| line(&reports[i]))
                .collect::<Vec<_>>()
                .join("\n"),
        }),
    }
}

/// An open device for tuning.
pub struct Gpu {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// Its report.
    pub report: AdapterReport,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Whether passes can carry timestamp writes.
    pub timestamps: bool,
    /// Errors raised outside any error scope (e.g. at submit); drained after every run.
    pub uncaptured: Arc<Mutex<Vec<String>>>,
    /// Set when the device is lost.
    pub lost: Arc<Mutex<Option<String>>>,
}

/// Features a candidate may use, requested when the adapter offers them.
fn wanted_features() -> wgpu::Features {
    wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | kf_runtime::TUNED_FEATURES
}

/// Opens the selected adapter's device with full limits.
pub fn open(selector: &AdapterSelector) -> Result<Gpu, GpuError> {
    let instance = instance();
    let (index, adapter) = select(&instance, selector)?;
    let report = report(index, &adapter);
    let features = adapter.features() & wanted_features();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("kernelfoundry"),
        required_features: features,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| GpuError::Device {
        adapter: report.identity.describe(),
        message: e.to_string(),
    })?;
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let sink = uncaptured.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        sink.lock().expect("error sink").push(e.to_string());
    }));
    let lost = Arc::new(Mutex::new(None));
    let lost_sink = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        *lost_sink.lock().expect("lost flag") = Some(format!("{reason:?}: {message}"));
    });
    Ok(Gpu {
        timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY)
            && std::env::var(TIMING_ENV).map_or(true, |v| v != "wall-clock"),
        adapter,
        report,
        device,
        queue,
        uncaptured,
        lost,
    })
}

impl Gpu {
    /// The device's limits.
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    /// Takes the errors raised outside error scopes since the last call.
    pub fn take_uncaptured(&self) -> Vec<String> {
        std::mem::take(&mut *self.uncaptured.lock().expect("error sink"))
    }

    /// Why the device was lost, if it was.
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().expect("lost flag").clone()
    }

    /// Whether this is a CPU implementation (lavapipe, llvmpipe, WARP).
    pub fn is_cpu(&self) -> bool {
        self.report.identity.device_type == "Cpu"
    }
}
