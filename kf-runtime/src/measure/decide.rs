//! The decision of selection by measurement, apart from the GPU: interleaved timing rounds within
//! a budget, the noise-aware choice, and the correctness check of the winner.
//!
//! A [`Bench`] runs programs (index 0 is the baseline, the others the candidate variants) and
//! checks one against the baseline; [`decide`] drives it. Each round runs every program once, in
//! an order rotated every round so no program always runs first; a warm-up round is discarded
//! and estimates what a round costs, and rounds stop when the next one would overrun the budget.
//! A candidate's speedup is the median over rounds of baseline time / candidate time (the two ran
//! back to back, so drift cancels), its noise the half interquartile range of those ratios
//! relative to their median, at least [`MIN_NOISE`]. The fastest candidate is used only if its
//! speedup exceeds 1 + noise *and* its outputs match the baseline's on the check shape;
//! otherwise the baseline runs.
//!
//! Invariant: the baseline is the answer to every doubt — too few rounds, a tie within the noise,
//! an error, a mismatch. A slower variant is never chosen, whatever the measurements say.

use std::time::Duration;

/// The smallest relative noise assumed, whatever the rounds show: the verdict's margin floor.
pub const MIN_NOISE: f64 = crate::verdict::MIN_MARGIN;
/// Timed rounds needed (after the warm-up) before a candidate can be chosen.
pub const MIN_ROUNDS: u32 = 3;
/// Timed rounds at most, however fast the programs are.
pub const MAX_ROUNDS: u32 = 31;

/// Runs and checks programs for [`decide`].
pub trait Bench {
    /// Runs every program once, in `order`; returns each program's time in nanoseconds,
    /// indexed by program (not by position in `order`).
    fn round(&mut self, order: &[usize]) -> Result<Vec<f64>, String>;
    /// Compares program `idx`'s outputs with the baseline's on the small check shape.
    fn check(&mut self, idx: usize) -> Result<(), String>;
}

/// What measurement concluded.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The chosen candidate (an index ≥ 1), or `None` for the baseline.
    pub pick: Option<usize>,
    /// Why, in one sentence.
    pub reason: String,
    /// Timed rounds (the warm-up not counted).
    pub rounds: u32,
    /// Program runs, warm-up included.
    pub runs: u32,
    /// Median time of each program over the timed rounds, in nanoseconds.
    pub median_ns: Vec<f64>,
    /// Speedup over the baseline of the fastest candidate (1.0 if none was timed).
    pub speedup: f64,
    /// The noise that speedup had to clear.
    pub noise: f64,
    /// Whether another start would conclude the same (false after an error, which may be
    /// transient): only a conclusive decision is remembered.
    pub conclusive: bool,
}

use crate::verdict::beats;
pub use crate::verdict::median;
#[cfg(test)]
use crate::verdict::quantile;

