//! The boundary in-process: the same tables a loaded library would hand out.

use super::*;
use crate::catalog::{Capabilities, Constructor, Entry, PluginLibrary};
use crate::config::RoundConfig;
use crate::design::{DesignLimits, EngineerReply};
use crate::history::History;
use crate::records::{ReplayRecord, ReplayRequest, VerdictRecord};
use crate::traits::{Curriculum, EnvEngineer, RewardFn};

struct Constant(f32);

impl RewardFn for Constant {
    fn verdict_rewards(&mut self, _: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        out.fill(self.0);
        Ok(())
    }
}

struct Panicky;

impl RewardFn for Panicky {
    fn verdict_rewards(&mut self, _: &[VerdictRecord], _: &mut [f32]) -> Result<(), PluginError> {
        panic!("boom in verdict_rewards")
    }
}

struct BadConfig;

impl Curriculum for BadConfig {
    fn next_config(&mut self, _: &History) -> Result<RoundConfig, PluginError> {
        let mut c = RoundConfig::round0_default();
        c.sizes[0].data_ratio = 0.9;
        Ok(c)
    }

    fn sample_replay(&mut self, pool: &[ReplayRecord], _: &ReplayRequest) -> Result<Vec<u32>, PluginError> {
        Ok(vec![pool.len() as u32])
    }
}

struct Echo;

impl EnvEngineer for Echo {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        Ok(EngineerReply {
            config: RoundConfig::round0_default(),
            rationale: format!(
                "{} within {}x{}, agents {:?}",
                context.to_uppercase(),
                limits.max_size,
                limits.max_size,
                limits.agents
            ),
            raw: Vec::new(),
            notes: Vec::new(),
        })
    }
}

struct Lib;

impl PluginLibrary for Lib {
    fn catalog() -> Vec<Entry> {
        vec![
            Entry {
                name: "half",
                version: "1.0.0",
                description: "0.5 always",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| Ok(Box::new(Constant(0.5)))),
            },
            Entry {
                name: "nan",
                version: "1.0.0",
                description: "NaN always",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| Ok(Box::new(Constant(f32::NAN)))),
            },
            Entry {
                name: "ctor-panics",
                version: "1.0.0",
                description: "",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| panic!("constructor panic")),
            },
            Entry {
                name: "echo",
                version: "0.2.0",
                description: "",
                capabilities: Capabilities::NONE,
                make: Constructor::EnvEngineer(|_| Ok(Box::new(Echo))),
            },
        ]
    }
}

fn record() -> VerdictRecord {
    VerdictRecord {
        failure: 0,
        optimal: 0,
        reserved: [0; 2],
        num_agents: 2,
        agents_on_goal: 2,
        legal_steps: 3,
        horizon: 3,
        soc: 5,
        optimal_soc: 4,
    }
}

#[test]
fn the_root_module_lists_and_makes_plugins() {
    let lib = root_module::<Lib>();
    let infos = lib.plugins()().into_result().unwrap();
    assert_eq!(infos.len(), 4);
    let caps =
        lib.capabilities().expect("a root module of this version has the field")().into_result().unwrap();
    assert_eq!(caps.as_slice(), [1, 1, 1, 0]);
    let half = infos[0].to_info(Some(caps[0])).unwrap();
    assert_eq!((half.kind, half.capabilities), (crate::PluginKind::Reward, Capabilities::SCORES_PLANS));
    assert_eq!(infos[3].name.as_str(), "echo");
    // A library from before the field: every call of the kind's table is taken as declared.
    let legacy = infos[0].to_info(None).unwrap().capabilities;
    assert_eq!(legacy, Capabilities::SCORES_PLANS.with(Capabilities::SCORES_STEPS));
    assert_eq!(infos[3].to_info(None).unwrap().capabilities, Capabilities::NONE);
    // Declarations that do not fit the kind are refused.
    let e = infos[0].to_info(Some(Capabilities::REPLAYS.bits())).unwrap_err();
    assert_eq!(e, "a reward plugin cannot declare replays");
    assert!(infos[3].to_info(Some(1)).is_err());

    let mut half = lib.new_reward()("half".into(), "".into()).into_result().unwrap();
    let mut out = [0.0; 2];
    half.verdict_rewards(&[record(), record()], &mut out).unwrap();
    assert_eq!(out, [0.5, 0.5]);
    // Lengths are checked before the call, unsupported calls come back as errors.
    assert!(matches!(half.verdict_rewards(&[record()], &mut out), Err(PluginError::BadInput(_))));
    assert!(matches!(half.step_rewards(&[], &mut []), Err(PluginError::Unsupported(_))));

    let mut nan = lib.new_reward()("nan".into(), "".into()).into_result().unwrap();
    assert!(matches!(nan.verdict_rewards(&[record()], &mut out[..1]), Err(PluginError::BadOutput(_))));

    let unknown = lib.new_curriculum()("half".into(), "".into()).into_result().unwrap_err();
    assert_eq!(PluginError::from(unknown), PluginError::UnknownPlugin("curriculum half".into()));
    let ctor = lib.new_reward()("ctor-panics".into(), "".into()).into_result().unwrap_err();
    assert_eq!(PluginError::from(ctor), PluginError::Panicked("constructor panic".into()));

    let mut echo = lib.new_engineer()("echo".into(), "".into()).into_result().unwrap();
    // The limits cross as a value: the engineer reads what the host gave.
    let limits = DesignLimits { max_size: 9, agents: vec![2, 4], ..DesignLimits::default() };
    assert_eq!(echo.design("why", &limits).unwrap().rationale, "WHY within 9x9, agents [2, 4]");
    // Limits that do not validate are refused at the boundary, before the engineer sees them.
    let bad = DesignLimits { agents: vec![], ..DesignLimits::default() };
    assert!(matches!(echo.design("why", &bad), Err(PluginError::BadInput(m)) if m.contains("agents")));
}

