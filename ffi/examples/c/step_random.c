/*
 * Random-action stepping through the C API, printing agent-steps per second.
 *
 *   step_random [size] [density] [agents] [envs] [seconds] [backend]
 *
 * Defaults: 16 0.2 4 32768 3 cpu. Soft collisions with holes as walls, observation radius 2,
 * episodes of 64 steps: the settings of BENCHMARKS.md. Actions come from a ring of 16
 * pre-drawn action arrays (the Rust twin, examples/step_random.rs, uses the same ones), so the
 * loop measures the library, not the random number generator. With FLOE_STEPS=n it runs exactly n
 * steps instead of for `seconds` (for instruction counts, e.g. under callgrind).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "floe.h"

#define RING 16

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int fail(const char *what) {
    fprintf(stderr, "step_random: %s: %s\n", what, floe_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int size = argc > 1 ? atoi(argv[1]) : 16;
    double density = argc > 2 ? atof(argv[2]) : 0.2;
    int agents = argc > 3 ? atoi(argv[3]) : 4;
    size_t envs = argc > 4 ? (size_t)atol(argv[4]) : 32768;
    double seconds = argc > 5 ? atof(argv[5]) : 3.0;
    const char *backend = argc > 6 ? argv[6] : "cpu";

    char setting[256], config[256];
    snprintf(setting, sizeof setting, "{\"size\": %d, \"agents\": %d, \"hole_ratio\": %g, \"solve\": false}", size,
             agents, density);
    snprintf(config, sizeof config,
             "{\"backend\": \"%s\", \"num_envs\": %zu, \"mode\": \"soft\", \"holes\": \"block\", "
             "\"episode_limit\": 64, \"obs_radius\": 2}",
             backend, envs);
    floe_pool *pool = NULL;
    floe_engine *engine = NULL;
    floe_buffer_sizes s;
    if (floe_pool_generate(setting, 16, 1, &pool)) return fail("pool");
    if (floe_engine_new(pool, config, &engine)) return fail("engine");
    if (floe_engine_sizes(engine, &s)) return fail("sizes");

    floe_step_buffers b = {malloc(s.obs), s.obs, malloc(s.obs), s.obs, malloc(s.agents * sizeof(float)), s.agents,
                           malloc(s.agents * sizeof(uint32_t)), s.agents, malloc(s.envs), s.envs, malloc(s.envs), s.envs,
                           malloc(s.envs * sizeof(floe_env_info)), s.envs};
    uint8_t *ring = malloc(RING * s.actions);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < RING * s.actions; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        ring[i] = (uint8_t)(x % 5);
    }
    if (floe_engine_reset(engine, 0, &b)) return fail("reset");
    uint64_t steps = 0;
    const char *fixed = getenv("FLOE_STEPS");
    uint64_t limit = fixed ? strtoull(fixed, NULL, 10) : UINT64_MAX;
    double start = now(), elapsed = 0;
    while (fixed ? steps < limit : elapsed < seconds) {
        if (floe_engine_step(engine, ring + (steps % RING) * s.actions, s.actions, &b)) return fail("step");
        steps++;
        elapsed = now() - start;
    }
    /* With holes as walls nobody leaves an episode: every agent of every environment steps. */
    double agent_steps = (double)steps * (double)envs * (double)agents;
    printf("{\"api\": \"c\", \"backend\": \"%s\", \"size\": %d, \"density\": %g, \"agents\": %d, \"envs\": %zu, "
           "\"steps\": %llu, \"seconds\": %.3f, \"agent_steps_per_sec\": %.0f}\n",
           backend, size, density, agents, envs, (unsigned long long)steps, elapsed, agent_steps / elapsed);
    free(ring);
    free(b.obs), free(b.final_obs), free(b.rewards), free(b.events), free(b.terminated), free(b.truncated),
        free(b.info);
    floe_engine_free(engine);
    floe_pool_free(pool);
    return 0;
}
