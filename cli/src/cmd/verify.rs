use std::path::PathBuf;

use floe_core::text::count;
use floe_core::verify::{verify, Answer, Check};
use floe_core::PlanForm;

use crate::error::CliError;
use crate::input::{read_instances, read_plans, PlanFormat, PlanInput};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Instance file (one instance, or JSON Lines with one plan per instance).
    #[arg(long, short = 'i')]
    instance: PathBuf,
    /// Plan file: JSON `{"moves": [...]}` / `{"paths": [...]}` / `["RRD", "UL"]` (JSON Lines for
    /// several instances), or a free-text answer in the paper's format.
    #[arg(long, short = 'p')]
    plan: PathBuf,
    /// How to read the plan file.
    #[arg(long, value_enum, default_value_t = PlanFormat::Auto)]
    format: PlanFormat,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let instances = read_instances(&a.instance)?;
    let plans = read_plans(&a.plan, a.format)?;
    if plans.len() != instances.len() {
        return Err(CliError::Input(format!(
            "{} has {} plans but {} has {} instances",
            a.plan.display(),
            plans.len(),
            a.instance.display(),
            instances.len()
        )));
    }
    let mut out = String::new();
    let mut invalid = Vec::new();
    for (n, (inst, plan)) in instances.iter().zip(&plans).enumerate() {
        let opt = floe_core::solver::optimum(inst);
        let v = match plan {
            PlanInput::Parsed(p) => verify(inst, p, Check::against(opt)),
            PlanInput::Text(t) => verify(inst, Answer::Written(t, PlanForm::Text), Check::against(opt)),
        };
        if let Some(f) = &v.failure {
            invalid.push((n + 1, f.kind));
        }
        out.push_str(&v.to_json_value().to_string());
        out.push('\n');
    }
    crate::emit(None, &out)?;
    // The verdicts are on stdout either way; an invalid plan is a failed check (exit 1).
    match invalid.as_slice() {
        [] => Ok(()),
        [(_, kind)] if plans.len() == 1 => Err(CliError::Failed(format!("the plan is invalid: {kind}"))),
        _ => {
            let which: Vec<String> =
                invalid.iter().map(|(n, kind)| format!("instance {n}: {kind}")).collect();
            Err(CliError::Failed(format!(
                "{} of {} invalid ({})",
                invalid.len(),
                count(plans.len() as u64, "plan is", "plans are"),
                which.join(", ")
            )))
        }
    }
}
