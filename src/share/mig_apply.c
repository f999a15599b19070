/*
 * mig_apply: from a snapshot to the planner's GPUs, from a plan to
 * operations (and the line-based plan file that carries them), and the
 * operations themselves: apply with rollback, and clear.
 */
#include "share/mig.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------ from a snapshot */

static int
existing_from_gi(struct mig_gpu *m, const struct gpu_info *g, const struct mig_gi *gi)
{
	struct mig_existing *e;

	if (m->nexisting >= MIG_MAX_INST)
		return err_set(EXIT_INTERNAL, "GPU %d: more than %d GPU instances", g->index, MIG_MAX_INST);
	e = &m->existing[m->nexisting++];
	memset(e, 0, sizeof *e);
	e->gi_id = gi->id;
	e->at = gi->placement;
	e->profile = -1;
	for (int p = 0; p < m->nprofiles; p++)
		if (m->profiles[p].id == gi->profile_id || strcasecmp(m->profiles[p].name, gi->profile) == 0) {
			e->profile = p;
			break;
		}
	if (e->profile < 0)
		return err_set(EXIT_INTERNAL, "GPU %d: instance %u has profile '%s' that the GPU does not list",
		    g->index, gi->id, gi->profile);
	e->nci = gi->nci < MIG_MAX_CI ? gi->nci : MIG_MAX_CI;
	for (int c = 0; c < e->nci; c++)
		e->ci[c] = gi->ci[c].id;
	for (int k = 0; k < g->nprocs; k++)
		if (g->procs[k].gi_id >= 0 && (unsigned)g->procs[k].gi_id == gi->id) {
			e->busy = 1;
			if (e->npids < (int)(sizeof e->pids / sizeof e->pids[0]))
				e->pids[e->npids++] = (int)g->procs[k].pid;
		}
	return 0;
}

int
mig_gpus_from_system(const struct gpu_system *sys, struct mig_gpu **out, int *n)
{
	struct mig_gpu *v = xcalloc((size_t)sys->ngpus + 1, sizeof *v);

	*n = 0;
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];
		struct mig_gpu *m = &v[i];

		m->index = g->index;
		m->sys_pos = i;
		str_copy(m->uuid, g->uuid, sizeof m->uuid);
		str_copy(m->name, g->name, sizeof m->name);
		m->mig_enabled = g->mig_current == MIG_ENABLED;
		m->nprofiles = g->nprofiles < MIG_MAX_PROFILES ? g->nprofiles : MIG_MAX_PROFILES;
		if (g->nprofiles)
			memcpy(m->profiles, g->profiles, sizeof *m->profiles * (size_t)m->nprofiles);
		mig_gpu_derive(m);
		for (int j = 0; m->mig_enabled && j < g->ngi; j++)
			if (existing_from_gi(m, g, &g->gi[j]) < 0) {
				free(v);
				*out = NULL;
				return -1;
			}
	}
	*out = v;
	*n = sys->ngpus;
	return 0;
}

/* ---------------------------------------------------------------- operations */

void
mig_plan_ops(const struct mig_gpu *gpus, const struct mig_plan *p, struct mig_op **out, int *n)
{
	struct mig_op *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < p->ngpus; g++)
			for (int i = 0; i < p->gpus[g].ninst; i++) {
				const struct mig_inst *in = &p->gpus[g].inst[i];
				struct mig_op *op;

				if (in->state != (pass == 0 ? MIG_INST_DESTROY : MIG_INST_NEW))
					continue;
				xgrow(&v, &cap, (size_t)*n + 1, sizeof *v);
				op = &v[(*n)++];
				memset(op, 0, sizeof *op);
				op->create = pass == 1;
				str_copy(op->uuid, gpus[g].uuid, sizeof op->uuid);
				str_copy(op->profile, gpus[g].profiles[in->profile].name, sizeof op->profile);
				op->at = in->at;
				op->gi_id = in->gi_id;
			}
	*out = v;
}

