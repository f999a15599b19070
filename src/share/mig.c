/*
 * mig: the MIG geometry planner and the request parsers.
 *
 * The search has two levels. For each GPU, every valid set of new instances
 * (profiles at placements, around the busy instances that must stay) is
 * enumerated once; sets are few (a few thousand on a 7-slice GPU) and are
 * stored by their profile counts, with the fewest create/destroy operations
 * any placement of those counts needs. Then a depth-first branch and bound
 * puts the request units, largest first, into instances: an instance already
 * opened (MPS sharing of small units), a new instance of some profile on some
 * GPU (allowed when the GPU's new counts are a stored set), or nowhere.
 * Everything here is pure: no backend calls.
 */
#include "share/mig.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- profiles */

void
mig_gpu_derive(struct mig_gpu *g)
{
	g->compute_slices = g->mem_slices = g->full_sms = 0;
	for (int p = 0; p < g->nprofiles; p++) {
		const struct mig_profile *pr = &g->profiles[p];

		if (pr->slices > g->compute_slices)
			g->compute_slices = pr->slices;
		if (pr->sms > g->full_sms)
			g->full_sms = pr->sms;
		for (int k = 0; k < pr->nplacements; k++) {
			int end = (int)(pr->placements[k].start + pr->placements[k].size);

			if (end > g->mem_slices)
				g->mem_slices = end;
		}
	}
}

int
mig_profile_find(const struct mig_gpu *g, const char *name)
{
	for (int p = 0; p < g->nprofiles; p++)
		if (strcasecmp(g->profiles[p].name, name) == 0)
			return p;
	return -1;
}

static uint32_t
slice_mask(struct mig_placement at)
{
	if (at.size == 0 || at.size > 32 || at.start >= 32 || at.start + at.size > 32)
		return 0;
	if (at.size == 32)
		return 0xffffffffu;
	return ((1u << at.size) - 1) << at.start;
}

static int
placement_allowed(const struct mig_profile *pr, struct mig_placement at)
{
	for (int k = 0; k < pr->nplacements; k++)
		if (pr->placements[k].start == at.start && pr->placements[k].size == at.size)
			return 1;
	return 0;
}

int
mig_geometry_valid(const struct mig_gpu *g, const int *profile,
    const struct mig_placement *at, int n, char *why, size_t whylen)
{
	int count[MIG_MAX_PROFILES] = {0}, slices = 0;
	uint32_t used = 0;
	char dummy[8];

	if (!why) {
		why = dummy;
		whylen = sizeof dummy;
	}
	for (int i = 0; i < n; i++) {
		const struct mig_profile *pr;
		uint32_t m;

		if (profile[i] < 0 || profile[i] >= g->nprofiles) {
			snprintf(why, whylen, "unknown profile");
			return 0;
		}
		pr = &g->profiles[profile[i]];
		if (!placement_allowed(pr, at[i])) {
			snprintf(why, whylen, "%s cannot be placed at %u+%u", pr->name, at[i].start, at[i].size);
			return 0;
		}
		m = slice_mask(at[i]);
		if (used & m) {
			snprintf(why, whylen, "%s at %u+%u overlaps another instance", pr->name,
			    at[i].start, at[i].size);
			return 0;
		}
		used |= m;
		slices += pr->slices;
		if (++count[profile[i]] > pr->max_count) {
			snprintf(why, whylen, "more than %d instances of %s", pr->max_count, pr->name);
			return 0;
		}
	}
	if (slices > g->compute_slices) {
		snprintf(why, whylen, "%d compute slices used, the GPU has %d", slices, g->compute_slices);
		return 0;
	}
	return 1;
}

/* ----------------------------------------------------------------- parsing */

static int
looks_like_profile(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= MIG_NAME_LEN || !isdigit((unsigned char)s[0]) || !strchr(s, '.'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '+' && *s != '-')
			return 0;
	return 1;
}

/* count and what are the two halves of a spec or the first fields of a line. */
static int
parse_class(const char *count, const char *what, struct mig_request *r)
{
	long n;
	uint64_t bytes;

	memset(r, 0, sizeof *r);
	if (parse_long(count, 1, MIG_MAX_REQUESTS, &n) < 0)
		return err_set(EXIT_USAGE, "count '%s' must be a whole number from 1 to %d", count,
		    MIG_MAX_REQUESTS);
	r->count = (int)n;
	if (parse_size(what, &bytes) == 0) {
		if (bytes == 0)
			return err_set(EXIT_USAGE, "memory '%s' must be more than 0", what);
		r->mem_bytes = bytes;
		return 0;
	}
	err_clear();
	if (!looks_like_profile(what))
		return err_set(EXIT_USAGE, "'%s' is neither a size (e.g. 20G) nor a profile name (e.g. 1g.10gb)",
		    what);
	str_copy(r->profile, what, sizeof r->profile);
	return 0;
}

int
mig_parse_spec(const char *spec, struct mig_request *r)
{
	char count[32];
	const char *x = strchr(spec, 'x');

	if (!x || x == spec || (size_t)(x - spec) >= sizeof count) {
		memset(r, 0, sizeof *r);
		return err_set(EXIT_USAGE, "request '%s': want COUNTxPROFILE (3x1g.10gb) or COUNTxMEMORY (4x20G)",
		    spec);
	}
	memcpy(count, spec, (size_t)(x - spec));
	count[x - spec] = '\0';
	if (parse_class(count, x + 1, r) < 0)
		return err_prefix("request '%s'", spec);
	str_copy(r->label, spec, sizeof r->label);
	return 0;
}

