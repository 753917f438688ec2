//! # floe-llm
//!
//! Environment engineers that are language models: [`LlmEngineer`] turns any [`Complete`]
//! (something that answers a chat request with text) into a [`floe_plugin_api::EnvEngineer`].
//! It asks the model with the context and the reply's JSON schema and GBNF grammar derived from
//! the design limits it is given (the same limits the context states), reads each reply
//! strictly ([`Adoption::parse_reply`]: JSON, exact fields, values clamped with reasons),
//! asks again on a reply that is not usable, and returns the chosen reply with every raw reply
//! and note. After `retries` more attempts without a usable reply (or at once, when the model
//! says that asking again cannot help: [`NoReply::again`]) it returns
//! [`PluginError::NoUsableReply`], which lists why each attempt failed and holds every raw reply
//! in order; the trainer then keeps the previous configuration and files the replies.
//!
//! Two models:
//! - [`endpoint::Endpoint`] (`endpoint`): any OpenAI-compatible chat-completions server (vLLM,
//!   llama.cpp's server, Ollama, hosted APIs), with its API key from an environment variable,
//!   timeouts, retries with exponential backoff, `response_format` with the JSON schema, and
//!   optionally several proposals a round, of which the one needing the fewest corrections is
//!   kept (Eureka's several samples, with a rule that needs no training run).
//! - `embedded::Embedded` (`embedded`, feature `embedded`): a GGUF chat model run in process
//!   by llama.cpp on one thread, its tokens constrained by the grammar, deterministic for a seed
//!   and a context. The default model is SmolLM2-135M-Instruct (Q8_0), which
//!   `scripts/setup.sh` fetches and rewrites.
//!
//! [`new_engineer`] makes either from its name and parameters, for the plugin registry.

#[cfg(feature = "embedded")]
pub mod embedded;
pub mod endpoint;

use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{EngineerReply, EnvEngineer, PluginError};
use floe_rounds::grammar::ReplyFormat;
use floe_rounds::limits::Adoption;

/// The names [`new_engineer`] knows.
pub const NAMES: [&str; 2] = ["endpoint", "embedded"];

/// The system message of every request.
pub const SYSTEM: &str = "You design the training environment of a reinforcement-learning run. \
You reply with one JSON object and nothing else.";

/// One request to a chat model.
#[derive(Debug, Clone)]
pub struct Request {
    /// The system message.
    pub system: String,
    /// The user message: the context.
    pub user: String,
    /// The reply's JSON schema (for `response_format`).
    pub schema: serde_json::Value,
    /// The reply's GBNF grammar (for llama.cpp).
    pub grammar: String,
    /// A seed for sampling, from the engineer's seed, the context and the attempt.
    pub seed: u64,
}

/// A model's answer to one request.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    /// The replies (several with proposals).
    pub replies: Vec<String>,
    /// What went wrong on the way and was retried (a timeout, HTTP 429, …).
    pub notes: Vec<String>,
}

/// Why a model gave no reply to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoReply {
    /// What kept it from answering.
    pub message: String,
    /// Whether another request may fare better. `false` when asking again would fail the same
    /// way at the same cost (a response larger than the client reads): the engineer stops.
    pub again: bool,
}

impl NoReply {
    /// A failure that asking again cannot mend.
    #[must_use]
    pub fn last(message: impl Into<String>) -> Self {
        NoReply { message: message.into(), again: false }
    }
}

impl From<String> for NoReply {
    fn from(message: String) -> Self {
        NoReply { message, again: true }
    }
}

impl From<&str> for NoReply {
    fn from(message: &str) -> Self {
        NoReply::from(message.to_string())
    }
}

impl std::fmt::Display for NoReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A chat model: one request in, one or more replies (proposals) out.
pub trait Complete: Send {
    /// The model's replies to a request.
    ///
    /// # Errors
    /// Whatever kept the model from answering (after the model's own retries, if any).
    fn complete(&mut self, request: &Request) -> Result<Completion, NoReply>;
}

/// A language-model engineer.
#[derive(Debug)]
pub struct LlmEngineer<C> {
    model: C,
    retries: u32,
    seed: u64,
}

/// FNV-1a, for a seed that depends on the context.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// The first characters of a reply, for a message.
fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(120).collect();
    if t.len() < text.len() {
        format!("{t:?}…")
    } else {
        format!("{t:?}")
    }
}

impl<C: Complete> LlmEngineer<C> {
    /// An engineer asking `model`, with `retries` more attempts after an unusable reply.
    pub fn new(model: C, retries: u32, seed: u64) -> Self {
        LlmEngineer { model, retries, seed }
    }
}

