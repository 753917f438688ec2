// train_policy: a per-step policy for MAPF-FrozenLake trained with libtorch's C++ API on floe's
// batched engine, through the C API (floe.hpp), and checked on held-out boards.
//
// What it does
//   1. Draws a training pool and a held-out pool of the same setting with different seeds
//      (floe_pool_generate), and reads every instance's grid, starts and goals from its JSON
//      (floe_pool_instance_json), checking them against the engine (the starts must be where
//      floe_engine_state puts the agents; the single-agent distances must not exceed the
//      optimum of floe_pool_instance_info). Held-out instances that also occur in the training
//      pool (same grid, starts and goals) are counted and reported.
//   2. Trains one MLP shared by all agents (2 tanh layers of `--hidden` units) with PPO (clipped
//      objective, GAE(λ), a value head, an entropy bonus) on `--envs` environments stepped in one
//      batch by one engine, `--rollout` steps per update.
//      Input per agent: its local observation from the engine (3 planes of (2r+1)² bytes: holes
//      and cells off the grid, other agents, own goal), its offset to its goal (its cell from
//      floe_engine_state, its goal from the pool's JSON: dr and dc scaled, their signs, an "on
//      the goal" flag), the episode's step over the episode limit (floe_env_record.step), and
//      its slot index one-hot (agents share the network; the index lets them break ties, e.g.
//      who waits when two meet). With `--features local+bfs`, also per move whether it is
//      blocked (hole or off the grid) and how it changes the shortest-path distance to the goal
//      (a breadth-first search over the JSON's grid), and that distance.
//      Output: 5 action logits (0 wait, 1 up, 2 down, 3 left, 4 right) and a value.
//      Reward per agent: the engine's own per-agent reward (configured below: a step cost off
//      the goal, -1 for a hole, a cell off the grid or a conflict; no reward for arriving, so
//      that leaving and re-entering a goal earns nothing), plus +1 to every agent of an episode
//      that ends with info.outcome == FLOE_OUTCOME_SUCCESS, plus 0.1 per step of Manhattan
//      distance gained towards the goal (-0.1 per step lost; the new cell follows from the
//      action and the MOVED event, so no state is needed after the same-step auto-reset).
//      An episode that terminates or is truncated ends the return (no bootstrap).
//   3. Evaluates on the held-out pool: every one of `--eval-envs` environments plays its first
//      `episodes / eval-envs` episodes, each ending as success, failure or truncation
//      (info.outcome). The policy is evaluated greedily (argmax of the logits: the checked
//      figure) and also sampled, and greedily on the training pool; uniform random actions are
//      the baseline. One JSON line goes to stdout.
//   4. Exits 1 unless the greedy policy's held-out success is at least `--min-gain` (0.15)
//      above random's and at least `--min-ratio` (2) times random's; 2 on errors.
//
// The setting, and why
//   Mode "strict", the paper's rules: a move off the grid, into a hole, or a vertex or swap
//   conflict ends the episode as a failure. Random play then almost never succeeds (it has to
//   avoid every failure until all agents stand on their goals at once), so a gain cannot come
//   from luck, and it is the rule set the paper's success is measured by. Boards: 5×5 with
//   2 agents and hole ratio 0.2 (`--size`, `--agents`, `--holes` change them), observation
//   radius 2 (a 5×5 window), episode limit 32 (optimal plans here are a few steps long). On
//   these boards a policy learns in well under two minutes of CPU time on two shared cores;
//   the random baseline stays near 0.
//
// Usage
//   train_policy [--updates N] [--max-seconds S] [--envs B] [--rollout T] [--episodes E]
//                [--eval-envs B] [--size N] [--agents K] [--holes R] [--train-pool N]
//                [--eval-pool N] [--seed S] [--threads T] [--min-gain G] [--min-ratio R]
//                [--radius R] [--episode-limit L] [--hidden H] [--lr LR] [--entropy C]
//                [--epochs E] [--features local|local+bfs]
//   Defaults: 400 updates or 100 s of training, whichever comes first; 512 environments,
//   rollouts of 16 steps; 2000 evaluation episodes on 500 environments; features "local".
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "floe.hpp"

