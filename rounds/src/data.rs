//! A run's instances: the generator jobs of a stage generated as one stage of progress, the fixed
//! validation set, and the seeds of every random choice the protocol makes.
//!
//! Every seed is a hash of the run's seed and a tag (and the round, the epoch, the step), so a
//! run computes the same from the same settings whichever trainee drives it, and a resumed run
//! what the uninterrupted one would have.

use std::time::Instant;

use floe_core::generator::generate_with_progress;
use floe_core::progress::{Progress, Silent};
use floe_core::rng::hash;
use floe_core::text::count;
use floe_core::{GeneratorConfig, Instance};
use floe_plugin_api::RoundConfig;

use crate::config::ValidationConfig;
use crate::error::RoundsError;

/// A run's seed when its settings give none (`floe train`'s and every trainee's).
pub const DEFAULT_SEED: u64 = 0;

/// The tag of the warm start's data and batches.
pub const TAG_SFT: u64 = 0x5f7;
/// The tag of a round's data and of its epochs' orders.
pub const TAG_ROUND: u64 = 0x40d;
/// The tag of a GRPO step's sampling.
pub const TAG_GRPO: u64 = 0x6290;
/// The tag of a round's replay request.
pub const TAG_REPLAY: u64 = 0x4e91;

/// The seed of round `r`'s newly generated instances.
#[must_use]
pub fn round_seed(seed: u64, r: u32) -> u64 {
    hash(&[seed, TAG_ROUND, r.into()])
}

/// The seed of the warm start's instances, whichever trainee trains on them.
#[must_use]
pub fn warm_start_seed(seed: u64) -> u64 {
    hash(&[seed, TAG_SFT])
}

/// The seed a trainer of its own (TRL's `seed`, verl's `data.seed`) is given for a stage whose
/// data came from `data_seed` ([`round_seed`], [`warm_start_seed`]): its low 31 bits, which
/// every such trainer accepts.
#[must_use]
pub fn trainer_seed(data_seed: u64) -> u64 {
    data_seed % (1 << 31)
}

/// The warm start's instances (each with its optimal plan): `samples` of `config` from the
/// run's `seed`, as every trainee draws them.
///
/// # Errors
/// The generator's.
pub fn warm_start_data(
    config: &RoundConfig,
    samples: usize,
    seed: u64,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, RoundsError> {
    generate_all(&config.generator_configs(samples, warm_start_seed(seed)), "warm-start data", progress)
}

/// Generates the instances of several generator jobs, in order, as one stage of `progress`.
///
/// # Errors
/// The generator's.
pub fn generate_all(
    jobs: &[GeneratorConfig],
    what: &str,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, RoundsError> {
    let started = Instant::now();
    progress.begin(what, jobs.iter().map(|j| j.count as u64).sum());
    let mut out = Vec::new();
    for j in jobs {
        match generate_with_progress(j, progress) {
            Ok(v) => out.extend(v),
            Err(e) => {
                progress.end(&format!("{what}: stopped: {e}"));
                return Err(e.into());
            }
        }
    }
    progress.end(&format!(
        "{what}: {} with optimal plans in {:.1} s",
        count(out.len() as u64, "instance", "instances"),
        started.elapsed().as_secs_f64()
    ));
    Ok(out)
}

/// The fixed validation set: `per_cell` instances for each agent count × map size, in that
/// order, each cell generated from `hash(seed, agents, size)`.
///
/// # Errors
/// A setting the generator cannot meet.
pub fn validation_set(v: &ValidationConfig) -> Result<Vec<Instance>, RoundsError> {
    validation_set_with_progress(v, &Silent)
}

/// As [`validation_set`], as one stage of `progress`.
///
/// # Errors
/// As [`validation_set`].
pub fn validation_set_with_progress(
    v: &ValidationConfig,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, RoundsError> {
    v.validate()?;
    let mut jobs = Vec::new();
    for &k in &v.agents {
        for &size in &v.sizes {
            let seed = hash(&[v.seed, u64::from(k), u64::from(size)]);
            jobs.push(
                GeneratorConfig::default()
                    .size(size)
                    .agents(k as usize)
                    .hole_ratio(v.hole_ratio)
                    .wait_ratio(v.wait_ratio)
                    .count(v.per_cell)
                    .seed(seed),
            );
        }
    }
    generate_all(&jobs, "validation set", progress)
}
