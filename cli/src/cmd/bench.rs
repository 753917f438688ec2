//! `floe bench`: agent-steps per second and plans verified per second, as JSON lines.

use std::sync::Arc;
use std::time::Instant;

use clap::builder::TypedValueParser as _;
use floe_core::engine::gpu::{GpuEngine, GpuVerifier};
use floe_core::engine::open::{shared_gpu_context, Backend};
use floe_core::engine::{
    event, CollisionMode, CpuEngine, Engine, EnvConfig, HoleRule, InstancePool, ObsFormat, Optima,
    StepBuffers,
};
use floe_core::generator::{generate, random_instances, GeneratorConfig};
use floe_core::verify::{CpuVerifier, PlanBatch, Verifier, VerifyOut};
use floe_core::Plan;

use rayon::prelude::*;

use crate::error::CliError;

mod plot;
mod sweep;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Map sides to step on.
    #[arg(long, value_delimiter = ',', default_values_t = [16u32, 32])]
    sizes: Vec<u32>,
    /// Hole (obstacle) densities.
    #[arg(long, value_delimiter = ',', default_values_t = [0.2f64, 0.3])]
    densities: Vec<f64>,
    /// Agents per environment.
    #[arg(long, value_delimiter = ',', default_values_t = [4usize, 64])]
    agents: Vec<usize>,
    /// Batch sizes (environments per batch).
    #[arg(long, value_delimiter = ',', default_values_t = [1024usize])]
    envs: Vec<usize>,
    /// Collision mode.
    #[arg(long, value_enum, default_value_t = Mode::Soft)]
    mode: Mode,
    /// Soft mode: holes drop agents (`drop`) or block moves like walls (`block`, as in POGEMA).
    #[arg(long, value_enum, default_value_t = Holes::Block)]
    holes: Holes,
    /// Observation radius.
    #[arg(long, default_value_t = 2)]
    radius: u32,
    /// Observation format: `bytes` (a byte per cell and channel), `bits` (a bit, rows packed
    /// into words) or `none` (state only).
    #[arg(long, default_value = "bytes", value_parser = ObsFormat::from_name)]
    obs: ObsFormat,
    /// Episode limit (steps).
    #[arg(long, default_value_t = 64)]
    episode_limit: u32,
    /// Seconds to measure each setting for (after a warm-up of a tenth of that).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Plans per verification batch (3 agents on 8×8 maps); 0 skips verification.
    #[arg(long, default_value_t = 1_000_000)]
    plans: usize,
    /// Distinct instances per pool.
    #[arg(long, default_value_t = 64)]
    pool: usize,
    /// Backends to measure: `cpu`, `gpu` (wgpu; needs an adapter, lavapipe counts).
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [Backend::Cpu],
        value_parser = clap::builder::PossibleValuesParser::new(["cpu", "gpu"]).try_map(|s| s.parse::<Backend>())
    )]
    backends: Vec<Backend>,
    /// GPU: steps per submission (no host round-trip between them).
    #[arg(long, default_value_t = 16)]
    steps_per_submit: u32,
    /// Also measure one thread's memory bandwidth (a 512 MiB fill and a 256 MiB copy), printed
    /// as a `"bench": "memory"` line before the other measurements.
    #[arg(long)]
    memory: bool,
    #[command(flatten)]
    sweep: sweep::SweepArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Holes {
    Drop,
    Block,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    Strict,
    Soft,
}

/// Runs `f` for a tenth of `seconds` to warm up, then for `seconds`; returns the calls, the sum
/// of what `f` returned, the seconds of the measured part and the CPU seconds the process used
/// in it (all threads; `None` where /proc is not there).
fn timed(seconds: f64, mut f: impl FnMut() -> u64) -> (u64, u64, f64, Option<f64>) {
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() < seconds / 10.0 {
        f();
    }
    let (start, cpu, mut n, mut sum) = (Instant::now(), cpu_seconds(), 0u64, 0u64);
    while start.elapsed().as_secs_f64() < seconds {
        sum += f();
        n += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    (n, sum, secs, cpu.zip(cpu_seconds()).map(|(a, b)| b - a))
}

/// CPU seconds this process has used, user and system, over all its threads: fields 14 and 15
/// of /proc/self/stat, in Linux's clock ticks of 1/100 s. `None` where that file is missing.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let (utime, stime): (u64, u64) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?);
    Some((utime + stime) as f64 / 100.0)
}