namespace {

struct Options {
    int updates = 400;
    double max_seconds = 100;
    int envs = 512;
    int rollout = 16;
    int episodes = 2000;
    int eval_envs = 500;
    int size = 5;
    int agents = 2;
    double holes = 0.2;
    int train_pool = 4096;
    int eval_pool = 1024;
    uint64_t seed = 1;
    int threads = 1;
    double min_gain = 0.15;
    double min_ratio = 2.0;
    int radius = 2;
    int episode_limit = 32;
    int hidden = 64;
    double lr = 1e-3;
    double entropy = 0.01;
    int epochs = 3;
    bool bfs = false;
};

[[noreturn]] void usage(const char *msg) {
    std::fprintf(stderr, "train_policy: %s (see the file's header for the options)\n", msg);
    std::exit(2);
}

Options parse_args(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string k = argv[i];
        if (i + 1 >= argc) usage(("missing value for " + k).c_str());
        const char *v = argv[++i];
        if (k == "--updates") o.updates = std::atoi(v);
        else if (k == "--max-seconds") o.max_seconds = std::atof(v);
        else if (k == "--envs") o.envs = std::atoi(v);
        else if (k == "--rollout") o.rollout = std::atoi(v);
        else if (k == "--episodes") o.episodes = std::atoi(v);
        else if (k == "--eval-envs") o.eval_envs = std::atoi(v);
        else if (k == "--size") o.size = std::atoi(v);
        else if (k == "--agents") o.agents = std::atoi(v);
        else if (k == "--holes") o.holes = std::atof(v);
        else if (k == "--train-pool") o.train_pool = std::atoi(v);
        else if (k == "--eval-pool") o.eval_pool = std::atoi(v);
        else if (k == "--seed") o.seed = std::strtoull(v, nullptr, 10);
        else if (k == "--threads") o.threads = std::atoi(v);
        else if (k == "--min-gain") o.min_gain = std::atof(v);
        else if (k == "--min-ratio") o.min_ratio = std::atof(v);
        else if (k == "--radius") o.radius = std::atoi(v);
        else if (k == "--episode-limit") o.episode_limit = std::atoi(v);
        else if (k == "--hidden") o.hidden = std::atoi(v);
        else if (k == "--lr") o.lr = std::atof(v);
        else if (k == "--entropy") o.entropy = std::atof(v);
        else if (k == "--epochs") o.epochs = std::atoi(v);
        else if (k == "--features") {
            if (std::strcmp(v, "local") == 0) o.bfs = false;
            else if (std::strcmp(v, "local+bfs") == 0) o.bfs = true;
            else usage("--features is local or local+bfs");
        }
        else usage(("unknown option " + k).c_str());
    }
    if (o.updates < 0 || o.envs < 1 || o.rollout < 1 || o.episodes < 1 || o.eval_envs < 1 || o.threads < 1)
        usage("counts must be positive");
    return o;
}

double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ---- What the program reads from the pool's instance JSON --------------------------------

/// Reads the integer pair after `key` (e.g. "goal": [r, c]) from `p`; advances `p` past it.
bool read_pair(const char *&p, const char *key, long &a, long &b) {
    const char *q = std::strstr(p, key);
    if (!q) return false;
    q = std::strchr(q, '[');
    if (!q) return false;
    char *end = nullptr;
    a = std::strtol(q + 1, &end, 10);
    q = std::strchr(end, ',');
    if (!q) return false;
    b = std::strtol(q + 1, &end, 10);
    p = end;
    return true;
}

/// Per instance: agent starts and goals as (row, col), and a key of grid + agents for the
/// overlap count.
struct InstanceTable {
    size_t k = 0;                        // agent slots (the pool's max agents)
    std::vector<int32_t> starts, goals;  // [instance][slot][2]
    std::vector<std::string> keys;
    std::vector<uint32_t> width, height;  // [instance]
    std::vector<size_t> dist_at;          // [instance][slot]: offset into `dist`
    std::vector<int16_t> dist;            // shortest-path steps to the goal per cell, -1: none

