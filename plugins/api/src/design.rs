//! The environment engineer's side of the loop, as data and text: the context a trainer
//! assembles for it (the paper's modules F, G, H, S, T and presets V1–V6), the limits of what it
//! may design, and the strict reading of its reply (parse, clamp with reasons, validate). A
//! language-model engineer also derives its JSON schema and GBNF grammar here, from the same
//! limits, so that what it is asked for and what is accepted never disagree.
//!
//! # Context modules
//! | module | what | from |
//! |---|---|---|
//! | F | failure counts by kind, valid and optimal rates, per map size, on the validation set after the last round | the last [`crate::RoundRecord`] |
//! | G | design guidelines | an editable file (default `templates/guidelines.md`) |
//! | H | earlier configurations with their failures, with or without round 0's default | the history |
//! | S | the engineer's previous rationale | the run's designs |
//! | T | training details: round and epochs ("bookkeeping", the default), or also the hyperparameters ("full") | the run's configuration |
//!
//! Presets (our reading of the paper's ablation, each adding to the one before, V4 replacing
//! V3's H): V1 = F; V2 = F G; V3 = F G H (with round 0); V4 = F G H (without round 0); V5 = V4 +
//! S; V6 = V5 + T, the default.
//!
//! The prompt is a template file (default `templates/context.md`) with the placeholders
//! `{{F}}`, `{{G}}`, `{{H}}`, `{{S}}`, `{{T}}` (each module's text, or nothing when the preset
//! leaves it out), `{{round}}` and `{{limits}}` (the [`DesignLimits`] as JSON, which the
//! template must contain inside a fence opened with `` ```json limits ``, so that an engineer
//! can read them back with [`DesignLimits::from_context`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{RoundConfig, SizeConfig, DATA_RATIO_TOLERANCE};
use crate::error::ConfigError;
use crate::history::{History, RoundRecord};
use crate::traits::EngineerReply;

/// The default prompt template.
pub const CONTEXT_TEMPLATE: &str = include_str!("../templates/context.md");
/// The default design guidelines (module G).
pub const GUIDELINES: &str = include_str!("../templates/guidelines.md");
/// The fence that opens the limits in a context.
pub const LIMITS_FENCE: &str = "```json limits";
/// The fence that opens the history in a context with [`ContextOptions::history_json`].
pub const HISTORY_FENCE: &str = "```json history";

/// What an engineer may design: every configuration it returns is clamped into these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DesignLimits {
    /// Smallest map size \[3\].
    pub min_size: u32,
    /// Largest map size \[6\].
    pub max_size: u32,
    /// The agent counts it may choose from \[2, 3\].
    pub agents: Vec<u32>,
    /// Largest hole ratio \[0.4\].
    pub max_hole_ratio: f64,
    /// Most map sizes in one configuration \[4\].
    pub max_sizes: usize,
    /// Largest replay fraction \[0.5\]; a trainer with nothing that can replay sets it to 0.
    pub max_replay_fraction: f64,
}

impl Default for DesignLimits {
    fn default() -> Self {
        DesignLimits {
            min_size: 3,
            max_size: 6,
            agents: vec![2, 3],
            max_hole_ratio: 0.4,
            max_sizes: 4,
            max_replay_fraction: 0.5,
        }
    }
}

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

fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::Invalid(format!("{}: {e}", path.display())))
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
    /// Checks that the files it names can be read and that the template is usable.
    ///
    /// # Errors
    /// An unreadable file, or a template without `{{limits}}` inside a `` ```json limits `` fence.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(g) = &self.guidelines {
            read_file(g)?;
        }
        let t = self.template_text()?;
        if !t.contains(&format!("{LIMITS_FENCE}\n{{{{limits}}}}")) {
            return Err(ConfigError::Invalid(format!(
                "the context template must hold {{{{limits}}}} on the line after {LIMITS_FENCE}"
            )));
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
        let has = |m| self.preset.modules().contains(&m);
        let mut f = String::new();
        if has(Module::F) {
            if let Some(last) = input.history.last() {
                f = format!(
                    "## F: failures on the validation set after round {}\n\n{}\n",
                    last.round,
                    results_table(last)
                );
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
        let mut text = self
            .template_text()?
            .replace("{{F}}", &f)
            .replace("{{G}}", &g)
            .replace("{{H}}", &h)
            .replace("{{S}}", &s)
            .replace("{{T}}", &t)
            .replace("{{round}}", &input.round.to_string())
            .replace("{{limits}}", &limits);
        if self.history_json {
            text.push_str(&format!("\n{HISTORY_FENCE}\n{}\n```\n", input.history.to_json()));
        }
        Ok(text)
    }
}

/// A reply's configuration as written, before clamping: numbers of any value, fields exact.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSize {
    size: i64,
    data_ratio: f64,
    hole_ratio: f64,
    wait_ratio: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    sizes: Vec<RawSize>,
    agents: Vec<i64>,
    #[serde(default)]
    replay_fraction: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReply {
    rationale: String,
    config: RawConfig,
}

/// An engineer's answer as the trainer takes it ([`DesignLimits::adopt`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Adopted {
    /// The clamped configuration and the rationale; `None`: the previous configuration stands.
    pub chosen: Option<(RoundConfig, String)>,
    /// The reply as the engineer wrote it (its raw texts, or its JSON); `None` when it failed
    /// without a reply.
    pub raw: Option<String>,
    /// Every raw reply of a language-model engineer, unchanged and in order, whether it
    /// succeeded or gave up ([`crate::PluginError::NoUsableReply`]); empty for other engineers.
    pub replies: Vec<String>,
    /// What was clamped, or why nothing was taken, and the engineer's own notes.
    pub notes: Vec<String>,
}

