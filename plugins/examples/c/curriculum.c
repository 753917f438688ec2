/* A C curriculum for floe's tests: a fixed configuration with a quarter of each round replayed,
 * replaying the least recently played instances first. */
#include <stdio.h>
#include <stdlib.h>

#include "floe_plugin.h"

typedef struct {
    floe_plugin_v1 plugin;
    char error[160];
} instance;

static const char *last_error(void *user_data) {
    return ((instance *)user_data)->error;
}

static floe_status next_config(void *user_data, const char *history_json, size_t history_len,
                               const char **out_config_json) {
    (void)user_data;
    (void)history_json;
    (void)history_len;
    *out_config_json = "{\"sizes\": [{\"size\": 4, \"data_ratio\": 0.5, \"hole_ratio\": 0.1, \"wait_ratio\": 0.25},"
                       " {\"size\": 5, \"data_ratio\": 0.5, \"hole_ratio\": 0.2, \"wait_ratio\": 0.5}],"
                       " \"agents\": [2], \"replay_fraction\": 0.25}";
    return FLOE_STATUS_OK;
}

/* The count played instances with the smallest last_round (ties: pool order). */
static floe_status sample_replay(void *user_data, const floe_replay_record *pool, size_t pool_len,
                                 const floe_replay_request *request, uint32_t *out_indices,
                                 size_t *out_len) {
    instance *self = user_data;
    size_t n = 0;
    while (n < request->count) {
        size_t best = pool_len;
        for (size_t i = 0; i < pool_len; i++) {
            int taken = 0;
            for (size_t j = 0; j < n; j++) {
                taken |= out_indices[j] == i;
            }
            if (!taken && pool[i].samples > 0 && (best == pool_len || pool[i].last_round < pool[best].last_round)) {
                best = i;
            }
        }
        if (best == pool_len) {
            snprintf(self->error, sizeof self->error, "%u replays asked for, only %zu played instances",
                     (unsigned)request->count, n);
            return FLOE_STATUS_BAD_INPUT;
        }
        out_indices[n++] = (uint32_t)best;
    }
    *out_len = n;
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    (void)params_json;
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_CURRICULUM;
    self->plugin.name = "c-stalest-replay";
    self->plugin.version = "0.3.0";
    self->plugin.user_data = self;
    self->plugin.last_error = last_error;
    self->plugin.destroy = destroy;
    self->plugin.next_config = next_config;
    self->plugin.sample_replay = sample_replay;
    self->plugin.capabilities = FLOE_PLUGIN_CAP_REPLAYS;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
