//! The generator-level curricula and the environment engineer as level samplers: stepping runs
//! in phases of `phase_episodes` ended episodes; at the end of each, the phase's outcomes by map
//! size become a round of the [`History`] (module F's failure breakdown: the success rate as the
//! valid rate, the failures by kind, truncations as `goal_not_reached`), the designer writes the
//! next phase's generator configuration, and every slot of the pool is refilled from it.
//!
//! - any curriculum (`fixed`, `difficulty-scaling`, `sec`, `frontier`, `schedule`, `plr`, or a
//!   Rust or C curriculum plugin): `next_config` on the history.
//! - `engineer`: floe-rounds' context (modules F, G, H, S, T) over the history, the engineer's
//!   reply clamped into the level space's design limits ([`Adoption`]); a reply it cannot use
//!   keeps the previous phase's configuration.
//!
//! The stepping engine judges no optimality, so each size's `optimal_rate` is 0.
//!
//! A phase sampler saves its state (the history, the current configuration and rationale, the
//! phase's outcomes so far, every design with its notes) with the driver's. On restore a
//! curriculum is replayed over the saved history, one call a finished phase as it was called,
//! so that one that keeps state of its own (`sec`'s bandit, `schedule`'s count) has it again;
//! a curriculum whose replay designs another configuration than the saved one is refused. An
//! engineer is not asked again: what it is asked next is built from the restored history and
//! rationale.

use std::collections::BTreeMap;

use floe_core::engine::outcome;
use floe_core::FailureKind;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{
    Curriculum, EnvEngineer, EpisodeRecord, History, LevelPlan, LevelRecord, LevelSampler, PhaseDesign,
    PluginError, RoundConfig, RoundRecord, SizeResult,
};
use floe_rounds::context::{Cell, ContextInput, ContextOptions};
use floe_rounds::limits::Adoption;

/// Who designs each phase.
pub enum Designer {
    /// A curriculum's `next_config`.
    Curriculum(Box<dyn Curriculum>),
    /// An environment engineer over floe-rounds' context.
    Engineer {
        /// The engineer.
        engineer: Box<dyn EnvEngineer>,
        /// How its context is assembled.
        context: ContextOptions,
    },
}

impl std::fmt::Debug for Designer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Designer::Curriculum(_) => "Designer::Curriculum",
            Designer::Engineer { .. } => "Designer::Engineer",
        })
    }
}

/// What one phase's episodes of one map size came to.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Tally {
    episodes: u32,
    successes: u32,
    failures: BTreeMap<FailureKind, u32>,
}

impl Tally {
    /// Counts one ended episode.
    fn count(&mut self, e: &EpisodeRecord) {
        self.episodes += 1;
        match e.outcome {
            outcome::SUCCESS => self.successes += 1,
            outcome::TRUNCATED => *self.failures.entry(FailureKind::GoalNotReached).or_default() += 1,
            _ => {
                if let Some(kind) = FailureKind::from_code(e.failure_kind) {
                    *self.failures.entry(kind).or_default() += 1;
                }
            }
        }
    }
}

/// A level's band of hole ratio, in tenths: `k` for `[k/10, (k+1)/10)`, its holes over its
/// cells taken 0.025 up (the generator rounds a ratio's holes to whole cells, so a level of ratio
/// 0.2 may hold a little under a fifth of its cells as holes).
fn hole_band(level: &LevelRecord) -> u32 {
    let cells = f64::from(level.width.max(1) * level.height.max(1));
    ((f64::from(level.holes) / cells + 0.025) * 10.0).floor() as u32
}

/// A level sampler that redesigns the generator configuration between phases.
#[derive(Debug)]
pub struct PhaseSampler {
    designer: Designer,
    limits: DesignLimits,
    phase_episodes: u32,
    phases: u32,
    history: History,
    /// The current phase's configuration (none before the first call).
    config: Option<RoundConfig>,
    /// The engineer's rationale for the current phase.
    rationale: Option<String>,
    /// This phase's outcomes by map size, and by cell of the design space (agents, map size,
    /// hole band: [`hole_band`]).
    tally: BTreeMap<u32, Tally>,
    cells: BTreeMap<(u32, u32, u32), Tally>,
    /// The last finished phase's cells, for the engineer's context.
    last_cells: BTreeMap<(u32, u32, u32), Tally>,
    counted: u32,
    /// Notes of the last design (what was clamped, why a reply was not used).
    notes: Vec<String>,
    /// Every phase's design, with its rationale and notes.
    designs: Vec<PhaseDesign>,
    /// Why the sampler cannot go on: a restore whose replay the curriculum refused, after
    /// calling it (its own state is no longer a fresh one's).
    spoiled: Option<String>,
}

