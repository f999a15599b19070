/*
 * mpsfarm: MPS daemons for the length of one run. A daemon that was already
 * running for a device (`gpupack mps start`) is used and left alone: its
 * limits are the user's. Ours are started without default limits (each task
 * gets its own through its environment), recorded as this run's (so that a
 * killed run's daemon is ended, not adopted, by the next start). A run's
 * daemon is shared with other runs of the user on the device (two jobs or
 * steps on a node): each says it uses it (mps_use), and the last one to end,
 * whichever started it, stops it (mps_used_by_others); a killed run's
 * watchdog leaves it to the others. farm_mps_probe and farm_mps_restart are
 * what the farm's health checks (health.c) use.
 */
#include "farm/mpsfarm.h"
#include "farm/cost.h"
#include "farm/trace.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/knob.h"
#include "util/proc.h"
#include "util/str.h"

#include <limits.h>
#include <stdio.h>
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
	int started = 0, rc;

	g->mps = d;
	g->h.use_fd = -1;
	rc = mps_lookup(g->t.uuid, d);
	if (rc < 0)
		return err_prefix("MPS daemon for %s", g->t.uuid);
	if (rc == 0 && d->alive) {
		/* in use from now (a last user stopping it meanwhile: it is gone once this returns) */
		if ((g->h.use_fd = mps_use(d)) < 0)
			return err_prefix("MPS daemon for %s", g->t.uuid);
		rc = mps_lookup(g->t.uuid, d);
		/* the user's daemon, a running gpupack's, or one another run still uses: as it is */
		if (rc == 0 && d->alive && (d->owner_pid == 0 || proc_is(d->owner_pid, d->owner_start) ||
		    mps_used_by_others(d, NULL)))
			return 0;
		err_clear();
		close(g->h.use_fd);
		g->h.use_fd = -1;
	}
	/* none, or a killed run's that no run uses (ended by the start, not adopted) */
	if (mps_start_owned(&g->t, g->gpu_index, &lim, d, &started) < 0)
		return err_prefix("MPS daemon for %s", g->t.uuid);
	g->mps_ours = started;
	if ((g->h.use_fd = mps_use(d)) < 0)
		return err_prefix("MPS daemon for %s", g->t.uuid);
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
		int last = -1;

		if (!g[i].mps)
			continue;
		if (g[i].h.use_fd >= 0)
			close(g[i].h.use_fd);
		g[i].h.use_fd = -1;
		/* a run's daemon (this one's or another's): stopped by the last run to use it */
		if ((g[i].mps_ours || g[i].mps->owner_pid != 0) && !mps_used_by_others(g[i].mps, &last) &&
		    mps_stop(g[i].mps, 5, 1) < 0) {
			warnx_("%s", err_msg());
			err_clear();
		}
		if (last >= 0)
			close(last);
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

int
farm_mps_fault_news(struct group *g, long since, double now)
{
	long off = g->h.fault_log_off > 0 ? g->h.fault_log_off : since;
	int hit;

	/* the log only: asking the daemon runs its control program, which a silent daemon holds 10 s */
	if (!g->mps || off < 0)
		return 0;
	if ((hit = mps_log_fatal_since(g->mps, off)) < 0)
		err_clear();
	if (hit != 1)
		return 0;
	trace_event(now, "fault logged gpu=%d", g->gpu_index);
	g->h.fault_last = now;
	g->h.fault_log_off = farm_mps_log_offset(g);
	return 1;
}

int
farm_mps_quiet(struct group *g, long since, double now)
{
	if (!g->mps)
		return 0;
	farm_mps_fault_news(g, since, now);
	return (g->h.fault_at > 0 && now - g->h.fault_at < FARM_FAULT_GRACE) ||
	    (g->h.fault_last > 0 && now - g->h.fault_last < FARM_FAULT_QUIET);
}

