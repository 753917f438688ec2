//! `floe engineer`: what the environment engineer of a run was given and answered, round by
//! round (the files in `<run>/engineer/round-<r>/`); with `--ask`, the same context sent again
//! to a chosen engineer, for inspection (nothing is written). [`gguf_spec`] is the
//! `--engineer-gguf` flag of this command, `floe train` and `floe experiment`.

use std::io::Read;
use std::path::{Path, PathBuf};

use floe_plugin_host::{registry, PluginSpec};

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's output folder (as given to `floe train --out`).
    #[arg(long)]
    run: PathBuf,
    /// Only this round (default: every round the engineer designed; with --ask, the last).
    #[arg(long)]
    round: Option<u32>,
    /// Send the round's context again to an engineer and print its reply.
    #[arg(long)]
    ask: bool,
    /// With --ask: the engineer (a built-in: `embedded`, `endpoint`, `rules`).
    #[arg(long, default_value = "embedded")]
    engineer: String,
    /// With --ask: its parameters as JSON (for `endpoint`: base_url, model, api_key_env, …).
    #[arg(long)]
    engineer_params: Option<String>,
    /// With --ask: an OpenAI-compatible endpoint's base URL (the `endpoint` engineer), e.g.
    /// http://127.0.0.1:8080/v1; its key is read from $OPENAI_API_KEY.
    #[arg(long)]
    engineer_endpoint: Option<String>,
    /// With --engineer-endpoint: the model name.
    #[arg(long, default_value = "default")]
    engineer_model: String,
    /// With --ask: the `embedded` engineer on this GGUF chat model (llama.cpp in process)
    /// instead of the default one; --engineer-params may add its other parameters.
    #[arg(long, conflicts_with_all = ["engineer_endpoint", "engineer"])]
    engineer_gguf: Option<PathBuf>,
}

/// The `embedded` engineer on the GGUF chat model at `path` (`--engineer-gguf`): the file must
/// exist and begin with GGUF's magic; its path is made absolute, so that a run resumed from
/// another folder finds it.
///
/// # Errors
/// [`CliError::Input`] for a file that cannot be read or is not a GGUF file.
pub fn gguf_spec(path: &Path) -> Result<PluginSpec, CliError> {
    let flag = |problem: String| CliError::Input(format!("--engineer-gguf {}: {problem}", path.display()));
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| flag(format!("cannot read the model file: {e}")))?;
    if &magic != b"GGUF" {
        return Err(flag("not a GGUF file (it does not begin with the bytes GGUF)".into()));
    }
    let abs = std::path::absolute(path).map_err(|e| flag(e.to_string()))?;
    Ok(PluginSpec { name: "embedded".into(), params: serde_json::json!({ "model": abs }), library: None })
}

const FILES: [&str; 5] = ["context.md", "reply.txt", "config.json", "rationale.txt", "log.txt"];

fn rounds(dir: &std::path::Path) -> Result<Vec<u32>, CliError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        CliError::Input(format!("{}: {e} (was the run trained with an engineer?)", dir.display()))
    })?;
    let mut r: Vec<u32> =
        entries.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("round-")?.parse().ok()).collect();
    r.sort_unstable();
    Ok(r)
}

/// The engineer spec that `--ask` uses.
fn spec(a: &Args) -> Result<PluginSpec, CliError> {
    if let Some(url) = &a.engineer_endpoint {
        let mut params = serde_json::json!({"base_url": url, "model": a.engineer_model});
        if let Some(p) = &a.engineer_params {
            let extra: serde_json::Value =
                serde_json::from_str(p).map_err(|e| CliError::Input(format!("--engineer-params: {e}")))?;
            if let (Some(o), Some(x)) = (params.as_object_mut(), extra.as_object()) {
                o.extend(x.clone());
            }
        }
        return Ok(PluginSpec { name: "endpoint".into(), params, library: None });
    }
    let params: serde_json::Value = match &a.engineer_params {
        Some(p) => serde_json::from_str(p).map_err(|e| CliError::Input(format!("--engineer-params: {e}")))?,
        None => serde_json::Value::Null,
    };
    if let Some(path) = &a.engineer_gguf {
        let mut spec = gguf_spec(path)?;
        if let (Some(o), Some(x)) = (spec.params.as_object_mut(), params.as_object()) {
            for (k, v) in x.iter().filter(|(k, _)| k.as_str() != "model") {
                o.insert(k.clone(), v.clone());
            }
        }
        return Ok(spec);
    }
    Ok(PluginSpec { name: a.engineer.clone(), params, library: None })
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let spec = if a.ask { Some(spec(a)?) } else { None };
    let dir = a.run.join("engineer");
    let all = rounds(&dir)?;
    if all.is_empty() {
        return Err(CliError::Input(format!("{}: no rounds recorded", dir.display())));
    }
    let chosen: Vec<u32> = match (a.round, a.ask) {
        (Some(r), _) if !all.contains(&r) => {
            return Err(CliError::Input(format!(
                "--round {r}: the engineer designed rounds {all:?} of this run"
            )))
        }
        (Some(r), _) => vec![r],
        (None, true) => vec![*all.last().unwrap_or(&0)],
        (None, false) => all,
    };
    let mut out = String::new();
    for r in &chosen {
        let rd = dir.join(format!("round-{r}"));
        out.push_str(&format!("# Round {r} ({})\n\n", rd.display()));
        if a.ask {
            continue;
        }
        for f in FILES {
            let text = std::fs::read_to_string(rd.join(f)).unwrap_or_else(|e| format!("({e})\n"));
            out.push_str(&format!("## {f}\n\n{}\n", text.trim_end()));
            out.push('\n');
        }
    }
    if let Some(spec) = spec {
        let r = chosen[0];
        let path = dir.join(format!("round-{r}")).join("context.md");
        let context = std::fs::read_to_string(&path).map_err(|e| CliError::input(&path, e))?;
        let mut engineer = registry::engineer(&spec).map_err(|e| CliError::Input(e.to_string()))?;
        let t0 = std::time::Instant::now();
        let reply = engineer.design(&context).map_err(|e| CliError::Failed(format!("{}: {e}", spec.name)))?;
        out.push_str(&format!("Asked `{}` again ({:.1} s).\n\n", spec.name, t0.elapsed().as_secs_f64()));
        for (i, raw) in reply.raw.iter().enumerate() {
            out.push_str(&format!("## raw reply {}\n\n{}\n\n", i + 1, raw.trim_end()));
        }
        out.push_str(&format!(
            "## config\n\n{}\n\n## rationale\n\n{}\n",
            serde_json::to_string_pretty(&reply.config).unwrap_or_default(),
            reply.rationale
        ));
        if !reply.notes.is_empty() {
            out.push_str(&format!("\n## notes\n\n{}\n", reply.notes.join("\n")));
        }
    }
    crate::emit(None, &out)
}
