//! `cargo kernelfoundry worker --stdio`: the far end of `tune --worker-cmd`, for one remote GPU
//! machine without any infrastructure (`--worker-cmd "ssh gpu-box cargo-kernelfoundry worker
//! --stdio"`).
//!
//! It speaks the worker protocol ([`Request`] in, [`Response`] out, JSON lines) on stdin/stdout,
//! and runs every request in a local [`WorkerProcess`] on its own machine. That is the point of
//! the relay: killing the tuner's end of an ssh connection does not reliably kill the process at
//! the other end, so the deadline of each evaluation is enforced here, next to the GPU, where a
//! hung candidate's process can be killed; the tuner gets an ordinary timeout report.
//!
//! Invariant: stdout carries only protocol lines; when stdin closes, the local worker process is
//! killed and the relay exits.

use crate::evaluate::process::WorkerProcess;
use crate::evaluate::{AdapterSelector, Evaluator, PROTOCOL_VERSION, Request, Response};
use std::io::{BufRead, Write};
use std::time::Duration;

/// Serves the worker protocol on stdin/stdout through a local worker process. `selector` is used
/// when the tuner's `open` names no adapter; `timeout` bounds an evaluation without a deadline.
pub fn serve(selector: AdapterSelector, timeout: Duration) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut worker: Option<WorkerProcess> = None;
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Err(e) => Response::Failed {
                message: format!("malformed request: {e}"),
            },
            Ok(Request::Open { protocol, .. }) if protocol != PROTOCOL_VERSION => {
                Response::Failed {
                    message: format!(
                        "the worker at the other end speaks protocol {PROTOCOL_VERSION} (kf-build {}), this tuner {protocol}: run the same cargo-kernelfoundry version on both sides",
                        env!("CARGO_PKG_VERSION")
                    ),
                }
            }
            Ok(Request::Open { adapter, .. }) => {
                let chosen = if adapter.0.is_some() {
                    adapter
                } else {
                    selector.clone()
                };
                worker = None;
                match WorkerProcess::start(chosen, timeout) {
                    Ok(w) => {
                        let response = Response::Opened {
                            protocol: PROTOCOL_VERSION,
                            adapter: w.adapter().clone(),
                            timestamps: w.timestamps(),
                        };
                        worker = Some(w);
                        response
                    }
                    Err(e) => Response::Failed {
                        message: e.to_string(),
                    },
                }
            }
            Ok(Request::Evaluate(request)) => match worker.as_mut() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(w) => Response::Evaluated(Box::new(w.evaluate(&request))),
            },
            Ok(Request::Prepare { requests }) => match worker.as_mut() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(w) => Response::Prepared {
                    count: w.prepare(&requests),
                },
            },
            Ok(Request::Probe) => match worker.as_mut() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(w) => match w.probe() {
                    Ok(c) => Response::Probed(c),
                    Err(message) => Response::Failed { message },
                },
            },
        };
        let text = serde_json::to_string(&response).expect("responses serialize");
        writeln!(stdout, "{text}")?;
        stdout.flush()?;
    }
    Ok(())
}
