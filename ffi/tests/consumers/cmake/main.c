/* The smallest program against an installed libfloe: a pool, an engine, one step. */
#include <stdio.h>
#include <stdlib.h>

#include <floe.h>

int main(void) {
    floe_pool *pool = NULL;
    floe_engine *engine = NULL;
    floe_buffer_sizes s;
    if (floe_abi_version() != FLOE_ABI_VERSION ||
        floe_pool_generate("{\"size\": 4, \"agents\": 2}", 4, 1, &pool) != FLOE_STATUS_OK ||
        floe_engine_new(pool, "{\"num_envs\": 8}", &engine) != FLOE_STATUS_OK ||
        floe_engine_sizes(engine, &s) != FLOE_STATUS_OK) {
        fprintf(stderr, "consumer: %s\n", floe_last_error());
        return 1;
    }
    floe_step_buffers b = {malloc(s.obs), s.obs, malloc(s.obs), s.obs, malloc(s.agents * sizeof(float)), s.agents,
                           malloc(s.agents * sizeof(uint32_t)), s.agents, malloc(s.envs), s.envs, malloc(s.envs), s.envs,
                           malloc(s.envs * sizeof(floe_env_info)), s.envs};
    uint8_t *actions = calloc(s.actions, 1);
    int rc = floe_engine_reset(engine, 0, &b) != FLOE_STATUS_OK ||
             floe_engine_step(engine, actions, s.actions, &b) != FLOE_STATUS_OK;
    if (rc) fprintf(stderr, "consumer: %s\n", floe_last_error());
    else printf("consumer: libfloe %s stepped %zu environments\n", floe_version(), s.num_envs);
    free(actions);
    free(b.obs), free(b.final_obs), free(b.rewards), free(b.events), free(b.terminated), free(b.truncated),
        free(b.info);
    floe_engine_free(engine);
    floe_pool_free(pool);
    return rc;
}
