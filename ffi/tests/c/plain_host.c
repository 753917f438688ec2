/*
 * A plain CPU host, as a user writes one from floe.h: a pool, an engine stepped with random
 * actions, a plan verified in each written form, the solver, everything freed. scripts/c-api.sh
 * runs it under `valgrind --leak-check=full --error-exitcode=9` with the suppression file that
 * `make install` puts in share/floe (pkg-config --variable=valgrind_suppressions floe), and
 * nothing else: no error, no leak of any kind may be reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <floe.h>

#define TRY(call)                                                                           \
    do {                                                                                    \
        floe_status s_ = (call);                                                            \
        if (s_ != FLOE_STATUS_OK) {                                                         \
            fprintf(stderr, "%s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #call, s_,     \
                    floe_last_error());                                                     \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

int main(void) {
    if (floe_abi_version() != FLOE_ABI_VERSION) return 1;
    floe_pool *pool = NULL;
    TRY(floe_pool_generate("{\"size\": 5, \"agents\": 3, \"hole_ratio\": 0.2}", 16, 1, &pool));
    floe_engine *engine = NULL;
    TRY(floe_engine_new(pool, "{\"num_envs\": 64, \"mode\": \"soft\"}", &engine));
    floe_buffer_sizes s;
    TRY(floe_engine_sizes(engine, &s));
    floe_step_buffers b = {
        malloc(s.obs), s.obs, malloc(s.obs), s.obs, malloc(s.agents * sizeof(float)), s.agents,
        malloc(s.agents * sizeof(uint32_t)), s.agents, malloc(s.envs), s.envs, malloc(s.envs), s.envs,
        malloc(s.envs * sizeof(floe_env_info)), s.envs,
    };
    uint8_t *actions = malloc(s.actions);
    TRY(floe_engine_reset(engine, 7, &b));
    unsigned x = 1;
    size_t ended = 0;
    for (int t = 0; t < 50; t++) {
        for (size_t i = 0; i < s.actions; i++) actions[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16) % 5;
        TRY(floe_engine_step(engine, actions, s.actions, &b));
        for (size_t e = 0; e < s.envs; e++) ended += b.terminated[e] | b.truncated[e];
    }

    /* One plan, written three ways, and one that does not read. */
    char *json = NULL, *plan = NULL, *detail = NULL;
    uint32_t soc = 0, makespan = 0;
    TRY(floe_pool_instance_json(pool, 0, &json));
    TRY(floe_solve(json, 0, &plan, &soc, &makespan));
    floe_verdict v;
    TRY(floe_verify_plan(pool, 0, plan, FLOE_PLAN_JSON, &v));
    int optimal = v.optimal;
    const char *bare = strchr(plan, '[');  /* {"moves": ["..."]} -> ["..."] */
    char *array = malloc(strlen(bare) + 1);
    strcpy(array, bare);
    array[strlen(array) - 1] = '\0';  /* the object's closing brace */
    TRY(floe_verify_plan(pool, 0, array, FLOE_PLAN_AUTO, &v));
    optimal &= v.optimal;
    TRY(floe_verify_plan(pool, 0, "[\"RX\"]", FLOE_PLAN_JSON, &v));
    TRY(floe_verdict_detail(&detail));
    int why = v.kind == FLOE_FAILURE_PARSE_ERROR && strstr(detail, "unknown move letter 'X'") != NULL;

    printf("plain_host: %zu episodes ended, the solver's plan optimal in both forms: %s, a bad plan "
           "explained: %s\n", ended, optimal ? "yes" : "no", why ? "yes" : "no");
    free(array);
    floe_string_free(detail);
    floe_string_free(plan);
    floe_string_free(json);
    free(actions);
    free(b.obs);
    free(b.final_obs);
    free(b.rewards);
    free(b.events);
    free(b.terminated);
    free(b.truncated);
    free(b.info);
    TRY(floe_engine_free(engine));
    TRY(floe_pool_free(pool));
    return optimal && why && ended > 0 ? 0 : 1;
}
