//! Reading instance and plan files, with errors that name the file and the problem.

use std::path::{Path, PathBuf};

use floe_core::instance::parse_instances;
use floe_core::movingai::{parse_map, parse_scenario};
use floe_core::{Instance, Plan, PlanForm};

use crate::error::CliError;

pub fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::input(path, format!("cannot read: {e}")))
}

/// Instances from a JSON or JSON Lines file.
pub fn read_instances(path: &Path) -> Result<Vec<Instance>, CliError> {
    let text = read_text(path)?;
    parse_instances(&text).map_err(|(line, e)| {
        if line == 0 {
            CliError::input(path, e)
        } else {
            CliError::input(path, format!("line {line}: {e}"))
        }
    })
}

/// Where instances come from: a JSON/JSONL file, or a MovingAI map and scenario.
#[derive(Debug, clap::Args)]
pub struct InstanceSource {
    /// Instance file: one JSON object, JSON Lines, or a JSON array.
    #[arg(long, short = 'i', required_unless_present = "map", conflicts_with_all = ["map", "scen"])]
    pub instance: Option<PathBuf>,
    /// MovingAI `.map` file (with --scen and --agents).
    #[arg(long, requires_all = ["scen", "agents"])]
    pub map: Option<PathBuf>,
    /// MovingAI `.scen` file; its first K lines are the agents.
    #[arg(long, requires = "map")]
    pub scen: Option<PathBuf>,
    /// Number of agents to take from the scenario.
    #[arg(long, requires = "map")]
    pub agents: Option<usize>,
}

impl InstanceSource {
    pub fn load(&self) -> Result<Vec<Instance>, CliError> {
        if let Some(p) = &self.instance {
            return read_instances(p);
        }
        let (Some(map), Some(scen), Some(k)) = (&self.map, &self.scen, self.agents) else {
            return Err(CliError::Input("give --instance FILE, or --map M --scen S --agents K".into()));
        };
        let grid = parse_map(&read_text(map)?).map_err(|e| CliError::input(map, e))?;
        let inst = parse_scenario(grid, &read_text(scen)?, k).map_err(|e| CliError::input(scen, e))?;
        Ok(vec![inst])
    }

    pub fn describe(&self) -> String {
        match (&self.instance, &self.scen) {
            (Some(p), _) | (None, Some(p)) => p.display().to_string(),
            _ => "input".into(),
        }
    }
}

/// How a plan file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    /// JSON if the file starts with `{` or `[`, else a text answer.
    Auto,
    /// `{"moves": [...]}`, `{"paths": [...]}` or a bare array `["RRD", "UL"]`, one per line for
    /// several instances.
    Json,
    /// A free-text answer in the paper's format (one instance).
    Text,
}

impl From<PlanFormat> for PlanForm {
    fn from(f: PlanFormat) -> Self {
        match f {
            PlanFormat::Auto => PlanForm::Auto,
            PlanFormat::Json => PlanForm::Json,
            PlanFormat::Text => PlanForm::Text,
        }
    }
}

/// A plan as read from a file: a parsed plan, or a text answer left for the verifier (which
/// reports unreadable answers as `parse_error`).
pub enum PlanInput {
    Parsed(Plan),
    Text(String),
}

/// The plans of a file, read as floe-core's plan reader ([`floe_core::reader`]) reads them: JSON
/// (one document, or JSON Lines with one plan per instance) or one free-text answer.
pub fn read_plans(path: &Path, format: PlanFormat) -> Result<Vec<PlanInput>, CliError> {
    let text = read_text(path)?;
    if PlanForm::from(format).resolve(&text) == PlanForm::Text {
        return Ok(vec![PlanInput::Text(text)]);
    }
    // One JSON document (possibly spread over lines), or JSON Lines.
    if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
        let plan = Plan::from_json(&text).map_err(|e| CliError::input(path, e))?;
        return Ok(vec![PlanInput::Parsed(plan)]);
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let plan =
            Plan::from_json(line).map_err(|e| CliError::input(path, format!("line {}: {e}", n + 1)))?;
        out.push(PlanInput::Parsed(plan));
    }
    if out.is_empty() {
        return Err(CliError::input(path, "no plan in the file"));
    }
    Ok(out)
}
