/* A C plugin built for an ABI version this host does not speak (999): the host must refuse it
 * after reading abi_version, without touching the rest. */
#include <stdint.h>

#include "floe_plugin.h"

static struct {
    uint32_t abi_version;
    uint32_t something_else;
} future = {999u, 12345u};

floe_status floe_plugin_entry_v1(const char *params_json, const floe_plugin_v1 **out_plugin,
                                 const char **out_error) {
    (void)params_json;
    (void)out_error;
    *out_plugin = (const floe_plugin_v1 *)(const void *)&future;
    return FLOE_STATUS_OK;
}
