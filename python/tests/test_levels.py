"""Level samplers from Python: each built-in steers a VectorEnv and refills its pool, a host's own
scores reach PLR, a C sampler library drives an environment, refills cut episodes short inside a
step as Gymnasium expects, bad weights and a misbehaving sampler raise ValueErrors that name the
value and change nothing, PettingZoo and Gymnasium's checker take a sampler, and shards of one
pool (plain objects, and Ray actors) keep the same pool by applying one decision each."""

import json
import pathlib
import pickle
import shutil
import subprocess

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

import floe
from floe.ray import LevelHub, LevelShard, sync_levels

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "plugins" / "api" / "include"
SPACE = {"agents": [2, 3], "size": [5, 7], "hole_ratio": [0.0, 0.2], "wait_ratio": [0.0, 0.5], "solve": False}


def sampler(name="uniform", params=None, update_every=0, **kw):
    return floe.Levels(name, params, space=SPACE, seed=5, update_every=update_every, **kw)


def run(env, steps, seed=7):
    """``steps`` random steps; the episodes that ended, as info rows."""
    env.action_space.seed(seed)
    ended = []
    for _ in range(steps):
        _, _, term, trunc, info = env.step(env.action_space.sample())
        done = term | trunc
        ended.append(np.stack([info["final_info"][k][done] for k in ("slot", "generation")], axis=1))
    return np.concatenate(ended)


def compile_c(tmp_path_factory, source: pathlib.Path, name: str) -> str:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build the C level sampler")
    out = tmp_path_factory.mktemp("c") / f"lib{name}.so"
    subprocess.run([cc, "-shared", "-fPIC", "-Wall", "-Werror", "-I", str(INCLUDE), "-o", str(out), str(source)],
                   check=True)
    return str(out)


@pytest.mark.parametrize("name,params", [
    ("uniform", {"max_plays": 1}),
    ("plr", {"fresh": 0.5}),
    ("learnability", {"min_episodes": 1, "window": 4, "refill_fraction": 0.5}),
])
def test_each_built_in_sampler_steers_a_vector_env_and_refills_its_pool(name, params):
    levels = sampler(name, params, update_every=4)
    env = floe.VectorEnv(12, 16, mode="soft", episode_limit=8, levels=levels)
    assert env.levels is levels and levels.engine is env.engine
    assert env.engine.room == levels.room == (3, 7) and env.engine.max_agents == 3
    env.reset(seed=1)
    assert env.engine.weights is not None, "start set the first weights"
    ended = run(env, 60)
    t = levels.totals
    assert t["episodes"] > 50 and t["refilled"] > 0, t
    slots = env.engine.levels()
    assert slots[:, 0].tolist() == list(range(12))
    assert int(floe.level_columns(slots)["generation"].sum()) == t["refilled"], "a refill is a generation"
    assert levels.drawn == 12 + t["refilled"], "the first pool and every refill came from the space"
    assert sum(levels.played.values()) >= t["episodes"]
    assert ended[:, 1].max() > 0, "episodes were played on refilled levels"
    for (size, agents, holes), n in levels.played.items():
        assert 5 <= size <= 7 and 2 <= agents <= 3 and 0 <= holes <= 20 and n > 0


def test_host_scores_reach_plr_and_decide_what_it_replays():
    params = {"fresh": 0.0, "staleness_coef": 0.0, "replay_prob": 1.0}
    for favoured in (4, 1):
        levels = sampler("plr", params)
        env = floe.VectorEnv(6, 16, mode="soft", episode_limit=8, levels=levels)
        env.reset(seed=1)
        run(env, 30)
        episodes = levels.pending
        assert episodes.dtype == np.uint32 and episodes.shape[1] == len(floe.INFO_FIELDS)
        slot = floe.info_columns(episodes)["slot"]
        assert (slot == favoured).any()
        scores = np.where(slot == favoured, 1.0, 0.0).astype(np.float32)
        before = env.engine.weights
        with pytest.raises(ValueError, match=f"{len(scores) - 1} scores for {len(scores)} episodes") as info:
            levels.update(episodes, scores[1:])
        assert isinstance(info.value, floe.BadInput)
        with pytest.raises(ValueError, match="score 0 is NaN"):
            levels.update(episodes, np.full(len(scores), np.nan, np.float32))
        assert np.array_equal(env.engine.weights, before) and np.array_equal(levels.pending, episodes)
        done = levels.update(episodes, scores)
        assert done["episodes"] == len(episodes) and done["weights"]
        assert int(np.argmax(env.engine.weights)) == favoured, env.engine.weights
        assert len(levels.pending) == 0, "an update drops the kept episodes"


def test_first_plays_and_replays_are_marked_by_the_history():
    """An episode replays its level when an episode on the same slot and generation ended in a
    step before the one it began in: the marks against that definition, read off the history
    (the step's outputs read before the host's update, whose refills rewrite them)."""
    assert sampler("plr").robust and not sampler("plr", {"robust": False}).robust
    assert not sampler("uniform").robust
    levels = sampler("plr", {"fresh": 0.5})
    env = floe.VectorEnv(8, 6, mode="soft", episode_limit=6, levels=levels)
    env.reset(seed=2)
    assert levels.first_play.shape == (0,) and levels.first_play.dtype == np.bool_
    env.action_space.seed(4)
    ends = []  # (step, slot, generation) of every ended episode
    marks = {True: 0, False: 0}
    for t in range(80):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        cols = floe.info_columns(env.engine.info)
        began = t + 1 - cols["episode_steps"].astype(np.int64)
        want = np.array([not any(s < b and slot == sl and g == ge for s, slot, g in ends)
                         for b, sl, ge in zip(began, cols["slot"], cols["generation"])])
        assert np.array_equal(levels.first_play, want), t
        done = term | trunc
        ends += [(t, int(sl), int(ge)) for sl, ge in zip(cols["slot"][done], cols["generation"][done])]
        assert len(levels.pending_first_play) == len(levels.pending)
        for m in want:
            marks[bool(m)] += 1
        if t % 4 == 3:
            levels.update()
            assert len(levels.pending_first_play) == 0
    assert marks[True] > 0 and marks[False] > 0 and levels.totals["refilled"] > 0, marks


