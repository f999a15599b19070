/*
 * mig_table: the per-GPU geometry tables. Every valid set of new instances
 * (profiles at placements, around the busy instances that must stay) is
 * enumerated once; sets are few (a few thousand on a 7-slice GPU) and are
 * stored by their profile counts, with the fewest create/destroy operations
 * any placement of those counts needs. Identical GPUs share one table.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->at.start != y->at.start)
		return x->at.start < y->at.start ? -1 : 1;
	if (x->at.size != y->at.size)
		return x->at.size > y->at.size ? -1 : 1;
	return x->profile - y->profile;
}

int
mig_same_place(const struct mig_existing *e, int profile, struct mig_placement at)
{
	return e->profile == profile && e->at.start == at.start && e->at.size == at.size;
}

/*
 * Operations to reach busy + chosen from what exists: chosen instances that
 * match an idle one reuse it; other idle instances stay when they fit
 * around the rest (in order), else are destroyed.
 */
int
mig_count_ops(const struct mig_gpu *g, const struct gtable *t, const unsigned char *chosen, int n,
    int *keep_unused)
{
	int reused[MIG_MAX_INST] = {0}, count[MIG_MAX_PROFILES], slices = t->busy_slices, ops = 0;
	uint32_t used = t->busy_mask;

	memcpy(count, t->busy_count, sizeof count);
	for (int i = 0; i < n; i++) {
		const struct cand *c = &t->cand[chosen[i]];
		int hit = 0;

		for (int e = 0; e < g->nexisting && !hit; e++)
			if (!g->existing[e].busy && !reused[e] && mig_same_place(&g->existing[e], c->profile, c->at))
				reused[e] = hit = 1;
		ops += !hit;
		used |= c->mask;
		slices += g->profiles[c->profile].slices;
		count[c->profile]++;
	}
	for (int e = 0; e < g->nexisting; e++) {
		const struct mig_existing *x = &g->existing[e];
		uint32_t m = mig_slice_mask(x->at);
		int p = x->profile;

		if (keep_unused)
			keep_unused[e] = 0;
		if (x->busy || reused[e])
			continue;
		if (!(used & m) && slices + g->profiles[p].slices <= g->compute_slices &&
		    count[p] < g->profiles[p].max_count) {
			used |= m;
			slices += g->profiles[p].slices;
			count[p]++;
			if (keep_unused)
				keep_unused[e] = 1;
		} else {
			ops++;
		}
	}
	return ops;
}

struct enum_state {
	const struct mig_gpu *g;
	struct gtable *t;
	unsigned char chosen[MIG_MAX_INST];
	int n, slices, count[MIG_MAX_PROFILES], seq;
	uint32_t used;
	uint64_t key;
};

static void
enum_record(struct enum_state *s)
{
	struct geo *x;

	xgrow(&s->t->geo, &s->t->cap, s->t->ngeo + 1, sizeof *s->t->geo);
	x = &s->t->geo[s->t->ngeo++];
	x->key = s->key;
	x->ops = mig_count_ops(s->g, s->t, s->chosen, s->n, NULL);
	x->seq = s->seq++;
	x->n = s->n;
	memcpy(x->cand, s->chosen, sizeof x->cand);
}

static void
enum_from(struct enum_state *s, int next)
{
	enum_record(s);
	if (s->n == MIG_MAX_INST)
		return;
	for (int i = next; i < s->t->ncand; i++) {
		const struct cand *c = &s->t->cand[i];
		const struct mig_profile *pr = &s->g->profiles[c->profile];

		if ((s->used & c->mask) || s->slices + pr->slices > s->g->compute_slices ||
		    s->count[c->profile] >= pr->max_count || s->count[c->profile] >= 15)
			continue;
		s->chosen[s->n++] = (unsigned char)i;
		s->used |= c->mask;
		s->slices += pr->slices;
		s->count[c->profile]++;
		s->key += (uint64_t)1 << (4 * c->profile);
		enum_from(s, i + 1);
		s->key -= (uint64_t)1 << (4 * c->profile);
		s->count[c->profile]--;
		s->slices -= pr->slices;
		s->used &= ~c->mask;
		s->n--;
	}
}

