/*
 * floe_plugin.h: the C ABI of floe plugins, version 1.
 *
 * A C (or C++) plugin is a shared library that exports one function,
 *
 *     floe_status floe_plugin_entry_v1(const char *params_json,
 *                                      const floe_plugin_v1 **out_plugin,
 *                                      const char **out_error);
 *
 * which makes one plugin instance and hands back a floe_plugin_v1: the ABI version, the
 * plugin's kind, name and version, an opaque user_data pointer, and the function pointers of
 * its kind. Every function returns a status (FLOE_STATUS_OK or an error code); on an error the
 * host asks last_error(user_data) for the message.
 *
 * Lifetimes and threads
 * - params_json: NUL-terminated UTF-8 JSON with the plugin's parameters, or NULL for defaults.
 *   Valid only during the call.
 * - *out_plugin: owned by the plugin; it, and its name and version strings, stay valid and
 *   unchanged until destroy(user_data) returns. The host calls destroy exactly once for every
 *   successful entry call (when destroy is not NULL) and never touches the instance afterwards.
 * - *out_error (on a failed entry call): static storage, or valid until the next entry call.
 * - Strings a function hands back (last_error, *out_config_json, *out_reply_json) are owned by
 *   the plugin and stay valid until the next call on the same instance, or destroy; the host
 *   copies them at once.
 * - Input arrays are valid only during the call. Output arrays are caller-owned and have the
 *   documented length.
 * - The host calls one instance from one thread at a time (perhaps a different thread each
 *   time); it may call the entry function several times, e.g. once with NULL parameters at
 *   load time to read the kind, name and version, and once per instance it makes.
 *
 * Versions
 * - The host reads abi_version first and, if it is not FLOE_PLUGIN_ABI_VERSION, nothing else
 *   (the load fails and the instance is left alone). Within version 1 the struct only grows by
 *   appending fields: struct_size (set it to sizeof(floe_plugin_v1)) tells the host which fields
 *   a plugin has. It must reach at least to the end of `design` (the first release); a field
 *   that lies beyond struct_size is not read, and takes the default its comment documents.
 *
 * Capabilities
 * - `capabilities` (appended) declares what the plugin does beyond its kind's required call,
 *   as FLOE_PLUGIN_CAP_* flags or-ed together: a reward declares SCORES_PLANS when it sets
 *   verdict_rewards and SCORES_STEPS when it sets step_rewards (at least one); a curriculum
 *   declares REPLAYS when it sets sample_replay; an engineer and a level sampler declare
 *   nothing. The flags and the
 *   functions must agree, or the load fails. The host reads what a plugin can do from here and
 *   never calls to find out.
 *
 * Batch records (floe_verdict_record, floe_step_outcome, floe_replay_record, floe_level_record,
 * and floe_env_info for a level sampler's episodes) have the same
 * layout as the Rust structs of floe-plugin-api's `records` module; fields marked "reserved"
 * are 0. Configurations cross as JSON text in the format of floe-plugin-api's RoundConfig:
 *
 *     {"sizes": [{"size": 3, "data_ratio": 0.5, "hole_ratio": 0.1, "wait_ratio": 0.25},
 *                {"size": 4, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5}],
 *      "agents": [2], "replay_fraction": 0.0}
 *
 * and the host validates every configuration it gets back.
 */
#ifndef FLOE_PLUGIN_H
#define FLOE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLOE_PLUGIN_ABI_VERSION 1u

/* floe_plugin_v1.capabilities: what a plugin declares it can do. */
#define FLOE_PLUGIN_CAP_SCORES_PLANS 1u /* reward: verdict_rewards, verified plans */
#define FLOE_PLUGIN_CAP_SCORES_STEPS 2u /* reward: step_rewards, step outcomes */
#define FLOE_PLUGIN_CAP_REPLAYS 4u      /* curriculum: sample_replay */


/* floe_status, its codes and the batch records: shared with floe.h. */
#include "floe_types.h"