def test_final_info_has_the_episodes_return_slot_and_generation():
    levels = sampler("uniform", {"max_plays": 1}, update_every=1)
    env = floe.VectorEnv(4, 8, mode="soft", episode_limit=6, levels=levels)
    obs, info = env.reset(seed=3)
    assert set(info["final_info"]) == set(floe.INFO_FIELDS)
    assert info["final_info"]["episode_return"].dtype == np.float32
    env.action_space.seed(1)
    returns = np.zeros(8, np.float64)
    checked = 0
    for _ in range(40):
        _, reward, term, trunc, info = env.step(env.action_space.sample())
        returns += reward
        fi = info["final_info"]
        assert fi["episode_return"].dtype == np.float32
        # A copy, safe to keep: the next step overwrites the engine's rows.
        assert not np.shares_memory(fi["episode_return"], env.engine.info)
        for e in np.flatnonzero(term | trunc):
            assert fi["episode_return"][e] == pytest.approx(returns[e], rel=1e-5, abs=1e-5)
            assert fi["slot"][e] < 4 and fi["agents_on_goal"][e] <= 3
            returns[e] = 0.0
            checked += 1
    assert checked > 10


def test_a_refill_cuts_running_episodes_short_within_the_step():
    # Two slots played by 16 environments, whose episodes end at different steps (strict mode:
    # a failure ends one), and PLR keeping the whole pool for new levels: every level that has
    # been played is replaced at the next step, while other environments play it.
    levels = sampler("plr", {"fresh": 1.0}, update_every=1)
    env = floe.VectorEnv(2, 16, mode="strict", episode_limit=40, levels=levels)
    env.reset(seed=2)
    env.action_space.seed(4)
    cut = 0
    for _ in range(40):
        before = levels.totals["truncated"]
        generations = env.engine.levels()[:, 1].copy()
        _, _, term, trunc, info = env.step(env.action_space.sample())
        new = levels.totals["truncated"] - before
        if not new:
            continue
        fi = info["final_info"]
        early = np.flatnonzero(trunc & (fi["episode_steps"] < 40))
        assert len(early) == new, "the episodes the refill cut are truncated in this step"
        assert info["_final_info"][early].all() and info["_final_obs"][early].all()
        assert (fi["outcome"][early] == 3).all(), "truncated"
        # They played the level that was there before the refill.
        assert (fi["generation"][early] == generations[fi["slot"][early]]).all()
        assert (env.engine.levels()[fi["slot"][early], 1] > fi["generation"][early]).all()
        cut += new
    assert cut > 0


def test_engine_refill_truncates_or_restarts_and_refuses_bad_slots(small):
    room = (3, 6)
    engine = floe.Engine(small[:4], {"num_envs": 6, "mode": "soft", "episode_limit": 30}, room=room)
    assert engine.room == room
    engine.reset(1)
    new = floe.generate(2, 6, count=2, seed=11)
    playing = engine.current_instances()
    slot = playing[0]
    done = engine.refill([slot], [new[0]])
    assert done == {"truncated": 0, "restarted": playing.count(slot)}, "at step 0 they start on the new level"
    assert engine.level(slot).width == 6 and engine.level(slot).num_agents == 2
    engine.step(np.zeros((6, 3), np.uint8))  # every agent waits: no episode ends
    obs = engine.obs.copy()
    playing = engine.current_instances()
    slot = playing[1]
    generation = engine.levels()[slot, 1]
    done = engine.refill([slot], [new[1]])
    on = [e for e, s in enumerate(playing) if s == slot]
    assert done == {"truncated": len(on), "restarted": 0}
    for e in on:
        assert engine.truncated[e] == 1 and engine.info[e, 1] == 3 and engine.info[e, 4] == slot
        assert np.array_equal(engine.final_obs[e], obs[e]), "the observation it ended with"
    assert engine.levels()[slot, 1] == generation + 1
    state = engine.levels().copy(), engine.obs.copy(), engine.info.copy(), engine.truncated.copy()
    for slots, levels, says in [
        ([9], new[:1], "slot 9 is out of range"),
        ([-1], new[:1], "slot -1 is out of range"),
        ([0, 0], new, "slot 0 is named twice"),
        ([0, 1], new[:1], "2 slots but 1 levels"),
        ([0], floe.generate(4, 6, count=1, seed=2), "does not fit the pool's room"),
    ]:
        with pytest.raises(ValueError, match=says):
            engine.refill(slots, levels)
        after = engine.levels(), engine.obs, engine.info, engine.truncated
        assert all(np.array_equal(a, b) for a, b in zip(state, after))


@pytest.mark.parametrize("weights,says", [
    ([1.0, -2.0, 1.0, 1.0], "weight 1 is -2"),
    ([1.0, 1.0, np.nan, 1.0], "weight 2 is NaN"),
    ([np.inf, 1.0, 1.0, 1.0], "weight 0 is inf"),
    ([0.0, 0.0, 0.0, 0.0], "all 4 weights are zero"),
    ([1.0, 1.0, 1.0], "3 weights for a pool of 4"),
])
def test_bad_weights_raise_a_value_error_naming_the_value_and_change_nothing(small, weights, says):
    engine = floe.Engine(small[:4], {"num_envs": 4})
    engine.reset(0)
    good = np.array([1.0, 2.0, 0.0, 1.0])
    engine.set_weights(good)
    with pytest.raises(ValueError, match=says) as info:
        engine.set_weights(weights)
    assert isinstance(info.value, floe.BadInput)
    assert np.array_equal(engine.weights, good)
    # The same weights in a decision: refused by apply, nothing changed.
    decision = floe.LevelDecision(weights)
    with pytest.raises(ValueError, match=says):
        engine.apply(decision)
    assert np.array_equal(engine.weights, good)
    engine.set_weights(None)
    assert engine.weights is None


def test_weights_steer_the_draw(small):
    engine = floe.Engine(small[:4], {"num_envs": 64})
    engine.set_weights([0.0, 0.0, 1.0, 0.0])
    engine.reset(3)
    assert set(engine.current_instances()) == {2}


