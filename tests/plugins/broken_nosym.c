/* A shared object without the entry symbol. */
#include "polis/plugin.h"

POLIS_EXPORT int not_a_plugin(void);
POLIS_EXPORT int not_a_plugin(void) { return 42; }
