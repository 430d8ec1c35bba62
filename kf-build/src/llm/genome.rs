//! Meta-prompt evolution: the prompt's guidance is a genome of four sections (optimization
//! philosophy, strategies, pitfalls, analysis guidance) that evolves with the kernels.
//!
//! A genome's fitness is the best score of any kernel a prompt built from it produced. Selection
//! is a softmax over `fitness + c·√(ln(N+1)/(n+1)) − λ·n/(N+1)`, with `n` the genome's uses and
//! `N` all uses: an exploration bonus for rarely used genomes and a usage penalty for
//! overused ones (a new genome inherits its parent's fitness until its own kernels are scored).
//! Every few samples a meta call returns SEARCH/REPLACE edits to sections; they are applied
//! strictly (an edit whose SEARCH text is not in its section exactly once is rejected and
//! logged), a genome equal to one already present is dropped (by hash), and the population is
//! bounded (the lowest-valued genome goes, never the best).
//!
//! This keeps the context short: what the search learns is distilled into four sections instead
//! of a growing failure history.

use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The section names, in order.
pub const SECTIONS: [&str; 4] = ["philosophy", "strategies", "pitfalls", "analysis"];

/// Titles shown in prompts.
pub const TITLES: [&str; 4] = [
    "Optimization philosophy",
    "Strategies",
    "Common pitfalls",
    "Analysis guidance",
];

/// Exploration bonus weight `c`.
pub const EXPLORATION: f64 = 1.0;
/// Usage penalty weight `λ`.
pub const USAGE_PENALTY: f64 = 1.0;

/// One prompt genome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Genome {
    /// `p0`, `p1`, ….
    pub id: String,
    /// The genome it was edited from.
    pub parent: Option<String>,
    /// The four sections, in [`SECTIONS`] order.
    pub sections: [String; 4],
    /// sha256 of the sections (16 hex digits).
    pub hash: String,
    /// Prompts built from it.
    pub uses: u32,
    /// Best score of a kernel it produced.
    pub best: Option<f64>,
    /// Its parent's fitness when it was made (its fitness until it has its own).
    pub inherited: Option<f64>,
    /// The edits that made it from its parent.
    pub edits: Vec<String>,
}

impl Genome {
    fn new(id: String, parent: Option<String>, sections: [String; 4]) -> Self {
        let hash = hash(&sections);
        Genome {
            id,
            parent,
            sections,
            hash,
            uses: 0,
            best: None,
            inherited: None,
            edits: Vec::new(),
        }
    }

    /// Its fitness: its own best score, else what it inherited, else 0.
    pub fn fitness(&self) -> f64 {
        self.best.or(self.inherited).unwrap_or(0.0)
    }

    /// The sections as prompt text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (title, text) in TITLES.iter().zip(&self.sections) {
            out.push_str(&format!("## {title}\n{}\n\n", text.trim_end()));
        }
        out
    }
}

fn hash(sections: &[String; 4]) -> String {
    let mut h = Sha256::new();
    for s in sections {
        h.update(s.as_bytes());
        h.update(b"\0");
    }
    kf_runtime::hash::hex16(&h.finalize())
}

/// The first genome.
pub fn initial() -> [String; 4] {
    [
        "Make the kernel faster on this exact adapter while computing exactly what the baseline computes. \
Memory traffic usually bounds these kernels: compare the measured bandwidth with the adapter's copy \
ceiling before adding arithmetic tricks. Prefer one clear structural change per answer over many small ones."
            .into(),
        "- Give each invocation enough work to hide latency, but keep enough workgroups to fill the device.\n\
- Reuse data through `var<workgroup>` tiles with `workgroupBarrier()` when each element is read many times.\n\
- Reduce across a workgroup (tree reduction in workgroup memory) or a subgroup (`subgroupAdd`, \
`subgroupMax`, where the adapter has SUBGROUP) when one output depends on many inputs.\n\
- Expose sizes you are unsure of (workgroup size, tile size, items per invocation) as `override` \
constants and list candidate values, so they are measured instead of guessed."
            .into(),
        "- Keep every binding exactly as the baseline declares it; a changed binding is rejected.\n\
- Guard every access for sizes that the workgroup size does not divide: verification uses odd shapes.\n\
- Every invocation of a workgroup must reach each barrier (no barrier inside a divergent branch).\n\
- Never read an output buffer to get the result of an earlier run; outputs are poisoned between runs.\n\
- A launch rule must cover every output with the workgroup size the kernel declares."
            .into(),
        "Read the parent's timings and roofline verdict: far below the copy ceiling means the memory \
access pattern or the parallelism is the problem; near it means only less traffic helps. For a failed \
parent, fix the reported error first and change nothing else."
            .into(),
    ]
}

