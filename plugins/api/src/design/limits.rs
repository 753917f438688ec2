//! What an engineer may design ([`DesignLimits`]), and how its reply is read: strictly parsed,
//! clamped into the limits with a note for every change, validated; and what the trainer adopts
//! of an answer ([`DesignLimits::adopt`]).

use abi_stable::std_types::RSlice;
use abi_stable::StableAbi;
use serde::{Deserialize, Serialize};

use crate::config::{RoundConfig, SizeConfig, DATA_RATIO_TOLERANCE};
use crate::error::ConfigError;

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

/// An engineer's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineerReply {
    /// The next round's configuration.
    pub config: RoundConfig,
    /// Why, in the engineer's words.
    pub rationale: String,
    /// A language-model engineer's raw replies, every attempt in order (absent for others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<String>,
    /// What the engineer corrected or retried, and why (values clamped, replies refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl EngineerReply {
    /// Parses a reply and validates its configuration.
    ///
    /// # Errors
    /// [`ConfigError::Json`] for malformed JSON, else what [`RoundConfig::validate`] finds.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let r: EngineerReply = serde_json::from_str(text)?;
        r.config.validate()?;
        Ok(r)
    }

    /// The reply as one line of JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// [`DesignLimits`] as an engineer receives them across a plugin ABI: `floe_design_limits` of
/// `floe_types.h` for a C plugin (`design_with_limits`), the same layout for an abi_stable one.
/// Made by [`DesignLimits::record`], read back by [`DesignLimits::from_record`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, StableAbi)]
pub struct DesignLimitsRecord<'a> {
    /// Smallest map size.
    pub min_size: u32,
    /// Largest map size.
    pub max_size: u32,
    /// Most map sizes in one configuration.
    pub max_sizes: u32,
    /// Always 0.
    pub reserved: u32,
    /// Largest hole ratio.
    pub max_hole_ratio: f64,
    /// Largest replay fraction (0: nothing can replay).
    pub max_replay_fraction: f64,
    /// The agent counts it may choose from (`agents` and `agents_len` in C).
    pub agents: RSlice<'a, u32>,
}

