//! `cargo kernelfoundry worker`: evaluate candidates for tuners on other machines, either through a
//! broker (`--broker URL`, see [`crate::remote::broker`]) or on stdin/stdout for one tuner
//! (`--stdio`, what `tune --worker-cmd` runs, see [`crate::remote::relay`]).

use super::{AdapterArgs, exit};
use anyhow::Context;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    adapter: AdapterArgs,
    /// The broker to take evaluations from: `nats://[user:password@]host[:port]`, `tls://…` for
    /// TLS. Credentials may come from KERNELFOUNDRY_BROKER_USER and
    /// KERNELFOUNDRY_BROKER_PASSWORD (or KERNELFOUNDRY_BROKER_TOKEN) instead; they are never
    /// printed.
    #[arg(
        long,
        value_name = "URL",
        env = "KERNELFOUNDRY_BROKER",
        hide_env_values = true
    )]
    broker: Option<String>,
    /// Serve one tuner on stdin/stdout instead (what `tune --worker-cmd` runs, e.g. over ssh).
    #[arg(long)]
    stdio: bool,
    /// This worker's name on the broker. Default: host name and process id.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Seconds an evaluation stays with a worker that stopped answering before the broker hands
    /// it to another worker (a working worker extends it). Applies when this worker is the first
    /// of its adapter key on the broker.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    ack_wait: f64,
    /// Times an evaluation is handed to a worker to run; one whose workers all died before
    /// answering is then recorded as a crash. Applies when this worker is the first of its
    /// adapter key on the broker.
    #[arg(long, value_name = "N", default_value_t = 3)]
    max_deliveries: u32,
    /// Seconds an evaluation may take when its request sets no deadline.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
}

pub(crate) fn run(args: WorkerArgs) -> anyhow::Result<i32> {
    let timeout = Duration::from_secs_f64(args.timeout.max(1.0));
    if args.stdio {
        crate::remote::relay::serve(args.adapter.selector(), timeout)
            .context("the stdio worker stopped")?;
        return Ok(exit::OK);
    }
    let Some(url) = args.broker.as_deref() else {
        anyhow::bail!("say where to take evaluations from: --broker URL, or --stdio");
    };
    serve_broker(&args, url, timeout)
}

#[cfg(feature = "broker")]
fn serve_broker(args: &WorkerArgs, url: &str, timeout: Duration) -> anyhow::Result<i32> {
    use crate::evaluate::Evaluator;
    use crate::evaluate::process::WorkerProcess;
    use crate::remote::broker::serve::{WorkerEvent, WorkerOptions};
    let address =
        crate::remote::broker::BrokerAddress::parse(url, &|name| std::env::var(name).ok())?;
    crate::gpu::select(&crate::gpu::instance(), &args.adapter.selector())?;
    let mut local = WorkerProcess::start(args.adapter.selector(), timeout)
        .context("cannot start the evaluation worker")?;
    let adapter = local.adapter().clone();
    eprintln!(
        "worker on [{}] {} (key {}); measuring copy bandwidth and FMA rate …",
        adapter.index,
        adapter.identity.describe(),
        adapter.key
    );
    let ceilings = match local.probe() {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("warning: could not measure the adapter's ceilings: {e}");
            None
        }
    };
    let options = WorkerOptions {
        name: args
            .name
            .clone()
            .unwrap_or_else(crate::remote::broker::default_worker_name),
        ack_wait: Duration::from_secs_f64(args.ack_wait.max(1.0)),
        max_deliveries: args.max_deliveries.max(1),
    };
    crate::remote::broker::serve::serve(address, local, ceilings, &options, |event| match event {
        WorkerEvent::Ready {
            announcement,
            address,
            ack_wait,
        } => eprintln!(
            "worker {} serving adapter key {} on {address} (ack wait {:.0} s, at most {} run(s) per evaluation); waiting for evaluations",
            announcement.worker,
            announcement.adapter.key,
            ack_wait.as_secs_f64(),
            announcement.max_deliveries,
        ),
        WorkerEvent::Took {
            id,
            candidate,
            kernel,
            delivery,
        } => eprintln!("took {id}: {kernel} {candidate} (delivery {delivery})"),
        WorkerEvent::Reported {
            id,
            report,
            seconds,
        } => eprintln!(
            "reported {id}: level {}{} in {seconds:.1} s",
            report.fitness.level,
            report
                .failure
                .as_ref()
                .map(|f| format!(" ({})", f.reason))
                .unwrap_or_default()
        ),
        WorkerEvent::GaveUp {
            id,
            candidate,
            delivery,
        } => eprintln!(
            "gave up {id}: {candidate} reached delivery {delivery}; recorded as a crash without running it"
        ),
        WorkerEvent::Trouble(message) => eprintln!("warning: {message}"),
        WorkerEvent::Stopping => eprintln!("worker stopping"),
    })?;
    Ok(exit::OK)
}

#[cfg(not(feature = "broker"))]
fn serve_broker(_: &WorkerArgs, _: &str, _: Duration) -> anyhow::Result<i32> {
    anyhow::bail!("this build has no broker client (kf-build's `broker` feature is off)")
}
