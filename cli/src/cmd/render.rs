//! `floe render`: an instance's grid, and a plan step by step, as text (the default) or drawn:
//! `--png FILE` (the whole plan in one picture) and `--gif FILE` (one frame per time step and a
//! held last frame); see `crate::render::board`.

use std::path::{Path, PathBuf};

use floe_core::text::parse_answer;
use floe_core::verify::{verify, Check, Verdict};
use floe_core::{Instance, Plan};

use crate::error::CliError;
use crate::input::{read_instances, read_plans, PlanFormat, PlanInput};
use crate::render::board::{Board, Shown};
use crate::render::{frame, paths, positions_at};

#[derive(Debug, clap::Args)]
#[command(after_help = "Pictures (--png, --gif): the grid, frozen cells pale blue, holes dark, with \
a narrow margin (a cell wide when an agent leaves the grid, to show it there); per agent a \
colour: its goal a square frame, its start a ring, the agent a numbered disc, its way a line. The \
GIF plays one frame per time step (0.7 s each) up to the plan's end or its first failure, then \
holds the whole plan (3 s) and loops; the PNG is that held picture. A failure is marked in red \
where and when it happens (a cross on a hole, an off-grid or illegal step; the two cells of a \
swap; the shared cell of a vertex conflict; an agent's end and its goal for goal_not_reached). \
With a picture flag the text frames are not printed; one line on stderr says what was written.")]
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
    /// Draw the instance and the whole plan in one PNG picture: every agent's path in its colour
    /// over the grid, the agents where they stand at the end (or at the first failure, marked in
    /// red), the verdict above. Without --plan, the instance alone.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Animate the plan as a looping GIF: one frame per time step, then the whole plan held (as
    /// --png draws it). Without --plan, the instance alone (one frame).
    #[arg(long, value_name = "FILE")]
    gif: Option<PathBuf>,
    /// With --png / --gif: which instance of the file to draw, numbered from 1 (a picture shows
    /// one; needed when the file holds several).
    #[arg(long, value_name = "N")]
    nth: Option<usize>,
}

/// A plan as read for one instance: a plan, or the reason its answer cannot be read.
fn parsed(plan: PlanInput, inst: &Instance) -> Result<Plan, String> {
    match plan {
        PlanInput::Parsed(p) => Ok(p),
        PlanInput::Text(t) => parse_answer(&t, inst).map_err(|e| e.to_string()),
    }
}

/// Writes the pictures `a` asks for of one instance and its plan, with one line on stderr.
fn draw(a: &Args, inst: &Instance, plan: Option<Result<Plan, String>>) -> Result<(), CliError> {
    let verdict: Option<Verdict> = match &plan {
        Some(Ok(p)) => Some(verify(inst, p, Check::against(floe_core::solver::optimum(inst)))),
        _ => None,
    };
    let shown = match (&plan, &verdict) {
        (Some(Ok(p)), Some(v)) => Shown::Plan(p, v),
        (Some(Err(why)), _) => Shown::Unreadable(why),
        _ => Shown::Alone,
    };
    let board = Board::new(inst, shown);
    let (w, h) = board.size();
    let failed = |what: &str, path: &Path, e: String| {
        CliError::Failed(format!("{}: drawing the {what}: {e}", path.display()))
    };
    let write = |path: &Path, bytes: Vec<u8>| {
        std::fs::write(path, bytes).map_err(|e| CliError::input(path, format!("cannot write: {e}")))
    };
    let mut wrote = Vec::new();
    if let Some(p) = &a.png {
        write(p, board.png().map_err(|e| failed("PNG", p, e))?)?;
        wrote.push(p.display().to_string());
    }
    if let Some(p) = &a.gif {
        write(p, board.gif().map_err(|e| failed("GIF", p, e))?)?;
        let frames = board.frames();
        wrote.push(if frames == 1 {
            format!("{} (1 frame)", p.display())
        } else {
            format!("{} ({frames} frames: t = 0 to {} and the hold)", p.display(), board.last_step())
        });
    }
    let what = match (&plan, &verdict) {
        (None, _) => "the instance alone".to_string(),
        (Some(Err(e)), _) => format!("the answer cannot be read: {e}"),
        (Some(Ok(_)), Some(v)) => match &v.failure {
            None => "a valid plan".to_string(),
            Some(f) => match f.time {
                Some(t) => format!("an invalid plan: {} at t = {t}", f.kind),
                None => format!("an invalid plan: {}", f.kind),
            },
        },
        (Some(Ok(_)), None) => String::new(),
    };
    eprintln!("wrote {}, {w}×{h} pixels: {what}", wrote.join(" and "));
    Ok(())
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
    if a.png.is_some() || a.gif.is_some() {
        let n = match (a.nth, instances.len()) {
            (Some(n), len) if n == 0 || n > len => {
                return Err(CliError::Input(format!(
                    "--nth {n}: {} holds {}, numbered from 1",
                    a.instance.display(),
                    floe_core::text::count(len as u64, "instance", "instances")
                )))
            }
            (Some(n), _) => n,
            (None, 1) => 1,
            (None, len) => {
                return Err(CliError::Input(format!(
                    "{} holds {len} instances and a picture draws one: choose it with --nth N (1 to {len})",
                    a.instance.display()
                )))
            }
        };
        let inst = &instances[n - 1];
        let plan = plans.into_iter().nth(n - 1).flatten().map(|p| parsed(p, inst));
        return draw(a, inst, plan);
    }
    if a.nth.is_some() {
        return Err(CliError::Input(
            "--nth chooses the instance a picture draws: give --png or --gif".into(),
        ));
    }
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
        let plan: Option<Result<Plan, String>> = plan.map(|p| parsed(p, inst));
        match plan {
            None => out.push_str(&frame(inst, &starts)),
            Some(Err(e)) => {
                out.push_str(&frame(inst, &starts));
                out.push_str(&format!("the answer cannot be read: {e}\n"));
            }
            Some(Ok(plan)) => {
                let v: Verdict = verify(inst, &plan, Check::against(floe_core::solver::optimum(inst)));
                let last = v.failure.as_ref().and_then(|f| f.time).map_or(plan.horizon(), |t| t as usize);
                if plan.num_agents() == inst.num_agents() {
                    let paths = paths(inst, &plan);
                    for t in 0..=last {
                        out.push_str(&format!("t = {t}\n{}", frame(inst, &positions_at(&paths, t))));
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
