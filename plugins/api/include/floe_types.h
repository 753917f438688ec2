/*
 * floe_types.h: what floe.h (the library's C API) and floe_plugin.h (the C plugin ABI) share,
 * defined once: floe_status and its codes, FLOE_UNKNOWN, the failure kinds, the plugin batch
 * records (the layout of floe-plugin-api's `records` module) and the engine's records (the
 * layout of floe-core's `engine::layout`). The C test suite checks every record's size.
 */
#ifndef FLOE_TYPES_H
#define FLOE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Plugin kinds (floe_plugin_v1.kind, and floe_plugin_new's kind in floe.h). */
#define FLOE_PLUGIN_KIND_REWARD 1u
#define FLOE_PLUGIN_KIND_CURRICULUM 2u
#define FLOE_PLUGIN_KIND_ENV_ENGINEER 3u
#define FLOE_PLUGIN_KIND_LEVEL_SAMPLER 4u

/* floe_env_info.outcome: how an episode ended (floe-core's engine::outcome). */
#define FLOE_OUTCOME_RUNNING 0u
#define FLOE_OUTCOME_SUCCESS 1u
#define FLOE_OUTCOME_FAILURE 2u
#define FLOE_OUTCOME_TRUNCATED 3u

/* Status codes, returned by every function of floe.h and of a plugin. A plugin returns codes 0-7;
 * from a plugin, any other non-zero value is read as FLOE_STATUS_FAILED. */
typedef int32_t floe_status;
#define FLOE_STATUS_OK 0
#define FLOE_STATUS_FAILED 1
#define FLOE_STATUS_PANICKED 2 /* a panic was caught at the boundary (Rust plugins, libfloe) */
#define FLOE_STATUS_UNSUPPORTED 3
#define FLOE_STATUS_BAD_INPUT 4
#define FLOE_STATUS_BAD_OUTPUT 5
#define FLOE_STATUS_CONFIG 6
#define FLOE_STATUS_UNKNOWN_PLUGIN 7
/* libfloe (floe.h) only: */
#define FLOE_STATUS_NULL_POINTER 8   /* a required pointer argument was NULL */
#define FLOE_STATUS_BUFFER_SIZE 9    /* a buffer's length is not the one required */
#define FLOE_STATUS_WRONG_HANDLE 10  /* a handle of another kind, freed, or not made by libfloe */
#define FLOE_STATUS_BAD_UTF8 11      /* a string argument is not UTF-8 */
#define FLOE_STATUS_IO 12            /* a file could not be read or written */
#define FLOE_STATUS_GPU 13           /* no GPU adapter or device, or a device error */
#define FLOE_STATUS_NOT_RESET 14     /* an engine was stepped before its first reset */
#define FLOE_STATUS_CANCELLED 15     /* a run stopped at the caller's request */
#define FLOE_STATUS_NOT_BUILT 16     /* the library was built without the feature the call needs */
#define FLOE_STATUS_TOO_LARGE 17     /* the memory a call needs cannot be had: a size that overflows, or an
                                      * allocation the system refuses; the message gives the bytes asked for */

/* An unknown count in a record. */
#define FLOE_UNKNOWN UINT32_MAX

/* floe_verdict_record.failure: 0 for a valid plan, else the first failure's kind. */
#define FLOE_FAILURE_NONE 0u
#define FLOE_FAILURE_PARSE_ERROR 1u
#define FLOE_FAILURE_WRONG_AGENT_COUNT 2u
#define FLOE_FAILURE_ILLEGAL_MOVE 3u
#define FLOE_FAILURE_OUT_OF_BOUNDS 4u
#define FLOE_FAILURE_HOLE 5u
#define FLOE_FAILURE_VERTEX_CONFLICT 6u
#define FLOE_FAILURE_EDGE_CONFLICT 7u
#define FLOE_FAILURE_GOAL_NOT_REACHED 8u