impl<C: Complete> EnvEngineer for LlmEngineer<C> {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        let mut raw = Vec::new();
        let mut notes = Vec::new();
        let mut attempts = 0;
        for attempt in 0..=self.retries {
            attempts = attempt + 1;
            let request = Request {
                system: SYSTEM.into(),
                user: context.into(),
                schema: limits.json_schema(),
                grammar: limits.gbnf(),
                seed: self.seed ^ fnv(context) ^ u64::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            };
            let replies = match self.model.complete(&request) {
                Ok(c) => {
                    notes.extend(
                        c.notes.into_iter().map(|n| format!("attempt {}: retried: {n}", attempt + 1)),
                    );
                    c.replies
                }
                Err(e) if e.again => {
                    notes.push(format!("attempt {}: no reply: {e}", attempt + 1));
                    continue;
                }
                Err(e) => {
                    notes
                        .push(format!("attempt {}: no reply, and none is asked for again: {e}", attempt + 1));
                    break;
                }
            };
            // Of the usable proposals, the one needing the fewest corrections (the first on ties).
            let mut best: Option<(EngineerReply, Vec<String>)> = None;
            for text in replies {
                match limits.parse_reply(&text) {
                    Ok((reply, clamped)) => {
                        if best.as_ref().is_none_or(|(_, b)| clamped.len() < b.len()) {
                            best = Some((reply, clamped));
                        }
                    }
                    Err(e) => notes.push(format!(
                        "attempt {}: reply {} refused: {e}: {}",
                        attempt + 1,
                        raw.len() + 1,
                        excerpt(&text)
                    )),
                }
                raw.push(text);
            }
            if let Some((mut reply, clamped)) = best {
                notes.extend(clamped.into_iter().map(|n| format!("clamped: {n}")));
                reply.raw = raw;
                reply.notes = notes;
                return Ok(reply);
            }
        }
        Err(PluginError::NoUsableReply {
            message: format!("no usable configuration in {attempts} attempt(s): {}", notes.join("; ")),
            raw,
        })
    }
}

/// Makes the engineer `name` (one of [`NAMES`]) with its parameters (JSON; empty for the
/// defaults); `None` for another name.
#[must_use]
pub fn new_engineer(name: &str, params: &str) -> Option<Result<Box<dyn EnvEngineer>, PluginError>> {
    match name {
        "endpoint" => Some(endpoint::Endpoint::engineer(params)),
        "embedded" => Some(embedded_engineer(params)),
        _ => None,
    }
}

#[cfg(feature = "embedded")]
fn embedded_engineer(params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
    embedded::Embedded::engineer(params)
}

#[cfg(not(feature = "embedded"))]
fn embedded_engineer(_params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
    Err(PluginError::Unsupported(
        "the embedded model: this build has no llama.cpp runtime (build floe with the `embedded` feature, \
         as scripts/setup.sh and the CLI's default build do, or use the `endpoint` engineer)"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scripted(Vec<Result<Vec<String>, String>>);

    impl Complete for Scripted {
        fn complete(&mut self, _: &Request) -> Result<Completion, NoReply> {
            if self.0.is_empty() {
                return Err("no more replies".into());
            }
            self.0.remove(0).map(|replies| Completion { replies, notes: Vec::new() }).map_err(NoReply::from)
        }
    }

    const GOOD: &str = r#"{"rationale": "r", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2, "wait_ratio": 0.5}], "agents": [2]}}"#;

    #[test]
    fn retries_then_keeps_the_proposal_needing_fewest_corrections() {
        let clamped = GOOD.replace("0.2", "0.9");
        let mut e = LlmEngineer::new(
            Scripted(vec![Err("HTTP 500".into()), Ok(vec!["nope".into()]), Ok(vec![clamped, GOOD.into()])]),
            2,
            0,
        );
        let r = e.design("context", &DesignLimits::default()).unwrap();
        assert_eq!(r.config.sizes[0].hole_ratio, 0.2);
        assert_eq!(r.raw.len(), 3);
        assert!(
            r.notes[0].contains("HTTP 500") && r.notes[1].contains("attempt 2: reply 1 refused"),
            "{:?}",
            r.notes
        );
        let mut e = LlmEngineer::new(Scripted(vec![Ok(vec!["{}".into()]), Ok(vec!["x".into()])]), 1, 0);
        let err = e.design("context", &DesignLimits::default()).unwrap_err();
        assert!(err.to_string().contains("no usable configuration in 2 attempt(s)"), "{err}");
        assert!(err.to_string().contains("attempt 2: reply 2 refused"), "{err}");
        // The raw replies travel with the error, in order, unescaped.
        let PluginError::NoUsableReply { raw, .. } = err else { panic!("{err:?}") };
        assert_eq!(raw, ["{}", "x"]);
    }

    /// Answers well, and keeps the requests it was given.
    struct Recording(Vec<Request>);

    impl Complete for Recording {
        fn complete(&mut self, request: &Request) -> Result<Completion, NoReply> {
            self.0.push(request.clone());
            Ok(Completion { replies: vec![GOOD.into()], notes: Vec::new() })
        }
    }

    #[test]
    fn the_model_is_asked_within_the_limits_it_was_given() {
        let limits =
            DesignLimits { max_size: 9, agents: vec![2], max_hole_ratio: 0.3, ..DesignLimits::default() };
        let mut e = LlmEngineer::new(Recording(Vec::new()), 0, 0);
        e.design("context", &limits).unwrap();
        let asked = &e.model.0[0];
        assert_eq!((&asked.schema, &asked.grammar), (&limits.json_schema(), &limits.gbnf()));
        assert_ne!(asked.grammar, DesignLimits::default().gbnf());
    }

    /// Fails once in a way asking again cannot mend, then would answer well.
    struct Hopeless(u32);

    impl Complete for Hopeless {
        fn complete(&mut self, _: &Request) -> Result<Completion, NoReply> {
            self.0 += 1;
            if self.0 == 1 {
                return Err(NoReply::last("far too large"));
            }
            Ok(Completion { replies: vec![GOOD.into()], notes: Vec::new() })
        }
    }

    #[test]
    fn a_failure_that_asking_again_cannot_mend_ends_the_attempts() {
        let mut e = LlmEngineer::new(Hopeless(0), 2, 0);
        let err = e.design("context", &DesignLimits::default()).unwrap_err().to_string();
        assert!(err.contains("no usable configuration in 1 attempt(s)"), "{err}");
        assert!(err.contains("none is asked for again: far too large"), "{err}");
        assert_eq!(e.model.0, 1);
    }
}
