//! Process exit codes, and the code of a verb's error.

use crate::gpu::GpuError;
use crate::session::SessionError;

/// Everything asked for succeeded.
pub const OK: i32 = 0;
/// The command ran, but a kernel failed to tune or a candidate was rejected.
pub const FAILED: i32 = 1;
/// Bad input: arguments, workspace, kernel names, adapter selector.
pub const USAGE: i32 = 2;
/// No GPU adapter could be used.
pub const NO_GPU: i32 = 3;

/// The exit code of a verb that failed with `e`: [`NO_GPU`] when no adapter exists (also behind
/// a session error, whose `Gpu` variant is transparent and so hides it from the error chain),
/// [`USAGE`] otherwise.
pub(crate) fn of_error(e: &anyhow::Error) -> i32 {
    let no_adapter = |g: &GpuError| matches!(g, GpuError::NoAdapter);
    if e.chain().any(|c| {
        c.downcast_ref::<GpuError>().is_some_and(no_adapter)
            || c.downcast_ref::<SessionError>()
                .is_some_and(|s| matches!(s, SessionError::Gpu(g) if no_adapter(g)))
    }) {
        NO_GPU
    } else {
        USAGE
    }
}