/* One verified plan (28 bytes). Counts are FLOE_UNKNOWN when the host does not know them. */
typedef struct floe_verdict_record {
    uint8_t failure;         /* FLOE_FAILURE_* */
    uint8_t optimal;         /* 1: valid with the optimal sum of costs */
    uint8_t reserved[2];
    uint32_t num_agents;     /* agents of the instance */
    uint32_t agents_on_goal; /* agents on their goals at the plan's end */
    uint32_t legal_steps;    /* steps simulated before the first failure */
    uint32_t horizon;        /* the plan's length in steps */
    uint32_t soc;            /* sum of costs of a valid plan */
    uint32_t optimal_soc;    /* the optimal sum of costs */
} floe_verdict_record;

/* floe_step_outcome.flags */
#define FLOE_STEP_COLLIDED 1u
#define FLOE_STEP_FELL_IN_HOLE 2u
#define FLOE_STEP_REACHED_GOAL 4u
#define FLOE_STEP_OUT_OF_BOUNDS 8u
#define FLOE_STEP_WAITED 16u

/* One agent's step (12 bytes). Distances are shortest-path lengths to the agent's goal. */
typedef struct floe_step_outcome {
    uint32_t prev_distance; /* before the step; FLOE_UNKNOWN if unreachable */
    uint32_t new_distance;  /* after the step; FLOE_UNKNOWN if unreachable */
    uint32_t flags;         /* FLOE_STEP_* */
} floe_step_outcome;

/* An instance that may be replayed, with its past rewards (40 bytes). */
typedef struct floe_replay_record {
    uint64_t id;          /* the host's key for the instance */
    uint32_t size;        /* map size */
    uint32_t agents;
    uint32_t last_round;  /* last round it was trained on */
    uint32_t samples;     /* rollouts scored so far; 0 = never played */
    float mean_reward;
    float reward_std;
    float success_rate;   /* share of valid rollouts */
    uint32_t reserved;
} floe_replay_record;

/* What to replay (16 bytes). */
typedef struct floe_replay_request {
    uint32_t round;  /* the round being configured */
    uint32_t count;  /* distinct instances wanted */
    uint64_t seed;   /* seed for any randomness */
} floe_replay_request;

/* The design limits of an engineer's request (floe-plugin-api's DesignLimits, laid out as its
 * DesignLimitsRecord): every configuration an engineer returns is clamped into them. 48 bytes
 * on a 64-bit machine. */
typedef struct floe_design_limits {
    uint32_t min_size;          /* smallest map size */
    uint32_t max_size;          /* largest map size */
    uint32_t max_sizes;         /* most map sizes in one configuration */
    uint32_t reserved;          /* 0 */
    double max_hole_ratio;      /* largest hole ratio */
    double max_replay_fraction; /* largest replay fraction (0: nothing can replay) */
    const uint32_t *agents;     /* the agent counts it may choose from (agents_len of them) */
    size_t agents_len;
} floe_design_limits;

/* One slot of an engine's pool, as a level sampler sees it (32 bytes; floe-plugin-api's
 * LevelRecord). */
typedef struct floe_level_record {
    uint32_t slot;          /* its index in the pool */
    uint32_t generation;    /* how many times it was refilled */
    uint32_t width, height; /* the level's grid */
    uint32_t agents;
    uint32_t holes;
    uint32_t optimal_soc;   /* FLOE_UNKNOWN when not known */
    uint32_t in_play;       /* environments playing it now (a refill truncates their episodes) */
} floe_level_record;

/* One pool slot's statistics as its level sampler keeps them (floe_levels_slot_stats; 20 bytes;
 * floe-plugin-api's SlotStats). */
typedef struct floe_slot_stats {
    uint32_t generation; /* the slot's refill these statistics belong to */
    uint32_t plays;      /* episodes counted on that level (learnability: those in its window) */
    uint32_t staleness;  /* plr, accel: sampler calls since the level was scored; else FLOE_UNKNOWN */
    float score;         /* plr, accel: its score; learnability: its success rate; else NaN */
    float figure;        /* plr, accel: its replay probability; learnability: p*(1-p); else NaN */
} floe_slot_stats;

