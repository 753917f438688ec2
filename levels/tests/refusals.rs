//! The driver under bad input: every refused call is checked against a twin engine and sampler
//! that never saw it, field for field (the engine's state and weights, its pool, the buffers,
//! the kept episodes, what the sampler did), and the run goes on after it as the twin's does.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{engine, space, spec, Make};
use floe_core::engine::{outcome, CpuEngine, Engine, EngineError, StepBuffers, StepBuffersMut};
use floe_core::rng::Rng;
use floe_levels::{LevelSource, Levels, LevelsError};
use floe_plugin_api::{EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};

/// A level sampler that refills one slot and counts its calls and the episodes it was given.
struct Counting {
    calls: Arc<AtomicUsize>,
    episodes: Arc<AtomicUsize>,
}

impl LevelSampler for Counting {
    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        _: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        self.episodes.fetch_add(episodes.len(), Ordering::SeqCst);
        let weights = (0..levels.len()).map(|i| 1.0 + ((i + n) % 3) as f64).collect();
        Ok(LevelPlan {
            weights: Some(weights),
            refill: vec![(n % levels.len()) as u32],
            config: None,
            edits: Vec::new(),
        })
    }
}

/// An engine and its sampler, and their twin, stepped alike.
struct Twins {
    a: (CpuEngine, StepBuffers, Levels),
    b: (CpuEngine, StepBuffers, Levels),
    calls: [Arc<AtomicUsize>; 2],
    episodes: [Arc<AtomicUsize>; 2],
    rng: Rng,
}

impl Twins {
    /// Two engines of 12 environments over 5 slots, each with a counting sampler called every
    /// `update_every` steps, started.
    fn new(update_every: u32) -> Self {
        let calls = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
        let episodes = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
        let side = |i: usize| {
            let (mut e, mut out) = engine(12, 5);
            let sampler = Counting { calls: Arc::clone(&calls[i]), episodes: Arc::clone(&episodes[i]) };
            let source = LevelSource::new(space(), 4).unwrap();
            let mut levels = Levels::new("counting", Box::new(sampler), source, update_every);
            levels.start(&mut e, out.view()).unwrap();
            (e, out, levels)
        };
        let (a, b) = (side(0), side(1));
        Twins { a, b, calls, episodes, rng: Rng::from_counters(&[21]) }
    }

    /// One step of both, with the same random actions; the engine's step only.
    fn step_engines(&mut self) {
        let actions: Vec<u8> = (0..self.a.1.rewards.len()).map(|_| self.rng.below(5) as u8).collect();
        self.a.0.step(&actions, self.a.1.view()).unwrap();
        self.b.0.step(&actions, self.b.1.view()).unwrap();
    }

    /// The sampler's `after_step` on both, which must agree.
    fn after_step(&mut self) {
        let x = self.a.2.after_step(&mut self.a.0, self.a.1.view()).unwrap();
        let y = self.b.2.after_step(&mut self.b.0, self.b.1.view()).unwrap();
        assert_eq!(x, y);
        self.same("after a step");
    }

    /// Steps both until an episode has ended in the last step (the sampler not called).
    fn until_an_episode_ends(&mut self) -> usize {
        for _ in 0..200 {
            self.step_engines();
            if let Some(e) = (0..12).find(|&e| self.a.1.terminated[e] + self.a.1.truncated[e] > 0) {
                return e;
            }
            self.after_step();
        }
        panic!("no episode ended in 200 steps");
    }

    /// Everything the refused calls must have left alone, compared with the twin.
    fn same(&self, after: &str) {
        let (a, b) = (&self.a, &self.b);
        assert_eq!(a.0.state().unwrap(), b.0.state().unwrap(), "{after}: the state");
        assert_eq!(a.0.weights(), b.0.weights(), "{after}: the weights");
        for i in 0..a.0.pool().len() {
            assert_eq!(a.0.pool().grid(i), b.0.pool().grid(i), "{after}: slot {i}");
            assert_eq!(a.0.pool().generation(i), b.0.pool().generation(i), "{after}: slot {i}");
        }
        assert_eq!(a.1, b.1, "{after}: the buffers");
        assert_eq!(a.2.pending(), b.2.pending(), "{after}: the kept episodes");
        assert_eq!(a.2.pending_first_play(), b.2.pending_first_play(), "{after}: their first-play marks");
        assert_eq!(a.2.first_play(), b.2.first_play(), "{after}: the last step's first-play marks");
        assert_eq!(a.2.totals(), b.2.totals(), "{after}: the totals");
        assert_eq!(a.2.played(), b.2.played(), "{after}: the shapes played");
        assert_eq!(a.2.source().drawn(), b.2.source().drawn(), "{after}: the levels drawn");
        for (what, c) in [("calls", &self.calls), ("episodes", &self.episodes)] {
            assert_eq!(
                c[0].load(Ordering::SeqCst),
                c[1].load(Ordering::SeqCst),
                "{after}: the sampler's {what}"
            );
        }
    }