impl PhaseSampler {
    /// Phases of `phase_episodes` ended episodes, designed by `designer` within `limits` (the
    /// level space's); `phases` is how many a run is planned to have (module T says it).
    ///
    /// # Errors
    /// [`PluginError::Config`] for 0 episodes a phase.
    pub fn new(
        designer: Designer,
        limits: DesignLimits,
        phase_episodes: u32,
        phases: u32,
    ) -> Result<Self, PluginError> {
        if phase_episodes == 0 {
            return Err(PluginError::Config("phase_episodes must be at least 1".into()));
        }
        Ok(PhaseSampler {
            designer,
            limits,
            phase_episodes,
            phases: phases.max(1),
            history: History::default(),
            config: None,
            rationale: None,
            tally: BTreeMap::new(),
            cells: BTreeMap::new(),
            last_cells: BTreeMap::new(),
            counted: 0,
            notes: Vec::new(),
            designs: Vec::new(),
            spoiled: None,
        })
    }

    /// The phases finished so far, with their configurations and outcomes (what the tests read;
    /// a host reads the designs, [`LevelSampler::designs`]).
    #[cfg(test)]
    fn history(&self) -> &History {
        &self.history
    }

    /// The phase's record: its configuration and its results by map size.
    fn record(&self, round: u32, config: &RoundConfig) -> RoundRecord {
        let results = self
            .tally
            .iter()
            .filter(|(&size, _)| (2..=256).contains(&size))
            .map(|(&size, t)| SizeResult {
                size,
                valid_rate: f64::from(t.successes) / f64::from(t.episodes.max(1)),
                optimal_rate: 0.0,
                instances: t.episodes,
                failures: t.failures.clone(),
                mean_abs_advantage: None,
            })
            .collect();
        RoundRecord { round, config: config.clone(), results }
    }

    /// The next phase's configuration, recorded with its rationale and notes.
    fn design(&mut self) -> Result<RoundConfig, PluginError> {
        let phase = self.history.next_round();
        let (config, rationale) = self.designed()?;
        self.designs.push(PhaseDesign {
            phase,
            config: config.clone(),
            rationale,
            notes: self.notes.clone(),
        });
        Ok(config)
    }

    /// The next phase's configuration, as the designer writes it and the limits adopt it, with
    /// the rationale given for it (none from a curriculum, nor when the engineer's reply was not
    /// used and the previous configuration kept).
    fn designed(&mut self) -> Result<(RoundConfig, Option<String>), PluginError> {
        self.notes.clear();
        let round = self.history.next_round();
        match &mut self.designer {
            Designer::Curriculum(c) => {
                let config = c.next_config(&self.history)?;
                let (config, notes) = self.limits.clamp(&config).map_err(|e| {
                    PluginError::BadOutput(format!(
                        "the curriculum's configuration does not fit the level space: {e}"
                    ))
                })?;
                self.notes = notes;
                Ok((config, None))
            }
            Designer::Engineer { engineer, context } => {
                let Some(previous) = self.history.last().map(|r| r.config.clone()) else {
                    let (config, notes) = self.limits.clamp(&RoundConfig::round0_default()).map_err(|e| {
                        PluginError::Config(format!("the level space admits no configuration: {e}"))
                    })?;
                    self.notes = notes;
                    return Ok((config, None));
                };
                let input = ContextInput {
                    history: &self.history,
                    round,
                    rounds: self.phases,
                    epochs: 1,
                    samples: self.phase_episodes as usize,
                    previous_rationale: self.rationale.as_deref(),
                    hyperparameters: serde_json::json!({"phase_episodes": self.phase_episodes}),
                    limits: &self.limits,
                };
                let text = context
                    .assemble_phase(&input, &cells_of(&self.last_cells))
                    .map_err(|e| PluginError::Config(format!("the engineer's context: {e}")))?;
                let adopted = self.limits.adopt(engineer.design(&text, &self.limits));
                self.notes = adopted.notes;
                Ok(match adopted.chosen {
                    Some((config, rationale)) => {
                        self.rationale = Some(rationale.clone());
                        (config, Some(rationale))
                    }
                    None => (previous, None),
                })
            }
        }
    }

    /// Refill every slot from `config`, with equal weights.
    fn plan(config: &RoundConfig, slots: usize) -> LevelPlan {
        LevelPlan {
            weights: Some(vec![1.0; slots]),
            refill: (0..slots as u32).collect(),
            config: Some(config.clone()),
            edits: Vec::new(),
        }
    }
}

