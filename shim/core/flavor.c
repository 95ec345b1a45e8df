/* Compiled once per library: which one this is. */
#include "core.h"

#ifndef SPY_FLAVOR_NAME
#error "SPY_FLAVOR_NAME and SPY_FLAVOR_MAJOR come from the build"
#endif

const struct spy_flavor spy_flavor = { SPY_FLAVOR_NAME, SPY_FLAVOR_MAJOR };