/* One plugin instance. Function pointers that do not apply to the kind are NULL. */
typedef struct floe_plugin_v1 {
    uint32_t abi_version; /* FLOE_PLUGIN_ABI_VERSION */
    uint32_t struct_size; /* sizeof(floe_plugin_v1) */
    uint32_t kind;        /* FLOE_PLUGIN_KIND_* */
    uint32_t reserved;
    const char *name;     /* UTF-8, NUL-terminated */
    const char *version;  /* UTF-8, NUL-terminated */
    void *user_data;      /* passed back to every function */

    /* The message of the last failed call (may be NULL itself, or return NULL). */
    const char *(*last_error)(void *user_data);
    /* Frees the instance (may be NULL if there is nothing to free). */
    void (*destroy)(void *user_data);

    /* Reward: writes len rewards to out (at least one of the two is not NULL). */
    floe_status (*verdict_rewards)(void *user_data, const floe_verdict_record *records, size_t len,
                                   float *out);
    floe_status (*step_rewards)(void *user_data, const floe_step_outcome *steps, size_t len, float *out);

    /* Curriculum: history JSON (history_len bytes, NUL-terminated) in; the next configuration
     * as NUL-terminated JSON out (required for curricula). */
    floe_status (*next_config)(void *user_data, const char *history_json, size_t history_len,
                               const char **out_config_json);
    /* Curriculum (optional): writes at most request->count distinct indices into pool to
     * out_indices (room for request->count) and their number to *out_len. */
    floe_status (*sample_replay)(void *user_data, const floe_replay_record *pool, size_t pool_len,
                                 const floe_replay_request *request, uint32_t *out_indices,
                                 size_t *out_len);

    /* Environment engineer (this or design_with_limits below, at least one): context text
     * (context_len bytes, NUL-terminated) in; the reply {"config": <configuration>,
     * "rationale": "..."} as NUL-terminated JSON out. */
    floe_status (*design)(void *user_data, const char *context, size_t context_len,
                          const char **out_reply_json);

    /* Appended after the first release (struct_size tells the host whether it is there). */

    /* FLOE_PLUGIN_CAP_* flags (see "Capabilities" above). Default, for a plugin whose struct
     * ends before this field: what its non-NULL functions offer. */
    uint32_t capabilities;

    /* Environment engineer: as design, and given the design limits the host will clamp the
     * reply into (valid only during the call), as a value rather than in the context's text.
     * The host calls it instead of design when it is set. Default: NULL. */
    floe_status (*design_with_limits)(void *user_data, const char *context, size_t context_len,
                                      const floe_design_limits *limits, const char **out_reply_json);

    /* Level sampler (required for that kind): the pool's slots (levels[i].slot == i) and the
     * episodes that ended since the last call, as the engine's info describes them, in; scores
     * is NULL or one finite score per episode from the host (e.g. PLR's value errors). Out:
     * - weights: when *out_has_weights is set to 1, out_weights (room for levels_len) holds one
     *   finite, non-negative weight per slot, not all zero; 0 keeps the weights in use;
     * - out_refill (room for levels_len): *out_refill_len distinct slots whose levels the host
     *   replaces with new ones from its generator;
     * - *out_config_json: NULL, or the generator configuration of the refilled levels (a
     *   configuration as above), owned by the plugin as every string it hands back.
     * The host calls it once with no episodes when it starts, and checks what it returns.
     * Default: NULL. */
    floe_status (*update_levels)(void *user_data, const floe_level_record *levels, size_t levels_len,
                                 const floe_env_info *episodes, size_t episodes_len, const float *scores,
                                 double *out_weights, uint32_t *out_has_weights, uint32_t *out_refill,
                                 size_t *out_refill_len, const char **out_config_json);
} floe_plugin_v1;

/* The entry point's type, and its declaration for plugins to define. */
typedef floe_status (*floe_plugin_entry_v1_fn)(const char *params_json, const floe_plugin_v1 **out_plugin,
                                               const char **out_error);

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLOE_PLUGIN_H */
