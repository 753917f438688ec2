// floe.hpp: a header-only C++17 wrapper of floe.h. RAII handles (move-only), spans for buffers
// (std::span under C++20, floe::span otherwise), and exceptions (floe::Error) that carry the
// status and the library's message. Nothing here adds behaviour: every call is one C call.
#ifndef FLOE_HPP
#define FLOE_HPP

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "floe.h"

#if defined(__cpp_lib_span) || (__cplusplus >= 202002L && __has_include(<span>))
#include <span>
#endif

namespace floe {

#if defined(__cpp_lib_span)
template <typename T>
using span = std::span<T>;
#else
/// A pointer and a length (std::span's subset that floe needs, for C++17).
template <typename T>
class span {
public:
    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <typename C>
    constexpr span(C &c) noexcept : data_(c.data()), size_(c.size()) {}
    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};
#endif

/// A failed call: the status (FLOE_STATUS_*) and the message of floe_last_error().
class Error : public std::runtime_error {
public:
    Error(floe_status status, const char *message) : std::runtime_error(message), status_(status) {}
    floe_status status() const noexcept { return status_; }

private:
    floe_status status_;
};

/// Throws floe::Error unless `status` is FLOE_STATUS_OK.
inline void check(floe_status status) {
    if (status != FLOE_STATUS_OK) throw Error(status, floe_last_error());
}

namespace detail {
/// Takes a string the library handed out.
inline std::string take(char *s) {
    std::string out = s ? s : "";
    floe_string_free(s);
    return out;
}
}  // namespace detail

/// floe_verdict_detail: why this thread's last verify_plan verdict is what it is ("" for a valid
/// plan).
inline std::string verdict_detail() {
    char *s = nullptr;
    check(floe_verdict_detail(&s));
    return detail::take(s);
}

namespace detail {

template <typename T, floe_status (*Free)(T *)>
class Handle {
public:
    Handle() noexcept = default;
    explicit Handle(T *raw) noexcept : raw_(raw) {}
    Handle(Handle &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)) {}
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) {
            reset();
            raw_ = std::exchange(o.raw_, nullptr);
        }
        return *this;
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    ~Handle() { reset(); }
    T *get() const noexcept { return raw_; }

private:
    void reset() noexcept {
        if (raw_) Free(raw_);
        raw_ = nullptr;
    }
    T *raw_ = nullptr;
};
}  // namespace detail

/// Owned output buffers of a step, sized from an engine.
struct StepBuffers {
    std::vector<uint8_t> obs, final_obs;
    std::vector<float> rewards;
    std::vector<uint32_t> events;
    std::vector<uint8_t> terminated, truncated;
    std::vector<floe_env_info> info;

    explicit StepBuffers(const floe_buffer_sizes &s)
        : obs(s.obs), final_obs(s.obs), rewards(s.agents), events(s.agents), terminated(s.envs),
          truncated(s.envs), info(s.envs) {}

    /// The C view of these buffers, for one call.
    floe_step_buffers view() {
        return floe_step_buffers{obs.data(),        obs.size(),        final_obs.data(), final_obs.size(),
                                 rewards.data(),    rewards.size(),    events.data(),    events.size(),
                                 terminated.data(), terminated.size(), truncated.data(), truncated.size(),
                                 info.data(),       info.size()};
    }
};

/// floe_pool.
class Pool {
public:
    /// floe_pool_generate: a round configuration or one setting (JSON), `samples` instances.
    static Pool generate(const std::string &config_json, std::size_t samples, uint64_t seed) {
        floe_pool *p = nullptr;
        check(floe_pool_generate(config_json.c_str(), samples, seed, &p));
        return Pool(p);
    }
    /// floe_pool_from_json.
    static Pool from_json(const std::string &text, bool solve_missing = false) {
        floe_pool *p = nullptr;
        check(floe_pool_from_json(text.c_str(), solve_missing, &p));
        return Pool(p);
    }
    /// floe_pool_from_file.
    static Pool from_file(const std::string &path, bool solve_missing = false) {
        floe_pool *p = nullptr;
        check(floe_pool_from_file(path.c_str(), solve_missing, &p));
        return Pool(p);
    }
    /// floe_pool_from_arrays.
    static Pool from_arrays(span<const floe_instance_view> instances, bool solve_missing = false) {
        floe_pool *p = nullptr;
        check(floe_pool_from_arrays(instances.data(), instances.size(), solve_missing, &p));
        return Pool(p);
    }

