/*
 * topology_geometry: the rules of a simulated GPU's MIG geometry, shared by
 * the parser (a file may only describe what the driver could have built) and
 * the MIG changes (checked as the driver checks them): lookups, which
 * placements fit, instance ids, and the deterministic MIG UUIDs.
 */
#include "gpu/topology.h"
#include "gpu/topology_internal.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- derived values ---- */

static uint64_t
fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

void
topo_mig_uuid(const char *gpu_uuid, unsigned gi, unsigned ci, char *out, size_t size)
{
	char key[GPU_UUID_LEN + 32];
	uint64_t a, b;
	int n;

	n = snprintf(key, sizeof key, "%s/%u/%u", gpu_uuid, gi, ci);
	if (n < 0 || (size_t)n >= sizeof key)
		n = (int)sizeof key - 1;
	a = fnv1a(14695981039346656037ULL, key, (size_t)n);
	b = fnv1a(a ^ 0x9e3779b97f4a7c15ULL, key, (size_t)n);
	snprintf(out, size, "MIG-%08x-%04x-%04x-%04x-%012llx",
	    (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff,
	    (unsigned)(b >> 48), (unsigned long long)(b & 0xffffffffffffULL));
}

int
topo_ci_profile_index(int slices)
{
	switch (slices) {
	case 1: return 0;
	case 2: return 1;
	case 3: return 2;
	case 4: return 3;
	case 7: return 4;
	case 8: return 5;
	case 6: return 6;
	default: return -1;
	}
}

/* ---- lookups ---- */

struct mig_profile *
topo_profile_by_id(struct gpu_info *g, unsigned id)
{
	for (int i = 0; i < g->nprofiles; i++)
		if (g->profiles[i].id == id)
			return &g->profiles[i];
	return NULL;
}

struct mig_profile *
topo_profile_by_name(struct gpu_info *g, const char *name)
{
	for (int i = 0; i < g->nprofiles; i++)
		if (strcmp(g->profiles[i].name, name) == 0)
			return &g->profiles[i];
	return NULL;
}

struct mig_gi *
topo_gi_by_id(struct gpu_info *g, unsigned id)
{
	for (int i = 0; i < g->ngi; i++)
		if (g->gi[i].id == id)
			return &g->gi[i];
	return NULL;
}

struct mig_ci *
topo_ci_by_id(struct mig_gi *gi, unsigned id)
{
	for (int i = 0; i < gi->nci; i++)
		if (gi->ci[i].id == id)
			return &gi->ci[i];
	return NULL;
}

int
topo_uuid_taken(const struct gpu_system *sys, const char *uuid)
{
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];

		if (strcasecmp(g->uuid, uuid) == 0)
			return 1;
		for (int j = 0; j < g->ngi; j++)
			for (int k = 0; k < g->gi[j].nci; k++)
				if (strcasecmp(g->gi[j].ci[k].uuid, uuid) == 0)
					return 1;
	}
	return 0;
}

/* The compute slices of a whole GPU: those of its largest profile (7; 4 on A30). */
static int
gpu_slices(const struct gpu_info *g)
{
	int max = 0;

	for (int i = 0; i < g->nprofiles; i++)
		if (g->profiles[i].slices > max)
			max = g->profiles[i].slices;
	return max;
}

void
topo_placements_str(const struct mig_profile *p, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nplacements && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%u+%u", i ? "," : "",
		    p->placements[i].start, p->placements[i].size);
}

int
topo_gi_fits(const struct gpu_info *g, const struct mig_profile *p, const struct mig_placement *pl)
{
	char list[128];
	int allowed = 0, used = 0, same = 0;

	for (int i = 0; i < p->nplacements; i++)
		if (p->placements[i].start == pl->start && p->placements[i].size == pl->size)
			allowed = 1;
	if (!allowed) {
		topo_placements_str(p, list, sizeof list);
		return err_set(EXIT_USAGE, "placement %u+%u is not one of profile %s's (%s)",
		    pl->start, pl->size, p->name, list);
	}
	for (int i = 0; i < g->ngi; i++) {
		const struct mig_gi *o = &g->gi[i];

		if (pl->start < o->placement.start + o->placement.size &&
		    o->placement.start < pl->start + pl->size)
			return err_set(EXIT_USAGE, "placement %u+%u overlaps GPU instance %u (%s at %u+%u)",
			    pl->start, pl->size, o->id, o->profile, o->placement.start, o->placement.size);
		for (int k = 0; k < g->nprofiles; k++)
			if (g->profiles[k].id == o->profile_id)
				used += g->profiles[k].slices;
		if (o->profile_id == p->id)
			same++;
	}
	if (used + p->slices > gpu_slices(g))
		return err_set(EXIT_USAGE, "not enough compute slices for %s (%d of %d in use)",
		    p->name, used, gpu_slices(g));
	if (same >= p->max_count)
		return err_set(EXIT_USAGE, "profile %s allows at most %d instance%s", p->name,
		    p->max_count, p->max_count == 1 ? "" : "s");
	return 0;
}

unsigned
topo_free_gi_id(const struct gpu_info *g)
{
	for (unsigned id = 1;; id++) {
		int taken = 0;

		for (int i = 0; i < g->ngi; i++)
			if (g->gi[i].id == id)
				taken = 1;
		if (!taken)
			return id;
	}
}

void
topo_gi_init(struct mig_gi *gi, unsigned id, const struct mig_profile *p, const struct mig_placement *pl)
{
	memset(gi, 0, sizeof *gi);
	gi->id = id;
	gi->profile_index = p->index;
	gi->profile_id = p->id;
	str_copy(gi->profile, p->name, sizeof gi->profile);
	gi->placement = *pl;
	gi->mem_total = p->mem_bytes;
	gi->sms = p->sms;
}

void
topo_ci_init(struct mig_ci *ci, unsigned id, const struct mig_gi *gi, const struct gpu_info *g,
    const struct mig_profile *p)
{
	memset(ci, 0, sizeof *ci);
	ci->id = id;
	ci->slices = p->slices;
	ci->profile_index = topo_ci_profile_index(p->slices);
	ci->sms = gi->sms;
	topo_mig_uuid(g->uuid, gi->id, id, ci->uuid, sizeof ci->uuid);
}
