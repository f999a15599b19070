/* sim: placeholder until the simulation backend lands. */
#include "gpu/backend.h"
#include "util/err.h"

#include <stddef.h>

int
gpu_sim_open(const char *file, struct gpu_backend **out)
{
	*out = NULL;
	return err_set(EXIT_USAGE, "%s: simulation not built yet", file);
}
