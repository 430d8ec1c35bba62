//! The worker process: candidates run in a child process that the tuner can kill.
//!
//! A hung shader cannot be cancelled from inside a process (on Vulkan, dropping the device waits
//! for the work; on GL, `submit` itself blocks), and a driver crash takes the process with it. So
//! evaluation happens in `cargo-kernelfoundry __worker`, which speaks JSON lines ([`Request`] in,
//! [`Response`] out) over stdin/stdout. The tuner side ([`WorkerProcess`]) waits for each answer
//! with a timeout; on timeout it kills the worker, on a crash it reads the exit status and the tail
//! of stderr, and in both cases the candidate scores as a level-2 failure and a fresh worker is
//! started for the next one. The protocol knows nothing about pipes, so the same messages can be
//! carried to a remote worker.
//!
//! Invariant: a candidate can cost at most its timeout plus a worker restart; it can never stop the
//! tune.

use super::{
    Ceilings, EvalReport, EvalRequest, Evaluator, PROTOCOL_VERSION, Reason, Request, Response,
};
use crate::gpu::{self, AdapterReport, AdapterSelector};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Hidden subcommand that runs the worker loop.
pub const WORKER_VERB: &str = "__worker";

/// Test hook: `crash:<text>` or `hang:<text>` makes the worker abort or hang when it evaluates a
/// candidate whose id or origin contains `<text>`; `faster:<factor>:<text>` divides the timings of
/// such a candidate by `<factor>` (the baseline's are kept), so a test that needs it to win does
/// not hinge on timing noise; `ceiling:<gbps>` clamps every copy bandwidth the worker measures to
/// `<gbps>` (a ceiling that stays low when measured again). Only the test suite sets it.
pub const FAULT_ENV: &str = "KERNELFOUNDRY_TEST_FAULT";

/// Runs the worker loop on stdin/stdout until stdin closes.
pub fn serve() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut runner: Option<super::runner::Runner> = None;
    let fault = std::env::var(FAULT_ENV).ok();
    let copy_cap: Option<f64> = fault
        .as_deref()
        .and_then(|f| f.strip_prefix("ceiling:"))
        .and_then(|v| v.parse().ok());
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
                        "this worker speaks protocol {PROTOCOL_VERSION}, the tuner {protocol}: run the same cargo-kernelfoundry version on both sides"
                    ),
                }
            }
            Ok(Request::Open { adapter, .. }) => match gpu::open(&adapter) {
                Ok(g) => {
                    let response = Response::Opened {
                        protocol: PROTOCOL_VERSION,
                        adapter: g.report.clone(),
                        timestamps: g.timestamps,
                    };
                    let mut r = super::runner::Runner::new(g);
                    if let Some(cap) = copy_cap {
                        r.clamp_copy_for_tests(cap);
                    }
                    runner = Some(r);
                    response
                }
                Err(e) => Response::Failed {
                    message: e.to_string(),
                },
            },
            Ok(Request::Evaluate(req)) => match runner.as_mut() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(runner) => {
                    inject_fault(fault.as_deref(), &req);
                    runner.speed_up_for_tests(test_speedup(
                        fault.as_deref(),
                        &req.candidate.id,
                        &req.candidate.origin,
                    ));
                    Response::Evaluated(Box::new(runner.evaluate(&req)))
                }
            },
            Ok(Request::Prepare { requests }) => match runner.as_mut() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(runner) => Response::Prepared {
                    count: runner.prepare(&requests),
                },
            },
            Ok(Request::Probe) => match runner.as_ref() {
                None => Response::Failed {
                    message: "no adapter is open".into(),
                },
                Some(runner) => match super::probe::measure(runner.gpu()) {
                    Ok(mut c) => {
                        if let Some(cap) = copy_cap {
                            for p in &mut c.copy_by_size {
                                p.gbps = p.gbps.min(cap);
                            }
                            c.copy_gbps = c.copy_gbps.min(cap);
                        }
                        Response::Probed(c)
                    }
                    Err(message) => Response::Failed { message },
                },
            },
        };
        let text = serde_json::to_string(&response).expect("responses serialize");
        writeln!(stdout, "{text}")?;
        stdout.flush()?;
        if runner.as_ref().and_then(|r| r.gpu().lost()).is_some() {
            // A lost device cannot evaluate anything else; the tuner starts a new worker.
            std::process::exit(3);
        }
    }
    Ok(())
}