FAULTY = r"""
/* A level sampler that answers its first call (no episodes) well and every later one with
 * the garbage its "mode" parameter names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "floe_plugin.h"

static const char *MODES[] = {"negative", "nan", "infinite", "zero", "outside", "twice", "fails", "config"};

typedef struct {
    floe_plugin_v1 plugin;
    int mode;
} faulty;

static const char *last_error(void *user_data) {
    (void)user_data;
    return "the faulty sampler fails on purpose";
}

static floe_status update_levels(void *user_data, const floe_level_record *levels, size_t n,
                                 const floe_env_info *episodes, size_t m, const float *scores, double *w,
                                 uint32_t *has_weights, uint32_t *refill, size_t *refill_len,
                                 const char **config) {
    faulty *self = user_data;
    (void)levels, (void)episodes, (void)scores;
    for (size_t i = 0; i < n; i++) w[i] = 1.0;
    *has_weights = 1;
    *refill_len = 0;
    *config = NULL;
    if (m == 0) return FLOE_STATUS_OK;
    switch (self->mode) {
    case 0: w[1] = -1.0; break;
    case 1: w[2] = NAN; break;
    case 2: w[0] = INFINITY; break;
    case 3: for (size_t i = 0; i < n; i++) w[i] = 0.0; break;
    case 4: refill[0] = (uint32_t)n + 5; *refill_len = 1; break;
    case 5: refill[0] = 0; refill[1] = 0; *refill_len = 2; break;
    case 6: return FLOE_STATUS_FAILED;
    default: *config = "{\"sizes\": 3}"; break;
    }
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) { free(user_data); }

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    faulty *self = calloc(1, sizeof *self);
    if (self == NULL) { *out_error = "out of memory"; return FLOE_STATUS_FAILED; }
    self->mode = 7;
    for (int i = 0; i < 8; i++) {
        if (params_json && strstr(params_json, MODES[i])) self->mode = i;
    }
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_LEVEL_SAMPLER;
    self->plugin.name = "faulty";
    self->plugin.version = "0.0.1";
    self->plugin.user_data = self;
    self->plugin.last_error = last_error;
    self->plugin.destroy = destroy;
    self->plugin.update_levels = update_levels;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
"""


@pytest.fixture(scope="module")
def faulty_library(tmp_path_factory):
    source = tmp_path_factory.mktemp("src") / "faulty.c"
    source.write_text(FAULTY)
    return compile_c(tmp_path_factory, source, "faulty_levels")


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    return compile_c(tmp_path_factory, ROOT / "plugins" / "examples" / "c" / "level_sampler.c", "c_levels")


@pytest.mark.parametrize("mode,cls,says", [
    ("negative", floe.BadOutput, "weight 1 is -1"),
    ("nan", floe.BadOutput, "weight 2 is NaN"),
    ("infinite", floe.BadOutput, "weight 0 is inf"),
    ("zero", floe.BadOutput, "all 4 weights are zero"),
    ("outside", floe.BadOutput, "refill slot 9, outside a pool of 4 slots"),
    ("twice", floe.BadOutput, "refill slot 0 twice"),
    ("fails", floe.PluginFailed, "fails on purpose"),
    ("config", floe.BadOutput, "configuration"),
])
def test_a_misbehaving_c_sampler_is_contained_and_changes_nothing(faulty_library, mode, cls, says):
    levels = floe.Levels("faulty", {"mode": mode}, library=faulty_library, space=SPACE)
    env = floe.VectorEnv(4, 8, mode="soft", episode_limit=4, levels=levels)
    env.reset(seed=0)
    run(env, 6)
    engine = env.engine
    state = [engine.levels(), engine.weights, engine.obs, engine.final_obs, engine.info, engine.truncated,
             levels.pending]
    state = [a.copy() for a in state]
    with pytest.raises(cls, match=says) as info:
        levels.update()
    assert "faulty" in str(info.value), "the message names the sampler"
    assert isinstance(info.value, ValueError) == (cls is floe.BadOutput)
    after = [engine.levels(), engine.weights, engine.obs, engine.final_obs, engine.info, engine.truncated,
             levels.pending]
    assert all(np.array_equal(a, b) for a, b in zip(state, after)), "the engine and the kept episodes are as they were"
    assert levels.totals["refilled"] == 0
    run(env, 2)  # the environment goes on


def test_a_c_level_sampler_library_drives_a_vector_env(c_library):
    # One agent on 2x2 and 3x3 boards without holes: random actions solve some levels, which the
    # sampler then refills; its weights are 1 for levels not scored yet, 0.05 + p(1-p) else.
    space = {"agents": [1, 1], "size": [2, 3], "hole_ratio": [0.0, 0.0], "wait_ratio": [0.0, 0.0]}
    levels = floe.Levels("c-learnability", {"min_episodes": 1}, library=c_library, space=space,
                               update_every=2)
    env = floe.VectorEnv(32, 8, mode="soft", episode_limit=8, levels=levels)
    env.reset(seed=1)
    run(env, 60)
    t = levels.totals
    assert t["refilled"] > 0 and t["episodes"] > 40, t
    w = env.engine.weights
    assert ((w == 1.0) | ((w >= 0.05) & (w <= 0.3))).all() and (w < 1.0).any(), w
    with pytest.raises(floe.ConfigError, match="min_episodes"):
        floe.Levels("c-learnability", {"min_episodes": 0}, library=c_library, space=space)


def test_settings_and_attachment_are_checked(small):
    with pytest.raises(ValueError, match=r"agents \[3, 2\]"):
        floe.Levels(space={"agents": [3, 2]})
    with pytest.raises(floe.ConfigError, match="replay_prob"):
        floe.Levels("plr", {"replay_prob": 2.0})
    with pytest.raises(floe.UnknownPlugin, match="nope"):
        floe.Levels("nope")
    with pytest.raises(floe.ConfigError, match="spaces"):
        floe.Levels(space={"spaces": 1})
    levels = sampler()
    with pytest.raises(ValueError, match="drives no engine"):
        levels.start()
    with pytest.raises(ValueError, match="room=sampler.room"):
        levels.attach(floe.Engine(small, {"num_envs": 2}))
    assert levels.engine is None
    engine = floe.Engine(small, {"num_envs": 2}, room=levels.room)
    levels.attach(engine)
    levels.attach(engine)
    with pytest.raises(ValueError, match="steers another engine"):
        levels.attach(floe.Engine(small, {"num_envs": 2}, room=levels.room))
    with pytest.raises(ValueError, match="is a count"):
        floe.VectorEnv(8, 4)
    with pytest.raises(ValueError, match="level space of one agent"):
        floe.VectorEnv(4, 2, single_agent=True, levels=sampler())


