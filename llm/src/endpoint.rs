//! An OpenAI-compatible chat-completions endpoint as the engineer's model.
//!
//! `POST {base_url}/chat/completions` with the model, the system and user messages,
//! `temperature`, `max_tokens`, `seed`, `n` (the proposals) and, unless turned off,
//! `response_format: {"type": "json_schema", "json_schema": {"name": "round_config", "strict":
//! true, "schema": …}}`. The API key is read from the environment variable `api_key_env` at
//! each request and sent as a bearer token; it is never written to a message, a log or the run
//! folder. A request that times out, cannot connect, breaks off mid-body, returns an envelope
//! that is not JSON, or gets HTTP 429 or 5xx is tried again after `backoff_ms · 2^i`
//! milliseconds (or the server's `Retry-After`, up to 30 s), at most `http_retries` more
//! times; other statuses fail at once. A response body over [`MAX_BODY_BYTES`] (declared so,
//! or found so while reading) is reported as too large and neither tried again nor asked for
//! again by the engineer: another request would download as much for the same end.

use std::time::Duration;

use floe_plugin_api::{parse_params, EnvEngineer, PluginError};
use serde::{Deserialize, Serialize};

use crate::{Complete, Completion, LlmEngineer, NoReply, Request};

/// The largest response body the client reads: 10 MiB. A chat completion of `max_tokens`
/// tokens is a few kilobytes per proposal.
pub const MAX_BODY_BYTES: u64 = 10 * 1024 * 1024;

/// Parameters of the `endpoint` engineer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EndpointParams {
    /// The API's base URL, e.g. `http://127.0.0.1:8080/v1` or `https://api.openai.com/v1`.
    pub base_url: String,
    /// The model name the server expects.
    pub model: String,
    /// The environment variable holding the API key \[`OPENAI_API_KEY`\]; when it is unset or
    /// empty, no key is sent (local servers need none).
    pub api_key_env: String,
    /// Seconds a request may take, connecting and reading included \[120\].
    pub timeout_s: f64,
    /// Retries of a request that failed in transport or with 429 / 5xx \[3\].
    pub http_retries: u32,
    /// The first backoff, doubled on every retry \[500\].
    pub backoff_ms: u64,
    /// New requests after a reply that is not a usable configuration \[2\].
    pub retries: u32,
    /// Replies asked for per request (`n`); the one needing the fewest corrections is kept \[1\].
    pub proposals: u32,
    /// Sampling temperature \[0.7\].
    pub temperature: f64,
    /// Largest reply, in tokens \[600\].
    pub max_tokens: u32,
    /// Send `response_format` with the reply's JSON schema \[true\]; turn off for servers that
    /// reject it.
    pub response_format: bool,
    /// Seed of the requests' `seed` field (mixed with the context and the attempt) \[0\].
    pub seed: u64,
}

impl Default for EndpointParams {
    fn default() -> Self {
        EndpointParams {
            base_url: String::new(),
            model: String::new(),
            api_key_env: "OPENAI_API_KEY".into(),
            timeout_s: 120.0,
            http_retries: 3,
            backoff_ms: 500,
            retries: 2,
            proposals: 1,
            temperature: 0.7,
            max_tokens: 600,
            response_format: true,
            seed: 0,
        }
    }
}

/// The endpoint client.
#[derive(Debug)]
pub struct Endpoint {
    p: EndpointParams,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Envelope {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

/// Whether a failed request is worth another try.
enum Failure {
    /// Another try of the same request may succeed (after this wait, if the server gave one).
    Retry(String, Option<Duration>),
    /// This request fails again; the engineer's next attempt may not.
    Fatal(String),
    /// Any request fails so again, at the same cost: the engineer stops asking.
    Final(String),
}

impl Endpoint {
    /// A client with these parameters.
    ///
    /// # Errors
    /// [`PluginError::Config`] for a missing base URL or model, or values out of range.
    pub fn new(p: EndpointParams) -> Result<Self, PluginError> {
        let bad = |m: &str| Err(PluginError::Config(format!("endpoint: {m}")));
        if !(p.base_url.starts_with("http://") || p.base_url.starts_with("https://")) {
            return bad("base_url must be an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1)");
        }
        if p.model.is_empty() {
            return bad("model must name the server's model");
        }
        if !(p.timeout_s.is_finite() && p.timeout_s > 0.0) || p.proposals == 0 || p.max_tokens == 0 {
            return bad("timeout_s, proposals and max_tokens must be positive");
        }
        if !(p.temperature.is_finite() && p.temperature >= 0.0) {
            return bad("temperature must be a non-negative number");
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs_f64(p.timeout_s)))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Endpoint { p, agent })
    }