impl DesignLimitsRecord<'_> {
    /// The same limits over other agent counts (a host that checked a C caller's array).
    #[must_use]
    pub fn with_agents(self, agents: &[u32]) -> DesignLimitsRecord<'_> {
        DesignLimitsRecord { agents: RSlice::from_slice(agents), ..self }
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

    /// The limits as they cross the plugin ABIs, borrowing the agent counts.
    #[must_use]
    pub fn record(&self) -> DesignLimitsRecord<'_> {
        DesignLimitsRecord {
            min_size: self.min_size,
            max_size: self.max_size,
            max_sizes: u32::try_from(self.max_sizes).unwrap_or(u32::MAX),
            reserved: 0,
            max_hole_ratio: self.max_hole_ratio,
            max_replay_fraction: self.max_replay_fraction,
            agents: RSlice::from_slice(&self.agents),
        }
    }

    /// The limits of a record that crossed a plugin ABI, validated.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for limits that [`DesignLimits::validate`] refuses.
    pub fn from_record(record: &DesignLimitsRecord<'_>) -> Result<Self, ConfigError> {
        let limits = DesignLimits {
            min_size: record.min_size,
            max_size: record.max_size,
            agents: record.agents.to_vec(),
            max_hole_ratio: record.max_hole_ratio,
            max_sizes: record.max_sizes as usize,
            max_replay_fraction: record.max_replay_fraction,
        };
        limits.validate()?;
        Ok(limits)
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

    /// Clamps a reply's configuration as written, stage by stage; each stage adds a note for
    /// every change it makes.
    fn clamp_raw(&self, raw: RawConfig) -> Result<(RoundConfig, Vec<String>), String> {
        let mut notes = Vec::new();
        let mut sizes = self.clamp_sizes(raw.sizes, &mut notes)?;
        let agents = self.clamp_agents(raw.agents, &mut notes);
        share_data(&mut sizes, &mut notes);
        make_room(&mut sizes, &agents, &mut notes);
        let replay_fraction = self.clamp_replay(raw.replay_fraction, &mut notes);
        let cfg = RoundConfig { sizes, agents, replay_fraction };
        cfg.validate().map_err(|e| format!("still invalid after clamping: {e}"))?;
        Ok((cfg, notes))
    }

    /// Map sizes into `min_size..=max_size`, ratios into their ranges, a size given twice merged
    /// into its first, at most `max_sizes` kept.
    fn clamp_sizes(&self, raw: Vec<RawSize>, notes: &mut Vec<String>) -> Result<Vec<SizeConfig>, String> {
        let (lo, hi) = (i64::from(self.min_size), i64::from(self.max_size));
        let mut sizes: Vec<SizeConfig> = Vec::new();
        for s in raw {
            let size = s.size.clamp(lo, hi) as u32;
            if i64::from(size) != s.size {
                notes.push(format!("size {} is outside {lo}..={hi}: clamped to {size}", s.size));
            }
            let mut clamp = |name: &str, v: f64, max: f64| {
                let c = if v.is_finite() { v.clamp(0.0, max) } else { 0.0 };
                if c != v {
                    notes.push(format!("size {size}: {name} {v} is outside [0, {max}]: clamped to {c}"));
                }
                c
            };
            let data_ratio = clamp("data_ratio", s.data_ratio, 1.0);
            let hole_ratio = clamp("hole_ratio", s.hole_ratio, self.max_hole_ratio);
            let wait_ratio = clamp("wait_ratio", s.wait_ratio, 1.0);
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
        Ok(sizes)
    }

    /// The allowed agent counts among those given, each once; all the allowed ones if none is.
    fn clamp_agents(&self, raw: Vec<i64>, notes: &mut Vec<String>) -> Vec<u32> {
        let mut agents: Vec<u32> = Vec::new();
        for k in raw {
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
        agents
    }

    /// The replay fraction into `[0, max_replay_fraction]` (0 when not finite).
    fn clamp_replay(&self, replay_fraction: f64, notes: &mut Vec<String>) -> f64 {
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
        }
        c
    }
}

/// Data ratios that add up to 1: divided by their sum, or equal shares when they add up to 0.
fn share_data(sizes: &mut [SizeConfig], notes: &mut Vec<String>) {
    let sum: f64 = sizes.iter().map(|s| s.data_ratio).sum();
    if sum <= 0.0 {
        let n = sizes.len() as f64;
        sizes.iter_mut().for_each(|s| s.data_ratio = 1.0 / n);
        notes.push("the data ratios add up to 0: equal shares".into());
    } else if (sum - 1.0).abs() > DATA_RATIO_TOLERANCE {
        sizes.iter_mut().for_each(|s| s.data_ratio /= sum);
        notes.push(format!("the data ratios add up to {sum}: divided by it"));
    }
}

/// Room on every map for the largest agent count: hole ratios lowered, a hundredth at a time,
/// until a size holds 2k agents' starts and goals (the generator's rule, as
/// [`RoundConfig::validate`] checks it); no waits with one agent.
fn make_room(sizes: &mut [SizeConfig], agents: &[u32], notes: &mut Vec<String>) {
    let k = agents.iter().copied().max().unwrap_or(1);
    for s in sizes {
        let fits = |h: f64| {
            let cfg = floe_core::GeneratorConfig::default().size(s.size).agents(1).hole_ratio(h).count(0);
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
}

impl DesignLimits {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_cross_as_a_record_and_come_back_validated() {
        let l = DesignLimits {
            min_size: 4,
            max_size: 9,
            agents: vec![2, 5],
            max_sizes: 3,
            ..DesignLimits::default()
        };
        let r = l.record();
        assert_eq!((r.min_size, r.max_size, r.max_sizes, r.agents.as_slice()), (4, 9, 3, &[2, 5][..]));
        assert_eq!(DesignLimits::from_record(&r).as_ref(), Ok(&l));
        let none = [];
        let bad = DesignLimitsRecord { agents: RSlice::from_slice(&none), ..r };
        assert!(DesignLimits::from_record(&bad).unwrap_err().to_string().contains("agents"));
        // The C header's layout: four u32, two f64, a pointer and a length.
        assert_eq!(std::mem::size_of::<DesignLimitsRecord<'_>>(), 32 + 2 * std::mem::size_of::<usize>());
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
}