void
mig_ops_write(const struct mig_op *ops, int n, FILE *f)
{
	const char *last = "";

	fprintf(f, "gpupack-mig-plan 1\n");
	for (int i = 0; i < n; i++) {
		if (strcmp(last, ops[i].uuid) != 0)
			fprintf(f, "gpu %s\n", ops[i].uuid);
		last = ops[i].uuid;
		if (ops[i].create)
			fprintf(f, "create %s %u+%u\n", ops[i].profile, ops[i].at.start, ops[i].at.size);
		else
			fprintf(f, "destroy %u %s %u+%u\n", ops[i].gi_id, ops[i].profile, ops[i].at.start,
			    ops[i].at.size);
	}
}

static int
parse_placement(const char *s, struct mig_placement *at)
{
	char buf[32], *plus;
	long a, b;

	if (str_copy(buf, s, sizeof buf) >= sizeof buf || !(plus = strchr(buf, '+')))
		return err_set(EXIT_USAGE, "placement '%s' is not START+SIZE", s);
	*plus = '\0';
	if (parse_long(buf, 0, 31, &a) < 0 || parse_long(plus + 1, 1, 32, &b) < 0 || a + b > 32)
		return err_set(EXIT_USAGE, "placement '%s' is not START+SIZE within 32 memory slices", s);
	at->start = (unsigned)a;
	at->size = (unsigned)b;
	return 0;
}

static int
parse_op_line(char **f, int nf, const char *uuid, struct mig_op *op)
{
	long id;

	memset(op, 0, sizeof *op);
	if (!uuid[0])
		return err_set(EXIT_USAGE, "'%s' before any 'gpu UUID' line", f[0]);
	str_copy(op->uuid, uuid, sizeof op->uuid);
	if (strcmp(f[0], "create") == 0) {
		if (nf != 3)
			return err_set(EXIT_USAGE, "want 'create PROFILE START+SIZE'");
		op->create = 1;
	} else if (strcmp(f[0], "destroy") == 0) {
		if (nf != 4)
			return err_set(EXIT_USAGE, "want 'destroy GI_ID PROFILE START+SIZE'");
		if (parse_long(f[1], 0, 1 << 30, &id) < 0)
			return err_set(EXIT_USAGE, "instance id '%s' is not a number", f[1]);
		op->gi_id = (unsigned)id;
		f++;
	} else {
		return err_set(EXIT_USAGE, "unknown operation '%s' (want gpu, create or destroy)", f[0]);
	}
	if (strlen(f[1]) >= sizeof op->profile)
		return err_set(EXIT_USAGE, "profile name '%s' is too long", f[1]);
	str_copy(op->profile, f[1], sizeof op->profile);
	return parse_placement(f[2], &op->at);
}

/* Fields of one line (at most 5); 0 for blank lines and comments. */
static int
split_fields(char *line, char **f, int max)
{
	char *save = NULL, *tok, *hash = strchr(line, '#');
	int n = 0;

	if (hash)
		*hash = '\0';
	for (tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == max)
			return max + 1;
		f[n++] = tok;
	}
	return n;
}

static int
ops_line(char *line, int *header, char *uuid, size_t uuidlen, struct mig_op **v, size_t *cap, int *n)
{
	char *f[5];
	int nf = split_fields(line, f, 4);

	if (nf == 0)
		return 0;
	if (nf > 4)
		return err_set(EXIT_USAGE, "too many fields");
	if (!*header) {
		if (nf != 2 || strcmp(f[0], "gpupack-mig-plan") != 0 || strcmp(f[1], "1") != 0)
			return err_set(EXIT_USAGE, "not a plan file (want 'gpupack-mig-plan 1' first)");
		*header = 1;
		return 0;
	}
	if (strcmp(f[0], "gpu") == 0) {
		if (nf != 2 || strlen(f[1]) >= uuidlen)
			return err_set(EXIT_USAGE, "want 'gpu UUID'");
		str_copy(uuid, f[1], uuidlen);
		return 0;
	}
	if (*n >= MIG_MAX_REQUESTS)
		return err_set(EXIT_USAGE, "too many operations");
	xgrow(v, cap, (size_t)*n + 1, sizeof **v);
	if (parse_op_line(f, nf, uuid, &(*v)[*n]) < 0)
		return -1;
	(*n)++;
	return 0;
}

