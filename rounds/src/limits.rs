//! How an engineer's reply is taken: read strictly (JSON with exactly the configuration's
//! fields), clamped into the run's [`DesignLimits`] with a note for every change, validated, and
//! adopted (or the previous configuration stands, saying why). The driver decides through
//! [`Adoption::adopt`]; a language-model engineer reads its model's text with
//! [`Adoption::parse_reply`] and asks again on a refusal.

use floe_plugin_api::config::DATA_RATIO_TOLERANCE;
use floe_plugin_api::design::{DesignLimits, EngineerReply};
use floe_plugin_api::{PluginError, RoundConfig, SizeConfig};
use serde::Deserialize;
use thiserror::Error;

/// Why a reply or a configuration could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// Not one JSON reply object with exactly the expected fields (serde's reason).
    #[error("not a reply object: {0}")]
    NotAReply(String),
    /// A code fence that opens and never closes.
    #[error("a code fence that is not closed")]
    OpenFence,
    /// No map size at all.
    #[error("the configuration has no map size")]
    NoMapSize,
    /// Clamped, and still not a valid configuration.
    #[error("still invalid after clamping: {0}")]
    StillInvalid(String),
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

/// An engineer's answer as the trainer takes it ([`Adoption::adopt`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Adopted {
    /// The clamped configuration and the rationale; `None`: the previous configuration stands.
    pub chosen: Option<(RoundConfig, String)>,
    /// The reply as the engineer wrote it (its raw texts, or its JSON); `None` when it failed
    /// without a reply.
    pub raw: Option<String>,
    /// Every raw reply of a language-model engineer, unchanged and in order, whether it
    /// succeeded or gave up ([`PluginError::NoUsableReply`]); empty for other engineers.
    pub replies: Vec<String>,
    /// What was clamped, or why nothing was taken, and the engineer's own notes.
    pub notes: Vec<String>,
}

/// What the protocol does with an engineer's answer within [`DesignLimits`].
pub trait Adoption {
    /// What the driver makes of an engineer's answer: the reply clamped into the limits, or,
    /// when the engineer failed or its configuration has nothing usable left, no configuration
    /// (the previous one stands) and a note that says why.
    #[must_use]
    fn adopt(&self, asked: Result<EngineerReply, PluginError>) -> Adopted;

    /// Clamps a configuration into the limits; the notes say what changed and why.
    ///
    /// # Errors
    /// A configuration with no map size left, or one still invalid.
    fn clamp(&self, config: &RoundConfig) -> Result<(RoundConfig, Vec<String>), ReplyError>;

    /// Reads an engineer's reply strictly: one JSON object `{"rationale": …, "config": …}` with
    /// exactly the configuration's fields (optionally inside one fenced code block), numbers of
    /// the right types; then clamps it into the limits. The notes say what was clamped.
    ///
    /// # Errors
    /// Text that is not such an object (with serde's reason), or a configuration that cannot be
    /// made valid.
    fn parse_reply(&self, text: &str) -> Result<(EngineerReply, Vec<String>), ReplyError>;
}

impl Adoption for DesignLimits {
    fn adopt(&self, asked: Result<EngineerReply, PluginError>) -> Adopted {
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
                    PluginError::NoUsableReply { raw, .. } => raw,
                    _ => Vec::new(),
                };
                let raw = (!replies.is_empty()).then(|| replies.join("\n\n---\n\n"));
                Adopted { chosen: None, raw, replies, notes }
            }
        }
    }

    fn clamp(&self, config: &RoundConfig) -> Result<(RoundConfig, Vec<String>), ReplyError> {
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
        clamp_raw(self, raw)
    }

    fn parse_reply(&self, text: &str) -> Result<(EngineerReply, Vec<String>), ReplyError> {
        let mut body = text.trim();
        if let Some(rest) = body.strip_prefix("```") {
            let rest = rest.strip_prefix("json").unwrap_or(rest);
            body = rest.strip_suffix("```").ok_or(ReplyError::OpenFence)?.trim();
        }
        let raw: RawReply = serde_json::from_str(body).map_err(|e| ReplyError::NotAReply(e.to_string()))?;
        let (config, notes) = clamp_raw(self, raw.config)?;
        let rationale = raw.rationale.trim().to_string();
        Ok((EngineerReply { config, rationale, raw: Vec::new(), notes: Vec::new() }, notes))
    }
}

