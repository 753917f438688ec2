/*
 * The C API's test suite: every function, and every error path (NULL pointers, short buffers,
 * wrong handle kinds, freed handles, invalid JSON, bad UTF-8, plugins that fail).
 *
 * Usage: test_api <failing C plugin library> <faulty Rust plugin library> <scratch folder>
 *                 <C engineer plugin library> <C level sampler plugin library>
 * Runs under valgrind and sanitizers (scripts/c-api.sh). Exits non-zero on the first failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe.h"
#include "floe_plugin.h"

static int checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, \
                    __LINE__, #cond, floe_last_error());                             \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define OK(call) CHECK((call) == FLOE_STATUS_OK)
/* A call fails with `status` and leaves a message containing `needle`. */
#define FAILS(call, status, needle)                              \
    do {                                                         \
        CHECK((call) == (status));                               \
        CHECK(strstr(floe_last_error(), (needle)) != NULL);      \
    } while (0)

static const char *INSTANCE =
    "{\"grid\": [\"FFF\", \"FHF\", \"FFF\"], \"agents\": ["
    "{\"start\": [0, 0], \"goal\": [2, 2]}, {\"start\": [2, 0], \"goal\": [0, 2]}]}";

static void test_version(void) {
    CHECK(floe_abi_version() == FLOE_ABI_VERSION);
    CHECK(strlen(floe_version()) > 0);
    CHECK(sizeof(floe_verdict_record) == 28);
    CHECK(sizeof(floe_step_outcome) == 12);
    CHECK(sizeof(floe_replay_record) == 40);
    CHECK(sizeof(floe_env_info) == 32);
    CHECK(sizeof(floe_level_record) == 32);
    CHECK(sizeof(floe_verdict) == 32);
    CHECK(sizeof(floe_env_record) == 24);
    CHECK(sizeof(floe_agent_record) == 12);
    CHECK(sizeof(floe_buffer_sizes) == 9 * sizeof(size_t));
    floe_string_free(NULL);
}

static floe_pool *small_pool(void) {
    floe_pool *pool = NULL;
    OK(floe_pool_from_json(INSTANCE, 1, &pool));
    return pool;
}

static void test_pools(const char *scratch) {
    floe_pool *pool = NULL;
    size_t n = 0;
    uint32_t side = 0;

    /* From a generator setting and from a round configuration. */
    OK(floe_pool_generate("{\"size\": 4, \"agents\": 2, \"hole_ratio\": 0.1, \"wait_ratio\": 0.5}", 6, 1, &pool));
    OK(floe_pool_count(pool, &n));
    CHECK(n == 6);
    OK(floe_pool_max_agents(pool, &n));
    CHECK(n == 2);
    OK(floe_pool_max_side(pool, &side));
    CHECK(side == 4);
    floe_instance_info info;
    OK(floe_pool_instance_info(pool, 5, &info));
    CHECK(info.width == 4 && info.height == 4 && info.num_agents == 2 && info.optimal_soc != FLOE_UNKNOWN);
    FAILS(floe_pool_instance_info(pool, 6, &info), FLOE_STATUS_BAD_INPUT, "out of range");
    FAILS(floe_pool_instance_info(pool, 0, NULL), FLOE_STATUS_NULL_POINTER, "out");
    char *json = NULL;
    OK(floe_pool_instance_json(pool, 0, &json));
    CHECK(strstr(json, "\"grid\"") != NULL);
    /* The JSON reads back into a pool of one. */
    floe_pool *again = NULL;
    OK(floe_pool_from_json(json, 0, &again));
    OK(floe_pool_count(again, &n));
    CHECK(n == 1);
    OK(floe_pool_free(again));
    floe_string_free(json);
    OK(floe_pool_free(pool));

    pool = NULL;
    OK(floe_pool_generate("{\"sizes\": [{\"size\": 3, \"data_ratio\": 1.0, \"hole_ratio\": 0.1, \"wait_ratio\": 0.0}],"
                          " \"agents\": [2], \"replay_fraction\": 0.0}",
                          4, 2, &pool));
    OK(floe_pool_count(pool, &n));
    CHECK(n == 4);
    OK(floe_pool_free(pool));

    /* Bad configurations, bad JSON, bad UTF-8, NULL. */
    pool = NULL;
    FAILS(floe_pool_generate("{\"size\": 4}", 3, 1, &pool), FLOE_STATUS_CONFIG, "agents");
    FAILS(floe_pool_generate("{\"size\": 0, \"agents\": 2}", 3, 1, &pool), FLOE_STATUS_CONFIG, "map size");
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2, \"colour\": 1}", 3, 1, &pool), FLOE_STATUS_CONFIG, "colour");
    FAILS(floe_pool_generate("{not json", 3, 1, &pool), FLOE_STATUS_CONFIG, "JSON");
    FAILS(floe_pool_generate("\xff\xfe", 3, 1, &pool), FLOE_STATUS_BAD_UTF8, "UTF-8");
    FAILS(floe_pool_generate(NULL, 3, 1, &pool), FLOE_STATUS_NULL_POINTER, "config_json");
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2}", 0, 1, &pool), FLOE_STATUS_BAD_INPUT, "samples is 0");
    /* Sizes no machine holds are a status with the bytes asked for, never an abort. */
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2}", (size_t)1 << 40, 1, &pool), FLOE_STATUS_TOO_LARGE, "bytes");
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2}", SIZE_MAX, 1, &pool), FLOE_STATUS_TOO_LARGE, "cannot be allocated");
    /* A key named twice is refused, never one of its values kept. */
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2, \"agents\": 3}", 3, 1, &pool), FLOE_STATUS_CONFIG, "duplicate key");
    FAILS(floe_pool_generate("{\"size\": 4, \"agents\": 2}", 3, 1, NULL), FLOE_STATUS_NULL_POINTER, "out");
    CHECK(pool == NULL);
    FAILS(floe_pool_from_json("{\"grid\": [\"FF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [0, 0]},"
                              " {\"start\": [0, 0], \"goal\": [0, 1]}]}",
                              0, &pool),
          FLOE_STATUS_BAD_INPUT, "instance");
    FAILS(floe_pool_from_json("", 0, &pool), FLOE_STATUS_BAD_INPUT, "instance");

    /* From a file, and a missing file. */
    char path[4096];
    snprintf(path, sizeof path, "%s/pool.jsonl", scratch);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f, "%s\n%s\n", INSTANCE, INSTANCE);
    fclose(f);
    OK(floe_pool_from_file(path, 0, &pool));
    OK(floe_pool_count(pool, &n));
    CHECK(n == 2);
    OK(floe_pool_instance_info(pool, 1, &info));
    CHECK(info.optimal_soc == FLOE_UNKNOWN); /* not solved */
    OK(floe_pool_free(pool));
    snprintf(path, sizeof path, "%s/missing.jsonl", scratch);
    FAILS(floe_pool_from_file(path, 0, &pool), FLOE_STATUS_IO, "missing.jsonl");

    /* From the caller's arrays: a 3x3 grid with a hole in the middle. */
    uint8_t holes[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    uint32_t starts[4] = {0, 0, 2, 0};
    uint32_t goals[4] = {2, 2, 0, 2};
    floe_instance_view view = {3, 3, 2, holes, starts, goals};
    OK(floe_pool_from_arrays(&view, 1, 1, &pool));
    OK(floe_pool_instance_info(pool, 0, &info));
    CHECK(info.optimal_soc == 8);
    OK(floe_pool_free(pool));
    pool = NULL;
    uint32_t on_hole[4] = {1, 1, 2, 0};
    floe_instance_view bad = {3, 3, 2, holes, on_hole, goals};
    FAILS(floe_pool_from_arrays(&bad, 1, 0, &pool), FLOE_STATUS_BAD_INPUT, "instance 0");
    holes[0] = 7;
    FAILS(floe_pool_from_arrays(&view, 1, 0, &pool), FLOE_STATUS_BAD_INPUT, "cell 0");
    holes[0] = 0;
    floe_instance_view no_holes = {3, 3, 2, NULL, starts, goals};
    FAILS(floe_pool_from_arrays(&no_holes, 1, 0, &pool), FLOE_STATUS_NULL_POINTER, "holes");
    floe_instance_view huge = {3000, 3, 2, holes, starts, goals};
    FAILS(floe_pool_from_arrays(&huge, 1, 0, &pool), FLOE_STATUS_BAD_INPUT, "1..=256");
    FAILS(floe_pool_from_arrays(NULL, 1, 0, &pool), FLOE_STATUS_NULL_POINTER, "instances");
    FAILS(floe_pool_from_arrays(&view, 0, 0, &pool), FLOE_STATUS_BAD_INPUT, "empty");
    CHECK(pool == NULL);
    OK(floe_pool_free(NULL));
}

static floe_step_buffers buffers_for(const floe_buffer_sizes *s) {
    floe_step_buffers b;
    b.obs = calloc(s->obs, 1);
    b.obs_len = s->obs;
    b.final_obs = calloc(s->obs, 1);
    b.final_obs_len = s->obs;
    b.rewards = calloc(s->agents, sizeof(float));
    b.rewards_len = s->agents;
    b.events = calloc(s->agents, sizeof(uint32_t));
    b.events_len = s->agents;
    b.terminated = calloc(s->envs, 1);
    b.terminated_len = s->envs;
    b.truncated = calloc(s->envs, 1);
    b.truncated_len = s->envs;
    b.info = calloc(s->envs, sizeof(floe_env_info));
    b.info_len = s->envs;
    return b;
}

static void free_buffers(floe_step_buffers *b) {
    free(b->obs);
    free(b->final_obs);
    free(b->rewards);
    free(b->events);
    free(b->terminated);
    free(b->truncated);
    free(b->info);
}

