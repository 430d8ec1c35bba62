//! Archive rules: strict replacement, bounded failures, ring migration, selection proportions,
//! inspirations, targeted mutation, and a checkpoint round trip.

use super::*;
use crate::evolve::gradient::{GradientConfig, GradientTracker, Outcome, Transition};
use crate::evolve::step_rng;

fn cell(s: &str) -> Descriptor {
    s.parse().expect("a descriptor")
}

fn fitness(score: f64) -> Fitness {
    if score >= 5.0 {
        Fitness {
            level: 5,
            speedup: Some(score - 5.0),
            score,
        }
    } else {
        Fitness {
            level: score as u8,
            speedup: None,
            score,
        }
    }
}

fn ind(id: CandidateId, island: usize, at: Option<&str>, score: f64) -> Individual<String> {
    Individual {
        id,
        parent: None,
        island,
        descriptor: at.map(cell),
        fitness: fitness(score),
        origin: vec![format!("step{id}")],
        generation: 0,
        payload: format!("program {id}"),
    }
}

#[test]
fn an_elite_is_replaced_only_by_a_strictly_better_score() {
    let mut a = Archive::new(ArchiveConfig::default());
    assert_eq!(
        a.insert(ind(1, 0, Some("m0c1p0w0"), 6.0)),
        Placement::NewCell
    );
    assert_eq!(
        a.insert(ind(2, 0, Some("m0c1p0w0"), 6.0)),
        Placement::NotBetter { elite: 1 }
    );
    assert_eq!(
        a.insert(ind(3, 0, Some("m0c1p0w0"), 5.5)),
        Placement::NotBetter { elite: 1 }
    );
    assert_eq!(
        a.insert(ind(4, 0, Some("m0c1p0w0"), 6.01)),
        Placement::Replaced { previous: 1 }
    );
    assert_eq!(a.elite(0, cell("m0c1p0w0")).map(|e| e.id), Some(4));
    // The former elite and the losers stay members; other islands are untouched.
    assert_eq!(a.members(0).count(), 4);
    assert_eq!(a.elite(1, cell("m0c1p0w0")), None);
    assert_eq!(
        a.insert(ind(4, 0, Some("m1c1p0w0"), 9.0)),
        Placement::Duplicate
    );
    assert_eq!(a.insert(ind(5, 0, None, 0.0)), Placement::NoCell);
    // A NaN score reads as its ladder level and never wins a cell.
    let mut nan = ind(6, 0, Some("m0c1p0w0"), 7.0);
    nan.fitness.score = f64::NAN;
    assert_eq!(a.insert(nan), Placement::NotBetter { elite: 4 });
}

#[test]
fn failed_candidates_are_kept_up_to_the_bound_worst_first_out() {
    let config = ArchiveConfig {
        max_non_elites: 5,
        ..ArchiveConfig::default()
    };
    let mut a = Archive::new(config);
    // A failed candidate that fills a cell is an elite and is never evicted.
    a.insert(ind(100, 0, Some("m3c3p3w3"), 1.0));
    a.insert(ind(101, 0, Some("m0c1p0w0"), 6.0));
    for id in 0..12 {
        let score = (id % 5) as f64; // levels 0..4
        let at = if id % 2 == 0 { None } else { Some("m0c1p0w0") };
        a.insert(ind(id, 0, at, score));
    }
    let members: Vec<&Individual<String>> = a.members(0).collect();
    assert_eq!(members.len(), 2 + 5);
    assert!(members.iter().any(|m| m.id == 100));
    assert!(members.iter().any(|m| m.id == 101));
    let mut kept: Vec<f64> = members
        .iter()
        .filter(|m| m.id < 100)
        .map(|m| m.score())
        .collect();
    kept.sort_by(f64::total_cmp);
    // Scores inserted: 0,1,2,3,4,0,1,2,3,4,0,1: the five best are 4,4,3,3,2.
    assert_eq!(kept, vec![2.0, 3.0, 3.0, 4.0, 4.0]);
}