    /// Steps from (row, col) to the goal of slot `a` of instance `i`; -1 for a hole, a cell off
    /// the grid or one that cannot reach the goal.
    int steps(size_t i, size_t a, int row, int col) const {
        if (row < 0 || col < 0 || row >= int(height[i]) || col >= int(width[i])) return -1;
        return dist[dist_at[i * k + a] + size_t(row) * width[i] + size_t(col)];
    }
};

/// Breadth-first distances to (gr, gc) over frozen cells of a row-major hole map.
void bfs_from(const std::vector<uint8_t> &holes, int w, int h, int gr, int gc, int16_t *out) {
    static const int dr[5] = {0, -1, 1, 0, 0}, dc[5] = {0, 0, 0, -1, 1};
    std::fill(out, out + w * h, int16_t(-1));
    std::vector<int> queue{gr * w + gc};
    out[gr * w + gc] = 0;
    for (size_t q = 0; q < queue.size(); q++) {
        int c = queue[q], r0 = c / w, c0 = c % w;
        for (int d = 1; d < 5; d++) {
            int r = r0 + dr[d], cc = c0 + dc[d];
            if (r < 0 || cc < 0 || r >= h || cc >= w || holes[size_t(r * w + cc)] || out[r * w + cc] >= 0) continue;
            out[r * w + cc] = int16_t(out[c] + 1);
            queue.push_back(r * w + cc);
        }
    }
}

InstanceTable read_instances(const floe::Pool &pool) {
    InstanceTable t;
    size_t n = pool.count();
    t.k = pool.max_agents();
    t.starts.assign(n * t.k * 2, -1);
    t.goals.assign(n * t.k * 2, -1);
    for (size_t i = 0; i < n; i++) {
        std::string json = pool.instance_json(i);
        floe_instance_info info = pool.info(i);
        const char *grid = std::strstr(json.c_str(), "\"grid\"");
        const char *p = std::strstr(json.c_str(), "\"agents\"");
        if (!grid || !p) throw std::runtime_error("instance JSON without grid or agents: " + json);
        // The key: the grid's text and the agents' text, up to the closing bracket of the list.
        const char *grid_end = std::strchr(grid, ']');
        const char *agents_end = std::strstr(p, "}]");
        if (!grid_end || !agents_end) throw std::runtime_error("unexpected instance JSON: " + json);
        t.keys.emplace_back(std::string(grid, grid_end) + std::string(p, agents_end));
        // The grid: one string per row, 'H' a hole.
        const int w = int(info.width), h = int(info.height);
        std::vector<uint8_t> holes(size_t(w * h), 0);
        const char *g = std::strchr(grid, '[');
        for (int r = 0; r < h; r++) {
            g = std::strchr(g + 1, '"');
            if (!g) throw std::runtime_error("cannot read the grid of " + json);
            for (int c = 0; c < w; c++) holes[size_t(r * w + c)] = g[1 + c] == 'H';
            g = std::strchr(g + 1, '"');
        }
        t.width.push_back(info.width);
        t.height.push_back(info.height);
        for (uint32_t a = 0; a < info.num_agents; a++) {
            long sr, sc, gr, gc;
            if (!read_pair(p, "\"start\"", sr, sc) || !read_pair(p, "\"goal\"", gr, gc))
                throw std::runtime_error("cannot read agent " + std::to_string(a) + " of " + json);
            size_t at = (i * t.k + a) * 2;
            t.starts[at] = int32_t(sr), t.starts[at + 1] = int32_t(sc);
            t.goals[at] = int32_t(gr), t.goals[at + 1] = int32_t(gc);
        }
        long lower = 0;  // the sum of single-agent distances bounds the optimal sum of costs below
        for (size_t a = 0; a < t.k; a++) {
            t.dist_at.push_back(t.dist.size());
            t.dist.resize(t.dist.size() + size_t(w * h), -1);
            if (a >= info.num_agents) continue;
            bfs_from(holes, w, h, t.goals[(i * t.k + a) * 2], t.goals[(i * t.k + a) * 2 + 1], &t.dist[t.dist_at.back()]);
            int d = t.steps(i, a, t.starts[(i * t.k + a) * 2], t.starts[(i * t.k + a) * 2 + 1]);
            if (d < 0) throw std::runtime_error("a start that cannot reach its goal in " + json);
            lower += d;
        }
        if (info.optimal_soc != FLOE_UNKNOWN && lower > long(info.optimal_soc))
            throw std::runtime_error("grid read wrongly (distances above the optimum) in " + json);
    }
    return t;
}

