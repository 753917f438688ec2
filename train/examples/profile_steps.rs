//! Where the time of one warm-start step and one GRPO step goes, and what libtorch's matrix
//! products reach on this machine (the ceiling of tokens per second for the model's shape).
//!
//! ```sh
//! LIBTORCH=$PWD/third_party/libtorch cargo run --release -p floe-train --example profile_steps -- [THREADS] [REPS]
//! ```
//!
//! The workload is `configs/two-agents.json`'s: the default model shape, 2-agent boards of
//! 3×3…10×10 (hole ratio 0.2, wait ratio 0.5), warm-start batches of 64 optimal plans, GRPO
//! steps of 16 prompts × 8 answers at temperature 1 with the `tiered` reward. The policy is
//! first trained for 40 warm-start steps (the experiment's "base model"), so that sampled answers
//! have realistic lengths. Each phase is timed `REPS` times (default 5) and the median printed.
//! With more than one thread the training steps run as `floe train` runs them, their parts on
//! one worker per thread ([`floe_train::workers`]); sampling runs on libtorch's threads.

use std::sync::Arc;
use std::time::Instant;

use floe_core::engine::{InstancePool, Optima};
use floe_core::generator::generate;
use floe_core::{GeneratorConfig, Instance};
use floe_plugin_api::PluginSpec;
use floe_train::grpo::GrpoConfig;
use floe_train::grpo::{update, ScoredRollouts};
use floe_train::model::SeqBatch;
use floe_train::optim::{AdamConfig, AdamW};
use floe_train::reward::{located_legal_steps, rewards, verify_plans};
use floe_train::sample::{decode, Decode};
use floe_train::sft::SftStats;
use floe_train::workers::Workers;
use floe_train::{sft, ModelConfig, Policy};
use tch::{Device, Kind, Tensor};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

