//! The context of one design, as the driver assembles it for the environment engineer: the
//! paper's modules filled from the run's records into an editable prompt template, with the
//! design limits written where the template asks.
//!
//! | module | what | from |
//! |---|---|---|
//! | F | failure counts by kind, valid and optimal rates, per map size, on the validation set after the last round | the last [`RoundRecord`] |
//! | G | design guidelines | an editable file (default `templates/guidelines.md`) |
//! | H | earlier configurations with their failures, with or without round 0's default | the history |
//! | S | the engineer's previous rationale | the run's designs |
//! | T | training details: round and epochs ("bookkeeping", the default), or also the trainee's hyperparameters ("full") | the run's settings and [`crate::Trainee::details`] |
//!
//! Presets (our reading of the paper's ablation, each adding to the one before, V4 replacing
//! V3's H): V1 = F; V2 = F G; V3 = F G H (with round 0); V4 = F G H (without round 0); V5 = V4 +
//! S; V6 = V5 + T, the default.
//!
//! The template (default `templates/context.md`) has the placeholders `{{F}}`, `{{G}}`, `{{H}}`,
//! `{{S}}`, `{{T}}` (each module's text, or nothing when the preset leaves it out), `{{round}}`
//! and `{{limits}}` (the [`DesignLimits`] as JSON, which the template must contain: a language
//! model reads them there). An engineer receives the same limits as a value beside the context
//! ([`floe_plugin_api::EnvEngineer::design`]); nothing reads them back out of the text.

use std::path::{Path, PathBuf};

use floe_plugin_api::design::{DesignLimits, HISTORY_FENCE};
use floe_plugin_api::{ConfigError, History, RoundRecord};
use serde::{Deserialize, Serialize};

/// The default prompt template.
pub const CONTEXT_TEMPLATE: &str = include_str!("../templates/context.md");
/// The default prompt template of the engineer between phases of a PPO's stepping
/// ([`ContextOptions::assemble_phase`]): the same modules, the design limits also as ranges
/// (`{{ranges}}`), and the reply's form with no design in it to copy.
pub const PHASE_TEMPLATE: &str = include_str!("../templates/phases.md");
/// The default design guidelines (module G).
pub const GUIDELINES: &str = include_str!("../templates/guidelines.md");

/// A module of the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Module {
    /// Failures per map size.
    F,
    /// Guidelines.
    G,
    /// History of configurations and failures.
    H,
    /// The previous rationale.
    S,
    /// Training details.
    T,
}

/// The paper's context variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preset {
    /// F.
    V1,
    /// F G.
    V2,
    /// F G H, with round 0's default in H.
    V3,
    /// F G H, without round 0's default.
    V4,
    /// V4 + S.
    V5,
    /// V5 + T (bookkeeping): the default.
    V6,
}

impl Preset {
    /// Every preset, in order.
    pub const ALL: [Preset; 6] = [Preset::V1, Preset::V2, Preset::V3, Preset::V4, Preset::V5, Preset::V6];

    /// The modules it includes.
    #[must_use]
    pub fn modules(self) -> &'static [Module] {
        use Module::{F, G, H, S, T};
        match self {
            Preset::V1 => &[F],
            Preset::V2 => &[F, G],
            Preset::V3 | Preset::V4 => &[F, G, H],
            Preset::V5 => &[F, G, H, S],
            Preset::V6 => &[F, G, H, S, T],
        }
    }

    /// Whether H includes round 0 (the default configuration).
    #[must_use]
    pub fn history_with_default(self) -> bool {
        self == Preset::V3
    }
}

/// How much of the training module T says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainingDetails {
    /// Round and epochs only (the paper's best).
    Bookkeeping,
    /// Also the hyperparameters.
    Full,
}

/// How the context is assembled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextOptions {
    /// The modules \[`V6`\].
    pub preset: Preset,
    /// Module T's detail \[`bookkeeping`\].
    pub training_details: TrainingDetails,
    /// A guidelines file (module G) instead of the built-in one \[absent\].
    pub guidelines: Option<PathBuf>,
    /// A prompt template file instead of the built-in one \[absent\].
    pub template: Option<PathBuf>,
    /// Append the whole history as JSON in a fence opened with `` ```json history `` \[false\]:
    /// what the rule-based engineer `rules` reads (a language model reads the modules).
    pub history_json: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            preset: Preset::V6,
            training_details: TrainingDetails::Bookkeeping,
            guidelines: None,
            template: None,
            history_json: false,
        }
    }
}

