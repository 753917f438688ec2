/* A C environment engineer for floe's tests. Given the design limits (design_with_limits), it
 * trains on the largest size they allow with the first agent count they list, and says so;
 * without them (design, or the params {"first_release": true}, which make it a plugin built
 * before design_with_limits existed), always the same configuration. Its rationale says how
 * much context it was given. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floe_plugin.h"

typedef struct {
    floe_plugin_v1 plugin;
    char reply[512];
} instance;

static floe_status design(void *user_data, const char *context, size_t context_len,
                          const char **out_reply_json) {
    instance *self = user_data;
    (void)context;
    snprintf(self->reply, sizeof self->reply,
             "{\"config\": {\"sizes\": [{\"size\": 6, \"data_ratio\": 1, \"hole_ratio\": 0.3,"
             " \"wait_ratio\": 0.5}], \"agents\": [2, 3]},"
             " \"rationale\": \"read %zu bytes of context\"}",
             context_len);
    *out_reply_json = self->reply;
    return FLOE_STATUS_OK;
}

static floe_status design_with_limits(void *user_data, const char *context, size_t context_len,
                                      const floe_design_limits *limits, const char **out_reply_json) {
    instance *self = user_data;
    (void)context;
    if (limits->agents_len == 0) {
        return FLOE_STATUS_BAD_INPUT;
    }
    double hole = limits->max_hole_ratio < 0.3 ? limits->max_hole_ratio : 0.3;
    snprintf(self->reply, sizeof self->reply,
             "{\"config\": {\"sizes\": [{\"size\": %u, \"data_ratio\": 1, \"hole_ratio\": %.3f,"
             " \"wait_ratio\": 0.5}], \"agents\": [%u]},"
             " \"rationale\": \"read %zu bytes of context; sizes %u to %u, agents %u\"}",
             limits->max_size, hole, limits->agents[0], context_len, limits->min_size,
             limits->max_size, limits->agents[0]);
    *out_reply_json = self->reply;
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    instance *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    int first_release = params_json != NULL && strstr(params_json, "\"first_release\": true") != NULL;
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = first_release ? (uint32_t)offsetof(floe_plugin_v1, design_with_limits)
                                             : (uint32_t)sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_ENV_ENGINEER;
    self->plugin.name = "c-constant-engineer";
    self->plugin.version = "0.1.0";
    self->plugin.user_data = self;
    self->plugin.destroy = destroy;
    self->plugin.design = design;
    self->plugin.capabilities = 0; /* an engineer declares nothing */
    /* Set even when struct_size ends before it: the host must not read it then. */
    self->plugin.design_with_limits = design_with_limits;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