    std::size_t count() const {
        std::size_t n = 0;
        check(floe_pool_count(h_.get(), &n));
        return n;
    }
    std::size_t max_agents() const {
        std::size_t n = 0;
        check(floe_pool_max_agents(h_.get(), &n));
        return n;
    }
    uint32_t max_side() const {
        uint32_t n = 0;
        check(floe_pool_max_side(h_.get(), &n));
        return n;
    }
    floe_instance_info info(std::size_t index) const {
        floe_instance_info i{};
        check(floe_pool_instance_info(h_.get(), index, &i));
        return i;
    }
    std::string instance_json(std::size_t index) const {
        char *s = nullptr;
        check(floe_pool_instance_json(h_.get(), index, &s));
        return detail::take(s);
    }

    /// floe_verify_moves: `moves` holds num_plans · max_agents · max_len codes.
    std::vector<floe_verdict_record> verify_moves(span<const uint32_t> instances, span<const uint32_t> agents,
                                                  span<const uint8_t> moves, std::size_t max_agents,
                                                  std::size_t max_len) const {
        std::vector<floe_verdict_record> out(instances.size());
        check(floe_verify_moves(h_.get(), instances.data(), agents.data(), instances.size(), moves.data(), moves.size(),
                                max_agents, max_len, out.data(), out.size()));
        return out;
    }
    /// floe_verify_answers.
    std::vector<floe_verdict_record> verify_answers(span<const uint32_t> instances,
                                                    const std::vector<std::string> &answers) const {
        std::vector<const char *> texts;
        for (const auto &a : answers) texts.push_back(a.c_str());
        std::vector<floe_verdict_record> out(answers.size());
        check(floe_verify_answers(h_.get(), instances.data(), texts.data(), texts.size(), out.data(), out.size()));
        return out;
    }
    /// floe_verify_plan (FLOE_PLAN_JSON, FLOE_PLAN_TEXT or FLOE_PLAN_AUTO); why the verdict is
    /// what it is: floe::verdict_detail().
    floe_verdict verify_plan(std::size_t instance, const std::string &plan, uint32_t format = FLOE_PLAN_AUTO) const {
        floe_verdict v{};
        check(floe_verify_plan(h_.get(), instance, plan.c_str(), format, &v));
        return v;
    }

    floe_pool *get() const noexcept { return h_.get(); }

private:
    explicit Pool(floe_pool *p) : h_(p) {}
    detail::Handle<floe_pool, floe_pool_free> h_;
};

/// floe_engine.
class Engine {
public:
    /// floe_engine_new; `config_json` empty for the defaults.
    Engine(const Pool &pool, const std::string &config_json = "") {
        floe_engine *e = nullptr;
        check(floe_engine_new(pool.get(), config_json.empty() ? nullptr : config_json.c_str(), &e));
        h_ = detail::Handle<floe_engine, floe_engine_free>(e);
        check(floe_engine_sizes(e, &sizes_));
    }

