/*
 * A library whose constructor calls cuDNN: in drop-in mode it runs before
 * the spy's own constructor has had a say, so the spy must initialise
 * lazily, from whichever call comes first.
 */
#include <stdio.h>

#include "g_prototypes.h"

__attribute__((visibility("default"))) size_t early_version;

__attribute__((constructor)) static void
early(void)
{
	early_version = cudnnGetVersion();
}
