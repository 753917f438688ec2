//! The native half of the `floe` Python package (`floe._floe`): instances and the CLI's commands,
//! batched verification and reward plugins, the batched engine over numpy arrays and the level
//! samplers around its steps, the call between rounds (with a Python model as the environment
//! engineer), the validation set and its count as `floe train` makes them, and work in shards
//! (for `floe.ray`). The Python half
//! (`python/floe/`) builds the Gymnasium, PettingZoo, TRL, verl and Ray interfaces on it.
//!
//! Every error crosses as a Python exception of `floe` (`floe.BadInput`, …) with the Rust
//! message; long work runs with the GIL released.

mod batch;
mod commands;
mod convert;
mod driver;
mod env;
mod errors;
mod evaluate;
mod experiment;
mod folder;
mod instances;
mod levels;
mod records;
mod rounds;
mod settings;
mod shards;
mod trainee;
mod validation;
mod verl;

use pyo3::prelude::*;

#[pymodule]
fn _floe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<instances::Instance>()?;
    m.add_function(wrap_pyfunction!(instances::generate, m)?)?;
    m.add_function(wrap_pyfunction!(instances::suite, m)?)?;
    m.add_function(wrap_pyfunction!(instances::random_instances, m)?)?;
    m.add_function(wrap_pyfunction!(instances::solve, m)?)?;
    m.add_function(wrap_pyfunction!(instances::mutate, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::cvar, m)?)?;
    m.add_function(wrap_pyfunction!(instances::verify, m)?)?;
    m.add_function(wrap_pyfunction!(instances::prompt, m)?)?;
    m.add_function(wrap_pyfunction!(instances::parse_answer, m)?)?;
    m.add_function(wrap_pyfunction!(instances::write_answer, m)?)?;
    m.add_function(wrap_pyfunction!(instances::read_instances, m)?)?;
    m.add_function(wrap_pyfunction!(instances::write_instances, m)?)?;
    m.add_function(wrap_pyfunction!(batch::verify_batch, m)?)?;
    m.add_class::<batch::Reward>()?;
    m.add_class::<env::Engine>()?;
    m.add_function(wrap_pyfunction!(env::unpack_bits, m)?)?;
    m.add_class::<levels::LevelSampler>()?;
    // The driver's earlier name, kept for code (and pickles) that use it.
    m.add("LevelSampler", m.getattr("Levels")?)?;
    m.add_class::<records::LevelDecision>()?;
    // The columns of the engine's `info` rows and of `Engine.levels()`'s, in order.
    m.add("INFO_FIELDS", pyo3::types::PyTuple::new(m.py(), records::INFO_FIELDS)?)?;
    m.add("LEVEL_FIELDS", pyo3::types::PyTuple::new(m.py(), records::LEVEL_FIELDS)?)?;
    m.add_class::<rounds::Curriculum>()?;
    m.add_class::<rounds::Engineer>()?;
    m.add_class::<settings::RunSettings>()?;
    m.add_function(wrap_pyfunction!(rounds::round_instances, m)?)?;
    m.add_function(wrap_pyfunction!(rounds::engineer_context, m)?)?;
    m.add_function(wrap_pyfunction!(rounds::round0_config, m)?)?;
    m.add_function(wrap_pyfunction!(driver::drive_rounds, m)?)?;
    m.add_function(wrap_pyfunction!(driver::round_seed, m)?)?;
    m.add_function(wrap_pyfunction!(driver::warm_start_seed, m)?)?;
    m.add_function(wrap_pyfunction!(driver::trainer_seed, m)?)?;
    m.add_function(wrap_pyfunction!(driver::default_reward, m)?)?;
    m.add_function(wrap_pyfunction!(experiment::experiment, m)?)?;
    m.add_class::<experiment::Contender>()?;
    m.add_function(wrap_pyfunction!(commands::command_line, m)?)?;
    m.add_function(wrap_pyfunction!(verl::read_verl_config, m)?)?;
    m.add_function(wrap_pyfunction!(verl::verl_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(verl::hydra_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(experiment::paired_difference, m)?)?;
    m.add_function(wrap_pyfunction!(folder::run_record, m)?)?;
    m.add_function(wrap_pyfunction!(folder::run_state, m)?)?;
    m.add_function(wrap_pyfunction!(folder::model_folder, m)?)?;
    m.add_function(wrap_pyfunction!(folder::trainer_folder, m)?)?;
    m.add_function(wrap_pyfunction!(folder::resume_model, m)?)?;
    m.add_function(wrap_pyfunction!(shards::generate_slots, m)?)?;
    m.add_function(wrap_pyfunction!(shards::suite_cells, m)?)?;
    m.add_function(wrap_pyfunction!(shards::round_configs, m)?)?;
    m.add_function(wrap_pyfunction!(shards::verdict_lines, m)?)?;
    // The failure kinds' names in code order (a verdict's `failure` code n is the n-th, from 1).
    m.add("FAILURE_KINDS", floe_core::FailureKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>())?;
    m.add_function(wrap_pyfunction!(validation::validation_set, m)?)?;
    m.add_function(wrap_pyfunction!(validation::validation_counts, m)?)?;
    Ok(())
}