/// One thread's memory bandwidth, for reading the stepping figures against: `fill` of a 512 MiB
/// buffer (written bytes per second) and `copy_from_slice` between two 256 MiB buffers (bytes
/// read plus bytes written per second), each for `seconds`.
fn memory_bench(seconds: f64) -> Result<(), CliError> {
    const MIB: usize = 1 << 20;
    let mut big = vec![0u8; 512 * MIB];
    let mut byte = 0u8;
    let (fills, _, fill_secs, _) = timed(seconds, || {
        byte = byte.wrapping_add(1);
        big.fill(byte);
        u64::from(big[big.len() / 2])
    });
    let (src, dst) = big.split_at_mut(256 * MIB);
    let (copies, _, copy_secs, _) = timed(seconds, || {
        dst.copy_from_slice(src);
        u64::from(dst[dst.len() / 3])
    });
    let line = serde_json::json!({
        "bench": "memory",
        "threads": 1,
        "write_gb_per_sec": (fills as f64 * 512.0 * MIB as f64) / fill_secs / 1e9,
        "copy_gb_per_sec": (copies as f64 * 2.0 * 256.0 * MIB as f64) / copy_secs / 1e9,
        "seconds": fill_secs + copy_secs,
    });
    crate::emit(None, &format!("{line}\n"))
}

/// What a stepping measurement gives: steps, agent-steps, seconds, CPU seconds, what was counted,
/// and (CPU) the instruction set the step ran compiled for ([`CpuEngine::isa`]).
type Stepped = (u64, u64, f64, Option<f64>, &'static str, Option<&'static str>);

/// CPU stepping.
fn step_cpu(a: &Args, cfg: &EnvConfig, pool: &Arc<InstancePool>) -> Result<Stepped, CliError> {
    let mut engine = CpuEngine::new(cfg.clone(), Arc::clone(pool)).map_err(failed)?;
    let mut out = StepBuffers::new(&engine.sizes());
    engine.reset(0, out.view()).map_err(failed)?;
    // Agent-steps count the agents that took part in each step: active ones and those that
    // dropped out in it (padding slots never count).
    let took_part = |ev: &u32| u64::from((ev & event::INACTIVE == 0) | (ev & event::HOLE != 0));
    let count = |out: &StepBuffers| -> u64 {
        out.events.par_chunks(1 << 14).map(|c| c.iter().map(took_part).sum::<u64>()).sum()
    };
    // In soft mode with holes as walls nobody ever leaves an episode, so every agent of every
    // environment takes part in every step: the count is the sum of the agent counts, without a
    // pass over the events (about 5 % of a 64-agent step). The last step is checked below.
    let walls = cfg.mode == CollisionMode::Soft && cfg.holes == HoleRule::Block;
    let agents_in = CpuEngine::agents_in_play;
    // The loop runs on a thread of rayon's pool, as a training loop that steps from a rayon task
    // would: each step's fork and join then stays inside the pool instead of handing the work to
    // it from outside and sleeping until it is done.
    let (steps, agent_steps, secs, cpu) = rayon::scope(|_| {
        timed(a.seconds, || {
            engine.step_random(out.view()).expect("buffers were sized for this engine");
            if walls {
                agents_in(&engine)
            } else {
                count(&out)
            }
        })
    });
    if walls && count(&out) != agents_in(&engine) {
        return Err(CliError::Failed("an agent left an episode with holes as walls".into()));
    }
    Ok((steps, agent_steps, secs, cpu, "active agents", Some(engine.isa())))
}