    /// The `endpoint` engineer from its parameters (JSON).
    ///
    /// # Errors
    /// Parameters that do not parse or are out of range.
    pub fn engineer(params: &str) -> Result<Box<dyn EnvEngineer>, PluginError> {
        let p: EndpointParams = parse_params(params)?;
        let (retries, seed) = (p.retries, p.seed);
        Ok(Box::new(LlmEngineer::new(Endpoint::new(p)?, retries, seed)))
    }

    fn body(&self, r: &Request) -> serde_json::Value {
        let mut body = serde_json::json!({
            "model": self.p.model,
            "messages": [{"role": "system", "content": r.system}, {"role": "user", "content": r.user}],
            "temperature": self.p.temperature,
            "max_tokens": self.p.max_tokens,
            "seed": r.seed & 0x7fff_ffff,
            "n": self.p.proposals,
        });
        if self.p.response_format {
            body["response_format"] = serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": "round_config", "strict": true, "schema": r.schema},
            });
        }
        body
    }

    fn once(&self, body: &str) -> Result<Vec<String>, Failure> {
        let url = format!("{}/chat/completions", self.p.base_url.trim_end_matches('/'));
        let mut req = self.agent.post(&url).header("Content-Type", "application/json");
        if let Ok(key) = std::env::var(&self.p.api_key_env) {
            if !key.is_empty() {
                req = req.header("Authorization", format!("Bearer {key}"));
            }
        }
        let mut resp = req.send(body).map_err(|e| Failure::Retry(transport(&e), None))?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(30.0)));
        let too_large = |size: String| {
            Failure::Final(format!(
                "HTTP {status}: the response body is {size}, larger than the {} MiB the client reads \
                 (a chat completion is a few KB)",
                MAX_BODY_BYTES >> 20
            ))
        };
        if let Some(n) = resp.body().content_length().filter(|&n| n > MAX_BODY_BYTES) {
            return Err(too_large(format!("{n} bytes by its Content-Length")));
        }
        let text =
            resp.body_mut().with_config().limit(MAX_BODY_BYTES).lossy_utf8(true).read_to_string().map_err(
                |e| match e {
                    ureq::Error::BodyExceedsLimit(_) => too_large("longer than that".into()),
                    e => {
                        Failure::Retry(format!("HTTP {status}, the body broke off: {}", transport(&e)), None)
                    }
                },
            )?;
        if status == 429 || status >= 500 {
            return Err(Failure::Retry(format!("HTTP {status}: {}", crate::excerpt(&text)), retry_after));
        }
        if !(200..300).contains(&status) {
            return Err(Failure::Fatal(format!("HTTP {status}: {}", crate::excerpt(&text))));
        }
        let env: Envelope = serde_json::from_str(&text).map_err(|e| {
            Failure::Retry(
                format!("the response is not a chat completion ({e}): {}", crate::excerpt(&text)),
                None,
            )
        })?;
        let replies: Vec<String> = env.choices.into_iter().filter_map(|c| c.message.content).collect();
        if replies.is_empty() {
            return Err(Failure::Retry("the response has no message content".into(), None));
        }
        Ok(replies)
    }
}

/// A transport error, without anything from the request's headers.
fn transport(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        other => other.to_string(),
    }
}

impl Complete for Endpoint {
    fn complete(&mut self, r: &Request) -> Result<Completion, NoReply> {
        let body = self.body(r).to_string();
        let mut errors = Vec::new();
        for i in 0..=self.p.http_retries {
            match self.once(&body) {
                Ok(replies) => return Ok(Completion { replies, notes: errors }),
                Err(Failure::Final(m)) => {
                    errors.push(m);
                    return Err(NoReply::last(format!(
                        "{} request(s) failed: {}",
                        errors.len(),
                        errors.join("; ")
                    )));
                }
                Err(Failure::Fatal(m)) => {
                    errors.push(m);
                    break;
                }
                Err(Failure::Retry(m, after)) => {
                    errors.push(m);
                    if i < self.p.http_retries {
                        let backoff = Duration::from_millis(self.p.backoff_ms.saturating_mul(1 << i.min(16)));
                        std::thread::sleep(after.unwrap_or(backoff));
                    }
                }
            }
        }
        Err(format!("{} request(s) failed: {}", errors.len(), errors.join("; ")).into())
    }
}
