//! A minimal floe plugin library in Rust: one reward function and one curriculum.

use floe_plugin_api::abi::{root_module, FloePluginLibRef};
use floe_plugin_api::{
    parse_params, Capabilities, Constructor, Curriculum, Entry, FailureKind, History, PluginError,
    PluginLibrary, RewardFn, RoundConfig, VerdictRecord,
};

/// 1 for a valid plan, `partial` for a legal plan that left agents off their goals, else 0.
struct ValidOrPartial {
    partial: f32,
}

#[derive(serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Params {
    partial: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params { partial: 0.25 }
    }
}

impl RewardFn for ValidOrPartial {
    fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        for (r, o) in records.iter().zip(out.iter_mut()) {
            *o = match r.failure_kind()? {
                None => 1.0,
                Some(FailureKind::GoalNotReached) => self.partial,
                Some(_) => 0.0,
            };
        }
        Ok(())
    }
}

/// All the data on the smallest map size not yet mastered (valid rate below 0.8).
struct Frontier;

impl Curriculum for Frontier {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let frontier = match history.last() {
            None => 3,
            Some(last) => (3..=10).find(|&s| last.result(s).is_none_or(|r| r.valid_rate < 0.8)).unwrap_or(10),
        };
        let mut config = RoundConfig::round0_default();
        for s in &mut config.sizes {
            s.data_ratio = if s.size == frontier { 1.0 } else { 0.0 };
        }
        Ok(config)
    }
}

struct Library;

impl PluginLibrary for Library {
    fn catalog() -> Vec<Entry> {
        vec![
            Entry {
                name: "valid-or-partial",
                version: "0.1.0",
                description: "1 valid, `partial` for goal_not_reached, else 0",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|params| {
                    let p: Params = parse_params(params)?;
                    Ok(Box::new(ValidOrPartial { partial: p.partial }))
                }),
            },
            Entry {
                name: "frontier",
                version: "0.1.0",
                description: "all data on the smallest map size below 0.8 valid",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|_params| Ok(Box::new(Frontier))),
            },
        ]
    }
}

#[abi_stable::export_root_module]
pub fn floe_root_module() -> FloePluginLibRef {
    root_module::<Library>()
}