static void test_engines(void) {
    floe_pool *pool = NULL;
    OK(floe_pool_generate("{\"size\": 5, \"agents\": 3, \"hole_ratio\": 0.2}", 8, 3, &pool));
    floe_engine *engine = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 7, \"mode\": \"soft\", \"episode_limit\": 9}", &engine));
    /* The pool may go: the engine keeps its own reference. */
    OK(floe_pool_free(pool));
    floe_buffer_sizes s;
    OK(floe_engine_sizes(engine, &s));
    CHECK(s.num_envs == 7 && s.max_agents == 3 && s.actions == 21 && s.agents == 21 && s.envs == 7);
    CHECK(s.obs == 21 * s.obs_stride && s.global_state == 7 * 3 * 25);
    char *backend = NULL;
    OK(floe_engine_backend(engine, &backend));
    CHECK(strcmp(backend, "cpu") == 0);
    floe_string_free(backend);

    floe_step_buffers b = buffers_for(&s);
    uint8_t actions[21];
    memset(actions, 1, sizeof actions);
    FAILS(floe_engine_step(engine, actions, 21, &b), FLOE_STATUS_NOT_RESET, "reset");
    FAILS(floe_engine_reset_to(engine, 0, 0, &b), FLOE_STATUS_NOT_RESET, "reset");
    OK(floe_engine_reset(engine, 42, &b));
    int ended = 0;
    for (int t = 0; t < 30; t++) {
        for (int i = 0; i < 21; i++) actions[i] = (uint8_t)((t * 7 + i * 3) % 5);
        OK(floe_engine_step(engine, actions, 21, &b));
        for (size_t e = 0; e < s.envs; e++) {
            if (b.terminated[e] || b.truncated[e]) {
                ended++;
                CHECK(b.info[e].outcome != FLOE_OUTCOME_RUNNING);
            }
        }
    }
    CHECK(ended > 0);
    OK(floe_engine_reset_to(engine, 2, 5, &b));
    floe_env_record envs[7];
    floe_agent_record agents[21];
    OK(floe_engine_state(engine, envs, 7, agents, 21));
    CHECK(envs[2].instance == 5 && envs[2].step == 0 && envs[2].width == 5);
    FAILS(floe_engine_state(engine, envs, 6, agents, 21), FLOE_STATUS_BUFFER_SIZE, "envs");
    FAILS(floe_engine_state(engine, NULL, 7, agents, 21), FLOE_STATUS_NULL_POINTER, "envs");
    uint8_t *global = malloc(s.global_state);
    OK(floe_engine_global_state(engine, global, s.global_state));
    CHECK(global[0] == 0 || global[0] == 1);
    FAILS(floe_engine_global_state(engine, global, s.global_state - 1), FLOE_STATUS_BUFFER_SIZE, "global");
    free(global);

    /* Refused calls change nothing: the state is the same after each. */
    floe_env_record before[7];
    OK(floe_engine_state(engine, before, 7, agents, 21));
    actions[20] = 5;
    FAILS(floe_engine_step(engine, actions, 21, &b), FLOE_STATUS_BAD_INPUT, "not 0..=4");
    actions[20] = 0;
    FAILS(floe_engine_step(engine, actions, 20, &b), FLOE_STATUS_BUFFER_SIZE, "actions");
    FAILS(floe_engine_step(engine, NULL, 21, &b), FLOE_STATUS_NULL_POINTER, "actions");
    FAILS(floe_engine_step(engine, actions, 21, NULL), FLOE_STATUS_NULL_POINTER, "buffers");
    floe_step_buffers short_b = b;
    short_b.rewards_len -= 1;
    FAILS(floe_engine_step(engine, actions, 21, &short_b), FLOE_STATUS_BUFFER_SIZE, "rewards");
    floe_step_buffers null_b = b;
    null_b.events = NULL;
    FAILS(floe_engine_step(engine, actions, 21, &null_b), FLOE_STATUS_NULL_POINTER, "events");
    floe_step_buffers overlap = b;
    overlap.truncated = overlap.terminated;
    FAILS(floe_engine_step(engine, actions, 21, &overlap), FLOE_STATUS_BAD_INPUT, "overlap");
    FAILS(floe_engine_reset_to(engine, 7, 0, &b), FLOE_STATUS_BAD_INPUT, "reset_to");
    FAILS(floe_engine_reset_to(engine, 0, 8, &b), FLOE_STATUS_BAD_INPUT, "reset_to");
    FAILS(floe_engine_reset(engine, 1, &short_b), FLOE_STATUS_BUFFER_SIZE, "rewards");
    floe_env_record after[7];
    OK(floe_engine_state(engine, after, 7, agents, 21));
    CHECK(memcmp(before, after, sizeof before) == 0);

    /* Wrong handle kinds, NULL, and freed handles. */
    floe_pool *pool2 = small_pool();
    FAILS(floe_engine_sizes((floe_engine *)pool2, &s), FLOE_STATUS_WRONG_HANDLE, "floe_pool");
    FAILS(floe_pool_count((floe_pool *)engine, &s.num_envs), FLOE_STATUS_WRONG_HANDLE, "floe_engine");
    FAILS(floe_engine_sizes(NULL, &s), FLOE_STATUS_NULL_POINTER, "engine");
    FAILS(floe_engine_sizes(engine, NULL), FLOE_STATUS_NULL_POINTER, "out");
    FAILS(floe_engine_free((floe_engine *)pool2), FLOE_STATUS_WRONG_HANDLE, "floe_pool");
    int not_a_handle = 0;
    FAILS(floe_pool_free((floe_pool *)&not_a_handle), FLOE_STATUS_WRONG_HANDLE, "not a live handle");

    /* Bad engine configurations. */
    floe_engine *other = NULL;
    FAILS(floe_engine_new(pool2, "{\"num_envs\": 0}", &other), FLOE_STATUS_CONFIG, "num_envs");
    FAILS(floe_engine_new(pool2, "{\"num_envs\": 2, \"num_envs\": 3}", &other), FLOE_STATUS_CONFIG, "duplicate key");
    FAILS(floe_engine_new(pool2, "{\"backend\": \"tpu\"}", &other), FLOE_STATUS_CONFIG, "tpu");
    FAILS(floe_engine_new(pool2, "{\"mode\": \"gentle\"}", &other), FLOE_STATUS_CONFIG, "gentle");
    FAILS(floe_engine_new(pool2, "{\"obs_radius\": 500}", &other), FLOE_STATUS_CONFIG, "radius");
    /* The GPU's range is a range error too, found before any adapter is looked for. */
    FAILS(floe_engine_new(pool2, "{\"backend\": \"gpu\", \"obs_radius\": 8}", &other), FLOE_STATUS_CONFIG, "obs_radius 8");
    FAILS(floe_engine_new(pool2, "{\"rewards\": {\"hole\": \"a lot\"}}", &other), FLOE_STATUS_CONFIG, "a lot");
    FAILS(floe_engine_new(pool2, "[1, 2]", &other), FLOE_STATUS_CONFIG, "object");
    FAILS(floe_engine_new(pool2, "{", &other), FLOE_STATUS_CONFIG, "engine configuration");
    FAILS(floe_engine_new(pool2, "\xc3\x28", &other), FLOE_STATUS_BAD_UTF8, "UTF-8");
    FAILS(floe_engine_new(NULL, NULL, &other), FLOE_STATUS_NULL_POINTER, "pool");
    CHECK(other == NULL);
    OK(floe_engine_new(pool2, NULL, &other)); /* defaults */
    OK(floe_engine_free(other));
    OK(floe_pool_free(pool2));
    FAILS(floe_pool_count(pool2, &s.num_envs), FLOE_STATUS_WRONG_HANDLE, "not a live handle");

    free_buffers(&b);
    OK(floe_engine_free(engine));
    FAILS(floe_engine_step(engine, actions, 21, &b), FLOE_STATUS_WRONG_HANDLE, "not a live handle");
    FAILS(floe_engine_free(engine), FLOE_STATUS_WRONG_HANDLE, "not a live handle");
    OK(floe_engine_free(NULL));
}

/* Observation formats: bits unpack to exactly the bytes; none steps the same with no
 * observation buffers at all. */
static void test_obs_formats(void) {
    floe_pool *pool = NULL;
    OK(floe_pool_generate("{\"size\": 9, \"agents\": 4, \"hole_ratio\": 0.2}", 6, 7, &pool));
    floe_engine *bytes = NULL, *bits = NULL, *none = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 5, \"mode\": \"soft\", \"obs_radius\": 5}", &bytes));
    OK(floe_engine_new(pool, "{\"num_envs\": 5, \"mode\": \"soft\", \"obs_radius\": 5, \"obs_format\": \"bits\"}", &bits));
    OK(floe_engine_new(pool, "{\"num_envs\": 5, \"mode\": \"soft\", \"obs_radius\": 5, \"obs_format\": \"none\"}", &none));
    floe_engine *other = NULL;
    FAILS(floe_engine_new(pool, "{\"obs_format\": \"nibbles\"}", &other), FLOE_STATUS_CONFIG, "nibbles");
    floe_buffer_sizes sy, si, sn;
    OK(floe_engine_sizes(bytes, &sy));
    OK(floe_engine_sizes(bits, &si));
    OK(floe_engine_sizes(none, &sn));
    CHECK(sy.obs_stride == 364 && si.obs_stride == 48 && sn.obs_stride == 0 && sn.obs == 0);
    floe_step_buffers by = buffers_for(&sy), bi = buffers_for(&si), bn = buffers_for(&sn);
    free(bn.obs);
    free(bn.final_obs);
    bn.obs = bn.final_obs = NULL;
    OK(floe_engine_reset(bytes, 9, &by));
    OK(floe_engine_reset(bits, 9, &bi));
    OK(floe_engine_reset(none, 9, &bn));
    uint8_t *unpacked = malloc(sy.obs);
    uint8_t actions[20];
    int same = 1;
    for (int t = 0; t < 12; t++) {
        for (int i = 0; i < 20; i++) actions[i] = (uint8_t)((t * 3 + i * 7) % 5);
        OK(floe_engine_step(bytes, actions, 20, &by));
        OK(floe_engine_step(bits, actions, 20, &bi));
        OK(floe_engine_step(none, actions, 20, &bn));
        OK(floe_obs_unpack_bits(5, bi.obs, si.obs, unpacked, sy.obs));
        same &= memcmp(unpacked, by.obs, sy.obs) == 0;
        same &= memcmp(bi.events, by.events, 20 * sizeof(uint32_t)) == 0;
        same &= memcmp(bn.events, by.events, 20 * sizeof(uint32_t)) == 0;
    }
    CHECK(same);
    FAILS(floe_obs_unpack_bits(5, bi.obs, si.obs - 1, unpacked, sy.obs), FLOE_STATUS_BUFFER_SIZE, "whole number");
    FAILS(floe_obs_unpack_bits(5, bi.obs, si.obs, unpacked, sy.obs - 4), FLOE_STATUS_BUFFER_SIZE, "unpack to");
    FAILS(floe_obs_unpack_bits(128, bi.obs, si.obs, unpacked, sy.obs), FLOE_STATUS_BAD_INPUT, "radius");
    FAILS(floe_obs_unpack_bits(5, NULL, si.obs, unpacked, sy.obs), FLOE_STATUS_NULL_POINTER, "bits");
    FAILS(floe_obs_unpack_bits(5, by.obs, si.obs, by.obs + 1, sy.obs), FLOE_STATUS_BAD_INPUT, "overlap");
    free(unpacked);
    free_buffers(&by);
    free_buffers(&bi);
    free_buffers(&bn);
    OK(floe_engine_free(bytes));
    OK(floe_engine_free(bits));
    OK(floe_engine_free(none));
    OK(floe_pool_free(pool));
}

