//! Plans as people and programs write them, read by one function, [`read_plan`], which the CLI
//! (`floe verify`), the C API (`floe_verify_plan`) and the Python package (`floe.verify`) all
//! call, so that every entry point takes the same forms and gives the same reasons.
//!
//! The forms:
//! - **JSON** ([`Plan::from_json`]): `{"moves": ["RRDW", "UL"]}`, `{"paths": [[[0, 0], [0, 1]],
//!   …]}` (either with the solver's `"soc"` and `"makespan"` beside it, as `floe solve` prints
//!   it), or a bare array with one entry per agent: `["RRDW", "UL"]` or `[[[0, 0], [0, 1]], …]`;
//! - **free text** in the paper's answer format ([`crate::text::parse_answer`]: `Agent 0: RIGHT
//!   DOWN WAIT`, one line per agent).
//!
//! [`PlanForm::Auto`] tells them apart by the first character that is not white space: `{` or `[`
//! is JSON, and then it is read as JSON only (a JSON plan with a mistake is reported as a JSON
//! mistake, never read again as prose); anything else is free text.

use crate::error::PlanError;
use crate::failure::FailureKind;
use crate::instance::Instance;
use crate::plan::Plan;
use crate::text::{parse_answer, AnswerError};

/// How a plan's text is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanForm {
    /// JSON when the text begins with `{` or `[` (after white space), else free text.
    #[default]
    Auto,
    /// One of the JSON forms.
    Json,
    /// A free-text answer in the paper's format.
    Text,
}

impl PlanForm {
    /// The form [`PlanForm::Auto`] reads `text` as: [`PlanForm::Json`] or [`PlanForm::Text`]
    /// (the others are returned as they are).
    #[must_use]
    pub fn resolve(self, text: &str) -> PlanForm {
        match self {
            PlanForm::Auto if text.trim_start().starts_with(['{', '[']) => PlanForm::Json,
            PlanForm::Auto => PlanForm::Text,
            form => form,
        }
    }
}

/// Why a plan's text is not a plan for the instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Read as JSON, and not a plan in any JSON form.
    Json(PlanError),
    /// Read as a free-text answer, and not readable (or for another number of agents).
    Text(AnswerError),
}