/// GPU stepping, `steps_per_submit` steps per submission, waiting for the device after each.
fn step_gpu(a: &Args, cfg: &EnvConfig, pool: &Arc<InstancePool>) -> Result<Stepped, CliError> {
    let ctx = shared_gpu_context().map_err(failed)?;
    let mut engine = GpuEngine::new(ctx, cfg.clone(), Arc::clone(pool)).map_err(failed)?;
    engine.reset(0, StepBuffers::new(&engine.sizes()).view()).map_err(failed)?;
    let n = a.steps_per_submit.max(1);
    let slots = (cfg.num_envs * pool.max_agents()) as u64;
    let (calls, _, secs, cpu) = timed(a.seconds, || {
        engine.step_random(n).expect("the engine was reset");
        engine.sync().expect("the device answers");
        0
    });
    let steps = calls * u64::from(n);
    // Without reading events back every step, every agent slot is counted; with
    // `--holes block` no agent ever drops out, so slots and active agents are the same.
    Ok((steps, steps * slots, secs, cpu, "agent slots", None))
}

fn failed(e: impl std::fmt::Display) -> CliError {
    CliError::Failed(e.to_string())
}

/// One stepping setting: the map, the agents, the batch and the observation radius; the rest
/// (mode, holes, episode limit, seconds) comes from [`Args`].
#[derive(Debug, Clone, Copy)]
struct Setting {
    size: u32,
    density: f64,
    agents: usize,
    envs: usize,
    radius: u32,
}

/// The pool of `--pool` random instances that a setting's environments play.
fn instance_pool(a: &Args, s: &Setting) -> Result<Arc<InstancePool>, CliError> {
    let insts = random_instances(&GeneratorConfig {
        max_attempts: 100,
        ..GeneratorConfig::default().size(s.size).agents(s.agents).hole_ratio(s.density).count(a.pool).seed(1)
    })
    .map_err(failed)?;
    Ok(Arc::new(InstancePool::new(&insts, Optima::AsStored).map_err(failed)?))
}

/// The engine configuration of a setting.
fn env_config(a: &Args, s: &Setting) -> EnvConfig {
    EnvConfig {
        num_envs: s.envs,
        mode: match a.mode {
            Mode::Strict => CollisionMode::Strict,
            Mode::Soft => CollisionMode::Soft,
        },
        holes: match a.holes {
            Holes::Drop => HoleRule::Drop,
            Holes::Block => HoleRule::Block,
        },
        episode_limit: a.episode_limit,
        obs_radius: s.radius,
        obs_format: a.obs,
        ..EnvConfig::default()
    }
}

/// Measures one setting on one backend with `pool` (built by [`instance_pool`] for it): the
/// JSON object of its step line. `floe bench` and `floe bench --sweep` both measure through this.
fn measure_step(
    a: &Args,
    s: &Setting,
    pool: &Arc<InstancePool>,
    backend: Backend,
) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    let cfg = env_config(a, s);
    let (steps, agent_steps, secs, cpu, counted, isa) = match backend {
        Backend::Cpu => step_cpu(a, &cfg, pool)?,
        Backend::Gpu => step_gpu(a, &cfg, pool)?,
    };
    let (k, envs) = (s.agents, s.envs);
    // Buffers a step touches, per agent: its state word (read and written), its observation,
    // reward and event words; per environment: 4 state words (read and written), info, flags.
    let per_agent = 8 + cfg.obs_format.stride(s.radius) + 4 + 4;
    let per_env = 32 + 16 + 2;
    let line = serde_json::json!({
        "bench": "step",
        "backend": backend.to_string(),
        "threads": if backend == Backend::Cpu { rayon::current_num_threads() } else { 0 },
        "isa": isa,
        "mode": format!("{:?}", cfg.mode).to_lowercase(),
        "holes": format!("{:?}", a.holes).to_lowercase(),
        "size": s.size,
        "density": s.density,
        "agents": k,
        "envs": envs,
        "radius": s.radius,
        "obs": cfg.obs_format.name(),
        "steps": steps,
        "seconds": secs,
        "agent_steps_per_sec": agent_steps as f64 / secs,
        "cpu_seconds": cpu,
        "agent_steps_per_cpu_sec": cpu.filter(|&c| c > 0.0).map(|c| agent_steps as f64 / c),
        "counted": counted,
        "active_share": agent_steps as f64 / (steps as f64 * (envs * k) as f64),
        "bytes_per_agent_step": per_agent as f64 + per_env as f64 / k as f64,
        "state_bytes_per_agent": 4.0 + 16.0 / k as f64,
    });
    let serde_json::Value::Object(line) = line else { unreachable!("json! of an object literal") };
    Ok(line)
}

