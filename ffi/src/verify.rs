//! Plan verification (batched and single), the optimal solver, the paper's prompt and the answer
//! parser.

use std::cell::RefCell;
use std::ffi::c_char;
use std::time::Duration;

use floe_core::engine::NONE;
use floe_core::error::{try_vec, try_with_capacity};
use floe_core::text::{parse_answer, render_prompt};
use floe_core::verify::{verify, verify_batch, Answer, Check, PlanBatch, VerifyOut};
use floe_core::PartialCredit;
use floe_core::{solve, Instance, PlanForm, SolverConfig};
use floe_plugin_api::VerdictRecord;
use rayon::prelude::*;

use crate::boundary::{
    check_out, floe_status, guard, slice, slice_mut, status, str_arg, write_out, write_string, Error, Result,
};
use crate::handles;
use crate::pool::floe_pool;

/// `floe_verify_plan`: `plan` is JSON: `{"moves": ["RRD", "UL"]}`, `{"paths": [[[0, 0], [0, 1]],
/// ...]}` (either may carry the solver's `"soc"` and `"makespan"`, as `floe_solve` writes it), or
/// a bare array with one move string (or one path) per agent, `["RRD", "UL"]`.
pub const FLOE_PLAN_JSON: u32 = 0;
/// `floe_verify_plan`: `plan` is a free-text answer in the paper's format.
pub const FLOE_PLAN_TEXT: u32 = 1;
/// `floe_verify_plan`: JSON when `plan` begins with `{` or `[` (after white space), else a
/// free-text answer (as `floe verify` and Python's `floe.verify` read a string).
pub const FLOE_PLAN_AUTO: u32 = 2;

thread_local! {
    /// The detail of this thread's last `floe_verify_plan` verdict, for `floe_verdict_detail`.
    static LAST_DETAIL: RefCell<String> = const { RefCell::new(String::new()) };
}

fn out_len(expected: usize, got: usize, what: &str) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::new(status::BUFFER_SIZE, format!("{what}: expected {expected} entries, got {got}")))
    }
}

fn optimum(pool: &floe_pool, i: usize) -> Option<u32> {
    Some(pool.packed.optimal_soc(i)).filter(|&o| o != NONE)
}

/// Verifies `num_plans` plans given as move codes, in one batch (on all cores), and writes one
/// record per plan.
///
/// Layout: plan `n` is for pool instance `instances[n]` and covers `agents[n]` agents (a plan
/// for another count than the instance's is `wrong_agent_count`); its moves are
/// `moves[(n·max_agents + a)·max_len + t]` for agent `a` at step `t + 1`: codes 0..=4, then
/// FLOE_MOVES_END (255) after an agent's last move. Any other code is a `parse_error`.
/// `moves_len` must be `num_plans · max_agents · max_len`; `out_len` must be `num_plans`.
/// The records are those the reward plugins read (`floe_verdict_record`), identical to what
/// floe's own trainer gives its reward.
///
/// Thread-safe; the arrays are read only during the call.
/// Errors (nothing written then): FLOE_STATUS_BUFFER_SIZE for lengths, FLOE_STATUS_BAD_INPUT for
/// an instance index out of range, `agents[n] > max_agents` or a misaligned array,
/// FLOE_STATUS_NULL_POINTER for a NULL `pool` or array of non-zero length,
/// FLOE_STATUS_WRONG_HANDLE for a `pool` that is not a live pool, FLOE_STATUS_TOO_LARGE when the
/// batch's working memory (a copy of the arrays and 64 bytes per plan) cannot be had.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn floe_verify_moves(
    pool: *const floe_pool,
    instances: *const u32,
    agents: *const u32,
    num_plans: usize,
    moves: *const u8,
    moves_len: usize,
    max_agents: usize,
    max_len: usize,
    out: *mut VerdictRecord,
    out_len: usize,
) -> floe_status {
    guard(|| {
        let pool = handles::get(pool, "pool")?;
        // SAFETY: (this and the next two arrays) the caller passes arrays of the given lengths.
        let instances = unsafe { slice(instances, num_plans, "instances") }?;
        // SAFETY: as above.
        let agents = unsafe { slice(agents, num_plans, "agents") }?;
        // SAFETY: as above.
        let moves = unsafe { slice(moves, moves_len, "moves") }?;
        // SAFETY: `out_len` writable records.
        let out = unsafe { slice_mut(out, out_len, "out") }?;
        out_len_check(num_plans, out.len())?;
        let copy = |what: &'static str, len: usize| move || format!("a copy of {what} ({len} entries)");
        let batch = PlanBatch::from_arrays(
            max_agents,
            max_len,
            try_copy(instances, copy("instances", num_plans))?,
            try_copy(agents, copy("agents", num_plans))?,
            try_copy(moves, copy("moves", moves_len))?,
        )?;
        let mut results =
            try_vec(num_plans, VerifyOut::default(), || format!("the verdicts of {num_plans} plans"))?;
        let mut credit = try_vec(num_plans, PartialCredit::default(), || {
            format!("the partial credit of {num_plans} plans")
        })?;
        verify_batch(&pool.packed, &batch, &mut results, Some(&mut credit))?;
        out.par_iter_mut().enumerate().for_each(|(n, slot)| {
            let k = pool.instances[instances[n] as usize].num_agents() as u32;
            *slot = VerdictRecord::from_results(&results[n], &credit[n], k);
        });
        Ok(())
    })
}

