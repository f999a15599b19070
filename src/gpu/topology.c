/*
 * topology: the MIG changes on a simulated machine (MIG mode, create and
 * destroy GPU and compute instances), checked as the driver checks them,
 * with the failure injection a topology file asks for ("fail OP after N").
 * The format itself is in topology_parse.c and topology_write.c, the shared
 * geometry rules in topology_geometry.c.
 */
#include "gpu/topology.h"
#include "gpu/topology_internal.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <string.h>

static const char *op_names[TOPO_NOPS] = {
	"set-mig-mode", "create-gi", "create-ci", "destroy-ci", "destroy-gi",
};

int
topo_op_parse(const char *name)
{
	for (int i = 0; i < TOPO_NOPS; i++)
		if (strcmp(name, op_names[i]) == 0)
			return i;
	return -1;
}

const char *
topo_op_name(int op)
{
	return op >= 0 && op < TOPO_NOPS ? op_names[op] : "unknown";
}

/* ---- the MIG changes ---- */

static struct gpu_info *
gpu_at(struct topology *t, int gpu)
{
	if (gpu < 0 || gpu >= t->sys.ngpus) {
		err_set(EXIT_USAGE, "GPU %d: no such GPU (indices 0 to %d)", gpu, t->sys.ngpus - 1);
		return NULL;
	}
	return &t->sys.gpus[gpu];
}

/* "pid 4242 (python), pid 4243 (train)" of the processes on gi (and ci, if >= 0). */
static int
users(const struct gpu_info *g, int gi, int ci, char *buf, size_t size)
{
	size_t off = 0;
	int n = 0;

	buf[0] = '\0';
	for (int i = 0; i < g->nprocs; i++) {
		const struct gpu_process *p = &g->procs[i];

		if (p->gi_id != gi || (ci >= 0 && p->ci_id != ci))
			continue;
		if (off < size)
			off += (size_t)snprintf(buf + off, size - off, "%spid %ld (%s)", n ? ", " : "",
			    (long)p->pid, p->name);
		n++;
	}
	return n;
}

int
topo_set_mig_mode(struct topology *t, int gpu, int enable)
{
	struct gpu_info *g = gpu_at(t, gpu);
	int mode = enable ? MIG_ENABLED : MIG_DISABLED;

	if (!g)
		return err_prefix("set MIG mode");
	if (g->mig_current == MIG_UNSUPPORTED)
		return err_set(EXIT_USAGE, "set MIG mode on GPU %d: %s does not support MIG", gpu, g->name);
	if (!enable && g->ngi)
		return err_set(EXIT_ENV, "disable MIG on GPU %d: %d GPU instance%s still exist; destroy "
		    "them first", gpu, g->ngi, g->ngi == 1 ? "" : "s");
	g->mig_pending = mode;
	/* a GPU with processes cannot be reset now: the change waits, as the driver's does */
	if (g->nprocs == 0)
		g->mig_current = mode;
	return 0;
}

int
topo_create_gi(struct topology *t, int gpu, unsigned profile_id,
    const struct mig_placement *where, unsigned *gi_id)
{
	struct gpu_info *g = gpu_at(t, gpu);
	struct mig_profile *p;
	struct mig_placement pl;
	struct mig_gi gi;

	if (!g)
		return err_prefix("create GPU instance");
	if (g->mig_current != MIG_ENABLED)
		return err_set(EXIT_USAGE, "create GPU instance on GPU %d: MIG is not enabled", gpu);
	if (!(p = topo_profile_by_id(g, profile_id)))
		return err_set(EXIT_USAGE, "create GPU instance on GPU %d: no GPU instance profile has "
		    "id %u", gpu, profile_id);
	if (g->ngi >= TOPO_MAX_GI)
		return err_set(EXIT_USAGE, "create GPU instance %s on GPU %d: %d instances already",
		    p->name, gpu, g->ngi);
	if (where) {
		pl = *where;
		if (topo_gi_fits(g, p, &pl) < 0)
			return err_prefix("create GPU instance %s at %u+%u on GPU %d", p->name, pl.start,
			    pl.size, gpu);
	} else {
		int i;

		for (i = 0; i < p->nplacements; i++)
			if (topo_gi_fits(g, p, &p->placements[i]) == 0)
				break;
		if (i == p->nplacements)
			return err_set(EXIT_USAGE, "create GPU instance %s on GPU %d: no free placement",
			    p->name, gpu);
		pl = p->placements[i];
	}
	topo_gi_init(&gi, topo_free_gi_id(g), p, &pl);
	g->gi = xrealloc(g->gi, (size_t)(g->ngi + 1) * sizeof *g->gi);
	g->gi[g->ngi++] = gi;
	*gi_id = gi.id;
	return 0;
}