#[test]
fn a_panic_becomes_an_error_and_poisons_the_instance() {
    let mut p = FfiRewardFn::from_box(Box::new(Panicky));
    let mut out = [0.0];
    assert_eq!(
        p.verdict_rewards(&[record()], &mut out),
        Err(PluginError::Panicked("boom in verdict_rewards".into()))
    );
    let again = p.verdict_rewards(&[record()], &mut out).unwrap_err();
    assert!(matches!(&again, PluginError::Panicked(m) if m.contains("earlier call")), "{again}");
}

#[test]
fn curriculum_output_is_checked_on_both_sides() {
    let mut c = FfiCurriculum::from_box(Box::new(BadConfig));
    let e = c.next_config(&History::default()).unwrap_err();
    assert!(matches!(&e, PluginError::BadOutput(m) if m.contains("data ratios")), "{e}");
    let rec = ReplayRecord {
        id: 7,
        size: 3,
        agents: 2,
        last_round: 0,
        samples: 1,
        mean_reward: 0.5,
        reward_std: 0.0,
        success_rate: 0.5,
        reserved: 0,
    };
    let req = ReplayRequest { round: 1, count: 1, seed: 0 };
    let e = c.sample_replay(&[rec], &req).unwrap_err();
    assert!(matches!(&e, PluginError::BadOutput(m) if m.contains("outside a pool")), "{e}");
    let late = ReplayRecord { last_round: 5, ..rec };
    assert!(matches!(c.sample_replay(&[late], &req), Err(PluginError::BadInput(_))));
}

/// The crate allows `unsafe` only for the accessors abi_stable's derive generates; none is
/// written by hand (a comment or a string may name it).
#[test]
fn no_unsafe_is_written_by_hand() {
    fn visit(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, line) in text.lines().enumerate() {
                    // Code outside comments and string literals.
                    let code = line.split("//").next().unwrap_or("");
                    let code: String = code.split('"').step_by(2).collect();
                    if code.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == "unsafe") {
                        found.push(format!("{}:{}", path.display(), i + 1));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    visit(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
    assert!(found.is_empty(), "unsafe written by hand: {found:?}");
}

/// Weights from the episodes' returns (1 + the slot's last return), a refill of the slots whose
/// episode failed; `garbage` makes it answer a negative weight, `panics` makes it panic.
struct BySlot {
    garbage: bool,
    panics: bool,
}

impl crate::levels::LevelSampler for BySlot {
    fn update(
        &mut self,
        levels: &[crate::levels::LevelRecord],
        episodes: &[crate::levels::EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<crate::levels::LevelPlan, PluginError> {
        assert!(!self.panics, "boom in update");
        let mut weights = vec![1.0; levels.len()];
        for (i, e) in episodes.iter().enumerate() {
            weights[e.instance as usize] = 1.0 + f64::from(scores.map_or(e.episode_return, |s| s[i]));
        }
        if self.garbage {
            weights[0] = -1.0;
        }
        let refill = episodes.iter().filter(|e| e.outcome == 2).map(|e| e.instance).collect();
        Ok(crate::levels::LevelPlan { weights: Some(weights), refill, config: None, edits: Vec::new() })
    }
}

#[test]
fn a_level_sampler_crosses_checked_both_ways() {
    use crate::levels::{EpisodeRecord, LevelRecord, LevelSampler};
    let levels: Vec<LevelRecord> =
        (0..3).map(|slot| LevelRecord { slot, ..LevelRecord::default() }).collect();
    let ep = |instance, outcome, episode_return| EpisodeRecord {
        instance,
        outcome,
        episode_return,
        ..EpisodeRecord::default()
    };
    let episodes = [ep(2, 1, 0.5), ep(1, 2, 2.0)];
    let mut s = FfiLevelSampler::from_box(Box::new(BySlot { garbage: false, panics: false }));
    let plan = s.update(&levels, &episodes, None).unwrap();
    assert_eq!(plan.weights, Some(vec![1.0, 3.0, 1.5]));
    assert_eq!(plan.refill, vec![1]);
    let plan = s.update(&levels, &episodes, Some(&[1.0, 0.0])).unwrap();
    assert_eq!(plan.weights, Some(vec![1.0, 1.0, 2.0]), "the host's scores reach the sampler");
    // The host's call is checked before it crosses, the plugin's plan after.
    let e = s.update(&levels, &episodes, Some(&[1.0])).unwrap_err();
    assert!(
        matches!(e, PluginError::BadInput(_)) && e.to_string().contains("1 scores for 2 episodes"),
        "{e}"
    );
    let mut bad = FfiLevelSampler::from_box(Box::new(BySlot { garbage: true, panics: false }));
    let e = bad.update(&levels, &episodes, None).unwrap_err();
    assert!(matches!(e, PluginError::BadOutput(_)) && e.to_string().contains("weight 0 is -1"), "{e}");
    let mut p = FfiLevelSampler::from_box(Box::new(BySlot { garbage: false, panics: true }));
    let e = p.update(&levels, &episodes, None).unwrap_err();
    assert!(matches!(e, PluginError::Panicked(_)) && e.to_string().contains("boom in update"), "{e}");
    let e = p.update(&levels, &[], None).unwrap_err();
    assert!(e.to_string().contains("an earlier call panicked"), "poisoned: {e}");
}