int
mig_ops_parse(const char *name, const char *text, struct mig_op **out, int *n)
{
	char uuid[GPU_UUID_LEN] = "";
	struct mig_op *v = NULL;
	size_t cap = 0;
	int lineno = 0, header = 0;
	const char *p = text;

	*n = 0;
	*out = NULL;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line;
		int rc;

		lineno++;
		if (len > 4096) {
			free(v);
			return err_set(EXIT_USAGE, "%s:%d: line too long", name, lineno);
		}
		line = xstrndup(p, len);
		rc = strlen(line) == len ? ops_line(line, &header, uuid, sizeof uuid, &v, &cap, n)
		    : err_set(EXIT_USAGE, "NUL byte in line");
		free(line);
		if (rc < 0) {
			free(v);
			*n = 0;
			return err_prefix("%s:%d", name, lineno);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (!header) {
		free(v);
		*n = 0;
		return err_set(EXIT_USAGE, "%s: not a plan file (empty)", name);
	}
	*out = v;
	return 0;
}

static int
find_gpu(const struct mig_gpu *gpus, int ngpus, const char *uuid)
{
	for (int g = 0; g < ngpus; g++)
		if (strcasecmp(gpus[g].uuid, uuid) == 0)
			return g;
	return -1;
}

static int
find_existing(const struct mig_gpu *g, unsigned gi_id)
{
	for (int e = 0; e < g->nexisting; e++)
		if (g->existing[e].gi_id == gi_id)
			return e;
	return -1;
}

static int
pids_text(const struct mig_existing *e, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < e->npids && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", k ? ", " : "", e->pids[k]);
	return 0;
}

/* The geometry of GPU g after ops: what stays plus what is created. */
static int
check_gpu(const struct mig_gpu *g, int gidx, const struct mig_op *ops, int n, const struct mig_gpu *gpus,
    int ngpus)
{
	int prof[2 * MIG_MAX_INST + 1], m = 0, gone[MIG_MAX_INST] = {0};
	struct mig_placement at[2 * MIG_MAX_INST + 1];
	char why[160], pids[96];

	for (int i = 0; i < n; i++) {
		int e;

		if (find_gpu(gpus, ngpus, ops[i].uuid) != gidx || ops[i].create)
			continue;
		if ((e = find_existing(g, ops[i].gi_id)) < 0)
			return err_set(EXIT_USAGE, "GPU %d has no GPU instance %u (the plan is stale)", g->index,
			    ops[i].gi_id);
		if (gone[e])
			return err_set(EXIT_USAGE, "GPU instance %u of GPU %d is destroyed twice", ops[i].gi_id, g->index);
		if (strcasecmp(g->profiles[g->existing[e].profile].name, ops[i].profile) != 0 ||
		    g->existing[e].at.start != ops[i].at.start || g->existing[e].at.size != ops[i].at.size)
			return err_set(EXIT_USAGE, "GPU instance %u of GPU %d is not %s at %u+%u (the plan is stale)",
			    ops[i].gi_id, g->index, ops[i].profile, ops[i].at.start, ops[i].at.size);
		if (g->existing[e].busy) {
			pids_text(&g->existing[e], pids, sizeof pids);
			return err_set(EXIT_USAGE, "GPU instance %u of GPU %d has processes (pids %s): not destroyed",
			    ops[i].gi_id, g->index, pids);
		}
		gone[e] = 1;
	}
	for (int e = 0; e < g->nexisting; e++)
		if (!gone[e]) {
			prof[m] = g->existing[e].profile;
			at[m++] = g->existing[e].at;
		}
	for (int i = 0; i < n; i++) {
		if (find_gpu(gpus, ngpus, ops[i].uuid) != gidx || !ops[i].create)
			continue;
		if (m >= 2 * MIG_MAX_INST)
			return err_set(EXIT_USAGE, "GPU %d: too many instances", g->index);
		if ((prof[m] = mig_profile_find(g, ops[i].profile)) < 0)
			return err_set(EXIT_USAGE, "GPU %d has no profile named '%s'", g->index, ops[i].profile);
		at[m++] = ops[i].at;
	}
	if (!mig_geometry_valid(g, prof, at, m, why, sizeof why))
		return err_set(EXIT_USAGE, "GPU %d: the planned geometry is not valid: %s", g->index, why);
	return 0;
}

int
mig_ops_check(const struct mig_gpu *gpus, int ngpus, const struct mig_op *ops, int n)
{
	for (int i = 0; i < n; i++)
		if (find_gpu(gpus, ngpus, ops[i].uuid) < 0)
			return err_set(EXIT_USAGE, "no GPU %s on this machine", ops[i].uuid);
	for (int g = 0; g < ngpus; g++)
		if (check_gpu(&gpus[g], g, ops, n, gpus, ngpus) < 0)
			return -1;
	return 0;
}

char *
mig_op_describe(const struct mig_gpu *gpus, int ngpus, const struct mig_op *op, char *buf, size_t size)
{
	int g = find_gpu(gpus, ngpus, op->uuid);
	int idx = g >= 0 ? gpus[g].index : -1;

	if (op->create)
		snprintf(buf, size, "create gpu-instance %s at %u+%u on GPU %d (%s)", op->profile, op->at.start,
		    op->at.size, idx, op->uuid);
	else
		snprintf(buf, size, "destroy gpu-instance %u (%s at %u+%u) on GPU %d (%s)", op->gi_id, op->profile,
		    op->at.start, op->at.size, idx, op->uuid);
	return buf;
}

/* ------------------------------------------------------------------- apply */

/* What apply has done, to undo newest first. */
struct done {
	int kind;                     /* 0 created gi, 1 created ci, 2 destroyed gi (with its cis) */
	int gpu;                      /* index into gpus */
	unsigned gi, ci;
	unsigned profile_id;
	struct mig_placement at;
};

static int
destroy_existing(struct gpu_backend *b, const struct mig_gpu *g, const struct mig_existing *e)
{
	for (int c = e->nci - 1; c >= 0; c--)
		if (b->destroy_ci(b, g->index, e->gi_id, e->ci[c]) < 0)
			return -1;
	return b->destroy_gi(b, g->index, e->gi_id);
}

/* Undo newest first; returns how many undo steps failed. */
static int
rollback(struct gpu_backend *b, const struct mig_gpu *gpus, const struct done *d, int n)
{
	int failed = 0;

	for (int i = n - 1; i >= 0; i--) {
		const struct mig_gpu *g = &gpus[d[i].gpu];
		unsigned gi, ci;
		int rc;

		if (d[i].kind == 1)
			rc = b->destroy_ci(b, g->index, d[i].gi, d[i].ci);
		else if (d[i].kind == 0)
			rc = b->destroy_gi(b, g->index, d[i].gi);
		else
			rc = b->create_gi(b, g->index, d[i].profile_id, &d[i].at, &gi) < 0 ? -1
			    : b->create_ci(b, g->index, gi, &ci);
		failed += rc < 0;
	}
	err_clear();
	return failed;
}

static int
apply_one(struct gpu_backend *b, const struct mig_gpu *gpus, int g, const struct mig_op *op,
    struct done *d, int *nd, FILE *log)
{
	const struct mig_gpu *gpu = &gpus[g];

	if (!op->create) {
		const struct mig_existing *e = &gpu->existing[find_existing(gpu, op->gi_id)];

		if (destroy_existing(b, gpu, e) < 0)
			return -1;
		d[(*nd)++] = (struct done){2, g, op->gi_id, 0, gpu->profiles[e->profile].id, e->at};
		if (log)
			fprintf(log, "destroyed gpu-instance %u (%s at %u+%u) on GPU %d\n", op->gi_id, op->profile,
			    op->at.start, op->at.size, gpu->index);
		return 0;
	}
	{
		int p = mig_profile_find(gpu, op->profile);
		unsigned gi, ci;

		if (b->create_gi(b, gpu->index, gpu->profiles[p].id, &op->at, &gi) < 0)
			return -1;
		d[(*nd)++] = (struct done){0, g, gi, 0, gpu->profiles[p].id, op->at};
		if (b->create_ci(b, gpu->index, gi, &ci) < 0)
			return -1;
		d[(*nd)++] = (struct done){1, g, gi, ci, gpu->profiles[p].id, op->at};
		if (log)
			fprintf(log, "created gpu-instance %s at %u+%u on GPU %d: gpu-instance %u, compute-instance %u\n",
			    op->profile, op->at.start, op->at.size, gpu->index, gi, ci);
	}
	return 0;
}

int
mig_apply(struct gpu_backend *b, const struct mig_gpu *gpus, int ngpus, const struct mig_op *ops, int n,
    FILE *log)
{
	struct done *d;
	int nd = 0;

	if (mig_ops_check(gpus, ngpus, ops, n) < 0)
		return -1;
	d = xcalloc((size_t)n * 2 + 1, sizeof *d);
	for (int i = 0; i < n; i++) {
		int g = find_gpu(gpus, ngpus, ops[i].uuid);
		char what[256], why[512];
		int failed;

		if (apply_one(b, gpus, g, &ops[i], d, &nd, log) == 0)
			continue;
		mig_op_describe(gpus, ngpus, &ops[i], what, sizeof what);
		str_copy(why, err_msg(), sizeof why);
		failed = rollback(b, gpus, d, nd);
		free(d);
		if (failed)
			return err_set(EXIT_ENV, "%s: %s; rollback incomplete (%d step%s failed): run 'gpupack devices'",
			    what, why, failed, failed == 1 ? "" : "s");
		return err_set(EXIT_ENV, "%s: %s; rolled back the %d operation%s done before", what, why, i,
		    i == 1 ? "" : "s");
	}
	free(d);
	return 0;
}

/* ------------------------------------------------------------------- clear */

static int
clear_refuse(const struct gpu_system *sys, const int *sel)
{
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];
		char pids[256] = "";
		size_t off = 0;
		int busy = 0;

		if (!sel[i])
			continue;
		for (int k = 0; k < g->nprocs; k++)
			for (int j = 0; j < g->ngi; j++)
				if (g->procs[k].gi_id >= 0 && (unsigned)g->procs[k].gi_id == g->gi[j].id) {
					if (off < sizeof pids)
						off += (size_t)snprintf(pids + off, sizeof pids - off, "%s%d (gpu-instance %u)",
						    busy ? ", " : "", (int)g->procs[k].pid, g->gi[j].id);
					busy++;
				}
		if (busy)
			return err_set(EXIT_ENV, "GPU %d: instances have processes: pid %s; nothing destroyed",
			    g->index, pids);
	}
	return 0;
}

int
mig_clear(struct gpu_backend *b, const struct gpu_system *sys, const int *sel, FILE *log)
{
	int done = 0;

	if (clear_refuse(sys, sel) < 0)
		return -1;
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];

		if (!sel[i] || g->mig_current != MIG_ENABLED)
			continue;
		for (int j = g->ngi - 1; j >= 0; j--) {
			const struct mig_gi *gi = &g->gi[j];

			for (int c = gi->nci - 1; c >= 0; c--)
				if (b->destroy_ci(b, g->index, gi->id, gi->ci[c].id) < 0)
					goto fail;
			if (b->destroy_gi(b, g->index, gi->id) < 0)
				goto fail;
			done++;
			if (log)
				fprintf(log, "destroyed gpu-instance %u (%s at %u+%u) on GPU %d\n", gi->id, gi->profile,
				    gi->placement.start, gi->placement.size, g->index);
			continue;
fail:
			return err_prefix("GPU %d: destroying gpu-instance %u (after %d destroyed)", g->index, gi->id,
			    done);
		}
	}
	return 0;
}