static void test_verification(void) {
    floe_pool *pool = small_pool();
    /* Two plans for the 3x3 instance (optimum 8): an optimal one and one into the hole. */
    enum { K = 2, T = 5 };
    uint8_t moves[2 * K * T];
    memset(moves, FLOE_MOVES_END, sizeof moves);
    const uint8_t plan0[K][4] = {{4, 4, 2, 2}, {1, 1, 4, 4}}; /* RRDD, UURR */
    for (int a = 0; a < K; a++)
        for (int t = 0; t < 4; t++) moves[(0 * K + a) * T + t] = plan0[a][t];
    moves[(1 * K + 0) * T + 0] = 2; /* D */
    moves[(1 * K + 0) * T + 1] = 4; /* R: into the hole */
    moves[(1 * K + 1) * T + 0] = 0;
    uint32_t inst[2] = {0, 0}, agents[2] = {2, 2};
    floe_verdict_record rec[2];
    OK(floe_verify_moves(pool, inst, agents, 2, moves, sizeof moves, K, T, rec, 2));
    CHECK(rec[0].failure == FLOE_FAILURE_NONE && rec[0].optimal == 1 && rec[0].soc == 8);
    CHECK(rec[1].failure == FLOE_FAILURE_HOLE && rec[1].legal_steps == 1);
    FAILS(floe_verify_moves(pool, inst, agents, 2, moves, sizeof moves - 1, K, T, rec, 2), FLOE_STATUS_BUFFER_SIZE, "moves");
    FAILS(floe_verify_moves(pool, inst, agents, 2, moves, sizeof moves, K, T, rec, 1), FLOE_STATUS_BUFFER_SIZE, "out");
    uint32_t bad_inst[2] = {0, 9};
    FAILS(floe_verify_moves(pool, bad_inst, agents, 2, moves, sizeof moves, K, T, rec, 2), FLOE_STATUS_BAD_INPUT, "instance 9");
    uint32_t too_many[2] = {3, 2};
    FAILS(floe_verify_moves(pool, inst, too_many, 2, moves, sizeof moves, K, T, rec, 2), FLOE_STATUS_BAD_INPUT, "more than K");
    FAILS(floe_verify_moves(pool, NULL, agents, 2, moves, sizeof moves, K, T, rec, 2), FLOE_STATUS_NULL_POINTER, "instances");

    /* Free-text answers. */
    const char *answers[3] = {"Agent 0: RIGHT RIGHT DOWN DOWN\nAgent 1: UP UP RIGHT RIGHT",
                              "<answer>Agent 0: DOWN RIGHT\nAgent 1: WAIT</answer>", "I do not know."};
    uint32_t inst3[3] = {0, 0, 0};
    floe_verdict_record r3[3];
    OK(floe_verify_answers(pool, inst3, answers, 3, r3, 3));
    CHECK(r3[0].failure == FLOE_FAILURE_NONE && r3[0].optimal == 1);
    CHECK(r3[1].failure == FLOE_FAILURE_HOLE);
    CHECK(r3[2].failure == FLOE_FAILURE_PARSE_ERROR);
    const char *bad_utf8[1] = {"Agent 0: \xff"};
    FAILS(floe_verify_answers(pool, inst3, bad_utf8, 1, r3, 1), FLOE_STATUS_BAD_UTF8, "answers[0]");
    const char *null_answer[1] = {NULL};
    FAILS(floe_verify_answers(pool, inst3, null_answer, 1, r3, 1), FLOE_STATUS_NULL_POINTER, "answers[0]");

    /* One plan: JSON and text, and its failure's agent and time. */
    floe_verdict v;
    OK(floe_verify_plan(pool, 0, "{\"moves\": [\"RRDD\", \"UURR\"]}", FLOE_PLAN_JSON, &v));
    CHECK(v.valid == 1 && v.optimal == 1 && v.soc == 8 && v.makespan == 4);
    OK(floe_verify_plan(pool, 0, "Agent 0: DOWN RIGHT\nAgent 1: WAIT", FLOE_PLAN_TEXT, &v));
    CHECK(v.valid == 0 && v.kind == FLOE_FAILURE_HOLE && v.agent == 0 && v.time == 2);
    OK(floe_verify_plan(pool, 0, "{\"moves\": 3}", FLOE_PLAN_JSON, &v));
    CHECK(v.kind == FLOE_FAILURE_PARSE_ERROR);
    FAILS(floe_verify_plan(pool, 0, "x", 7, &v), FLOE_STATUS_BAD_INPUT, "format");

    /* Every form the header documents, and why a plan does not read. */
    char *detail = NULL;
    const char *same[] = {"[\"RRDD\", \"UURR\"]", " {\"moves\": [\"RRDD\", \"UURR\"]}",
                          "{\"soc\": 8, \"makespan\": 4, \"moves\": [\"RRDD\", \"UURR\"]}",
                          "[[[0, 0], [0, 1], [0, 2], [1, 2], [2, 2]], [[2, 0], [1, 0], [0, 0], [0, 1], [0, 2]]]"};
    for (int i = 0; i < 4; i++) {
        memset(&v, 0, sizeof v);
        OK(floe_verify_plan(pool, 0, same[i], FLOE_PLAN_JSON, &v));
        CHECK(v.valid == 1 && v.optimal == 1 && v.soc == 8);
        memset(&v, 0, sizeof v);
        OK(floe_verify_plan(pool, 0, same[i], FLOE_PLAN_AUTO, &v));
        CHECK(v.valid == 1 && v.optimal == 1 && v.soc == 8);
        OK(floe_verdict_detail(&detail));
        CHECK(strcmp(detail, "") == 0);
        floe_string_free(detail);
    }
    OK(floe_verify_plan(pool, 0, "Agent 0: RIGHT RIGHT DOWN DOWN\nAgent 1: UP UP RIGHT RIGHT", FLOE_PLAN_AUTO, &v));
    CHECK(v.valid == 1 && v.optimal == 1);
    OK(floe_verify_plan(pool, 0, "{\"moves\": 3}", FLOE_PLAN_JSON, &v));
    OK(floe_verdict_detail(&detail));
    CHECK(strstr(detail, "read as JSON") != NULL && strstr(detail, "expected a sequence") != NULL);
    floe_string_free(detail);
    /* JSON is read as JSON, never as prose; the same text asked for as text is prose. */
    OK(floe_verify_plan(pool, 0, "[\"RRDD\", \"UURX\"]", FLOE_PLAN_AUTO, &v));
    CHECK(v.kind == FLOE_FAILURE_PARSE_ERROR);
    OK(floe_verdict_detail(&detail));
    CHECK(strstr(detail, "agent 1, move 3: unknown move letter 'X'") != NULL);
    floe_string_free(detail);
    OK(floe_verify_plan(pool, 0, "[\"RRDD\", \"UURR\"]", FLOE_PLAN_TEXT, &v));
    OK(floe_verdict_detail(&detail));
    CHECK(v.kind == FLOE_FAILURE_PARSE_ERROR && strstr(detail, "no plan line found") != NULL);
    floe_string_free(detail);
    OK(floe_verify_plan(pool, 0, "Agent 0: DOWN RIGHT\nAgent 1: WAIT", FLOE_PLAN_TEXT, &v));
    OK(floe_verdict_detail(&detail));
    CHECK(v.kind == FLOE_FAILURE_HOLE && strstr(detail, "hole") != NULL);
    floe_string_free(detail);
    /* A failed call leaves no stale detail; other functions leave it alone. */
    FAILS(floe_verify_plan(pool, 9, "[]", FLOE_PLAN_JSON, &v), FLOE_STATUS_BAD_INPUT, "out of range");
    OK(floe_verdict_detail(&detail));
    CHECK(strcmp(detail, "") == 0);
    floe_string_free(detail);
    FAILS(floe_verdict_detail(NULL), FLOE_STATUS_NULL_POINTER, "out");
    FAILS(floe_verify_plan(pool, 1, "x", FLOE_PLAN_TEXT, &v), FLOE_STATUS_BAD_INPUT, "out of range");

    /* The solver, the prompt, the answer parser. */
    char *plan = NULL;
    uint32_t soc = 0, makespan = 0;
    OK(floe_solve(INSTANCE, 0, &plan, &soc, &makespan));
    CHECK(soc == 8 && makespan == 4 && strstr(plan, "moves") != NULL);
    OK(floe_verify_plan(pool, 0, plan, FLOE_PLAN_JSON, &v));
    CHECK(v.optimal == 1);
    floe_string_free(plan);
    FAILS(floe_solve("{\"grid\": [\"FH\", \"HF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [1, 1]}]}", 0, &plan,
                     &soc, &makespan),
          FLOE_STATUS_FAILED, "unsolvable");
    FAILS(floe_solve("{}", 0, &plan, &soc, &makespan), FLOE_STATUS_BAD_INPUT, "instance");
    FAILS(floe_solve(INSTANCE, 0, &plan, NULL, &makespan), FLOE_STATUS_NULL_POINTER, "out_soc");
    char *prompt = NULL;
    OK(floe_render_prompt(INSTANCE, &prompt));
    CHECK(strstr(prompt, "Agent 0") != NULL);
    floe_string_free(prompt);
    char *parsed = NULL;
    OK(floe_parse_answer(INSTANCE, "Agent 0: RIGHT RIGHT DOWN DOWN\nAgent 1: UP UP RIGHT RIGHT", &parsed));
    CHECK(strstr(parsed, "RRDD") != NULL);
    floe_string_free(parsed);
    FAILS(floe_parse_answer(INSTANCE, "Agent 0: RIGHT", &parsed), FLOE_STATUS_BAD_INPUT, "agent");
    FAILS(floe_parse_answer(INSTANCE, NULL, &parsed), FLOE_STATUS_NULL_POINTER, "answer");
    OK(floe_pool_free(pool));
}

static void test_plugins(const char *failing_c, const char *faulty_rust, const char *engineer_c) {
    floe_plugin *reward = NULL, *curriculum = NULL, *engineer = NULL;
    OK(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_REWARD, "tiered", NULL, &reward));
    uint32_t kind = 0;
    OK(floe_plugin_kind(reward, &kind));
    CHECK(kind == FLOE_PLUGIN_KIND_REWARD);
    floe_verdict_record rec[2] = {{0, 1, {0, 0}, 2, 2, 4, 4, 8, 8}, {5, 0, {0, 0}, 2, FLOE_UNKNOWN, 1, 2, FLOE_UNKNOWN, 8}};
    float rewards[2] = {0, 0};
    OK(floe_plugin_rewards(reward, rec, 2, rewards, 2));
    CHECK(rewards[0] > rewards[1]);
    FAILS(floe_plugin_rewards(reward, rec, 2, rewards, 1), FLOE_STATUS_BUFFER_SIZE, "one reward per record");
    FAILS(floe_plugin_rewards(reward, rec, 1, rewards, 2), FLOE_STATUS_BUFFER_SIZE, "2 for 1");
    floe_verdict_record broken = rec[0];
    broken.failure = 42;
    FAILS(floe_plugin_rewards(reward, &broken, 1, rewards, 1), FLOE_STATUS_BAD_INPUT, "failure code");
    floe_step_outcome step = {3, 2, 0};
    FAILS(floe_plugin_step_rewards(reward, &step, 1, rewards, 1), FLOE_STATUS_UNSUPPORTED, "step");
    floe_plugin *shaped = NULL;
    OK(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_REWARD, "shaped", "{}", &shaped));
    OK(floe_plugin_step_rewards(shaped, &step, 1, rewards, 1));
    FAILS(floe_plugin_step_rewards(shaped, &step, 1, rewards, 2), FLOE_STATUS_BUFFER_SIZE, "one reward per step outcome");
    CHECK(rewards[0] > 0.0f);
    OK(floe_plugin_free(shaped));

    OK(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_CURRICULUM, "plr", NULL, &curriculum));
    char *config = NULL;
    OK(floe_plugin_next_config(curriculum, "{\"rounds\": []}", &config));
    floe_pool *pool = NULL;
    OK(floe_pool_generate(config, 5, 7, &pool));
    size_t n = 0;
    OK(floe_pool_count(pool, &n));
    CHECK(n == 5);
    OK(floe_pool_free(pool));
    floe_string_free(config);
    FAILS(floe_plugin_next_config(curriculum, "{\"rounds\": 3}", &config), FLOE_STATUS_CONFIG, "malformed JSON");
    FAILS(floe_plugin_next_config(curriculum, "\xff", &config), FLOE_STATUS_BAD_UTF8, "UTF-8");
    floe_replay_record pool_recs[3] = {{1, 3, 2, 0, 4, 0.5f, 0.1f, 0.5f, 0},
                                       {2, 3, 2, 0, 4, 0.1f, 0.4f, 0.2f, 0},
                                       {3, 4, 2, 0, 0, 0.0f, 0.0f, 0.0f, 0}};
    floe_replay_request req = {1, 2, 9};
    uint32_t picked[2];
    size_t picked_len = 0;
    OK(floe_plugin_sample_replay(curriculum, pool_recs, 3, &req, picked, 2, &picked_len));
    CHECK(picked_len == 2 && picked[0] < 3 && picked[1] < 3 && picked[0] != picked[1]);
    FAILS(floe_plugin_sample_replay(curriculum, pool_recs, 3, &req, picked, 1, &picked_len), FLOE_STATUS_BUFFER_SIZE, "room");
    pool_recs[0].success_rate = 2.0f;
    FAILS(floe_plugin_sample_replay(curriculum, pool_recs, 3, &req, picked, 2, &picked_len), FLOE_STATUS_BAD_INPUT, "success_rate");
    FAILS(floe_plugin_rewards(curriculum, rec, 2, rewards, 2), FLOE_STATUS_UNSUPPORTED, "not a reward");

    OK(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_ENV_ENGINEER, "rules", NULL, &engineer));
    char *reply = NULL;
    OK(floe_plugin_design(engineer, "Round 0. History:\n```json\n{\"rounds\": []}\n```\n", NULL, &reply));
    CHECK(strstr(reply, "\"config\"") != NULL && strstr(reply, "\"rationale\"") != NULL);
    floe_string_free(reply);
    FAILS(floe_plugin_design(engineer, "no history here", NULL, &reply), FLOE_STATUS_BAD_INPUT, "history");
    FAILS(floe_plugin_design(curriculum, "x", NULL, &reply), FLOE_STATUS_UNSUPPORTED, "not a engineer");
    /* The design limits reach a C engineer as a value (its design_with_limits). */
    floe_plugin *c_engineer = NULL;
    OK(floe_plugin_new(engineer_c, FLOE_PLUGIN_KIND_ENV_ENGINEER, "c-constant-engineer", NULL, &c_engineer));
    const uint32_t counts[] = {3, 2};
    floe_design_limits limits = {4, 8, 2, 0, 0.25, 0.0, counts, 2};
    OK(floe_plugin_design(c_engineer, "twelve bytes", &limits, &reply));
    CHECK(strstr(reply, "read 12 bytes of context; sizes 4 to 8, agents 3") != NULL);
    floe_string_free(reply);
    limits.agents_len = 0;
    FAILS(floe_plugin_design(c_engineer, "x", &limits, &reply), FLOE_STATUS_CONFIG, "agents");
    limits.agents = NULL;
    limits.agents_len = 2;
    FAILS(floe_plugin_design(c_engineer, "x", &limits, &reply), FLOE_STATUS_NULL_POINTER, "limits->agents");
    OK(floe_plugin_free(c_engineer));

    /* Unknown plugins, bad parameters, bad kinds, libraries that fail. */
    floe_plugin *p = NULL;
    FAILS(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_REWARD, "golden", NULL, &p), FLOE_STATUS_UNKNOWN_PLUGIN, "golden");
    FAILS(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_REWARD, "tiered", "{\"valid\": \"yes\"}", &p), FLOE_STATUS_CONFIG, "valid");
    FAILS(floe_plugin_new(NULL, 9, "tiered", NULL, &p), FLOE_STATUS_BAD_INPUT, "kind");
    FAILS(floe_plugin_new("/nonexistent/libnothing.so", FLOE_PLUGIN_KIND_REWARD, "x", NULL, &p), FLOE_STATUS_FAILED, "libnothing");
    FAILS(floe_plugin_new(failing_c, FLOE_PLUGIN_KIND_REWARD, "c-failing", "{\"fail-entry\": 1}", &p), FLOE_STATUS_CONFIG,
          "asked to fail");
    OK(floe_plugin_new(failing_c, FLOE_PLUGIN_KIND_REWARD, "c-failing", NULL, &p));
    rewards[0] = 7.0f;
    FAILS(floe_plugin_rewards(p, rec, 2, rewards, 2), FLOE_STATUS_FAILED, "out of luck after 2 records");
    CHECK(rewards[0] == 7.0f); /* the caller's buffer is left as it was */
    OK(floe_plugin_free(p));
    OK(floe_plugin_new(faulty_rust, FLOE_PLUGIN_KIND_REWARD, "panics", NULL, &p));
    FAILS(floe_plugin_rewards(p, rec, 2, rewards, 2), FLOE_STATUS_PANICKED, "2 records are too many");
    OK(floe_plugin_free(p));
    OK(floe_plugin_new(faulty_rust, FLOE_PLUGIN_KIND_REWARD, "fails", NULL, &p));
    FAILS(floe_plugin_rewards(p, rec, 2, rewards, 2), FLOE_STATUS_FAILED, "always refuses");
    OK(floe_plugin_free(p));
    FAILS(floe_plugin_new(faulty_rust, FLOE_PLUGIN_KIND_REWARD, "panics-on-create", NULL, &p), FLOE_STATUS_PANICKED,
          "no instance today");
    OK(floe_plugin_new(faulty_rust, FLOE_PLUGIN_KIND_CURRICULUM, "bad-config", NULL, &p));
    FAILS(floe_plugin_next_config(p, "{\"rounds\": []}", &config), FLOE_STATUS_BAD_OUTPUT, "hole_ratio");
    OK(floe_plugin_free(p));
    FAILS(floe_plugin_kind((floe_plugin *)((char *)reward + 8), &kind), FLOE_STATUS_WRONG_HANDLE, "not a live handle");

    OK(floe_plugin_free(reward));
    OK(floe_plugin_free(curriculum));
    OK(floe_plugin_free(engineer));
    OK(floe_plugin_free(NULL));
}

