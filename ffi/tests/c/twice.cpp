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
    return floe_abi_version() == FLOE_ABI_VERSION ? 0 : 1;
}
