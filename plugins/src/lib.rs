//! # floe-plugins
//!
//! The built-in plugins of floe. The crate is both an `rlib` (the host uses the plugins
//! in-process through [`catalog`] or the types directly) and a `cdylib` exporting the same
//! catalog as one abi_stable plugin library (a root module listing several plugins), which is
//! also the worked example of a Rust plugin library.
//!
//! | kind | name | what |
//! |---|---|---|
//! | reward | `tiered` | [`reward::tiered`]: unparseable < invalid < valid < optimal, partial credit |
//! | reward | `shaped` | [`reward::shaped`]: potential-based progress, collision / hole penalties |
//! | curriculum | `fixed` | [`curriculum::fixed`]: one configuration every round (by default the round-0 default) |
//! | curriculum | `difficulty-scaling` | [`curriculum::difficulty`]: harder sizes, more sizes, on passing |
//! | curriculum | `plr` | [`curriculum::plr`]: prioritised level replay (rank + staleness) |
//! | curriculum | `sec` | [`curriculum::sec`]: Self-Evolving Curriculum bandit over map sizes |
//! | curriculum | `frontier` | [`curriculum::frontier`]: data where valid × (1 − valid) is highest |
//! | curriculum | `schedule` | [`curriculum::schedule`]: a given configuration per round |
//! | env_engineer | `rules` | [`engineer`]: difficulty scaling from a text context, with a rationale |
//! | level_sampler | `uniform` | [`levels::uniform`]: every slot alike over a fixed pool; fresh levels after `max_plays` episodes (1: domain randomisation) |
//! | level_sampler | `plr` | [`levels::plr`]: robust prioritized level replay over the engine's pool |
//! | level_sampler | `learnability` | [`levels::learnability`]: Sampling For Learnability, p·(1−p) of recent successes |
//!
//! Every plugin takes its parameters as a JSON object (empty for the defaults); unknown fields
//! are rejected.

pub mod curriculum;
pub mod engineer;
pub mod levels;
pub mod reward;
mod sampling;

pub use floe_plugin_api as api;

use floe_plugin_api::abi::{root_module, FloePluginLibRef};
use floe_plugin_api::{parse_params, Capabilities, Constructor, Entry, PluginLibrary};

/// The built-in plugin library.
#[derive(Debug)]
pub struct Builtins;

const VERSION: &str = env!("CARGO_PKG_VERSION");

impl PluginLibrary for Builtins {
    fn catalog() -> Vec<Entry> {
        vec![
            Entry {
                name: "tiered",
                version: VERSION,
                description: "tiered verification reward: unparseable < invalid < valid < optimal",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|p| Ok(Box::new(reward::TieredReward::new(parse_params(p)?)?))),
            },
            Entry {
                name: "shaped",
                version: VERSION,
                description: "shaped step reward: progress to goal, collision and hole penalties",
                capabilities: Capabilities::SCORES_STEPS,
                make: Constructor::Reward(|p| Ok(Box::new(reward::ShapedReward::new(parse_params(p)?)?))),
            },
            Entry {
                name: "fixed",
                version: VERSION,
                description: "the same configuration every round (GRPO random baseline)",
                capabilities: Capabilities::REPLAYS,
                make: Constructor::Curriculum(|p| Ok(Box::new(curriculum::Fixed::new(parse_params(p)?)?))),
            },
            Entry {
                name: "difficulty-scaling",
                version: VERSION,
                description: "raise holes, waits and map size when validation passes a threshold",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|p| {
                    Ok(Box::new(curriculum::DifficultyScaling::new(parse_params(p)?)?))
                }),
            },
            Entry {
                name: "plr",
                version: VERSION,
                description: "prioritized level replay: rank prioritisation with staleness",
                capabilities: Capabilities::REPLAYS,
                make: Constructor::Curriculum(|p| Ok(Box::new(curriculum::Plr::new(parse_params(p)?)?))),
            },
            Entry {
                name: "sec",
                version: VERSION,
                description: "self-evolving curriculum: Boltzmann bandit over map sizes",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|p| Ok(Box::new(curriculum::Sec::new(parse_params(p)?)?))),
            },
            Entry {
                name: "frontier",
                version: VERSION,
                description: "data per size by valid × (1 − valid), smoothed over neighbours, with a floor",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|p| Ok(Box::new(curriculum::Frontier::new(parse_params(p)?)?))),
            },
            Entry {
                name: "schedule",
                version: VERSION,
                description: "a given configuration per round, the last one kept",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|p| Ok(Box::new(curriculum::Schedule::new(parse_params(p)?)?))),
            },
            Entry {
                name: "rules",
                version: VERSION,
                description: "rule-based engineer: difficulty scaling from the context's history",
                capabilities: Capabilities::NONE,
                make: Constructor::EnvEngineer(|p| {
                    Ok(Box::new(engineer::RulesEngineer::new(parse_params(p)?)?))
                }),
            },
            Entry {
                name: "uniform",
                version: VERSION,
                description: "every slot alike over a fixed pool; levels replaced after max_plays episodes (1: domain randomisation)",
                capabilities: Capabilities::NONE,
                make: Constructor::LevelSampler(|p| Ok(Box::new(levels::Uniform::new(parse_params(p)?)?))),
            },
            Entry {
                name: "plr",
                version: VERSION,
                description: "robust prioritized level replay: rank or power prioritisation, staleness, replay probability",
                capabilities: Capabilities::NONE,
                make: Constructor::LevelSampler(|p| Ok(Box::new(levels::LevelPlr::new(parse_params(p)?)?))),
            },
            Entry {
                name: "accel",
                version: VERSION,
                description: "ACCEL: robust PLR whose replayed levels are edited into new slots (built in only)",
                capabilities: Capabilities::NONE,
                make: Constructor::LevelSampler(|p| Ok(Box::new(levels::Accel::new(parse_params(p)?)?))),
            },
            Entry {
                name: "learnability",
                version: VERSION,
                description: "sampling for learnability: p(1 - p) of recent successes, unlearnable levels replaced",
                capabilities: Capabilities::NONE,
                make: Constructor::LevelSampler(|p| Ok(Box::new(levels::Learnability::new(parse_params(p)?)?))),
            },
        ]
    }
}

