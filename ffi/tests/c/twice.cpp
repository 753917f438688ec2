// Both headers, each included twice, in C++: the include guards hold, the shared types are
// defined once, and everything is declared extern "C".
#include "floe.h"
#include "floe_plugin.h"
#include "floe.h"
#include "floe_plugin.h"
#include "floe.hpp"
#include "floe.hpp"

#include <cstdio>

int main() {
    static_assert(sizeof(floe_verdict_record) == 28, "the record shared by both headers");
    std::printf("twice: libfloe %s, ABI %u\n", floe_version(), floe_abi_version());
    // A plan in each form through the wrapper, and why one does not read.
    auto pool = floe::Pool::from_json(
        "{\"grid\": [\"FFF\"], \"agents\": [{\"start\": [0, 0], \"goal\": [0, 2]}]}", true);
    bool ok = pool.verify_plan(0, "[\"RR\"]").optimal == 1 && floe::verdict_detail().empty();
    ok = ok && pool.verify_plan(0, "Agent 0: RIGHT RIGHT", FLOE_PLAN_TEXT).optimal == 1;
    ok = ok && pool.verify_plan(0, "[\"RX\"]").kind == FLOE_FAILURE_PARSE_ERROR &&
         floe::verdict_detail().find("unknown move letter 'X'") != std::string::npos;
    return floe_abi_version() == FLOE_ABI_VERSION && ok ? 0 : 1;
}
