use std::path::PathBuf;

use floe_core::text::parse_answer;
use floe_core::verify::{verify_with_optimum, Verdict};
use floe_core::Plan;

use crate::error::CliError;
use crate::input::{read_instances, read_plans, PlanFormat, PlanInput};
use crate::render::{frame, horizon, positions_at};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Instance file.
    #[arg(long, short = 'i')]
    instance: PathBuf,
    /// Plan to play step by step (one per instance).
    #[arg(long, short = 'p')]
    plan: Option<PathBuf>,
    /// How to read the plan file.
    #[arg(long, value_enum, default_value_t = PlanFormat::Auto)]
    format: PlanFormat,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let instances = read_instances(&a.instance)?;
    let plans = match &a.plan {
        Some(p) => {
            let plans = read_plans(p, a.format)?;
            if plans.len() != instances.len() {
                return Err(CliError::input(
                    p,
                    format!(
                        "{} for {}",
                        floe_core::text::count(plans.len() as u64, "plan", "plans"),
                        floe_core::text::count(instances.len() as u64, "instance", "instances")
                    ),
                ));
            }
            plans.into_iter().map(Some).collect()
        }
        None => instances.iter().map(|_| None).collect::<Vec<_>>(),
    };
    let mut out = String::new();
    for (inst, plan) in instances.iter().zip(plans) {
        if let Some(id) = &inst.id {
            out.push_str(&format!("instance {id}\n"));
        }
        out.push_str(&format!(
            "{}x{} map, {} ('.' frozen, 'H' hole, '*' goal, digits agents)\n",
            inst.grid.height(),
            inst.grid.width(),
            floe_core::text::count(inst.num_agents() as u64, "agent", "agents")
        ));
        for (i, ag) in inst.agents.iter().enumerate() {
            out.push_str(&format!("agent {i}: {} -> {}\n", ag.start, ag.goal));
        }
        let starts: Vec<(i64, i64)> =
            inst.agents.iter().map(|g| (i64::from(g.start.row), i64::from(g.start.col))).collect();
        let plan: Option<Result<Plan, String>> = plan.map(|p| match p {
            PlanInput::Parsed(p) => Ok(p),
            PlanInput::Text(t) => parse_answer(&t, inst).map_err(|e| e.to_string()),
        });
        match plan {
            None => out.push_str(&frame(inst, &starts)),
            Some(Err(e)) => {
                out.push_str(&frame(inst, &starts));
                out.push_str(&format!("the answer cannot be read: {e}\n"));
            }
            Some(Ok(plan)) => {
                let v: Verdict = verify_with_optimum(inst, &plan, floe_core::solver::optimum(inst));
                let last = v.failure.as_ref().and_then(|f| f.time).map_or(horizon(&plan), |t| t as usize);
                if plan.num_agents() == inst.num_agents() {
                    for t in 0..=last {
                        out.push_str(&format!("t = {t}\n{}", frame(inst, &positions_at(inst, &plan, t))));
                    }
                }
                match &v.failure {
                    Some(f) => out.push_str(&format!("INVALID: {} ({})\n", f.kind, f.detail)),
                    None => out.push_str(&format!(
                        "valid, sum of costs {}, makespan {}{}\n",
                        v.soc.unwrap_or(0),
                        v.makespan.unwrap_or(0),
                        match v.optimal_soc {
                            Some(o) if v.optimal => format!(" (optimal: {o})"),
                            Some(o) => format!(" (optimum is {o})"),
                            None => String::new(),
                        }
                    )),
                }
            }
        }
        out.push('\n');
    }
    crate::emit(None, &out)
}