int
farm_mps_culprit(const struct group *g, long off, pid_t pid)
{
	int r = mps_fault_culprit(g->mps, off, pid);

	if (r < 0)
		err_clear();
	return r;
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

/*
 * Whether g's server is in FAULT: 1 yes, 0 no, -1 its daemon did not say
 * (silent past $GPUPACK_MPS_TIMEOUT: seen on an H200 while it tore a fault
 * down). A fault once seen holds while the daemon is silent: a silent
 * answer read as "not in FAULT" left two clients running on 48 s beside a
 * server in FAULT and the device idle (fault farm e1). A silent daemon is
 * not asked again for FAULT_MUTE seconds: each ask waits its time limit.
 */
#define FAULT_MUTE 5.0

static int
in_fault(struct group *g, double now)
{
	struct mps_server *s = NULL;
	int ns = 0, fault = 0;

	if (g->h.fault_mute > 0 && now - g->h.fault_mute < FAULT_MUTE)
		return -1;
	if (mps_servers(g->mps, &s, &ns) < 0) {
		err_clear();
		g->h.fault_mute = now;
		return -1;
	}
	g->h.fault_mute = 0;
	for (int i = 0; i < ns; i++)
		if (s[i].state == MPS_SERVER_FAULT)
			fault = 1;
	mps_servers_free(s, ns);
	return fault;
}

/* FARM_FAULT_RESTART seconds, or the knob's (tests: a double that never recovers) */
static double
restart_after(void)
{
	long s = knob(KNOB_FARM_FAULT_RESTART);

	return s > 0 ? (double)s : FARM_FAULT_RESTART;
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
farm_mps_alive(const struct group *g, char *why, size_t size)
{
	if (g->mps && mps_pid_alive(g->mps))
		return 1;
	if (why)
		snprintf(why, size, "its control daemon (pid %ld) died", g->mps ? (long)g->mps->pid : 0L);
	return 0;
}

int
farm_mps_probe(struct group *g, char *why, size_t size)
{
	struct sbuf r;
	pid_t *pids = NULL;
	int n = 0, rc = 0;
	char cmd[96] = "get_server_list\n";

	if (!farm_mps_alive(g, why, size))
		return -1;
	/*
	 * One run of the control program, with a time limit: the server list,
	 * and the state of the server known so far (a daemon waiting on a
	 * server that stopped answering does not answer either).
	 */
	if (g->h.mps_server > 0)
		snprintf(cmd, sizeof cmd, "get_server_list\nget_server_status %ld\n", (long)g->h.mps_server);
	sbuf_init(&r);
	if (mps_commands(g->mps, cmd, &r) < 0) {
		/* gone meanwhile (said by farm_mps_alive), or there and silent */
		if (farm_mps_alive(g, why, size)) {
			snprintf(why, size, "its control daemon did not answer (%s)", err_msg());
			rc = -2;
		} else
			rc = -1;
		err_clear();
		sbuf_free(&r);
		return rc;
	}
	mps_parse_pids(r.buf ? r.buf : "", &pids, &n);
	/* a server that served our running tasks and is gone took them with it */
	if (g->h.mps_server > 0 && g->running > 0 && !proc_is(g->h.mps_server, g->h.mps_server_start)) {
		snprintf(why, size, "its server (pid %ld) died", (long)g->h.mps_server);
		rc = -1;
	}
	g->h.mps_server = n > 0 ? pids[0] : 0;
	g->h.mps_server_start = n > 0 ? proc_start_time(pids[0]) : 0;
	free(pids);
	sbuf_free(&r);
	return rc;
}

int
farm_mps_restart(struct group *g)
{
	struct mps_limits lim = {0, 0, MPS_PRIO_UNSET}, theirs = g->mps->limits;
	pid_t srv = g->h.mps_server;
	unsigned long long srv_start = g->h.mps_server_start;
	int started = 0;

	g->h.mps_server = 0;
	g->h.mps_server_start = 0;
	if (mps_reset(g->mps, &srv, &srv_start, srv > 0) < 0)
		return -1;
	/*
	 * A run's (ours, or another's that went): this run's now, stopped by the last
	 * run that uses it; the user's again with its own limits (left running at the end)
	 */
	if (g->mps_ours || g->mps->owner_pid != 0) {
		if (mps_start_owned(&g->t, g->gpu_index, &lim, g->mps, &started) < 0)
			return -1;
		g->mps_ours |= started;
		return 0;
	}
	return mps_start(&g->t, g->gpu_index, &theirs, 0, g->mps, &started);
}

int
farm_mps_stuck(struct group *g, double now)
{
	if (!g->mps || g->h.fault_at == 0 || g->running == 0 || now - g->h.fault_at <= restart_after())
		return 0;
	if (in_fault(g, now) == 0) {
		g->h.fault_at = 0;
		return 0;
	}
	return 1;
}

/* Seconds between asks whether a server is still in FAULT (each one runs the control program). */
#define FAULT_ASK 0.25

int
farm_mps_blocked(struct group *g, double now)
{
	if (g->mps && g->h.mps_down)
		return 1;
	if (!g->mps || g->h.fault_at == 0)
		return 0;
	/* asked a moment ago, in FAULT then: still waiting (every slot asks, every loop turn) */
	if (now - g->h.fault_asked < FAULT_ASK)
		return 1;
	g->h.fault_asked = now;
	if (in_fault(g, now) == 0) {
		g->h.fault_at = 0;
		return 0;
	}
	/* a daemon that is not ours is the user's to restart: stop waiting for it */
	if (g->running == 0 && now - g->h.fault_at > restart_after()) {
		if (g->mps_ours)
			restart(g);
		g->h.fault_at = 0;
		return 0;
	}
	return 1;
}
