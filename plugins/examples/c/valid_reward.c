/* A minimal floe reward plugin in C: 1 for an optimal plan, 0.5 for a valid one, 0 otherwise. */
#include <stdio.h>
#include <stdlib.h>

#include "floe_plugin.h"

typedef struct {
    floe_plugin_v1 plugin; /* what the entry point hands out */
    char error[128];       /* the last error message */
} instance;

static const char *last_error(void *user_data) {
    return ((instance *)user_data)->error;
}

static floe_status verdict_rewards(void *user_data, const floe_verdict_record *records, size_t len,
                                   float *out) {
    instance *self = user_data;
    for (size_t i = 0; i < len; i++) {
        if (records[i].failure > FLOE_FAILURE_GOAL_NOT_REACHED) {
            snprintf(self->error, sizeof self->error, "record %zu: unknown failure code %u", i,
                     (unsigned)records[i].failure);
            return FLOE_STATUS_BAD_INPUT;
        }
        out[i] = records[i].optimal ? 1.0f : records[i].failure == FLOE_FAILURE_NONE ? 0.5f : 0.0f;
    }
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    (void)params_json; /* this plugin has no parameters */
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_REWARD;
    self->plugin.name = "c-valid-reward";
    self->plugin.version = "1.0.0";
    self->plugin.user_data = self;
    self->plugin.last_error = last_error;
    self->plugin.destroy = destroy;
    self->plugin.verdict_rewards = verdict_rewards;
    self->plugin.capabilities = FLOE_PLUGIN_CAP_SCORES_PLANS;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
