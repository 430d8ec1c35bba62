//! Gradient statistics on synthetic transitions.

use super::*;
use crate::evaluate::Fitness;
use crate::evolve::archive::Individual;

fn cell(s: &str) -> Descriptor {
    s.parse().expect("a descriptor")
}

fn t(from: &str, to: &str, delta: f64, outcome: Outcome, generation: u32) -> Transition {
    Transition {
        parent: cell(from),
        child: cell(to),
        delta,
        outcome,
        generation,
    }
}

#[track_caller]
fn near(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "{actual} is not {expected}"
    );
}

#[test]
fn fitness_gradient_has_the_sign_of_what_paid() {
    let mut g = GradientTracker::default();
    for i in 0..3 {
        g.record(t("m1c1p1w1", "m2c1p1w1", 2.0, Outcome::Improvement, i));
        g.record(t("m1c1p1w1", "m1c2p1w1", -1.0, Outcome::Regression, i));
        // Lowering memory lost fitness: also evidence that memory up is good.
        g.record(t("m1c1p1w1", "m0c1p1w1", -2.0, Outcome::Regression, i));
        // Same cell: changes no dimension, so it is not in ∂F.
        g.record(t("m1c1p1w1", "m1c1p1w1", 5.0, Outcome::Improvement, i));
        // Another cell's transitions do not count here.
        g.record(t("m0c0p0w0", "m0c1p0w0", -4.0, Outcome::Regression, i));
    }
    let grad = g.gradient(cell("m1c1p1w1"), &BTreeMap::new(), 2);
    assert!(grad.fitness[0] > 0.0);
    assert!(grad.fitness[1] < 0.0);
    assert_eq!((grad.fitness[2], grad.fitness[3]), (0.0, 0.0));
    // Equal weights per generation: memory = mean of +2 and +2 over matching ages.
    near(grad.fitness[0], 2.0);
    near(grad.fitness[1], -1.0);
    assert_eq!(grad.departures, 12);
}

#[test]
fn older_transitions_weigh_less() {
    let mut g = GradientTracker::default();
    g.record(t("m0c0p0w0", "m1c0p0w0", 1.0, Outcome::Improvement, 0));
    g.record(t("m0c0p0w0", "m1c0p0w0", -1.0, Outcome::Regression, 10));
    let grad = g.gradient(cell("m0c0p0w0"), &BTreeMap::new(), 10);
    let old = 0.95f64.powi(10);
    near(grad.fitness[0], (old - 1.0) / (old + 1.0));
    // Seen from the old transition's own time, both weigh the same (the future one has age 0).
    let grad = g.gradient(cell("m0c0p0w0"), &BTreeMap::new(), 0);
    near(grad.fitness[0], 0.0);
}

#[test]
fn improvement_rate_needs_three_samples_per_move() {
    let mut g = GradientTracker::default();
    let at = cell("m1c1p1w1");
    g.record(t("m1c1p1w1", "m2c1p1w1", 1.0, Outcome::Improvement, 0));
    g.record(t("m1c1p1w1", "m2c1p1w1", 1.0, Outcome::CellDiscovery, 0));
    assert_eq!(g.gradient(at, &BTreeMap::new(), 0).rate, [0.0; 4]);
    g.record(t("m1c1p1w1", "m2c1p1w1", -1.0, Outcome::Regression, 0));
    let rate = g.gradient(at, &BTreeMap::new(), 0).rate;
    near(rate[0], 2.0 / 3.0);
    // A diagonal move lowering work: one success in three.
    for outcome in [
        Outcome::EliteReplacement,
        Outcome::Neutral,
        Outcome::Regression,
    ] {
        g.record(t("m1c1p1w1", "m1c2p1w0", 0.0, outcome, 0));
    }
    let rate = g.gradient(at, &BTreeMap::new(), 0).rate;
    near(rate[0], 2.0 / 3.0);
    near(rate[1], 1.0 / 3.0);
    near(rate[3], -1.0 / 3.0);
    // Two always-successful moves raising memory sum to 2 and are rescaled into [−1, 1].
    let mut g = GradientTracker::default();
    for _ in 0..3 {
        g.record(t("m1c1p1w1", "m2c1p1w1", 1.0, Outcome::Improvement, 0));
        g.record(t("m1c1p1w1", "m2c2p1w1", 1.0, Outcome::Improvement, 0));
    }
    let rate = g.gradient(at, &BTreeMap::new(), 0).rate;
    assert_eq!(rate, [1.0, 0.5, 0.0, 0.0]);
}