#[test]
fn migration_copies_the_best_along_the_ring_every_ten_generations() {
    let mut a = Archive::new(ArchiveConfig::default());
    // Island 0 has 20 elites (2 migrate), islands 1 and 3 one each, island 2 none.
    for (i, c) in Descriptor::all().take(20).enumerate() {
        let mut e = ind(i as u64, 0, None, 5.0 + i as f64 / 10.0);
        e.descriptor = Some(c);
        a.insert(e);
    }
    a.insert(ind(50, 1, Some("m1c1p1w1"), 6.0));
    a.insert(ind(70, 3, Some("m2c2p2w2"), 7.0));
    for _ in 0..9 {
        assert!(a.end_generation().is_empty());
    }
    let migrations = a.end_generation();
    assert_eq!(a.generation(), 10);
    let moved: Vec<(usize, usize, CandidateId)> =
        migrations.iter().map(|m| (m.from, m.to, m.id)).collect();
    assert_eq!(moved, vec![(0, 1, 19), (0, 1, 18), (1, 2, 50), (3, 0, 70)]);
    assert!(migrations.iter().all(|m| m.placement == Placement::NewCell));
    // Copies: the sources keep theirs, the targets hold theirs with the island updated.
    for (from, to, id) in moved {
        assert!(a.get(from, id).is_some());
        assert_eq!(a.get(to, id).map(|c| c.island), Some(to));
        assert_eq!(
            a.get(to, id).map(|c| &c.payload),
            a.get(from, id).map(|c| &c.payload)
        );
    }
    // Island 2 held nothing and sent nothing; candidate 50 did not travel on to island 3.
    assert!(a.get(3, 50).is_none());
    for _ in 0..9 {
        assert!(a.end_generation().is_empty());
    }
    assert!(!a.end_generation().is_empty());
}

/// Island 0: three elites (5, 6, 7) and three failed non-elites; island 1: two members.
fn selection_archive() -> Archive<String> {
    let mut a = Archive::new(ArchiveConfig::default());
    a.insert(ind(1, 0, Some("m0c1p0w0"), 5.0));
    a.insert(ind(2, 0, Some("m1c1p0w0"), 6.0));
    a.insert(ind(3, 0, Some("m2c1p0w0"), 7.0));
    a.insert(ind(4, 0, Some("m2c1p0w0"), 2.0));
    a.insert(ind(5, 0, None, 0.0));
    a.insert(ind(6, 0, Some("m1c1p0w0"), 4.0));
    a.insert(ind(7, 1, Some("m0c1p0w0"), 5.0));
    a.insert(ind(8, 1, Some("m0c0p0w0"), 8.0));
    a
}

fn share(counts: &BTreeMap<CandidateId, usize>, id: CandidateId, total: usize) -> f64 {
    *counts.get(&id).unwrap_or(&0) as f64 / total as f64
}

#[track_caller]
fn near(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} is not within {tolerance} of {expected}"
    );
}

#[test]
fn parent_selection_follows_the_explore_exploit_random_mix() {
    let a = selection_archive();
    let n = 40_000;
    let mut modes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_mode: BTreeMap<&str, BTreeMap<CandidateId, usize>> = BTreeMap::new();
    let mut rng = step_rng(42, 0);
    for _ in 0..n {
        let s = a.select_parent(0, None, &mut rng).expect("a parent");
        let mode = match s.mode {
            Mode::Explore => "explore",
            Mode::Exploit => "exploit",
            Mode::Random => "random",
        };
        *modes.entry(mode).or_default() += 1;
        *by_mode
            .entry(mode)
            .or_default()
            .entry(s.individual.id)
            .or_default() += 1;
    }
    near(modes["explore"] as f64 / n as f64, 0.2, 0.01);
    near(modes["exploit"] as f64 / n as f64, 0.7, 0.01);
    near(modes["random"] as f64 / n as f64, 0.1, 0.01);

    // Exploit: softmax over island 0's elite scores 5, 6, 7; never a non-elite or island 1.
    let exploit = &by_mode["exploit"];
    let z = (-2f64).exp() + (-1f64).exp() + 1.0;
    let total = modes["exploit"];
    near(share(exploit, 1, total), (-2f64).exp() / z, 0.015);
    near(share(exploit, 2, total), (-1f64).exp() / z, 0.015);
    near(share(exploit, 3, total), 1.0 / z, 0.015);
    assert_eq!(exploit.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3]);

    // Explore: uniform over island 0's six members, failures included.
    let explore = &by_mode["explore"];
    assert_eq!(
        explore.keys().copied().collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6]
    );
    for id in 1..=6 {
        near(share(explore, id, modes["explore"]), 1.0 / 6.0, 0.025);
    }

    // Random: uniform over all eight members of both islands.
    let random = &by_mode["random"];
    assert_eq!(random.len(), 8);
    for id in 1..=8 {
        near(share(random, id, modes["random"]), 1.0 / 8.0, 0.03);
    }
}