    /// Each of `calls` on A's engine, with A's buffers edited by `edit`, must be refused with a
    /// message that holds one of `says`, and change nothing the twin would not have.
    fn refused(&mut self, what: &str, edit: &dyn Fn(&mut StepBuffers), calls: &[&str], says: &[&str]) {
        for &call in calls {
            let (e, out, levels) = &mut self.a;
            let saved = out.clone();
            edit(out);
            let result = match call {
                "start" => levels.start(e, out.view()).map(|_| ()),
                "after_step" => levels.after_step(e, out.view()).map(|_| ()),
                "update" => levels.update(e, None, None, out.view()).map(|_| ()),
                _ => levels.record(e, &out.view()),
            };
            let err = result.expect_err(&format!("{what}: {call} is refused"));
            let text = err.to_string();
            assert!(
                matches!(err, LevelsError::Input(_) | LevelsError::Engine(EngineError::Invalid(_)))
                    && says.iter().any(|s| text.contains(s)),
                "{what}: {call}: {text}"
            );
            // The edit is undone as a host would before its retry; all else is as it was.
            *out = saved;
            self.same(&format!("{what}: a refused {call}"));
        }
    }
}

#[test]
fn a_short_buffer_of_any_kind_is_refused_by_every_call_and_changes_nothing() {
    let mut t = Twins::new(1);
    for _ in 0..5 {
        t.step_engines();
        t.after_step();
    }
    t.until_an_episode_ends();
    for (which, name) in
        ["obs", "final_obs", "rewards", "events", "terminated", "truncated", "info"].into_iter().enumerate()
    {
        let (e, out, levels) = &mut t.a;
        let saved = out.clone();
        for call in ["start", "after_step", "update", "record"] {
            let mut o = out.clone();
            let v = o.view();
            let view = match which {
                0 => StepBuffersMut { obs: &mut v.obs[1..], ..v },
                1 => StepBuffersMut { final_obs: &mut v.final_obs[1..], ..v },
                2 => StepBuffersMut { rewards: &mut v.rewards[1..], ..v },
                3 => StepBuffersMut { events: &mut v.events[1..], ..v },
                4 => StepBuffersMut { terminated: &mut v.terminated[1..], ..v },
                5 => StepBuffersMut { truncated: &mut v.truncated[1..], ..v },
                _ => StepBuffersMut { info: &mut v.info[1..], ..v },
            };
            let result = match call {
                "start" => levels.start(e, view).map(|_| ()),
                "after_step" => levels.after_step(e, view).map(|_| ()),
                "update" => levels.update(e, None, None, view).map(|_| ()),
                _ => levels.record(e, &view),
            };
            let err = result.expect_err(&format!("{name} one short: {call} is refused"));
            assert!(
                matches!(err, LevelsError::Engine(EngineError::BufferSize { what, .. }) if what == name),
                "{name}: {call}: {err}"
            );
            assert_eq!(*out, saved);
        }
        t.same(&format!("{name} one short"));
    }
    // The refused calls kept nothing: the step's episodes reach the sampler once each.
    t.after_step();
    for _ in 0..20 {
        t.step_engines();
        t.after_step();
    }
}

#[test]
fn outputs_a_step_never_writes_are_refused_before_the_sampler_sees_them() {
    let mut t = Twins::new(1);
    for _ in 0..4 {
        t.step_engines();
        t.after_step();
    }
    let ended = t.until_an_episode_ends();
    let running = (0..12).find(|&e| t.a.0.state().unwrap().envs[e].step > 1).expect("an episode under way");
    let n = t.a.1.obs.len() / 12;
    let (ended_calls, running_calls, all) = (
        &["after_step", "record"][..],
        &["start", "after_step", "update"][..],
        &["start", "after_step", "update", "record"][..],
    );
    type Edit = Box<dyn Fn(&mut StepBuffers)>;
    let edits: Vec<(&str, Edit, &[&str], &[&str])> = vec![
        (
            "a foreign slot",
            Box::new(move |o| o.info[ended].instance = 3_452_816_845),
            ended_calls,
            &["slot 3452816845"],
        ),
        (
            "a future generation",
            Box::new(move |o| o.info[ended].generation += 1),
            ended_calls,
            &["which is at generation"],
        ),
        (
            "both flags",
            Box::new(move |o| (o.terminated[ended], o.truncated[ended]) = (1, 1)),
            ended_calls,
            &["terminated 1 and truncated 1"],
        ),
        (
            "an outcome against the flags",
            Box::new(move |o| o.info[ended].outcome = outcome::RUNNING),
            ended_calls,
            &["outcome is 0"],
        ),
        (
            "a flag of 2",
            Box::new(move |o| o.terminated[running] = 2),
            all,
            &["terminated 2", "terminated is 2"],
        ),
        (
            "a running episode terminated",
            Box::new(move |o| o.terminated[running] = 1),
            all,
            &["outcome is 0", "terminated is 1"],
        ),
        (
            "a running episode's outcome",
            Box::new(move |o| o.info[running].outcome = outcome::SUCCESS),
            running_calls,
            &["info.outcome"],
        ),
        (
            "a running episode's generation",
            Box::new(move |o| o.info[running].generation = 7),
            running_calls,
            &["info.generation"],
        ),
        (
            "a running episode's return",
            Box::new(move |o| o.info[running].episode_return += 1.0),
            running_calls,
            &["info.episode_return"],
        ),
        (
            "a running episode's steps",
            Box::new(move |o| o.info[running].episode_steps += 1),
            running_calls,
            &["info.episode_steps"],
        ),
        ("an observation", Box::new(move |o| o.obs[running * n] ^= 1), running_calls, &["obs"]),
    ];
    for (what, edit, calls, says) in &edits {
        t.refused(what, edit.as_ref(), calls, says);
    }
    // After every refusal the run goes on as the twin's: each episode reaches the sampler once.
    t.after_step();
    for _ in 0..20 {
        t.step_engines();
        t.after_step();
    }
    assert!(t.episodes[0].load(Ordering::SeqCst) > 0);
}

