/* A curriculum whose capabilities and functions disagree: it declares that it replays but has
 * no sample_replay. The host must refuse to load it, saying so. */
#include <stdlib.h>

#include "floe_plugin.h"

static floe_status next_config(void *user_data, const char *history_json, size_t history_len,
                               const char **out_config_json) {
    (void)user_data;
    (void)history_json;
    (void)history_len;
    *out_config_json = "{\"sizes\": [{\"size\": 3, \"data_ratio\": 1, \"hole_ratio\": 0.1, \"wait_ratio\": 0}], "
                       "\"agents\": [2], \"replay_fraction\": 0.5}";
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    (void)params_json;
    floe_plugin_v1 *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    self->abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->struct_size = sizeof *self;
    self->kind = FLOE_PLUGIN_KIND_CURRICULUM;
    self->name = "c-mislabelled";
    self->version = "0.0.1";
    self->user_data = self;
    self->destroy = destroy;
    self->next_config = next_config;
    self->capabilities = FLOE_PLUGIN_CAP_REPLAYS;
    *out_plugin = self;
    return FLOE_STATUS_OK;
}