/// The outcome of one SEARCH/REPLACE edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EditOutcome {
    /// The section it targets (as written).
    pub section: String,
    /// Whether it was applied.
    pub applied: bool,
    /// Why not, or what it did.
    pub note: String,
}

/// Parses SEARCH/REPLACE edits:
///
/// ```text
/// <<<<<<< SEARCH strategies
/// text to find
/// =======
/// replacement
/// >>>>>>> REPLACE
/// ```
///
/// Returns `(section, search, replace)` triples and the problems of malformed edits.
pub fn parse_edits(text: &str) -> (Vec<(String, String, String)>, Vec<EditOutcome>) {
    let mut edits = Vec::new();
    let mut problems = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = lines[i].trim().strip_prefix("<<<<<<< SEARCH") else {
            i += 1;
            continue;
        };
        let section = rest.trim().to_lowercase();
        let mut search = Vec::new();
        let mut replace = Vec::new();
        let mut state = 0; // 0 search, 1 replace
        let mut j = i + 1;
        let mut closed = false;
        while j < lines.len() {
            let t = lines[j].trim();
            if state == 0 && t == "=======" {
                state = 1;
            } else if state == 1 && t.starts_with(">>>>>>> REPLACE") {
                closed = true;
                break;
            } else if t.starts_with("<<<<<<< SEARCH") {
                break;
            } else if state == 0 {
                search.push(lines[j]);
            } else {
                replace.push(lines[j]);
            }
            j += 1;
        }
        if !closed {
            problems.push(EditOutcome {
                section,
                applied: false,
                note: "malformed edit: no `=======` and `>>>>>>> REPLACE` after its SEARCH".into(),
            });
            i = j.max(i + 1);
            continue;
        }
        edits.push((section, search.join("\n"), replace.join("\n")));
        i = j + 1;
    }
    (edits, problems)
}

/// Applies `edits` to `sections` strictly; returns the new sections and one outcome per edit.
pub fn apply_edits(
    sections: &[String; 4],
    edits: &[(String, String, String)],
) -> ([String; 4], Vec<EditOutcome>) {
    let mut out = sections.clone();
    let mut outcomes = Vec::new();
    for (section, search, replace) in edits {
        let reject = |note: String| EditOutcome {
            section: section.clone(),
            applied: false,
            note,
        };
        let Some(idx) = SECTIONS.iter().position(|s| s == section) else {
            outcomes.push(reject(format!(
                "unknown section `{section}` (the sections are {})",
                SECTIONS.join(", ")
            )));
            continue;
        };
        if search.trim().is_empty() {
            outcomes.push(reject("empty SEARCH text".into()));
            continue;
        }
        match out[idx].matches(search.as_str()).count() {
            0 => outcomes.push(reject(format!(
                "SEARCH text not found in section `{section}`: {:?}",
                first_line(search)
            ))),
            1 => {
                out[idx] = out[idx].replacen(search.as_str(), replace, 1);
                outcomes.push(EditOutcome {
                    section: section.clone(),
                    applied: true,
                    note: format!("{:?} → {:?}", first_line(search), first_line(replace)),
                });
            }
            n => outcomes.push(reject(format!(
                "SEARCH text occurs {n} times in section `{section}`; it must be unique"
            ))),
        }
    }
    (out, outcomes)
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// The bounded population of genomes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Population {
    genomes: Vec<Genome>,
    capacity: usize,
    next_id: u32,
    /// Every meta edit ever tried, with its outcome and the genome it targeted.
    pub log: Vec<(String, EditOutcome)>,
}

impl Population {
    /// A population of at most `capacity` genomes, starting with [`initial`].
    pub fn new(capacity: usize) -> Self {
        Population {
            genomes: vec![Genome::new("p0".into(), None, initial())],
            capacity: capacity.max(1),
            next_id: 1,
            log: Vec::new(),
        }
    }

    /// The genomes.
    pub fn genomes(&self) -> &[Genome] {
        &self.genomes
    }

