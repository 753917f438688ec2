//! `rules`: a rule-based environment engineer, the non-LLM baseline of the engineer interface.
//! It reads the history of rounds from its text context, applies the difficulty-scaling rules
//! ([`crate::curriculum::difficulty`]) and explains each change in its rationale.
//!
//! The context must carry the history as JSON ([`History`]): the block fenced with
//! `` ```json history `` (what the trainer appends with `history_json`), else the last fenced
//! block opened with `` ```json ``, or, without one, the whole context. Anything else in the context
//! (guidelines, prose) is ignored: this engineer does not read text, it is there to run the
//! engineer loop without a model and to compare with one.

use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{EngineerReply, EnvEngineer, History, PluginError};

use crate::curriculum::difficulty::{DifficultyParams, DifficultyScaling};

/// The rule-based engineer.
#[derive(Debug, Clone)]
pub struct RulesEngineer {
    rules: DifficultyScaling,
}

impl RulesEngineer {
    /// An engineer applying difficulty scaling with these parameters.
    ///
    /// # Errors
    /// What [`DifficultyScaling::new`] finds.
    pub fn new(p: DifficultyParams) -> Result<Self, floe_plugin_api::ConfigError> {
        Ok(RulesEngineer { rules: DifficultyScaling::new(p)? })
    }
}

/// The history JSON in a context: the last ```` ```json ```` block, else the whole text.
fn history_text(context: &str) -> &str {
    let fence = floe_plugin_api::design::HISTORY_FENCE;
    if let Some(start) = context.rfind(fence) {
        let body = &context[start + fence.len()..];
        return body.find("```").map_or(body, |end| &body[..end]);
    }
    match context.rfind("```json") {
        Some(start) => {
            let body = &context[start + "```json".len()..];
            body.find("```").map_or(body, |end| &body[..end])
        }
        None => context,
    }
}

impl EnvEngineer for RulesEngineer {
    /// The limits are not read: the rules keep to their own bounds, and the caller clamps.
    fn design(&mut self, context: &str, _limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        let history = History::from_json(history_text(context))
            .map_err(|e| PluginError::BadInput(format!("the context carries no valid history JSON: {e}")))?;
        let (config, notes) = self.rules.decide(&history);
        Ok(EngineerReply { config, rationale: notes.join("; "), raw: Vec::new(), notes: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_plugin_api::{RoundRecord, SizeResult};

    #[test]
    fn reads_the_fenced_history_and_explains() {
        let mut e = RulesEngineer::new(DifficultyParams::default()).unwrap();
        let first = e.design("Round 0. ```json\n{\"rounds\": []}\n```", &DesignLimits::default()).unwrap();
        assert!(first.rationale.contains("initial"));
        let h = History {
            rounds: vec![RoundRecord {
                round: 0,
                config: first.config.clone(),
                results: vec![SizeResult {
                    size: 3,
                    valid_rate: 0.9,
                    optimal_rate: 0.5,
                    instances: 10,
                    failures: Default::default(),
                    mean_abs_advantage: None,
                }],
            }],
        };
        let ctx = format!("Failures: ...\n```json\n{}\n```\nDesign the next round.", h.to_json());
        let reply = e.design(&ctx, &DesignLimits::default()).unwrap();
        assert_eq!(reply.config.sizes.len(), 2);
        assert!(reply.rationale.contains("size 3: valid rate 0.90, harder"), "{}", reply.rationale);
        assert!(reply.rationale.contains("adding size 4"), "{}", reply.rationale);
        assert!(matches!(e.design("no json here", &DesignLimits::default()), Err(PluginError::BadInput(_))));
    }
}