#[test]
fn exploration_pulls_toward_empty_and_weak_cells() {
    let g = GradientTracker::default();
    let empty = BTreeMap::new();
    let e = g.gradient(cell("m0c0p0w0"), &empty, 0).explore;
    for x in e {
        near(x, 0.5);
    }
    let e = g.gradient(cell("m3c3p3w3"), &empty, 0).explore;
    for x in e {
        near(x, -0.5);
    }
    // Everything filled at equal scores except the high-memory half: pulled up in memory.
    let cells: BTreeMap<Descriptor, f64> = Descriptor::all()
        .filter(|d| d.level(Dim::Memory) < 2)
        .map(|d| (d, 6.0))
        .collect();
    let e = g.gradient(cell("m1c1p1w1"), &cells, 0).explore;
    near(e.iter().map(|x| x * x).sum::<f64>(), 1.0);
    assert!(e[0] > 0.9, "{e:?}");
    // Everything filled, the high-memory half scoring low: the same pull, from below-median cells.
    let cells: BTreeMap<Descriptor, f64> = Descriptor::all()
        .map(|d| (d, if d.level(Dim::Memory) >= 2 { 2.0 } else { 6.0 }))
        .collect();
    let e = g.gradient(cell("m1c1p1w1"), &cells, 0).explore;
    assert!(e[0] > 0.9, "{e:?}");
    // All equal: nothing is below the median and nothing is empty.
    let cells: BTreeMap<Descriptor, f64> = Descriptor::all().map(|d| (d, 6.0)).collect();
    assert_eq!(g.gradient(cell("m1c1p1w1"), &cells, 0).explore, [0.0; 4]);
}

#[test]
fn combined_gradient_weights_the_parts_point_four_point_four_point_two() {
    let mut g = GradientTracker::default();
    for _ in 0..3 {
        g.record(t("m1c1p1w1", "m2c1p1w1", 1.5, Outcome::Improvement, 0));
    }
    let grad = g.gradient(cell("m1c1p1w1"), &BTreeMap::new(), 0);
    for d in 0..4 {
        near(
            grad.combined[d],
            0.4 * grad.fitness[d] + 0.4 * grad.rate[d] + 0.2 * grad.explore[d],
        );
    }
    near(
        grad.get(Dim::Memory),
        0.4 * 1.5 + 0.4 * 1.0 + 0.2 * grad.explore[0],
    );
}

#[test]
fn confidence_ramps_to_one_over_twenty_departures() {
    let mut g = GradientTracker::default();
    let at = cell("m0c0p0w0");
    let mut seen = Vec::new();
    for n in 0..=30 {
        if [0, 10, 20, 30].contains(&n) {
            seen.push(g.gradient(at, &BTreeMap::new(), 0).confidence);
        }
        g.record(t("m0c0p0w0", "m0c0p0w1", 0.0, Outcome::Neutral, 0));
    }
    assert_eq!(seen, vec![0.0, 0.5, 1.0, 1.0]);
    assert_eq!(g.departures(at), 31);
}

fn gradient_with(at: &str, combined: [f64; 4], confidence: f64) -> Gradient {
    let mut grad = GradientTracker::default().gradient(cell(at), &BTreeMap::new(), 0);
    grad.combined = combined;
    grad.confidence = confidence;
    grad
}

#[test]
fn hints_need_strength_point_two_stay_in_range_and_are_at_most_three() {
    let grad = gradient_with("m1c1p1w1", [0.19, 0.2, -0.25, 0.0], 1.0);
    let hints: Vec<(Dim, i8)> = grad.hints().iter().map(|h| (h.dim, h.direction)).collect();
    assert_eq!(hints, vec![(Dim::Parallelism, -1), (Dim::Compute, 1)]);

    let grad = gradient_with("m1c1p1w1", [0.5, -0.9, 0.3, 0.7], 1.0);
    let hints: Vec<Dim> = grad.hints().iter().map(|h| h.dim).collect();
    assert_eq!(hints, vec![Dim::Compute, Dim::Work, Dim::Memory]);

    // Raising a dimension already at 3 (or lowering one at 0) is no hint.
    let grad = gradient_with("m3c0p1w1", [0.9, -0.9, 0.0, 0.0], 1.0);
    assert!(grad.hints().is_empty());
}