/// The factor of a `faster:<factor>:<text>` fault for this request's candidate; 1 otherwise. An
/// empty `<text>` takes every candidate; the baseline itself is never sped up, so the noise
/// margin, measured by timing the baseline against itself, stays what it is.
fn test_speedup(fault: Option<&str>, id: &str, origin: &str) -> f64 {
    let Some((factor, needle)) = fault
        .and_then(|f| f.strip_prefix("faster:"))
        .and_then(|f| f.split_once(':'))
    else {
        return 1.0;
    };
    let hit = id != "baseline" && (id.contains(needle) || origin.contains(needle));
    match factor.parse::<f64>() {
        Ok(f) if hit && f.is_finite() && f > 0.0 => f,
        _ => 1.0,
    }
}

fn inject_fault(fault: Option<&str>, req: &EvalRequest) {
    let Some((kind, needle)) = fault.and_then(|f| f.split_once(':')) else {
        return;
    };
    let hit = req.candidate.id.contains(needle) || req.candidate.origin.contains(needle);
    match (kind, hit) {
        ("crash", true) => std::process::abort(),
        ("hang", true) => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        _ => {}
    }
}

struct Live {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a call to the worker produced no answer.
#[derive(Debug)]
enum CallError {
    Timeout(Duration),
    Crash(String),
}

/// The tuner's handle on a worker process.
pub struct WorkerProcess {
    /// The program and its arguments.
    command: Vec<OsString>,
    /// Extra time granted beyond each evaluation's deadline: a worker reached through a command
    /// (`--worker-cmd`) enforces the deadline itself and answers with a timeout report.
    grace: Duration,
    selector: AdapterSelector,
    live: Option<Live>,
    adapter: Option<AdapterReport>,
    timestamps: bool,
    /// Time limit for one evaluation whose request carries no deadline.
    pub timeout: Duration,
    /// Workers started after the first (after a timeout or a crash).
    pub restarts: u32,
    /// Ceilings a worker measured again during evaluations, best kept: sent with later requests
    /// (a restarted worker does not remember them) and worth storing.
    pub measured: Option<Ceilings>,
}

/// Why the worker could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The process could not be spawned.
    #[error("cannot start the evaluation worker ({exe}): {source}")]
    Spawn {
        /// The executable.
        exe: String,
        /// The error.
        source: std::io::Error,
    },
    /// The worker could not open the adapter.
    #[error("{0}")]
    Open(String),
}

impl WorkerProcess {
    /// Starts a worker running the current executable and opens `selector`'s adapter in it.
    pub fn start(selector: AdapterSelector, timeout: Duration) -> Result<Self, WorkerError> {
        let exe = std::env::current_exe().map_err(|source| WorkerError::Spawn {
            exe: "current executable".into(),
            source,
        })?;
        Self::start_with(exe, selector, timeout)
    }

    /// Starts a worker running `exe __worker`.
    pub fn start_with(
        exe: PathBuf,
        selector: AdapterSelector,
        timeout: Duration,
    ) -> Result<Self, WorkerError> {
        Self::start_command(
            vec![exe.into_os_string(), WORKER_VERB.into()],
            Duration::ZERO,
            selector,
            timeout,
        )
    }

    /// Starts a worker running `command` (program and arguments), which must speak this protocol
    /// on its stdin/stdout, e.g. `ssh gpu-box cargo-kernelfoundry worker --stdio`. Each
    /// evaluation gets `grace` beyond its deadline before the command is killed.
    pub fn start_command(
        command: Vec<OsString>,
        grace: Duration,
        selector: AdapterSelector,
        timeout: Duration,
    ) -> Result<Self, WorkerError> {
        assert!(!command.is_empty(), "a worker command names a program");
        let mut worker = WorkerProcess {
            command,
            grace,
            selector,
            live: None,
            adapter: None,
            timestamps: false,
            timeout,
            restarts: 0,
            measured: None,
        };
        worker.spawn()?;
        Ok(worker)
    }