/// A copy of `values`, or FLOE_STATUS_TOO_LARGE when it cannot be had.
fn try_copy<T: Copy>(values: &[T], what: impl FnOnce() -> String) -> Result<Vec<T>> {
    let mut v = try_with_capacity(values.len(), what)?;
    v.extend_from_slice(values);
    Ok(v)
}

fn out_len_check(expected: usize, got: usize) -> Result<()> {
    out_len(expected, got, "out")
}

/// Verifies `num_answers` free-text answers (the paper's format: one line per agent,
/// `Agent i: UP RIGHT ...`, optionally inside `<answer>` tags), answer `n` against pool instance
/// `instances[n]`, on all cores, and writes one record per answer. Unreadable answers are
/// `parse_error`, plans for the wrong number of agents `wrong_agent_count`.
///
/// Thread-safe; the strings are read only during the call.
/// Errors (nothing written then): FLOE_STATUS_NULL_POINTER for a NULL `pool`, answer or array
/// of non-zero length, FLOE_STATUS_BAD_UTF8 (naming the answer), FLOE_STATUS_BAD_INPUT for an
/// instance out of range or a misaligned array, FLOE_STATUS_BUFFER_SIZE for an `out_len` other
/// than `num_answers`, FLOE_STATUS_WRONG_HANDLE for a `pool` that is not a live pool,
/// FLOE_STATUS_TOO_LARGE when the batch's working memory (32 bytes per answer) cannot be had.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_verify_answers(
    pool: *const floe_pool,
    instances: *const u32,
    answers: *const *const c_char,
    num_answers: usize,
    out: *mut VerdictRecord,
    out_len: usize,
) -> floe_status {
    guard(|| {
        let pool = handles::get(pool, "pool")?;
        // SAFETY: arrays of `num_answers` entries, by the caller's contract.
        let instances = unsafe { slice(instances, num_answers, "instances") }?;
        // SAFETY: as above.
        let answers = unsafe { slice(answers, num_answers, "answers") }?;
        // SAFETY: `out_len` writable records.
        let out = unsafe { slice_mut(out, out_len, "out") }?;
        out_len_check(num_answers, out.len())?;
        let mut texts: Vec<&str> =
            try_with_capacity(num_answers, || format!("the texts of {num_answers} answers"))?;
        for (n, &a) in answers.iter().enumerate() {
            // SAFETY: each entry is a NUL-terminated string or NULL (checked).
            texts.push(unsafe { str_arg(a, &format!("answers[{n}]")) }?);
        }
        let mut insts: Vec<&Instance> =
            try_with_capacity(num_answers, || format!("the instances of {num_answers} answers"))?;
        for &i in instances {
            insts.push(pool.instance(i as usize)?);
        }
        out.par_iter_mut().enumerate().for_each(|(n, slot)| {
            let (inst, text) = (insts[n], texts[n]);
            let opt = optimum(&pool, instances[n] as usize);
            let verdict =
                verify(inst, Answer::Written(text, PlanForm::Text), Check::against(opt).with_credit());
            *slot = VerdictRecord::from_verdict(&verdict, inst.num_agents() as u32);
        });
        Ok(())
    })
}

