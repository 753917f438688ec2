//! Where a run stands: its stages ([`Stage`]), the evaluation that ends each ([`StageEval`]), and
//! the run state ([`RunState`]) that `state.json` holds and a resumed run starts from.

use floe_plugin_api::History;
use serde::{Deserialize, Serialize};

use crate::replay;
use crate::report::EvalReport;

/// Where a round's configuration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `rounds.round0`.
    Round0,
    /// floe's round-0 default, clamped into the design limits.
    Default,
    /// The curriculum's `next_config`.
    Curriculum,
    /// The engineer's reply (clamped where needed).
    Engineer,
    /// The engineer gave nothing usable: the previous configuration stood.
    Previous,
}

/// How one round's configuration came about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Design {
    pub round: u32,
    pub source: Source,
    /// The engineer's rationale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// What was clamped, retried, or why the previous configuration stood.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A stage of a run that ends with an evaluation. In files (`rounds.jsonl`, the checkpoint's
/// state) it is written as its display text: `untrained`, `initial checkpoint`, `warm start`,
/// `warm start @<step>`, `round <r>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Stage {
    /// The trainee before any training: a policy from a random initialisation, or a language
    /// model as it was given.
    Untrained,
    /// The trainee loaded from a checkpoint of its own, before any training.
    InitialCheckpoint,
    /// The end of the warm start.
    WarmStart,
    /// Within the warm start, after this many steps.
    WarmStartAt(u64),
    /// After GRPO round r.
    Round(u32),
}

impl Stage {
    /// A short name for chart axes.
    #[must_use]
    pub fn short(self) -> String {
        match self {
            Stage::Untrained | Stage::InitialCheckpoint => "init".into(),
            Stage::WarmStart => "sft".into(),
            Stage::WarmStartAt(n) => n.to_string(),
            Stage::Round(r) => format!("r{r}"),
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Untrained => f.write_str("untrained"),
            Stage::InitialCheckpoint => f.write_str("initial checkpoint"),
            Stage::WarmStart => f.write_str("warm start"),
            Stage::WarmStartAt(n) => write!(f, "warm start @{n}"),
            Stage::Round(r) => write!(f, "round {r}"),
        }
    }
}

impl From<Stage> for String {
    fn from(s: Stage) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for Stage {
    type Error = String;
    fn try_from(s: String) -> Result<Stage, String> {
        let num = |t: &str| t.parse().map_err(|_| format!("unknown stage {s:?}"));
        Ok(match s.as_str() {
            "untrained" => Stage::Untrained,
            "initial checkpoint" => Stage::InitialCheckpoint,
            "warm start" => Stage::WarmStart,
            _ => match (s.strip_prefix("warm start @"), s.strip_prefix("round ")) {
                (Some(n), _) => Stage::WarmStartAt(num(n)?),
                (_, Some(r)) => Stage::Round(num(r)? as u32),
                _ => return Err(format!("unknown stage {s:?}")),
            },
        })
    }
}

/// One evaluation of the validation set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEval {
    pub stage: Stage,
    pub valid: f64,
    pub optimal: f64,
    /// GRPO steps taken before it.
    pub grpo_step: u64,
    /// Seconds of training (warm start and GRPO, not evaluation) before it.
    pub train_s: f64,
    pub report: EvalReport,
}

/// Where a run stands; saved in every checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub warm_start_done: bool,
    pub rounds_done: u32,
    pub history: History,
    pub evals: Vec<StageEval>,
    /// (step, loss) of the warm start.
    pub sft_curve: Vec<(u64, f64)>,
    /// (step, mean reward, sampled valid rate) of GRPO.
    pub grpo_curve: Vec<(u64, f64, f64)>,
    pub sft_steps: u64,
    pub grpo_steps: u64,
    /// Seconds spent training (warm start and GRPO), over every resumption.
    pub train_s: f64,
    /// Bytes of `steps.jsonl` and `rounds.jsonl` at this checkpoint.
    pub steps_len: u64,
    pub rounds_len: u64,
    /// How each finished round's configuration came about.
    #[serde(default)]
    pub designs: Vec<Design>,
    /// The statistics of every generated training instance played so far (the replay pool).
    #[serde(default)]
    pub replay: replay::PoolStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_read_back_what_they_write() {
        for s in [
            Stage::Untrained,
            Stage::InitialCheckpoint,
            Stage::WarmStart,
            Stage::WarmStartAt(800),
            Stage::Round(2),
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Stage>(&json).unwrap(), s);
        }
        assert_eq!(serde_json::to_string(&Stage::Round(3)).unwrap(), "\"round 3\"");
        assert!(serde_json::from_str::<Stage>("\"round x\"").is_err());
        assert!(serde_json::from_str::<Stage>("\"lunch\"").is_err());
    }
}