int
topo_create_ci(struct topology *t, int gpu, unsigned gi_id, unsigned *ci_id)
{
	struct gpu_info *g = gpu_at(t, gpu);
	struct mig_gi *gi;
	struct mig_ci ci;

	if (!g)
		return err_prefix("create compute instance");
	if (!(gi = topo_gi_by_id(g, gi_id)))
		return err_set(EXIT_USAGE, "create compute instance on GPU %d: no GPU instance %u",
		    gpu, gi_id);
	if (gi->nci)
		return err_set(EXIT_USAGE, "create compute instance in GPU instance %u on GPU %d: "
		    "compute instance %u already spans it", gi_id, gpu, gi->ci[0].id);
	topo_ci_init(&ci, 0, gi, g, topo_profile_by_id(g, gi->profile_id));
	if (topo_uuid_taken(&t->sys, ci.uuid))
		return err_set(EXIT_INTERNAL, "create compute instance: derived UUID %s already in use",
		    ci.uuid);
	gi->ci[gi->nci++] = ci;
	*ci_id = ci.id;
	return 0;
}

int
topo_destroy_ci(struct topology *t, int gpu, unsigned gi_id, unsigned ci_id)
{
	struct gpu_info *g = gpu_at(t, gpu);
	struct mig_gi *gi;
	struct mig_ci *ci;
	char who[256];

	if (!g)
		return err_prefix("destroy compute instance");
	if (!(gi = topo_gi_by_id(g, gi_id)) || !(ci = topo_ci_by_id(gi, ci_id)))
		return err_set(EXIT_USAGE, "destroy compute instance %u of GPU instance %u on GPU %d: "
		    "no such instance", ci_id, gi_id, gpu);
	if (users(g, (int)gi_id, (int)ci_id, who, sizeof who))
		return err_set(EXIT_ENV, "destroy compute instance %u of GPU instance %u on GPU %d: "
		    "in use by %s", ci_id, gi_id, gpu, who);
	memmove(ci, ci + 1, (size_t)(gi->ci + gi->nci - (ci + 1)) * sizeof *ci);
	gi->nci--;
	return 0;
}

int
topo_destroy_gi(struct topology *t, int gpu, unsigned gi_id)
{
	struct gpu_info *g = gpu_at(t, gpu);
	struct mig_gi *gi;
	char who[256];

	if (!g)
		return err_prefix("destroy GPU instance");
	if (!(gi = topo_gi_by_id(g, gi_id)))
		return err_set(EXIT_USAGE, "destroy GPU instance %u on GPU %d: no such instance",
		    gi_id, gpu);
	if (users(g, (int)gi_id, -1, who, sizeof who))
		return err_set(EXIT_ENV, "destroy GPU instance %u on GPU %d: in use by %s", gi_id, gpu, who);
	if (gi->nci)
		return err_set(EXIT_ENV, "destroy GPU instance %u on GPU %d: compute instance %u still "
		    "exists; destroy it first", gi_id, gpu, gi->ci[0].id);
	memmove(gi, gi + 1, (size_t)(g->gi + g->ngi - (gi + 1)) * sizeof *gi);
	g->ngi--;
	return 0;
}
