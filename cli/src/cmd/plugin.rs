//! `floe plugin`: plugin libraries.

use std::path::{Path, PathBuf};

use floe_plugin_host::{load, Abi, LoadFailure};
use serde_json::json;

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PluginCommand {
    /// Load a plugin library and print its plugins' kind, name and version as JSON: one object
    /// for a C plugin, a list for an abi_stable library (which may hold several).
    Inspect {
        /// Path of the shared library.
        path: PathBuf,
    },
}

pub fn run(a: &Args) -> Result<(), CliError> {
    match &a.command {
        PluginCommand::Inspect { path } => inspect(path),
    }
}

fn inspect(path: &Path) -> Result<(), CliError> {
    let lib = load(path).map_err(|e| match e.reason {
        LoadFailure::NotFound => CliError::input(path, "no such file"),
        _ => CliError::Failed(format!("cannot load plugin {e}")),
    })?;
    for s in lib.skipped() {
        eprintln!("floe: {}: skipped {s}", path.display());
    }
    let abi = lib.abi().name();
    let entries: Vec<serde_json::Value> = lib
        .plugins()
        .iter()
        .map(|p| {
            json!({
                "abi": abi,
                "kind": p.kind.name(),
                "name": p.name,
                "version": p.version,
                "description": p.description,
                "capabilities": p.capabilities,
            })
        })
        .collect();
    let out = match (lib.abi(), entries.as_slice()) {
        (Abi::C, [one]) => one.clone(),
        _ => serde_json::Value::Array(entries),
    };
    crate::emit(None, &format!("{out}\n"))
}
