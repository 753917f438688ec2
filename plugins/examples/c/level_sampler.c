/* A C level sampler for floe: learnability from each slot's successes, written as a C or C++
 * author would, against floe_plugin.h alone.
 *
 * Per slot (its statistics start again when the slot's generation changes): the episodes that
 * ended on its level and their successes. A slot with at least min_episodes episodes is scored
 * with p * (1 - p), p its success rate, and weighted 0.05 + that; a slot not scored yet gets 1,
 * so that new levels are tried. A scored slot whose level was solved every time is refilled
 * with a new level from the host's generator when no environment plays it.
 *
 * Parameters: {"min_episodes": N} (default 2). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "floe_plugin.h"

typedef struct {
    uint32_t generation, episodes, successes;
} slot_stats;

typedef struct {
    floe_plugin_v1 plugin;
    uint32_t min_episodes;
    slot_stats *slots;
    size_t len;
    char error[160];
} sampler;

static const char *last_error(void *user_data) {
    return ((sampler *)user_data)->error;
}

static floe_status update_levels(void *user_data, const floe_level_record *levels, size_t levels_len,
                                 const floe_env_info *episodes, size_t episodes_len, const float *scores,
                                 double *out_weights, uint32_t *out_has_weights, uint32_t *out_refill,
                                 size_t *out_refill_len, const char **out_config_json) {
    sampler *self = user_data;
    (void)scores;
    if (levels_len > self->len) {
        slot_stats *grown = realloc(self->slots, levels_len * sizeof *grown);
        if (grown == NULL) {
            snprintf(self->error, sizeof self->error, "no memory for %zu slots", levels_len);
            return FLOE_STATUS_FAILED;
        }
        memset(grown + self->len, 0, (levels_len - self->len) * sizeof *grown);
        self->slots = grown;
        self->len = levels_len;
    }
    for (size_t i = 0; i < levels_len; i++) {
        if (self->slots[i].generation != levels[i].generation) {
            self->slots[i] = (slot_stats){levels[i].generation, 0, 0};
        }
    }
    for (size_t e = 0; e < episodes_len; e++) {
        const floe_env_info *ep = &episodes[e];
        if (ep->instance >= levels_len) {
            snprintf(self->error, sizeof self->error, "an episode on slot %u of %zu", (unsigned)ep->instance,
                     levels_len);
            return FLOE_STATUS_BAD_INPUT;
        }
        slot_stats *s = &self->slots[ep->instance];
        if (s->generation == ep->generation) {
            s->episodes += 1;
            s->successes += ep->outcome == FLOE_OUTCOME_SUCCESS;
        }
    }
    size_t refill = 0;
    for (size_t i = 0; i < levels_len; i++) {
        const slot_stats *s = &self->slots[i];
        if (s->episodes < self->min_episodes) {
            out_weights[i] = 1.0;
            continue;
        }
        double p = (double)s->successes / s->episodes;
        out_weights[i] = 0.05 + p * (1.0 - p);
        if (s->successes == s->episodes && levels[i].in_play == 0) {
            out_refill[refill++] = (uint32_t)i;
        }
    }
    *out_has_weights = 1;
    *out_refill_len = refill;
    *out_config_json = NULL;
    return FLOE_STATUS_OK;
}

static void destroy(void *user_data) {
    sampler *self = user_data;
    free(self->slots);
    free(self);
}

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    long min_episodes = 2;
    const char *key = params_json ? strstr(params_json, "\"min_episodes\"") : NULL;
    if (key != NULL) {
        const char *colon = strchr(key, ':');
        char *end = NULL;
        min_episodes = colon ? strtol(colon + 1, &end, 10) : 0;
        if (colon == NULL || end == colon + 1 || min_episodes < 1 || min_episodes > 1000000) {
            *out_error = "min_episodes must be a whole number from 1";
            return FLOE_STATUS_CONFIG;
        }
    }
    sampler *self = calloc(1, sizeof *self);
    if (self == NULL) {
        *out_error = "out of memory";
        return FLOE_STATUS_FAILED;
    }
    self->min_episodes = (uint32_t)min_episodes;
    self->plugin.abi_version = FLOE_PLUGIN_ABI_VERSION;
    self->plugin.struct_size = sizeof self->plugin;
    self->plugin.kind = FLOE_PLUGIN_KIND_LEVEL_SAMPLER;
    self->plugin.name = "c-learnability";
    self->plugin.version = "1.0.0";
    self->plugin.user_data = self;
    self->plugin.last_error = last_error;
    self->plugin.destroy = destroy;
    self->plugin.update_levels = update_levels;
    self->plugin.capabilities = 0;
    *out_plugin = &self->plugin;
    return FLOE_STATUS_OK;
}