/// What the trainer knows when it assembles a context.
#[derive(Debug, Clone)]
pub struct ContextInput<'a> {
    /// Every finished round (the last one is F's).
    pub history: &'a History,
    /// The round to design.
    pub round: u32,
    /// Rounds in the run.
    pub rounds: u32,
    /// Passes over each round's training set.
    pub epochs: u32,
    /// Prompts a round.
    pub samples: usize,
    /// The engineer's rationale for the previous round, if it designed it.
    pub previous_rationale: Option<&'a str>,
    /// The hyperparameters, for T in `full` detail.
    pub hyperparameters: serde_json::Value,
    /// What may be designed.
    pub limits: &'a DesignLimits,
}

/// What one cell of the design space came to in a phase: the episodes on levels of `agents`
/// agents on `size`×`size` maps whose hole ratio lies in `hole_band`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub agents: u32,
    pub size: u32,
    /// The hole ratio's band, `[low, high)`.
    pub hole_band: (f64, f64),
    /// Episodes played, and those that succeeded.
    pub plays: u32,
    pub successes: u32,
    /// The failed episodes by kind (`goal_not_reached` for those that ran out of steps).
    pub failures: std::collections::BTreeMap<floe_core::FailureKind, u32>,
}

/// Module F's per-cell table: plays, success, p·(1−p) and the failure kinds of each cell.
fn cells_table(cells: &[Cell]) -> String {
    let mut s = String::from(
        "| agents | map size | hole ratio | plays | success % | p·(1−p) | failures by kind |\n|---|---|---|---|---|---|---|\n",
    );
    for c in cells {
        let p = f64::from(c.successes) / f64::from(c.plays.max(1));
        let failures: Vec<String> = c.failures.iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
        s.push_str(&format!(
            "| {0} | {1}x{1} | {2:.1}–{3:.1} | {4} | {5:.1} | {6:.3} | {7} |\n",
            c.agents,
            c.size,
            c.hole_band.0,
            c.hole_band.1,
            c.plays,
            100.0 * p,
            p * (1.0 - p),
            if failures.is_empty() { "none".into() } else { failures.join(", ") }
        ));
    }
    s
}

/// The design limits as ranges, in words.
fn ranges(limits: &DesignLimits) -> String {
    let agents: Vec<String> = limits.agents.iter().map(ToString::to_string).collect();
    format!(
        "map sizes {}–{} (at most {} in one configuration); agent counts among {}; hole_ratio 0–{}; \
         wait_ratio 0–1; data_ratio 0–1 for each size.",
        limits.min_size,
        limits.max_size,
        limits.max_sizes,
        agents.join(", "),
        limits.max_hole_ratio
    )
}

fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::Invalid(format!("{}: {e}", path.display())))
}

/// F's last line: the map sizes from the lowest valid rate to the highest (ties by size). With it
/// an engineer model put its data where the failures were more often (docs/engineer.md).
fn ranking(r: &RoundRecord) -> String {
    let mut sizes: Vec<_> = r.results.iter().collect();
    sizes.sort_by(|a, b| a.valid_rate.total_cmp(&b.valid_rate).then(a.size.cmp(&b.size)));
    let listed: Vec<String> =
        sizes.iter().map(|res| format!("{0}x{0} {1:.1}%", res.size, 100.0 * res.valid_rate)).collect();
    format!("Map sizes from the lowest valid rate: {}.\n", listed.join(", "))
}

fn results_table(r: &RoundRecord) -> String {
    let mut s = String::from(
        "| map size | instances | valid % | optimal % | failures by kind |\n|---|---|---|---|---|\n",
    );
    for res in &r.results {
        let failures: Vec<String> = res.failures.iter().map(|(k, n)| format!("{} {n}", k.name())).collect();
        s.push_str(&format!(
            "| {0}x{0} | {1} | {2:.1} | {3:.1} | {4} |\n",
            res.size,
            res.instances,
            100.0 * res.valid_rate,
            100.0 * res.optimal_rate,
            if failures.is_empty() { "none".into() } else { failures.join(", ") }
        ));
    }
    s
}

impl ContextOptions {
    /// Whether `engineer` reads the history as JSON (which `history_json` appends): the
    /// built-in `rules` does. The one place this rule lives.
    #[must_use]
    pub fn reads_history_json(engineer: &floe_plugin_api::PluginSpec) -> bool {
        engineer.library.is_none() && engineer.name == "rules"
    }

    /// Checks that the context serves `engineer` ([`Self::reads_history_json`]); the rounds'
    /// settings and the engineer between phases of stepping both check it here.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] saying what to set.
    pub fn check_reader(&self, engineer: &floe_plugin_api::PluginSpec) -> Result<(), ConfigError> {
        if Self::reads_history_json(engineer) && !self.history_json {
            return Err(ConfigError::Invalid(
                "engineer `rules` reads the history as JSON: set context.history_json to true".into(),
            ));
        }
        Ok(())
    }