#[test]
fn operator_weights_follow_the_gradient() {
    let grad = gradient_with("m1c1p1w1", [0.0, 0.0, -0.3, 0.5], 1.0);
    near(
        grad.operator_weight(&[(Dim::Work, 1)]),
        (2.0f64 * 0.5).exp(),
    );
    near(
        grad.operator_weight(&[(Dim::Parallelism, 1)]),
        (2.0f64 * -0.3).exp(),
    );
    near(
        grad.operator_weight(&[(Dim::Work, 1), (Dim::Parallelism, -1)]),
        (2.0f64 * 0.4).exp(),
    );
    assert_eq!(grad.operator_weight(&[]), 1.0);
    assert_eq!(grad.operator_weight(&[(Dim::Memory, 1)]), 1.0);
    // A move out of range counts for nothing.
    let top = gradient_with("m1c1p1w3", [0.0, 0.0, 0.0, 0.9], 1.0);
    assert_eq!(top.operator_weight(&[(Dim::Work, 1)]), 1.0);
    // Agreement is clamped, and nothing is steered without confidence.
    let strong = gradient_with("m1c1p1w1", [0.0, 0.0, 0.0, 7.0], 1.0);
    near(strong.operator_weight(&[(Dim::Work, 1)]), 2.0f64.exp());
    let unsure = gradient_with("m1c1p1w1", [0.0, 0.0, 0.0, 7.0], 0.0);
    assert_eq!(unsure.operator_weight(&[(Dim::Work, 1)]), 1.0);
}

#[test]
fn sampling_weight_prefers_cells_whose_moves_worked_and_lead_somewhere() {
    let mut g = GradientTracker::default();
    for i in 0..10 {
        g.record(t("m0c1p0w0", "m0c1p0w1", 1.0, Outcome::Improvement, i));
        g.record(t("m1c1p0w0", "m1c1p0w1", -1.0, Outcome::Regression, i));
    }
    let cells = BTreeMap::new();
    let good = g.sampling_weight(cell("m0c1p0w0"), &cells, 10);
    let bad = g.sampling_weight(cell("m1c1p0w0"), &cells, 10);
    assert!(good > bad, "{good} vs {bad}");
    // The definition: 0.5·(successes+1)/(departures+2) + 0.5·min(1, openness).
    let grad = g.gradient(cell("m0c1p0w0"), &cells, 10);
    near(good, 0.5 * 11.0 / 12.0 + 0.5 * grad.openness().min(1.0));
    // An untried cell: prior rate one half.
    let fresh = g.gradient(cell("m2c2p2w2"), &cells, 10);
    near(
        g.sampling_weight(cell("m2c2p2w2"), &cells, 10),
        0.25 + 0.5 * fresh.openness().min(1.0),
    );
    // A corner with the whole gradient pointing out of the grid is closed.
    let closed = gradient_with("m3c3p3w3", [0.5, 0.5, 0.5, 0.5], 1.0);
    assert_eq!(closed.openness(), 0.0);
}

fn individual(descriptor: Option<&str>, score: f64, generation: u32) -> Individual {
    Individual {
        id: 0,
        parent: None,
        island: 0,
        descriptor: descriptor.map(cell),
        fitness: Fitness {
            level: score.min(5.0) as u8,
            speedup: None,
            score,
        },
        origin: Vec::new(),
        generation,
        payload: (),
    }
}

#[test]
fn children_are_classified_and_recorded() {
    let mut g = GradientTracker::default();
    let parent = individual(Some("m0c1p0w0"), 6.0, 0);
    let child = individual(Some("m0c1p0w1"), 6.5, 3);
    assert_eq!(
        g.record_child(&parent, &child, Placement::NewCell),
        Some(Outcome::CellDiscovery)
    );
    assert_eq!(
        g.record_child(&parent, &child, Placement::Replaced { previous: 9 }),
        Some(Outcome::EliteReplacement)
    );
    assert_eq!(
        g.record_child(&parent, &child, Placement::NotBetter { elite: 9 }),
        Some(Outcome::Improvement)
    );
    let worse = individual(Some("m0c1p0w1"), 4.0, 3);
    assert_eq!(
        g.record_child(&parent, &worse, Placement::NotBetter { elite: 9 }),
        Some(Outcome::Regression)
    );
    let same = individual(Some("m0c1p0w0"), 6.005, 3);
    assert_eq!(
        g.record_child(&parent, &same, Placement::NotBetter { elite: 9 }),
        Some(Outcome::Neutral)
    );
    let unparsed = individual(None, 0.0, 3);
    assert_eq!(g.record_child(&parent, &unparsed, Placement::NoCell), None);
    let last = g.transitions().last().expect("recorded");
    assert_eq!((last.generation, last.delta), (3, 6.005 - 6.0));
    assert_eq!(g.transitions().count(), 5);
}

#[test]
fn history_is_bounded_oldest_out() {
    let mut g = GradientTracker::new(GradientConfig {
        history: 3,
        ..GradientConfig::default()
    });
    for i in 0..5 {
        g.record(t("m0c0p0w0", "m0c0p0w1", 0.0, Outcome::Neutral, i));
    }
    let gens: Vec<u32> = g.transitions().map(|t| t.generation).collect();
    assert_eq!(gens, vec![2, 3, 4]);
}