/// The built-in plugins.
#[must_use]
pub fn catalog() -> Vec<Entry> {
    Builtins::catalog()
}

/// The root module of the `cdylib`.
#[abi_stable::export_root_module]
pub fn floe_root_module() -> FloePluginLibRef {
    root_module::<Builtins>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_plugin_api::catalog::{new_curriculum, new_engineer, new_reward};
    use floe_plugin_api::{History, PluginError};

    #[test]
    fn every_entry_builds_with_defaults_and_rejects_unknown_parameters() {
        let c = catalog();
        assert_eq!(c.len(), 13);
        for e in &c {
            let made = match e.make {
                Constructor::Reward(f) => f("").map(drop),
                Constructor::Curriculum(f) => f("null").map(drop),
                Constructor::EnvEngineer(f) => f(" ").map(drop),
                Constructor::LevelSampler(f) => f("").map(drop),
            };
            made.unwrap_or_else(|err| panic!("{}: {err}", e.name));
            let typo = match e.make {
                Constructor::Reward(f) => f(r#"{"no_such_knob": 1}"#).map(drop),
                Constructor::Curriculum(f) => f(r#"{"no_such_knob": 1}"#).map(drop),
                Constructor::EnvEngineer(f) => f(r#"{"no_such_knob": 1}"#).map(drop),
                Constructor::LevelSampler(f) => f(r#"{"no_such_knob": 1}"#).map(drop),
            };
            assert!(matches!(typo, Err(PluginError::Config(_))), "{}", e.name);
        }
        let mut sec = new_curriculum(&c, "sec", r#"{"temperature": 0.5}"#).unwrap();
        sec.next_config(&History::default()).unwrap().validate().unwrap();
        assert!(new_reward(&c, "tiered", r#"{"valid": 0.05}"#).is_err());
        assert!(new_engineer(&c, "tiered", "").is_err());
    }

    /// Each built-in declares exactly what it does: a call it declares is answered, one it does
    /// not declare is unsupported.
    #[test]
    fn every_entry_declares_what_it_does() {
        let verdict = floe_plugin_api::VerdictRecord {
            failure: 0,
            optimal: 1,
            reserved: [0; 2],
            num_agents: 2,
            agents_on_goal: 2,
            legal_steps: 3,
            horizon: 3,
            soc: 5,
            optimal_soc: 5,
        };
        let unsupported = |r: Result<(), PluginError>| matches!(r, Err(PluginError::Unsupported(_)));
        for e in catalog() {
            e.capabilities.check(e.kind()).unwrap_or_else(|m| panic!("{}: {m}", e.name));
            match e.make {
                Constructor::Reward(f) => {
                    let mut r = f("").unwrap();
                    let plans = !unsupported(r.verdict_rewards(&[verdict], &mut [0.0]));
                    let steps = !unsupported(r.step_rewards(&[], &mut []));
                    assert_eq!(plans, e.capabilities.contains(Capabilities::SCORES_PLANS), "{}", e.name);
                    assert_eq!(steps, e.capabilities.contains(Capabilities::SCORES_STEPS), "{}", e.name);
                }
                Constructor::Curriculum(f) => {
                    let mut c = f("").unwrap();
                    let none = floe_plugin_api::ReplayRequest { round: 1, count: 0, seed: 0 };
                    let replays = !matches!(c.sample_replay(&[], &none), Err(PluginError::Unsupported(_)));
                    assert_eq!(replays, e.capabilities.contains(Capabilities::REPLAYS), "{}", e.name);
                }
                Constructor::EnvEngineer(_) | Constructor::LevelSampler(_) => {
                    assert_eq!(e.capabilities, Capabilities::NONE)
                }
            }
        }
    }
}
