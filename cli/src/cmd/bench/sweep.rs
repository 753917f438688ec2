//! `floe bench --sweep DIR`: the CPU step measured one factor at a time around a base point, as
//! `DIR/sweep.jsonl` and the plot `DIR/sweep.png`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{instance_pool, measure_step, plot, Args, Backend, Setting};
use crate::error::CliError;

#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Sweep (the CPU step, one factor at a time around a base point)")]
pub struct SweepArgs {
    /// Instead of the settings above, vary the batch size, the agents, the map side and the
    /// observation radius one at a time around the base point (--base-*, --radius); write
    /// DIR/sweep.jsonl and DIR/sweep.png. Mode, holes, episode limit, pool and seconds apply.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["sizes", "densities", "agents", "envs", "plans", "steps_per_submit"]
    )]
    pub sweep: Option<PathBuf>,
    /// Base point: map side.
    #[arg(long, default_value_t = 32, requires = "sweep")]
    base_size: u32,
    /// Base point: agents per environment (capped at side²/4 where a map is too small for them).
    #[arg(long, default_value_t = 16, requires = "sweep")]
    base_agents: usize,
    /// Base point: environments per batch.
    #[arg(long, default_value_t = 1024, requires = "sweep")]
    base_envs: usize,
    /// Base point: hole density.
    #[arg(long, default_value_t = 0.2, requires = "sweep")]
    base_density: f64,
    /// Batch sizes to sweep.
    #[arg(long, value_delimiter = ',', requires = "sweep",
          default_values_t = [16usize, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384])]
    sweep_envs: Vec<usize>,
    /// Agent counts to sweep (255 is the engine's largest).
    #[arg(long, value_delimiter = ',', requires = "sweep",
          default_values_t = [1usize, 2, 4, 8, 16, 32, 64, 128, 255])]
    sweep_agents: Vec<usize>,
    /// Map sides to sweep.
    #[arg(long, value_delimiter = ',', requires = "sweep", default_values_t = [8u32, 16, 32, 64, 128, 256])]
    sweep_sizes: Vec<u32>,
    /// Observation radii to sweep.
    #[arg(long, value_delimiter = ',', requires = "sweep", default_values_t = [0u32, 1, 2, 3, 5, 8])]
    sweep_radii: Vec<u32>,
}

/// A factor the sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Factor {
    Envs,
    Agents,
    Size,
    Radius,
}

impl Factor {
    pub(super) const ALL: [Factor; 4] = [Factor::Envs, Factor::Agents, Factor::Size, Factor::Radius];

    /// The field of a step line that holds this factor, and the `sweep` field's value.
    pub(super) fn key(self) -> &'static str {
        match self {
            Factor::Envs => "envs",
            Factor::Agents => "agents",
            Factor::Size => "size",
            Factor::Radius => "radius",
        }
    }

    /// The axis label of the plot.
    pub(super) fn label(self) -> &'static str {
        match self {
            Factor::Envs => "environments per batch",
            Factor::Agents => "agents per environment",
            Factor::Size => "map side (cells)",
            Factor::Radius => "observation radius",
        }
    }

    /// Whether the plot's x axis is log2 (the radius includes 0, so it is linear).
    pub(super) fn log2(self) -> bool {
        self != Factor::Radius
    }

    fn values(self, s: &SweepArgs) -> Vec<u64> {
        match self {
            Factor::Envs => s.sweep_envs.iter().map(|&v| v as u64).collect(),
            Factor::Agents => s.sweep_agents.iter().map(|&v| v as u64).collect(),
            Factor::Size => s.sweep_sizes.iter().map(|&v| u64::from(v)).collect(),
            Factor::Radius => s.sweep_radii.iter().map(|&v| u64::from(v)).collect(),
        }
    }

    /// The base point with this factor set to `v`. The agents are capped at a quarter of the map's
    /// cells, so that a small map still has free cells for distinct starts and goals (an 8×8 map
    /// takes at most 16 agents); the line records the count that ran.
    fn setting(self, base: &Setting, v: u64) -> Setting {
        let mut s = *base;
        match self {
            Factor::Envs => s.envs = v as usize,
            Factor::Agents => s.agents = v as usize,
            Factor::Size => s.size = v as u32,
            Factor::Radius => s.radius = v as u32,
        }
        s.agents = s.agents.min((s.size as usize * s.size as usize / 4).max(1));
        s
    }
}

pub(super) fn run(a: &Args, dir: &Path) -> Result<(), CliError> {
    if a.backends.iter().any(|&b| b != Backend::Cpu) {
        return Err(CliError::Input("--sweep measures the CPU step only: use --backends cpu".into()));
    }
    let sw = &a.sweep;
    for f in Factor::ALL {
        if f.values(sw).is_empty() {
            return Err(CliError::Input(format!("--sweep-{}: no values to sweep", f.key())));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, format!("cannot create: {e}")))?;
    let jsonl = dir.join("sweep.jsonl");
    let file =
        std::fs::File::create(&jsonl).map_err(|e| CliError::input(&jsonl, format!("cannot write: {e}")))?;
    let mut file = std::io::BufWriter::new(file);
    let base = Setting {
        size: sw.base_size,
        density: sw.base_density,
        agents: sw.base_agents,
        envs: sw.base_envs,
        radius: a.radius,
    };
    let mut series = Vec::new();
    for f in Factor::ALL {
        let mut points: Vec<plot::Point> = Vec::new();
        for v in f.values(sw) {
            let s = f.setting(&base, v);
            let pool = instance_pool(a, &s)?;
            let mut line = measure_step(a, &s, &pool, Backend::Cpu)?;
            line.insert("sweep".into(), f.key().into());
            let num = |k: &str| line.get(k).and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN);
            points.push((num(f.key()), num("agent_steps_per_sec"), num("bytes_per_agent_step")));
            let text = format!("{}\n", serde_json::Value::Object(line));
            file.write_all(text.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|e| CliError::input(&jsonl, format!("cannot write: {e}")))?;
            crate::emit(None, &text)?;
        }
        series.push(plot::Column { key: f.key(), label: f.label(), log2: f.log2(), points });
    }
    let title = format!(
        "floe bench --sweep: CPU step, {} thread{}, {} mode, holes {}; base: side {}, density {}, \
         {} agents, {} envs, radius {}, {} observations",
        rayon::current_num_threads(),
        if rayon::current_num_threads() == 1 { "" } else { "s" },
        format!("{:?}", a.mode).to_lowercase(),
        format!("{:?}", a.holes).to_lowercase(),
        base.size,
        base.density,
        base.agents,
        base.envs,
        base.radius,
        a.obs.name(),
    );
    let png = plot::png(&title, &series).map_err(|e| CliError::Failed(format!("drawing sweep.png: {e}")))?;
    let path = dir.join("sweep.png");
    std::fs::write(&path, png).map_err(|e| CliError::input(&path, format!("cannot write: {e}")))?;
    eprintln!("wrote {} and {}", jsonl.display(), path.display());
    Ok(())
}
