/*
 * sim: the simulation backend. Answers the backend ops from a topology file
 * (src/gpu/topology*.c read, check and write it) and makes the MIG changes
 * durable, so that the next gpupack invocation sees them, as it would see
 * the driver's state. Changes go to a copy in the state directory,
 * sim/NAME-PATHHASH-CONTENTHASH.topo, never to the named file (a shipped or
 * installed topology stays as it is); later commands on the same file read
 * the copy. The hashes tie the copy to the file's path and contents: a file
 * edited since starts a fresh copy. With --sim-write (GPUPACK_SIM_WRITE) the
 * file itself is the machine and is rewritten. Every op re-reads: another
 * process may have changed the machine since.
 *
 * Failure injection for rollback tests counts calls per opened backend:
 * "fail OP after N" lines in the file and GPUPACK_SIM_FAIL=OP:K[,OP:K].
 *
 * Energy: each simulated GPU draws a steady power set by its utilization
 * line (SIM_IDLE_W idle, SIM_BUSY_W at 100%), and its counter is that
 * power times the monotonic clock: over any span, joules = watts x seconds.
 * GPUPACK_SIM_ENERGY_STEP_MS=S gives the counter a resolution, as NVML's
 * has: it moves only at multiples of S ms of the monotonic clock, by what
 * was used since (a read between two updates repeats the last value).
 */
#include "gpu/backend.h"
#include "gpu/topology.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A simulated GPU's power: idle, and all busy (an H100 SXM's order of magnitude). */
#define SIM_IDLE_W 70.0
#define SIM_BUSY_W 700.0

struct sim {
	char *path;                 /* where the machine is read: the copy once there is one */
	char *copy;                 /* where changes go: the copy, or the file itself (in place) */
	long calls[TOPO_NOPS];      /* calls made so far, per op */
	long env_fail[TOPO_NOPS];   /* GPUPACK_SIM_FAIL: the call that fails; 0 none */
	double e_at[TOPO_MAX_GPUS]; /* the energy counter: when each GPU's was last read (0 never) */
	double e_mj[TOPO_MAX_GPUS]; /* and its value then, in mJ */
	double e_shown[TOPO_MAX_GPUS]; /* what the counter last showed (the step on: under e_mj) */
	double e_tick[TOPO_MAX_GPUS]; /* the step on: the update it last showed (now / step, floored) */
	double e_step_s;            /* GPUPACK_SIM_ENERGY_STEP_MS in seconds; 0: moves on every read */
};

static int
parse_env_fail(const char *spec, long *fail)
{
	char *copy = xstrdup(spec), *tok, *save = NULL;
	int rc = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		long k;
		int op;

		if (colon)
			*colon = '\0';
		if (!colon || (op = topo_op_parse(str_trim(tok))) < 0 ||
		    parse_long(str_trim(colon + 1), 1, 1000000, &k) < 0) {
			rc = err_set(EXIT_USAGE, "GPUPACK_SIM_FAIL='%s': expected OP:K[,OP:K...] with OP one "
			    "of set-mig-mode, create-gi, create-ci, destroy-ci, destroy-gi and K >= 1", spec);
			break;
		}
		fail[op] = k;
	}
	free(copy);
	return rc;
}

/* Count a call of op; -1 with a driver-like error when this call is to fail. */
static int
injected(struct sim *s, const struct topology *t, int op, const char *what)
{
	long n = ++s->calls[op];

	if (s->env_fail[op] == n)
		return err_set(EXIT_ENV, "%s: simulated driver failure (injected: %s call %ld, "
		    "GPUPACK_SIM_FAIL)", what, topo_op_name(op), n);
	for (int i = 0; i < t->nfail; i++)
		if (t->fail[i].op == op && t->fail[i].after + 1 == n)
			return err_set(EXIT_ENV, "%s: simulated driver failure (injected: %s call %ld, "
			    "'fail %s after %ld')", what, topo_op_name(op), n, topo_op_name(op),
			    t->fail[i].after);
	return 0;
}

static int
save(struct sim *s, const struct topology *t)
{
	struct stat st;
	size_t len;
	char *text = topo_format(t, &len);
	int mode = 0644, rc;

	if (strcmp(s->copy, s->path) == 0 && stat(s->path, &st) == 0)
		mode = (int)(st.st_mode & 07777);
	else
		mode = 0600;
	/* the copy's directory, private, on the first change */
	if (strcmp(s->copy, s->path) != 0) {
		char dir[4096];

		if (state_dir("sim", dir, sizeof dir) < 0) {
			free(text);
			return err_prefix("simulated machine %s", s->path);
		}
	}
	rc = write_file_atomic(s->copy, text, len, mode);
	free(text);
	if (rc < 0)
		return err_prefix("simulated machine %s", s->copy);
	if (strcmp(s->copy, s->path) != 0) {
		free(s->path);
		s->path = xstrdup(s->copy); /* from now on the copy is the machine */
	}
	return 0;
}