// ---- The batched environment as the learner sees it ---------------------------------------

constexpr int NUM_ACTIONS = 5;
constexpr int EXTRA = 6;      // dr/8, dc/8, sign(dr), sign(dc), on goal, step / episode limit
constexpr int EXTRA_BFS = 9;  // per move: blocked, change of the shortest-path distance; that distance/8
const int DR[NUM_ACTIONS] = {0, -1, 1, 0, 0};
const int DC[NUM_ACTIONS] = {0, 0, 0, -1, 1};

struct Batch {
    floe::Engine engine;
    floe::StepBuffers out;
    const InstanceTable &table;
    size_t B, K, stride, obs_bytes;
    bool bfs;
    float limit;
    std::vector<floe_env_record> envs;
    std::vector<floe_agent_record> agents;

    Batch(const floe::Pool &pool, const InstanceTable &t, const std::string &cfg, const Options &o)
        : engine(pool, cfg), out(engine.sizes()), table(t), B(engine.sizes().num_envs), K(engine.sizes().max_agents),
          stride(engine.sizes().obs_stride), obs_bytes(size_t(3 * (2 * o.radius + 1) * (2 * o.radius + 1))),
          bfs(o.bfs), limit(float(o.episode_limit)), envs(B), agents(B * K) {}

    /// Per slot: the observation, EXTRA features, EXTRA_BFS with --features local+bfs, and the
    /// slot's index one-hot (K), so that agents sharing the network can break ties by index.
    size_t features() const { return obs_bytes + EXTRA + (bfs ? EXTRA_BFS : 0) + K; }

    void refresh() { engine.state(envs, agents); }

    bool live(size_t e, size_t a) const { return a < envs[e].agents && agents[e * K + a].active; }

    /// Manhattan distance of slot (e, a) at (row, col) to its goal.
    int distance(size_t e, size_t a, int row, int col) const {
        const int32_t *g = &table.goals[(envs[e].instance * table.k + a) * 2];
        return std::abs(g[0] - row) + std::abs(g[1] - col);
    }

    /// Features of every slot (B·K rows) and the mask of live slots, from `out.obs` and the
    /// state (call refresh() first).
    void features(float *x, float *mask) const {
        const size_t F = features();
        for (size_t e = 0; e < B; e++) {
            for (size_t a = 0; a < K; a++) {
                size_t s = e * K + a;
                float *row = x + s * F;
                mask[s] = live(e, a) ? 1.f : 0.f;
                if (!mask[s]) {
                    std::fill(row, row + F, 0.f);
                    continue;
                }
                const uint8_t *o = &out.obs[s * stride];
                for (size_t i = 0; i < obs_bytes; i++) row[i] = float(o[i]);
                const int32_t *g = &table.goals[(envs[e].instance * table.k + a) * 2];
                int dr = g[0] - int(agents[s].row), dc = g[1] - int(agents[s].col);
                row[obs_bytes + 0] = float(dr) / 8.f;
                row[obs_bytes + 1] = float(dc) / 8.f;
                row[obs_bytes + 2] = float((dr > 0) - (dr < 0));
                row[obs_bytes + 3] = float((dc > 0) - (dc < 0));
                row[obs_bytes + 4] = (dr == 0 && dc == 0) ? 1.f : 0.f;
                row[obs_bytes + 5] = float(envs[e].step) / limit;
                std::fill(row + F - K, row + F, 0.f);
                row[F - K + a] = 1.f;
                if (bfs) {
                    float *f = row + obs_bytes + EXTRA;
                    const size_t i = envs[e].instance;
                    const int r0 = int(agents[s].row), c0 = int(agents[s].col);
                    const int here = table.steps(i, a, r0, c0);
                    for (int m = 1; m < NUM_ACTIONS; m++) {
                        int there = table.steps(i, a, r0 + DR[m], c0 + DC[m]);
                        f[2 * (m - 1)] = there < 0 ? 1.f : 0.f;
                        f[2 * (m - 1) + 1] = there < 0 || here < 0 ? 0.f : float(there - here);
                    }
                    f[8] = float(here) / 8.f;
                }
            }
        }
    }
};

