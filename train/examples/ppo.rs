//! floe's PPO on one training space, with `uniform` levels: its training speed (environment steps
//! per second, end to end) and its held-out success against random actions. docs/levels.md's
//! speed comparison with `python/examples/ppo_vector_env.py` and its calibration of the hard
//! held-out set were measured with it.
//!
//! ```sh
//! export LIBTORCH=$PWD/third_party/libtorch
//! cargo run --release -p floe-train --example ppo -- agents=2 size=10 steps=500000
//! cargo run --release -p floe-train --example ppo -- agents=2 size=5-10 steps=2000000 eval-size=10
//! cargo run --release -p floe-train --example ppo -- calibrate steps=4000000
//! ```
//!
//! Settings are `key=value`: `agents`, `size` and `holes` (a value or `low-high`; holes default
//! 0-0.2), `steps`, `threads` (0: one per core), `seed`, the PPO's `radius`, `hidden`, `envs`,
//! `rollout`, `epochs`, `lr`, `ent` and `limit` (PpoConfig's defaults), and the held-out set's
//! `eval-agents`, `eval-size` and `eval-holes` (the top of the training space) and `eval-levels`.
//! `calibrate` trains on `floe levels`' training space instead and prints the success on each
//! candidate hard set (agents, side, hole ratio) that docs/levels.md lists.

use std::collections::HashMap;
use std::time::Instant;

use floe_levels::{LevelSource, LevelSpace, LevelsSpec};
use floe_plugin_api::PluginSpec;
use floe_train::ppo::bench::{BenchConfig, Budget};
use floe_train::ppo::eval::{evaluate, summary, Actor};
use floe_train::ppo::{policy, Ppo, PpoConfig};

type Error = Box<dyn std::error::Error>;

/// `key=value` arguments, with `calibrate` alone.
struct Args(HashMap<String, String>);

impl Args {
    fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, Error> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("{key}={v}: not a value for {key}").into()),
        }
    }

    /// A `low-high` range, or one value for both.
    fn range<T: std::str::FromStr + Copy>(&self, key: &str, default: [T; 2]) -> Result<[T; 2], Error> {
        let Some(v) = self.0.get(key) else { return Ok(default) };
        let bad = || -> Error { format!("{key}={v}: a value or low-high").into() };
        let one = |s: &str| s.parse::<T>().map_err(|_| bad());
        match v.split_once('-') {
            Some((a, b)) => Ok([one(a)?, one(b)?]),
            None => Ok([one(v)?; 2]),
        }
    }
}

fn main() -> Result<(), Error> {
    let mut map = HashMap::new();
    for a in std::env::args().skip(1) {
        match a.split_once('=') {
            Some((k, v)) => map.insert(k.to_string(), v.to_string()),
            None if a == "calibrate" => map.insert(a, String::new()),
            None => return Err(format!("{a:?}: settings are key=value, or calibrate").into()),
        };
    }
    let args = Args(map);
    floe_train::set_threads(args.get("threads", 0)?);
    if args.0.contains_key("calibrate") {
        return calibrate(&args);
    }
    let d = PpoConfig::default();
    let cfg = PpoConfig {
        radius: args.get("radius", d.radius)?,
        hidden: args.get("hidden", d.hidden)?,
        envs: args.get("envs", d.envs)?,
        rollout: args.get("rollout", d.rollout)?,
        epochs: args.get("epochs", d.epochs)?,
        lr: args.get("lr", d.lr)?,
        ent_coef: args.get("ent", d.ent_coef)?,
        episode_limit: args.get("limit", d.episode_limit)?,
        ..d
    };
    let space = LevelSpace {
        agents: args.range("agents", [2, 2])?,
        size: args.range("size", [10, 10])?,
        hole_ratio: args.range("holes", [0.0, 0.2])?,
        wait_ratio: [0.0, 1.0],
        solve: false,
    };
    let top = |r: [f64; 2]| [r[1]; 2];
    let held_space = LevelSpace {
        agents: args.range("eval-agents", [space.agents[1]; 2])?,
        size: args.range("eval-size", [space.size[1]; 2])?,
        hole_ratio: args.range("eval-holes", top(space.hole_ratio))?,
        wait_ratio: [0.0, 1.0],
        solve: true,
    };
    let steps: u64 = args.get("steps", 500_000)?;
    let seed: u64 = args.get("seed", 1)?;
    let spec =
        LevelsSpec { sampler: PluginSpec::builtin("uniform"), space, source: None, seed, update_every: 0 };
    let t0 = Instant::now();
    let mut ppo = Ppo::new(cfg.clone(), floe_train::ppo::levels_of(&spec)?, 2048, seed)?;
    ppo.train(steps, |_, r| {
        eprintln!(
            "{} steps, {:.1} s: training success {:.3}",
            r.env_steps,
            t0.elapsed().as_secs_f64(),
            r.success
        );
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let held = LevelSource::new(held_space, 0xd00d1e)?.draw(args.get("eval-levels", 500)?)?;
    let (trained, cost) = summary(&evaluate(Actor::Policy(ppo.policy()), &held, 2, &cfg, 4096, 5)?);
    let (random, _) = summary(&evaluate(Actor::Random, &held, 2, &cfg, 4096, 5)?);
    println!(
        "{} environment steps in {secs:.1} s = {:.0} steps/s ({} parameters); held-out success {:.1} % \
         (random actions {:.1} %), cost over the optimum {}",
        ppo.env_steps(),
        ppo.env_steps() as f64 / secs,
        policy::parameters(ppo.store()),
        100.0 * trained,
        100.0 * random,
        cost.map_or("-".into(), |c| format!("{c:.3}"))
    );
    Ok(())
}

/// `uniform` on the benchmark's training space, then the success on each candidate hard set.
fn calibrate(args: &Args) -> Result<(), Error> {
    let cfg = BenchConfig::of(Budget::Medium);
    let steps: u64 = args.get("steps", cfg.env_steps)?;
    let t0 = Instant::now();
    let mut ppo =
        Ppo::new(cfg.ppo.clone(), floe_train::ppo::levels_of(&cfg.spec("uniform", 0)?)?, cfg.pool, 0)?;
    ppo.train(steps, |_, _| {})?;
    println!("trained {steps} environment steps in {:.0} s", t0.elapsed().as_secs_f64());
    for (a, n, h) in [
        (8, 16, 0.4),
        (8, 16, 0.3),
        (8, 16, 0.2),
        (6, 16, 0.3),
        (6, 14, 0.3),
        (6, 16, 0.2),
        (5, 14, 0.25),
        (4, 12, 0.2),
        (4, 16, 0.3),
    ] {
        let space = LevelSpace {
            agents: [a, a],
            size: [n, n],
            hole_ratio: [h, h],
            wait_ratio: [0.0, 1.0],
            solve: true,
        };
        let held = LevelSource::new(space, 0xd00d1e)?.draw(200)?;
        let (s, _) = summary(&evaluate(Actor::Policy(ppo.policy()), &held, 2, &cfg.ppo, 4096, 11)?);
        println!("{a} agents, {n}x{n}, hole ratio {h}: success {:.1} %", 100.0 * s);
    }
    Ok(())
}