/// One plan's verdict, as `floe_verdict`: valid, optimal, the first failure's kind
/// (`FLOE_FAILURE_*`), agent and time (FLOE_UNKNOWN when they do not apply), sum of costs,
/// makespan and the optimum. `format` is FLOE_PLAN_JSON, FLOE_PLAN_TEXT or FLOE_PLAN_AUTO; the
/// plan is read by the reader `floe verify` and Python's `floe.verify` use, so the three take the
/// same forms. Thread-safe.
///
/// A plan that does not read is not an error: it is a verdict of kind `parse_error` (or
/// `wrong_agent_count` for an answer for another number of agents), and `floe_verdict_detail`
/// then says why (which form the plan was read as, and what is wrong with it).
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `pool`, `plan` or `out`,
/// FLOE_STATUS_WRONG_HANDLE for a `pool` that is not a live pool, FLOE_STATUS_BAD_UTF8 for a
/// `plan` that is not UTF-8, FLOE_STATUS_BAD_INPUT for an instance out of range, an unknown
/// format or a misaligned `out`.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_verify_plan(
    pool: *const floe_pool,
    instance: usize,
    plan: *const c_char,
    format: u32,
    out: *mut VerifyOut,
) -> floe_status {
    LAST_DETAIL.with_borrow_mut(String::clear);
    guard(|| {
        check_out(out, "out")?;
        let pool = handles::get(pool, "pool")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(plan, "plan") }?;
        let form = match format {
            FLOE_PLAN_JSON => PlanForm::Json,
            FLOE_PLAN_TEXT => PlanForm::Text,
            FLOE_PLAN_AUTO => PlanForm::Auto,
            f => {
                return Err(Error::bad_input(format!(
                    "format {f}: FLOE_PLAN_JSON (0), FLOE_PLAN_TEXT (1) or FLOE_PLAN_AUTO (2)"
                )))
            }
        };
        let inst = pool.instance(instance)?;
        let verdict = verify(inst, Answer::Written(text, form), Check::against(optimum(&pool, instance)));
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_out(out, VerifyOut::from_verdict(&verdict), "out") }?;
        let detail = verdict.failure.map(|f| f.detail).unwrap_or_default();
        LAST_DETAIL.with_borrow_mut(|d| *d = detail);
        Ok(())
    })
}

/// Why the calling thread's last `floe_verify_plan` verdict is what it is: for an invalid plan
/// the failure's detail, a sentence (for `parse_error`, which form the plan was read as and why
/// it is not a plan: `read as JSON: agent 1, move 2: unknown move letter 'X' ...`); `""` after a
/// valid plan, after a call that failed (its message is `floe_last_error()`'s), or before any
/// call on this thread. `*out` is the caller's (`floe_string_free`). Other functions do not
/// change it. Thread-safe.
///
/// Errors: FLOE_STATUS_NULL_POINTER for a NULL `out`, FLOE_STATUS_BAD_INPUT for a misaligned
/// `out`.
///
/// # Safety
/// `out` is NULL or valid for a write of a `char *`.
#[no_mangle]
pub unsafe extern "C" fn floe_verdict_detail(out: *mut *mut c_char) -> floe_status {
    guard(|| {
        let detail = LAST_DETAIL.with_borrow(Clone::clone);
        // SAFETY: checked by `write_string`; writable by the caller's contract.
        unsafe { write_string(out, &detail, "out") }
    })
}

/// An optimal plan (minimum sum of costs) of one instance given as JSON (the format of
/// `floe_pool_instance_json`). `*out_plan_json` gets `{"moves": ["RRD", "W"...]}` (free it with
/// `floe_string_free`), `*out_soc` and `*out_makespan` its costs. `time_limit_ms` 0 means no
/// limit. Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT for an instance that does not parse or a misaligned out-pointer,
/// FLOE_STATUS_FAILED when no plan exists or the limit was reached (the message says which),
/// FLOE_STATUS_NULL_POINTER for a NULL argument, FLOE_STATUS_BAD_UTF8 for an `instance_json`
/// that is not UTF-8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_solve(
    instance_json: *const c_char,
    time_limit_ms: u64,
    out_plan_json: *mut *mut c_char,
    out_soc: *mut u32,
    out_makespan: *mut u32,
) -> floe_status {
    guard(|| {
        check_out(out_plan_json, "out_plan_json")?;
        check_out(out_soc, "out_soc")?;
        check_out(out_makespan, "out_makespan")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(instance_json, "instance_json") }?;
        let inst = Instance::from_json(text).map_err(|e| Error::bad_input(format!("instance: {e}")))?;
        let cfg = SolverConfig {
            time_limit: (time_limit_ms > 0).then(|| Duration::from_millis(time_limit_ms)),
            ..SolverConfig::default()
        };
        let sol = solve(&inst, &cfg).map_err(|e| Error::new(status::FAILED, e.to_string()))?;
        let plan = serde_json::json!({ "moves": sol.move_strings(&inst.grid) }).to_string();
        // SAFETY: (three writes) checked not NULL; writable by the caller's contract.
        unsafe {
            write_out(out_soc, sol.soc, "out_soc")?;
            write_out(out_makespan, sol.makespan, "out_makespan")?;
            write_string(out_plan_json, &plan, "out_plan_json")
        }
    })
}