    /// Whether the adapter supports timestamp queries.
    pub fn timestamps(&self) -> bool {
        self.timestamps
    }

    fn spawn(&mut self) -> Result<(), WorkerError> {
        let mut child = Command::new(&self.command[0])
            .args(&self.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| WorkerError::Spawn {
                exe: PathBuf::from(&self.command[0]).display().to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut t = sink.lock().expect("stderr tail");
                if t.len() >= 40 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        self.live = Some(Live {
            child,
            stdin,
            lines: rx,
            stderr: tail,
        });
        let open = Request::Open {
            protocol: PROTOCOL_VERSION,
            adapter: self.selector.clone(),
        };
        match self.call(&open, Duration::from_secs(120)) {
            Ok(Response::Opened { protocol, .. }) if protocol != PROTOCOL_VERSION => {
                Err(WorkerError::Open(format!(
                    "the worker speaks protocol {protocol}, this tuner {PROTOCOL_VERSION}: run the same cargo-kernelfoundry version on both sides"
                )))
            }
            Ok(Response::Opened {
                adapter,
                timestamps,
                ..
            }) => {
                self.adapter = Some(adapter);
                self.timestamps = timestamps;
                Ok(())
            }
            Ok(Response::Failed { message }) => Err(WorkerError::Open(message)),
            Ok(other) => Err(WorkerError::Open(format!(
                "unexpected answer to open: {other:?}"
            ))),
            Err(CallError::Timeout(t)) => Err(WorkerError::Open(format!(
                "the worker did not open the adapter within {t:?}"
            ))),
            Err(CallError::Crash(log)) => Err(WorkerError::Open(format!(
                "the worker died while opening the adapter:\n{log}"
            ))),
        }
    }

    fn call(&mut self, request: &Request, timeout: Duration) -> Result<Response, CallError> {
        let live = self
            .live
            .as_mut()
            .ok_or_else(|| CallError::Crash("no worker".into()))?;
        let text = serde_json::to_string(request).expect("requests serialize");
        if writeln!(live.stdin, "{text}")
            .and_then(|_| live.stdin.flush())
            .is_err()
        {
            return Err(CallError::Crash(self.reap()));
        }
        let result = live.lines.recv_timeout(timeout);
        match result {
            Ok(line) => serde_json::from_str(&line).map_err(|e| {
                CallError::Crash(format!("unreadable answer from the worker ({e}): {line}"))
            }),
            Err(RecvTimeoutError::Timeout) => {
                // Kill at once: the GPU work cannot be cancelled any other way.
                self.live = None;
                Err(CallError::Timeout(timeout))
            }
            Err(RecvTimeoutError::Disconnected) => Err(CallError::Crash(self.reap())),
        }
    }

    /// Collects the exit status and stderr tail of a dead worker.
    fn reap(&mut self) -> String {
        let Some(mut live) = self.live.take() else {
            return "no worker".into();
        };
        let status = live
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_else(|e| e.to_string());
        std::thread::sleep(Duration::from_millis(50));
        let tail: Vec<String> = live
            .stderr
            .lock()
            .expect("stderr tail")
            .iter()
            .cloned()
            .collect();
        let tail: Vec<&String> = tail
            .iter()
            .filter(|l| !l.contains("XDG_RUNTIME_DIR"))
            .collect();
        format!(
            "the worker process died ({status}){}{}",
            if tail.is_empty() {
                ""
            } else {
                "; last stderr lines:\n"
            },
            tail.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        )
    }

    /// Has the worker compile `requests` ahead of their evaluations (see
    /// [`super::runner::Runner::prepare`]); gives how many it compiled, 0 when it could not (a
    /// worker that died compiling is started again by the next evaluation).
    pub fn prepare(&mut self, requests: &[EvalRequest]) -> usize {
        if self.ensure_live().is_err() {
            return 0;
        }
        match self.call(
            &Request::Prepare {
                requests: requests.to_vec(),
            },
            self.timeout + self.grace,
        ) {
            Ok(Response::Prepared { count }) => count,
            _ => 0,
        }
    }

    fn ensure_live(&mut self) -> Result<(), String> {
        if self.live.is_none() {
            self.restarts += 1;
            self.spawn().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl Evaluator for WorkerProcess {
    fn adapter(&self) -> &AdapterReport {
        self.adapter
            .as_ref()
            .expect("a started worker has opened its adapter")
    }

    fn evaluate(&mut self, request: &EvalRequest) -> EvalReport {
        let id = &request.candidate.id;
        if let Err(e) = self.ensure_live() {
            return EvalReport::failed(
                id,
                Reason::Crash,
                format!("could not restart the worker: {e}"),
            );
        }
        let timeout = request
            .deadline_s
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(self.timeout, Duration::from_secs_f64)
            + self.grace;
        let mut request = request.clone();
        if let (Some(known), Some(measured)) = (&mut request.ceilings, &self.measured)
            && known.adapter.key == measured.adapter.key
        {
            known.merge(measured);
        }
        match self.call(&Request::Evaluate(Box::new(request)), timeout) {
            Ok(Response::Evaluated(report)) => {
                if let Some(c) = &report.ceilings {
                    match &mut self.measured {
                        Some(m) => m.merge(c),
                        None => self.measured = Some(c.clone()),
                    }
                }
                if report
                    .failure
                    .as_ref()
                    .is_some_and(|f| f.reason == Reason::DeviceLost)
                {
                    // The worker exits after a device loss; start a fresh one for the next candidate.
                    self.live = None;
                }
                *report
            }
            Ok(Response::Failed { message }) => EvalReport::failed(id, Reason::Runtime, message),
            Ok(other) => {
                EvalReport::failed(id, Reason::Crash, format!("unexpected answer: {other:?}"))
            }
            Err(CallError::Timeout(t)) => EvalReport::failed(
                id,
                Reason::Timeout,
                format!(
                    "no result within {:.1} s; the worker was killed (an endless loop or a far too slow kernel)",
                    t.as_secs_f64()
                ),
            ),
            Err(CallError::Crash(log)) => EvalReport::failed(id, Reason::Crash, log),
        }
    }

    /// Asks the worker to compile the whole batch first, on several threads, then evaluates the
    /// requests one by one as [`Self::evaluate`] does. The preparation changes no report: if it
    /// fails (a worker that dies compiling), each evaluation starts a worker again and compiles
    /// its own candidate, so a failure is still blamed on the candidate that causes it.
    fn evaluate_batch(&mut self, requests: &[EvalRequest]) -> Vec<EvalReport> {
        if requests.len() > 1 {
            self.prepare(requests);
        }
        requests.iter().map(|r| self.evaluate(r)).collect()
    }

    fn probe(&mut self) -> Result<Ceilings, String> {
        self.ensure_live()?;
        match self.call(&Request::Probe, Duration::from_secs(300)) {
            Ok(Response::Probed(c)) => Ok(c),
            Ok(Response::Failed { message }) => Err(message),
            Ok(other) => Err(format!("unexpected answer: {other:?}")),
            Err(CallError::Timeout(t)) => Err(format!("the probe did not finish within {t:?}")),
            Err(CallError::Crash(log)) => Err(log),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_speedup;

    #[test]
    fn the_faster_fault_divides_only_the_matching_candidates_timings() {
        let f = Some("faster:4:WG=");
        assert_eq!(test_speedup(f, "a1b2", "param(WG=64)"), 4.0);
        assert_eq!(test_speedup(f, "a1b2", "coarsen"), 1.0);
        // An empty text takes every candidate but the baseline.
        assert_eq!(test_speedup(Some("faster:4:"), "a1b2", "coarsen"), 4.0);
        assert_eq!(test_speedup(Some("faster:4:"), "baseline", "baseline"), 1.0);
        // Other faults, no fault, and factors that are not a positive number change nothing.
        assert_eq!(test_speedup(Some("crash:WG="), "a1b2", "param(WG=64)"), 1.0);
        assert_eq!(test_speedup(None, "a1b2", "param(WG=64)"), 1.0);
        for bad in ["faster:0:", "faster:-2:", "faster:x:", "faster:inf:"] {
            assert_eq!(test_speedup(Some(bad), "a1b2", "coarsen"), 1.0, "{bad}");
        }
    }
}