    /// The options `engineer` is given: `given`, checked against what it reads
    /// ([`Self::check_reader`]); without options, the defaults, with the history as JSON for an
    /// engineer that reads it.
    ///
    /// # Errors
    /// As [`Self::check_reader`].
    pub fn for_engineer(
        given: Option<ContextOptions>,
        engineer: &floe_plugin_api::PluginSpec,
    ) -> Result<ContextOptions, ConfigError> {
        let options = given.unwrap_or_else(|| ContextOptions {
            history_json: Self::reads_history_json(engineer),
            ..ContextOptions::default()
        });
        options.check_reader(engineer)?;
        Ok(options)
    }

    /// Checks that the files it names can be read and that the template is usable.
    ///
    /// # Errors
    /// An unreadable file, or a template without `{{limits}}` (a language-model engineer is
    /// told its limits there).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(g) = &self.guidelines {
            read_file(g)?;
        }
        let t = self.template_text()?;
        if !t.contains("{{limits}}") {
            return Err(ConfigError::Invalid(
                "the context template must hold {{limits}}, where the design limits are written".into(),
            ));
        }
        Ok(())
    }

    fn template_text(&self) -> Result<String, ConfigError> {
        self.template.as_deref().map_or(Ok(CONTEXT_TEMPLATE.to_string()), read_file)
    }

    /// The context of one design.
    ///
    /// # Errors
    /// A template or guidelines file that cannot be read.
    pub fn assemble(&self, input: &ContextInput<'_>) -> Result<String, ConfigError> {
        self.assemble_from(input, CONTEXT_TEMPLATE, &[])
    }

    /// The context of one phase's design between phases of a PPO's stepping: [`PHASE_TEMPLATE`]
    /// unless a template is given, module F with each cell of the design space the phase played
    /// ([`Cell`]: plays, success, p·(1−p), failures by kind) after its per-size table, and the
    /// design limits as ranges where the template has `{{ranges}}`.
    ///
    /// # Errors
    /// A template or guidelines file that cannot be read.
    pub fn assemble_phase(&self, input: &ContextInput<'_>, cells: &[Cell]) -> Result<String, ConfigError> {
        self.assemble_from(input, PHASE_TEMPLATE, cells)
    }

    fn assemble_from(
        &self,
        input: &ContextInput<'_>,
        template: &str,
        cells: &[Cell],
    ) -> Result<String, ConfigError> {
        let has = |m| self.preset.modules().contains(&m);
        let mut f = String::new();
        if has(Module::F) {
            if let Some(last) = input.history.last() {
                f = format!(
                    "## F: failures on the validation set after round {}\n\n{}\n{}\n",
                    last.round,
                    results_table(last),
                    ranking(last)
                );
                if !cells.is_empty() {
                    f = format!(
                        "## F: outcomes of phase {}\n\nBy map size:\n\n{}\n{}\nBy cell of the design space (agents × map size × hole ratio):\n\n{}\n",
                        last.round,
                        results_table(last),
                        ranking(last),
                        cells_table(cells)
                    );
                }
            }
        }
        let mut g = String::new();
        if has(Module::G) {
            let text = self.guidelines.as_deref().map_or(Ok(GUIDELINES.to_string()), read_file)?;
            g = format!("## G: design guidelines\n\n{}\n\n", text.trim_end());
        }
        let mut h = String::new();
        if has(Module::H) {
            let with0 = self.preset.history_with_default();
            let rounds: Vec<&RoundRecord> =
                input.history.rounds.iter().filter(|r| with0 || r.round > 0).collect();
            h = String::from("## H: earlier configurations and their results\n\n");
            if rounds.is_empty() {
                h.push_str("(none yet besides the default configuration of round 0)\n\n");
            }
            for r in rounds {
                h.push_str(&format!("Round {}: {}\n\n{}\n", r.round, r.config.to_json(), results_table(r)));
            }
        }
        let mut s = String::new();
        if has(Module::S) {
            s = format!(
                "## S: your rationale for the previous round\n\n{}\n\n",
                input.previous_rationale.unwrap_or("(none: you did not design the previous round)")
            );
        }
        let mut t = String::new();
        if has(Module::T) {
            t = format!(
                "## T: training\n\nRound {} of {} (rounds 0 to {}); each round trains {} epoch(s) over {} prompts.\n",
                input.round,
                input.rounds,
                input.rounds.saturating_sub(1),
                input.epochs,
                input.samples
            );
            if self.training_details == TrainingDetails::Full {
                t.push_str(&format!("Hyperparameters: {}\n", input.hyperparameters));
            }
            t.push('\n');
        }
        let limits = serde_json::to_string(input.limits).unwrap_or_default();
        let given = self.template.as_deref().map(read_file).transpose()?;
        let mut text = given
            .unwrap_or_else(|| template.to_string())
            .replace("{{F}}", &f)
            .replace("{{G}}", &g)
            .replace("{{H}}", &h)
            .replace("{{S}}", &s)
            .replace("{{T}}", &t)
            .replace("{{round}}", &input.round.to_string())
            .replace("{{limits}}", &limits)
            .replace("{{ranges}}", &ranges(input.limits));
        if self.history_json {
            text.push_str(&format!("\n{HISTORY_FENCE}\n{}\n```\n", input.history.to_json()));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::FailureKind;
    use floe_plugin_api::RoundConfig;
    use floe_plugin_api::SizeResult;

    fn history() -> History {
        History {
            rounds: vec![RoundRecord {
                round: 0,
                config: RoundConfig::round0_default(),
                results: vec![SizeResult {
                    size: 3,
                    valid_rate: 0.5,
                    optimal_rate: 0.25,
                    instances: 100,
                    failures: [(FailureKind::VertexConflict, 40), (FailureKind::Hole, 10)].into(),
                    mean_abs_advantage: None,
                }],
            }],
        }
    }

    #[test]
    fn the_ranking_lists_sizes_from_the_lowest_valid_rate_ties_by_size() {
        let mut h = history();
        let size = |size: u32, valid_rate: f64| SizeResult {
            size,
            valid_rate,
            optimal_rate: valid_rate / 2.0,
            instances: 8,
            failures: Default::default(),
            mean_abs_advantage: None,
        };
        h.rounds[0].results = vec![size(3, 0.875), size(4, 0.25), size(5, 0.875), size(6, 0.0)];
        assert_eq!(
            ranking(&h.rounds[0]),
            "Map sizes from the lowest valid rate: 6x6 0.0%, 4x4 25.0%, 3x3 87.5%, 5x5 87.5%.\n"
        );
    }

    /// Round 1 of 3's input, 2 epochs of 1536 prompts.
    fn input<'a>(history: &'a History, limits: &'a DesignLimits) -> ContextInput<'a> {
        ContextInput {
            history,
            round: 1,
            rounds: 3,
            epochs: 2,
            samples: 1536,
            previous_rationale: None,
            hyperparameters: serde_json::json!({"lr": 5e-5}),
            limits,
        }
    }

    #[test]
    fn presets_choose_modules_and_the_limits_are_written() {
        let limits = DesignLimits { agents: vec![2], ..DesignLimits::default() };
        let h = history();
        let input = input(&h, &limits);
        let v1 = ContextOptions { preset: Preset::V1, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v1.contains("## F:") && v1.contains("hole 10, vertex_conflict 40"), "{v1}");
        assert!(v1.contains("Map sizes from the lowest valid rate: 3x3 50.0%.\n"), "{v1}");
        assert!(!v1.contains("## G:") && !v1.contains("## H:") && !v1.contains("## T:"));
        let v3 = ContextOptions { preset: Preset::V3, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v3.contains("Round 0: {\"sizes\""), "{v3}");
        let v4 = ContextOptions { preset: Preset::V4, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v4.contains("## H:") && !v4.contains("Round 0: {"));
        let v6 = ContextOptions::default().assemble(&input).unwrap();
        assert!(v6.contains("## S:") && v6.contains("Round 1 of 3") && !v6.contains("Hyperparameters"));
        let full = ContextOptions { training_details: TrainingDetails::Full, ..ContextOptions::default() };
        assert!(full.assemble(&input).unwrap().contains("Hyperparameters: {\"lr\":"));
        assert!(
            v6.contains(&format!("```json limits\n{}\n```", serde_json::to_string(&limits).unwrap())),
            "{v6}"
        );
        ContextOptions::default().validate().unwrap();
    }

    #[test]
    fn the_rounds_reply_form_holds_a_design_and_the_phases_form_none() {
        let limits = DesignLimits::default();
        let h = history();
        let input = input(&h, &limits);
        let replies = |text: &str| {
            text.lines()
                .filter(|l| serde_json::from_str::<floe_plugin_api::design::EngineerReply>(l).is_ok())
                .count()
        };
        let options = ContextOptions::default();
        assert_eq!(replies(&options.assemble(&input).unwrap()), 1, "the rounds' template shows one");
        let cell = Cell {
            agents: 2,
            size: 3,
            hole_band: (0.2, 0.3),
            plays: 4,
            successes: 1,
            failures: [(FailureKind::Hole, 3)].into_iter().collect(),
        };
        let phase = options.assemble_phase(&input, &[cell]).unwrap();
        assert_eq!(replies(&phase), 0, "{phase}");
        assert!(phase.contains("| 2 | 3x3 | 0.2–0.3 | 4 | 25.0 | 0.188 | hole 3 |"), "{phase}");
        assert!(phase.contains("hole_ratio 0–0.4; wait_ratio 0–1"), "{phase}");
        assert!(!phase.contains("{{"), "every placeholder filled: {phase}");
    }
}