/// ACCEL's edit of a level given as JSON (the format of `floe_pool_instance_json`), with its
/// settings as JSON (`settings_json`, NULL for the defaults; every field optional):
/// `{"edits": 2, "seed": 0, "max_attempts": 16, "max_nodes": 5000}`. `edits` changes (a cell
/// flipped between hole and frozen, an agent's start or goal moved to a free frozen cell), kept
/// only when the level stays solvable, the edited level solved again by CBS. The same level and
/// seed give the same result. `*out` gets `{"instance": {...}, "edits": [...]}`: the new level
/// with its optimal plan, and the edits (`{"flip": {"pos": [row, col], "hole": true}}`,
/// `{"move_start": {"agent": 0, "to": [row, col]}}`, `{"move_goal": ...}`); free it with
/// `floe_string_free`. Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT for an instance that does not parse or a misaligned `out`;
/// FLOE_STATUS_CONFIG for settings that do not parse, name an unknown field, or give `edits` or
/// `max_attempts` of 0; FLOE_STATUS_FAILED when no attempt kept the level solvable (the message
/// names the edits, the attempts and the seed) or no cell is free to edit;
/// FLOE_STATUS_NULL_POINTER for a NULL `instance_json` or `out`; FLOE_STATUS_BAD_UTF8 for a
/// string that is not UTF-8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn floe_mutate(
    instance_json: *const c_char,
    settings_json: *const c_char,
    out: *mut *mut c_char,
) -> floe_status {
    use floe_core::mutate::{mutate, MutateConfig, MutateError};
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(instance_json, "instance_json") }?;
        let cfg: MutateConfig = if settings_json.is_null() {
            MutateConfig::default()
        } else {
            // SAFETY: a NUL-terminated string (not NULL).
            let s = unsafe { str_arg(settings_json, "settings_json") }?;
            floe_core::json::from_str(s)
                .map_err(|e| Error::new(status::CONFIG, format!("mutation settings: {e}")))?
        };
        let inst = Instance::from_json(text).map_err(|e| Error::bad_input(format!("instance: {e}")))?;
        let m = mutate(&inst, &cfg).map_err(|e| match e {
            MutateError::Config(_) => Error::new(status::CONFIG, e.to_string()),
            MutateError::Instance(_) => Error::bad_input(e.to_string()),
            MutateError::NoRoom | MutateError::Unsolvable { .. } => Error::new(status::FAILED, e.to_string()),
        })?;
        let instance: serde_json::Value = serde_json::from_str(&m.instance.to_json())
            .map_err(|e| Error::new(status::FAILED, e.to_string()))?;
        let text = serde_json::json!({ "instance": instance, "edits": m.edits }).to_string();
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { write_string(out, &text, "out") }
    })
}

/// The paper's prompt for an instance given as JSON. `*out` is the caller's
/// (`floe_string_free`). Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT for an instance that does not parse, one with more agents than
/// the prompt names (five), or a misaligned `out`, FLOE_STATUS_NULL_POINTER for a NULL argument,
/// FLOE_STATUS_BAD_UTF8 for an `instance_json` that is not UTF-8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_render_prompt(
    instance_json: *const c_char,
    out: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out, "out")?;
        // SAFETY: a NUL-terminated string or NULL (checked).
        let text = unsafe { str_arg(instance_json, "instance_json") }?;
        let inst = Instance::from_json(text).map_err(|e| Error::bad_input(format!("instance: {e}")))?;
        let prompt = render_prompt(&inst).map_err(Error::bad_input)?;
        // SAFETY: checked not NULL.
        unsafe { write_string(out, &prompt, "out") }
    })
}

/// Reads a free-text answer for an instance given as JSON into a plan: `*out_plan_json` gets
/// the plan as JSON (`{"moves": [...]}` or `{"paths": [...]}`; `floe_string_free`).
/// Thread-safe.
///
/// Errors: FLOE_STATUS_BAD_INPUT with the parser's message for an unreadable answer or one for
/// the wrong number of agents, for an instance that does not parse, or for a misaligned
/// `out_plan_json`, FLOE_STATUS_NULL_POINTER for a NULL argument, FLOE_STATUS_BAD_UTF8 for a
/// string that is not UTF-8.
///
/// # Safety
/// Pointer arguments are NULL or valid for the reads and writes described above, for the
/// duration of the call; strings are NUL-terminated; handles come from this library.
#[no_mangle]
pub unsafe extern "C" fn floe_parse_answer(
    instance_json: *const c_char,
    answer: *const c_char,
    out_plan_json: *mut *mut c_char,
) -> floe_status {
    guard(|| {
        check_out(out_plan_json, "out_plan_json")?;
        // SAFETY: NUL-terminated strings or NULL (checked).
        let text = unsafe { str_arg(instance_json, "instance_json") }?;
        // SAFETY: as above.
        let answer = unsafe { str_arg(answer, "answer") }?;
        let inst = Instance::from_json(text).map_err(|e| Error::bad_input(format!("instance: {e}")))?;
        let plan = parse_answer(answer, &inst).map_err(|e| Error::bad_input(e.to_string()))?;
        // SAFETY: checked not NULL.
        unsafe { write_string(out_plan_json, &plan.to_json(), "out_plan_json") }
    })
}