@pytest.mark.parametrize("name,params", [
    ("fixed", {"phase_episodes": 30}),
    ("sec", {"phase_episodes": 30}),
    ("phases", {"phase_episodes": 30, "designer": {"name": "plr"}}),
])
def test_any_curriculum_designs_phases(name, params):
    levels = sampler(name, params, update_every=4)
    env = floe.VectorEnv(12, 8, mode="soft", episode_limit=8, levels=levels)
    env.reset(seed=1)
    assert levels.totals["refilled"] == 12, "the first phase's configuration fills the pool"
    run(env, 60)
    assert levels.totals["refilled"] >= 24, "a later phase refilled it again"
    assert levels.config is not None


def test_outputs_a_step_never_wrote_are_refused_and_change_nothing():
    """The level API's rules from Python, as from C and Rust: a call before the reset, an ended
    episode on a slot outside the pool, and edited outputs are refused with floe.BadInput naming
    the value, before anything changes; a twin engine that never saw them stays equal, and the
    episodes reach the sampler once each after a retry."""
    def side():
        levels = sampler("uniform", {"max_plays": 1}, update_every=2)
        engine = floe.Engine(levels.draw(5), {"num_envs": 7, "mode": "soft", "episode_limit": 5},
                             room=levels.room)
        levels.attach(engine)
        return levels, engine

    (a, ea), (b, eb) = side(), side()
    with pytest.raises(floe.BadInput, match="reset"):
        a.start()
    for levels, engine in ((a, ea), (b, eb)):
        engine.reset(4)
        levels.start()

    def same():
        for x, y in ((ea.levels(), eb.levels()), (ea.obs, eb.obs), (ea.info, eb.info),
                     (ea.terminated, eb.terminated), (ea.truncated, eb.truncated), (a.pending, b.pending)):
            assert np.array_equal(x, y)
        assert ea.current_instances() == eb.current_instances()

    rng = np.random.default_rng(3)
    refused = 0
    for _ in range(40):
        actions = rng.integers(0, 5, size=(7, ea.max_agents), dtype=np.uint8)
        ea.step(actions)
        eb.step(actions)
        ended = np.flatnonzero(ea.terminated | ea.truncated)
        edits = []
        if len(ended):
            e = int(ended[0])
            edits.append((ea.info, (e, 4), 3452816845, "slot 3452816845"))
            edits.append((ea.truncated, e, 1 - int(ea.truncated[e]) if ea.terminated[e] else 2, "terminated"))
        for array, at, value, says in edits:
            kept = array[at]
            array[at] = value
            with pytest.raises(floe.BadInput, match=says):
                a.after_step()
            array[at] = kept
            same()
            refused += 1
        # An observation edited: the sampler's next call refuses it, and nothing changes.
        kept = ea.obs.copy()
        ea.obs.reshape(-1)[0] ^= 1
        with pytest.raises(floe.BadInput, match="obs"):
            a.update()
        ea.obs[...] = kept
        same()
        assert a.after_step() == b.after_step()
        same()
    assert refused > 5
    assert a.totals == b.totals and a.totals["episodes"] > 0


def test_gymnasium_check_env_takes_a_sampler():
    # A sampler that refills would change the levels between the checker's seeded resets, which
    # it compares; weights alone do not.
    env = floe.Env(8, mode="soft", episode_limit=12, levels=sampler("uniform", update_every=3))
    check_env(env, skip_render_check=True)
    assert env.levels.totals["weights"]


def test_a_single_environment_ends_an_episode_a_refill_cuts_short():
    # The sampler is called every third step, so it may replace the level in play mid-episode.
    env = floe.Env(2, mode="strict", episode_limit=50, levels=sampler("plr", {"fresh": 1.0}, update_every=3))
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(400):
        _, _, term, trunc, info = env.step(env.action_space.sample())
        if trunc and info["episode_steps"] < 50:
            assert info["outcome"] == "truncated" and isinstance(info["episode_return"], float)
            break
        if term or trunc:
            env.reset()
    else:
        pytest.fail("no episode was cut short by a refill")


def test_pettingzoo_takes_a_sampler():
    levels = sampler("learnability", {"min_episodes": 1, "window": 2, "refill_fraction": 0.5}, update_every=2)
    env = floe.ParallelEnv(6, mode="soft", episode_limit=10, levels=levels)
    assert env.possible_agents == ["agent_0", "agent_1", "agent_2"]
    parallel_api_test(env, num_cycles=300)
    assert levels.totals["refilled"] > 0
    # After refills, the agents of an episode are its level's (2 or 3).
    env.reset(seed=1)
    for _ in range(50):
        slot = env.engine.current_instances()[0]
        assert len(env.agents) == env.engine.level(slot).num_agents
        _, _, _, _, infos = env.step({a: env.action_space(a).sample() for a in env.agents})
        if not env.agents:
            assert {"episode_return", "slot", "generation", "agents_on_goal"} <= set(next(iter(infos.values())))
            env.reset()


def test_decisions_and_instances_pickle():
    levels = sampler("plr", {"fresh": 0.5})
    inst = levels.draw(3)
    assert pickle.loads(pickle.dumps(inst)) == inst
    assert floe.Instance(inst[0].to_json()) == inst[0]
    d = floe.LevelDecision([1.0, 2.0, 3.0], [2], inst[:1], episodes=4)
    back = pickle.loads(pickle.dumps(d))
    assert back == d and back.refill == [2] and back.levels == inst[:1] and back.episodes == 4
    assert back.weights.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="2 refill slots but 1 levels"):
        floe.LevelDecision(None, [0, 1], inst[:1])
    with pytest.raises(ValueError, match="refill slot -1 is negative"):
        floe.LevelDecision(None, [-1], inst[:1])


def shard(pool, room, seed):
    env = floe.VectorEnv(pool, 8, mode="soft", episode_limit=6, levels=LevelShard(room))
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def same_pool(a, b):
    la, lb = a.engine.levels(), b.engine.levels()
    return (np.array_equal(la[:, :7], lb[:, :7]) and np.array_equal(a.engine.weights, b.engine.weights)
            and all(a.engine.level(i) == b.engine.level(i) for i in range(len(la))))


