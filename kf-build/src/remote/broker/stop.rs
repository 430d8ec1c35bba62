//! Stopping a broker worker on SIGTERM or SIGINT in whatever it is doing.
//!
//! Why every await races the signal: while the broker is gone, the NATS client sits in its
//! reconnect back-off and stops reading its command channel; once that channel is full, every
//! publish, request or acknowledgement waits until the broker is back, however long that is, and
//! no client timeout covers the wait (a worker that kept fetching got there within a minute or
//! two). A worker that
//! looked at the signal only between calls could then not be stopped short of SIGKILL. So the
//! signal handler sets a flag that any await can race ([`Stop::until`]), and what a worker still
//! says on its way out (handing back a request, leaving the fleet) is bounded by [`FAREWELL`] and
//! skipped while the client is reconnecting.

use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;

/// How long a stopping worker spends on its last words to a connected broker, all together
/// (a worker whose broker is gone says nothing more).
pub(crate) const FAREWELL: Duration = Duration::from_secs(1);

/// A flag set once, by SIGTERM or SIGINT (or never).
#[derive(Clone)]
pub(crate) struct Stop {
    flag: watch::Receiver<bool>,
}

impl Stop {
    /// Never set: the tuner's side, whose Ctrl-C is handled elsewhere.
    pub(crate) fn never() -> Stop {
        let (_, flag) = watch::channel(false);
        Stop { flag }
    }

    /// Set by the first SIGTERM or SIGINT from now on. Must run inside the runtime, which keeps
    /// the listening task; the handlers are installed before this returns, so no signal between
    /// this call and the first await is lost.
    pub(crate) fn on_signals() -> std::io::Result<Stop> {
        let (set, flag) = watch::channel(false);
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate())?;
            let mut int = signal(SignalKind::interrupt())?;
            tokio::spawn(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                let _ = set.send(true);
                // Keep the handlers installed (a second signal must not kill the farewell).
                std::future::pending::<()>().await;
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = set.send(true);
            }
            std::future::pending::<()>().await;
        });
        Ok(Stop { flag })
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        *self.flag.borrow()
    }

    /// Resolves once the flag is set; never when it cannot be set any more.
    pub(crate) async fn requested(&self) {
        let mut flag = self.flag.clone();
        if flag.wait_for(|set| *set).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// `work`'s output, or `None` when the flag is set first (then `work` is dropped).
    pub(crate) async fn until<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            _ = self.requested() => None,
            out = work => Some(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_stop_that_is_never_set_lets_work_finish() {
        let stop = Stop::never();
        assert_eq!(rt().block_on(stop.until(async { 7 })), Some(7));
        assert!(!stop.is_set());
    }

    #[test]
    fn a_set_stop_ends_work_that_would_never_finish() {
        let (set, flag) = watch::channel(false);
        let stop = Stop { flag };
        let rt = rt();
        let waiting = stop.clone();
        let out = rt.block_on(async move {
            let work =
                tokio::spawn(
                    async move { waiting.until(std::future::pending::<()>()).await.is_none() },
                );
            set.send(true).unwrap();
            work.await.unwrap()
        });
        assert!(out, "the pending work was abandoned");
        assert!(stop.is_set());
        // Once set, it stays set: later work is not started.
        assert_eq!(rt.block_on(stop.until(async { 1 })), None);
    }
}
