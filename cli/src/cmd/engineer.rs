//! `floe engineer`: what the environment engineer of a run was given and answered, round by
//! round (the files in `<run>/engineer/round-<r>/`, read through floe-rounds' [`RunFolder`],
//! which writes them); with `--ask`, the same context sent again to a chosen engineer, for
//! inspection (nothing is written). [`EngineerFlags`] are the engineer flags of this command,
//! `floe train` and `floe experiment`, declared once.

use std::io::Read;
use std::path::{Path, PathBuf};

use floe_plugin_host::{PluginError, PluginSpec};
use floe_plugin_registry::{self as registry, RegistryError};
use floe_rounds::RunFolder;

use crate::error::CliError;

/// `--engineer-timeout`'s value: a positive, finite number of seconds.
///
/// # Errors
/// Anything else, in words (clap names the flag).
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err("must be a positive number of seconds".into()),
    }
}

/// The engineer flags of `floe train`, `floe experiment` and `floe engineer --ask`, declared
/// here once and flattened into each command under a heading that names the engineer they start
/// from (the configuration's, the `engineer` contender's, --ask's). Each overrides one field of
/// that engineer and keeps the others: `--engineer-endpoint` sets `base_url` of an `endpoint`
/// engineer (its `timeout_s`, `retries`, `api_key_env`, … stay), `--engineer-model` its
/// `model`, `--engineer-timeout` its `timeout_s`, `--engineer-gguf` the `model` of an
/// `embedded` one. Over no engineer or one of another kind, `--engineer-endpoint` and
/// `--engineer-gguf` start a new one from that kind's defaults ([`EngineerFlags::apply`]).
#[derive(Debug, Default, Clone, clap::Args)]
pub struct EngineerFlags {
    /// Use an OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8080/v1) as the
    /// environment engineer: sets `base_url` of an `endpoint` engineer, keeping its other
    /// parameters (`timeout_s`, `retries`, `api_key_env`, …); no engineer, or one of another
    /// kind, becomes the `endpoint` engineer with its defaults: the key read from
    /// $OPENAI_API_KEY, 120 s a request.
    #[arg(id = "engineer_endpoint", long = "engineer-endpoint", value_name = "URL")]
    pub endpoint: Option<String>,
    /// The model name the endpoint expects: sets `model` of the `endpoint` engineer
    /// [default: the engineer's, else `default`].
    #[arg(id = "engineer_model", long = "engineer-model", value_name = "NAME")]
    pub model: Option<String>,
    /// Seconds one request to the endpoint may take, connecting and reading included: sets
    /// `timeout_s` of the `endpoint` engineer [default: the engineer's, else 120]. A request
    /// that times out is tried again (`http_retries`, 3) and the engineer asks again on no reply
    /// (`retries`, 2): with those defaults a silent server holds a design up to 12 times this
    /// long.
    #[arg(id = "engineer_timeout", long = "engineer-timeout", value_name = "SECONDS", value_parser = seconds)]
    pub timeout_s: Option<f64>,
    /// Use this GGUF chat model, run in process by llama.cpp, as the environment engineer: sets
    /// `model` of an `embedded` engineer, keeping its other parameters; no engineer, or one of
    /// another kind, becomes the `embedded` engineer with `model` set to it.
    #[arg(
        id = "engineer_gguf",
        long = "engineer-gguf",
        value_name = "FILE",
        conflicts_with = "engineer_endpoint"
    )]
    pub gguf: Option<PathBuf>,
}

/// Whether `spec` is the built-in engineer `name`.
fn is_builtin(spec: Option<&PluginSpec>, name: &str) -> bool {
    spec.is_some_and(|s| s.name == name && s.library.is_none())
}

/// An engineer spec in words, for a message.
fn describe(spec: Option<&PluginSpec>) -> String {
    match spec {
        Some(PluginSpec { name, library: Some(lib), .. }) => format!("`{name}` from {}", lib.display()),
        Some(s) => format!("`{}`", s.name),
        None => "none".into(),
    }
}

/// Sets one parameter of a spec (`null` parameters become an object).
fn set(spec: &mut PluginSpec, key: &str, value: serde_json::Value) -> Result<(), CliError> {
    if spec.params.is_null() {
        spec.params = serde_json::json!({});
    }
    let Some(params) = spec.params.as_object_mut() else {
        return Err(CliError::Input(format!(
            "the engineer `{}`: its params are {}, not a JSON object of parameters",
            spec.name, spec.params
        )));
    };
    params.insert(key.into(), value);
    Ok(())
}