def test_shards_that_apply_one_decision_keep_one_pool():
    hub = LevelHub("plr", {"fresh": 0.5}, space=SPACE, seed=3)
    pool = hub.pool(6)
    assert hub.pool(6) == pool
    with pytest.raises(ValueError, match="6 levels, not 5"):
        hub.pool(5)
    envs = [shard(pool, hub.room(), seed) for seed in (1, 2)]
    shards = [e.levels for e in envs]
    first = sync_levels(hub, shards)  # the sampler's first weights, applied at once after a reset
    assert first.episodes == 0 and first.weights is not None
    assert np.array_equal(envs[0].engine.weights, first.weights)
    for _ in range(8):
        for e in envs:
            for _ in range(5):
                e.step(e.action_space.sample())
        # The host's scores: each shard's pending episodes, scored by their returns.
        scores = [-floe.info_columns(s.pending)["episode_return"] for s in shards]
        sync_levels(hub, shards, scores)
        with pytest.raises(RuntimeError, match="step before"):
            shards[0].report()
        for e in envs:
            e.step(e.action_space.sample())  # the decision lands in this step
        assert same_pool(*envs)
    assert hub.totals()["refilled"] > 0 and hub.totals()["decisions"] == 9
    assert envs[0].engine.levels()[:, 1].sum() > 0
    # A shard that misses a decision is caught at the next one.
    shards[0].apply(floe.LevelDecision(None, [0], sampler().draw(1)))
    for e in envs:
        e.step(e.action_space.sample())
    with pytest.raises(ValueError, match="shard 1's pool differs from shard 0's at slot"):
        hub.decide([s.report() for s in shards])
    with pytest.raises(ValueError, match="shard 1 gave no scores and shard 0 did"):
        hub.decide([shards[0].report(scores=[]), shards[0].report()])


def test_ray_actor_shards_keep_one_pool():
    ray = pytest.importorskip("ray")

    class EnvShard:
        """A shard of the pool in its own process: a VectorEnv with a LevelShard."""

        def __init__(self, pool, room, seed):
            self.env = floe.VectorEnv(pool, 8, mode="soft", episode_limit=6, levels=LevelShard(room))
            self.env.reset(seed=seed)
            self.env.action_space.seed(seed)

        def run(self, steps):
            for _ in range(steps):
                self.env.step(self.env.action_space.sample())

        def report(self, scores=None):
            return self.env.levels.report(scores)

        def apply(self, decision):
            return self.env.levels.apply(decision)

        def pool(self):
            e = self.env.engine
            return e.levels()[:, :7], e.weights, [e.level(i).to_json() for i in range(e.num_instances)]

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        hub = ray.remote(LevelHub).remote("plr", {"fresh": 0.5}, space=SPACE, seed=3)
        pool = ray.get(hub.pool.remote(6))
        room = ray.get(hub.room.remote())
        actors = [ray.remote(EnvShard).remote(pool, room, seed) for seed in (1, 2)]
        sync_levels(hub, actors)
        for _ in range(4):
            ray.get([a.run.remote(6) for a in actors])
            sync_levels(hub, actors)
        ray.get([a.run.remote(1) for a in actors])
        (la, wa, ia), (lb, wb, ib) = ray.get([a.pool.remote() for a in actors])
        assert np.array_equal(la, lb) and np.array_equal(wa, wb) and ia == ib
        assert la[:, 1].sum() > 0, "the pool was refilled"
    finally:
        ray.shutdown()