/* A step-reward plugin named in the engine's configuration scores every step in place of the
 * engine's weights: the built-in `shaped` (0.1 a cell of progress, 0.01 a step, -1 for a hole,
 * +1 on arrival) on the 3x3 instance, by hand; refusals; a plugin that fails mid-step. */
static void near(float got, float want) {
    CHECK(got > want - 1e-5f && got < want + 1e-5f);
}

static void test_step_rewards(const char *failing_c) {
    floe_pool *pool = small_pool();
    floe_engine *plain = NULL, *shaped = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 1}", &plain));
    OK(floe_engine_new(pool, "{\"num_envs\": 1, \"step_reward\": {\"name\": \"shaped\"}}", &shaped));
    floe_buffer_sizes s;
    OK(floe_engine_sizes(shaped, &s));
    CHECK(s.agents == 2);
    floe_step_buffers b = buffers_for(&s), c = buffers_for(&s);
    /* The optimal plan RRDD, UURR: each step one cell closer (0.1 - 0.01), the last arrives. */
    const uint8_t plan[4][2] = {{4, 1}, {4, 1}, {2, 4}, {2, 4}};
    OK(floe_engine_reset(plain, 1, &c));
    OK(floe_engine_reset(shaped, 1, &b));
    for (int t = 0; t < 4; t++) {
        uint8_t actions[2] = {plan[t][0], plan[t][1]};
        OK(floe_engine_step(plain, actions, 2, &c));
        OK(floe_engine_step(shaped, actions, 2, &b));
        float want = t < 3 ? 0.09f : 1.09f;
        near(b.rewards[0], want);
        near(b.rewards[1], want);
        CHECK(c.rewards[0] != b.rewards[0]); /* the engine's own weights differ */
        CHECK(memcmp(b.events, c.events, 2 * sizeof(uint32_t)) == 0);
        CHECK(b.terminated[0] == c.terminated[0]);
    }
    CHECK(b.terminated[0] && b.info[0].outcome == FLOE_OUTCOME_SUCCESS);
    /* Right then down into the hole, the other agent waiting: -0.01 - 1 and -0.01. */
    OK(floe_engine_reset(shaped, 2, &b));
    uint8_t right[2] = {4, 0}, down[2] = {2, 0};
    OK(floe_engine_step(shaped, right, 2, &b));
    near(b.rewards[0], 0.09f);
    near(b.rewards[1], -0.01f);
    OK(floe_engine_step(shaped, down, 2, &b));
    CHECK(b.events[0] & FLOE_EVENT_HOLE);
    near(b.rewards[0], -1.01f);
    near(b.rewards[1], -0.01f);
    OK(floe_engine_free(plain));
    OK(floe_engine_free(shaped));

    /* Refused: a plan-only reward, an unknown name, bad parameters, a library that does not load. */
    floe_engine *e = NULL;
    FAILS(floe_engine_new(pool, "{\"step_reward\": {\"name\": \"tiered\"}}", &e), FLOE_STATUS_CONFIG, "not steps");
    FAILS(floe_engine_new(pool, "{\"step_reward\": {\"name\": \"golden\"}}", &e), FLOE_STATUS_UNKNOWN_PLUGIN, "golden");
    FAILS(floe_engine_new(pool, "{\"step_reward\": {\"name\": \"shaped\", \"params\": {\"gamma\": 2}}}", &e),
          FLOE_STATUS_CONFIG, "gamma");
    FAILS(floe_engine_new(pool, "{\"step_reward\": {\"name\": \"x\", \"library\": \"/nonexistent/libnothing.so\"}}", &e),
          FLOE_STATUS_FAILED, "libnothing");
    FAILS(floe_engine_new(pool, "{\"step_reward\": \"shaped\"}", &e), FLOE_STATUS_CONFIG, "step_reward");
    CHECK(e == NULL);

    /* A plugin that fails: the step happened (events, state), the rewards are the engine's. */
    char config[512];
    snprintf(config, sizeof config, "{\"num_envs\": 1, \"step_reward\": {\"name\": \"c-failing\", \"library\": \"%s\"}}",
             failing_c);
    OK(floe_engine_new(pool, config, &e));
    OK(floe_engine_reset(e, 3, &b));
    FAILS(floe_engine_step(e, right, 2, &b), FLOE_STATUS_FAILED, "out of luck after 2 step outcomes");
    CHECK(b.events[0] & FLOE_EVENT_MOVED);
    floe_env_record env;
    floe_agent_record agents[2];
    OK(floe_engine_state(e, &env, 1, agents, 2));
    CHECK(env.step == 1);
    OK(floe_engine_free(e));
    free_buffers(&b);
    free_buffers(&c);
    OK(floe_pool_free(pool));
}

/* The wgpu engine gives the CPU engine's bytes. Run when FLOE_TEST_GPU is set (scripts/c-api.sh
 * sets it outside valgrind and the sanitizers, which the GPU driver's own code would swamp);
 * FLOE_TEST_GPU=require makes a missing adapter a failure. */
static void test_gpu(void) {
    const char *want = getenv("FLOE_TEST_GPU");
    if (want == NULL) return;
    floe_pool *pool = NULL;
    OK(floe_pool_generate("{\"size\": 6, \"agents\": 3, \"hole_ratio\": 0.2, \"wait_ratio\": 0.5}", 10, 2, &pool));
    floe_engine *cpu = NULL, *gpu = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 37, \"episode_limit\": 12}", &cpu));
    floe_status st = floe_engine_new(pool, "{\"num_envs\": 37, \"episode_limit\": 12, \"backend\": \"gpu\"}", &gpu);
    if (st == FLOE_STATUS_GPU && strcmp(want, "require") != 0) {
        printf("test_api: no GPU adapter (%s); the GPU comparison is skipped\n", floe_last_error());
        OK(floe_engine_free(cpu));
        OK(floe_pool_free(pool));
        return;
    }
    OK(st);
    char *backend = NULL;
    OK(floe_engine_backend(gpu, &backend));
    CHECK(strncmp(backend, "gpu", 3) == 0);
    printf("test_api: comparing with %s\n", backend);
    floe_string_free(backend);
    floe_buffer_sizes s;
    OK(floe_engine_sizes(gpu, &s));
    floe_step_buffers a = buffers_for(&s), b = buffers_for(&s);
    OK(floe_engine_reset(cpu, 9, &a));
    OK(floe_engine_reset(gpu, 9, &b));
    CHECK(memcmp(a.obs, b.obs, s.obs) == 0);
    uint8_t *actions = malloc(s.actions);
    uint64_t x = 7;
    for (int t = 0; t < 30; t++) {
        for (size_t i = 0; i < s.actions; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            actions[i] = (uint8_t)(x % 5);
        }
        OK(floe_engine_step(cpu, actions, s.actions, &a));
        OK(floe_engine_step(gpu, actions, s.actions, &b));
        CHECK(memcmp(a.obs, b.obs, s.obs) == 0 && memcmp(a.final_obs, b.final_obs, s.obs) == 0);
        CHECK(memcmp(a.rewards, b.rewards, s.agents * sizeof(float)) == 0);
        CHECK(memcmp(a.events, b.events, s.agents * sizeof(uint32_t)) == 0);
        CHECK(memcmp(a.terminated, b.terminated, s.envs) == 0 && memcmp(a.truncated, b.truncated, s.envs) == 0);
        CHECK(memcmp(a.info, b.info, s.envs * sizeof(floe_env_info)) == 0);
    }
    /* Weights and a refill: still the same bytes. */
    double w[10] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 5};
    OK(floe_engine_set_weights(cpu, w, 10));
    OK(floe_engine_set_weights(gpu, w, 10));
    floe_pool *two = NULL;
    OK(floe_pool_generate("{\"size\": 5, \"agents\": 3, \"hole_ratio\": 0.1}", 2, 4, &two));
    size_t slots[2] = {1, 9};
    floe_refilled rc, rg;
    OK(floe_engine_refill(cpu, slots, 2, two, &a, &rc));
    OK(floe_engine_refill(gpu, slots, 2, two, &b, &rg));
    CHECK(rc.truncated == rg.truncated && rc.restarted == rg.restarted);
    OK(floe_pool_free(two));
    for (int t = 0; t < 20; t++) {
        for (size_t i = 0; i < s.actions; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            actions[i] = (uint8_t)(x % 5);
        }
        OK(floe_engine_step(cpu, actions, s.actions, &a));
        OK(floe_engine_step(gpu, actions, s.actions, &b));
        CHECK(memcmp(a.obs, b.obs, s.obs) == 0 && memcmp(a.final_obs, b.final_obs, s.obs) == 0);
        CHECK(memcmp(a.info, b.info, s.envs * sizeof(floe_env_info)) == 0);
    }
    FAILS(floe_engine_step(gpu, actions, s.actions - 1, &b), FLOE_STATUS_BUFFER_SIZE, "actions");
    free(actions);
    free_buffers(&a);
    free_buffers(&b);
    OK(floe_engine_free(cpu));
    OK(floe_engine_free(gpu));
    OK(floe_pool_free(pool));
}

/* Level sampling: weights and refills on an engine, the C level sampler loaded as a plugin and
 * called directly, and floe_levels driving an engine with it; every refusal leaves the engine as
 * it was. */
