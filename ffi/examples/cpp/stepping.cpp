// The C API through floe.hpp: a pool, a CPU engine stepped with random actions, a plugin's
// rewards for verified answers; errors arrive as floe::Error with the status and the message.
#include <cstdio>
#include <random>
#include <vector>

#include "floe.hpp"

int main() {
    try {
        auto pool = floe::Pool::generate(R"({"size": 6, "agents": 3, "hole_ratio": 0.2, "wait_ratio": 0.5})", 32, 1);
        floe::Engine engine(pool, R"({"num_envs": 64, "mode": "soft"})");
        floe::StepBuffers out(engine.sizes());
        engine.reset(7, out);
        std::mt19937 rng(1);
        std::vector<uint8_t> actions(engine.sizes().actions);
        int episodes = 0;
        for (int t = 0; t < 200; t++) {
            for (auto &a : actions) a = static_cast<uint8_t>(rng() % 5);
            engine.step(actions, out);
            for (auto done : out.terminated) episodes += done;
            for (auto done : out.truncated) episodes += done;
        }
        std::printf("stepping.cpp: %d episodes ended in 200 steps of %zu environments (%s)\n", episodes,
                    engine.sizes().num_envs, engine.backend().c_str());

        auto solution = floe::solve(pool.instance_json(0));
        std::vector<uint32_t> which{0, 0};
        auto records = pool.verify_answers(which, {"Agent 0: UP\nAgent 1: WAIT\nAgent 2: WAIT", "no idea"});
        floe::Plugin tiered(FLOE_PLUGIN_KIND_REWARD, "tiered");
        auto rewards = tiered.rewards(records);
        std::printf("stepping.cpp: optimum %u; rewards %.3f (a wrong plan) and %.3f (no plan)\n", solution.soc,
                    rewards[0], rewards[1]);

        floe::Engine bad(pool, R"({"num_envs": 0})");  // throws
    } catch (const floe::Error &e) {
        std::printf("stepping.cpp: floe::Error %d: %s\n", e.status(), e.what());
        return e.status() == FLOE_STATUS_CONFIG ? 0 : 1;
    }
    return 1;
}
