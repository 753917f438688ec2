//! The Rust twin of `examples/c/step_random.c`: the same pool, engine, action ring and loop
//! through the Rust API, for the C-against-Rust stepping benchmark (`scripts/bench/capi.sh`).
//!
//! `cargo run --release -p floe-ffi --example step_random -- [size] [density] [agents] [envs] [seconds]`

use std::sync::Arc;
use std::time::Instant;

use floe_core::engine::{
    CollisionMode, CpuEngine, Engine, EnvConfig, HoleRule, InstancePool, Optima, StepBuffers,
};
use floe_core::generator::{random_instances, GeneratorConfig};

const RING: usize = 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let size: u32 = arg(0, "16").parse()?;
    let density: f64 = arg(1, "0.2").parse()?;
    let agents: usize = arg(2, "4").parse()?;
    let envs: usize = arg(3, "32768").parse()?;
    let seconds: f64 = arg(4, "3").parse()?;

    // The same instances as the C API's {"size", "agents", "hole_ratio", "solve": false}, 16, seed 1.
    let insts = random_instances(
        &GeneratorConfig::default().size(size).agents(agents).hole_ratio(density).count(16).seed(1),
    )?;
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored)?);
    let cfg = EnvConfig {
        num_envs: envs,
        mode: CollisionMode::Soft,
        holes: HoleRule::Block,
        episode_limit: 64,
        obs_radius: 2,
        ..EnvConfig::default()
    };
    let mut engine = CpuEngine::new(cfg, pool)?;
    let sizes = engine.sizes();
    let mut out = StepBuffers::new(&sizes);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let ring: Vec<u8> = (0..RING * sizes.actions)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 5) as u8
        })
        .collect();
    engine.reset(0, out.view())?;
    // FLOE_STEPS=n: exactly n steps (for instruction counts), as the C program.
    let fixed: Option<usize> = std::env::var("FLOE_STEPS").ok().map(|s| s.parse()).transpose()?;
    let (mut steps, start) = (0usize, Instant::now());
    let mut elapsed = 0.0;
    while fixed.map_or(elapsed < seconds, |n| steps < n) {
        let a = &ring[(steps % RING) * sizes.actions..(steps % RING + 1) * sizes.actions];
        engine.step(a, out.view())?;
        steps += 1;
        elapsed = start.elapsed().as_secs_f64();
    }
    let agent_steps = steps as f64 * envs as f64 * agents as f64;
    println!(
        "{{\"api\": \"rust\", \"backend\": \"cpu\", \"size\": {size}, \"density\": {density}, \"agents\": {agents}, \
         \"envs\": {envs}, \"steps\": {steps}, \"seconds\": {elapsed:.3}, \"agent_steps_per_sec\": {:.0}}}",
        agent_steps / elapsed
    );
    Ok(())
}