/// Times `n_programs` programs on `bench` within `budget` and chooses one (see the module
/// docs). `elapsed` reads the time spent since measurement started.
pub fn decide(
    bench: &mut impl Bench,
    n_programs: usize,
    budget: Duration,
    mut elapsed: impl FnMut() -> Duration,
) -> Decision {
    let mut d = Decision {
        pick: None,
        reason: String::new(),
        rounds: 0,
        runs: 0,
        median_ns: vec![0.0; n_programs],
        speedup: 1.0,
        noise: MIN_NOISE,
        conclusive: true,
    };
    if n_programs < 2 {
        d.reason = "no variant to measure".into();
        return d;
    }
    let order: Vec<usize> = (0..n_programs).collect();
    if let Err(e) = bench.round(&order) {
        d.reason = format!("measurement failed: {e}");
        d.conclusive = false;
        return d;
    }
    d.runs += n_programs as u32;
    let warmup = elapsed();
    if warmup > budget {
        d.reason = format!(
            "one round of {n_programs} programs took {:.1} ms, over the budget of {:.1} ms",
            warmup.as_secs_f64() * 1e3,
            budget.as_secs_f64() * 1e3
        );
        return d;
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n_programs];
    let mut last_round = warmup;
    let mut spent = warmup;
    while d.rounds < MAX_ROUNDS && spent + last_round <= budget {
        let mut rotated = order.clone();
        rotated.rotate_left((d.rounds as usize + 1) % n_programs);
        let times = match bench.round(&rotated) {
            Ok(t) if t.len() == n_programs => t,
            Ok(t) => {
                d.reason = format!(
                    "measurement failed: a round timed {} of {n_programs} programs",
                    t.len()
                );
                d.conclusive = false;
                return d;
            }
            Err(e) => {
                d.reason = format!("measurement failed: {e}");
                d.conclusive = false;
                return d;
            }
        };
        d.runs += n_programs as u32;
        d.rounds += 1;
        for (s, t) in samples.iter_mut().zip(times) {
            s.push(t);
        }
        let now = elapsed();
        last_round = now.saturating_sub(spent);
        spent = now;
    }
    d.median_ns = samples.iter().map(|s| median(s)).collect();
    if d.rounds < MIN_ROUNDS {
        d.reason = format!(
            "the budget of {:.1} ms allowed {} timed rounds, fewer than the {MIN_ROUNDS} a choice needs",
            budget.as_secs_f64() * 1e3,
            d.rounds
        );
        return d;
    }
    // Per candidate: the median of the per-round ratios, and their spread.
    let mut best: Option<(usize, f64, f64)> = None;
    for c in 1..n_programs {
        let ratios: Vec<f64> = samples[0]
            .iter()
            .zip(&samples[c])
            .filter(|(b, v)| **b > 0.0 && **v > 0.0)
            .map(|(b, v)| b / v)
            .collect();
        if ratios.len() < MIN_ROUNDS as usize {
            continue;
        }
        let (speedup, spread) = crate::verdict::median_and_spread(&ratios);
        let noise = crate::verdict::margin([spread]);
        if best.is_none_or(|(_, s, _)| speedup > s) {
            best = Some((c, speedup, noise));
        }
    }
    let Some((c, speedup, noise)) = best else {
        d.reason = "no candidate produced usable timings".into();
        return d;
    };
    d.speedup = speedup;
    d.noise = noise;
    if !beats(speedup, noise) {
        d.reason = format!(
            "the fastest variant measured {speedup:.2}x over the baseline, within the noise ({:.0} %)",
            noise * 100.0
        );
        return d;
    }
    if let Err(e) = bench.check(c) {
        d.reason = format!(
            "the fastest variant ({speedup:.2}x) computes other values than the baseline: {e}"
        );
        return d;
    }
    d.pick = Some(c);
    d.reason = format!(
        "fastest of {} variants by measurement: {speedup:.2}x over the baseline (noise {:.0} %, {} rounds), outputs match the baseline",
        n_programs - 1,
        noise * 100.0,
        d.rounds
    );
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Programs with fixed times, a fake clock advanced by what each round "took", and a verdict
    /// per program for the check.
    struct Fake {
        times: Vec<f64>,
        /// Per round (cyclically), a factor program 1 runs faster by than its time says.
        factors: Vec<f64>,
        wrong: Vec<usize>,
        fail_round: Option<u32>,
        rounds: u32,
        clock_ns: Rc<Cell<f64>>,
        checked: Vec<usize>,
    }

    fn fake(times: &[f64]) -> Fake {
        Fake {
            times: times.to_vec(),
            factors: vec![1.0],
            wrong: vec![],
            fail_round: None,
            rounds: 0,
            clock_ns: Rc::new(Cell::new(0.0)),
            checked: vec![],
        }
    }

    impl Bench for Fake {
        fn round(&mut self, order: &[usize]) -> Result<Vec<f64>, String> {
            self.rounds += 1;
            if self.fail_round == Some(self.rounds) {
                return Err("device lost".into());
            }
            let factor = self.factors[self.rounds as usize % self.factors.len()];
            let mut out = vec![0.0; self.times.len()];
            for &p in order {
                out[p] = if p == 1 {
                    self.times[p] / factor
                } else {
                    self.times[p]
                };
                self.clock_ns.set(self.clock_ns.get() + out[p]);
            }
            Ok(out)
        }

        fn check(&mut self, idx: usize) -> Result<(), String> {
            self.checked.push(idx);
            if self.wrong.contains(&idx) {
                Err("3 values differ".into())
            } else {
                Ok(())
            }
        }
    }

    fn run(f: &mut Fake, budget_ms: f64) -> Decision {
        let clock = f.clock_ns.clone();
        let n = f.times.len();
        decide(f, n, Duration::from_secs_f64(budget_ms / 1e3), || {
            Duration::from_secs_f64(clock.get() / 1e9)
        })
    }

    const MS: f64 = 1e6;

    #[test]
    fn the_fastest_correct_variant_beyond_the_noise_wins() {
        let mut f = fake(&[4.0 * MS, 1.0 * MS, 2.0 * MS]);
        let d = run(&mut f, 50.0);
        assert_eq!(d.pick, Some(1), "{d:?}");
        assert!((d.speedup - 4.0).abs() < 1e-9, "{d:?}");
        assert!(d.rounds >= MIN_ROUNDS && d.conclusive);
        assert_eq!(f.checked, vec![1], "only the winner is checked");
        assert!(d.reason.contains("4.00x"), "{}", d.reason);
        assert_eq!(d.median_ns, vec![4.0 * MS, 1.0 * MS, 2.0 * MS]);
        // The budget holds: 7 ms per round, 50 ms in all, the warm-up included.
        assert_eq!((d.rounds, d.runs), (6, 3 * 7), "{d:?}");
    }

    #[test]
    fn a_variant_with_wrong_values_is_never_picked() {
        let mut f = fake(&[4.0 * MS, 1.0 * MS, 2.0 * MS]);
        f.wrong = vec![1];
        let d = run(&mut f, 50.0);
        assert_eq!(d.pick, None, "{d:?}");
        assert!(d.reason.contains("computes other values"), "{}", d.reason);
        assert!(d.conclusive);
    }

    #[test]
    fn ties_and_slower_variants_keep_the_baseline() {
        // 1 % faster is within the 2 % floor of the noise.
        let d = run(&mut fake(&[1.01 * MS, 1.0 * MS]), 50.0);
        assert_eq!(d.pick, None, "{d:?}");
        assert!(d.reason.contains("within the noise"), "{}", d.reason);
        // Slower variants are never chosen.
        let d = run(&mut fake(&[1.0 * MS, 1.5 * MS, 3.0 * MS]), 50.0);
        assert_eq!(d.pick, None, "{d:?}");
        // A median 10 % faster, but rounds spread from 0.7x to 1.5x: inside the measured noise.
        let mut noisy = fake(&[1.0 * MS, 1.0 * MS]);
        noisy.factors = vec![0.7, 0.9, 1.1, 1.3, 1.5];
        let d = run(&mut noisy, 200.0);
        assert_eq!(d.pick, None, "{d:?}");
        assert!((d.speedup - 1.1).abs() < 0.05 && d.noise > 0.15, "{d:?}");
        // The same median with little spread is a win.
        let mut steady = fake(&[1.0 * MS, 1.0 * MS]);
        steady.factors = vec![1.08, 1.1, 1.12];
        let d = run(&mut steady, 200.0);
        assert_eq!(d.pick, Some(1), "{d:?}");
    }

    #[test]
    fn a_budget_too_small_or_an_error_keeps_the_baseline() {
        // The warm-up round alone overruns the budget.
        let d = run(&mut fake(&[40.0 * MS, 20.0 * MS]), 50.0);
        assert_eq!(d.pick, None);
        assert!(d.reason.contains("over the budget"), "{}", d.reason);
        assert!(d.conclusive);
        // Room for fewer rounds than a choice needs: 16 ms a round, 50 ms in all.
        let d = run(&mut fake(&[14.0 * MS, 2.0 * MS]), 50.0);
        assert_eq!((d.pick, d.rounds), (None, 2), "{d:?}");
        assert!(d.reason.contains("fewer than"), "{}", d.reason);
        // A failing round: baseline, and not worth remembering.
        let mut failing = fake(&[4.0 * MS, 1.0 * MS]);
        failing.fail_round = Some(3);
        let d = run(&mut failing, 50.0);
        assert_eq!(d.pick, None);
        assert!(!d.conclusive && d.reason.contains("device lost"), "{d:?}");
        // Nothing to measure.
        let d = run(&mut fake(&[1.0 * MS]), 50.0);
        assert_eq!((d.pick, d.runs), (None, 0));
    }

    #[test]
    fn medians_and_quantiles() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
        assert_eq!(median(&[]), 0.0);
    }
}
