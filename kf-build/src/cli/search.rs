//! `tune`'s option groups: the search settings, parsed into the one options object of a search
//! ([`crate::search::Config`], which `run.json` records and `--resume` reads back instead of these
//! flags), and the LLM options.

use crate::search::{Config, StrategyKind};
use crate::tune::llm::LlmFlags;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// `tune`'s search settings: what `run.json` records and `--resume` reads back.
#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// Candidate evaluations per kernel (the final verification of the best is extra). Given
    /// alone, it is the search's only limit; otherwise it caps a search limited by time
    /// (default cap: 50 per second of --time, 1000 for the default 20 s).
    #[arg(long, value_name = "N")]
    pub(crate) budget: Option<u64>,
    /// How to search. `qd`: evolve the kernel's code (rewrite operators and parameters, steered by
    /// a quality-diversity archive with gradients). `greedy`: build on the best so far
    /// that has a rewrite left to try.
    /// `random`: build on a random correct candidate. `exhaustive`: only the template parameters,
    /// every point within the budget. `auto`: the template parameters, exhaustively when they fit
    /// the budget, by successive halving otherwise.
    #[arg(long, default_value = "qd", value_parser = strategy_parser())]
    pub(crate) strategy: StrategyKind,
    /// Seconds of search per kernel (the final verification is extra). Default: 20, unless
    /// --budget is given alone; the evaluations are then capped by --budget (default: 50 per
    /// second).
    #[arg(long = "time", value_name = "SECS", value_parser = super::ablate::positive_secs)]
    pub(crate) time: Option<f64>,
    /// Turn off gradient-informed steering of the `qd` search.
    #[arg(long)]
    pub(crate) no_gradients: bool,
    /// Only these offline rewrite operators in the evolution strategies, e.g.
    /// `--operators param,unroll` (default: all; `list` them with an unknown name).
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    pub(crate) operators: Option<Vec<String>>,
    /// Seconds one candidate evaluation may take before its worker is killed. Default: ten times
    /// the baseline's evaluation, at least 10 s.
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// Seed of every random choice of the search (same seed, same candidates).
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub(crate) seed: u64,
}

impl SearchArgs {
    /// The settings as the search takes them.
    pub(crate) fn config(&self) -> Config {
        let (budget, time_s) = limits(self.budget, self.time);
        Config {
            budget,
            seed: self.seed,
            timeout: self.timeout,
            strategy: self.strategy,
            time_s,
            gradients: !self.no_gradients,
            operators: self.operators.clone(),
            ..Config::default()
        }
    }
}

/// Seconds of search per kernel when neither `--time` nor `--budget` is given.
pub(crate) const DEFAULT_TIME_S: f64 = 20.0;
/// The evaluations per second of search that a search limited by time may spend at most,
/// unless `--budget` says.
///
/// Why a rate: the cap must not be what ends a search that the user limited by time. An
/// evaluation took 10–100 ms on an H100 (BENCHMARKS.md, "The top-up before each timing"), so
/// a fixed cap of 200 would end a 20 s search of a GEMV (94.7 evaluations a second) after about
/// 2 s; 50 a second binds only on kernels whose evaluations take under 20 ms, and still bounds
/// the run's journal.
pub(crate) const DEFAULT_CAP_PER_S: f64 = 50.0;

/// The default cap of a search limited to `secs` seconds: [`DEFAULT_CAP_PER_S`] per second, at
/// least one evaluation.
fn default_cap(secs: f64) -> u64 {
    ((secs * DEFAULT_CAP_PER_S).ceil() as u64).max(1)
}

/// The search's limits, (evaluations, seconds), from `--budget` and `--time`: time by default,
/// with evaluations as a cap; a budget given alone is the only limit (as a search that must
/// spend exactly so many evaluations, e.g. to compare runs, wants).
fn limits(budget: Option<u64>, time: Option<f64>) -> (u64, Option<f64>) {
    match (budget, time) {
        (None, None) => (default_cap(DEFAULT_TIME_S), Some(DEFAULT_TIME_S)),
        (Some(b), t) => (b, t),
        (None, Some(t)) => (default_cap(t), Some(t)),
    }
}

/// `--strategy`: one of the search strategies, by the name the run and the entry record.
fn strategy_parser() -> impl TypedValueParser<Value = StrategyKind> {
    let all = [
        StrategyKind::Qd,
        StrategyKind::Greedy,
        StrategyKind::Random,
        StrategyKind::Exhaustive,
        StrategyKind::Auto,
    ];
    PossibleValuesParser::new(all.map(StrategyKind::as_str)).map(move |s| {
        *all.iter()
            .find(|k| k.as_str() == s)
            .expect("a possible value")
    })
}

/// `tune`'s LLM options.
#[derive(Args, Debug)]
pub(crate) struct LlmArgs {
    /// Ask an LLM for new kernels too (any OpenAI-compatible endpoint: KERNELFOUNDRY_LLM_URL,
    /// KERNELFOUNDRY_LLM_MODEL, KERNELFOUNDRY_LLM_API_KEY or OPENAI_API_KEY, or
    /// [workspace.metadata.kernelfoundry.llm] in Cargo.toml). Needs an evolution strategy
    /// (qd, greedy or random).
    #[arg(long, help_heading = "LLM")]
    pub(crate) llm: bool,
    /// Do not ask an LLM, even where the configuration enables it.
    #[arg(long, help_heading = "LLM", conflicts_with = "llm")]
    pub(crate) no_llm: bool,
    /// Answer LLM requests only from the response cache of earlier runs; send nothing (implies
    /// --llm). A request not in the cache gets no answer (the summary counts them).
    #[arg(long, help_heading = "LLM", conflicts_with = "no_llm")]
    pub(crate) llm_replay_only: bool,
    /// With --llm: print the first prompt the tune would send, and send nothing.
    #[arg(long, help_heading = "LLM")]
    pub(crate) dry_run: bool,
}

impl LlmArgs {
    /// Whether and how the tune asks an LLM.
    pub(crate) fn flags(&self) -> LlmFlags {
        LlmFlags {
            llm: self.llm,
            no_llm: self.no_llm,
            replay_only: self.llm_replay_only,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_is_limited_by_time_unless_a_budget_is_given_alone() {
        assert_eq!(limits(None, None), (1000, Some(DEFAULT_TIME_S)));
        // The cap grows with the time, so it never ends a longer search early.
        assert_eq!(limits(None, Some(5.0)), (250, Some(5.0)));
        assert_eq!(limits(None, Some(60.0)), (3000, Some(60.0)));
        assert_eq!(limits(None, Some(0.001)), (1, Some(0.001)));
        assert_eq!(limits(Some(12), None), (12, None));
        assert_eq!(limits(Some(12), Some(5.0)), (12, Some(5.0)));
    }
}