#[test]
fn a_refused_refill_changes_nothing() {
    let mut t = Twins::new(0);
    for _ in 0..3 {
        t.step_engines();
        t.after_step();
    }
    let state = t.a.0.state().unwrap();
    let running = (0..12).find(|&e| state.envs[e].step > 0).expect("an episode under way");
    let slot = state.envs[running].instance as usize;
    let level = LevelSource::new(space(), 8).unwrap().draw(1).unwrap();
    type Edit = fn(&mut StepBuffers, usize);
    let edits: [(&str, Edit); 5] = [
        ("terminated", |o, e| o.terminated[e] = 1),
        ("truncated", |o, e| o.truncated[e] = 1),
        ("info.outcome", |o, e| o.info[e].outcome = outcome::SUCCESS),
        ("info.generation", |o, e| o.info[e].generation += 3),
        ("obs", |o, e| {
            let n = o.obs.len() / 12;
            o.obs[e * n + 1] ^= 1;
        }),
    ];
    for (what, edit) in edits {
        let (e, out, _) = &mut t.a;
        let saved = out.clone();
        edit(out, running);
        let err = e.refill(&[slot], &level, out.view()).unwrap_err();
        assert!(err.to_string().contains(what), "{what}: {err}");
        *out = saved;
        t.same(&format!("a refill with {what} edited"));
    }
    // The same refill of unedited buffers goes through on both.
    for (e, out, _) in [&mut t.a, &mut t.b] {
        e.refill(&[slot], &level, out.view()).unwrap();
    }
    t.same("the refill");
}

#[test]
fn a_call_before_the_engines_reset_is_not_reset() {
    let (mut reset, mut out) = engine(4, 3);
    let cfg = reset.config().clone();
    let mut fresh = CpuEngine::new(cfg, Arc::clone(reset.pool())).unwrap();
    let mut levels = spec("uniform", serde_json::json!({"max_plays": 1}), 1).levels();
    for call in ["start", "after_step", "update", "record"] {
        let r = match call {
            "start" => levels.start(&mut fresh, out.view()).map(|_| ()),
            "after_step" => levels.after_step(&mut fresh, out.view()).map(|_| ()),
            "update" => levels.update(&mut fresh, None, None, out.view()).map(|_| ()),
            _ => levels.record(&fresh, &out.view()),
        };
        let e = r.expect_err(call);
        assert!(matches!(e, LevelsError::Engine(EngineError::NotReset(_))), "{call}: {e}");
    }
    assert_eq!(levels.engine(), None, "a refused call binds nothing");
    assert_eq!(levels.totals(), Default::default());
    levels.start(&mut reset, out.view()).unwrap();
    assert_eq!(levels.engine(), Some(reset.id()));
}

#[test]
fn a_sampler_runs_with_the_engine_it_first_ran_with() {
    let (mut a, mut out_a) = engine(4, 3);
    let (mut b, mut out_b) = engine(4, 3);
    let mut levels = spec("uniform", serde_json::json!({"max_plays": 1}), 1).levels();
    levels.start(&mut a, out_a.view()).unwrap();
    let before = b.state().unwrap();
    for call in ["start", "after_step", "update", "record"] {
        let r = match call {
            "start" => levels.start(&mut b, out_b.view()).map(|_| ()),
            "after_step" => levels.after_step(&mut b, out_b.view()).map(|_| ()),
            "update" => levels.update(&mut b, None, None, out_b.view()).map(|_| ()),
            _ => levels.record(&b, &out_b.view()),
        };
        let e = r.expect_err(call);
        assert!(matches!(e, LevelsError::OtherEngine { .. }), "{call}: {e}");
        let text = e.to_string();
        assert!(text.contains(&a.id().to_string()) && text.contains(&b.id().to_string()), "{text}");
    }
    assert_eq!(b.state().unwrap(), before);
    assert_eq!(b.weights(), None);
    levels.after_step(&mut a, out_a.view()).unwrap();
}
