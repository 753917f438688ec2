/* A C reward plugin that fails: every verdict_rewards and step_rewards call returns an error
 * with a message, and the entry point itself fails when its parameters contain "fail-entry". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe_plugin.h"

typedef struct {
    floe_plugin_v1 plugin;
    char error[128];
} instance;

static const char *last_error(void *user_data) {
    return ((instance *)user_data)->error;
}

static floe_status verdict_rewards(void *user_data, const floe_verdict_record *records, size_t len,
                                   float *out) {
    instance *self = user_data;
    (void)records;
    (void)out;
    snprintf(self->error, sizeof self->error, "failing.c: out of luck after %zu records", len);
    return FLOE_STATUS_FAILED;
}

static floe_status step_rewards(void *user_data, const floe_step_outcome *steps, size_t len, float *out) {
    instance *self = user_data;
    (void)steps;
    (void)out;
    snprintf(self->error, sizeof self->error, "failing.c: out of luck after %zu step outcomes", len);
    return FLOE_STATUS_FAILED;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    if (params_json != NULL && strstr(params_json, "fail-entry") != NULL) {
        *out_error = "failing.c: asked to fail in the entry point";
        return FLOE_STATUS_CONFIG;
    }
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_REWARD;
    self->plugin.name = "c-failing";
    self->plugin.version = "0.0.1";
    self->plugin.user_data = self;
    self->plugin.last_error = last_error;
    self->plugin.destroy = destroy;
    self->plugin.verdict_rewards = verdict_rewards;
    self->plugin.step_rewards = step_rewards;
    self->plugin.capabilities = FLOE_PLUGIN_CAP_SCORES_PLANS | FLOE_PLUGIN_CAP_SCORES_STEPS;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
