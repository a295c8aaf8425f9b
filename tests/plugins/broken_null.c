/* An entry point that returns NULL. */
#include "polis/plugin.h"

POLIS_EXPORT const polis_plugin_desc *polis_plugin_entry(void);
POLIS_EXPORT const polis_plugin_desc *polis_plugin_entry(void) { return NULL; }