static void test_levels(const char *sampler_c) {
    floe_levels *levels = NULL;
    char spec[512];
    snprintf(spec, sizeof spec,
             "{\"sampler\": {\"name\": \"c-learnability\", \"library\": \"%s\", \"params\": {\"min_episodes\": 1}},"
             " \"space\": {\"agents\": [1, 1], \"size\": [2, 3], \"hole_ratio\": [0, 0], \"wait_ratio\": [0, 0],"
             " \"solve\": false},"
             " \"seed\": 3, \"update_every\": 4}",
             sampler_c);
    OK(floe_levels_new(spec, &levels));
    floe_pool *pool = NULL;
    OK(floe_levels_pool(levels, 6, &pool));
    size_t count = 0;
    OK(floe_pool_count(pool, &count));
    CHECK(count == 6);
    floe_engine *engine = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 9, \"mode\": \"soft\", \"episode_limit\": 6}", &engine));
    floe_buffer_sizes s;
    OK(floe_engine_sizes(engine, &s));
    floe_step_buffers b = buffers_for(&s);

    /* Weights: refused ones change nothing. */
    double w[6] = {1, 0, 2, 0, 0, 1};
    OK(floe_engine_set_weights(engine, w, 6));
    double bad[6] = {1, -1, 0, 0, 0, 0};
    FAILS(floe_engine_set_weights(engine, bad, 6), FLOE_STATUS_BAD_INPUT, "weight 1 is -1");
    FAILS(floe_engine_set_weights(engine, w, 5), FLOE_STATUS_BAD_INPUT, "5 weights for a pool of 6");
    double zero[6] = {0};
    FAILS(floe_engine_set_weights(engine, zero, 6), FLOE_STATUS_BAD_INPUT, "all 6 weights are zero");
    FAILS(floe_engine_refill(engine, NULL, 0, pool, &b, NULL), FLOE_STATUS_NOT_RESET, "reset");
    OK(floe_engine_reset(engine, 5, &b));
    floe_env_record envs[9];
    floe_agent_record agents[9];
    OK(floe_engine_state(engine, envs, 9, agents, 9 * s.max_agents));
    for (int e = 0; e < 9; e++) CHECK(envs[e].instance == 0 || envs[e].instance == 2 || envs[e].instance == 5);

    /* A refill of slot 1 with a level of its own. */
    floe_pool *one = NULL;
    OK(floe_pool_generate("{\"size\": 3, \"agents\": 1, \"solve\": false}", 1, 9, &one));
    size_t slot = 1, far = 6;
    floe_refilled done = {99, 99};
    OK(floe_engine_refill(engine, &slot, 1, one, &b, &done));
    CHECK(done.truncated == 0 && done.restarted == 0); /* slot 1 has weight 0: nobody plays it */
    FAILS(floe_engine_refill(engine, &far, 1, one, &b, &done), FLOE_STATUS_BAD_INPUT, "slot 6 is out of range");
    floe_pool *big = NULL;
    OK(floe_pool_generate("{\"size\": 9, \"agents\": 1, \"solve\": false}", 1, 9, &big));
    FAILS(floe_engine_refill(engine, &slot, 1, big, &b, &done), FLOE_STATUS_BAD_INPUT, "room");
    OK(floe_pool_free(big));

    /* The C level sampler, called as a plugin. */
    floe_plugin *plugin = NULL;
    OK(floe_plugin_new(sampler_c, FLOE_PLUGIN_KIND_LEVEL_SAMPLER, "c-learnability", "{\"min_episodes\": 1}", &plugin));
    uint32_t kind = 0;
    OK(floe_plugin_kind(plugin, &kind));
    CHECK(kind == FLOE_PLUGIN_KIND_LEVEL_SAMPLER);
    floe_level_record recs[2] = {{0, 0, 4, 4, 2, 0, FLOE_UNKNOWN, 0}, {1, 0, 4, 4, 2, 0, FLOE_UNKNOWN, 1}};
    floe_env_info eps[3];
    memset(eps, 0, sizeof eps);
    eps[0].outcome = FLOE_OUTCOME_SUCCESS;
    eps[1].outcome = FLOE_OUTCOME_FAILURE, eps[1].instance = 1;
    eps[2].outcome = FLOE_OUTCOME_SUCCESS, eps[2].instance = 1;
    double weights[2];
    uint32_t has = 0, refill[2];
    size_t refill_len = 9;
    char *config = (char *)1;
    OK(floe_plugin_update_levels(plugin, recs, 2, eps, 3, NULL, weights, &has, refill, 2, &refill_len, &config));
    /* Slot 0: solved once of once (0.05, refilled); slot 1: once of two (0.05 + 0.25, in play). */
    CHECK(has == 1 && weights[0] == 0.05 && weights[1] == 0.3);
    CHECK(refill_len == 1 && refill[0] == 0 && config == NULL);
    float nan_score[3] = {0, 0, 0.0f / 0.0f};
    FAILS(floe_plugin_update_levels(plugin, recs, 2, eps, 3, nan_score, weights, &has, refill, 2, &refill_len, &config),
          FLOE_STATUS_BAD_INPUT, "score 2 is NaN");
    FAILS(floe_plugin_update_levels(plugin, recs, 2, eps, 3, NULL, weights, &has, refill, 1, &refill_len, &config),
          FLOE_STATUS_BUFFER_SIZE, "room for 1");
    OK(floe_plugin_free(plugin));

    /* floe_levels drives the engine with it: every 4 steps the sampler is called, and levels solved
     * every time (one agent on 2x2 and 3x3 maps, which random moves often solve) are replaced by
     * new ones from the space. */
    floe_levels_applied applied;
    OK(floe_levels_start(levels, engine, &b, &applied));
    CHECK(applied.called == 1 && applied.weights == 1);
    uint8_t *actions = calloc(s.actions, 1);
    uint64_t x = 11;
    size_t refilled = 0, calls = 0, episodes = 0;
    for (int t = 0; t < 40; t++) {
        for (size_t i = 0; i < s.actions; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            actions[i] = (uint8_t)(x % 5);
        }
        OK(floe_engine_step(engine, actions, s.actions, &b));
        OK(floe_levels_after_step(levels, engine, &b, &applied));
        calls += applied.called;
        refilled += applied.refilled;
        episodes += applied.episodes;
    }
    printf("test_api: level sampler: %zu calls, %zu episodes, %zu refilled\n", calls, episodes, refilled);
    CHECK(calls == 10 && episodes > 20 && refilled > 0);
    /* The host's own call, with its scores, on the episodes kept since. */
    floe_env_info pending[64];
    size_t n = 0;
    OK(floe_levels_pending(levels, pending, 64, &n));
    CHECK(n <= 64);
    float scores[64];
    for (size_t i = 0; i < n; i++) scores[i] = 0.5f;
    FAILS(floe_levels_update(levels, engine, pending, n, scores, n + 1, &b, &applied), FLOE_STATUS_BAD_INPUT, "scores for");
    OK(floe_levels_update(levels, engine, pending, n, scores, n, &b, &applied));
    CHECK(applied.episodes == n);
    floe_step_buffers short_b = b;
    short_b.obs_len -= 1;
    FAILS(floe_levels_update(levels, engine, NULL, 0, NULL, 0, &short_b, &applied), FLOE_STATUS_BUFFER_SIZE, "obs");
    FAILS(floe_levels_new("{\"sampler\": {\"name\": \"nope\"}}", &levels), FLOE_STATUS_UNKNOWN_PLUGIN, "nope");
    /* Any curriculum designs phases, from C too: `fixed` and `sec` by name, `plr` through `phases`,
     * and a level-sampler plugin made by floe_plugin_new. */
    static const char *designers[3] = {
        "{\"sampler\": {\"name\": \"fixed\", \"params\": {\"phase_episodes\": 8}}, \"space\": {\"size\": [3, 4], \"solve\": false}}",
        "{\"sampler\": {\"name\": \"sec\", \"params\": {\"phase_episodes\": 8}}, \"space\": {\"size\": [3, 4], \"solve\": false}}",
        "{\"sampler\": {\"name\": \"phases\", \"params\": {\"phase_episodes\": 8, \"designer\": {\"name\": \"plr\"}}},"
        " \"space\": {\"size\": [3, 4], \"solve\": false}}"};
    for (int d = 0; d < 3; d++) {
        floe_levels *phased = NULL;
        OK(floe_levels_new(designers[d], &phased));
        floe_pool *ppool = NULL;
        OK(floe_levels_pool(phased, 4, &ppool));
        floe_engine *pe = NULL;
        OK(floe_engine_new(ppool, "{\"num_envs\": 6, \"mode\": \"soft\", \"episode_limit\": 4}", &pe));
        floe_buffer_sizes ps;
        OK(floe_engine_sizes(pe, &ps));
        floe_step_buffers pb = buffers_for(&ps);
        OK(floe_engine_reset(pe, 1, &pb));
        floe_levels_applied pa;
        OK(floe_levels_start(phased, pe, &pb, &pa));
        CHECK(pa.called == 1 && pa.refilled == 4); /* the first phase's configuration fills the pool */
        free_buffers(&pb);
        OK(floe_engine_free(pe));
        OK(floe_pool_free(ppool));
        OK(floe_levels_free(phased));
    }
    floe_plugin *frontier = NULL;
    OK(floe_plugin_new(NULL, FLOE_PLUGIN_KIND_LEVEL_SAMPLER, "frontier", "{\"phase_episodes\": 2}", &frontier));
    OK(floe_plugin_free(frontier));
    FAILS(floe_levels_new("{\"space\": {\"size\": [9, 3]}}", &levels), FLOE_STATUS_CONFIG, "size [9, 3]");
    FAILS(floe_levels_free((floe_levels *)engine), FLOE_STATUS_WRONG_HANDLE, "floe_engine");
    free(actions);
    free_buffers(&b);
    OK(floe_levels_free(levels));
    OK(floe_levels_free(NULL));
    OK(floe_engine_free(engine));
    OK(floe_pool_free(one));
    OK(floe_pool_free(pool));
}

/* Levels from a file and from MovingAI maps, named in the spec: the pool holds the file's levels
 * with room for all of them, the maps' grids with drawn agents; a malformed file and a map over
 * the engine's side are refused, naming the line and the map. */
static void test_level_sources(const char *dir) {
    char path[512], map[512], spec[1536];
    snprintf(path, sizeof path, "%s/levels.jsonl", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f, "%s\n%s\n", INSTANCE,
            "{\"grid\": [\"FFFF\", \"FFFF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [1, 3]}]}");
    fclose(f);
    snprintf(spec, sizeof spec,
             "{\"sampler\": {\"name\": \"uniform\", \"params\": {\"max_plays\": 1}},"
             " \"source\": {\"file\": {\"path\": \"%s\"}}, \"seed\": 1, \"update_every\": 1}", path);
    floe_levels *levels = NULL;
    OK(floe_levels_new(spec, &levels));
    floe_pool *pool = NULL;
    OK(floe_levels_pool(levels, 4, &pool));
    size_t count = 0, agents = 0;
    uint32_t side = 0;
    OK(floe_pool_count(pool, &count));
    OK(floe_pool_max_agents(pool, &agents));
    OK(floe_pool_max_side(pool, &side));
    CHECK(count == 4 && agents == 2 && side == 4);
    int from_file = 0;
    for (size_t i = 0; i < count; i++) {
        char *json = NULL;
        OK(floe_pool_instance_json(pool, i, &json));
        from_file += strstr(json, "\"FFFF\"") != NULL || strstr(json, "\"FHF\"") != NULL;
        CHECK(strstr(json, "\"optimal\"") != NULL); /* solved when the file was read */
        floe_string_free(json);
    }
    CHECK(from_file == 4);
    OK(floe_pool_free(pool));
    OK(floe_levels_free(levels));

    snprintf(map, sizeof map, "%s/room.map", dir);
    f = fopen(map, "w");
    CHECK(f != NULL);
    fprintf(f, "type octile\nheight 3\nwidth 5\nmap\n.....\n.@@..\n.....\n");
    fclose(f);
    snprintf(spec, sizeof spec, "{\"source\": {\"maps\": {\"files\": [\"%s\"], \"agents\": [2, 3]}}}", map);
    OK(floe_levels_new(spec, &levels));
    OK(floe_levels_pool(levels, 6, &pool));
    OK(floe_pool_max_agents(pool, &agents));
    OK(floe_pool_max_side(pool, &side));
    CHECK(agents == 3 && side == 5);
    OK(floe_pool_free(pool));
    OK(floe_levels_free(levels));

    f = fopen(path, "a");
    CHECK(f != NULL);
    fprintf(f, "{\"grid\": [\"FF\"]}\n");
    fclose(f);
    snprintf(spec, sizeof spec, "{\"source\": {\"file\": {\"path\": \"%s\"}}}", path);
    FAILS(floe_levels_new(spec, &levels), FLOE_STATUS_CONFIG, "levels.jsonl, line 3");
    f = fopen(map, "w");
    CHECK(f != NULL);
    fprintf(f, "type octile\nheight 1\nwidth 1025\nmap\n");
    for (int i = 0; i < 1025; i++) fputc('.', f);
    fputc('\n', f);
    fclose(f);
    snprintf(spec, sizeof spec, "{\"source\": {\"maps\": {\"files\": [\"%s\"]}}}", map);
    FAILS(floe_levels_new(spec, &levels), FLOE_STATUS_CONFIG, "room.map is 1025x1, over the engine's side of 1024");
    snprintf(spec, sizeof spec, "{\"sampler\": {\"name\": \"frontier\"}, \"source\": {\"file\": {\"path\": \"%s\"}}}", path);
    FAILS(floe_levels_new(spec, &levels), FLOE_STATUS_CONFIG, "`frontier` designs");
    remove(path);
    remove(map);
}

