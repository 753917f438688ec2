//! What carries a 2-agent model over to more agents: no parameter is indexed by an agent's
//! number, relabelling the agents changes nothing but the labels of the plan, and a checkpoint
//! trained on 2-agent boards alone answers 5-agent boards.

mod common;

use floe_core::generator::generate;
use floe_core::{GeneratorConfig, Instance};
use floe_train::config::ValidationConfig;
use floe_train::sample::{decode, Decode};
use floe_train::{load_policy, run, ModelConfig, Policy};

/// libtorch's global generator is one per process, and the tests of this file run side by side:
/// each holds this lock while it seeds and draws (a new policy's weights, sampling, a training
/// run), so that no other test's draw lands between its seed and its draws.
static GLOBAL_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn hold_rng() -> std::sync::MutexGuard<'static, ()> {
    GLOBAL_RNG.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The parameter shapes of two models that differ only in what a table could be sized by.
fn shapes(p: &Policy) -> Vec<(String, Vec<i64>)> {
    p.named_variables().into_iter().map(|(n, t)| (n, t.size())).collect()
}

#[test]
fn no_parameter_is_indexed_by_an_agent_number() {
    let _rng = hold_rng();
    tch::manual_seed(0);
    let p = Policy::new(&ModelConfig::default()).unwrap();
    for (name, shape) in shapes(&p) {
        assert!(!name.contains("agent"), "{name} {shape:?}");
        // The only tables with a row per value are the kind, row, col, role, time, distance,
        // move-status and relation tables; none has a row per agent count.
        if name.starts_with("emb_") || name.starts_with("attn_") {
            let rows = shape[0];
            let l = ModelConfig::default().layout;
            let allowed = [
                floe_train::tokens::kind::COUNT,
                l.side_table(),
                floe_train::tokens::role::COUNT,
                l.time_table(),
                l.dist_table(),
                5 * floe_train::tokens::status::COUNT,
                18,
            ];
            assert!(allowed.contains(&rows), "{name} has {rows} rows");
        }
    }
    // The layout has no agent field: a model reads any agent count.
    let layout = serde_json::to_value(ModelConfig::default().layout).unwrap();
    assert_eq!(layout.as_object().unwrap().keys().cloned().collect::<Vec<_>>(), ["max_side", "max_time"]);
}

fn relabelled(i: &Instance, perm: &[usize]) -> Instance {
    let mut j = i.clone();
    j.agents = perm.iter().map(|&a| i.agents[a]).collect();
    j.optimal = None;
    j
}

#[test]
fn relabelling_the_agents_gives_the_same_plan() {
    let _rng = hold_rng();
    tch::manual_seed(3);
    let cfg = common::tiny(3).model;
    let p = Policy::new(&cfg).unwrap();
    let insts = generate(
        &GeneratorConfig::default().size(5).agents(4).hole_ratio(0.1).wait_ratio(0.5).count(6).seed(11),
    )
    .unwrap();
    let perm = [2, 0, 3, 1];
    let moved: Vec<Instance> = insts.iter().map(|i| relabelled(i, &perm)).collect();
    for mode in [Decode::Greedy, Decode::Sample { temperature: 1.0 }] {
        tch::manual_seed(7);
        let a = decode(&p, &insts.iter().collect::<Vec<_>>(), mode, 8).unwrap();
        tch::manual_seed(7);
        let b = decode(&p, &moved.iter().collect::<Vec<_>>(), mode, 8).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.tokens, y.tokens, "the same answer tokens");
            if x.plan.moves.len() == 4 {
                let back: Vec<_> = perm.iter().map(|&o| x.plan.moves[o].clone()).collect();
                assert_eq!(back, y.plan.moves, "agent perm[i] of the first is agent i of the second");
            }
        }
    }
}

#[test]
fn a_two_agent_checkpoint_answers_five_agent_boards() {
    let _rng = hold_rng();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::tiny(2);
    cfg.model.layout.max_side = 7;
    cfg.validation =
        ValidationConfig { sizes: vec![3, 4], agents: vec![2], per_cell: 4, ..Default::default() };
    cfg.warm_start.data.agents = vec![2];
    cfg.warm_start.steps = 20;
    cfg.rounds.rounds = 0;
    run(&cfg, &common::opts(dir.path()), common::plugins(&cfg)).unwrap();
    let policy = load_policy(&dir.path().join("checkpoint.safetensors")).unwrap();
    let boards = generate(
        &GeneratorConfig::default().size(7).agents(5).hole_ratio(0.1).wait_ratio(0.5).count(6).seed(5),
    )
    .unwrap();
    let answers = decode(&policy, &boards.iter().collect::<Vec<_>>(), Decode::Greedy, 4).unwrap();
    assert_eq!(answers.len(), 6);
    for a in &answers {
        assert!(!a.tokens.is_empty());
    }
    let (report, outcomes) = floe_train::evaluate_each(
        &policy,
        &boards.iter().collect::<Vec<_>>(),
        4,
        &floe_core::progress::Silent,
    )
    .unwrap();
    assert_eq!(outcomes.len(), 6);
    assert_eq!(report.cells.iter().map(|c| c.instances).sum::<u32>(), 6);
}
