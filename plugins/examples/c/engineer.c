/* A C environment engineer for floe's tests: always the same configuration, with a rationale
 * that says how much context it was given. */
#include <stdio.h>
#include <stdlib.h>

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
    self->plugin.kind = FLOE_PLUGIN_KIND_ENV_ENGINEER;
    self->plugin.name = "c-constant-engineer";
    self->plugin.version = "0.1.0";
    self->plugin.user_data = self;
    self->plugin.destroy = destroy;
    self->plugin.design = design;
    self->plugin.capabilities = 0; /* an engineer declares nothing */
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