static int
sim_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags)
{
	struct sim *s = b->priv;
	struct topology t;

	if (topo_load(s->path, &t) < 0)
		return -1;
	topo_snapshot(&t, sys, flags);
	topo_free(&t);
	return 0;
}

/* The shape of every mutating op: load, inject, change, save. */
struct change {
	int op;
	int gpu;
	int enable;
	unsigned profile_id;
	const struct mig_placement *where;
	unsigned gi, ci;
	unsigned *out;
};

static int
apply(struct topology *t, const struct change *c)
{
	switch (c->op) {
	case TOPO_OP_SET_MIG_MODE:
		return topo_set_mig_mode(t, c->gpu, c->enable);
	case TOPO_OP_CREATE_GI:
		return topo_create_gi(t, c->gpu, c->profile_id, c->where, c->out);
	case TOPO_OP_CREATE_CI:
		return topo_create_ci(t, c->gpu, c->gi, c->out);
	case TOPO_OP_DESTROY_CI:
		return topo_destroy_ci(t, c->gpu, c->gi, c->ci);
	case TOPO_OP_DESTROY_GI:
		return topo_destroy_gi(t, c->gpu, c->gi);
	default:
		return err_set(EXIT_INTERNAL, "sim: unknown op %d", c->op);
	}
}

static void
describe(const struct change *c, char *buf, size_t size)
{
	switch (c->op) {
	case TOPO_OP_SET_MIG_MODE:
		snprintf(buf, size, "set MIG mode %s on GPU %d", c->enable ? "on" : "off", c->gpu);
		break;
	case TOPO_OP_CREATE_GI:
		snprintf(buf, size, "create GPU instance (profile id %u) on GPU %d", c->profile_id, c->gpu);
		break;
	case TOPO_OP_CREATE_CI:
		snprintf(buf, size, "create compute instance in GPU instance %u on GPU %d", c->gi, c->gpu);
		break;
	case TOPO_OP_DESTROY_CI:
		snprintf(buf, size, "destroy compute instance %u of GPU instance %u on GPU %d", c->ci,
		    c->gi, c->gpu);
		break;
	default:
		snprintf(buf, size, "destroy GPU instance %u on GPU %d", c->gi, c->gpu);
		break;
	}
}

static int
mutate(struct gpu_backend *b, const struct change *c)
{
	struct sim *s = b->priv;
	struct topology t;
	char what[128];
	int rc;

	if (topo_load(s->path, &t) < 0)
		return -1;
	describe(c, what, sizeof what);
	rc = injected(s, &t, c->op, what);
	if (rc == 0)
		rc = apply(&t, c);
	if (rc == 0)
		rc = save(s, &t);
	topo_free(&t);
	return rc;
}

static int
sim_set_mig_mode(struct gpu_backend *b, int gpu, int enable)
{
	struct change c = {.op = TOPO_OP_SET_MIG_MODE, .gpu = gpu, .enable = enable};

	return mutate(b, &c);
}

static int
sim_create_gi(struct gpu_backend *b, int gpu, unsigned profile_id,
    const struct mig_placement *where, unsigned *gi_id)
{
	struct change c = {.op = TOPO_OP_CREATE_GI, .gpu = gpu, .profile_id = profile_id,
	    .where = where, .out = gi_id};

	return mutate(b, &c);
}

static int
sim_create_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned *ci_id)
{
	struct change c = {.op = TOPO_OP_CREATE_CI, .gpu = gpu, .gi = gi_id, .out = ci_id};

	return mutate(b, &c);
}

static int
sim_destroy_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned ci_id)
{
	struct change c = {.op = TOPO_OP_DESTROY_CI, .gpu = gpu, .gi = gi_id, .ci = ci_id};

	return mutate(b, &c);
}

static int
sim_destroy_gi(struct gpu_backend *b, int gpu, unsigned gi_id)
{
	struct change c = {.op = TOPO_OP_DESTROY_GI, .gpu = gpu, .gi = gi_id};

	return mutate(b, &c);
}

static int
sim_utilization(struct gpu_backend *b, int gpu, unsigned *gpu_pct, unsigned *mem_pct)
{
	struct sim *s = b->priv;
	struct topology t;

	if (topo_load(s->path, &t) < 0)
		return -1;
	if (gpu < 0 || gpu >= t.sys.ngpus) {
		topo_free(&t);
		return err_set(EXIT_USAGE, "utilization: GPU %d: no such GPU", gpu);
	}
	*gpu_pct = t.util[gpu].gpu;
	*mem_pct = t.util[gpu].mem;
	topo_free(&t);
	return 0;
}

