//! Decoding answers from the policy: greedy (evaluation) or sampled with a temperature
//! (GRPO rollouts), in batches with a key/value cache, under `no_grad`.
//!
//! Instances are sorted by prompt length and decoded in batches of any map sizes and agent
//! counts, the prompts left-padded to the longest (padding is never attended, and no feature
//! depends on a token's position, so a sequence's logits do not depend on its batch); each
//! sequence stops at `END` or at its own answer cap ([`crate::tokens::Layout::answer_cap`]); one
//! that hits the cap is unfinished. Sampling draws
//! from libtorch's global generator: seed it (`tch::manual_seed`) for reproducible rollouts.

use floe_core::progress::{Progress, Silent};
use floe_core::Instance;
use tch::{Kind, Tensor};

use crate::error::TrainError;
use crate::model::{distinct, Features, Policy};
use crate::reward::DecodedPlan;
use crate::tokens::{prompt, AnswerState, Token, OUT_END};

/// How to pick each answer token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decode {
    /// The most likely token.
    Greedy,
    /// A draw from `softmax(logits / temperature)`.
    Sample { temperature: f64 },
}

/// One decoded answer: its tokens (output indices) and the plan they spell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub tokens: Vec<i64>,
    pub plan: DecodedPlan,
}

/// Decodes one answer per instance (the same instance may appear several times, e.g. a GRPO
/// group), in batches of at most `batch` sequences.
///
/// # Errors
/// An instance the model cannot read.
pub fn decode(
    policy: &Policy,
    instances: &[&Instance],
    mode: Decode,
    batch: usize,
) -> Result<Vec<Answer>, TrainError> {
    decode_with_progress(policy, instances, mode, batch, &Silent)
}

/// As [`decode`], advancing `progress` by each batch's number of answers as it is decoded.
///
/// # Errors
/// An instance the model cannot read.
pub fn decode_with_progress(
    policy: &Policy,
    instances: &[&Instance],
    mode: Decode,
    batch: usize,
    progress: &dyn Progress,
) -> Result<Vec<Answer>, TrainError> {
    let layout = policy.config.layout;
    let prompts = instances.iter().map(|inst| prompt(&layout, inst)).collect::<Result<Vec<_>, _>>()?;
    // Longest prompts first, so that a batch holds prompts of about one length (left-padded to
    // the longest; ties keep the instances' order).
    let mut order: Vec<usize> = (0..instances.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(prompts[i].len()));
    let mut out: Vec<Option<Answer>> = vec![None; instances.len()];
    for chunk in order.chunks(batch.max(1)) {
        let answers = tch::no_grad(|| decode_batch(policy, instances, &prompts, chunk, mode));
        for (&i, a) in chunk.iter().zip(answers) {
            out[i] = Some(a);
        }
        progress.advance(chunk.len() as u64, "");
    }
    Ok(out.into_iter().map(|a| a.expect("every instance decoded")).collect())
}