def test_the_gpu_samples_and_refills_as_the_cpu_does():
    """The same sampler settings on both backends: every output, the weights and the pool the
    same after every step. Skipped without a GPU adapter unless FLOE_REQUIRE_GPU=1."""
    import os

    def make(backend):
        levels = sampler("plr", {"fresh": 0.5}, update_every=2)
        return floe.VectorEnv(6, 8, mode="strict", episode_limit=9, backend=backend, levels=levels)

    try:
        gpu = make("gpu")
    except floe.EngineFailed as e:
        if os.environ.get("FLOE_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"no GPU adapter: {e}")
    cpu = make("cpu")
    assert np.array_equal(cpu.reset(seed=1)[0], gpu.reset(seed=1)[0])
    cpu.action_space.seed(0)
    for _ in range(40):
        a = cpu.action_space.sample()
        c, g = cpu.step(a), gpu.step(a)
        for x, y in zip(c[:4], g[:4]):
            assert np.array_equal(x, y)
        assert np.array_equal(c[4]["final_obs"], g[4]["final_obs"])
        assert np.array_equal(cpu.engine.info, gpu.engine.info)
        assert np.array_equal(cpu.engine.weights, gpu.engine.weights)
        assert np.array_equal(cpu.engine.levels(), gpu.engine.levels())
    assert cpu.levels.totals == gpu.levels.totals and cpu.levels.totals["refilled"] > 0


CODES = {"W": 0, "U": 1, "D": 2, "L": 3, "R": 4}


def test_evaluate_plays_each_level_and_an_optimal_policy_scores_one():
    """floe.evaluate: the levels' own optimal plans, played as a policy, succeed on every level at
    a cost of exactly the optimum; a policy that waits succeeds nowhere; bad answers are named."""
    levels = floe.generate(2, 5, count=6, seed=2)
    plans = [json.loads(lv.to_json())["optimal"]["moves"] for lv in levels]
    t = [0]

    def oracle(obs):
        assert obs.dtype == np.uint8 and obs.shape[:2] == (6, 2)
        acts = np.zeros(obs.shape[:2], dtype=np.int64)
        for e, moves in enumerate(plans):
            for a, m in enumerate(moves):
                acts[e, a] = CODES[m[t[0]]] if t[0] < len(m) else 0
        t[0] += 1
        return acts

    got = floe.evaluate(oracle, levels, 1, config={"num_envs": 6, "mode": "strict"})
    assert list(got["success"]) == [1.0] * 6 and list(got["plays"]) == [1] * 6
    assert list(got["cost"]) == [1.0] * 6
    still = floe.evaluate(lambda o: np.zeros(o.shape[:2]), levels, 3, config={"num_envs": 4, "episode_limit": 8})
    assert list(still["plays"]) == [3] * 6 and still["successes"].sum() == 0
    assert np.isnan(still["cost"]).all()
    with pytest.raises(floe.BadInput, match="returned 1 actions for 4 environments"):
        floe.evaluate(lambda o: [0], levels, 1, config={"num_envs": 4})
    with pytest.raises(floe.BadInput, match="action 7 at slot 0 is outside 0–4"):
        floe.evaluate(lambda o: np.full(o.shape[:2], 7), levels, 1)
    with pytest.raises(ZeroDivisionError):
        floe.evaluate(lambda o: 1 / 0, levels, 1)
    with pytest.raises(floe.BadInput, match="CPU engine"):
        floe.evaluate(lambda o: 0, levels, 1, config={"backend": "gpu"})
    with pytest.raises(floe.BadInput, match="0 levels"):
        floe.evaluate(lambda o: 0, [], 1)


def test_cvar_averages_the_worst_share_of_levels():
    assert floe.cvar([1.0, 0.0, 0.5, 0.25], 0.5) == 0.125
    assert floe.cvar([1.0, 0.0, 0.5, 0.25], 0.01) == 0.0
    assert floe.cvar([], 0.1) == 0.0
    for bad in [0.0, 1.5, float("nan")]:
        with pytest.raises(floe.BadInput, match="alpha"):
            floe.cvar([0.5], bad)
    with pytest.raises(floe.BadInput, match="rate 1 is NaN"):
        floe.cvar([0.5, float("nan")], 0.5)


def test_slot_stats_log_each_slot_as_the_sampler_keeps_it():
    """Levels.slot_stats(): a numpy array a figure, one entry a slot of the pool, as jaxued
    and Syllabus log them; empty for a sampler that keeps none."""
    plr = sampler("plr", {"robust": False}, update_every=4)
    env = floe.VectorEnv(16, 32, mode="soft", episode_limit=6, levels=plr)
    env.reset(seed=2)
    env.action_space.seed(2)
    for _ in range(40):
        env.step(env.action_space.sample())
    s = plr.slot_stats()
    assert set(s) == {"generation", "plays", "staleness", "score", "figure"}
    assert all(len(v) == 16 for v in s.values())
    seen = s["staleness"] != 2**32 - 1
    assert seen.any() and np.isfinite(s["score"][seen]).all() and np.isnan(s["score"][~seen]).all()
    assert s["figure"][seen].sum() == pytest.approx(1.0, abs=1e-5), "PLR's replay probabilities"
    assert (s["plays"][seen] > 0).all()
    sfl = sampler("learnability", {"min_episodes": 1}, update_every=4)
    env = floe.VectorEnv(16, 32, mode="soft", episode_limit=6, levels=sfl)
    env.reset(seed=2)
    for _ in range(40):
        env.step(env.action_space.sample())
    s = sfl.slot_stats()
    kept = ~np.isnan(s["score"])
    assert kept.any()
    np.testing.assert_allclose(s["figure"][kept], s["score"][kept] * (1 - s["score"][kept]), rtol=1e-6)
    phases = sampler("fixed", {"phase_episodes": 8})
    assert all(len(v) == 0 for v in phases.slot_stats().values())


def pool_of(engine):
    """Every slot's level (JSON), with the pool's records (generation, optimum, ...) but the
    environments playing it."""
    return [engine.level(i).to_json() for i in range(len(engine.levels()))], engine.levels()[:, :-1].tolist()


@pytest.mark.parametrize("name,params", [("uniform", {"max_plays": 1}), ("plr", {"fresh": 0.5}),
                                         ("accel", {"edit_fraction": 0.25}),
                                         ("learnability", {"min_episodes": 1, "window": 4})])
def test_a_sampler_resumed_from_its_state_dict_draws_the_levels_of_one_that_never_stopped(name, params):
    """state_dict / load_state_dict mid-run: a new sampler, loaded and started on the engine, goes
    on as the one that never stopped (the same refills, weights and statistics)."""
    def made():
        s = sampler(name, params, update_every=4)
        env = floe.VectorEnv(12, 16, mode="soft", episode_limit=6, levels=s)
        env.reset(seed=2)
        run(env, 30)
        return s, env

    went_on, env_a = made()
    ended_a = run(env_a, 30, seed=8)
    stopped, env_b = made()
    state = pickle.loads(pickle.dumps(stopped.state_dict()))
    assert state["version"] == 1 and state["sampler"] == name
    resumed = sampler(name, params, update_every=4)
    resumed.load_state_dict(json.dumps(state))
    assert resumed.loaded_slots == 12
    resumed.attach(env_b.engine)
    env_b.levels = resumed
    with pytest.raises(floe.BadInput, match="call start first"):
        resumed.update()
    resumed.start()
    ended_b = run(env_b, 30, seed=8)
    np.testing.assert_array_equal(ended_a, ended_b)
    assert pool_of(env_a.engine) == pool_of(env_b.engine)
    np.testing.assert_array_equal(env_a.engine.weights, env_b.engine.weights)
    assert went_on.totals == resumed.totals
    for k, v in went_on.slot_stats().items():
        np.testing.assert_array_equal(v, resumed.slot_stats()[k])


def test_a_pickled_sampler_makes_its_engine_from_the_saved_pool():
    """A sampler pickled mid-run (its settings and state) is unpickled in a new process's stead:
    VectorEnv(its slot count, levels=it) is made with the saved pool, and its reset puts back the
    saved weights, not the sampler's first call."""
    s = sampler("plr", {"fresh": 0.5}, update_every=4)
    env = floe.VectorEnv(12, 16, mode="soft", episode_limit=6, levels=s)
    env.reset(seed=2)
    run(env, 60)
    assert s.totals["refilled"] > 0
    back = pickle.loads(pickle.dumps(s))
    assert back.loaded_slots == 12 and back.engine is None
    with pytest.raises(ValueError, match="instances=12"):
        floe.VectorEnv(10, 16, levels=back)
    env2 = floe.VectorEnv(12, 16, mode="soft", episode_limit=6, levels=back)
    assert pool_of(env2.engine) == pool_of(env.engine), "levels, generations and optima"
    env2.reset(seed=9)
    assert back.loaded_slots is None
    np.testing.assert_array_equal(env2.engine.weights, env.engine.weights)
    for k, v in s.slot_stats().items():
        np.testing.assert_array_equal(v, back.slot_stats()[k])
    run(env2, 10)
    # A fresh sampler pickles as its settings.
    assert pickle.loads(pickle.dumps(sampler("plr"))).loaded_slots is None


def test_a_state_that_does_not_fit_is_refused_by_name():
    s = sampler("plr", {"fresh": 0.5}, update_every=4)
    with pytest.raises(floe.BadInput, match="attach"):
        s.state_dict()
    env = floe.VectorEnv(12, 16, mode="soft", episode_limit=6, levels=s)
    env.reset(seed=2)
    run(env, 20)
    state = s.state_dict()
    with pytest.raises(floe.BadInput, match="version 2"):
        sampler("plr", {"fresh": 0.5}, update_every=4).load_state_dict(dict(state, version=2))
    with pytest.raises(floe.BadInput, match="`uniform`"):
        sampler("uniform", update_every=4).load_state_dict(state)
    with pytest.raises(floe.BadInput, match="fresh"):
        sampler("plr", {"fresh": 0.25}, update_every=4).load_state_dict(state)
    other = sampler("plr", {"fresh": 0.5}, update_every=4)
    other.load_state_dict(state)
    other_env = floe.VectorEnv(12, 16, levels=sampler("plr", {"fresh": 0.5}))
    other_env.reset(seed=2)
    other.attach(other_env.engine)
    with pytest.raises(floe.BadInput, match="not the saved one"):
        other.start()
    # A phase designer saves its designs with its state; one of other phases refuses them.
    phases = sampler("frontier", {"phase_episodes": 8}, update_every=2)
    env = floe.VectorEnv(8, 8, levels=phases)
    env.reset(seed=1)
    run(env, 30)
    state = pickle.loads(pickle.dumps(phases.state_dict()))
    back = sampler("frontier", {"phase_episodes": 8}, update_every=2)
    back.load_state_dict(state)
    with pytest.raises(floe.BadInput, match="phases of 8 episodes"):
        sampler("frontier", {"phase_episodes": 9}, update_every=2).load_state_dict(state)


def test_a_sampler_written_in_python_steers_the_engine_and_its_bad_answers_change_nothing():
    """Levels.from_callable: a Python function where the built-in's decision runs. It sees
    the pool's slots and the ended episodes, and its weights and refills reach the engine; NaN
    weights, a wrong count, an exception or a call back into the sampler raise, and the engine
    keeps its weights."""
    seen = []

    def favour_slot_0(levels, episodes, scores):
        seen.append((levels.shape, episodes.shape, scores))
        weights = np.ones(len(levels))
        weights[0] = 50.0
        return {"weights": weights, "refill": [1] if len(episodes) else []}

    s = floe.Levels.from_callable(favour_slot_0, name="favour", space=SPACE, seed=5, update_every=4)
    assert s.name == "favour"
    env = floe.VectorEnv(8, 16, mode="soft", episode_limit=6, levels=s)
    env.reset(seed=2)
    run(env, 40)
    assert seen[0] == ((8, 8), (0, 8), None), "the start: the pool, no episodes"
    assert sum(e[0] for _, e, _ in seen) == s.totals["episodes"] > 0
    assert s.totals["refilled"] > 0 and env.engine.levels()[1, 1] > 0, "slot 1 refilled"
    w = env.engine.weights
    assert w[0] == 50.0 and (w[1:] == 1.0).all()
    with pytest.raises(floe.BadInput, match="does not pickle"):
        pickle.dumps(s)

    def answering(answer):
        return floe.Levels.from_callable(lambda levels, episodes, scores: answer(levels), space=SPACE)

    for answer, error, says in [
        (lambda lv: [float("nan")] * len(lv), floe.BadOutput, "NaN"),
        (lambda lv: [1.0] * (len(lv) + 1), floe.BadOutput, "9 weights for a pool of 8"),
        (lambda lv: {"refill": [99]}, floe.BadOutput, "slot 99"),
        (lambda lv: {"weight": [1.0]}, floe.BadOutput, "the key weight"),
        (lambda lv: "heavy", floe.BadOutput, "not a sequence of numbers"),
        (lambda lv: 1 / 0, floe.PluginFailed, "ZeroDivisionError"),
    ]:
        bad = answering(answer)
        bad_env = floe.VectorEnv(8, 16, mode="soft", levels=bad)
        with pytest.raises(error, match=says):
            bad_env.reset(seed=1)
        assert bad_env.engine.weights is None, "the engine kept its weights"

    def calls_back(levels, episodes, scores):
        return looped.pending

    looped = floe.Levels.from_callable(calls_back, space=SPACE)
    with pytest.raises(floe.PluginFailed, match="cannot call a sampler or an engine"):
        floe.VectorEnv(8, 16, levels=looped).reset(seed=1)
    with pytest.raises(floe.BadInput, match="callable"):
        floe.Levels.from_callable(3)


def test_a_host_scores_episodes_by_environment_and_end_step_not_by_the_drivers_order():
    """pending_env and pending_end_step key each kept episode as the host saw it end: a host that
    scores episodes in a dict of its own (here walking environments backwards) lines its scores
    up with pending by that key."""
    s = sampler("plr", {"fresh": 0.0, "staleness_coef": 0.0}, update_every=0)
    env = floe.VectorEnv(8, 16, mode="soft", episode_limit=6, levels=s)
    env.reset(seed=2)
    env.action_space.seed(3)
    scored = {}
    for _ in range(30):
        t = s.steps_recorded
        _, reward, term, trunc, info = env.step(env.action_space.sample())
        for e in reversed(np.flatnonzero(term | trunc)):
            scored[(int(e), t)] = (float(reward[e].sum()) + 2.0, int(info["final_info"]["slot"][e]))
    assert s.steps_recorded == 30
    keys = list(zip(s.pending_env.tolist(), s.pending_end_step.tolist()))
    assert sorted(keys) == sorted(scored), "every ended episode, once"
    slots = floe.info_columns(s.pending)["slot"]
    assert [scored[k][1] for k in keys] == slots.tolist(), "the key names the episode pending holds"
    s.update(scores=np.array([scored[k][0] for k in keys], dtype=np.float32))
    assert len(s.pending_env) == len(s.pending_end_step) == 0


class _TwoCalls:
    """A ``levels=`` object that is not a floe.Levels: the environment steps the engine and
    then calls ``after_step``, two calls where a floe.Levels's ``step_engine`` makes one."""

    def __init__(self, s):
        self.s = s

    room = property(lambda self: self.s.room)

    def levels(self, n):
        return self.s.draw(n)

    def attach(self, engine):
        return self.s.attach(engine)

    def start(self):
        return self.s.start()

    def after_step(self):
        return self.s.after_step()


def test_one_call_a_step_steps_as_two_calls_do():
    """VectorEnv.step with a floe.Levels makes one call into Rust (step_engine); another levels=
    object gets the engine's step and then after_step. The two give the same steps, episodes,
    refills and weights."""
    envs = []
    for wrap in (lambda s: s, _TwoCalls):
        s = sampler("plr", {"fresh": 0.5}, update_every=4)
        env = floe.VectorEnv(12, 16, mode="soft", episode_limit=6, levels=wrap(s))
        env.reset(seed=2)
        envs.append((env, s, run(env, 40)))
    (a, sa, ended_a), (b, sb, ended_b) = envs
    np.testing.assert_array_equal(ended_a, ended_b)
    np.testing.assert_array_equal(a.engine.obs, b.engine.obs)
    np.testing.assert_array_equal(a.engine.weights, b.engine.weights)
    assert sa.totals == sb.totals and sa.totals["refilled"] > 0
    assert sa.steps_recorded == sb.steps_recorded == 40


MAP = "type octile\nheight 6\nwidth 8\nmap\n........\n..@@....\n..@@..T.\n........\n@@@.....\n........\n"


def test_levels_come_from_a_file_maps_or_a_function_and_bad_ones_are_refused(tmp_path):
    written = floe.random_instances(agents=2, size=5, hole_ratio=0.1, count=6, seed=3)
    path = tmp_path / "levels.jsonl"
    floe.write_instances(path, written)
    levels = floe.Levels("uniform", {"max_plays": 1}, source={"file": {"path": str(path)}}, seed=2,
                               update_every=2)
    assert levels.room == (2, 5)
    env = floe.VectorEnv(8, 6, mode="soft", episode_limit=6, levels=levels)
    env.reset(seed=1)
    run(env, 30)
    assert levels.drawn > 6, "refilled from the file"
    ours = {json.dumps(json.loads(i.to_json())["grid"]) + json.dumps(json.loads(i.to_json())["agents"])
            for i in written}
    for slot in range(6):
        level = json.loads(env.engine.level(slot).to_json())
        assert json.dumps(level["grid"]) + json.dumps(level["agents"]) in ours
    assert all(level.optimal_soc is not None for level in levels.draw(6)), "solved when read"
    again = pickle.loads(pickle.dumps(levels))
    assert again.drawn == levels.drawn and again.draw(3) == levels.draw(3), "a file source pickles"

    mapfile = tmp_path / "room.map"
    mapfile.write_text(MAP)
    maps = floe.Levels(source={"maps": {"files": [str(mapfile)], "agents": [2, 3]}}, seed=1)
    drawn = maps.draw(12)
    assert maps.room == (3, 8) and {d.num_agents for d in drawn} == {2, 3}
    assert all(d.grid == drawn[0].grid and d.optimal_soc is not None for d in drawn)

    calls = []

    def make(n, seed):
        calls.append((n, seed))
        return floe.random_instances(agents=2, size=6, hole_ratio=0.0, count=n, seed=seed % 1000)

    fn = floe.Levels("plr", {"fresh": 0.5}, space={"agents": [2, 2], "size": [5, 6], "solve": True},
                           source=make, seed=4, update_every=2)
    env = floe.VectorEnv(4, 5, mode="soft", episode_limit=6, levels=fn)
    assert calls[0][0] == 4 and env.engine.room == (2, 6)
    env.reset(seed=0)
    run(env, 40)
    assert len(calls) > 1 and fn.drawn == sum(n for n, _ in calls), "refills drawn from the function"
    with pytest.raises(ValueError, match="does not pickle"):
        pickle.dumps(fn)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(written[0].to_json() + "\n{\"grid\": [\"FF\"]}\n")
    with pytest.raises(floe.ConfigError, match="bad.jsonl, line 2"):
        floe.Levels(source={"file": {"path": str(bad)}})
    bad.write_text('{"grid": ["FHF", "HHF", "FFF"], "agents": [{"start": [2, 2], "goal": [0, 0]}]}\n')
    with pytest.raises(floe.ConfigError, match="instance 1: unsolvable"):
        floe.Levels(source={"file": {"path": str(bad)}})
    wide = tmp_path / "wide.map"
    wide.write_text("type octile\nheight 1\nwidth 1025\nmap\n" + "." * 1025 + "\n")
    with pytest.raises(floe.ConfigError, match="wide.map is 1025x1, over the engine's side of 1024"):
        floe.Levels(source={"maps": {"files": [str(wide)]}})
    with pytest.raises(floe.ConfigError, match="`frontier` designs"):
        floe.Levels("frontier", source={"file": {"path": str(path)}})
    with pytest.raises(floe.ConfigError, match="level source"):
        floe.Levels(source={"files": str(path)})
    for answer, says in [(lambda n, s: [], "asked for 3 levels, answered 0"),
                         (lambda n, s: 1 / 0, "ZeroDivisionError"),
                         (lambda n, s: [object()] * n, "level 0 is object"),
                         (lambda n, s: make(n, s)[:1] * 0 + floe.random_instances(agents=3, size=5, count=n),
                          "outside the level space's agents")]:
        with pytest.raises(floe.ConfigError, match=says):
            floe.Levels(space={"agents": [2, 2], "size": [5, 6]}, source=answer).draw(3)


def test_the_driver_is_floe_levels_and_its_earlier_names_still_work_with_a_warning():
    """``floe.Levels`` is the driver (Rust's ``LevelSampler`` is the plugin trait); its earlier
    name ``floe.LevelSampler`` is the same class, ``draw(count)`` draws new levels, and the
    earlier ``levels(count)`` (on the driver, and on a ``levels=`` object) warns and draws."""
    assert floe.LevelSampler is floe.Levels and floe.Levels.__name__ == "Levels"
    levels = sampler("uniform")
    drawn = levels.draw(3)
    with pytest.warns(DeprecationWarning, match="draw"):
        old = sampler("uniform").levels(3)
    assert old == drawn
    again = pickle.loads(pickle.dumps(levels))
    assert type(again) is floe.Levels

    class OldProtocol:
        """A levels= object written before ``draw``: only ``levels(count)``."""

        def __init__(self):
            self.s = sampler("uniform")
            self.room = self.s.room

        def levels(self, n):
            return self.s.draw(n)

        def attach(self, engine):
            self.s.attach(engine)

        def start(self):
            return self.s.start()

        def after_step(self):
            return self.s.after_step()

    with pytest.warns(DeprecationWarning, match="draw"):
        env = floe.VectorEnv(4, 2, levels=OldProtocol())
    env.reset(seed=0)
    assert env.engine.num_instances == 4
