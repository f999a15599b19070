/*
 * gpuprint: the MIG profile table that `devices --profiles` and
 * `mig profiles` both print.
 */
#include "cmd/gpuprint.h"
#include "util/table.h"
#include "util/units.h"

/* start+size of each placement, comma-separated: the form topology files use */
static void
placements_text(const struct mig_profile *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < p->nplacements && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u+%u", k ? "," : "",
		    p->placements[k].start, p->placements[k].size);
}

static void
profile_row(struct table *t, const struct mig_profile *p)
{
	char id[16], idx[16], sl[16], mem[32], sms[16], max[16], ce[16], pl[256];

	snprintf(id, sizeof id, "%u", p->id);
	snprintf(idx, sizeof idx, "%d", p->index);
	snprintf(sl, sizeof sl, "%d", p->slices);
	snprintf(sms, sizeof sms, "%d", p->sms);
	snprintf(max, sizeof max, "%d", p->max_count);
	snprintf(ce, sizeof ce, "%d", p->copy_engines);
	format_size(p->mem_bytes, mem, sizeof mem);
	placements_text(p, pl, sizeof pl);
	table_row(t, p->name, id, idx, sl, mem, sms, max, ce, pl);
}

void
print_mig_profiles(FILE *f, const struct gpu_info *g)
{
	struct table t;

	fprintf(f, "GPU %d  %s  %s  (MIG %s)\n", g->index, g->uuid, g->name,
	    mig_mode_name(g->mig_current));
	if (g->nprofiles == 0) {
		fprintf(f, "  no MIG profiles: %s\n", g->mig_current == MIG_UNSUPPORTED ?
		    "MIG not supported" : "none reported");
		return;
	}
	table_init(&t, "lrrrrrrrl", 2);
	table_row(&t, "PROFILE", "ID", "INDEX", "SLICES", "MEMORY", "SMS", "MAX", "CE", "PLACEMENTS");
	for (int k = 0; k < g->nprofiles; k++)
		profile_row(&t, &g->profiles[k]);
	table_print(&t, f);
	table_free(&t);
}
