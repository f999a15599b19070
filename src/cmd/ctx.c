/*
 * ctx: what every command shares: the lazily opened GPU backend.
 */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

int
ctx_backend(struct ctx *c, struct gpu_backend **out)
{
	if (!c->backend && gpu_open(c->sim, c->sim_write, &c->backend) < 0)
		return -1;
	*out = c->backend;
	return 0;
}

int
ctx_simulated(const struct ctx *c)
{
	const char *s = getenv("GPUPACK_SIM"), *w = getenv("GPUPACK_SIM_WRITE");

	return (c->sim && *c->sim) || (s && *s) || (w && *w);
}

void
ctx_close(struct ctx *c)
{
	if (c->backend)
		gpu_close(c->backend);
	c->backend = NULL;
}

const char *
ctx_self(void)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return "gpupack";
	path[n] = '\0';
	return path;
}