#[test]
fn gradient_weights_are_blended_into_exploit_picks() {
    let a = selection_archive();
    // Children of the weakest elite's cell keep succeeding; those of the best keep failing.
    let mut tracker = GradientTracker::new(GradientConfig::default());
    for i in 0..20 {
        let ok = |from: &str, to: &str, good: bool| Transition {
            parent: cell(from),
            child: cell(to),
            delta: if good { 1.0 } else { -3.0 },
            outcome: if good {
                Outcome::Improvement
            } else {
                Outcome::Regression
            },
            generation: i,
        };
        tracker.record(ok("m0c1p0w0", "m0c1p0w1", true));
        tracker.record(ok("m2c1p0w0", "m2c1p0w1", false));
    }
    let cells = a.cell_scores();
    let w: Vec<f64> = ["m0c1p0w0", "m1c1p0w0", "m2c1p0w0"]
        .iter()
        .map(|c| tracker.sampling_weight(cell(c), &cells, a.generation()))
        .collect();
    assert!(w[0] > w[2], "the succeeding cell weighs more: {w:?}");
    let wsum: f64 = w.iter().sum();
    let z = (-2f64).exp() + (-1f64).exp() + 1.0;
    let soft = [(-2f64).exp() / z, (-1f64).exp() / z, 1.0 / z];
    let expected: Vec<f64> = (0..3).map(|i| 0.7 * soft[i] + 0.3 * w[i] / wsum).collect();

    let mut counts: BTreeMap<CandidateId, usize> = BTreeMap::new();
    let mut total = 0;
    let mut rng = step_rng(7, 0);
    for _ in 0..12_000 {
        let s = a
            .select_parent(0, Some(&tracker), &mut rng)
            .expect("a parent");
        if s.mode == Mode::Exploit {
            *counts.entry(s.individual.id).or_default() += 1;
            total += 1;
        }
    }
    for (i, id) in [1, 2, 3].into_iter().enumerate() {
        near(share(&counts, id, total), expected[i], 0.02);
    }
    // Steering moved picks toward the weak-but-promising cell.
    assert!(share(&counts, 1, total) > soft[0] + 0.05);
}

#[test]
fn explore_on_an_empty_island_falls_back_to_a_below_median_cell() {
    let mut a = Archive::new(ArchiveConfig {
        explore: 1.0,
        exploit: 0.0,
        ..ArchiveConfig::default()
    });
    a.insert(ind(1, 0, Some("m0c1p0w0"), 5.0));
    a.insert(ind(2, 0, Some("m1c1p0w0"), 6.0));
    a.insert(ind(3, 0, Some("m2c1p0w0"), 7.0));
    let mut rng = step_rng(1, 0);
    for _ in 0..200 {
        let s = a.select_parent(2, None, &mut rng).expect("a parent");
        assert_eq!((s.individual.id, s.mode), (1, Mode::Explore));
    }
    let empty: Archive<String> = Archive::new(ArchiveConfig::default());
    assert!(empty.select_parent(0, None, &mut rng).is_none());
}

#[test]
fn inspirations_prefer_more_optimized_cells() {
    let mut a = Archive::new(ArchiveConfig::default());
    let parent = ind(1, 0, Some("m0c1p0w0"), 6.0);
    a.insert(parent.clone());
    a.insert(ind(2, 0, Some("m1c1p0w0"), 6.0)); // sum 2
    a.insert(ind(3, 1, Some("m2c3p1w0"), 6.0)); // sum 6
    a.insert(ind(4, 0, Some("m1c1p1w1"), 6.0)); // sum 4
    a.insert(ind(5, 2, Some("m0c1p0w0"), 9.0)); // the parent's cell: excluded
    let mut firsts = BTreeMap::new();
    let mut seconds: BTreeMap<CandidateId, usize> = BTreeMap::new();
    for step in 0..2000 {
        let insp = a.inspirations(&parent, &mut step_rng(3, step));
        assert_eq!(insp.len(), 2);
        assert!(insp.iter().all(|i| i.id != 1 && i.id != 5));
        *firsts.entry(insp[0].id).or_insert(0) += 1;
        *seconds.entry(insp[1].id).or_default() += 1;
    }
    // The most-optimized cell always comes first; the next is biased by level sum.
    assert_eq!(firsts, BTreeMap::from([(3, 2000)]));
    assert!(seconds[&4] > seconds[&2], "{seconds:?}");
}