static int
parse_share(const char *s, double *share)
{
	double v;

	if (parse_double(s, &v) < 0 || !(v > 0) || v > 1)
		return err_set(EXIT_USAGE, "compute share '%s' must be a number above 0 and at most 1", s);
	*share = v;
	return 0;
}

/* One line, already stripped of its comment; blank lines give 0 with *got 0. */
static int
parse_line(char *line, struct mig_request *r, int *got)
{
	char *field[4], *save = NULL, *tok;
	int n = 0;

	*got = 0;
	for (tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == 3)
			return err_set(EXIT_USAGE, "too many fields (want COUNT MEMORY|PROFILE [SHARE])");
		field[n++] = tok;
	}
	if (n == 0)
		return 0;
	if (n == 1)
		return err_set(EXIT_USAGE, "too few fields (want COUNT MEMORY|PROFILE [SHARE])");
	if (parse_class(field[0], field[1], r) < 0)
		return -1;
	if (n == 3) {
		if (r->profile[0])
			return err_set(EXIT_USAGE, "a compute share goes with a memory size, not a profile");
		if (parse_share(field[2], &r->share) < 0)
			return -1;
	}
	*got = 1;
	return 0;
}

int
mig_parse_requests(const char *name, const char *text, struct mig_request **out, int *n)
{
	struct mig_request *v = NULL;
	size_t cap = 0;
	long units = 0;
	int lineno = 0;
	const char *p = text;

	*out = NULL;
	*n = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		struct mig_request r;
		char *line, *hash;
		int got, rc;

		lineno++;
		if (len > 4096)
			return err_set(EXIT_USAGE, "%s:%d: line too long", name, lineno);
		line = xstrndup(p, len);
		if (strlen(line) != len) {
			free(line);
			return err_set(EXIT_USAGE, "%s:%d: NUL byte in line", name, lineno);
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		rc = parse_line(line, &r, &got);
		free(line);
		if (rc < 0)
			return err_prefix("%s:%d", name, lineno);
		if (got) {
			units += r.count;
			if (units > MIG_MAX_REQUESTS)
				return err_set(EXIT_USAGE, "%s:%d: more than %d requests in all", name, lineno,
				    MIG_MAX_REQUESTS);
			snprintf(r.label, sizeof r.label, "%.40s:%d", name, lineno);
			xgrow(&v, &cap, (size_t)*n + 1, sizeof *v);
			v[(*n)++] = r;
			*out = v;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------- per-GPU geometry tables */

/* A placement a profile can take: the unit of enumeration. */
struct cand {
	int profile;
	struct mig_placement at;
	uint32_t mask;
};

/* One set of profile counts and the cheapest placement of it. */
struct geo {
	uint64_t key;                 /* 4 bits of count per profile */
	int ops;
	int seq;                      /* enumeration order, for stable ties */
	int n;
	unsigned char cand[MIG_MAX_INST];
};

struct gtable {
	int ncand;
	struct cand cand[MIG_MAX_PROFILES * MIG_MAX_PLACEMENTS];
	struct geo *geo;
	size_t ngeo, cap;
	/* what the busy instances take */
	uint32_t busy_mask;
	int busy_slices;
	int busy_count[MIG_MAX_PROFILES];
	int shared;                   /* geo belongs to an earlier GPU's table */
};

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

static int
same_place(const struct mig_existing *e, int profile, struct mig_placement at)
{
	return e->profile == profile && e->at.start == at.start && e->at.size == at.size;
}

/*
 * Operations to reach busy + chosen from what exists: chosen instances that
 * match an idle one reuse it; other idle instances stay when they fit
 * around the rest (in order), else are destroyed.
 */
static int
count_ops(const struct mig_gpu *g, const struct gtable *t, const unsigned char *chosen, int n,
    int *keep_unused)
{
	int reused[MIG_MAX_INST] = {0}, count[MIG_MAX_PROFILES], slices = t->busy_slices, ops = 0;
	uint32_t used = t->busy_mask;

	memcpy(count, t->busy_count, sizeof count);
	for (int i = 0; i < n; i++) {
		const struct cand *c = &t->cand[chosen[i]];
		int hit = 0;

		for (int e = 0; e < g->nexisting && !hit; e++)
			if (!g->existing[e].busy && !reused[e] && same_place(&g->existing[e], c->profile, c->at))
				reused[e] = hit = 1;
		ops += !hit;
		used |= c->mask;
		slices += g->profiles[c->profile].slices;
		count[c->profile]++;
	}
	for (int e = 0; e < g->nexisting; e++) {
		const struct mig_existing *x = &g->existing[e];
		uint32_t m = slice_mask(x->at);
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
	x->ops = count_ops(s->g, s->t, s->chosen, s->n, NULL);
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
			c->mask = slice_mask(c->at);
			if (c->mask)
				t->ncand++;
		}
	qsort(t->cand, (size_t)t->ncand, sizeof *t->cand, cand_cmp);
	for (int e = 0; e < g->nexisting; e++)
		if (g->existing[e].busy) {
			t->busy_mask |= slice_mask(g->existing[e].at);
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

static const struct geo *
gtable_find(const struct gtable *t, uint64_t key)
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

/* ------------------------------------------------------------------ search */

struct sunit {
	int req;
	uint64_t mem;                 /* requested memory (a named profile's on that GPU) */
	double share;
	int placeable;                /* fits some profile of some GPU */
};

struct open_inst {
	int profile;
	uint64_t mem_left;
	int sms_left;                 /* for units with a share */
	int nunits;
	int exclusive;                /* holds a unit that may not share */
};

struct gstate {
	uint64_t key;
	int nopen;
	struct open_inst open[MIG_MAX_INST];
};

struct search {
	const struct mig_gpu *gpus;
	int ngpus;
	const struct mig_request *reqs;
	struct gtable *tab;
	int *cls;                     /* symmetry class of each GPU */
	int *named;                   /* [unit * ngpus + gpu]: profile index, -1 none on that GPU, -2 not named */
	uint64_t *minmem;             /* smallest profile memory of each GPU */
	struct sunit *units;
	int nunits;
	long *suffix_placeable;
	uint64_t *suffix_small;       /* memory of units from u on that could share */
	/* for the bounds: what the units from u on need at the least */
	uint64_t *suffix_minwaste;    /* memory wasted by the big ones, each in its best-fitting profile */
	long *suffix_minsms;
	int *nbig;                    /* big (never shared) placeable units from u on */
	int *sumc, *summ;             /* [u * (nunits + 1) + k]: compute / memory slices of the k
	                                 least needy big units from u on; NULL when too many units */
	int freeC, freeM;             /* compute and memory slices not yet taken, all GPUs */
	int *psize;                   /* [g * MIG_MAX_PROFILES + p]: a profile's smallest placement */
	unsigned char *fit;           /* [(u * ngpus + g) * MIG_MAX_PROFILES + k]: fitting profiles, cheapest first */
	unsigned char *nfit;          /* [u * ngpus + g] */
	/* the current partial plan */
	struct gstate *gs;
	int *ag, *ai;
	int sat, sms;
	uint64_t waste_excl, resid_shared;
	/* the best so far */
	struct gstate *best_gs;
	int *best_ag, *best_ai;
	struct mig_score best;
	int have_best;                /* best holds a score (maybe another search's) */
	int found;                    /* best_* hold this search's plan */
	int ascending;                /* units least needy first */
	long nodes, limit;
	int aborted;
};

int
mig_score_better(const struct mig_score *a, const struct mig_score *b)
{
	if (a->satisfied != b->satisfied)
		return a->satisfied > b->satisfied;
	if (a->waste != b->waste)
		return a->waste < b->waste;
	if (a->sms != b->sms)
		return a->sms < b->sms;
	return a->ops < b->ops;
}

static int
need_sms(const struct mig_gpu *g, double share)
{
	if (share <= 0)
		return 0;
	return (int)ceil(share * g->full_sms - 1e-9);
}

static int
is_small(const struct search *s, int u, int g)
{
	return s->named[u * s->ngpus + g] == -2 && s->units[u].mem < s->minmem[g];
}

/* Could unit u live alone in an instance of profile p on GPU g? */
static int
fits_profile(const struct search *s, int u, int g, int p)
{
	const struct mig_profile *pr = &s->gpus[g].profiles[p];
	int named = s->named[u * s->ngpus + g];

	if (named != -2)
		return named == p;
	return s->units[u].mem <= pr->mem_bytes && need_sms(&s->gpus[g], s->units[u].share) <= pr->sms;
}

static void
leaf(struct search *s)
{
	struct mig_score sc = {s->sat, s->waste_excl + s->resid_shared, s->sms, 0};

	for (int g = 0; g < s->ngpus; g++) {
		const struct geo *x = gtable_find(&s->tab[g], s->gs[g].key);

		sc.ops += x ? x->ops : 0;
	}
	if (s->have_best && !mig_score_better(&sc, &s->best))
		return;
	s->best = sc;
	s->have_best = s->found = 1;
	memcpy(s->best_gs, s->gs, sizeof *s->gs * (size_t)s->ngpus);
	memcpy(s->best_ag, s->ag, sizeof *s->ag * (size_t)s->nunits);
	memcpy(s->best_ai, s->ai, sizeof *s->ai * (size_t)s->nunits);
}

/* The most k with sums[k] <= cap, sums ascending from sums[0] = 0. */
static int
most_within(const int *sums, int n, int cap)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (sums[mid] <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Can the rest still beat the best? The optimistic completion: every small
 * unit placed, as many big ones as the free slices of all GPUs could hold
 * (each in its least needy profile), and, when that is all of them, each
 * wasting and using at least what its best-fitting profile does.
 */
static int
promising(const struct search *s, int u)
{
	struct mig_score opt;
	uint64_t fill = s->suffix_small[u];
	int big = s->nbig[u], fit = big;

	if (!s->have_best)
		return 1;
	if (s->sumc) {
		const int *c = s->sumc + (size_t)u * (size_t)(s->nunits + 1);
		const int *m = s->summ + (size_t)u * (size_t)(s->nunits + 1);
		int fc = most_within(c, big, s->freeC), fm = most_within(m, big, s->freeM);

		fit = fc < fm ? fc : fm;
	}
	opt.satisfied = s->sat + (int)s->suffix_placeable[u] - (big - fit);
	opt.waste = s->waste_excl + (s->resid_shared > fill ? s->resid_shared - fill : 0);
	opt.sms = s->sms;
	opt.ops = 0;
	if (fit == big && opt.satisfied == s->best.satisfied) {
		/* a tie on the count needs every big unit placed */
		opt.waste += s->suffix_minwaste[u];
		opt.sms += (int)s->suffix_minsms[u];
	}
	return mig_score_better(&opt, &s->best);
}

/* Identical units (one request) go in non-decreasing (gpu, instance) order. */
static int
order_ok(const struct search *s, int u, int g, int i)
{
	if (u == 0 || s->units[u - 1].req != s->units[u].req)
		return 1;
	if (s->ag[u - 1] < 0)
		return 0;
	return g > s->ag[u - 1] || (g == s->ag[u - 1] && i >= s->ai[u - 1]);
}

static void search_unit(struct search *s, int u);

static void
try_existing(struct search *s, int u, int g, int i)
{
	struct open_inst *o = &s->gs[g].open[i];
	int need = need_sms(&s->gpus[g], s->units[u].share);
	uint64_t mem = s->units[u].mem;

	if (o->exclusive || !is_small(s, u, g) || mem > o->mem_left || need > o->sms_left)
		return;
	o->mem_left -= mem;
	o->sms_left -= need;
	o->nunits++;
	s->resid_shared -= mem;
	s->sat++;
	s->ag[u] = g;
	s->ai[u] = i;
	search_unit(s, u + 1);
	s->sat--;
	s->resid_shared += mem;
	o->nunits--;
	o->sms_left += need;
	o->mem_left += mem;
}

static void
try_new(struct search *s, int u, int g, int p)
{
	struct gstate *st = &s->gs[g];
	const struct mig_profile *pr = &s->gpus[g].profiles[p];
	uint64_t key = st->key + ((uint64_t)1 << (4 * p));
	int excl = !is_small(s, u, g);
	struct open_inst *o;

	if (st->nopen >= MIG_MAX_INST || ((st->key >> (4 * p)) & 15) == 15 || !gtable_find(&s->tab[g], key))
		return;
	o = &st->open[st->nopen++];
	o->profile = p;
	o->mem_left = pr->mem_bytes - s->units[u].mem;
	o->sms_left = pr->sms - need_sms(&s->gpus[g], s->units[u].share);
	o->nunits = 1;
	o->exclusive = excl;
	st->key = key;
	s->freeC -= pr->slices;
	s->freeM -= s->psize[g * MIG_MAX_PROFILES + p];
	if (excl)
		s->waste_excl += o->mem_left;
	else
		s->resid_shared += o->mem_left;
	s->sms += pr->sms;
	s->sat++;
	s->ag[u] = g;
	s->ai[u] = st->nopen - 1;
	search_unit(s, u + 1);
	s->sat--;
	s->sms -= pr->sms;
	if (excl)
		s->waste_excl -= o->mem_left;
	else
		s->resid_shared -= o->mem_left;
	st->key -= (uint64_t)1 << (4 * p);
	s->freeC += pr->slices;
	s->freeM += s->psize[g * MIG_MAX_PROFILES + p];
	st->nopen--;
}

/* An empty GPU is tried only when no earlier GPU of its class is empty. */
static int
first_of_class(const struct search *s, int g)
{
	if (s->gs[g].nopen > 0 || s->cls[g] < 0)
		return 1;
	for (int h = 0; h < g; h++)
		if (s->cls[h] == s->cls[g] && s->gs[h].nopen == 0)
			return 0;
	return 1;
}

/* Profiles of GPU g by memory, then SMs, then index: cheapest first. */
static int
profile_order(const struct mig_gpu *g, int *order)
{
	int n = g->nprofiles;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			const struct mig_profile *a = &g->profiles[order[j - 1]], *b = &g->profiles[order[j]];

			if (a->mem_bytes < b->mem_bytes || (a->mem_bytes == b->mem_bytes && a->sms <= b->sms))
				break;
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	return n;
}

static void
search_unit(struct search *s, int u)
{
	if (s->aborted)
		return;
	if (++s->nodes > s->limit) {
		s->aborted = 1;
		return;
	}
	if (u == s->nunits) {
		leaf(s);
		return;
	}
	if (!promising(s, u))
		return;
	if (s->units[u].placeable) {
		/* sharing an instance first: it wastes the least */
		for (int g = 0; g < s->ngpus; g++)
			for (int i = 0; is_small(s, u, g) && i < s->gs[g].nopen; i++)
				if (order_ok(s, u, g, i))
					try_existing(s, u, g, i);
		for (int g = 0; g < s->ngpus; g++) {
			size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

			if (!first_of_class(s, g) || !order_ok(s, u, g, s->gs[g].nopen))
				continue;
			for (int k = 0; k < s->nfit[ug]; k++)
				try_new(s, u, g, s->fit[ug * MIG_MAX_PROFILES + (size_t)k]);
		}
	}
	s->ag[u] = -1;
	s->ai[u] = -1;
	search_unit(s, u + 1);
}

/* ------------------------------------------------------------- the planner */

static int
unit_cmp(const void *a, const void *b)
{
	const struct sunit *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem > y->mem ? -1 : 1;
	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->req - y->req;
}

static int
unit_cmp_asc(const void *a, const void *b)
{
	const struct sunit *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->share != y->share)
		return x->share < y->share ? -1 : 1;
	return x->req - y->req;
}

/* Symmetry classes: GPUs with equal profile tables and no instances. */
static void
classify(struct search *s)
{
	for (int g = 0; g < s->ngpus; g++) {
		const struct mig_gpu *a = &s->gpus[g];

		s->cls[g] = -1;
		if (a->nexisting > 0)
			continue;
		s->cls[g] = g;
		for (int h = 0; h < g; h++) {
			const struct mig_gpu *b = &s->gpus[h];

			if (s->cls[h] >= 0 && b->nprofiles == a->nprofiles &&
			    memcmp(b->profiles, a->profiles, sizeof a->profiles[0] * (size_t)a->nprofiles) == 0) {
				s->cls[g] = s->cls[h];
				break;
			}
		}
	}
}

static int
check_requests(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    int *nunits)
{
	long total = 0;

	if (ngpus <= 0)
		return err_set(EXIT_USAGE, "no MIG-capable GPU selected");
	for (int r = 0; r < nreqs; r++) {
		int found = 0;

		if (reqs[r].count < 1)
			return err_set(EXIT_USAGE, "request %s: count must be at least 1", reqs[r].label);
		total += reqs[r].count;
		if (!reqs[r].profile[0])
			continue;
		for (int g = 0; g < ngpus; g++)
			found |= mig_profile_find(&gpus[g], reqs[r].profile) >= 0;
		if (!found)
			return err_set(EXIT_USAGE, "request %s: no selected GPU has a profile named '%s'",
			    reqs[r].label, reqs[r].profile);
	}
	if (total > MIG_MAX_REQUESTS)
		return err_set(EXIT_USAGE, "more than %d requests in all", MIG_MAX_REQUESTS);
	*nunits = (int)total;
	return 0;
}

/* Each unit's fitting profiles on each GPU, cheapest first. */
static void
make_fits(struct search *s)
{
	for (int g = 0; g < s->ngpus; g++) {
		int order[MIG_MAX_PROFILES], n = profile_order(&s->gpus[g], order);

		for (int p = 0; p < s->gpus[g].nprofiles; p++) {
			const struct mig_profile *pr = &s->gpus[g].profiles[p];
			int m = 0;

			for (int k = 0; k < pr->nplacements; k++)
				if (m == 0 || (int)pr->placements[k].size < m)
					m = (int)pr->placements[k].size;
			s->psize[g * MIG_MAX_PROFILES + p] = m;
		}
		for (int u = 0; u < s->nunits; u++) {
			size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

			for (int k = 0; k < n; k++)
				if (fits_profile(s, u, g, order[k]))
					s->fit[ug * MIG_MAX_PROFILES + s->nfit[ug]++] = (unsigned char)order[k];
		}
	}
}

/* A big unit: may share on no GPU. */
static int
is_big(const struct search *s, int u)
{
	for (int g = 0; g < s->ngpus; g++)
		if (is_small(s, u, g))
			return 0;
	return s->units[u].placeable;
}

/* The least a big unit needs anywhere: compute slices, memory slices, waste, SMs. */
static void
least_need(const struct search *s, int u, int *cs, int *ms, uint64_t *waste, int *sms)
{
	*cs = *ms = *sms = INT32_MAX;
	*waste = UINT64_MAX;
	for (int g = 0; g < s->ngpus; g++) {
		size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

		for (int k = 0; k < s->nfit[ug]; k++) {
			int p = s->fit[ug * MIG_MAX_PROFILES + (size_t)k];
			const struct mig_profile *pr = &s->gpus[g].profiles[p];
			uint64_t w = pr->mem_bytes - s->units[u].mem;

			*cs = pr->slices < *cs ? pr->slices : *cs;
			*ms = s->psize[g * MIG_MAX_PROFILES + p] < *ms ? s->psize[g * MIG_MAX_PROFILES + p] : *ms;
			*waste = w < *waste ? w : *waste;
			*sms = pr->sms < *sms ? pr->sms : *sms;
		}
	}
}

/* Insert v into the ascending list a[0..n) and rebuild its prefix sums. */
static void
insert_sorted(int *a, int n, int v, int *sums)
{
	int i = n;

	while (i > 0 && a[i - 1] > v) {
		a[i] = a[i - 1];
		i--;
	}
	a[i] = v;
	sums[0] = 0;
	for (i = 0; i <= n; i++)
		sums[i + 1] = sums[i] + a[i];
}

static void
make_bounds(struct search *s)
{
	size_t w = (size_t)s->nunits + 1;
	int *lc = xcalloc(w, sizeof *lc), *lm = xcalloc(w, sizeof *lm), n = 0;

	/* the slice sums cost nunits^2 ints: only for searches that size */
	if (s->nunits <= 512) {
		s->sumc = xcalloc(w * w, sizeof *s->sumc);
		s->summ = xcalloc(w * w, sizeof *s->summ);
	}
	for (int u = s->nunits - 1; u >= 0; u--) {
		int cs, ms, sms;
		uint64_t waste;

		s->suffix_minwaste[u] = s->suffix_minwaste[u + 1];
		s->suffix_minsms[u] = s->suffix_minsms[u + 1];
		if (s->sumc) {
			memcpy(s->sumc + (size_t)u * w, s->sumc + (size_t)(u + 1) * w, w * sizeof *s->sumc);
			memcpy(s->summ + (size_t)u * w, s->summ + (size_t)(u + 1) * w, w * sizeof *s->summ);
		}
		if (!is_big(s, u)) {
			s->nbig[u] = n;
			continue;
		}
		least_need(s, u, &cs, &ms, &waste, &sms);
		s->suffix_minwaste[u] += waste;
		s->suffix_minsms[u] += sms;
		if (s->sumc) {
			insert_sorted(lc, n, cs, s->sumc + (size_t)u * w);
			insert_sorted(lm, n, ms, s->summ + (size_t)u * w);
		}
		s->nbig[u] = ++n;
	}
	s->nbig[s->nunits] = 0;
	free(lc);
	free(lm);
}

static void
make_units(struct search *s)
{
	int u = 0;

	for (int r = 0; s->reqs && u < s->nunits; r++)
		for (int k = 0; k < s->reqs[r].count; k++, u++) {
			s->units[u].req = r;
			s->units[u].mem = s->reqs[r].mem_bytes;
			s->units[u].share = s->reqs[r].share;
			if (s->reqs[r].profile[0])
				for (int g = 0; g < s->ngpus; g++) {
					int p = mig_profile_find(&s->gpus[g], s->reqs[r].profile);

					if (p >= 0) {
						s->units[u].mem = s->gpus[g].profiles[p].mem_bytes;
						break;
					}
				}
		}
	qsort(s->units, (size_t)s->nunits, sizeof *s->units, s->ascending ? unit_cmp_asc : unit_cmp);
	for (u = 0; u < s->nunits; u++) {
		const struct mig_request *rq = &s->reqs[s->units[u].req];

		for (int g = 0; g < s->ngpus; g++)
			s->named[u * s->ngpus + g] = rq->profile[0] ? mig_profile_find(&s->gpus[g], rq->profile) : -2;
		for (int g = 0; g < s->ngpus && !s->units[u].placeable; g++)
			for (int p = 0; p < s->gpus[g].nprofiles && !s->units[u].placeable; p++)
				s->units[u].placeable = fits_profile(s, u, g, p);
	}
	s->suffix_placeable[s->nunits] = 0;
	s->suffix_small[s->nunits] = 0;
	for (u = s->nunits - 1; u >= 0; u--) {
		int small = 0;

		for (int g = 0; g < s->ngpus; g++)
			small |= is_small(s, u, g);
		s->suffix_placeable[u] = s->suffix_placeable[u + 1] + s->units[u].placeable;
		s->suffix_small[u] = s->suffix_small[u + 1] + (small ? s->units[u].mem : 0);
	}
	make_fits(s);
	make_bounds(s);
}

static void
search_init(struct search *s, const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs,
    int nunits, struct gtable *tab, long limit, int ascending)
{
	size_t nu = (size_t)nunits, ng = (size_t)ngpus;

	memset(s, 0, sizeof *s);
	s->gpus = gpus;
	s->ngpus = ngpus;
	s->reqs = reqs;
	s->nunits = nunits;
	s->limit = limit;
	s->ascending = ascending;
	s->tab = tab;
	s->cls = xcalloc(ng, sizeof *s->cls);
	s->minmem = xcalloc(ng, sizeof *s->minmem);
	s->named = xcalloc(nu * ng + 1, sizeof *s->named);
	s->units = xcalloc(nu + 1, sizeof *s->units);
	s->suffix_placeable = xcalloc(nu + 1, sizeof *s->suffix_placeable);
	s->suffix_small = xcalloc(nu + 1, sizeof *s->suffix_small);
	s->suffix_minwaste = xcalloc(nu + 1, sizeof *s->suffix_minwaste);
	s->suffix_minsms = xcalloc(nu + 1, sizeof *s->suffix_minsms);
	s->nbig = xcalloc(nu + 1, sizeof *s->nbig);
	s->psize = xcalloc(ng * MIG_MAX_PROFILES, sizeof *s->psize);
	s->fit = xcalloc(nu * ng * MIG_MAX_PROFILES + 1, 1);
	s->nfit = xcalloc(nu * ng + 1, 1);
	s->gs = xcalloc(ng, sizeof *s->gs);
	s->best_gs = xcalloc(ng, sizeof *s->best_gs);
	s->ag = xcalloc(nu + 1, sizeof *s->ag);
	s->ai = xcalloc(nu + 1, sizeof *s->ai);
	s->best_ag = xcalloc(nu + 1, sizeof *s->best_ag);
	s->best_ai = xcalloc(nu + 1, sizeof *s->best_ai);
	for (int g = 0; g < ngpus; g++) {
		s->minmem[g] = UINT64_MAX;
		for (int p = 0; p < gpus[g].nprofiles; p++)
			if (gpus[g].profiles[p].mem_bytes < s->minmem[g])
				s->minmem[g] = gpus[g].profiles[p].mem_bytes;
	}
	classify(s);
	make_units(s);
	for (int g = 0; g < ngpus; g++) {
		int busy_m = 0;

		for (uint32_t m = s->tab[g].busy_mask; m; m &= m - 1)
			busy_m++;
		s->freeC += gpus[g].compute_slices - s->tab[g].busy_slices;
		s->freeM += gpus[g].mem_slices - busy_m;
	}
}

static void
search_free(struct search *s)
{
	free(s->cls);
	free(s->minmem);
	free(s->named);
	free(s->units);
	free(s->suffix_placeable);
	free(s->suffix_small);
	free(s->suffix_minwaste);
	free(s->suffix_minsms);
	free(s->nbig);
	free(s->sumc);
	free(s->summ);
	free(s->psize);
	free(s->fit);
	free(s->nfit);
	free(s->gs);
	free(s->best_gs);
	free(s->ag);
	free(s->ai);
	free(s->best_ag);
	free(s->best_ai);
}

/* The plan's instances of GPU g: busy, chosen (new or reused), idle left, destroyed. */
static void
build_gpu(const struct search *s, int g, struct mig_gpu_plan *gp, int *open_to_inst)
{
	const struct mig_gpu *gpu = &s->gpus[g];
	const struct gtable *t = &s->tab[g];
	const struct gstate *st = &s->best_gs[g];
	const struct geo *x = gtable_find(t, st->key);
	int taken[MIG_MAX_INST] = {0}, reused[MIG_MAX_INST] = {0}, keep_unused[MIG_MAX_INST];
	int first_chosen;

	gp->ninst = 0;
	for (int e = 0; e < gpu->nexisting; e++)
		if (gpu->existing[e].busy) {
			struct mig_inst *in = &gp->inst[gp->ninst++];

			memset(in, 0, sizeof *in);
			in->profile = gpu->existing[e].profile;
			in->at = gpu->existing[e].at;
			in->state = MIG_INST_BUSY;
			in->gi_id = gpu->existing[e].gi_id;
		}
	first_chosen = gp->ninst;
	for (int i = 0; x && i < x->n; i++) {
		const struct cand *c = &t->cand[x->cand[i]];
		struct mig_inst *in = &gp->inst[gp->ninst++];

		memset(in, 0, sizeof *in);
		in->profile = c->profile;
		in->at = c->at;
		in->state = MIG_INST_NEW;
		for (int e = 0; e < gpu->nexisting; e++)
			if (!gpu->existing[e].busy && !reused[e] && same_place(&gpu->existing[e], c->profile, c->at)) {
				reused[e] = 1;
				in->state = MIG_INST_KEEP;
				in->gi_id = gpu->existing[e].gi_id;
				break;
			}
	}
	for (int o = 0; o < st->nopen; o++) {
		open_to_inst[o] = -1;
		for (int i = first_chosen; i < gp->ninst; i++)
			if (!taken[i - first_chosen] && gp->inst[i].profile == st->open[o].profile) {
				taken[i - first_chosen] = 1;
				open_to_inst[o] = i;
				break;
			}
	}
	if (x)
		count_ops(gpu, t, x->cand, x->n, keep_unused);
	else
		for (int e = 0; e < MIG_MAX_INST; e++)
			keep_unused[e] = 1; /* no valid geometry at all: touch nothing */
	for (int e = 0; e < gpu->nexisting; e++) {
		struct mig_inst *in;

		if (gpu->existing[e].busy || reused[e])
			continue;
		in = &gp->inst[gp->ninst++];
		memset(in, 0, sizeof *in);
		in->profile = gpu->existing[e].profile;
		in->at = gpu->existing[e].at;
		in->gi_id = gpu->existing[e].gi_id;
		in->state = keep_unused[e] ? MIG_INST_IDLE : MIG_INST_DESTROY;
	}
}

static void
why_unsatisfied(const struct search *s, int u, char *why, size_t len)
{
	const struct mig_request *rq = &s->reqs[s->units[u].req];
	uint64_t maxmem = 0;
	int maxsms = 0;
	char a[32], b[32];

	if (rq->profile[0]) {
		snprintf(why, len, "no room left for another %s on the selected GPUs", rq->profile);
		return;
	}
	for (int g = 0; g < s->ngpus; g++)
		for (int p = 0; p < s->gpus[g].nprofiles; p++) {
			const struct mig_profile *pr = &s->gpus[g].profiles[p];

			if (pr->mem_bytes > maxmem)
				maxmem = pr->mem_bytes;
			if (pr->sms - need_sms(&s->gpus[g], rq->share) > maxsms)
				maxsms = pr->sms - need_sms(&s->gpus[g], rq->share);
		}
	if (rq->mem_bytes > maxmem)
		snprintf(why, len, "%s is more memory than any profile has (at most %s)",
		    format_size(rq->mem_bytes, a, sizeof a), format_size(maxmem, b, sizeof b));
	else if (!s->units[u].placeable)
		snprintf(why, len, "no profile has both %s and a %.2f compute share",
		    format_size(rq->mem_bytes, a, sizeof a), rq->share);
	else
		snprintf(why, len, "no room left on the selected GPUs");
}

/* MPS limits for the units that share an instance. */
static void
share_limits(const struct search *s, struct mig_plan *p)
{
	for (int u = 0; u < p->nunits; u++) {
		struct mig_unit *un = &p->units[u];
		const struct mig_inst *in;
		const struct mig_gpu *g;
		int need;

		if (un->gpu < 0)
			continue;
		g = &s->gpus[un->gpu];
		in = &p->gpus[un->gpu].inst[un->inst];
		un->thread_pct = 100;
		un->mem_limit = 0;
		if (!in->shared)
			continue;
		un->mem_limit = s->units[u].mem;
		need = need_sms(g, s->units[u].share);
		if (need > 0) {
			int sms = g->profiles[in->profile].sms;

			un->thread_pct = (int)((100L * need + sms - 1) / sms);
			if (un->thread_pct > 100)
				un->thread_pct = 100;
		} else {
			un->thread_pct = 100 / in->nunits;
			if (un->thread_pct < 1)
				un->thread_pct = 1;
		}
	}
}

static void
build_plan(const struct search *s, struct mig_plan *p)
{
	p->ngpus = s->ngpus;
	p->gpus = xcalloc((size_t)s->ngpus, sizeof *p->gpus);
	p->nunits = s->nunits;
	p->units = xcalloc((size_t)s->nunits + 1, sizeof *p->units);
	p->score = s->best;
	p->optimal = !s->aborted;
	p->nodes = s->nodes;
	for (int g = 0; g < s->ngpus; g++) {
		int map[MIG_MAX_INST];

		build_gpu(s, g, &p->gpus[g], map);
		for (int u = 0; u < s->nunits; u++) {
			struct mig_inst *in;

			if (s->best_ag[u] != g)
				continue;
			p->units[u].gpu = g;
			p->units[u].inst = map[s->best_ai[u]];
			in = &p->gpus[g].inst[p->units[u].inst];
			in->nunits++;
			in->mem_used += s->units[u].mem;
			in->shared = in->nunits > 1;
		}
	}
	for (int u = 0; u < s->nunits; u++) {
		p->units[u].request = s->units[u].req;
		if (s->best_ag[u] < 0) {
			p->units[u].gpu = p->units[u].inst = -1;
			why_unsatisfied(s, u, p->units[u].why, sizeof p->units[u].why);
		}
	}
	share_limits(s, p);
}

/* Same profiles, no instances: the same table (the enumeration is the slow part). */
static int
same_table(const struct mig_gpu *a, const struct mig_gpu *b)
{
	return a->nexisting == 0 && b->nexisting == 0 && a->nprofiles == b->nprofiles &&
	    memcmp(a->profiles, b->profiles, sizeof a->profiles[0] * (size_t)a->nprofiles) == 0;
}

static struct gtable *
tables_build(const struct mig_gpu *gpus, int ngpus)
{
	struct gtable *t = xcalloc((size_t)ngpus + 1, sizeof *t);

	for (int g = 0; g < ngpus; g++) {
		int h;

		for (h = 0; h < g && !same_table(&gpus[h], &gpus[g]); h++)
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

static void
tables_free(struct gtable *t, int ngpus)
{
	for (int g = 0; g < ngpus; g++)
		if (!t[g].shared)
			free(t[g].geo);
	free(t);
}

/*
 * Two searches share the node budget. The first takes the least needy units
 * first, which satisfies many quickly when the GPUs cannot hold everything;
 * the second, largest first (better packing), starts from the first one's
 * score and keeps a plan only if strictly better. When either finishes, the
 * plan is optimal.
 */
int
mig_plan(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    long node_limit, struct mig_plan *out)
{
	struct search a, b, *s = &a;
	struct gtable *tab;
	int nunits = 0, optimal;
	long limit = node_limit > 0 ? node_limit : MIG_NODE_LIMIT;

	memset(out, 0, sizeof *out);
	memset(&b, 0, sizeof b);
	if (check_requests(gpus, ngpus, reqs, nreqs, &nunits) < 0)
		return -1;
	tab = tables_build(gpus, ngpus);
	search_init(&a, gpus, ngpus, reqs, nunits, tab, limit / 4 + 1, 1);
	search_unit(&a, 0);
	optimal = !a.aborted;
	if (a.aborted) {
		search_init(&b, gpus, ngpus, reqs, nunits, tab, limit - a.nodes + 1, 0);
		b.best = a.best;
		b.have_best = a.have_best;
		search_unit(&b, 0);
		optimal = !b.aborted;
		if (b.found || !a.found)
			s = &b;
	}
	if (!s->found) {
		/* cut off before the first leaf: nothing placed is always a plan */
		for (int u = 0; u < nunits; u++)
			s->best_ag[u] = s->best_ai[u] = -1;
		memset(s->best_gs, 0, sizeof *s->best_gs * (size_t)ngpus);
	}
	build_plan(s, out);
	out->optimal = optimal;
	out->nodes = a.nodes + b.nodes;
	if (!s->found) {
		memset(&out->score, 0, sizeof out->score);
		for (int g = 0; g < ngpus; g++)
			for (int i = 0; i < out->gpus[g].ninst; i++)
				out->score.ops += out->gpus[g].inst[i].state == MIG_INST_DESTROY;
	}
	search_free(&a);
	if (a.aborted)
		search_free(&b);
	tables_free(tab, ngpus);
	return 0;
}

void
mig_plan_free(struct mig_plan *p)
{
	free(p->gpus);
	free(p->units);
	memset(p, 0, sizeof *p);
}