static int
sim_energy(struct gpu_backend *b, int gpu, uint64_t *mj)
{
	struct sim *s = b->priv;
	unsigned gpu_pct, mem_pct;
	double watts, now;

	if (sim_utilization(b, gpu, &gpu_pct, &mem_pct) < 0)
		return -1;
	watts = SIM_IDLE_W + (SIM_BUSY_W - SIM_IDLE_W) * (gpu_pct > 100 ? 100 : gpu_pct) / 100.0;
	/* a counter, like NVML's: it only grows, by the power now over the time since the last read
	 * (the power read from a topology that others change: a product of it and the clock would
	 * jump back and forth) */
	now = clock_mono();
	if (gpu < TOPO_MAX_GPUS) {
		s->e_mj[gpu] += s->e_at[gpu] > 0 ? watts * (now - s->e_at[gpu]) * 1000.0 : watts * now * 1000.0;
		s->e_at[gpu] = now;
		if (s->e_step_s > 0) {
			/* what it read at the last update: the power since then is not counted yet;
			 * shown once per update, so neither a change of power nor the sum's rounding
			 * moves it between two updates */
			double tick = floor(now / s->e_step_s), last = tick * s->e_step_s;
			double at_update = s->e_mj[gpu] - watts * (now - last) * 1000.0;

			if (tick > s->e_tick[gpu]) {
				s->e_tick[gpu] = tick;
				if (at_update > s->e_shown[gpu])
					s->e_shown[gpu] = at_update;
			}
		} else {
			s->e_shown[gpu] = s->e_mj[gpu];
		}
		*mj = (uint64_t)s->e_shown[gpu];
	} else
		*mj = (uint64_t)(watts * now * 1000.0);
	return 0;
}

static void
sim_close(struct gpu_backend *b)
{
	struct sim *s = b->priv;

	free(s->path);
	free(s->copy);
	free(s);
	free(b);
}

/* FNV-1a, 64 bits: names the copy after the file's path and contents (not a security hash). */
static uint64_t
fnv(const char *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Where the changes of a simulation of file go: sim/NAME-PATHHASH-CONTENTHASH.topo in the state directory. */
static int
copy_path(const char *file, char *out, size_t size)
{
	char real[4096], sub[600], *data = NULL;
	const char *base = strrchr(file, '/');
	size_t len = 0;
	uint64_t hp, hc;

	if (!realpath(file, real))
		str_copy(real, file, sizeof real);
	if (read_file(file, &data, &len) < 0)
		return -1;
	hp = fnv(real, strlen(real), 14695981039346656037ULL);
	hc = fnv(data, len, 14695981039346656037ULL);
	free(data);
	base = base ? base + 1 : file;
	snprintf(sub, sizeof sub, "sim/%.*s-%016llx-%016llx.topo", (int)strcspn(base, "."), base,
	    (unsigned long long)hp, (unsigned long long)hc);
	return state_path(sub, out, size);
}

int
gpu_sim_open(const char *file, int in_place, struct gpu_backend **out)
{
	char copy[4096];
	struct stat st;
	const char *env = getenv("GPUPACK_SIM_FAIL"), *step = getenv("GPUPACK_SIM_ENERGY_STEP_MS");
	struct gpu_backend *b;
	long step_ms = 0;
	struct topology t;
	struct sim *s;

	*out = NULL;
	if (step && *step && parse_long(step, 1, 3600000, &step_ms) < 0)
		return err_set(EXIT_USAGE, "GPUPACK_SIM_ENERGY_STEP_MS='%s': expected milliseconds, 1 to 3600000",
		    step);
	/* read it once now, so that a bad file is reported before any work starts */
	if (topo_load(file, &t) < 0)
		return -1;
	topo_free(&t);
	s = xcalloc(1, sizeof *s);
	s->e_step_s = (double)step_ms / 1000.0;
	if (env && *env && parse_env_fail(env, s->env_fail) < 0) {
		free(s);
		return -1;
	}
	if (in_place) {
		s->path = xstrdup(file);
		s->copy = xstrdup(file);
	} else {
		if (copy_path(file, copy, sizeof copy) < 0) {
			free(s);
			return -1;
		}
		/* an earlier command's changes: the copy is the machine now (checked like the file) */
		if (lstat(copy, &st) == 0 && S_ISREG(st.st_mode)) {
			if (topo_load(copy, &t) < 0) {
				free(s);
				return err_prefix("simulated machine of %s (remove the copy to start again)", file);
			}
			topo_free(&t);
			s->path = xstrdup(copy);
		} else {
			s->path = xstrdup(file);
		}
		s->copy = xstrdup(copy);
	}
	b = xcalloc(1, sizeof *b);
	b->name = "sim";
	b->priv = s;
	b->snapshot = sim_snapshot;
	b->set_mig_mode = sim_set_mig_mode;
	b->create_gi = sim_create_gi;
	b->create_ci = sim_create_ci;
	b->destroy_ci = sim_destroy_ci;
	b->destroy_gi = sim_destroy_gi;
	b->utilization = sim_utilization;
	b->energy = sim_energy;
	b->close = sim_close;
	*out = b;
	return 0;
}
