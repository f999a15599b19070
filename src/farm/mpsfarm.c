/*
 * mpsfarm: MPS daemons for the length of one run. A daemon that was already
 * running for a device (`gpupack mps start`) is used and left alone: its
 * limits are the user's. Ours are started without default limits (each task
 * gets its own through its environment) and stopped at the end.
 */
#include "farm/mpsfarm.h"
#include "farm/cost.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/str.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
farm_mps_available(void)
{
	char path[PATH_MAX];
	int ok = mps_control_path(path, sizeof path) == 0;

	err_clear();
	return ok;
}

static int
setup_one(struct group *g)
{
	struct mps_limits lim = {0, 0, MPS_PRIO_UNSET};
	struct mps_daemon *d = xcalloc(1, sizeof *d);
	int started = 0;

	g->mps = d;
	if (mps_lookup(g->t.uuid, d) == 0 && d->alive)
		return 0;
	err_clear();
	if (mps_start(&g->t, g->gpu_index, &lim, 0, d, &started) < 0)
		return err_prefix("MPS daemon for %s", g->t.uuid);
	g->mps_ours = started;
	return 0;
}

int
farm_mps_setup(struct group *g, int ng)
{
	for (int i = 0; i < ng; i++) {
		if (g[i].cap == 0)
			continue;
		if (setup_one(&g[i]) < 0) {
			char saved[512];
			int code = err_code();

			str_copy(saved, err_msg(), sizeof saved);
			farm_mps_teardown(g, ng);
			return err_set(code, "%s", saved);
		}
	}
	return 0;
}

void
farm_mps_teardown(struct group *g, int ng)
{
	for (int i = 0; i < ng; i++) {
		if (g[i].mps && g[i].mps_ours && mps_stop(g[i].mps, 5, 1) < 0) {
			warnx_("%s", err_msg());
			err_clear();
		}
		free(g[i].mps);
		g[i].mps = NULL;
		g[i].mps_ours = 0;
	}
}

int
farm_mps_env(const struct group *g, double sm_pct, uint64_t mem, char **env)
{
	/* SIZE is what the task may allocate: mps_client_env adds its context's share */
	return mps_client_env(g->mps, sm_pct, mem, env);
}

long
farm_mps_log_offset(const struct group *g)
{
	return mps_log_offset(g->mps);
}

int
farm_mps_fault(const struct group *g, long off)
{
	int r = mps_fault_since(g->mps, off);

	if (r < 0)
		err_clear();
	return r == 1;
}

void
farm_mps_terminate(const struct group *g, pid_t pgid)
{
	struct mps_server *s = NULL;
	int ns = 0;

	if (mps_servers(g->mps, &s, &ns) < 0) {
		err_clear();
		return;
	}
	for (int i = 0; i < ns; i++)
		for (int k = 0; k < s[i].nclients; k++)
			if (getpgid(s[i].clients[k].pid) == pgid &&
			    mps_terminate_client(g->mps, s[i].pid, s[i].clients[k].pid) < 0)
				err_clear();
	mps_servers_free(s, ns);
}

static int
in_fault(const struct group *g)
{
	struct mps_server *s = NULL;
	int ns = 0, fault = 0;

	if (mps_servers(g->mps, &s, &ns) < 0) {
		err_clear();
		return 0;
	}
	for (int i = 0; i < ns; i++)
		if (s[i].state == MPS_SERVER_FAULT)
			fault = 1;
	mps_servers_free(s, ns);
	return fault;
}

/* FARM_FAULT_RESTART, or $GPUPACK_MPS_FAULT_RESTART seconds (tests: a double that never recovers) */
static double
restart_after(void)
{
	const char *v = getenv("GPUPACK_MPS_FAULT_RESTART");
	double s;

	if (v && parse_double(v, &s) == 0 && s >= 0)
		return s;
	err_clear();
	return FARM_FAULT_RESTART;
}

static void
restart(struct group *g)
{
	struct mps_limits lim = {0, 0, MPS_PRIO_UNSET};
	int started = 0;

	warnx_("MPS server of %s stayed in FAULT for %.0f s: restarting its daemon", g->t.uuid,
	    restart_after());
	if (mps_stop(g->mps, 1, 1) < 0 || mps_start(&g->t, g->gpu_index, &lim, 1, g->mps, &started) < 0) {
		warnx_("%s", err_msg());
		err_clear();
	}
}

int
farm_mps_blocked(struct group *g, double now)
{
	if (!g->mps || g->fault_at == 0)
		return 0;
	if (!in_fault(g)) {
		g->fault_at = 0;
		return 0;
	}
	/* a daemon that is not ours is the user's to restart: stop waiting for it */
	if (g->running == 0 && now - g->fault_at > restart_after()) {
		if (g->mps_ours)
			restart(g);
		g->fault_at = 0;
		return 0;
	}
	return 1;
}