/* Level sampling under bad input, each refusal compared byte for byte with a twin engine and
 * sampler that never saw it: short buffers, a misaligned `out`, a refused call and its retry,
 * calls before the reset, an episode on a foreign slot, a second engine, and edited outputs. */
typedef struct {
    floe_levels *levels;
    floe_pool *pool;
    floe_engine *engine;
    floe_buffer_sizes s;
    floe_step_buffers b;
} twin;

#define TWIN_ENVS 7
#define TWIN_SLOTS 16 /* more slots than environments: a played level is often free to refill */

static twin twin_new(void) {
    twin t;
    /* A sampler that refills every level once it has been played, called every other step. */
    OK(floe_levels_new("{\"sampler\": {\"name\": \"uniform\", \"params\": {\"max_plays\": 1}},"
                       " \"space\": {\"agents\": [1, 2], \"size\": [3, 4], \"hole_ratio\": [0, 0.1],"
                       " \"wait_ratio\": [0, 0], \"solve\": false}, \"seed\": 3, \"update_every\": 2}",
                       &t.levels));
    OK(floe_levels_pool(t.levels, TWIN_SLOTS, &t.pool));
    OK(floe_engine_new(t.pool, "{\"num_envs\": 7, \"mode\": \"soft\", \"episode_limit\": 5}", &t.engine));
    OK(floe_engine_sizes(t.engine, &t.s));
    t.b = buffers_for(&t.s);
    return t;
}

static void twin_free(twin *t) {
    free_buffers(&t->b);
    OK(floe_levels_free(t->levels));
    OK(floe_engine_free(t->engine));
    OK(floe_pool_free(t->pool));
}

/* The engine's state, its buffers and the kept episodes of `x` are those of `y`, byte for byte. */
static void twin_same(twin *x, twin *y) {
    floe_env_record ex[TWIN_ENVS], ey[TWIN_ENVS];
    floe_agent_record ax[TWIN_ENVS * 2], ay[TWIN_ENVS * 2];
    OK(floe_engine_state(x->engine, ex, TWIN_ENVS, ax, x->s.agents));
    OK(floe_engine_state(y->engine, ey, TWIN_ENVS, ay, y->s.agents));
    CHECK(memcmp(ex, ey, sizeof ex) == 0 && memcmp(ax, ay, x->s.agents * sizeof ax[0]) == 0);
    CHECK(memcmp(x->b.obs, y->b.obs, x->s.obs) == 0 && memcmp(x->b.final_obs, y->b.final_obs, x->s.obs) == 0);
    CHECK(memcmp(x->b.rewards, y->b.rewards, x->s.agents * sizeof(float)) == 0);
    CHECK(memcmp(x->b.events, y->b.events, x->s.agents * sizeof(uint32_t)) == 0);
    CHECK(memcmp(x->b.terminated, y->b.terminated, x->s.envs) == 0);
    CHECK(memcmp(x->b.truncated, y->b.truncated, x->s.envs) == 0);
    CHECK(memcmp(x->b.info, y->b.info, x->s.envs * sizeof(floe_env_info)) == 0);
    floe_env_info px[256], py[256];
    size_t nx = 0, ny = 0;
    OK(floe_levels_pending(x->levels, px, 256, &nx));
    OK(floe_levels_pending(y->levels, py, 256, &ny));
    CHECK(nx == ny && nx <= 256 && memcmp(px, py, nx * sizeof px[0]) == 0);
    /* The pools: every slot's record (generation, size, agents, holes, players), and the maps the
     * environments play. */
    floe_level_record lx[TWIN_SLOTS], ly[TWIN_SLOTS];
    size_t lnx = 0, lny = 0;
    OK(floe_engine_levels(x->engine, lx, TWIN_SLOTS, &lnx));
    OK(floe_engine_levels(y->engine, ly, TWIN_SLOTS, &lny));
    CHECK(lnx == TWIN_SLOTS && lny == TWIN_SLOTS && memcmp(lx, ly, sizeof lx) == 0);
    size_t g = x->s.global_state;
    uint8_t *gx = malloc(g), *gy = malloc(g);
    OK(floe_engine_global_state(x->engine, gx, g));
    OK(floe_engine_global_state(y->engine, gy, g));
    CHECK(memcmp(gx, gy, g) == 0);
    free(gx);
    free(gy);
}

/* One step of both with the same actions, and after_step on both, which agree. */
static void twin_step(twin *x, twin *y, uint64_t *rng) {
    uint8_t actions[TWIN_ENVS * 2];
    for (size_t i = 0; i < x->s.actions; i++) {
        *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
        actions[i] = (uint8_t)(*rng % 5);
    }
    OK(floe_engine_step(x->engine, actions, x->s.actions, &x->b));
    OK(floe_engine_step(y->engine, actions, y->s.actions, &y->b));
    floe_levels_applied ax, ay;
    OK(floe_levels_after_step(x->levels, x->engine, &x->b, &ax));
    OK(floe_levels_after_step(y->levels, y->engine, &y->b, &ay));
    CHECK(memcmp(&ax, &ay, sizeof ax) == 0);
    twin_same(x, y);
}

/* `b` with array `which` (0 obs .. 6 info) one element short. */
static floe_step_buffers short_by_one(floe_step_buffers b, int which) {
    switch (which) {
    case 0: b.obs_len -= 1; break;
    case 1: b.final_obs_len -= 1; break;
    case 2: b.rewards_len -= 1; break;
    case 3: b.events_len -= 1; break;
    case 4: b.terminated_len -= 1; break;
    case 5: b.truncated_len -= 1; break;
    default: b.info_len -= 1; break;
    }
    return b;
}

static void test_levels_refusals(void) {
    static const char *arrays[7] = {"obs", "final_obs", "rewards", "events", "terminated", "truncated", "info"};
    twin x = twin_new(), y = twin_new();
    floe_levels_applied applied;

    /* 4: every call before the reset is NOT_RESET, and binds nothing. */
    FAILS(floe_levels_start(x.levels, x.engine, &x.b, &applied), FLOE_STATUS_NOT_RESET, "reset");
    FAILS(floe_levels_after_step(x.levels, x.engine, &x.b, &applied), FLOE_STATUS_NOT_RESET, "reset");
    FAILS(floe_levels_update(x.levels, x.engine, NULL, 0, NULL, 0, &x.b, &applied), FLOE_STATUS_NOT_RESET, "reset");
    FAILS(floe_engine_check_outputs(x.engine, &x.b), FLOE_STATUS_NOT_RESET, "reset");
    OK(floe_engine_reset(x.engine, 4, &x.b));
    OK(floe_engine_reset(y.engine, 4, &y.b));
    OK(floe_engine_check_outputs(x.engine, &x.b));

    /* 2: a misaligned `out`: refused before anything is applied. */
    _Alignas(8) unsigned char raw[sizeof(floe_levels_applied) + 8];
    floe_levels_applied *crooked = (floe_levels_applied *)(void *)(raw + 1);
    FAILS(floe_levels_start(x.levels, x.engine, &x.b, crooked), FLOE_STATUS_BAD_INPUT, "not aligned");
    twin_same(&x, &y);
    OK(floe_levels_start(x.levels, x.engine, &x.b, &applied));
    OK(floe_levels_start(y.levels, y.engine, &y.b, &applied));
    twin_same(&x, &y);
    /* ... and with episodes kept, so that the sampler's call refills slots (as the twin's does):
     * the refill is not applied. */
    uint64_t steps_rng = 5;
    int refused_a_refill = 0;
    for (int t = 0; t < 80 && !refused_a_refill; t++) {
        twin_step(&x, &y, &steps_rng);
        size_t kept = 0;
        floe_env_info seen[64];
        OK(floe_levels_pending(x.levels, seen, 64, &kept));
        if (kept == 0) continue;
        FAILS(floe_levels_update(x.levels, x.engine, NULL, 0, NULL, 0, &x.b, crooked), FLOE_STATUS_BAD_INPUT,
              "not aligned");
        FAILS(floe_levels_after_step(x.levels, x.engine, &x.b, crooked), FLOE_STATUS_BAD_INPUT, "not aligned");
        twin_same(&x, &y);
        floe_levels_applied first, twin_first;
        OK(floe_levels_update(x.levels, x.engine, NULL, 0, NULL, 0, &x.b, &first));
        OK(floe_levels_update(y.levels, y.engine, NULL, 0, NULL, 0, &y.b, &twin_first));
        CHECK(first.episodes == kept && memcmp(&first, &twin_first, sizeof first) == 0);
        twin_same(&x, &y);
        refused_a_refill = first.refilled > 0;
    }
    CHECK(refused_a_refill); /* the refused calls would have refilled slots */

    /* 1: each of the seven arrays one short, in each function. */
    uint64_t rng = 99;
    for (int i = 0; i < 6; i++) twin_step(&x, &y, &rng);
    for (int which = 0; which < 7; which++) {
        floe_step_buffers bad = short_by_one(x.b, which);
        FAILS(floe_levels_start(x.levels, x.engine, &bad, &applied), FLOE_STATUS_BUFFER_SIZE, arrays[which]);
        FAILS(floe_levels_after_step(x.levels, x.engine, &bad, &applied), FLOE_STATUS_BUFFER_SIZE, arrays[which]);
        FAILS(floe_levels_update(x.levels, x.engine, NULL, 0, NULL, 0, &bad, &applied), FLOE_STATUS_BUFFER_SIZE,
              arrays[which]);
        size_t slot = 0;
        FAILS(floe_engine_refill(x.engine, &slot, 1, x.pool, &bad, NULL), FLOE_STATUS_BUFFER_SIZE, arrays[which]);
        FAILS(floe_engine_check_outputs(x.engine, &bad), FLOE_STATUS_BUFFER_SIZE, arrays[which]);
        twin_same(&x, &y);
    }
    /* The engine still steps, and the sampler still runs: nothing was poisoned. */
    for (int i = 0; i < 3; i++) twin_step(&x, &y, &rng);

    /* 3 and 5: a step whose episodes end, given to after_step with a foreign slot, then with
     * short buffers, then right: the sampler gets each episode once, as the twin's does. */
    int ended = -1;
    for (int t = 0; t < 50 && ended < 0; t++) {
        uint8_t actions[TWIN_ENVS * 2];
        for (size_t i = 0; i < x.s.actions; i++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            actions[i] = (uint8_t)(rng % 5);
        }
        OK(floe_engine_step(x.engine, actions, x.s.actions, &x.b));
        OK(floe_engine_step(y.engine, actions, y.s.actions, &y.b));
        for (int e = 0; e < TWIN_ENVS; e++)
            if (x.b.terminated[e] || x.b.truncated[e]) ended = e;
        if (ended < 0) {
            OK(floe_levels_after_step(x.levels, x.engine, &x.b, &applied));
            OK(floe_levels_after_step(y.levels, y.engine, &y.b, &applied));
        }
    }
    CHECK(ended >= 0);
    uint32_t slot_was = x.b.info[ended].instance;
    x.b.info[ended].instance = 3452816845u;
    FAILS(floe_levels_after_step(x.levels, x.engine, &x.b, &applied), FLOE_STATUS_BAD_INPUT, "slot 3452816845");
    x.b.info[ended].instance = slot_was;
    twin_same(&x, &y);
    floe_step_buffers bad = short_by_one(x.b, 4);
    FAILS(floe_levels_after_step(x.levels, x.engine, &bad, &applied), FLOE_STATUS_BUFFER_SIZE, "terminated");
    twin_same(&x, &y);
    floe_levels_applied ax, ay;
    OK(floe_levels_after_step(x.levels, x.engine, &x.b, &ax));
    OK(floe_levels_after_step(y.levels, y.engine, &y.b, &ay));
    CHECK(memcmp(&ax, &ay, sizeof ax) == 0);
    twin_same(&x, &y);
    /* An episode with a foreign slot given to update is refused too, and changes nothing. */
    floe_env_info foreign[1];
    memset(foreign, 0, sizeof foreign);
    foreign[0].outcome = FLOE_OUTCOME_SUCCESS, foreign[0].instance = TWIN_SLOTS;
    FAILS(floe_levels_update(x.levels, x.engine, foreign, 1, NULL, 0, &x.b, &applied), FLOE_STATUS_BAD_INPUT,
          "slot 16");
    twin_same(&x, &y);

    /* 7: edited outputs: refused by refill, update and check_outputs, and nothing changes. */
    for (int t = 0; t < 40; t++) {
        floe_env_record envs[TWIN_ENVS];
        floe_agent_record agents[TWIN_ENVS * 2];
        OK(floe_engine_state(x.engine, envs, TWIN_ENVS, agents, x.s.agents));
        int running = -1;
        for (int e = 0; e < TWIN_ENVS; e++)
            if (envs[e].step > 0) running = e;
        if (running < 0) {
            twin_step(&x, &y, &rng);
            continue;
        }
        size_t slot = envs[running].instance;
        static const char *fields[5] = {"terminated", "truncated", "info.outcome", "info.generation", "obs"};
        for (int f = 0; f < 5; f++) {
            floe_env_info kept_info = x.b.info[running];
            uint8_t kept_obs = x.b.obs[running * (x.s.obs / TWIN_ENVS)];
            switch (f) {
            case 0: x.b.terminated[running] = 1; break;
            case 1: x.b.truncated[running] = 1; break;
            case 2: x.b.info[running].outcome = FLOE_OUTCOME_SUCCESS; break;
            case 3: x.b.info[running].generation += 2; break;
            default: x.b.obs[running * (x.s.obs / TWIN_ENVS)] ^= 1; break;
            }
            FAILS(floe_engine_refill(x.engine, &slot, 1, x.pool, &x.b, NULL), FLOE_STATUS_BAD_INPUT, fields[f]);
            FAILS(floe_engine_check_outputs(x.engine, &x.b), FLOE_STATUS_BAD_INPUT, fields[f]);
            FAILS(floe_levels_update(x.levels, x.engine, NULL, 0, NULL, 0, &x.b, &applied), FLOE_STATUS_BAD_INPUT,
                  fields[f]);
            x.b.terminated[running] = 0, x.b.truncated[running] = 0, x.b.info[running] = kept_info;
            x.b.obs[running * (x.s.obs / TWIN_ENVS)] = kept_obs;
            twin_same(&x, &y);
        }
        break;
    }

    /* 6: a sampler runs with the engine of its first call; a second engine is refused by name. */
    FAILS(floe_levels_after_step(x.levels, y.engine, &y.b, &applied), FLOE_STATUS_BAD_INPUT, "engine #");
    FAILS(floe_levels_update(x.levels, y.engine, NULL, 0, NULL, 0, &y.b, &applied), FLOE_STATUS_BAD_INPUT, "engine #");
    twin_same(&x, &y);
    for (int i = 0; i < 6; i++) twin_step(&x, &y, &rng);
    twin_free(&x);
    twin_free(&y);
}

