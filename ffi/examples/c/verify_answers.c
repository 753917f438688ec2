/*
 * Batched verification of free-text answers through the C API, the way an RL framework scores
 * a language model's completions: one call for the whole batch, one record per answer.
 *
 *   verify_answers [instances] [repeats]
 *
 * Draws instances with known optima, asks the solver for each one's optimal plan, writes it as
 * the paper's answer text ("Agent 0: RIGHT DOWN ..."), spoils every third answer (one move
 * changed) and verifies all of them in one batch, `repeats` times over; prints the outcome counts
 * and answers verified per second.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floe.h"

static int fail(const char *what) {
    fprintf(stderr, "verify_answers: %s: %s\n", what, floe_last_error());
    return 1;
}

static const char *word(char c) {
    switch (c) {
        case 'U': return "UP";
        case 'D': return "DOWN";
        case 'L': return "LEFT";
        case 'R': return "RIGHT";
        default: return "WAIT";
    }
}

/* Turns {"moves": ["RRD", "UU"]} into "Agent 0: RIGHT RIGHT DOWN\nAgent 1: UP UP\n";
 * with `spoil`, the first move of agent 0 becomes its opposite. */
static char *answer_text(const char *plan_json, int spoil) {
    size_t cap = strlen(plan_json) * 8 + 64, len = 0;
    char *out = malloc(cap);
    const char *p = strchr(plan_json, '[');
    int agent = 0;
    out[0] = 0;
    while (p && (p = strchr(p, '"')) != NULL) {
        const char *end = strchr(p + 1, '"');
        len += (size_t)snprintf(out + len, cap - len, "Agent %d:", agent);
        for (const char *c = p + 1; c < end; c++) {
            char m = *c;
            if (spoil && agent == 0 && c == p + 1) m = m == 'U' ? 'D' : m == 'D' ? 'U' : m == 'L' ? 'R' : 'L';
            len += (size_t)snprintf(out + len, cap - len, " %s", word(m));
        }
        if (end == p + 1) len += (size_t)snprintf(out + len, cap - len, " WAIT");
        len += (size_t)snprintf(out + len, cap - len, "\n");
        agent++;
        p = end + 1;
    }
    return out;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200;
    int repeats = argc > 2 ? atoi(argv[2]) : 20;
    floe_pool *pool = NULL;
    if (floe_pool_generate("{\"size\": 6, \"agents\": 3, \"hole_ratio\": 0.2, \"wait_ratio\": 0.5}", n, 4, &pool))
        return fail("pool");
    char **answers = calloc(n, sizeof *answers);
    uint32_t *instances = calloc(n, sizeof *instances);
    for (size_t i = 0; i < n; i++) {
        char *inst = NULL, *plan = NULL;
        uint32_t soc, makespan;
        if (floe_pool_instance_json(pool, i, &inst) || floe_solve(inst, 0, &plan, &soc, &makespan)) return fail("solve");
        answers[i] = answer_text(plan, i % 3 == 2);
        instances[i] = (uint32_t)i;
        floe_string_free(inst);
        floe_string_free(plan);
    }
    floe_verdict_record *records = calloc(n, sizeof *records);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < repeats; r++)
        if (floe_verify_answers(pool, instances, (const char *const *)answers, n, records, n)) return fail("verify");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    size_t optimal = 0, valid = 0, by_kind[9] = {0};
    for (size_t i = 0; i < n; i++) {
        valid += records[i].failure == FLOE_FAILURE_NONE;
        optimal += records[i].optimal;
        by_kind[records[i].failure < 9 ? records[i].failure : 0]++;
    }
    printf("verify_answers: %zu answers: %zu valid, %zu optimal; failures: out_of_bounds %zu, hole %zu, "
           "vertex %zu, edge %zu, goal_not_reached %zu; %.0f answers/s\n",
           n, valid, optimal, by_kind[FLOE_FAILURE_OUT_OF_BOUNDS], by_kind[FLOE_FAILURE_HOLE],
           by_kind[FLOE_FAILURE_VERTEX_CONFLICT], by_kind[FLOE_FAILURE_EDGE_CONFLICT],
           by_kind[FLOE_FAILURE_GOAL_NOT_REACHED], (double)n * repeats / secs);
    int ok = valid == optimal && valid == n - n / 3;
    for (size_t i = 0; i < n; i++) free(answers[i]);
    free(answers), free(instances), free(records);
    floe_pool_free(pool);
    if (!ok) fprintf(stderr, "verify_answers: expected every unspoiled answer valid and optimal\n");
    return ok ? 0 : 1;
}
