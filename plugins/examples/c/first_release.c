/* A reward plugin as built against the first release of floe_plugin.h, whose struct ended with
 * `design`: its struct_size stops there, so the host must not read the appended fields (the
 * bytes after it hold garbage here) and takes the documented default for them: capabilities
 * from its non-NULL functions, here scores_plans. */
#include <stddef.h>
#include <stdlib.h>

#include "floe_plugin.h"

static floe_status verdict_rewards(void *user_data, const floe_verdict_record *records, size_t len,
                                   float *out) {
    (void)user_data;
    for (size_t i = 0; i < len; i++) {
        out[i] = records[i].failure == FLOE_FAILURE_NONE ? 1.0f : 0.0f;
    }
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    free(user_data);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    (void)params_json;
    floe_plugin_v1 *self = malloc(sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    /* What the first release did not have is garbage, not zero. */
    for (size_t i = 0; i < sizeof *self; i++) {
        ((unsigned char *)self)[i] = 0xA5;
    }
    self->abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->struct_size = (uint32_t)offsetof(floe_plugin_v1, capabilities);
    self->kind = FLOE_PLUGIN_KIND_REWARD;
    self->reserved = 0;
    self->name = "c-first-release";
    self->version = "1.0.0";
    self->user_data = self;
    self->last_error = NULL;
    self->destroy = destroy;
    self->verdict_rewards = verdict_rewards;
    self->step_rewards = NULL;
    self->next_config = NULL;
    self->sample_replay = NULL;
    self->design = NULL;
    *out_plugin = self;
    return FLOE_STATUS_OK;
}