pub fn run(a: &Args) -> Result<(), CliError> {
    if !(a.seconds.is_finite() && a.seconds > 0.0) {
        return Err(CliError::Input(format!("--seconds must be positive, not {}", a.seconds)));
    }
    if let Some(dir) = &a.sweep.sweep {
        return sweep::run(a, dir);
    }
    if a.memory {
        memory_bench(a.seconds)?;
    }
    let threads = rayon::current_num_threads();
    for &size in &a.sizes {
        for &density in &a.densities {
            for &agents in &a.agents {
                let mut s = Setting { size, density, agents, envs: 0, radius: a.radius };
                let pool = instance_pool(a, &s)?;
                for &envs in &a.envs {
                    s.envs = envs;
                    for &backend in &a.backends {
                        let line = measure_step(a, &s, &pool, backend)?;
                        crate::emit(None, &format!("{}\n", serde_json::Value::Object(line)))?;
                    }
                }
            }
        }
    }
    if a.plans > 0 {
        verify_bench(a, threads)?;
    }
    Ok(())
}

fn verify_bench(a: &Args, threads: usize) -> Result<(), CliError> {
    let insts = generate(
        &GeneratorConfig::default().size(8).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(a.pool).seed(1),
    )
    .map_err(failed)?;
    let pool = InstancePool::new(&insts, Optima::AsStored).map_err(failed)?;
    let max_len = 16;
    let mut batch = PlanBatch::new(3, max_len);
    for n in 0..a.plans {
        let i = n % insts.len();
        let Ok(Plan::Moves(mut plan)) = Plan::from_move_strings(
            &insts[i].optimal.as_ref().expect("generated instances are solved").moves,
        ) else {
            return Err(CliError::Failed("stored plans are move strings".into()));
        };
        // Every fourth plan is perturbed so that failures are verified too.
        if n % 4 == 3 {
            plan[n % 3].reverse();
        }
        for m in &mut plan {
            m.truncate(max_len);
        }
        batch.push(i as u32, &plan).map_err(failed)?;
    }
    let pool = Arc::new(pool);
    for &backend in &a.backends {
        let mut out = vec![VerifyOut::default(); batch.len()];
        let verifier: Box<dyn Verifier> = match backend {
            Backend::Cpu => Box::new(CpuVerifier::new(Arc::clone(&pool))),
            Backend::Gpu => {
                let ctx = shared_gpu_context().map_err(failed)?;
                Box::new(GpuVerifier::new(ctx, Arc::clone(&pool)).map_err(failed)?)
            }
        };
        let (calls, _, secs, _) = timed(a.seconds, || {
            verifier.verify(&batch, &mut out).expect("the batch was built for this pool");
            0
        });
        let valid = out.iter().filter(|o| o.valid == 1).count();
        let line = serde_json::json!({
            "bench": "verify",
            "backend": backend.to_string(),
            "threads": if backend == Backend::Cpu { threads } else { 0 },
            "agents": 3,
            "size": 8,
            "plans": batch.len(),
            "valid_share": valid as f64 / batch.len() as f64,
            "seconds": secs,
            "plans_per_sec": (calls as f64 * batch.len() as f64) / secs,
            "bytes_per_plan": (3 * max_len + 8) as f64,
        });
        crate::emit(None, &format!("{line}\n"))?;
    }
    Ok(())
}