impl DesignLimits {
    /// Checks the limits themselves.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(format!("design limits: {m}")));
        if !(2..=256).contains(&self.min_size) || self.max_size < self.min_size || self.max_size > 256 {
            return bad("need 2 <= min_size <= max_size <= 256");
        }
        if self.agents.is_empty() || self.agents.contains(&0) {
            return bad("agents must be a non-empty list of counts of at least 1");
        }
        if !(self.max_hole_ratio.is_finite() && (0.0..1.0).contains(&self.max_hole_ratio)) {
            return bad("max_hole_ratio must be in [0, 1)");
        }
        if !(self.max_replay_fraction.is_finite() && (0.0..=1.0).contains(&self.max_replay_fraction)) {
            return bad("max_replay_fraction must be in [0, 1]");
        }
        if self.max_sizes == 0 {
            return bad("max_sizes must be at least 1");
        }
        // The smallest size must hold the largest agent count even at no holes.
        let k = self.agents.iter().copied().max().unwrap_or(1);
        if self.max_size * self.max_size < 2 * k {
            return bad("max_size is too small for the largest agent count");
        }
        Ok(())
    }

    /// The limits written in a context (the JSON after [`LIMITS_FENCE`]), if any.
    #[must_use]
    pub fn from_context(context: &str) -> Option<DesignLimits> {
        let start = context.rfind(LIMITS_FENCE)? + LIMITS_FENCE.len();
        let body = &context[start..];
        let end = body.find("```")?;
        let l: DesignLimits = serde_json::from_str(body[..end].trim()).ok()?;
        l.validate().ok().map(|()| l)
    }

    /// What the trainer makes of an engineer's answer: the reply clamped into the limits, or, when
    /// the engineer failed or its configuration has nothing usable left, no configuration (the
    /// previous one stands) and a note that says why. The trainer and the Python package both
    /// decide through this.
    #[must_use]
    pub fn adopt(&self, asked: Result<EngineerReply, crate::PluginError>) -> Adopted {
        let mut notes = Vec::new();
        match asked {
            Ok(reply) => {
                let raw = if reply.raw.is_empty() { reply.to_json() } else { reply.raw.join("\n\n---\n\n") };
                notes.extend(reply.notes.iter().cloned());
                let chosen = match self.clamp(&reply.config) {
                    Ok((config, clamped)) => {
                        notes
                            .extend(clamped.into_iter().map(|n| format!("clamped to the run's limits: {n}")));
                        Some((config, reply.rationale))
                    }
                    Err(e) => {
                        notes.push(format!(
                            "the engineer's configuration is not usable: {e}; the previous configuration stands"
                        ));
                        None
                    }
                };
                Adopted { chosen, raw: Some(raw), replies: reply.raw, notes }
            }
            Err(e) => {
                notes.push(format!(
                    "the engineer gave no usable configuration: {e}; the previous configuration stands"
                ));
                let replies = match e {
                    crate::PluginError::NoUsableReply { raw, .. } => raw,
                    _ => Vec::new(),
                };
                let raw = (!replies.is_empty()).then(|| replies.join("\n\n---\n\n"));
                Adopted { chosen: None, raw, replies, notes }
            }
        }
    }

    /// Clamps a configuration into the limits; the notes say what changed and why. The result
    /// is valid ([`RoundConfig::validate`]) unless the notes' last line says otherwise.
    ///
    /// # Errors
    /// A configuration with no map size left.
    pub fn clamp(&self, config: &RoundConfig) -> Result<(RoundConfig, Vec<String>), String> {
        let raw = RawConfig {
            sizes: config
                .sizes
                .iter()
                .map(|s| RawSize {
                    size: i64::from(s.size),
                    data_ratio: s.data_ratio,
                    hole_ratio: s.hole_ratio,
                    wait_ratio: s.wait_ratio,
                })
                .collect(),
            agents: config.agents.iter().map(|&k| i64::from(k)).collect(),
            replay_fraction: config.replay_fraction,
        };
        self.clamp_raw(raw)
    }

    #[allow(clippy::too_many_lines)]
    fn clamp_raw(&self, raw: RawConfig) -> Result<(RoundConfig, Vec<String>), String> {
        let mut notes = Vec::new();
        let (lo, hi) = (i64::from(self.min_size), i64::from(self.max_size));
        let mut sizes: Vec<SizeConfig> = Vec::new();
        for s in raw.sizes {
            let size = s.size.clamp(lo, hi) as u32;
            if i64::from(size) != s.size {
                notes.push(format!("size {} is outside {lo}..={hi}: clamped to {size}", s.size));
            }
            let clamp = |name: &str, v: f64, max: f64, notes: &mut Vec<String>| {
                let c = if v.is_finite() { v.clamp(0.0, max) } else { 0.0 };
                if c != v {
                    notes.push(format!("size {size}: {name} {v} is outside [0, {max}]: clamped to {c}"));
                }
                c
            };
            let data_ratio = clamp("data_ratio", s.data_ratio, 1.0, &mut notes);
            let hole_ratio = clamp("hole_ratio", s.hole_ratio, self.max_hole_ratio, &mut notes);
            let wait_ratio = clamp("wait_ratio", s.wait_ratio, 1.0, &mut notes);
            if let Some(prev) = sizes.iter_mut().find(|p| p.size == size) {
                notes.push(format!("size {size} appears twice: data ratios added, the first settings kept"));
                prev.data_ratio += data_ratio;
            } else {
                sizes.push(SizeConfig { size, data_ratio, hole_ratio, wait_ratio });
            }
        }
        if sizes.is_empty() {
            return Err("the configuration has no map size".into());
        }
        if sizes.len() > self.max_sizes {
            notes.push(format!(
                "{} map sizes, at most {}: the first {} kept",
                sizes.len(),
                self.max_sizes,
                self.max_sizes
            ));
            sizes.truncate(self.max_sizes);
        }
        let mut agents: Vec<u32> = Vec::new();
        for k in raw.agents {
            match u32::try_from(k).ok().filter(|k| self.agents.contains(k)) {
                Some(k) if !agents.contains(&k) => agents.push(k),
                Some(k) => notes.push(format!("agent count {k} appears twice: once kept")),
                None => notes.push(format!("agent count {k} is not one of {:?}: dropped", self.agents)),
            }
        }
        if agents.is_empty() {
            agents = self.agents.clone();
            notes.push(format!("no allowed agent count: using {agents:?}"));
        }
        let sum: f64 = sizes.iter().map(|s| s.data_ratio).sum();
        if sum <= 0.0 {
            let n = sizes.len() as f64;
            sizes.iter_mut().for_each(|s| s.data_ratio = 1.0 / n);
            notes.push("the data ratios add up to 0: equal shares".into());
        } else if (sum - 1.0).abs() > DATA_RATIO_TOLERANCE {
            sizes.iter_mut().for_each(|s| s.data_ratio /= sum);
            notes.push(format!("the data ratios add up to {sum}: divided by it"));
        }
        let k = agents.iter().copied().max().unwrap_or(1);
        for s in &mut sizes {
            // Lower the hole ratio, a hundredth at a time, until the size has room for 2k agents'
            // starts and goals (the generator's rule, as RoundConfig::validate checks it).
            let fits = |h: f64| {
                let cfg = floe_core::GeneratorConfig::square(s.size, 1, h, 0.0, 0, 0);
                let cells = s.size * s.size;
                cells - cfg.holes().min(cells) >= 2 * k
            };
            if !fits(s.hole_ratio) {
                let before = s.hole_ratio;
                while s.hole_ratio > 0.0 && !fits(s.hole_ratio) {
                    s.hole_ratio = ((s.hole_ratio - 0.01) * 100.0).round().max(0.0) / 100.0;
                }
                notes.push(format!(
                    "size {}: hole_ratio {before} leaves too few free cells for {k} agents: lowered to {}",
                    s.size, s.hole_ratio
                ));
            }
            if agents.contains(&1) && s.wait_ratio > 0.0 {
                notes.push(format!("size {}: one agent never waits: wait_ratio set to 0", s.size));
                s.wait_ratio = 0.0;
            }
        }
        let mut replay_fraction = raw.replay_fraction;
        let c = if replay_fraction.is_finite() {
            replay_fraction.clamp(0.0, self.max_replay_fraction)
        } else {
            0.0
        };
        if c != replay_fraction {
            notes.push(format!(
                "replay_fraction {replay_fraction} is outside [0, {}]: clamped to {c}",
                self.max_replay_fraction
            ));
            replay_fraction = c;
        }
        let cfg = RoundConfig { sizes, agents, replay_fraction };
        cfg.validate().map_err(|e| format!("still invalid after clamping: {e}"))?;
        Ok((cfg, notes))
    }

    /// Reads an engineer's reply strictly: one JSON object `{"rationale": …, "config": …}` with
    /// exactly the configuration's fields (optionally inside one fenced code block), numbers of
    /// the right types; then clamps it into the limits. The notes say what was clamped.
    ///
    /// # Errors
    /// Text that is not such an object (with serde's reason), or a configuration that cannot be
    /// made valid.
    pub fn parse_reply(&self, text: &str) -> Result<(EngineerReply, Vec<String>), String> {
        let mut body = text.trim();
        if let Some(rest) = body.strip_prefix("```") {
            let rest = rest.strip_prefix("json").unwrap_or(rest);
            body = rest.strip_suffix("```").ok_or("a code fence that is not closed")?.trim();
        }
        let raw: RawReply = serde_json::from_str(body).map_err(|e| format!("not a reply object: {e}"))?;
        let (config, notes) = self.clamp_raw(raw.config)?;
        let rationale = raw.rationale.trim().to_string();
        Ok((EngineerReply { config, rationale, raw: Vec::new(), notes: Vec::new() }, notes))
    }

    /// The JSON schema of a reply (for `response_format`), derived from the configuration's
    /// fields and these limits.
    #[must_use]
    pub fn json_schema(&self) -> serde_json::Value {
        let mut config_props = serde_json::json!({
            "sizes": {
                "type": "array", "minItems": 1, "maxItems": self.max_sizes,
                "items": {
                    "type": "object", "additionalProperties": false,
                    "required": ["size", "data_ratio", "hole_ratio", "wait_ratio"],
                    "properties": {
                        "size": {"type": "integer", "minimum": self.min_size, "maximum": self.max_size},
                        "data_ratio": {"type": "number", "minimum": 0, "maximum": 1},
                        "hole_ratio": {"type": "number", "minimum": 0, "maximum": self.max_hole_ratio},
                        "wait_ratio": {"type": "number", "minimum": 0, "maximum": 1}
                    }
                }
            },
            "agents": {"type": "array", "minItems": 1, "items": {"type": "integer", "enum": self.agents}}
        });
        let mut required = vec!["sizes", "agents"];
        if self.max_replay_fraction > 0.0 {
            config_props["replay_fraction"] =
                serde_json::json!({"type": "number", "minimum": 0, "maximum": self.max_replay_fraction});
            required.push("replay_fraction");
        }
        serde_json::json!({
            "type": "object", "additionalProperties": false, "required": ["rationale", "config"],
            "properties": {
                "rationale": {"type": "string", "maxLength": 240},
                "config": {"type": "object", "additionalProperties": false, "required": required,
                           "properties": config_props}
            }
        })
    }

    /// A GBNF grammar (llama.cpp's) of replies within these limits: the reply's shape, map sizes
    /// and agent counts from the allowed values, ratios as decimals with up to two places bounded
    /// by their ranges, a rationale of 1 to 240 plain characters. Data ratios are not made to add
    /// up to 1 (a grammar cannot); [`DesignLimits::parse_reply`] still validates and clamps.
    #[must_use]
    pub fn gbnf(&self) -> String {
        let alts = |v: Vec<String>| v.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(" | ");
        let sizes = alts((self.min_size..=self.max_size).map(|s| s.to_string()).collect());
        let agents = alts(self.agents.iter().map(ToString::to_string).collect());
        let max_items = self.max_sizes.max(1);
        let more_sizes =
            if max_items > 1 { format!(" (\", \" size){{0,{}}}", max_items - 1) } else { String::new() };
        let more_agents = if self.agents.len() > 1 {
            format!(" (\", \" agent){{0,{}}}", self.agents.len() - 1)
        } else {
            String::new()
        };
        let replay =
            if self.max_replay_fraction > 0.0 { " \", \\\"replay_fraction\\\": \" replay" } else { "" };
        let mut g = format!(
            "root ::= \"{{\\\"rationale\\\": \" text \", \\\"config\\\": {{\\\"sizes\\\": [\" size{more_sizes} \"], \\\"agents\\\": [\" agent{more_agents} \"]\"{replay} \"}}}}\"\n\
             size ::= \"{{\\\"size\\\": \" side \", \\\"data_ratio\\\": \" unit \", \\\"hole_ratio\\\": \" hole \", \\\"wait_ratio\\\": \" unit \"}}\"\n\
             side ::= {sizes}\n\
             agent ::= {agents}\n\
             text ::= \"\\\"\" [a-zA-Z0-9 ,.;:()%+=/-]{{1,240}} \"\\\"\"\n\
             unit ::= {}\n\
             hole ::= {}\n",
            decimal_rule(100),
            decimal_rule((self.max_hole_ratio * 100.0).floor() as u32)
        );
        if self.max_replay_fraction > 0.0 {
            g.push_str(&format!(
                "replay ::= {}\n",
                decimal_rule((self.max_replay_fraction * 100.0).floor() as u32)
            ));
        }
        g
    }
}