    /// A genome by id.
    pub fn get(&self, id: &str) -> Option<&Genome> {
        self.genomes.iter().find(|g| g.id == id)
    }

    /// The fittest genome (the oldest on ties).
    pub fn best(&self) -> &Genome {
        self.genomes
            .iter()
            .fold(None::<&Genome>, |best, g| match best {
                Some(b) if b.fitness() >= g.fitness() => Some(b),
                _ => Some(g),
            })
            .expect("a population is never empty")
    }

    /// Each genome's selection value.
    pub fn values(&self) -> Vec<f64> {
        let total: u32 = self.genomes.iter().map(|g| g.uses).sum();
        let n_all = f64::from(total);
        self.genomes
            .iter()
            .map(|g| {
                let n = f64::from(g.uses);
                g.fitness() + EXPLORATION * ((n_all + 1.0).ln() / (n + 1.0)).sqrt()
                    - USAGE_PENALTY * n / (n_all + 1.0)
            })
            .collect()
    }

    /// Selection probabilities: a softmax of [`Population::values`].
    pub fn probabilities(&self) -> Vec<f64> {
        let v = self.values();
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = v.iter().map(|x| (x - max).exp()).collect();
        let total: f64 = e.iter().sum();
        e.iter().map(|x| x / total).collect()
    }

    /// Picks a genome for a prompt and counts the use.
    pub fn select(&mut self, rng: &mut impl Rng) -> Genome {
        let p = self.probabilities();
        let mut r: f64 = rng.random();
        let mut pick = p.len() - 1;
        for (i, pi) in p.iter().enumerate() {
            if r < *pi {
                pick = i;
                break;
            }
            r -= pi;
        }
        self.genomes[pick].uses += 1;
        self.genomes[pick].clone()
    }

    /// Records a kernel's score for the genome that prompted it.
    pub fn score(&mut self, id: &str, score: f64) {
        if let Some(g) = self.genomes.iter_mut().find(|g| g.id == id) {
            g.best = Some(g.best.map_or(score, |b| b.max(score)));
        }
    }

    /// Applies a meta answer's edits to genome `base`; returns the new genome's id when at least
    /// one edit applied and the result is new.
    pub fn evolve(&mut self, base: &str, answer: &str) -> (Option<String>, Vec<EditOutcome>) {
        let Some(parent) = self.get(base).cloned() else {
            return (None, Vec::new());
        };
        let (edits, mut outcomes) = parse_edits(answer);
        if edits.is_empty() && outcomes.is_empty() {
            outcomes.push(EditOutcome {
                section: String::new(),
                applied: false,
                note: "the answer has no SEARCH/REPLACE edit".into(),
            });
        }
        let (sections, applied) = apply_edits(&parent.sections, &edits);
        outcomes.extend(applied);
        for o in &outcomes {
            self.log.push((base.to_owned(), o.clone()));
        }
        if !outcomes.iter().any(|o| o.applied) {
            return (None, outcomes);
        }
        let h = hash(&sections);
        if self.genomes.iter().any(|g| g.hash == h) {
            self.log.push((
                base.to_owned(),
                EditOutcome {
                    section: String::new(),
                    applied: false,
                    note: "the edited genome equals one already in the population".into(),
                },
            ));
            return (None, outcomes);
        }
        let id = format!("p{}", self.next_id);
        self.next_id += 1;
        let mut g = Genome::new(id.clone(), Some(base.to_owned()), sections);
        g.inherited = Some(parent.fitness());
        g.edits = outcomes
            .iter()
            .filter(|o| o.applied)
            .map(|o| format!("{}: {}", o.section, o.note))
            .collect();
        self.genomes.push(g);
        if self.genomes.len() > self.capacity {
            let best = self.best().id.clone();
            let values = self.values();
            let worst = (0..self.genomes.len())
                .filter(|&i| self.genomes[i].id != best && self.genomes[i].id != id)
                .min_by(|&a, &b| values[a].total_cmp(&values[b]));
            if let Some(w) = worst {
                self.genomes.remove(w);
            }
        }
        (Some(id), outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn edits_apply_strictly() {
        let sections = initial();
        let answer = "Some reasoning.\n<<<<<<< SEARCH pitfalls\n- Never read an output buffer to get the result of an earlier run; outputs are poisoned between runs.\n=======\n- Never read an output buffer before writing it.\n- Do not return constants.\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH strategies\nthis text is not there\n=======\nnew\n>>>>>>> REPLACE\n<<<<<<< SEARCH tactics\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH analysis\nRead\n=======\nnever closed\n";
        let (edits, problems) = parse_edits(answer);
        assert_eq!(edits.len(), 3);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].note.contains("malformed"));
        let (out, outcomes) = apply_edits(&sections, &edits);
        assert!(outcomes[0].applied, "{outcomes:?}");
        assert!(out[2].contains("Do not return constants."));
        assert!(!out[2].contains("outputs are poisoned"));
        assert!(!outcomes[1].applied && outcomes[1].note.contains("not found"));
        assert!(!outcomes[2].applied && outcomes[2].note.contains("unknown section"));
        assert_eq!(out[1], sections[1], "a rejected edit changes nothing");
        // Ambiguous and empty SEARCH texts are rejected too.
        let (_, o) = apply_edits(&sections, &[("pitfalls".into(), "- ".into(), "* ".into())]);
        assert!(o[0].note.contains("times"), "{o:?}");
        let (_, o) = apply_edits(&sections, &[("pitfalls".into(), " ".into(), "x".into())]);
        assert!(o[0].note.contains("empty"));
    }