/// A phase's cells as the engineer's context reads them.
fn cells_of(cells: &BTreeMap<(u32, u32, u32), Tally>) -> Vec<Cell> {
    cells
        .iter()
        .map(|(&(agents, size, band), t)| Cell {
            agents,
            size,
            hole_band: (f64::from(band) / 10.0, f64::from(band + 1) / 10.0),
            plays: t.episodes,
            successes: t.successes,
            failures: t.failures.clone(),
        })
        .collect()
}

/// A phase sampler's saved form ([`LevelSampler::save`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    phase_episodes: u32,
    phases: u32,
    /// `curriculum` or `engineer`.
    designer: String,
    history: History,
    config: Option<RoundConfig>,
    rationale: Option<String>,
    tally: Vec<(u32, Tally)>,
    cells: Vec<((u32, u32, u32), Tally)>,
    last_cells: Vec<((u32, u32, u32), Tally)>,
    counted: u32,
    notes: Vec<String>,
    designs: Vec<PhaseDesign>,
}

impl PhaseSampler {
    fn designer_kind(&self) -> &'static str {
        match self.designer {
            Designer::Curriculum(_) => "curriculum",
            Designer::Engineer { .. } => "engineer",
        }
    }

    /// A curriculum called again as it was called for each saved design (the history of the
    /// phases before it), its clamped configuration checked against the design.
    fn replay(&mut self, saved: &Saved) -> Result<(), PluginError> {
        let Designer::Curriculum(c) = &mut self.designer else { return Ok(()) };
        if !self.designs.is_empty() {
            return Err(PluginError::BadInput(
                "a curriculum's phase sampler restores into a new sampler only (this one has designed phases: its \
                 curriculum is not a fresh one)"
                    .into(),
            ));
        }
        for (i, design) in saved.designs.iter().enumerate() {
            let before = History { rounds: saved.history.rounds.iter().take(i).cloned().collect() };
            let limits = &self.limits;
            let designed = c.next_config(&before).and_then(|config| {
                let clamped = limits.clamp(&config).map(|(c, _)| c).ok();
                if clamped.as_ref() == Some(&design.config) {
                    return Ok(());
                }
                Err(PluginError::BadInput(format!(
                    "the saved phase sampler's phase {} was designed as {}, and its curriculum designs {} when replayed: \
                     restore it with the curriculum and parameters it was saved with",
                    design.phase,
                    serde_json::to_string(&design.config).unwrap_or_default(),
                    clamped.map_or_else(|| "a configuration outside the level space".into(), |c| {
                        serde_json::to_string(&c).unwrap_or_default()
                    })
                )))
            });
            if let Err(e) = designed {
                // The curriculum was called: this sampler cannot design as a fresh one would.
                self.spoiled = Some(format!(
                    "its restore was refused after its curriculum was replayed ({e}): make a new one"
                ));
                return Err(e);
            }
        }
        Ok(())
    }
}

impl LevelSampler for PhaseSampler {
    fn designs(&self) -> &[PhaseDesign] {
        &self.designs
    }