std::string engine_config(size_t num_envs, const Options &o) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  R"({"num_envs": %zu, "mode": "strict", "episode_limit": %d, "obs_radius": %d,)"
                  R"( "rewards": {"reach_goal": 0.0, "step": -0.05, "blocked": -0.1, "off_grid": -1.0,)"
                  R"( "hole": -1.0, "conflict": -1.0}})",
                  num_envs, o.episode_limit, o.radius);
    return buf;
}

// ---- The policy ---------------------------------------------------------------------------

struct PolicyImpl : torch::nn::Module {
    torch::nn::Linear l1{nullptr}, l2{nullptr}, pi{nullptr}, v{nullptr};
    explicit PolicyImpl(int64_t in, int64_t hidden) {
        l1 = register_module("l1", torch::nn::Linear(in, hidden));
        l2 = register_module("l2", torch::nn::Linear(hidden, hidden));
        pi = register_module("pi", torch::nn::Linear(hidden, NUM_ACTIONS));
        v = register_module("v", torch::nn::Linear(hidden, 1));
        torch::NoGradGuard ng;
        pi->weight.mul_(0.01);
        pi->bias.zero_();
    }
    /// Logits (N×5) and values (N).
    std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor &x) {
        auto h = torch::tanh(l2(torch::tanh(l1(x))));
        return {pi(h), v(h).squeeze(-1)};
    }
};
TORCH_MODULE(Policy);

// ---- Evaluation ---------------------------------------------------------------------------

enum class Play { Greedy, Sampled, Random };

struct EvalResult {
    double success = 0, failure = 0, truncated = 0;  // shares of the episodes
    int episodes = 0;
};