/// A GBNF alternative for the decimals from 0 to `max` hundredths (at most 100), written with
/// at most two places: `0`, `0.d`, `0.dd`, and `1`, `1.0`, `1.00` when `max` is 100.
fn decimal_rule(max: u32) -> String {
    let max = max.min(100);
    let mut alts = vec!["\"0\"".to_string()];
    if max == 100 {
        alts.push("\"0.\" [0-9] [0-9]?".into());
        alts.push("\"1\" (\".0\" \"0\"?)?".into());
        return alts.join(" | ");
    }
    let (tens, ones) = (max / 10, max % 10);
    if tens > 0 {
        // 0.0x .. 0.(tens-1)x: any second digit.
        alts.push(format!("\"0.\" [0-{}] [0-9]?", tens - 1));
    }
    // 0.tens, 0.tens0 .. 0.tens<ones>.
    alts.push(format!("\"0.{tens}\" [0-{ones}]?"));
    alts.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::SizeResult;
    use floe_core::FailureKind;

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
    fn presets_choose_modules_and_limits_read_back() {
        let limits = DesignLimits { agents: vec![2], ..DesignLimits::default() };
        let h = history();
        let input = ContextInput {
            history: &h,
            round: 1,
            rounds: 3,
            epochs: 2,
            samples: 1536,
            previous_rationale: None,
            hyperparameters: serde_json::json!({"lr": 5e-5}),
            limits: &limits,
        };
        let v1 = ContextOptions { preset: Preset::V1, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v1.contains("## F:") && v1.contains("hole 10, vertex_conflict 40"), "{v1}");
        assert!(!v1.contains("## G:") && !v1.contains("## H:") && !v1.contains("## T:"));
        let v3 = ContextOptions { preset: Preset::V3, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v3.contains("Round 0: {\"sizes\""), "{v3}");
        let v4 = ContextOptions { preset: Preset::V4, ..ContextOptions::default() }.assemble(&input).unwrap();
        assert!(v4.contains("## H:") && !v4.contains("Round 0: {"));
        let v6 = ContextOptions::default().assemble(&input).unwrap();
        assert!(v6.contains("## S:") && v6.contains("Round 1 of 3") && !v6.contains("Hyperparameters"));
        let full = ContextOptions { training_details: TrainingDetails::Full, ..ContextOptions::default() };
        assert!(full.assemble(&input).unwrap().contains("Hyperparameters: {\"lr\":"));
        assert_eq!(DesignLimits::from_context(&v6), Some(limits));
        assert_eq!(DesignLimits::from_context("no limits here"), None);
        ContextOptions::default().validate().unwrap();
    }

    #[test]
    fn replies_are_read_strictly_and_clamped_with_reasons() {
        let l = DesignLimits { agents: vec![2], max_replay_fraction: 0.0, ..DesignLimits::default() };
        let ok = r#"{"rationale": "more waits", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2, "wait_ratio": 0.6}], "agents": [2]}}"#;
        let (r, notes) = l.parse_reply(ok).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(r.config.sizes[0].wait_ratio, 0.6);
        assert_eq!(r.rationale, "more waits");
        assert!(l.parse_reply(&format!("```json\n{ok}\n```")).is_ok());
        assert!(l.parse_reply("Sure! Here it is").unwrap_err().starts_with("not a reply object"));
        let missing = r#"{"rationale": "x", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2}], "agents": [2]}}"#;
        assert!(l.parse_reply(missing).unwrap_err().contains("wait_ratio"));
        let extra = ok.replace("\"agents\"", "\"reward\": 1, \"agents\"");
        assert!(l.parse_reply(&extra).unwrap_err().contains("reward"));
        let wild = r#"{"rationale": "x", "config": {"sizes": [{"size": 12, "data_ratio": 3, "hole_ratio": 0.9, "wait_ratio": -1},
            {"size": 3, "data_ratio": 1, "hole_ratio": 0.4, "wait_ratio": 2}], "agents": [5, 2], "replay_fraction": 0.3}}"#;
        let (r, notes) = l.parse_reply(wild).unwrap();
        r.config.validate().unwrap();
        assert_eq!(r.config.sizes[0].size, 6);
        assert_eq!(r.config.sizes[0].hole_ratio, 0.4);
        assert_eq!(r.config.sizes[0].data_ratio, 0.5);
        assert_eq!(r.config.agents, vec![2]);
        assert_eq!(r.config.replay_fraction, 0.0);
        let all = notes.join("\n");
        for want in [
            "size 12 is outside 3..=6",
            "hole_ratio 0.9",
            "wait_ratio -1",
            "agent count 5",
            "add up to 2",
            "replay_fraction 0.3",
        ] {
            assert!(all.contains(want), "{want} not in {all}");
        }
        // 3 agents on a 3x3 map at hole ratio 0.4 (4 holes, 5 free cells) do not fit: 0.38 (3 holes) does.
        let three = DesignLimits { agents: vec![3], ..DesignLimits::default() };
        let crowded = r#"{"rationale": "x", "config": {"sizes": [{"size": 3, "data_ratio": 1, "hole_ratio": 0.4, "wait_ratio": 0.5}], "agents": [3]}}"#;
        let (r, notes) = three.parse_reply(crowded).unwrap();
        assert_eq!(r.config.sizes[0].hole_ratio, 0.38);
        assert!(notes[0].contains("too few free cells for 3 agents"), "{notes:?}");
        let empty = r#"{"rationale": "x", "config": {"sizes": [], "agents": [2]}}"#;
        assert!(l.parse_reply(empty).is_err());
    }

    #[test]
    fn an_answer_is_adopted_clamped_or_the_previous_configuration_stands() {
        let l = DesignLimits { agents: vec![2], ..DesignLimits::default() };
        let reply = |sizes: Vec<SizeConfig>| EngineerReply {
            config: RoundConfig { sizes, agents: vec![2], replay_fraction: 0.0 },
            rationale: "why".into(),
            raw: vec!["first".into(), "second".into()],
            notes: vec!["two proposals, the first kept".into()],
        };
        let big = SizeConfig { size: 9, data_ratio: 1.0, hole_ratio: 0.2, wait_ratio: 0.5 };
        let a = l.adopt(Ok(reply(vec![big])));
        let (config, rationale) = a.chosen.unwrap();
        assert_eq!((config.sizes[0].size, rationale.as_str()), (6, "why"));
        assert_eq!(a.raw.as_deref(), Some("first\n\n---\n\nsecond"));
        assert_eq!(a.replies, ["first", "second"]);
        assert_eq!(a.notes[0], "two proposals, the first kept");
        assert!(a.notes[1].starts_with("clamped to the run's limits: size 9"), "{:?}", a.notes);
        // Nothing usable left: the raw reply is kept, and the previous configuration stands.
        let a = l.adopt(Ok(reply(vec![])));
        assert!(a.chosen.is_none() && a.raw.is_some());
        assert!(
            a.notes.last().unwrap().contains("is not usable") && a.notes.last().unwrap().ends_with("stands")
        );
        // The engineer failed: no reply at all.
        let a = l.adopt(Err(crate::PluginError::Failed("timed out".into())));
        assert_eq!((a.chosen, a.raw, a.replies), (None, None, vec![]));
        assert!(
            a.notes[0].contains("timed out") && a.notes[0].ends_with("the previous configuration stands")
        );
        // The engineer gave up after replies that were not usable: they are kept, in order.
        let gave_up = crate::PluginError::NoUsableReply {
            message: "no usable configuration in 2 attempt(s)".into(),
            raw: vec!["not json".into(), "{}".into()],
        };
        let a = l.adopt(Err(gave_up));
        assert!(a.chosen.is_none());
        assert_eq!(a.replies, ["not json", "{}"]);
        assert_eq!(a.raw.as_deref(), Some("not json\n\n---\n\n{}"));
        assert!(a.notes[0].contains("no usable configuration in 2 attempt(s)"), "{:?}", a.notes);
    }

    #[test]
    fn decimals_are_bounded() {
        assert_eq!(decimal_rule(40), "\"0\" | \"0.\" [0-3] [0-9]? | \"0.4\" [0-0]?");
        assert_eq!(decimal_rule(5), "\"0\" | \"0.0\" [0-5]?");
        assert!(decimal_rule(100).contains("\"1\""));
        let g = DesignLimits::default().gbnf();
        assert!(g.starts_with("root ::= "), "{g}");
        assert!(g.contains("side ::= \"3\" | \"4\" | \"5\" | \"6\""), "{g}");
        assert!(g.contains("replay ::= "), "{g}");
        let schema = DesignLimits::default().json_schema();
        assert_eq!(
            schema["properties"]["config"]["properties"]["sizes"]["items"]["properties"]["size"]["maximum"],
            6
        );
    }
}