    fn save(&self) -> Result<String, PluginError> {
        let saved = Saved {
            phase_episodes: self.phase_episodes,
            phases: self.phases,
            designer: self.designer_kind().into(),
            history: self.history.clone(),
            config: self.config.clone(),
            rationale: self.rationale.clone(),
            tally: self.tally.iter().map(|(&k, t)| (k, t.clone())).collect(),
            cells: self.cells.iter().map(|(&k, t)| (k, t.clone())).collect(),
            last_cells: self.last_cells.iter().map(|(&k, t)| (k, t.clone())).collect(),
            counted: self.counted,
            notes: self.notes.clone(),
            designs: self.designs.clone(),
        };
        serde_json::to_string(&saved)
            .map_err(|e| PluginError::Failed(format!("saving the phase sampler: {e}")))
    }

    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        let saved: Saved = floe_core::json::from_str(state).map_err(|e| {
            PluginError::BadInput(format!("a saved phase sampler's state does not read: {e}"))
        })?;
        let ours = (self.phase_episodes, self.phases, self.designer_kind());
        let theirs = (saved.phase_episodes, saved.phases, saved.designer.as_str());
        if ours != theirs {
            return Err(PluginError::BadInput(format!(
                "the state was saved by phases of {} episodes, {} phases, designed by a {}, and this sampler has {}, {}, a {}",
                theirs.0, theirs.1, theirs.2, ours.0, ours.1, ours.2
            )));
        }
        let designs_match = saved.designs.len()
            == saved.history.rounds.len() + usize::from(saved.config.is_some())
            && saved.designs.last().map(|d| &d.config) == saved.config.as_ref();
        if !designs_match {
            return Err(PluginError::BadInput(format!(
                "the saved phase sampler holds {} designs for {} finished phases and {} current configuration",
                saved.designs.len(),
                saved.history.rounds.len(),
                if saved.config.is_some() { "a" } else { "no" }
            )));
        }
        self.replay(&saved)?;
        self.history = saved.history;
        self.config = saved.config;
        self.rationale = saved.rationale;
        self.tally = saved.tally.into_iter().collect();
        self.cells = saved.cells.into_iter().collect();
        self.last_cells = saved.last_cells.into_iter().collect();
        self.counted = saved.counted;
        self.notes = saved.notes;
        self.designs = saved.designs;
        Ok(())
    }

    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        _scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        if let Some(why) = &self.spoiled {
            return Err(PluginError::BadInput(format!("the phase sampler cannot go on: {why}")));
        }
        let Some(config) = self.config.clone() else {
            let config = self.design()?;
            self.config = Some(config.clone());
            return Ok(Self::plan(&config, levels.len()));
        };
        for e in episodes {
            let Some(level) = levels.get(e.instance as usize) else { continue };
            // Episodes of levels refilled since belong to no phase's configuration.
            if level.generation != e.generation {
                continue;
            }
            let size = level.width.max(level.height);
            let cell = (level.agents, size, hole_band(level));
            for t in [self.tally.entry(size).or_default(), self.cells.entry(cell).or_default()] {
                t.count(e);
            }
            self.counted += 1;
        }
        if self.counted < self.phase_episodes {
            return Ok(LevelPlan::default());
        }
        let round = self.history.next_round();
        let record = self.record(round, &config);
        self.history.rounds.push(record);
        self.tally.clear();
        self.last_cells = std::mem::take(&mut self.cells);
        self.counted = 0;
        let next = self.design()?;
        self.config = Some(next.clone());
        Ok(Self::plan(&next, levels.len()))
    }
}

#[cfg(test)]
mod tests {
    use floe_plugin_api::SizeConfig;

    use super::*;

    /// Records every history it is asked about, and moves all data to the size with the lowest
    /// valid rate.
    struct Hardest(std::sync::Arc<std::sync::Mutex<Vec<History>>>);

