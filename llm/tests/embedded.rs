//! The embedded engineer with the real default model (SmolLM2-135M, from `scripts/setup.sh`):
//! a retry that starts from the cached prompt replies exactly as a fresh model does, and so does
//! a new prompt that starts from the blocks it shares with the previous one; a greedy reply is
//! usable, and the longest reply the grammar allows fits in the default `max_tokens`.
#![cfg(feature = "embedded")]

use std::path::PathBuf;

use floe_llm::embedded::{Embedded, EmbeddedParams, DEFAULT_MODEL};
use floe_llm::{Request, SYSTEM};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{History, RoundConfig};
use floe_rounds::context::{ContextInput, ContextOptions, Preset};
use floe_rounds::grammar::ReplyFormat;
use floe_rounds::limits::Adoption;

fn model(temperature: f32) -> Embedded {
    let path =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../third_party/models")).join(DEFAULT_MODEL);
    assert!(
        path.is_file(),
        "{}: the default engineer model is missing: run scripts/setup.sh",
        path.display()
    );
    Embedded::new(EmbeddedParams { model: Some(path), temperature, ..EmbeddedParams::default() })
        .expect("the model loads")
}

/// A short context (module F only, maps 3×3 to 5×5) and its limits.
fn context() -> (String, DesignLimits) {
    context_with(0.9, 0.2)
}

/// The short context with these valid rates on 3×3 and 5×5.
fn context_with(valid3: f64, valid5: f64) -> (String, DesignLimits) {
    let limits =
        DesignLimits { min_size: 3, max_size: 5, agents: vec![2], max_sizes: 3, ..DesignLimits::default() };
    let h = serde_json::json!({"rounds": [{"round": 0, "config": RoundConfig::round0_default(), "results": [
        {"size": 3, "valid_rate": valid3, "optimal_rate": 0.8 * valid3, "instances": 20, "failures": {"hole": 2}},
        {"size": 5, "valid_rate": valid5, "optimal_rate": 0.5 * valid5, "instances": 20, "failures": {"vertex_conflict": 16}}
    ]}]});
    let h = History::from_json(&h.to_string()).unwrap();
    let input = ContextInput {
        history: &h,
        round: 1,
        rounds: 2,
        epochs: 1,
        samples: 64,
        previous_rationale: None,
        hyperparameters: serde_json::Value::Null,
        limits: &limits,
    };
    let text = ContextOptions { preset: Preset::V1, ..ContextOptions::default() }.assemble(&input).unwrap();
    (text, limits)
}

fn request(context: &str, limits: &DesignLimits, seed: u64) -> Request {
    Request {
        system: SYSTEM.into(),
        user: context.into(),
        schema: limits.json_schema(),
        grammar: limits.gbnf(),
        seed,
    }
}

#[test]
fn a_retry_from_the_cached_prompt_replies_as_a_fresh_model_does() {
    let (context, limits) = context();
    let mut warm = model(0.7);
    let (_, first) = warm.reply(&request(&context, &limits, 1)).unwrap();
    let (again, cached) = warm.reply(&request(&context, &limits, 2)).unwrap();
    let (fresh, _) = model(0.7).reply(&request(&context, &limits, 2)).unwrap();
    assert_eq!(again, fresh);
    assert_eq!(cached.prompt_tokens, first.prompt_tokens);
    assert_eq!(cached.reused_tokens, cached.prompt_tokens - 1);
    assert!(cached.generated_tokens > 0 && first.prompt_tokens > 100, "{first:?} {cached:?}");
}

#[test]
fn a_prompt_that_starts_from_the_shared_blocks_replies_as_a_fresh_model_does() {
    // The longer context first, so that the cached state is longer than the next prompt.
    let (longer, limits) = context_with(0.125, 0.0625);
    let (shorter, _) = context_with(0.5, 0.2);
    assert_ne!(longer.len(), shorter.len());
    let mut warm = model(0.7);
    let (_, first) = warm.reply(&request(&longer, &limits, 1)).unwrap();
    assert_eq!(first.reused_tokens, 0);
    let (text, timing) = warm.reply(&request(&shorter, &limits, 1)).unwrap();
    assert!(timing.reused_tokens > 0 && timing.reused_tokens < timing.prompt_tokens, "{first:?} {timing:?}");
    let (fresh, cold) = model(0.7).reply(&request(&shorter, &limits, 1)).unwrap();
    assert_eq!(cold.reused_tokens, 0);
    assert_eq!(text, fresh);
    // And back: the longer context from the shorter one's state.
    let (back, _) = warm.reply(&request(&longer, &limits, 3)).unwrap();
    let (fresh, _) = model(0.7).reply(&request(&longer, &limits, 3)).unwrap();
    assert_eq!(back, fresh);
}

#[test]
fn a_greedy_reply_is_usable() {
    let (context, limits) = context();
    let (text, timing) = model(0.0).reply(&request(&context, &limits, 0)).unwrap();
    let (reply, _) = limits.parse_reply(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    reply.config.validate().unwrap();
    assert!(timing.total_s() > 0.0 && timing.tokens_per_s() > 0.0);
}

#[test]
fn the_longest_reply_fits_in_the_default_max_tokens() {
    // Eight map sizes with two-decimal ratios, replay, and a 240-character rationale of digits
    // and signs (worse for a tokenizer than words).
    let rationale: String =
        "3x3 96.0%, 4x4 92.5%; 10x10 6.25% (8: 0.25, 9: 0.31) = ".repeat(5).chars().take(240).collect();
    let sizes: Vec<String> = (3..=10)
        .map(|s| format!(r#"{{"size": {s}, "data_ratio": 0.12, "hole_ratio": 0.25, "wait_ratio": 0.55}}"#))
        .collect();
    let reply = format!(
        r#"{{"rationale": "{rationale}", "config": {{"sizes": [{}], "agents": [2], "replay_fraction": 0.25}}}}"#,
        sizes.join(", ")
    );
    let limits =
        DesignLimits { min_size: 3, max_size: 10, agents: vec![2], max_sizes: 8, ..DesignLimits::default() };
    limits.parse_reply(&reply).unwrap();
    let n = model(0.7).count_tokens(&reply);
    let max = EmbeddedParams::default().max_tokens as usize;
    assert!(n < max, "{n} tokens and the end of the reply do not fit in {max}");
}