#[test]
fn targeted_mutation_raises_an_open_dimension() {
    let mut rng = step_rng(5, 0);
    assert_eq!(targeted_dim(cell("m3c3p3w3"), None, &mut rng), None);
    for _ in 0..100 {
        assert_eq!(
            targeted_dim(cell("m3c3p3w2"), None, &mut rng),
            Some(Dim::Work)
        );
    }
    let mut counts: BTreeMap<Dim, usize> = BTreeMap::new();
    for _ in 0..9000 {
        let d = targeted_dim(cell("m1c3p0w2"), None, &mut rng).expect("a dimension");
        *counts.entry(d).or_default() += 1;
    }
    assert!(!counts.contains_key(&Dim::Compute));
    for d in [Dim::Memory, Dim::Parallelism, Dim::Work] {
        near(counts[&d] as f64 / 9000.0, 1.0 / 3.0, 0.03);
    }

    // A confident gradient toward parallelism is followed; an unconfident one is not.
    let mut tracker = GradientTracker::new(GradientConfig::default());
    for g in 0..20 {
        for _ in 0..2 {
            tracker.record(Transition {
                parent: cell("m1c1p0w0"),
                child: cell("m1c1p1w0"),
                delta: 2.0,
                outcome: Outcome::Improvement,
                generation: g,
            });
        }
    }
    let cells = BTreeMap::new();
    let confident = tracker.gradient(cell("m1c1p0w0"), &cells, 20);
    assert_eq!(confident.confidence, 1.0);
    for _ in 0..200 {
        assert_eq!(
            targeted_dim(cell("m1c1p0w0"), Some(&confident), &mut rng),
            Some(Dim::Parallelism)
        );
    }
    let mut unsure = confident.clone();
    unsure.confidence = 0.0;
    let picks: BTreeSet<Option<Dim>> = (0..400)
        .map(|_| targeted_dim(cell("m1c1p0w0"), Some(&unsure), &mut rng))
        .collect();
    assert_eq!(picks.len(), 4);
}

#[test]
fn statistics_count_cells_and_bests() {
    let a = selection_archive();
    let s = a.stats();
    assert_eq!(s.cells_filled, 4); // m0c1p0w0 on both islands counts once
    assert_eq!(s.cells_correct, 4);
    assert_eq!(s.members, 8);
    assert_eq!((s.best, s.best_score), (Some(8), Some(8.0)));
    assert_eq!(s.islands.len(), 4);
    assert_eq!(
        s.islands[0],
        IslandStats {
            cells_filled: 3,
            members: 6,
            best: Some(3),
            best_score: Some(7.0)
        }
    );
    assert_eq!(s.islands[2].best, None);
    assert_eq!(a.best().map(|b| b.id), Some(8));
    assert_eq!(a.cell_scores().get(&cell("m0c1p0w0")), Some(&5.0));
}

#[test]
fn the_whole_state_round_trips_through_json() {
    let mut a = selection_archive();
    a.insert(ind(9, 2, Some("m3c3p1w2"), 3.0));
    for _ in 0..10 {
        a.end_generation();
    }
    let mut tracker = GradientTracker::new(GradientConfig::default());
    tracker.record(Transition {
        parent: cell("m0c1p0w0"),
        child: cell("m1c1p0w0"),
        delta: 0.5,
        outcome: Outcome::EliteReplacement,
        generation: 3,
    });
    let state = (a.clone(), tracker.clone());
    let json = serde_json::to_string(&state).expect("serializes");
    let (a2, t2): (Archive<String>, GradientTracker) =
        serde_json::from_str(&json).expect("deserializes");
    assert_eq!(a2, a);
    assert_eq!(t2, tracker);
    // The restored state makes the same choices.
    for step in 0..50 {
        let p1 = a
            .select_parent(1, Some(&tracker), &mut step_rng(11, step))
            .map(|s| s.individual.id);
        let p2 = a2
            .select_parent(1, Some(&t2), &mut step_rng(11, step))
            .map(|s| s.individual.id);
        assert_eq!(p1, p2);
    }
    assert_eq!(serde_json::to_string(&(a2, t2)).expect("serializes"), json);
}

#[test]
fn step_rngs_are_reproducible_and_distinct() {
    let draw = |seed, step| step_rng(seed, step).random::<u64>();
    assert_eq!(draw(1, 2), draw(1, 2));
    assert_ne!(draw(1, 2), draw(1, 3));
    assert_ne!(draw(1, 2), draw(2, 2));
}

#[test]
fn origins_read_as_chains() {
    let mut i = ind(1, 0, None, 0.0);
    i.origin = vec!["coarsen(4)".into(), "vec4".into(), "param(WG=256)".into()];
    assert_eq!(i.origin_text(), "coarsen(4) → vec4 → param(WG=256)");
    i.origin.clear();
    assert_eq!(i.origin_text(), "baseline");
}

#[test]
fn members_are_ranked_best_first_once_each() {
    let mut a = Archive::new(ArchiveConfig::default());
    a.insert(ind(1, 0, Some("m0c1p0w0"), 6.0));
    a.insert(ind(2, 0, Some("m0c1p0w0"), 5.5)); // a member, not an elite
    a.insert(ind(3, 1, Some("m1c1p0w0"), 7.0));
    a.insert(ind(4, 1, Some("m1c0p0w0"), 6.0)); // ties with 1: the lower id first
    let ranked: Vec<CandidateId> = a.ranked().iter().map(|m| m.id).collect();
    assert_eq!(ranked, vec![3, 1, 4, 2]);
    assert_eq!(a.best().map(|b| b.id), Some(3));
}