fn decode_batch(
    policy: &Policy,
    instances: &[&Instance],
    prompts: &[Vec<Token>],
    chunk: &[usize],
    mode: Decode,
) -> Vec<Answer> {
    let layout = policy.config.layout;
    // Each distinct prompt once (a GRPO group's answers share theirs), then its cache and
    // logits copied to every answer.
    let (distinct, rows) = distinct(chunk.iter().map(|&i| prompts[i].as_slice()));
    let caps: Vec<usize> = chunk.iter().map(|&i| layout.answer_cap(instances[i])).collect();
    let longest = caps.iter().copied().max().unwrap_or(0);
    let (mut logits, mut cache) = policy.prefill(&Features::pack_left(&layout, &distinct), longest);
    if distinct.len() < rows.len() {
        let rows = Tensor::from_slice(&rows);
        logits = logits.index_select(0, &rows);
        cache = cache.select_rows(&rows);
    }
    let mut states: Vec<AnswerState<'_>> =
        chunk.iter().map(|&i| AnswerState::new(layout, instances[i])).collect();
    let mut tokens: Vec<Vec<i64>> = vec![Vec::new(); chunk.len()];
    // A sequence is done once it ended or reached its own answer cap (then it is unfinished).
    let done = |st: &AnswerState<'_>, cap: usize| st.ended() || st.len() >= cap;
    for _ in 0..longest {
        let picks: Vec<i64> = match mode {
            Decode::Greedy => Vec::<i64>::try_from(logits.argmax(-1, false)).expect("argmax"),
            Decode::Sample { temperature } => {
                let probs = (&logits / temperature).softmax(-1, Kind::Float);
                Vec::<i64>::try_from(probs.multinomial(1, true).squeeze_dim(-1)).expect("multinomial")
            }
        };
        let mut next = Vec::with_capacity(chunk.len());
        for (((st, toks), &o), &cap) in states.iter_mut().zip(&mut tokens).zip(&picks).zip(&caps) {
            if done(st, cap) {
                next.push(st.push_pad());
            } else {
                toks.push(o);
                next.push(st.push(o));
            }
        }
        if states.iter().zip(&caps).all(|(st, &cap)| done(st, cap)) {
            break;
        }
        let rows: Vec<[Token; 1]> = next.into_iter().map(|t| [t]).collect();
        let rows: Vec<&[Token]> = rows.iter().map(|r| r.as_slice()).collect();
        logits = policy.step(&Features::pack(&layout, &rows), &mut cache);
    }
    states
        .iter()
        .zip(tokens)
        .map(|(st, toks)| {
            let finished = toks.last() == Some(&OUT_END);
            Answer { tokens: toks, plan: DecodedPlan { moves: st.plan(), finished } }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;
    use crate::tokens::{Layout, NUM_OUT};
    use floe_core::{generate, GeneratorConfig};

    fn draw_counts(logits: &Tensor, draws: i64) -> Vec<i64> {
        let probs = logits.softmax(-1, Kind::Float).repeat([draws, 1]);
        let picks = probs.multinomial(1, true).squeeze_dim(-1);
        let mut counts = vec![0; logits.size()[1] as usize];
        for p in Vec::<i64>::try_from(picks).unwrap() {
            counts[p as usize] += 1;
        }
        counts
    }

    #[test]
    fn greedy_is_deterministic_and_sampling_is_seeded() {
        // Sampling twice from one seed must repeat: no other test may draw in between.
        let _held = crate::test_rng::lock();
        tch::manual_seed(0);
        let cfg = ModelConfig { d_model: 16, layers: 1, heads: 2, d_ff: 16, layout: Layout::new(5, 24) };
        let p = Policy::new(&cfg).unwrap();
        let mut insts =
            generate(&GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(3).seed(1)).unwrap();
        insts.extend(
            generate(&GeneratorConfig::default().size(4).agents(3).hole_ratio(0.1).count(2).seed(2)).unwrap(),
        );
        let refs: Vec<&Instance> = insts.iter().collect();
        let g1 = decode(&p, &refs, Decode::Greedy, 2).unwrap();
        let g2 = decode(&p, &refs, Decode::Greedy, 64).unwrap();
        assert_eq!(g1, g2, "batching must not change greedy answers");
        for (a, inst) in g1.iter().zip(&insts) {
            assert!(a.tokens.len() <= cfg.layout.answer_cap(inst));
            assert_eq!(a.plan.finished, a.tokens.last() == Some(&OUT_END));
        }
        let s = Decode::Sample { temperature: 1.0 };
        tch::manual_seed(5);
        let s1 = decode(&p, &refs, s, 8).unwrap();
        tch::manual_seed(5);
        let s2 = decode(&p, &refs, s, 8).unwrap();
        assert_eq!(s1, s2);
        let counts = draw_counts(&Tensor::from_slice(&[0.0f32, 2f32.ln()]).reshape([1, 2]), 3000);
        assert!((counts[1] as f64 / 3000.0 - 2.0 / 3.0).abs() < 0.05, "{counts:?}");
        assert_eq!(NUM_OUT, 7);
    }
}