/* First plays and replays, as floe_levels_first_play marks them, against the definition read
 * off the whole history: an episode replays its level when an episode on the same slot and
 * generation ended in a step before the one it began in. `plr` refills slots as it goes. */
static void test_first_plays(void) {
    const char *specs[2] = {
        "{\"sampler\": {\"name\": \"plr\", \"params\": {\"fresh\": 0.5}}, \"space\": {\"agents\": [2, 2],"
        " \"size\": [3, 4], \"solve\": false}, \"seed\": 2, \"update_every\": 5}",
        "{\"sampler\": {\"name\": \"plr\", \"params\": {\"robust\": false}}, \"space\": {\"size\": [3, 4],"
        " \"solve\": false}}"};
    for (int k = 0; k < 2; k++) {
        floe_levels *levels = NULL;
        OK(floe_levels_new(specs[k], &levels));
        uint8_t robust = 9;
        OK(floe_levels_robust(levels, &robust));
        CHECK(robust == (k == 0 ? 1 : 0));
        OK(floe_levels_free(levels));
    }
    floe_levels *levels = NULL;
    OK(floe_levels_new(specs[0], &levels));
    floe_pool *pool = NULL;
    OK(floe_levels_pool(levels, 6, &pool));
    floe_engine *engine = NULL;
    OK(floe_engine_new(pool, "{\"num_envs\": 8, \"mode\": \"soft\", \"episode_limit\": 5}", &engine));
    floe_buffer_sizes s;
    OK(floe_engine_sizes(engine, &s));
    floe_step_buffers b = buffers_for(&s);
    OK(floe_engine_reset(engine, 3, &b));
    floe_levels_applied applied;
    OK(floe_levels_start(levels, engine, &b, &applied));
    uint8_t marks[8];
    size_t len = 99;
    OK(floe_levels_first_play(levels, marks, 8, &len));
    CHECK(len == 0); /* no step recorded yet */
    enum { STEPS = 80 };
    uint32_t end_step[8 * STEPS], end_slot[8 * STEPS], end_gen[8 * STEPS];
    size_t ends = 0, firsts = 0, replays = 0, refilled = 0;
    uint8_t *actions = calloc(s.actions, 1);
    uint64_t x = 5;
    for (uint32_t t = 0; t < STEPS; t++) {
        for (size_t i = 0; i < s.actions; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            actions[i] = (uint8_t)(x % 5);
        }
        OK(floe_engine_step(engine, actions, s.actions, &b));
        uint8_t want[8];
        for (size_t e = 0; e < 8; e++) {
            uint32_t began = t + 1 - b.info[e].episode_steps;
            want[e] = 1;
            for (size_t j = 0; j < ends; j++)
                if (end_step[j] < began && end_slot[j] == b.info[e].instance && end_gen[j] == b.info[e].generation)
                    want[e] = 0;
        }
        for (size_t e = 0; e < 8; e++)
            if (b.terminated[e] || b.truncated[e]) {
                end_step[ends] = t, end_slot[ends] = b.info[e].instance, end_gen[ends] = b.info[e].generation;
                ends++;
            }
        OK(floe_levels_after_step(levels, engine, &b, &applied));
        refilled += applied.refilled;
        OK(floe_levels_first_play(levels, marks, 8, &len));
        CHECK(len == 8 && memcmp(marks, want, 8) == 0);
        for (size_t e = 0; e < 8; e++) *(want[e] ? &firsts : &replays) += 1;
        /* The kept episodes' marks: one each, in floe_levels_pending's order. */
        floe_env_info pending[64];
        uint8_t pending_marks[64];
        size_t n = 0, m = 0;
        OK(floe_levels_pending(levels, pending, 64, &n));
        OK(floe_levels_pending_first_play(levels, pending_marks, 64, &m));
        CHECK(n == m);
        /* Each kept episode's environment and end step, as the host saw it end: its own key. */
        uint32_t pending_envs[64];
        uint64_t pending_steps[64], recorded = 0;
        OK(floe_levels_pending_envs(levels, pending_envs, 64, &m));
        CHECK(m == n);
        OK(floe_levels_pending_end_steps(levels, pending_steps, 64, &m));
        CHECK(m == n);
        OK(floe_levels_steps_recorded(levels, &recorded));
        CHECK(recorded == t + 1);
        for (size_t j = 0; j < n && j < 64; j++) {
            CHECK(pending_steps[j] <= t && pending_envs[j] < 8);
            if (pending_steps[j] == t) CHECK(b.terminated[pending_envs[j]] || b.truncated[pending_envs[j]]);
            if (pending_steps[j] == t) CHECK(b.info[pending_envs[j]].instance == pending[j].instance);
        }
    }
    printf("test_api: first plays: %zu first plays, %zu replays, %zu refilled\n", firsts, replays, refilled);
    CHECK(firsts > 0 && replays > 0 && refilled > 0);
    /* PLR's statistics of each of the 6 slots: a seen slot has a score, a staleness and plays, and
     * the replay probabilities of the seen slots add up to 1; an unseen one has NaN. */
    floe_slot_stats stats[8];
    size_t slots = 0, seen = 0;
    OK(floe_levels_slot_stats(levels, stats, 8, &slots));
    CHECK(slots == 6);
    double replay = 0.0;
    for (size_t i = 0; i < slots; i++) {
        if (stats[i].staleness == FLOE_UNKNOWN) {
            CHECK(stats[i].score != stats[i].score && stats[i].figure != stats[i].figure);
            continue;
        }
        seen++;
        CHECK(stats[i].plays > 0 && stats[i].score == stats[i].score);
        replay += stats[i].figure;
    }
    CHECK(seen > 0 && replay > 0.999 && replay < 1.001);
    /* The engine's weights (PLR's, one per slot) and each slot's level now, as the pool's records
     * describe it: as many agents, refilled levels included. */
    double weights[8];
    size_t wlen = 0;
    OK(floe_engine_weights(engine, weights, 8, &wlen));
    CHECK(wlen == 6);
    for (size_t i = 0; i < wlen; i++) CHECK(weights[i] >= 0.0);
    floe_level_record records[8];
    size_t rlen = 0;
    OK(floe_engine_levels(engine, records, 8, &rlen));
    CHECK(rlen == 6);
    for (size_t i = 0; i < rlen; i++) {
        char *json = NULL;
        OK(floe_engine_level_json(engine, i, &json));
        uint32_t starts = 0;
        for (const char *p = json; (p = strstr(p, "\"start\"")) != NULL; p++) starts++;
        CHECK(starts == records[i].agents);
        floe_string_free(json);
    }
    char *none = NULL;
    CHECK(floe_engine_level_json(engine, 6, &none) == FLOE_STATUS_BAD_INPUT && none == NULL);
    free(actions);
    free_buffers(&b);
    OK(floe_engine_free(engine));
    OK(floe_pool_free(pool));
    OK(floe_levels_free(levels));
}

/* ACCEL's edit of a level: the same seed gives the same level, another seed another; the result
 * holds the new level with its optimal plan and the edits; a level no edit keeps solvable is
 * FAILED, naming the attempts. */
static void test_mutate(void) {
    const char *level =
        "{\"grid\": [\"FFFF\", \"FHFF\", \"FFFF\", \"FFHF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [3, 3]},"
        " {\"start\": [3, 0], \"goal\": [0, 3]}]}";
    char *a = NULL, *b = NULL, *c = NULL;
    OK(floe_mutate(level, "{\"edits\": 3, \"seed\": 7}", &a));
    OK(floe_mutate(level, "{\"edits\": 3, \"seed\": 7}", &b));
    OK(floe_mutate(level, "{\"edits\": 3, \"seed\": 8}", &c));
    CHECK(strcmp(a, b) == 0 && strcmp(a, c) != 0);
    CHECK(strstr(a, "\"instance\"") && strstr(a, "\"optimal\"") && strstr(a, "\"edits\""));
    floe_string_free(a);
    floe_string_free(b);
    floe_string_free(c);
    const char *corridor =
        "{\"grid\": [\"FFFFF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [0, 4]}, {\"start\": [0, 4], \"goal\": [0, 0]}]}";
    FAILS(floe_mutate(corridor, "{\"edits\": 1, \"max_attempts\": 5}", &a), FLOE_STATUS_FAILED, "5 attempts");
    FAILS(floe_mutate(level, "{\"edits\": 0}", &a), FLOE_STATUS_CONFIG, "edits is 0");
}

static void test_training(void) {
    /* Built without the train feature (as `make install` builds it), both say so; the Rust test
     * ffi/tests/train.rs covers them with it. */
    int32_t s = floe_train_run("{}", "/tmp", 0, NULL, NULL, NULL);
    CHECK(s == FLOE_STATUS_NOT_BUILT || s == FLOE_STATUS_CONFIG);
    char *report = NULL;
    floe_pool *pool = small_pool();
    s = floe_eval_run("/nonexistent/checkpoint.safetensors", pool, NULL, NULL, &report);
    CHECK(s == FLOE_STATUS_NOT_BUILT || s == FLOE_STATUS_BAD_INPUT);
    CHECK(report == NULL);
    OK(floe_pool_free(pool));
}

/* Drives `levels` over `engine` (reset with seed 3 into `b`, already started) for `steps` steps of
 * the same action stream. */
static void drive(floe_levels *levels, floe_engine *engine, floe_step_buffers *b, const floe_buffer_sizes *s,
                  uint32_t steps) {
    uint8_t *actions = calloc(s->actions, 1);
    uint64_t x = 11;
    for (uint32_t t = 0; t < steps; t++) {
        for (size_t i = 0; i < s->actions; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            actions[i] = (uint8_t)(x % 5);
        }
        OK(floe_engine_step(engine, actions, s->actions, b));
        OK(floe_levels_after_step(levels, engine, b, NULL));
    }
    free(actions);
}

