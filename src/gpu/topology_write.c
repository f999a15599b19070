/*
 * topology_write: a simulated machine out again: its canonical text (what
 * `--sim` writes back after a MIG change, and what parse(format(t)) must
 * reproduce), and the snapshot the sim backend hands to the layers above.
 */
#include "gpu/topology.h"
#include "gpu/topology_internal.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the canonical writer ---- */

static const char *
size_str(uint64_t v, char *buf, size_t n)
{
	if (v % MIB(1) == 0)
		snprintf(buf, n, "%lluMiB", (unsigned long long)(v >> 20));
	else
		snprintf(buf, n, "%lluB", (unsigned long long)v);
	return buf;
}

static void
format_gpu(struct sbuf *b, const struct gpu_info *g, const struct topo_util *u)
{
	char s1[32], s2[32], s3[32], list[128];

	sbuf_printf(b, "\ngpu %d\n  uuid %s\n  name %s\n", g->index, g->uuid, g->name);
	if (g->pci_bus_id[0])
		sbuf_printf(b, "  pci %s\n", g->pci_bus_id);
	sbuf_printf(b, "  memory total=%s used=%s reserved=%s\n", size_str(g->mem_total, s1, sizeof s1),
	    size_str(g->mem_used, s2, sizeof s2), size_str(g->mem_reserved, s3, sizeof s3));
	sbuf_printf(b, "  sms %d\n  compute-capability %d.%d\n  compute-mode %s\n", g->sms,
	    g->cc_major, g->cc_minor, compute_mode_name(g->compute_mode));
	if (g->mig_current == MIG_UNSUPPORTED)
		sbuf_add(b, "  mig unsupported\n");
	else
		sbuf_printf(b, "  mig current=%s pending=%s\n", mig_mode_name(g->mig_current),
		    mig_mode_name(g->mig_pending));
	if (u->gpu || u->mem)
		sbuf_printf(b, "  utilization gpu=%u memory=%u\n", u->gpu, u->mem);
	for (int i = 0; i < g->nprofiles; i++) {
		const struct mig_profile *p = &g->profiles[i];

		topo_placements_str(p, list, sizeof list);
		sbuf_printf(b, "  profile index=%d id=%u name=%s slices=%d memory=%s sms=%d max=%d "
		    "placements=%s ce=%d\n", p->index, p->id, p->name, p->slices,
		    size_str(p->mem_bytes, s1, sizeof s1), p->sms, p->max_count, list, p->copy_engines);
	}
	for (int i = 0; i < g->ngi; i++) {
		const struct mig_gi *gi = &g->gi[i];

		sbuf_printf(b, "  gi id=%u profile=%s placement=%u+%u used=%s\n", gi->id, gi->profile,
		    gi->placement.start, gi->placement.size, size_str(gi->mem_used, s1, sizeof s1));
		for (int k = 0; k < gi->nci; k++)
			sbuf_printf(b, "  ci gi=%u id=%u uuid=%s\n", gi->id, gi->ci[k].id, gi->ci[k].uuid);
	}
	for (int i = 0; i < g->nprocs; i++) {
		const struct gpu_process *pr = &g->procs[i];

		sbuf_printf(b, "  process pid=%ld name=%s memory=%s", (long)pr->pid, pr->name,
		    size_str(pr->mem_used, s1, sizeof s1));
		if (pr->gi_id >= 0)
			sbuf_printf(b, " gi=%d ci=%d", pr->gi_id, pr->ci_id);
		sbuf_addc(b, '\n');
	}
}

char *
topo_format(const struct topology *t, size_t *len)
{
	struct sbuf b;

	sbuf_init(&b);
	sbuf_printf(&b, "gpupack-topology 1\n# written by gpupack (simulated MIG change); "
	    "format: doc/topology.md\ndriver %s\ncuda %s\n", t->sys.driver_version, t->sys.cuda_version);
	for (int i = 0; i < t->nfail; i++)
		sbuf_printf(&b, "fail %s after %ld\n", topo_op_name(t->fail[i].op), t->fail[i].after);
	for (int i = 0; i < t->sys.ngpus; i++)
		format_gpu(&b, &t->sys.gpus[i], &t->util[i]);
	if (len)
		*len = b.len;
	return sbuf_detach(&b);
}

/* ---- snapshots ---- */

void
topo_snapshot(const struct topology *t, struct gpu_system *out, unsigned flags)
{
	*out = t->sys;
	out->gpus = xcalloc((size_t)t->sys.ngpus, sizeof *out->gpus);
	for (int i = 0; i < t->sys.ngpus; i++) {
		const struct gpu_info *g = &t->sys.gpus[i];
		struct gpu_info *o = &out->gpus[i];

		*o = *g;
		o->gi = NULL;
		o->profiles = NULL;
		o->procs = NULL;
		if (g->ngi) {
			o->gi = xcalloc((size_t)g->ngi, sizeof *o->gi);
			memcpy(o->gi, g->gi, (size_t)g->ngi * sizeof *o->gi);
		}
		o->nprofiles = (flags & GPU_SNAP_PROFILES) ? g->nprofiles : 0;
		if (o->nprofiles) {
			o->profiles = xcalloc((size_t)g->nprofiles, sizeof *o->profiles);
			memcpy(o->profiles, g->profiles, (size_t)g->nprofiles * sizeof *o->profiles);
		}
		o->nprocs = (flags & GPU_SNAP_PROCESSES) ? g->nprocs : 0;
		if (o->nprocs) {
			o->procs = xcalloc((size_t)g->nprocs, sizeof *o->procs);
			memcpy(o->procs, g->procs, (size_t)g->nprocs * sizeof *o->procs);
		}
	}
}