    const floe_buffer_sizes &sizes() const noexcept { return sizes_; }
    std::string backend() const {
        char *s = nullptr;
        check(floe_engine_backend(h_.get(), &s));
        return detail::take(s);
    }
    void reset(uint64_t seed, const floe_step_buffers &out) { check(floe_engine_reset(h_.get(), seed, &out)); }
    void reset(uint64_t seed, StepBuffers &out) {
        auto v = out.view();
        reset(seed, v);
    }
    void reset_to(std::size_t env, std::size_t instance, StepBuffers &out) {
        auto v = out.view();
        check(floe_engine_reset_to(h_.get(), env, instance, &v));
    }
    void step(span<const uint8_t> actions, const floe_step_buffers &out) {
        check(floe_engine_step(h_.get(), actions.data(), actions.size(), &out));
    }
    void step(span<const uint8_t> actions, StepBuffers &out) {
        auto v = out.view();
        step(actions, v);
    }
    void state(span<floe_env_record> envs, span<floe_agent_record> agents) const {
        check(floe_engine_state(h_.get(), envs.data(), envs.size(), agents.data(), agents.size()));
    }
    void global_state(span<uint8_t> out) const {
        check(floe_engine_global_state(h_.get(), out.data(), out.size()));
    }

private:
    detail::Handle<floe_engine, floe_engine_free> h_;
    floe_buffer_sizes sizes_{};
};

/// floe_plugin.
class Plugin {
public:
    /// floe_plugin_new: `library` empty for a built-in; `params_json` empty for the defaults.
    Plugin(uint32_t kind, const std::string &name, const std::string &params_json = "",
           const std::string &library = "") {
        floe_plugin *p = nullptr;
        check(floe_plugin_new(library.empty() ? nullptr : library.c_str(), kind, name.c_str(),
                              params_json.empty() ? nullptr : params_json.c_str(), &p));
        h_ = detail::Handle<floe_plugin, floe_plugin_free>(p);
    }
    std::vector<float> rewards(span<const floe_verdict_record> records) {
        std::vector<float> out(records.size());
        check(floe_plugin_rewards(h_.get(), records.data(), records.size(), out.data(), out.size()));
        return out;
    }
    std::vector<float> step_rewards(span<const floe_step_outcome> steps) {
        std::vector<float> out(steps.size());
        check(floe_plugin_step_rewards(h_.get(), steps.data(), steps.size(), out.data(), out.size()));
        return out;
    }
    std::string next_config(const std::string &history_json) {
        char *s = nullptr;
        check(floe_plugin_next_config(h_.get(), history_json.c_str(), &s));
        return detail::take(s);
    }
    std::vector<uint32_t> sample_replay(span<const floe_replay_record> records, const floe_replay_request &request) {
        std::vector<uint32_t> out(request.count);
        std::size_t n = 0;
        check(floe_plugin_sample_replay(h_.get(), records.data(), records.size(), &request, out.data(), out.size(),
                                        &n));
        out.resize(n);
        return out;
    }
    // `limits`: the design limits the engineer is given (nullptr: floe's defaults).
    std::string design(const std::string &context, const floe_design_limits *limits = nullptr) {
        char *s = nullptr;
        check(floe_plugin_design(h_.get(), context.c_str(), limits, &s));
        return detail::take(s);
    }

private:
    detail::Handle<floe_plugin, floe_plugin_free> h_;
};

/// floe_solve: an optimal plan as JSON, with its sum of costs and makespan.
struct Solution {
    std::string plan_json;
    uint32_t soc = 0, makespan = 0;
};
inline Solution solve(const std::string &instance_json, uint64_t time_limit_ms = 0) {
    Solution s;
    char *plan = nullptr;
    check(floe_solve(instance_json.c_str(), time_limit_ms, &plan, &s.soc, &s.makespan));
    s.plan_json = detail::take(plan);
    return s;
}

/// floe_render_prompt.
inline std::string render_prompt(const std::string &instance_json) {
    char *s = nullptr;
    check(floe_render_prompt(instance_json.c_str(), &s));
    return detail::take(s);
}

/// floe_parse_answer.
inline std::string parse_answer(const std::string &instance_json, const std::string &answer) {
    char *s = nullptr;
    check(floe_parse_answer(instance_json.c_str(), answer.c_str(), &s));
    return detail::take(s);
}

}  // namespace floe

#endif  // FLOE_HPP
