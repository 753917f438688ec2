//! The environment engineer in the loop, with the real embedded model (SmolLM2-135M, from
//! `scripts/setup.sh`): it designs rounds 1 and 2 of a tiny run, the trainer applies what it
//! returns (clamped into the design limits), and the run folder holds every context, reply,
//! configuration, rationale and log.

mod common;

use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{PluginSpec, RoundConfig};
use floe_train::config::ValidationConfig;
use floe_train::run;
use floe_train::run::Source;

/// A tiny 2-agent run of `rounds` rounds whose validation and design limits keep to sizes 3–5.
fn two_agent_run(seed: u64, rounds: u32, per_cell: usize) -> floe_train::TrainConfig {
    let mut cfg = common::tiny(seed);
    cfg.validation = ValidationConfig { sizes: vec![3, 4], agents: vec![2], per_cell, ..Default::default() };
    cfg.warm_start.data.agents = vec![2];
    cfg.rounds.rounds = rounds;
    cfg.rounds.epochs = 1;
    cfg.rounds.samples = 8;
    cfg.rounds.design_limits =
        DesignLimits { min_size: 3, max_size: 5, agents: vec![2], max_sizes: 3, ..DesignLimits::default() };
    cfg
}

#[test]
fn the_embedded_model_designs_two_rounds_and_every_exchange_is_kept() {
    let mut cfg = two_agent_run(5, 3, 4);
    cfg.rounds.curriculum = None;
    cfg.rounds.engineer = Some(PluginSpec {
        name: "embedded".into(),
        params: serde_json::json!({"seed": 7, "max_tokens": 200}),
        library: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let state = run(&cfg, &common::opts(dir.path()), common::plugins(&cfg)).unwrap();
    assert_eq!(state.rounds_done, 3);
    // Round 0: floe's default clamped into the limits (sizes 3 to 10 become 3 to 5).
    assert_eq!(state.designs[0].source, Source::Default);
    let r0 = &state.history.rounds[0].config;
    assert!(r0.sizes.iter().all(|s| (3..=5).contains(&s.size)) && r0.sizes.len() == 3, "{r0:?}");
    assert!(state.designs[0].notes.iter().any(|n| n.contains("appears twice")));
    for r in [1u32, 2] {
        let d = &state.designs[r as usize];
        let folder = dir.path().join(format!("engineer/round-{r}"));
        let read = |f: &str| std::fs::read_to_string(folder.join(f)).unwrap();
        let context = read("context.md");
        assert!(context.contains("## F: failures on the validation set after round"), "{context}");
        assert!(context.contains(&format!("Round {r} of 3")));
        let limits: DesignLimits = serde_json::from_str(&read("limits.json")).unwrap();
        let expected = DesignLimits { max_replay_fraction: 0.0, ..cfg.rounds.design_limits.clone() };
        assert_eq!(limits, expected);
        assert!(context.contains(&serde_json::to_string(&limits).unwrap()), "{context}");
        let applied: RoundConfig = serde_json::from_str(&read("config.json")).unwrap();
        assert_eq!(applied, state.history.rounds[r as usize].config);
        applied.validate().unwrap();
        assert!(applied.sizes.iter().all(|s| (3..=5).contains(&s.size) && s.hole_ratio <= 0.4));
        assert_eq!(applied.agents, vec![2]);
        let log = read("log.txt");
        assert!(log.contains("engineer answered in"), "{log}");
        match d.source {
            // The model replied with something usable (the grammar makes that the rule).
            Source::Engineer => {
                let reply = read("reply.txt");
                assert!(reply.trim_start().starts_with("{\"rationale\": \""), "{reply}");
                assert_eq!(read("rationale.txt").trim(), d.rationale.as_deref().unwrap().trim());
            }
            // It did not: the previous configuration stood, and the log says why.
            Source::Previous => {
                assert!(log.contains("the previous configuration stands"), "{log}");
                assert_eq!(applied, state.history.rounds[r as usize - 1].config);
            }
            other => panic!("round {r} designed by {other:?}"),
        }
    }
    // The model's answers are deterministic for a seed: round 1's context, sent again to a new
    // engineer with the same seed, gives the reply the run recorded.
    let round1 = dir.path().join("engineer/round-1");
    let ctx = std::fs::read_to_string(round1.join("context.md")).unwrap();
    let limits: DesignLimits =
        serde_json::from_str(&std::fs::read_to_string(round1.join("limits.json")).unwrap()).unwrap();
    let mut again = floe_plugin_registry::engineer(cfg.rounds.engineer.as_ref().unwrap()).unwrap();
    if let Ok(a) = again.design(&ctx, &limits) {
        let recorded = std::fs::read_to_string(round1.join("reply.txt")).unwrap();
        assert_eq!(a.raw.join("\n\n---\n\n").trim(), recorded.trim());
    }
}

/// The rule-based engineer (no model) in the same place in the loop: every round after the first
/// is its answer to the context the trainer wrote, and that answer is what the round trained on.
#[test]
fn the_rules_engineer_designs_rounds_from_the_context_the_trainer_writes() {
    let mut cfg = two_agent_run(3, 3, 4);
    cfg.rounds.curriculum = None;
    cfg.rounds.engineer = Some(PluginSpec::builtin("rules"));
    // It reads the history as JSON, which the trainer appends to the context when asked.
    cfg.rounds.context.history_json = true;
    let dir = tempfile::tempdir().unwrap();
    let state = run(&cfg, &common::opts(dir.path()), common::plugins(&cfg)).unwrap();
    assert_eq!(state.rounds_done, 3);
    let mut fresh = floe_plugin_registry::engineer(&PluginSpec::builtin("rules")).unwrap();
    for r in [1usize, 2] {
        assert_eq!(state.designs[r].source, Source::Engineer, "round {r}: {:?}", state.designs[r].notes);
        let folder = dir.path().join(format!("engineer/round-{r}"));
        let context = std::fs::read_to_string(folder.join("context.md")).unwrap();
        let answer = fresh.design(&context, &cfg.rounds.design_limits).unwrap();
        let applied = &state.history.rounds[r].config;
        assert_eq!(&answer.config, applied, "round {r}");
        let rationale = std::fs::read_to_string(folder.join("rationale.txt")).unwrap();
        assert_eq!(rationale.trim(), answer.rationale.trim());
        // The trainee fails nearly everything, so difficulty scaling eases the sizes it was given.
        let before = &state.history.rounds[r - 1].config;
        assert_ne!(applied, before, "round {r}: {}", answer.rationale);
        assert!(answer.rationale.contains("easier"), "{}", answer.rationale);
    }
}

/// An engineer that always asks for half the round replayed, and says what its limits allow.
struct ReplayHungry;

impl floe_plugin_api::EnvEngineer for ReplayHungry {
    fn design(
        &mut self,
        _context: &str,
        limits: &DesignLimits,
    ) -> Result<floe_plugin_api::EngineerReply, floe_plugin_api::PluginError> {
        let mut config = RoundConfig::round0_default();
        config.agents = vec![2];
        config.replay_fraction = 0.5;
        Ok(floe_plugin_api::EngineerReply {
            config,
            rationale: format!("replay what failed (at most {})", limits.max_replay_fraction),
            raw: Vec::new(),
            notes: Vec::new(),
        })
    }
}

/// Beside a curriculum that does not replay (difficulty scaling), an engineer's replay is
/// clamped to 0 with the reason logged, and the run goes on (it used to stop at the round).
#[test]
fn replay_is_not_offered_when_the_curriculum_cannot_replay() {
    let mut cfg = two_agent_run(4, 2, 2);
    cfg.rounds.design_limits.max_replay_fraction = 0.5;
    let curriculum = PluginSpec {
        name: "difficulty-scaling".into(),
        params: serde_json::json!({"start_sizes": [3, 4], "agents": [2], "max_size": 5}),
        library: None,
    };
    cfg.rounds.curriculum = Some(curriculum.clone());
    // The run is handed the engineer below; the configuration names it.
    cfg.rounds.engineer = Some(PluginSpec::builtin("replay-hungry"));
    let dir = tempfile::tempdir().unwrap();
    let plugins = floe_train::Plugins {
        reward: floe_plugin_registry::plan_reward(&cfg.rounds.reward).unwrap(),
        curriculum: Some(floe_plugin_registry::curriculum(&curriculum).unwrap()),
        // Difficulty scaling does not declare that it replays.
        curriculum_replays: false,
        engineer: Some(Box::new(ReplayHungry)),
    };
    let state = run(&cfg, &common::opts(dir.path()), plugins).unwrap();
    assert_eq!(state.rounds_done, 2);
    assert_eq!(state.designs[1].source, Source::Engineer);
    assert_eq!(state.history.rounds[1].config.replay_fraction, 0.0);
    let log = std::fs::read_to_string(dir.path().join("engineer/round-1/log.txt")).unwrap();
    assert!(log.contains("replay_fraction 0.5"), "{log}");
    // The engineer was given the limits as a value, with no replay in them.
    let rationale = std::fs::read_to_string(dir.path().join("engineer/round-1/rationale.txt")).unwrap();
    assert_eq!(rationale.trim(), "replay what failed (at most 0)");
}