impl EngineerFlags {
    /// `base` (the engineer the command starts from, if any) with the flags applied.
    ///
    /// # Errors
    /// [`CliError::Input`] naming the flag: a URL the `endpoint` engineer refuses, an empty
    /// model, a file that is not GGUF, or a flag the resulting engineer has no field for.
    pub fn apply(&self, base: Option<PluginSpec>) -> Result<Option<PluginSpec>, CliError> {
        let mut spec = base;
        if let Some(path) = &self.gguf {
            let made = gguf_spec(path)?;
            spec = Some(match spec {
                Some(mut s) if is_builtin(Some(&s), "embedded") => {
                    set(&mut s, "model", made.params["model"].clone())?;
                    s
                }
                _ => made,
            });
        }
        if let Some(url) = self.endpoint.as_deref() {
            check_endpoint(url)?;
            let mut s = match spec {
                Some(s) if is_builtin(Some(&s), "endpoint") => s,
                _ => PluginSpec::builtin("endpoint"),
            };
            set(&mut s, "base_url", url.into())?;
            if s.params.get("model").is_none() && self.model.is_none() {
                set(&mut s, "model", "default".into())?;
            }
            spec = Some(s);
        }
        let endpoint = is_builtin(spec.as_ref(), "endpoint");
        if let Some(model) = self.model.as_deref() {
            if model.is_empty() {
                return Err(CliError::Input(
                    "--engineer-model: empty; give the model name the server expects".into(),
                ));
            }
            if !endpoint {
                return Err(CliError::Input(format!(
                    "--engineer-model {model}: names the model of the `endpoint` engineer, but the engineer \
                     here is {}; give --engineer-endpoint URL too",
                    describe(spec.as_ref())
                )));
            }
        }
        if let (Some(t), false) = (self.timeout_s, endpoint) {
            return Err(CliError::Input(format!(
                "--engineer-timeout {t}: only the `endpoint` engineer waits on a server, but the engineer \
                 here is {}; give --engineer-endpoint URL too",
                describe(spec.as_ref())
            )));
        }
        if let Some(s) = spec.as_mut().filter(|_| endpoint) {
            if let Some(model) = self.model.as_deref() {
                set(s, "model", model.into())?;
            }
            if let Some(t) = self.timeout_s {
                set(s, "timeout_s", t.into())?;
            }
        }
        Ok(spec)
    }
}

/// Checks `--engineer-endpoint`'s URL alone, by the `endpoint` engineer's own rules, so that a
/// URL it refuses is blamed on the flag.
fn check_endpoint(url: &str) -> Result<(), CliError> {
    let alone = PluginSpec {
        name: "endpoint".into(),
        params: serde_json::json!({"base_url": url, "model": "default"}),
        library: None,
    };
    registry::engineer(&alone).map(drop).map_err(|e| {
        let why = match &e {
            RegistryError::Plugin { source, .. } => source.message().to_string(),
            other => other.to_string(),
        };
        CliError::Input(format!("--engineer-endpoint {url}: {why}"))
    })
}

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
    #[arg(long, default_value = "embedded", conflicts_with = "engineer_gguf")]
    engineer: String,
    /// With --ask: its parameters as JSON (for `endpoint`: base_url, model, api_key_env, …);
    /// with --engineer-endpoint or --engineer-gguf, those of the engineer that flag names, each
    /// engineer flag overriding one of them.
    #[arg(long)]
    engineer_params: Option<String>,
    #[command(
        flatten,
        next_help_heading = "Engineer flags, with --ask, over --engineer and --engineer-params"
    )]
    flags: EngineerFlags,
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

/// The engineer spec that `--ask` uses: --engineer (or the kind the flags name) with
/// --engineer-params, the flags overriding single parameters.
fn spec(a: &Args) -> Result<PluginSpec, CliError> {
    let params: serde_json::Value = match &a.engineer_params {
        Some(p) => serde_json::from_str(p).map_err(|e| CliError::Input(format!("--engineer-params: {e}")))?,
        None => serde_json::Value::Null,
    };
    let name = match (&a.flags.endpoint, &a.flags.gguf) {
        (Some(_), _) => "endpoint",
        (None, Some(_)) => "embedded",
        (None, None) => &a.engineer,
    };
    let base = PluginSpec { name: name.into(), params, library: None };
    Ok(a.flags.apply(Some(base))?.unwrap_or_else(|| PluginSpec::builtin(name)))
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let spec = if a.ask { Some(spec(a)?) } else { None };
    let folder = RunFolder::new(&a.run);
    let all = folder.engineer_rounds().map_err(|e| CliError::Input(e.to_string()))?;
    if all.is_empty() {
        return Err(CliError::Input(format!("{}: no rounds recorded", folder.join("engineer").display())));
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
    for &r in &chosen {
        out.push_str(&format!("# Round {r} ({})\n\n", folder.engineer_dir(r).display()));
        if a.ask {
            continue;
        }
        for (f, text) in folder.engineer_files(r) {
            out.push_str(&format!("## {f}\n\n{}\n", text.trim_end()));
            out.push('\n');
        }
    }
    if let Some(spec) = spec {
        let r = chosen[0];
        let (context, limits) = folder.engineer_request(r).map_err(|e| {
            CliError::Input(format!("--ask needs the context and limits round {r}'s engineer was given: {e}"))
        })?;
        let mut engineer = registry::engineer(&spec).map_err(|e| CliError::Input(e.to_string()))?;
        let t0 = std::time::Instant::now();
        let asked = engineer.design(&context, &limits);
        out.push_str(&format!("Asked `{}` again ({:.1} s).\n\n", spec.name, t0.elapsed().as_secs_f64()));
        let raw_replies = |raw: &[String], out: &mut String| {
            for (i, raw) in raw.iter().enumerate() {
                out.push_str(&format!("## raw reply {}\n\n{}\n\n", i + 1, raw.trim_end()));
            }
        };
        let reply = match asked {
            Ok(reply) => reply,
            Err(e) => {
                // The replies it gave up on are shown before the reason.
                if let PluginError::NoUsableReply { raw, .. } = &e {
                    raw_replies(raw, &mut out);
                    crate::emit(None, &out)?;
                }
                return Err(CliError::Failed(format!("{}: {e}", spec.name)));
            }
        };
        raw_replies(&reply.raw, &mut out);
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