fn boards(count_per_size: usize, seed: u64) -> Vec<Instance> {
    (3..=10)
        .flat_map(|s| {
            generate(
                &GeneratorConfig::default()
                    .size(s)
                    .agents(2)
                    .hole_ratio(0.2)
                    .wait_ratio(0.5)
                    .count(count_per_size)
                    .seed(seed + u64::from(s)),
            )
            .unwrap()
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: i32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let reps: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5).max(1);
    tch::set_num_threads(threads);
    tch::set_num_interop_threads(1);
    tch::manual_seed(0);
    let cfg = ModelConfig::default();
    let policy = Policy::new(&cfg).unwrap();
    let mut opt = AdamW::new(policy.named_variables(), AdamConfig::default());
    let workers = (threads > 1).then(|| Workers::start(threads as usize));

    // The matrix-product ceiling: the model's largest products on 4,096 rows.
    let d = cfg.d_model;
    let x = Tensor::randn([4096, d], (Kind::Float, Device::Cpu));
    let w1 = Tensor::randn([d, cfg.d_ff], (Kind::Float, Device::Cpu));
    let w2 = Tensor::randn([d, 3 * d], (Kind::Float, Device::Cpu));
    let mut gflops = Vec::new();
    for _ in 0..reps * 4 {
        let (_, s) = time(|| {
            let _ = x.matmul(&w1).sum(Kind::Float).double_value(&[]);
            let _ = x.matmul(&w2).sum(Kind::Float).double_value(&[]);
        });
        gflops.push(2.0 * 4096.0 * (d * cfg.d_ff + d * 3 * d) as f64 / s / 1e9);
    }
    let gflops = median(gflops);
    // Multiply-adds per token in the blocks' linear layers (qkv, proj, fc1, fc2) and the head.
    let macs = (cfg.layers * (3 * d * d + d * d + 2 * d * cfg.d_ff) + d * floe_train::tokens::NUM_OUT) as f64;
    // Training costs about three times the forward (forward, and two products backward).
    let ceiling_train = gflops * 1e9 / (6.0 * macs);
    let ceiling_infer = gflops * 1e9 / (2.0 * macs);
    println!("threads {threads}: matmul {gflops:.1} GFLOP/s; ceiling {ceiling_train:.0} tokens/s training, {ceiling_infer:.0} tokens/s forward");

    // The warm start: 40 steps, then the timed steps.
    let data = boards(600, 1);
    let seqs = Arc::new(sft::sequences(&policy, &data).unwrap());
    // One warm-start step on the sequences `b` (indices) at learning rate `lr`.
    let warm = |opt: &mut AdamW, b: &[usize], lr: f64| -> SftStats {
        match &workers {
            Some(w) => sft::step_on(w, &policy, opt, &seqs, b, lr, 1.0),
            None => sft::step(&policy, opt, &b.iter().map(|&i| &seqs[i]).collect::<Vec<_>>(), lr, 1.0),
        }
    };
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    floe_core::rng::Rng::from_counters(&[7]).shuffle(&mut order);
    for step in 0..40 {
        warm(&mut opt, &order[(step * 64) % 3000..][..64], 4e-4);
    }
    // Timed: a batch of 64 drawn at random (padded to its longest), and the same 64 sorted by
    // length into pools as the warm start draws them (here: one batch of one size).
    let mut pack_s = Vec::new();
    let mut step_s = Vec::new();
    let mut tokens = Vec::new();
    for r in 0..reps {
        let idx = &order[3000 + r * 64..][..64];
        let b: Vec<_> = idx.iter().map(|&i| &seqs[i]).collect();
        let (_, p) = time(|| SeqBatch::pack(&cfg.layout, &b));
        tokens.push(b.iter().map(|s| s.tokens.len()).sum::<usize>() as f64);
        let (_, s) = time(|| warm(&mut opt, idx, 1e-4));
        pack_s.push(p);
        step_s.push(s);
    }
    let (ws, wt) = (median(step_s), median(tokens));
    println!(
        "warm-start step (64 random plans): {ws:.3} s, of which packing {:.4} s; {wt:.0} tokens: {:.0} tokens/s ({:.0}% of the ceiling)",
        median(pack_s),
        wt / ws,
        100.0 * wt / ws / ceiling_train
    );
    let mut by_len: Vec<usize> = order[3000..3000 + 64 * 16].to_vec();
    by_len.sort_by_key(|&i| seqs[i].tokens.len());
    let mut sorted_s = Vec::new();
    let mut sorted_t = Vec::new();
    for r in 0..reps {
        let idx = &by_len[r * 3 * 64..][..64];
        sorted_t.push(idx.iter().map(|&i| seqs[i].tokens.len()).sum::<usize>() as f64);
        sorted_s.push(time(|| warm(&mut opt, idx, 1e-4)).1);
    }
    let (ss, st) = (median(sorted_s), median(sorted_t));
    println!(
        "warm-start step (64 plans of about one length): {ss:.3} s, {st:.0} tokens: {:.0} tokens/s ({:.0}% of the ceiling)",
        st / ss,
        100.0 * st / ss / ceiling_train
    );

    // GRPO: 16 prompts × 8 answers.
    let prompts = boards(20, 99);
    let pool = InstancePool::new(&prompts, Optima::AsStored).unwrap();
    let mut reward = floe_plugin_registry::plan_reward(&PluginSpec {
        name: "tiered".into(),
        params: serde_json::json!({"prefix_credit": 0.2, "goal_credit": 0.2}),
        library: None,
    })
    .unwrap();
    let reference = policy.duplicate().unwrap();
    let gcfg = GrpoConfig { lr: 2e-4, ..GrpoConfig::default() };
    let (mut dec, mut ver, mut rew, mut upd, mut answer_tokens) = (vec![], vec![], vec![], vec![], vec![]);
    for r in 0..reps {
        let picks: Vec<u32> = (0..16).map(|k| ((r * 16 + k) * 7 % prompts.len()) as u32).collect();
        let idx: Vec<u32> = picks.iter().flat_map(|&i| std::iter::repeat_n(i, 8)).collect();
        let insts: Vec<&Instance> = idx.iter().map(|&i| &prompts[i as usize]).collect();
        let (answers, s) =
            time(|| decode(&policy, &insts, Decode::Sample { temperature: 1.0 }, 256).unwrap());
        dec.push(s);
        answer_tokens.push(answers.iter().map(|a| a.tokens.len()).sum::<usize>() as f64);
        let plans: Vec<_> = answers.iter().map(|a| a.plan.clone()).collect();
        let ((outs, records), s) = time(|| verify_plans(&pool, &idx, &insts, &plans).unwrap());
        ver.push(s);
        let (rw, s) = time(|| rewards(reward.as_mut(), &records).unwrap());
        rew.push(s);
        let rollouts = ScoredRollouts {
            instances: insts.clone(),
            answers: answers.iter().map(|a| a.tokens.clone()).collect(),
            rewards: rw,
            valid: outs.iter().map(|o| o.valid == 1).collect(),
            optimal: outs.iter().map(|o| o.optimal == 1).collect(),
            legal_steps: outs.iter().map(located_legal_steps).collect(),
        };
        upd.push(
            time(|| {
                update(&policy, Some(&reference), &mut opt, &rollouts, &gcfg, gcfg.lr, workers.as_ref())
                    .unwrap()
            })
            .1,
        );
    }
    // Sampling the same 128 answers in batches of 16 (prompts of about one length a batch).
    let mut small = Vec::new();
    for r in 0..reps {
        let picks: Vec<u32> = (0..16).map(|k| ((r * 16 + k) * 7 % prompts.len()) as u32).collect();
        let idx: Vec<u32> = picks.iter().flat_map(|&i| std::iter::repeat_n(i, 8)).collect();
        let insts: Vec<&Instance> = idx.iter().map(|&i| &prompts[i as usize]).collect();
        for (j, b) in [8usize, 16, 32, 64].into_iter().enumerate() {
            small.push((
                j,
                time(|| decode(&policy, &insts, Decode::Sample { temperature: 1.0 }, b).unwrap()).1,
            ));
        }
    }
    for (j, b) in [8usize, 16, 32, 64].into_iter().enumerate() {
        let t: Vec<f64> = small.iter().filter(|x| x.0 == j).map(|x| x.1).collect();
        println!("sampling the same in batches of {b}: {:.3} s", median(t));
    }
    let (d, v, rw, u) = (median(dec), median(ver), median(rew), median(upd));
    let at = median(answer_tokens);
    println!(
        "GRPO step: {:.3} s = sampling {d:.3} s ({:.0} answer tokens/s) + verification {v:.4} s + reward {rw:.4} s + update {u:.3} s",
        d + v + rw + u,
        at / d
    );
}
