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