impl ReadError {
    /// The verdict's failure kind for this error: `wrong_agent_count` for a readable answer for
    /// another number of agents, `parse_error` otherwise.
    #[must_use]
    pub fn kind(&self) -> FailureKind {
        match self {
            ReadError::Text(AnswerError::WrongAgentCount { .. }) => FailureKind::WrongAgentCount,
            _ => FailureKind::ParseError,
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Json(e) => write!(f, "read as JSON: {e}"),
            ReadError::Text(e) => write!(f, "read as a text answer: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads `text` as a plan for `instance`, in `form` (see the module docs for the forms).
///
/// A JSON plan for another number of agents than the instance's is read (the verifier reports
/// it as `wrong_agent_count`); a free-text answer must name every agent, so it is an error here.
///
/// # Errors
/// [`ReadError`], saying which form the text was read as and why it is not a plan.
pub fn read_plan(text: &str, form: PlanForm, instance: &Instance) -> Result<Plan, ReadError> {
    match form.resolve(text) {
        PlanForm::Text => parse_answer(text, instance).map_err(ReadError::Text),
        _ => Plan::from_json(text).map_err(ReadError::Json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{verify, Answer, Check, Verdict};

    fn verify_written(instance: &Instance, text: &str, form: PlanForm, optimal_soc: Option<u32>) -> Verdict {
        verify(instance, Answer::Written(text, form), Check::against(optimal_soc))
    }

    fn instance() -> Instance {
        Instance::from_json(
            r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#,
        )
        .expect("valid")
    }

    #[test]
    fn every_form_reads_to_the_same_plan() {
        let inst = instance();
        let want = Plan::from_move_strings(&["RR", "RR"]).expect("letters");
        for (text, form) in [
            (r#"["RR", "RR"]"#, PlanForm::Auto),
            (r#"  ["RR", "RR"]"#, PlanForm::Json),
            (r#"{"moves": ["RR", "RR"]}"#, PlanForm::Auto),
            (r#"{"soc": 4, "makespan": 2, "moves": ["RR", "RR"]}"#, PlanForm::Auto),
            ("Agent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT", PlanForm::Auto),
            ("Agent 0: R R\nAgent 1: RR", PlanForm::Text),
        ] {
            assert_eq!(read_plan(text, form, &inst), Ok(want.clone()), "{text}");
            let v = verify_written(&inst, text, form, Some(4));
            assert!(v.valid && v.optimal, "{text}: {v:?}");
        }
        let paths = read_plan("[[[0, 0], [0, 1], [0, 2]], [[2, 0], [2, 1], [2, 2]]]", PlanForm::Auto, &inst)
            .expect("paths");
        assert!(verify_written(&inst, &paths.to_json(), PlanForm::Auto, Some(4)).optimal);
    }

    #[test]
    fn json_is_read_as_json_and_says_why_it_is_not_a_plan() {
        let inst = instance();
        for (text, needle) in [
            (r#"["RR", "RX"]"#, "unknown move letter 'X'"),
            (r#"{"moves": 3}"#, "expected a sequence"),
            (r#"{"moves": ["RR", "RR"], "colour": 1}"#, "unknown field `colour`"),
            ("[\"RR\", ", "malformed plan JSON"),
            (r#"{"paths": [[], [[2, 0]]]}"#, "agent 0: the path is empty"),
        ] {
            let e = read_plan(text, PlanForm::Auto, &inst).expect_err(text);
            assert!(matches!(e, ReadError::Json(_)), "{text}: {e:?}");
            let message = e.to_string();
            assert!(message.starts_with("read as JSON: ") && message.contains(needle), "{text}: {message}");
            let v = verify_written(&inst, text, PlanForm::Auto, None);
            let failure = v.failure.expect("a failure");
            assert_eq!((failure.kind, failure.detail), (FailureKind::ParseError, message));
        }
        // The same JSON asked for as text is prose without plan lines.
        let e = read_plan(r#"["RR", "RR"]"#, PlanForm::Text, &inst).expect_err("not an answer");
        assert!(e.to_string().starts_with("read as a text answer: no plan line found"), "{e}");
    }

    #[test]
    fn text_errors_keep_their_kind() {
        let inst = instance();
        let e = read_plan("Agent 0: RIGHT RIGHT", PlanForm::Auto, &inst).expect_err("one agent");
        assert_eq!(e.kind(), FailureKind::WrongAgentCount);
        assert_eq!(
            e.to_string(),
            "read as a text answer: the answer has plans for 1 agent, the instance has 2"
        );
        let e = read_plan("I do not know.", PlanForm::Auto, &inst).expect_err("prose");
        assert_eq!(e.kind(), FailureKind::ParseError);
        // A JSON plan for one agent is read; the verifier names the count.
        let v = verify_written(&inst, r#"["RR"]"#, PlanForm::Auto, None);
        assert_eq!(v.failure.map(|f| f.kind), Some(FailureKind::WrongAgentCount));
    }

    #[test]
    fn auto_looks_at_the_first_character_that_is_not_white_space() {
        assert_eq!(PlanForm::Auto.resolve("\n  [1]"), PlanForm::Json);
        assert_eq!(PlanForm::Auto.resolve("{"), PlanForm::Json);
        assert_eq!(PlanForm::Auto.resolve("Agent 0: [RIGHT]"), PlanForm::Text);
        assert_eq!(PlanForm::Auto.resolve(""), PlanForm::Text);
        assert_eq!(PlanForm::Text.resolve("[1]"), PlanForm::Text);
        assert_eq!(PlanForm::Json.resolve("Agent"), PlanForm::Json);
    }
}