    #[test]
    fn evolution_dedups_bounds_and_logs() {
        let mut p = Population::new(2);
        let edit = |from: &str, to: &str| {
            format!("<<<<<<< SEARCH philosophy\n{from}\n=======\n{to}\n>>>>>>> REPLACE\n")
        };
        let (id, _) = p.evolve(
            "p0",
            &edit("Make the kernel faster", "Make the kernel much faster"),
        );
        assert_eq!(id.as_deref(), Some("p1"));
        assert_eq!(p.get("p1").unwrap().parent.as_deref(), Some("p0"));
        // The same edit again gives the same genome: dropped by hash.
        let (id, _) = p.evolve(
            "p0",
            &edit("Make the kernel faster", "Make the kernel much faster"),
        );
        assert_eq!(id, None);
        assert!(
            p.log
                .iter()
                .any(|(_, o)| o.note.contains("equals one already"))
        );
        // Nothing applicable: no new genome, the rejection is logged.
        let (id, outcomes) = p.evolve("p0", "no edits here");
        assert_eq!(id, None);
        assert!(outcomes[0].note.contains("no SEARCH/REPLACE"));
        // Beyond capacity the lowest-valued genome that is not the best goes.
        p.score("p0", 7.0);
        let (id, _) = p.evolve("p1", &edit("much faster", "far faster"));
        assert_eq!(id.as_deref(), Some("p2"));
        assert_eq!(p.genomes().len(), 2);
        assert!(p.get("p0").is_some(), "the best stays");
        assert!(p.get("p1").is_none());
        assert_eq!(p.get("p2").unwrap().inherited, Some(0.0));
    }

    #[test]
    fn selection_rewards_fitness_and_penalizes_use() {
        let mut p = Population::new(8);
        p.evolve(
            "p0",
            "<<<<<<< SEARCH analysis\nRead\n=======\nStudy\n>>>>>>> REPLACE",
        );
        // Equal fitness, p0 used often: the unused p1 gets the exploration bonus.
        p.genomes[0].uses = 10;
        let pr = p.probabilities();
        assert!(pr[1] > pr[0], "{pr:?}");
        // A much fitter genome wins despite its use.
        p.score("p0", 8.0);
        p.score("p1", 5.0);
        let pr = p.probabilities();
        assert!(pr[0] > pr[1], "{pr:?}");
        let values = p.values();
        let expected = 8.0 + (11f64.ln() / 11.0).sqrt() - 10.0 / 11.0;
        assert!((values[0] - expected).abs() < 1e-12);
        // Selection counts uses and is reproducible from the seed.
        let picks = |seed| {
            let mut q = p.clone();
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            (0..20).map(|_| q.select(&mut rng).id).collect::<Vec<_>>()
        };
        assert_eq!(picks(3), picks(3));
        let mut q = p.clone();
        let before: u32 = q.genomes().iter().map(|g| g.uses).sum();
        q.select(&mut rand::rngs::StdRng::seed_from_u64(1));
        assert_eq!(q.genomes().iter().map(|g| g.uses).sum::<u32>(), before + 1);
    }
}