/* A sampler saved and loaded into a new one made from the same settings: the new engine is made
 * with the saved pool, draws by the saved weights, and the statistics per slot come back; a state
 * that does not fit is refused, and a phase designer saves and restores its designs. */
static void test_levels_save_load(void) {
    const char *spec =
        "{\"sampler\": {\"name\": \"plr\", \"params\": {\"fresh\": 0.5}}, \"space\": {\"size\": [3, 4],"
        " \"solve\": false}, \"seed\": 2, \"update_every\": 5}";
    const char *config = "{\"num_envs\": 8, \"mode\": \"soft\", \"episode_limit\": 5}";
    floe_levels *levels = NULL;
    OK(floe_levels_new(spec, &levels));
    floe_pool *pool = NULL;
    OK(floe_levels_pool(levels, 6, &pool));
    floe_engine *engine = NULL;
    OK(floe_engine_new(pool, config, &engine));
    floe_buffer_sizes s;
    OK(floe_engine_sizes(engine, &s));
    floe_step_buffers b = buffers_for(&s);
    OK(floe_engine_reset(engine, 3, &b));
    OK(floe_levels_start(levels, engine, &b, NULL));
    drive(levels, engine, &b, &s, 60);
    char *state = NULL;
    OK(floe_levels_save(levels, engine, &state));
    CHECK(strstr(state, "\"version\":1") != NULL);

    /* A new sampler, loaded: every call but start waits; the pool to make the engine with is the
     * saved one (its slot count only). */
    floe_levels *back = NULL;
    OK(floe_levels_new(spec, &back));
    OK(floe_levels_load(back, state));
    FAILS(floe_levels_after_step(back, engine, &b, NULL), FLOE_STATUS_BAD_INPUT, "call start first");
    floe_pool *saved = NULL;
    FAILS(floe_levels_pool(back, 5, &saved), FLOE_STATUS_BAD_INPUT, "has 6 slots");
    OK(floe_levels_pool(back, 6, &saved));
    floe_engine *again = NULL;
    OK(floe_engine_new(saved, config, &again));
    floe_step_buffers b2 = buffers_for(&s);
    OK(floe_engine_reset(again, 9, &b2));
    OK(floe_levels_start(back, again, &b2, NULL));
    double w1[8], w2[8];
    size_t n1 = 0, n2 = 0;
    OK(floe_engine_weights(engine, w1, 8, &n1));
    OK(floe_engine_weights(again, w2, 8, &n2));
    CHECK(n1 == 6 && n2 == 6 && memcmp(w1, w2, sizeof w1[0] * 6) == 0);
    floe_slot_stats st1[8], st2[8];
    OK(floe_levels_slot_stats(levels, st1, 8, &n1));
    OK(floe_levels_slot_stats(back, st2, 8, &n2));
    CHECK(n1 == n2 && memcmp(st1, st2, sizeof st1[0] * n1) == 0);
    for (size_t i = 0; i < 6; i++) {
        char *a = NULL, *c = NULL;
        OK(floe_engine_level_json(engine, i, &a));
        OK(floe_engine_level_json(again, i, &c));
        CHECK(strcmp(a, c) == 0);
        floe_string_free(a);
        floe_string_free(c);
    }
    drive(back, again, &b2, &s, 10);

    /* Refused, nothing changed: another version, another sampler, text that does not read. */
    char *v2 = malloc(strlen(state) + 1);
    strcpy(v2, state);
    char *at = strstr(v2, "\"version\":1");
    at[10] = '2';
    floe_levels *other = NULL;
    OK(floe_levels_new(spec, &other));
    FAILS(floe_levels_load(other, v2), FLOE_STATUS_BAD_INPUT, "version 2");
    FAILS(floe_levels_load(other, "{"), FLOE_STATUS_BAD_INPUT, "does not read");
    FAILS(floe_levels_load(other, NULL), FLOE_STATUS_NULL_POINTER, "state_json");
    OK(floe_levels_free(other));
    OK(floe_levels_new("{\"sampler\": {\"name\": \"uniform\"}, \"space\": {\"size\": [3, 4], \"solve\": false},"
                       " \"seed\": 2, \"update_every\": 5}",
                       &other));
    FAILS(floe_levels_load(other, state), FLOE_STATUS_BAD_INPUT, "`plr`");
    OK(floe_levels_free(other));
    /* A phase designer saves its designs with its state, and a sampler made from the same spec
     * takes them back; one of phases of another length refuses them. */
    const char *phased_spec = "{\"sampler\": {\"name\": \"fixed\", \"params\": {\"phase_episodes\": 8}},"
                              " \"space\": {\"size\": [3, 4], \"solve\": false}}";
    OK(floe_levels_new(phased_spec, &other));
    floe_pool *ppool = NULL;
    OK(floe_levels_pool(other, 6, &ppool));
    floe_engine *pengine = NULL;
    OK(floe_engine_new(ppool, config, &pengine));
    floe_step_buffers pb = buffers_for(&s);
    OK(floe_engine_reset(pengine, 3, &pb));
    OK(floe_levels_start(other, pengine, &pb, NULL));
    drive(other, pengine, &pb, &s, 40);
    char *phased = NULL;
    OK(floe_levels_save(other, pengine, &phased));
    CHECK(strstr(phased, "designs") != NULL);
    floe_levels *pback = NULL;
    OK(floe_levels_new(phased_spec, &pback));
    OK(floe_levels_load(pback, phased));
    OK(floe_levels_free(pback));
    OK(floe_levels_new("{\"sampler\": {\"name\": \"fixed\", \"params\": {\"phase_episodes\": 9}},"
                       " \"space\": {\"size\": [3, 4], \"solve\": false}}",
                       &pback));
    FAILS(floe_levels_load(pback, phased), FLOE_STATUS_BAD_INPUT, "phases of 8 episodes");
    OK(floe_levels_free(pback));
    floe_string_free(phased);
    free_buffers(&pb);
    OK(floe_engine_free(pengine));
    OK(floe_pool_free(ppool));
    OK(floe_levels_free(other));

    free(v2);
    floe_string_free(state);
    free_buffers(&b);
    free_buffers(&b2);
    OK(floe_engine_free(again));
    OK(floe_engine_free(engine));
    OK(floe_pool_free(saved));
    OK(floe_pool_free(pool));
    OK(floe_levels_free(back));
    OK(floe_levels_free(levels));
}

/* Two shards of one pool, each an engine in its own right: one sampler decides from both shards'
 * slots and episodes, the decision crosses as JSON (as to another process), and each shard
 * applies it: their pools stay the same level for level, and so do their weights. */
static void test_decide_apply(void) {
    const char *spec =
        "{\"sampler\": {\"name\": \"plr\", \"params\": {\"fresh\": 0.5}}, \"space\": {\"size\": [3, 4],"
        " \"solve\": false}, \"seed\": 2}";
    const char *config = "{\"num_envs\": 4, \"mode\": \"soft\", \"episode_limit\": 5}";
    floe_levels *levels = NULL;
    OK(floe_levels_new(spec, &levels));
    floe_pool *pool = NULL;
    OK(floe_levels_pool(levels, 6, &pool));
    floe_engine *shard[2] = {NULL, NULL};
    floe_step_buffers b[2];
    floe_buffer_sizes s;
    for (int k = 0; k < 2; k++) {
        OK(floe_engine_new(pool, config, &shard[k]));
        OK(floe_engine_sizes(shard[k], &s));
        b[k] = buffers_for(&s);
        OK(floe_engine_reset(shard[k], 3 + (uint64_t)k, &b[k]));
    }
    floe_env_info ended[64];
    size_t n_ended = 0, refilled = 0, calls = 0;
    uint8_t *actions = calloc(s.actions, 1);
    uint64_t x = 17;
    for (uint32_t t = 1; t <= 40; t++) {
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < s.actions; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                actions[i] = (uint8_t)(x % 5);
            }
            OK(floe_engine_step(shard[k], actions, s.actions, &b[k]));
            for (size_t e = 0; e < 4; e++)
                if ((b[k].terminated[e] || b[k].truncated[e]) && n_ended < 64) ended[n_ended++] = b[k].info[e];
        }
        if (t % 5 != 0) continue;
        /* The pool's slots, their environments in play added up over the shards. */
        floe_level_record records[8], other[8];
        size_t n = 0, m = 0;
        OK(floe_engine_levels(shard[0], records, 8, &n));
        OK(floe_engine_levels(shard[1], other, 8, &m));
        CHECK(n == 6 && m == 6);
        for (size_t i = 0; i < n; i++) records[i].in_play += other[i].in_play;
        floe_decision *decision = NULL, *sent = NULL;
        OK(floe_levels_decide(levels, records, n, ended, n_ended, NULL, 0, &decision));
        char *json = NULL;
        OK(floe_decision_json(decision, &json));
        OK(floe_decision_from_json(json, &sent));
        floe_levels_applied applied;
        OK(floe_engine_apply(shard[0], decision, &b[0], &applied));
        CHECK(applied.episodes == n_ended);
        OK(floe_engine_apply(shard[1], sent, &b[1], NULL));
        refilled += applied.refilled;
        calls++;
        n_ended = 0;
        floe_string_free(json);
        OK(floe_decision_free(decision));
        OK(floe_decision_free(sent));
    }
    printf("test_api: decide and apply: %zu calls, %zu refilled on two shards\n", calls, refilled);
    CHECK(calls == 8 && refilled > 0);
    for (size_t i = 0; i < 6; i++) {
        char *a = NULL, *c = NULL;
        OK(floe_engine_level_json(shard[0], i, &a));
        OK(floe_engine_level_json(shard[1], i, &c));
        CHECK(strcmp(a, c) == 0);
        floe_string_free(a);
        floe_string_free(c);
    }
    double w0[8], w1[8];
    size_t l0 = 0, l1 = 0;
    OK(floe_engine_weights(shard[0], w0, 8, &l0));
    OK(floe_engine_weights(shard[1], w1, 8, &l1));
    CHECK(l0 == 6 && l1 == 6 && memcmp(w0, w1, sizeof w0[0] * 6) == 0);

    /* Refused, nothing changed: records out of order, a decision that does not read or has a
     * level count other than its slots', weights for another pool. */
    floe_level_record records[8];
    size_t n = 0;
    OK(floe_engine_levels(shard[0], records, 8, &n));
    records[1].slot = 4;
    floe_decision *d = NULL;
    FAILS(floe_levels_decide(levels, records, n, NULL, 0, NULL, 0, &d), FLOE_STATUS_BAD_INPUT, "names slot 4");
    CHECK(d == NULL);
    FAILS(floe_decision_from_json("{", &d), FLOE_STATUS_BAD_INPUT, "does not read");
    FAILS(floe_decision_from_json("{\"weights\": null, \"refill\": [1], \"levels\": [], \"episodes\": 0}", &d),
          FLOE_STATUS_BAD_INPUT, "one level per slot");
    OK(floe_decision_from_json("{\"weights\": [1, 2], \"refill\": [], \"levels\": [], \"episodes\": 0}", &d));
    FAILS(floe_engine_apply(shard[0], d, &b[0], NULL), FLOE_STATUS_BAD_INPUT, "2 weights");
    OK(floe_engine_weights(shard[0], w1, 8, &l1));
    CHECK(l1 == 6 && memcmp(w0, w1, sizeof w0[0] * 6) == 0);
    OK(floe_decision_free(d));

    free(actions);
    for (int k = 0; k < 2; k++) {
        free_buffers(&b[k]);
        OK(floe_engine_free(shard[k]));
    }
    OK(floe_pool_free(pool));
    OK(floe_levels_free(levels));
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr,
                "usage: %s <failing C plugin> <faulty Rust plugin> <scratch folder> <C engineer plugin> "
                "<C level sampler plugin>\n",
                argv[0]);
        return 2;
    }
    test_version();
    test_pools(argv[3]);
    test_engines();
    test_obs_formats();
    test_verification();
    test_plugins(argv[1], argv[2], argv[4]);
    test_step_rewards(argv[1]);
    test_levels(argv[5]);
    test_levels_refusals();
    test_level_sources(argv[3]);
    test_first_plays();
    test_levels_save_load();
    test_decide_apply();
    test_mutate();
    test_gpu();
    test_training();
    printf("test_api: %d checks passed\n", checks);
    return 0;
}