/// Every environment plays its first `per_env` episodes; the share that ends in success.
EvalResult evaluate(const floe::Pool &pool, const InstanceTable &table, const Options &o, Policy &policy, Play play,
                    uint64_t seed) {
    int per_env = (o.episodes + o.eval_envs - 1) / o.eval_envs;
    Batch env(pool, table, engine_config(size_t(o.eval_envs), o), o);
    env.engine.reset(seed, env.out);
    const size_t B = env.B, K = env.K, F = env.features();
    std::vector<float> x(B * K * F), mask(B * K);
    std::vector<uint8_t> actions(B * K, 0);
    std::vector<int> done(B, 0);
    std::mt19937_64 rng(seed * 7919 + 13);
    torch::NoGradGuard ng;
    int successes = 0, failures = 0, truncations = 0, ended = 0, remaining = int(B);
    while (remaining > 0) {
        env.refresh();
        if (play == Play::Random) {
            for (auto &a : actions) a = uint8_t(rng() % NUM_ACTIONS);
        } else {
            env.features(x.data(), mask.data());
            auto logits = policy->forward(torch::from_blob(x.data(), {int64_t(B * K), int64_t(F)})).first;
            auto act = play == Play::Greedy ? logits.argmax(-1) : torch::softmax(logits, -1).multinomial(1).squeeze(-1);
            act = act.to(torch::kUInt8).contiguous();
            std::memcpy(actions.data(), act.data_ptr<uint8_t>(), B * K);
        }
        env.engine.step(actions, env.out);
        for (size_t e = 0; e < B; e++) {
            if (!(env.out.terminated[e] || env.out.truncated[e]) || done[e] >= per_env) continue;
            uint32_t outcome = env.out.info[e].outcome;
            successes += outcome == FLOE_OUTCOME_SUCCESS;
            failures += outcome == FLOE_OUTCOME_FAILURE;
            truncations += outcome == FLOE_OUTCOME_TRUNCATED;
            ended++;
            if (++done[e] == per_env) remaining--;
        }
    }
    return {double(successes) / ended, double(failures) / ended, double(truncations) / ended, ended};
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse_args(argc, argv);
    try {
        if (floe_abi_version() != FLOE_ABI_VERSION) throw std::runtime_error("libfloe ABI mismatch");
        torch::set_num_threads(o.threads);
        torch::manual_seed(o.seed);
        const double t0 = now_s();

        // Pools: the same setting, different seeds.
        char setting[256];
        std::snprintf(setting, sizeof setting, R"({"size": %d, "agents": %d, "hole_ratio": %g, "wait_ratio": 0.5})",
                      o.size, o.agents, o.holes);
        auto train_pool = floe::Pool::generate(setting, size_t(o.train_pool), o.seed);
        auto eval_pool = floe::Pool::generate(setting, size_t(o.eval_pool), o.seed + 1000003);
        auto train_table = read_instances(train_pool);
        auto eval_table = read_instances(eval_pool);
        std::set<std::string> train_keys(train_table.keys.begin(), train_table.keys.end());
        size_t overlap = 0;
        for (const auto &k : eval_table.keys) overlap += train_keys.count(k);
        std::fprintf(stderr, "train_policy: pools of %zu and %zu instances (%s) in %.1f s; %zu held-out instances also in training\n",
                     train_pool.count(), eval_pool.count(), setting, now_s() - t0, overlap);

        // Training.
        Batch env(train_pool, train_table, engine_config(size_t(o.envs), o), o);
        env.engine.reset(o.seed, env.out);
        env.refresh();
        // The JSON's starts must be where the engine put the agents (rows and columns agree).
        for (size_t e = 0; e < env.B; e++)
            for (size_t a = 0; a < env.envs[e].agents; a++) {
                const int32_t *s = &train_table.starts[(env.envs[e].instance * train_table.k + a) * 2];
                const auto &r = env.agents[e * env.K + a];
                if (int32_t(r.row) != s[0] || int32_t(r.col) != s[1])
                    throw std::runtime_error("instance JSON starts disagree with floe_engine_state");
            }
        const size_t B = env.B, K = env.K, F = env.features(), N = B * K, T = size_t(o.rollout);
        Policy policy(int64_t(F), o.hidden);
        torch::optim::Adam opt(policy->parameters(), torch::optim::AdamOptions(o.lr));
        const float gamma = 0.97f, lambda = 0.95f, clip = 0.2f, ent_coef = float(o.entropy), vf_coef = 0.5f;
        const int epochs = o.epochs, minibatches = 4;

        std::vector<float> X(T * N * F), M(T * N), R(T * N), D(T * N), V((T + 1) * N), LP(T * N);
        std::vector<int64_t> A(T * N);
        std::vector<uint8_t> actions(N, 0);
        std::mt19937_64 rng(o.seed);
        double recent_success = 0;
        int recent_ended = 0, recent_won = 0, update = 0;
        const double train_start = now_s();
        for (; update < o.updates && now_s() - train_start < o.max_seconds; update++) {
            // Rollout.
            {
                torch::NoGradGuard ng;
                for (size_t t = 0; t < T; t++) {
                    float *x = &X[t * N * F], *m = &M[t * N];
                    env.features(x, m);
                    auto [logits, value] = policy->forward(torch::from_blob(x, {int64_t(N), int64_t(F)}));
                    auto probs = torch::softmax(logits, -1);
                    auto act = probs.multinomial(1).squeeze(-1);
                    auto logp = torch::log_softmax(logits, -1).gather(-1, act.unsqueeze(-1)).squeeze(-1);
                    auto act_c = act.contiguous();
                    const int64_t *ap = act_c.data_ptr<int64_t>();
                    std::memcpy(&A[t * N], ap, N * sizeof(int64_t));
                    std::memcpy(&LP[t * N], logp.contiguous().data_ptr<float>(), N * sizeof(float));
                    std::memcpy(&V[t * N], value.contiguous().data_ptr<float>(), N * sizeof(float));
                    for (size_t s = 0; s < N; s++) actions[s] = uint8_t(ap[s]);
                    // Distances before the step (the state is current: refreshed after the last step).
                    std::vector<int> before(N, 0);
                    for (size_t e = 0; e < B; e++)
                        for (size_t a = 0; a < env.envs[e].agents; a++)
                            before[e * K + a] = env.distance(e, a, int(env.agents[e * K + a].row), int(env.agents[e * K + a].col));
                    std::vector<floe_env_record> envs_before = env.envs;
                    std::vector<floe_agent_record> agents_before = env.agents;
                    env.engine.step(actions, env.out);
                    for (size_t e = 0; e < B; e++) {
                        bool ended = env.out.terminated[e] || env.out.truncated[e];
                        bool won = ended && env.out.info[e].outcome == FLOE_OUTCOME_SUCCESS;
                        if (ended) recent_ended++, recent_won += won;
                        for (size_t a = 0; a < K; a++) {
                            size_t s = e * K + a;
                            float r = env.out.rewards[s];
                            if (m[s] > 0 && (env.out.events[s] & FLOE_EVENT_MOVED)) {
                                int row = int(agents_before[s].row) + DR[actions[s]];
                                int col = int(agents_before[s].col) + DC[actions[s]];
                                const int32_t *g = &train_table.goals[(envs_before[e].instance * K + a) * 2];
                                int after = std::abs(g[0] - row) + std::abs(g[1] - col);
                                r += 0.1f * float(before[s] - after);
                            }
                            if (won) r += 1.f;
                            R[t * N + s] = r;
                            D[t * N + s] = ended ? 1.f : 0.f;
                        }
                    }
                    env.refresh();
                }
                std::vector<float> xl(N * F), ml(N);
                env.features(xl.data(), ml.data());
                auto vl = policy->forward(torch::from_blob(xl.data(), {int64_t(N), int64_t(F)})).second.contiguous();
                std::memcpy(&V[T * N], vl.data_ptr<float>(), N * sizeof(float));
            }
            // GAE(λ) per slot; the return ends where the episode ended.
            std::vector<float> adv(T * N), ret(T * N);
            for (size_t s = 0; s < N; s++) {
                float g = 0;
                for (size_t t = T; t-- > 0;) {
                    size_t i = t * N + s;
                    float nonterm = 1.f - D[i];
                    float delta = R[i] + gamma * V[i + N] * nonterm - V[i];
                    g = delta + gamma * lambda * nonterm * g;
                    adv[i] = g;
                    ret[i] = g + V[i];
                }
            }
            // The live samples only.
            std::vector<int64_t> idx;
            idx.reserve(T * N);
            for (size_t i = 0; i < T * N; i++)
                if (M[i] > 0) idx.push_back(int64_t(i));
            auto all_x = torch::from_blob(X.data(), {int64_t(T * N), int64_t(F)});
            auto all_a = torch::from_blob(A.data(), {int64_t(T * N)}, torch::kInt64);
            auto all_lp = torch::from_blob(LP.data(), {int64_t(T * N)});
            auto all_adv = torch::from_blob(adv.data(), {int64_t(T * N)});
            auto all_ret = torch::from_blob(ret.data(), {int64_t(T * N)});
            auto live = torch::from_blob(idx.data(), {int64_t(idx.size())}, torch::kInt64).clone();
            auto adv_live = all_adv.index_select(0, live);
            adv_live = (adv_live - adv_live.mean()) / (adv_live.std() + 1e-8);
            auto x_live = all_x.index_select(0, live), a_live = all_a.index_select(0, live);
            auto lp_live = all_lp.index_select(0, live), ret_live = all_ret.index_select(0, live);
            const int64_t n = live.size(0), mb = (n + minibatches - 1) / minibatches;
            for (int ep = 0; ep < epochs; ep++) {
                auto perm = torch::randperm(n, torch::kInt64);
                for (int64_t b0 = 0; b0 < n; b0 += mb) {
                    auto j = perm.slice(0, b0, std::min(n, b0 + mb));
                    auto [logits, value] = policy->forward(x_live.index_select(0, j));
                    auto logp_all = torch::log_softmax(logits, -1);
                    auto logp = logp_all.gather(-1, a_live.index_select(0, j).unsqueeze(-1)).squeeze(-1);
                    auto ratio = torch::exp(logp - lp_live.index_select(0, j));
                    auto adv_j = adv_live.index_select(0, j);
                    auto pg = -torch::min(ratio * adv_j, torch::clamp(ratio, 1 - clip, 1 + clip) * adv_j).mean();
                    auto vloss = (value - ret_live.index_select(0, j)).pow(2).mean();
                    auto entropy = -(logp_all.exp() * logp_all).sum(-1).mean();
                    auto loss = pg + vf_coef * vloss - ent_coef * entropy;
                    opt.zero_grad();
                    loss.backward();
                    torch::nn::utils::clip_grad_norm_(policy->parameters(), 0.5);
                    opt.step();
                }
            }
            if ((update + 1) % 10 == 0) {
                recent_success = recent_ended ? double(recent_won) / recent_ended : 0;
                std::fprintf(stderr, "train_policy: update %d, %.0f s, %zu samples, training success %.3f over %d episodes\n",
                             update + 1, now_s() - train_start, size_t(update + 1) * T * N, recent_success, recent_ended);
                recent_ended = recent_won = 0;
            }
        }
        const double train_seconds = now_s() - train_start;
        policy->eval();

        // Held-out evaluation.
        const uint64_t eval_seed = o.seed + 77;
        auto random = evaluate(eval_pool, eval_table, o, policy, Play::Random, eval_seed);
        auto greedy = evaluate(eval_pool, eval_table, o, policy, Play::Greedy, eval_seed);
        auto sampled = evaluate(eval_pool, eval_table, o, policy, Play::Sampled, eval_seed);
        auto train_greedy = evaluate(train_pool, train_table, o, policy, Play::Greedy, eval_seed);
        bool pass = greedy.success >= random.success + o.min_gain && greedy.success >= o.min_ratio * random.success;
        std::printf("{\"random_success\": %.4f, \"policy_success\": %.4f, \"policy_sampled_success\": %.4f, "
                    "\"train_pool_policy_success\": %.4f, \"episodes\": %d, \"train_seconds\": %.1f, "
                    "\"policy_failure\": %.4f, \"policy_truncated\": %.4f, \"random_failure\": %.4f, "
                    "\"updates\": %d, \"train_samples\": %zu, \"heldout_in_train\": %zu, \"setting\": %s, "
                    "\"mode\": \"strict\", \"min_gain\": %.2f, \"min_ratio\": %.1f, \"pass\": %s}\n",
                    random.success, greedy.success, sampled.success, train_greedy.success, greedy.episodes,
                    train_seconds, greedy.failure, greedy.truncated, random.failure, update,
                    size_t(update) * T * N, overlap, setting, o.min_gain, o.min_ratio, pass ? "true" : "false");
        std::fflush(stdout);
        if (!pass) {
            std::fprintf(stderr, "train_policy: FAILED: greedy policy %.3f vs random %.3f (needs +%.2f and %.1fx)\n",
                         greedy.success, random.success, o.min_gain, o.min_ratio);
            return 1;
        }
        return 0;
    } catch (const floe::Error &e) {
        std::fprintf(stderr, "train_policy: floe error %d: %s\n", e.status(), e.what());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "train_policy: %s\n", e.what());
    }
    return 2;
}