/// Clamps a reply's configuration as written, stage by stage; each stage adds a note for
/// every change it makes.
fn clamp_raw(l: &DesignLimits, raw: RawConfig) -> Result<(RoundConfig, Vec<String>), ReplyError> {
    let mut notes = Vec::new();
    let mut sizes = clamp_sizes(l, raw.sizes, &mut notes)?;
    let agents = clamp_agents(l, raw.agents, &mut notes);
    share_data(&mut sizes, &mut notes);
    make_room(&mut sizes, &agents, &mut notes);
    let replay_fraction = clamp_replay(l, raw.replay_fraction, &mut notes);
    let cfg = RoundConfig { sizes, agents, replay_fraction };
    cfg.validate().map_err(|e| ReplyError::StillInvalid(e.to_string()))?;
    Ok((cfg, notes))
}

/// Map sizes into `min_size..=max_size`, ratios into their ranges, a size given twice merged
/// into its first, at most `max_sizes` kept.
fn clamp_sizes(
    l: &DesignLimits,
    raw: Vec<RawSize>,
    notes: &mut Vec<String>,
) -> Result<Vec<SizeConfig>, ReplyError> {
    let (lo, hi) = (i64::from(l.min_size), i64::from(l.max_size));
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
        let hole_ratio = clamp("hole_ratio", s.hole_ratio, l.max_hole_ratio);
        let wait_ratio = clamp("wait_ratio", s.wait_ratio, 1.0);
        if let Some(prev) = sizes.iter_mut().find(|p| p.size == size) {
            notes.push(format!("size {size} appears twice: data ratios added, the first settings kept"));
            prev.data_ratio += data_ratio;
        } else {
            sizes.push(SizeConfig { size, data_ratio, hole_ratio, wait_ratio });
        }
    }
    if sizes.is_empty() {
        return Err(ReplyError::NoMapSize);
    }
    if sizes.len() > l.max_sizes {
        notes.push(format!(
            "{} map sizes, at most {}: the first {} kept",
            sizes.len(),
            l.max_sizes,
            l.max_sizes
        ));
        sizes.truncate(l.max_sizes);
    }
    Ok(sizes)
}

/// The allowed agent counts among those given, each once; all the allowed ones if none is.
fn clamp_agents(l: &DesignLimits, raw: Vec<i64>, notes: &mut Vec<String>) -> Vec<u32> {
    let mut agents: Vec<u32> = Vec::new();
    for k in raw {
        match u32::try_from(k).ok().filter(|k| l.agents.contains(k)) {
            Some(k) if !agents.contains(&k) => agents.push(k),
            Some(k) => notes.push(format!("agent count {k} appears twice: once kept")),
            None => notes.push(format!("agent count {k} is not one of {:?}: dropped", l.agents)),
        }
    }
    if agents.is_empty() {
        agents = l.agents.clone();
        notes.push(format!("no allowed agent count: using {agents:?}"));
    }
    agents
}

/// The replay fraction into `[0, max_replay_fraction]` (0 when not finite).
fn clamp_replay(l: &DesignLimits, replay_fraction: f64, notes: &mut Vec<String>) -> f64 {
    let c = if replay_fraction.is_finite() { replay_fraction.clamp(0.0, l.max_replay_fraction) } else { 0.0 };
    if c != replay_fraction {
        notes.push(format!(
            "replay_fraction {replay_fraction} is outside [0, {}]: clamped to {c}",
            l.max_replay_fraction
        ));
    }
    c
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_strictly_and_clamped_with_reasons() {
        let l = DesignLimits { agents: vec![2], max_replay_fraction: 0.0, ..DesignLimits::default() };
        let ok = r#"{"rationale": "more waits", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2, "wait_ratio": 0.6}], "agents": [2]}}"#;
        let (r, notes) = l.parse_reply(ok).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(r.config.sizes[0].wait_ratio, 0.6);
        assert_eq!(r.rationale, "more waits");
        assert!(l.parse_reply(&format!("```json\n{ok}\n```")).is_ok());
        assert!(l.parse_reply("Sure! Here it is").unwrap_err().to_string().starts_with("not a reply object"));
        let missing = r#"{"rationale": "x", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2}], "agents": [2]}}"#;
        assert!(l.parse_reply(missing).unwrap_err().to_string().contains("wait_ratio"));
        let extra = ok.replace("\"agents\"", "\"reward\": 1, \"agents\"");
        assert!(l.parse_reply(&extra).unwrap_err().to_string().contains("reward"));
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
        let a = l.adopt(Err(PluginError::Failed("timed out".into())));
        assert_eq!((a.chosen, a.raw, a.replies), (None, None, vec![]));
        assert!(
            a.notes[0].contains("timed out") && a.notes[0].ends_with("the previous configuration stands")
        );
        // The engineer gave up after replies that were not usable: they are kept, in order.
        let gave_up = PluginError::NoUsableReply {
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
