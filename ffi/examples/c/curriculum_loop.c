/*
 * A host's own training loop on a floe curriculum, through the C API: each round it asks the
 * curriculum plugin for the round's configuration, builds the round's pool from it, plays it on
 * a batched engine (here with a greedy policy that steps towards the goal when it can; a real
 * host runs its learner there), measures the success rate per map size, and hands the results
 * back as the history the curriculum reads next round.
 *
 *   curriculum_loop [curriculum] [rounds] [library]
 *
 * Defaults: difficulty-scaling, 3 rounds, built in (give a library path to use a loaded plugin).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe.h"

#define MAX_SIZES 16

static int fail(const char *what) {
    fprintf(stderr, "curriculum_loop: %s: %s\n", what, floe_last_error());
    return 1;
}

/* Reads "size": N values in order from a configuration's "sizes" list. */
static int config_sizes(const char *config, uint32_t *sizes) {
    int n = 0;
    const char *p = config;
    while (n < MAX_SIZES && (p = strstr(p, "\"size\":")) != NULL) sizes[n++] = (uint32_t)strtoul(p + 7, (char **)&p, 10);
    return n;
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "difficulty-scaling";
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const char *library = argc > 3 ? argv[3] : NULL;
    floe_plugin *curriculum = NULL;
    if (floe_plugin_new(library, FLOE_PLUGIN_KIND_CURRICULUM, name, NULL, &curriculum)) return fail("curriculum");

    size_t history_cap = 1 << 16, history_len = 0;
    char *history = malloc(history_cap);
    history_len = (size_t)snprintf(history, history_cap, "{\"rounds\": [");
    for (int round = 0; round < rounds; round++) {
        char *config = NULL;
        strcpy(history + history_len, "]}");
        if (floe_plugin_next_config(curriculum, history, &config)) return fail("next_config");
        floe_pool *pool = NULL;
        if (floe_pool_generate(config, 64, (uint64_t)round, &pool)) return fail("pool");
        size_t count = 0;
        floe_pool_count(pool, &count);

        /* One episode per instance, greedy moves, strict rules: success or failure per size. */
        floe_engine *engine = NULL;
        char engine_cfg[128];
        snprintf(engine_cfg, sizeof engine_cfg, "{\"num_envs\": %zu, \"episode_limit\": 32}", count);
        if (floe_engine_new(pool, engine_cfg, &engine)) return fail("engine");
        floe_buffer_sizes s;
        floe_engine_sizes(engine, &s);
        floe_step_buffers b = {malloc(s.obs), s.obs, malloc(s.obs), s.obs, malloc(s.agents * sizeof(float)), s.agents,
                               malloc(s.agents * sizeof(uint32_t)), s.agents, malloc(s.envs), s.envs,
                               malloc(s.envs), s.envs, malloc(s.envs * sizeof(floe_env_info)), s.envs};
        uint8_t *actions = calloc(s.actions, 1);
        floe_agent_record *agents = calloc(s.agents, sizeof *agents);
        floe_env_record *envs = calloc(s.envs, sizeof *envs);
        int *done = calloc(count, sizeof *done), *won = calloc(count, sizeof *won);
        if (floe_engine_reset(engine, 0, &b)) return fail("reset");
        for (size_t e = 0; e < count; e++) /* environment e plays instance e */
            if (floe_engine_reset_to(engine, e, e, &b)) return fail("reset_to");
        for (int t = 0; t < 32; t++) {
            floe_engine_state(engine, envs, s.envs, agents, s.agents);
            for (size_t e = 0; e < count; e++) {
                for (size_t a = 0; a < s.max_agents; a++) {
                    /* Plane 2 of the agent's 5x5 observation marks its goal when it is within
                     * two cells: step towards it, rows first. */
                    floe_agent_record *ag = &agents[e * s.max_agents + a];
                    size_t stride = s.obs_stride, w = 5; /* radius 2: 5x5 planes */
                    const uint8_t *goal = b.obs + (e * s.max_agents + a) * stride + 2 * w * w;
                    int gr = -1, gc = -1;
                    for (size_t i = 0; i < w * w; i++)
                        if (goal[i]) gr = (int)(i / w) - 2, gc = (int)(i % w) - 2;
                    uint8_t act = 0;
                    if (ag->active && gr != -1) {
                        if (gr < 0) act = 1;
                        else if (gr > 0) act = 2;
                        else if (gc < 0) act = 3;
                        else if (gc > 0) act = 4;
                    } else if (ag->active) {
                        act = (uint8_t)(1 + (t + a) % 4); /* goal out of sight: wander */
                    }
                    actions[e * s.max_agents + a] = act;
                }
            }
            if (floe_engine_step(engine, actions, s.actions, &b)) return fail("step");
            for (size_t e = 0; e < count; e++)
                if (!done[e] && (b.terminated[e] || b.truncated[e])) {
                    done[e] = 1;
                    won[e] = b.info[e].outcome == FLOE_OUTCOME_SUCCESS;
                }
        }

        /* Per map size: success rate and instance count, as the history's results. */
        uint32_t sizes[MAX_SIZES];
        int n_sizes = config_sizes(config, sizes);
        history_len += (size_t)snprintf(history + history_len, history_cap - history_len,
                                        "%s{\"round\": %d, \"config\": %s, \"results\": [", round ? ", " : "", round,
                                        config);
        printf("round %d:", round);
        for (int i = 0; i < n_sizes; i++) {
            int total = 0, wins = 0;
            for (size_t e = 0; e < count; e++) {
                floe_instance_info info;
                floe_pool_instance_info(pool, e, &info);
                if (info.width == sizes[i]) total++, wins += won[e];
            }
            double rate = total ? (double)wins / total : 0.0;
            history_len += (size_t)snprintf(history + history_len, history_cap - history_len,
                                            "%s{\"size\": %u, \"valid_rate\": %.4f, \"optimal_rate\": %.4f, "
                                            "\"instances\": %d}",
                                            i ? ", " : "", sizes[i], rate, rate, total);
            printf(" %ux%u %d/%d solved", sizes[i], sizes[i], wins, total);
        }
        history_len += (size_t)snprintf(history + history_len, history_cap - history_len, "]}");
        printf("\n  configuration: %s\n", config);

        free(actions), free(agents), free(envs), free(done), free(won);
        free(b.obs), free(b.final_obs), free(b.rewards), free(b.events), free(b.terminated), free(b.truncated),
            free(b.info);
        floe_engine_free(engine);
        floe_pool_free(pool);
        floe_string_free(config);
    }
    free(history);
    floe_plugin_free(curriculum);
    return 0;
}
