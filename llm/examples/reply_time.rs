//! How long the embedded engineer takes to reply, and what it designs, on an engineer context
//! of the paper's 2-agent shape (maps 3×3 to 10×10, preset V6, assembled as the trainer does):
//!
//! ```sh
//! cargo run --release -p floe-llm --features embedded --example reply_time -- \
//!     [--model FILE.gguf] [--threads N] [--failures large|small[,...]] [--replies K] \
//!     [--temperature T] [--max-tokens N] [--template FILE]
//! ```
//!
//! `--failures large` puts the validation failures after round 0 on the maps from 8×8 up,
//! `small` on 3×3 and 4×4; a list (`large,small`) asks about each context in turn, with one
//! model, so that a later context starts from the state of the prompt they share. `--template`
//! assembles the context from another prompt template (as `rounds.context.template` does).
//! Each reply prints its cost (prompt tokens, those taken from the previous prompt's state,
//! prompt evaluation, generated tokens, tokens/s, sampling, total, and the CPU time of every
//! thread) and the data ratio it gives each map size; its text goes to stderr.

use std::path::PathBuf;

use floe_llm::embedded::{Embedded, EmbeddedParams};
use floe_llm::{Request, SYSTEM};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{History, RoundConfig};
use floe_rounds::context::{ContextInput, ContextOptions};
use floe_rounds::grammar::ReplyFormat;
use floe_rounds::limits::Adoption;

/// Validation results after round 0: (size, valid rate) with failures concentrated on large
/// or on small maps, 48 instances a size.
fn history(failures: &str) -> Result<History, String> {
    let valid: [(u32, f64); 8] = match failures {
        "large" => [(3, 0.96), (4, 0.92), (5, 0.85), (6, 0.75), (7, 0.58), (8, 0.27), (9, 0.15), (10, 0.06)],
        "small" => [(3, 0.21), (4, 0.29), (5, 0.81), (6, 0.83), (7, 0.79), (8, 0.77), (9, 0.75), (10, 0.73)],
        f => return Err(format!("--failures {f}: use large or small")),
    };
    let n = 48u32;
    let results: Vec<serde_json::Value> = valid
        .iter()
        .map(|&(size, v)| {
            let failed = n - (v * f64::from(n)).round() as u32;
            // Conflicts dominate, then holes, then plans that stop short.
            let vertex = failed / 2;
            let hole = failed / 4;
            let edge = failed / 8;
            let short = failed - vertex - hole - edge;
            serde_json::json!({
                "size": size, "valid_rate": v, "optimal_rate": v * 0.8, "instances": n,
                "failures": {"vertex_conflict": vertex, "hole": hole, "edge_conflict": edge, "goal_not_reached": short}
            })
        })
        .collect();
    let h = serde_json::json!({"rounds": [{"round": 0, "config": RoundConfig::round0_default(), "results": results}]});
    History::from_json(&h.to_string()).map_err(|e| e.to_string())
}

struct Args {
    model: Option<PathBuf>,
    threads: i32,
    failures: String,
    replies: u64,
    temperature: f32,
    max_tokens: u32,
    template: Option<PathBuf>,
}

/// CPU seconds of every thread of this process so far (Linux; 0 elsewhere).
fn cpu_s() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 * 1e-9
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        model: None,
        threads: 1,
        failures: "large".into(),
        replies: 3,
        temperature: 0.7,
        max_tokens: EmbeddedParams::default().max_tokens,
        template: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} wants a value"));
        match flag.as_str() {
            "--model" => a.model = Some(value()?.into()),
            "--threads" => a.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--failures" => a.failures = value()?,
            "--replies" => a.replies = value()?.parse().map_err(|e| format!("--replies: {e}"))?,
            "--template" => a.template = Some(value()?.into()),
            "--max-tokens" => a.max_tokens = value()?.parse().map_err(|e| format!("--max-tokens: {e}"))?,
            "--temperature" => a.temperature = value()?.parse().map_err(|e| format!("--temperature: {e}"))?,
            f => return Err(format!("unknown argument {f}")),
        }
    }
    Ok(a)
}

fn main() -> Result<(), String> {
    let a = args()?;
    let limits =
        DesignLimits { min_size: 3, max_size: 10, agents: vec![2], max_sizes: 8, ..DesignLimits::default() };
    let options = ContextOptions { template: a.template.clone(), ..ContextOptions::default() };
    options.validate().map_err(|e| e.to_string())?;
    let mut contexts = Vec::new();
    for failures in a.failures.split(',') {
        let h = history(failures)?;
        let input = ContextInput {
            history: &h,
            round: 1,
            rounds: 3,
            epochs: 1,
            samples: 192,
            previous_rationale: None,
            hyperparameters: serde_json::Value::Null,
            limits: &limits,
        };
        contexts.push((failures.to_string(), options.assemble(&input).map_err(|e| e.to_string())?));
    }
    let params = EmbeddedParams {
        model: a.model,
        threads: a.threads,
        temperature: a.temperature,
        max_tokens: a.max_tokens,
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let mut model = Embedded::new(params).map_err(|e| e.to_string())?;
    println!(
        "model loaded in {:.2} s; contexts of {} bytes; failures on {} maps; {} thread(s)",
        t.elapsed().as_secs_f64(),
        contexts.iter().map(|(_, c)| c.len().to_string()).collect::<Vec<_>>().join(", "),
        a.failures,
        a.threads
    );
    println!("| failures | reply | prompt tokens | reused | prompt eval s | generated tokens | tokens/s | sampling s | total s | CPU s | data ratio by size |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let (schema, grammar) = (limits.json_schema(), limits.gbnf());
    for (failures, context) in &contexts {
        for i in 0..a.replies {
            let request = Request {
                system: SYSTEM.into(),
                user: context.clone(),
                schema: schema.clone(),
                grammar: grammar.clone(),
                seed: i,
            };
            let cpu0 = cpu_s();
            let (text, c) = model.reply(&request)?;
            let cpu = cpu_s() - cpu0;
            let design = match limits.parse_reply(&text) {
                Ok((r, _)) => r
                    .config
                    .sizes
                    .iter()
                    .map(|s| format!("{}: {:.2}", s.size, s.data_ratio))
                    .collect::<Vec<_>>()
                    .join(", "),
                Err(e) => format!("refused: {e}"),
            };
            println!(
                "| {failures} | {} | {} | {} | {:.2} | {} | {:.1} | {:.2} | {:.2} | {cpu:.2} | {design} |",
                i + 1,
                c.prompt_tokens,
                c.reused_tokens,
                c.prompt_s,
                c.generated_tokens,
                c.tokens_per_s(),
                c.sample_s,
                c.total_s()
            );
            eprintln!("reply {}: {text}", i + 1);
        }
    }
    Ok(())
}