static int
geo_cmp(const void *a, const void *b)
{
	const struct geo *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ops != y->ops)
		return x->ops - y->ops;
	return x->seq - y->seq;
}

static void
gtable_build(const struct mig_gpu *g, struct gtable *t)
{
	struct enum_state s;
	size_t w = 0;

	memset(t, 0, sizeof *t);
	for (int p = 0; p < g->nprofiles; p++)
		for (int k = 0; k < g->profiles[p].nplacements; k++) {
			struct cand *c = &t->cand[t->ncand];

			c->profile = p;
			c->at = g->profiles[p].placements[k];
			c->mask = mig_slice_mask(c->at);
			if (c->mask)
				t->ncand++;
		}
	qsort(t->cand, (size_t)t->ncand, sizeof *t->cand, cand_cmp);
	for (int e = 0; e < g->nexisting; e++)
		if (g->existing[e].busy) {
			t->busy_mask |= mig_slice_mask(g->existing[e].at);
			t->busy_slices += g->profiles[g->existing[e].profile].slices;
			t->busy_count[g->existing[e].profile]++;
		}
	memset(&s, 0, sizeof s);
	s.g = g;
	s.t = t;
	s.used = t->busy_mask;
	s.slices = t->busy_slices;
	memcpy(s.count, t->busy_count, sizeof s.count);
	if (t->busy_slices <= g->compute_slices)
		enum_from(&s, 0);
	/* keep the cheapest placement of each set of counts */
	qsort(t->geo, t->ngeo, sizeof *t->geo, geo_cmp);
	for (size_t i = 0; i < t->ngeo; i++)
		if (w == 0 || t->geo[w - 1].key != t->geo[i].key)
			t->geo[w++] = t->geo[i];
	t->ngeo = w;
}

const struct geo *
mig_gtable_find(const struct gtable *t, uint64_t key)
{
	size_t lo = 0, hi = t->ngeo;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->geo[mid].key == key)
			return &t->geo[mid];
		if (t->geo[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Has every row of t with instances of profile `from` a twin with those
 * instances of profile `to` instead, needing no more operations? Then `to`
 * does whatever `from` does, where their instances hold the same.
 */
int
mig_gtable_swaps(const struct gtable *t, int from, int to)
{
	for (size_t r = 0; r < t->ngeo; r++) {
		uint64_t key = t->geo[r].key, cf = key >> (4 * from) & 15, ct = key >> (4 * to) & 15;
		const struct geo *g;

		if (!cf)
			continue;
		if (cf + ct > 15)
			return 0;
		g = mig_gtable_find(t, key - (cf << (4 * from)) + (cf << (4 * to)));
		if (!g || g->ops > t->geo[r].ops)
			return 0;
	}
	return 1;
}

int
mig_gpu_twin(const struct mig_gpu *a, const struct mig_gpu *b)
{
	if (a->nprofiles != b->nprofiles || a->nexisting != b->nexisting ||
	    memcmp(a->profiles, b->profiles, sizeof a->profiles[0] * (size_t)a->nprofiles) != 0)
		return 0;
	for (int e = 0; e < a->nexisting; e++)
		if (a->existing[e].profile != b->existing[e].profile || a->existing[e].busy != b->existing[e].busy ||
		    a->existing[e].at.start != b->existing[e].at.start || a->existing[e].at.size != b->existing[e].at.size)
			return 0;
	return 1;
}

struct gtable *
mig_tables_build(const struct mig_gpu *gpus, int ngpus)
{
	struct gtable *t = xcalloc((size_t)ngpus + 1, sizeof *t);

	for (int g = 0; g < ngpus; g++) {
		int h;

		for (h = 0; h < g && !mig_gpu_twin(&gpus[h], &gpus[g]); h++)
			;
		if (h < g) {
			t[g] = t[h];
			t[g].shared = 1;
		} else {
			gtable_build(&gpus[g], &t[g]);
		}
	}
	return t;
}

void
mig_tables_free(struct gtable *t, int ngpus)
{
	for (int g = 0; g < ngpus; g++)
		if (!t[g].shared)
			free(t[g].geo);
	free(t);
}
