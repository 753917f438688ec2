//! PPO from scratch beats random actions on small boards after a short run: one agent on 4×4 and
//! 5×5 maps with a few holes, held-out levels it never trained on.

use floe_levels::{LevelSource, LevelSpace, LevelsSpec};
use floe_plugin_api::PluginSpec;
use floe_train::ppo::eval::{evaluate, summary, Actor};
use floe_train::ppo::{Ppo, PpoConfig};

#[test]
fn ppo_beats_random_actions_on_held_out_small_boards() {
    floe_train::set_threads(1);
    let space = LevelSpace {
        agents: [1, 1],
        size: [4, 5],
        hole_ratio: [0.0, 0.15],
        wait_ratio: [0.0, 0.0],
        solve: false,
    };
    let spec = LevelsSpec {
        sampler: PluginSpec::builtin("uniform"),
        space: space.clone(),
        source: None,
        seed: 3,
        update_every: 0,
    };
    let cfg = PpoConfig {
        radius: 2,
        hidden: 64,
        envs: 128,
        rollout: 16,
        episode_limit: 24,
        ..PpoConfig::default()
    };
    let mut ppo = Ppo::new(cfg.clone(), floe_train::ppo::levels_of(&spec).unwrap(), 256, 1).unwrap();
    ppo.train(150_000, |_, _| {}).unwrap();
    let held = LevelSource::new(space, 99).unwrap().draw(200).unwrap();
    let (trained, _) = summary(&evaluate(Actor::Policy(ppo.policy()), &held, 2, &cfg, 4096, 5).unwrap());
    let (random, _) = summary(&evaluate(Actor::Random, &held, 2, &cfg, 4096, 5).unwrap());
    eprintln!("held-out success: trained {trained:.3}, random {random:.3}");
    assert!(trained > random + 0.4, "trained {trained:.3} against random {random:.3}");
}

/// Under robust PLR the update learns from replayed levels alone. A rollout of one step holds
/// first plays only (no level has ended before it), so the robust run's first update takes no
/// gradient and leaves every weight as it was, where plain PLR learns from every agent-step;
/// later rollouts hold replays, which the robust run learns from.
#[test]
fn under_robust_plr_first_plays_take_no_gradient() {
    floe_train::set_threads(1);
    let space = LevelSpace {
        agents: [1, 2],
        size: [4, 5],
        hole_ratio: [0.0, 0.2],
        wait_ratio: [0.0, 0.0],
        solve: false,
    };
    let cfg =
        PpoConfig { radius: 2, hidden: 16, envs: 32, rollout: 1, episode_limit: 6, ..PpoConfig::default() };
    let weights = |ppo: &Ppo| -> Vec<f32> {
        let mut v: Vec<_> = ppo.store().variables().into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().flat_map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()).collect()
    };
    for robust in [true, false] {
        let spec = LevelsSpec {
            sampler: PluginSpec {
                name: "plr".into(),
                params: serde_json::json!({ "robust": robust }),
                library: None,
            },
            space: space.clone(),
            source: None,
            seed: 3,
            update_every: 0,
        };
        let mut ppo = Ppo::new(cfg.clone(), floe_train::ppo::levels_of(&spec).unwrap(), 16, 1).unwrap();
        assert_eq!(ppo.levels().robust(), robust);
        let before = weights(&ppo);
        let r = ppo.update(1_000_000).unwrap();
        assert!(r.samples >= 32, "{r:?}");
        if robust {
            assert_eq!(r.trained, 0, "{r:?}");
            assert_eq!(weights(&ppo), before, "no gradient from first plays");
        } else {
            assert_eq!(r.trained, r.samples, "{r:?}");
            assert_ne!(weights(&ppo), before);
        }
        let mut later = Vec::new();
        for _ in 0..30 {
            let r = ppo.update(1_000_000).unwrap();
            later.push((r.trained, r.samples));
        }
        if robust {
            assert!(later.iter().any(|&(t, _)| t > 0), "replays learned from: {later:?}");
            assert!(later.iter().any(|&(t, s)| t < s), "first plays left out: {later:?}");
        } else {
            assert!(later.iter().all(|&(t, s)| t == s), "{later:?}");
        }
    }
}