    impl Curriculum for Hardest {
        fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
            self.0.lock().unwrap().push(history.clone());
            let size = history
                .last()
                .and_then(|r| r.results.iter().min_by(|a, b| a.valid_rate.total_cmp(&b.valid_rate)))
                .map_or(5, |r| r.size);
            Ok(RoundConfig {
                sizes: vec![SizeConfig { size, data_ratio: 1.0, hole_ratio: 0.1, wait_ratio: 0.0 }],
                agents: vec![2],
                replay_fraction: 0.0,
            })
        }
    }

    fn level(slot: u32, size: u32) -> LevelRecord {
        LevelRecord { slot, width: size, height: size, agents: 2, ..LevelRecord::default() }
    }

    fn ep(slot: u32, outcome: u32, kind: u32) -> EpisodeRecord {
        EpisodeRecord { instance: slot, outcome, failure_kind: kind, ..EpisodeRecord::default() }
    }

    #[test]
    fn a_phase_becomes_a_round_of_outcomes_by_size_and_the_next_design_refills_the_pool() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let limits = DesignLimits {
            min_size: 5,
            max_size: 8,
            agents: vec![2],
            max_sizes: 4,
            ..DesignLimits::default()
        };
        let mut s =
            PhaseSampler::new(Designer::Curriculum(Box::new(Hardest(seen.clone()))), limits, 4, 3).unwrap();
        let levels = [level(0, 5), level(1, 8), level(2, 8)];
        let first = s.update(&levels, &[], None).unwrap();
        assert_eq!(first.refill, vec![0, 1, 2]);
        assert_eq!(first.config.unwrap().sizes[0].size, 5);
        // Three episodes: not a phase yet.
        let eps = [ep(0, 1, 0), ep(1, 2, 5), ep(2, 3, 0)];
        assert_eq!(s.update(&levels, &eps, None).unwrap(), LevelPlan::default());
        let plan = s.update(&levels, &[ep(1, 1, 0)], None).unwrap();
        let record = &s.history().rounds[0];
        assert_eq!(record.round, 0);
        let by: Vec<(u32, f64, u32)> =
            record.results.iter().map(|r| (r.size, r.valid_rate, r.instances)).collect();
        assert_eq!(by, vec![(5, 1.0, 1), (8, 1.0 / 3.0, 3)]);
        let f = &record.results[1].failures;
        assert_eq!((f[&FailureKind::Hole], f[&FailureKind::GoalNotReached]), (1, 1));
        assert_eq!(
            plan.config.unwrap().sizes[0].size,
            8,
            "the designer read the phase: size 8 is the hardest"
        );
        assert_eq!(plan.refill.len(), 3);
        assert_eq!(seen.lock().unwrap().len(), 2);
        // An episode of a level refilled since counts for no phase.
        let refilled = [level(0, 5), LevelRecord { generation: 1, ..level(1, 8) }, level(2, 8)];
        s.update(&refilled, &[ep(1, 1, 0)], None).unwrap();
        assert_eq!(s.counted, 0);
    }

    #[test]
    fn a_configuration_outside_the_space_is_clamped_into_it() {
        let limits = DesignLimits {
            min_size: 5,
            max_size: 6,
            agents: vec![2, 3],
            max_sizes: 2,
            ..DesignLimits::default()
        };
        let c =
            floe_plugins::curriculum::Fixed::new(floe_plugins::curriculum::FixedParams::default()).unwrap();
        let mut s = PhaseSampler::new(Designer::Curriculum(Box::new(c)), limits, 1, 1).unwrap();
        let plan = s.update(&[level(0, 5)], &[], None).unwrap();
        let cfg = plan.config.unwrap();
        assert!(cfg.sizes.iter().all(|c| (5..=6).contains(&c.size)), "{cfg:?}");
        // The design is recorded with the notes of what was clamped.
        let d = &s.designs()[0];
        assert_eq!((d.phase, &d.config, &d.rationale), (0, &cfg, &None));
        assert!(!d.notes.is_empty());
    }

    /// Records every context it is given, and answers with one map size.
    struct Reader(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl EnvEngineer for Reader {
        fn design(
            &mut self,
            context: &str,
            _: &DesignLimits,
        ) -> Result<floe_plugin_api::design::EngineerReply, PluginError> {
            self.0.lock().unwrap().push(context.to_string());
            Ok(floe_plugin_api::design::EngineerReply {
                config: RoundConfig {
                    sizes: vec![SizeConfig { size: 6, data_ratio: 1.0, hole_ratio: 0.2, wait_ratio: 0.5 }],
                    agents: vec![3],
                    replay_fraction: 0.0,
                },
                rationale: "the 3-agent cells fail most".into(),
                raw: Vec::new(),
                notes: Vec::new(),
            })
        }
    }

    #[test]
    fn the_engineer_reads_each_cell_of_the_phase_and_no_design_to_copy() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let limits = DesignLimits {
            min_size: 5,
            max_size: 8,
            agents: vec![2, 3],
            max_sizes: 4,
            ..DesignLimits::default()
        };
        let designer = Designer::Engineer {
            engineer: Box::new(Reader(seen.clone())),
            context: ContextOptions::default(),
        };
        let mut s = PhaseSampler::new(designer, limits, 4, 3).unwrap();
        // Two agents on 5×5 with 5 holes (ratio 0.2), three on 8×8 with none.
        let levels = [
            LevelRecord { holes: 5, ..level(0, 5) },
            LevelRecord { agents: 3, ..level(1, 8) },
            LevelRecord { agents: 3, ..level(2, 8) },
        ];
        s.update(&levels, &[], None).unwrap();
        let plan = s.update(&levels, &[ep(0, 1, 0), ep(0, 1, 0), ep(1, 2, 5), ep(2, 3, 0)], None).unwrap();
        assert_eq!(plan.config.unwrap().agents, vec![3]);
        let contexts = seen.lock().unwrap();
        assert_eq!(contexts.len(), 1, "round 0 is the default; phase 1 is the engineer's");
        let text = &contexts[0];
        assert!(text.contains("| 2 | 5x5 | 0.2–0.3 | 2 | 100.0 | 0.000 | none |"), "{text}");
        assert!(
            text.contains("| 3 | 8x8 | 0.0–0.1 | 2 | 0.0 | 0.000 | hole 1, goal_not_reached 1 |"),
            "{text}"
        );
        assert!(
            text.contains("map sizes 5–8 (at most 4 in one configuration); agent counts among 2, 3"),
            "{text}"
        );
        // The reply's form holds no design: no line of it reads as a reply.
        for line in text.lines().filter(|l| l.starts_with('{')) {
            assert!(serde_json::from_str::<floe_plugin_api::design::EngineerReply>(line).is_err(), "{line}");
        }
        assert!(text.contains("\"size\": <map size>"), "{text}");
        assert_eq!(s.designs()[1].rationale.as_deref(), Some("the 3-agent cells fail most"));
    }
}