/* ---- Records of the batched engine and verifier (floe.h); the layouts of floe-core's
 * `engine::layout` structs (EnvInfo, EnvRecord, AgentRecord, VerifyOut) and of its
 * `engine::BufferSizes`. ---- */

/* floe_env_info.outcome: FLOE_OUTCOME_* (above). One per environment after a step, about the
 * episode that ran in it (the one that ended, when it ended): all a level sampler scores a level
 * by, so that a host needs no second pass. 32 bytes. */
typedef struct floe_env_info {
    uint32_t episode_steps; /* steps taken in the episode */
    uint32_t outcome;       /* FLOE_OUTCOME_RUNNING, _SUCCESS, _FAILURE or _TRUNCATED */
    uint32_t failure_kind;  /* for failures, FLOE_FAILURE_* (4 out of bounds, 5 hole, 6 vertex, 7 edge); else 0 */
    uint32_t failure_agent; /* for failures, the agent at fault; else FLOE_UNKNOWN */
    uint32_t instance;      /* the pool slot the episode plays */
    uint32_t generation;    /* the slot's generation: 0 for the pool's own level, +1 per refill */
    float episode_return;   /* every agent's rewards summed over the episode (so far) */
    uint32_t agents_on_goal; /* agents on their goals after the step */
} floe_env_info;

/* One environment's state (floe_engine_state). 24 bytes. */
typedef struct floe_env_record {
    uint32_t width, height; /* the grid of the instance being played */
    uint32_t agents;        /* its agents: the first `agents` of the environment's K slots */
    uint32_t step;          /* steps taken in the current episode */
    uint32_t episode;       /* episodes started since the last reset, minus one */
    uint32_t instance;      /* pool index of the instance being played */
} floe_env_record;

/* One agent slot's state (floe_engine_state). 12 bytes. */
typedef struct floe_agent_record {
    uint32_t row, col; /* its cell (its last cell once it dropped out; 0 in padding slots) */
    uint32_t active;   /* 1 while it takes part in the episode */
} floe_agent_record;

/* The length of every buffer of a step, in elements (floe_engine_sizes). 9 size_t. */
typedef struct floe_buffer_sizes {
    size_t num_envs;     /* B, environments */
    size_t max_agents;   /* K, agent slots per environment */
    size_t obs_stride;   /* bytes of one agent's observation (0 with "obs_format": "none") */
    size_t actions;      /* B*K action bytes for floe_engine_step */
    size_t obs;          /* B*K*obs_stride bytes of obs and of final_obs */
    size_t agents;       /* B*K: rewards, events, and the agent records of floe_engine_state */
    size_t envs;         /* B: terminated, truncated, info, and the environment records of floe_engine_state */
    size_t global_side;  /* S, the pool's largest side: the side of one global-state plane */
    size_t global_state; /* B*3*S*S bytes of floe_engine_global_state */
} floe_buffer_sizes;

/* One plan's verdict (floe_verify_plan). 32 bytes. */
typedef struct floe_verdict {
    uint32_t valid;       /* 1 if valid */
    uint32_t optimal;     /* 1 if valid with the optimal sum of costs */
    uint32_t kind;        /* FLOE_FAILURE_* of the first failure, 0 for none */
    uint32_t agent;       /* the agent at fault, or FLOE_UNKNOWN */
    uint32_t time;        /* the time of the failure, or FLOE_UNKNOWN */
    uint32_t soc;         /* sum of costs of a valid plan, or FLOE_UNKNOWN */
    uint32_t makespan;    /* makespan of a valid plan, or FLOE_UNKNOWN */
    uint32_t optimal_soc; /* the optimum, or FLOE_UNKNOWN */
} floe_verdict;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLOE_TYPES_H */
