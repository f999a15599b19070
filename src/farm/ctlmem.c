/*
 * ctlmem: admission by device memory and the gate at the GPU's door
 * (ctlmem.h says what it answers from what). Arithmetic on the tasks'
 * readings and on the footprints seen; the caller owns time and processes.
 */
#include "farm/ctlmem.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A task's memory counts as grown when it rose this much over its peak. */
#define GROWTH 1.02
/* Tasks weighed at most per step (more wait for the next). */
#define ADMIT_MAX 1024

void
ctlmem_init(struct ctlmem *m, uint64_t fixed, double tick)
{
	memset(m, 0, sizeof *m);
	m->fixed = fixed;
	m->tick = tick;
}

void
ctlmem_add(struct ctlmem_dist *d, double v)
{
	d->v[d->next] = v;
	d->next = (d->next + 1) % CTLMEM_KEEP;
	if (d->n < CTLMEM_KEEP)
		d->n++;
}

static double
dist_min(const struct ctlmem_dist *d)
{
	double v = d->n > 0 ? d->v[0] : 0;

	for (int i = 1; i < d->n; i++)
		if (d->v[i] < v)
			v = d->v[i];
	return v;
}

double
ctlmem_progress(const struct ctlmem_task *t)
{
	return t->cpu >= 0 ? t->cpu : t->age;
}

void
ctlmem_seen(struct ctlmem *m, struct ctlmem_task *t, double now)
{
	if (t->mem > 0 && (t->peak == 0 || (double)t->mem > GROWTH * (double)t->peak)) {
		t->peak_t = now;
	}
	if (t->mem > t->peak)
		t->peak = t->mem;
	if (t->on_gpu && t->shown_t == 0) {
		t->shown_t = now;
		if (t->peak_t == 0)
			t->peak_t = now;
		t->reach = ctlmem_progress(t);
		/* the quickest reach bounds the gate: one that shows at its first reading says little */
		if (t->reach > 0) {
			ctlmem_add(&m->reach, t->reach);
			m->by_age = t->cpu < 0;
		}
	}
}

void
ctlmem_ended(struct ctlmem *m, const struct ctlmem_task *t, int ok, double now)
{
	(void)now;
	if (!ok || t->peak == 0)
		return;
	ctlmem_add(&m->fp, (double)t->peak);
	if (t->shown_t > 0 && t->peak_t - t->shown_t > m->grow)
		m->grow = t->peak_t - t->shown_t;
}

/*
 * Has t's memory stopped growing (for as long as tasks were seen to grow)?
 * A context alone is not a footprint: a task holding less has not settled.
 */
static int
settled(const struct ctlmem *m, const struct ctlmem_task *t, double now)
{
	return t->shown_t > 0 && t->peak >= CTLMEM_CONTEXT && now - t->peak_t >= CTLMEM_SETTLE &&
	    now - t->shown_t >= 1.2 * m->grow;
}

/* The footprints known: those learnt, and the settled tasks' peaks. */
struct stats {
	int k;
	double mean, var, max;
	const double *v;          /* the learnt ones */
	int nv;
	const double *extra;      /* settled peaks on the device */
	int nextra;
	uint64_t fixed;
};

static void
stats_of(const struct ctlmem *m, const double *extra, int nextra, struct stats *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof *s);
	s->v = m->fp.v;
	s->nv = m->fp.n;
	s->extra = extra;
	s->nextra = nextra;
	s->fixed = m->fixed;
	s->k = m->fp.n + nextra;
	for (int i = 0; i < s->k; i++) {
		double v = i < s->nv ? s->v[i] : extra[i - s->nv];

		sum += v;
		sq += v * v;
		if (v > s->max)
			s->max = v;
	}
	if (m->fixed) {
		s->mean = s->max = (double)m->fixed;
		s->var = 0;
	} else if (s->k > 0 && s->k < CTLMEM_FEW) {
		/*
		 * Few seen: the next may well be larger than the largest (it is
		 * with chance 1/(k+1)): each is planned well above it, the
		 * more so the fewer were seen.
		 */
		s->mean = s->max * (1 + 2.0 / s->k);
		s->var = 0;
	} else if (s->k > 0) {
		s->mean = sum / s->k;
		s->var = sq / s->k - s->mean * s->mean;
		if (s->var < 0)
			s->var = 0;
	}
}

static int
known(const struct stats *s)
{
	return s->fixed || s->k > 0;
}

/* The growth still to come of a task at c bytes: its mean and variance. */
static void
growth(const struct stats *s, double c, double *mean, double *var)
{
	double e = 0, e2 = 0;

	if (s->fixed || s->k < CTLMEM_FEW) {
		*mean = s->mean > c ? s->mean - c : 0;
		*var = 0;
		return;
	}
	for (int i = 0; i < s->k; i++) {
		double v = i < s->nv ? s->v[i] : s->extra[i - s->nv], x = v > c ? v : c;

		e += x;
		e2 += x * x;
	}
	e /= s->k;
	e2 /= s->k;
	*mean = e - c;
	*var = e2 - e * e > 0 ? e2 - e * e : 0;
}

static int
fits(double mean, double var, double room)
{
	return mean + CTLMEM_Z * sqrt(var) <= room;
}

/* Closest to the door first: the most progress. */
static int
by_progress(const void *a, const void *b)
{
	const struct ctlmem_task *x = *(const struct ctlmem_task *const *)a;
	const struct ctlmem_task *y = *(const struct ctlmem_task *const *)b;
	double px = ctlmem_progress(x), py = ctlmem_progress(y);

	return px > py ? -1 : px < py;
}

/*
 * The gate's threshold (progress at which a task not admitted stops), or -1
 * when it cannot hold tasks: no reach seen, or a reach so short that a task
 * would pass the door between two readings.
 */
static double
gate_at(const struct ctlmem *m)
{
	/* progress per second: a second of age a second; CPU time at what a start-up uses */
	double least, at, rate = m->by_age ? 1 : m->start_rate > 0.5 ? m->start_rate : 0.5;

	if (m->reach.n == 0)
		return -1;
	least = dist_min(&m->reach);
	at = CTLMEM_GATE * least;
	return least - at >= 2 * m->tick * rate ? at : -1;
}

/* What the admission adds up: the growth still to come of what is admitted. */
struct admit_sum {
	double mean, var;
	int shown, blocked;     /* tasks on the GPU; a task not known holds the rest back */
};

/* The tasks already on the GPU stay admitted; what the unsettled ones may still grow. */
static void
admit_shown(const struct ctlmem *m, struct ctlmem_task **t, int n, double now, const struct stats *s,
    struct admit_sum *a, struct ctlmem_room *out)
{
	for (int i = 0; i < n; i++) {
		struct ctlmem_task *x = t[i];
		double gm, gv;

		x->pause = 0;
		if (!x->on_gpu)
			continue;
		x->admit = 1;
		a->shown++;
		out->admitted++;
		if (settled(m, x, now))
			continue;
		if (!known(s)) {
			/* there, not settled, nothing known: what it will take is unknown */
			a->blocked = 1;
			continue;
		}
		growth(s, (double)x->peak, &gm, &gv);
		a->mean += gm;
		a->var += gv;
	}
}

/* The tasks at the door, closest first, while the room holds them; the gate pauses the rest. */
static void
admit_door(struct ctlmem_task **door, int ndoor, const struct stats *s, double room, double at,
    struct admit_sum *a, struct ctlmem_room *out)
{
	for (int i = 0; i < ndoor; i++) {
		struct ctlmem_task *x = door[i];

		/* nothing there and none admitted: one goes, or nothing ever would */
		if (!a->blocked &&
		    ((a->shown == 0 && out->admitted == 0) || fits(a->mean + s->mean, a->var + s->var, room))) {
			x->admit = 1;
			out->admitted++;
			a->mean += s->mean;
			a->var += s->var;
			continue;
		}
		/* in order: a task behind one that waits waits too */
		a->blocked = 1;
		x->admit = 0;
		out->waiting++;
		x->pause = at >= 0 && (x->paused || (ctlmem_progress(x) >= at && !x->on_gpu));
		if (at >= 0 && !x->pause && ctlmem_progress(x) >= 0.5 * at)
			out->watch = 1;
	}
}

/* More tasks it may start: those memory would admit now, and as many warming up. */
static void
admit_room(const struct stats *s, double room, struct admit_sum a, struct ctlmem_room *out)
{
	if (!a.blocked && known(s) && s->mean > 0)
		while (out->room < ADMIT_MAX && fits(a.mean + s->mean, a.var + s->var, room)) {
			out->room++;
			a.mean += s->mean;
			a.var += s->var;
		}
	/* warming up: once footprints are known (not while the first settle: those wait, no more start) */
	if (out->gate && known(s)) {
		int warm = out->admitted > 2 ? out->admitted : 2;

		out->room += warm > out->waiting ? warm - out->waiting : 0;
	}
}

void
ctlmem_admit(const struct ctlmem *m, struct ctlmem_task **t, int n, uint64_t mem_free, uint64_t mem_total,
    double now, struct ctlmem_room *out)
{
	struct ctlmem_task **door = xcalloc((size_t)(n > 0 ? n : 1), sizeof *door);
	double *extra = xcalloc((size_t)(n > 0 ? n : 1), sizeof *extra);
	double room, at = gate_at(m);
	int ndoor = 0, nextra = 0;
	struct admit_sum a = {0, 0, 0, 0};
	struct stats s;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++) {
		if (settled(m, t[i], now))
			extra[nextra++] = (double)t[i]->peak;
		if (!t[i]->on_gpu)
			door[ndoor++] = t[i];
	}
	stats_of(m, extra, nextra, &s);
	room = (double)mem_free - CTLMEM_RESERVE * (double)mem_total;
	admit_shown(m, t, n, now, &s, &a, out);
	qsort(door, (size_t)ndoor, sizeof *door, by_progress);
	out->gate = at >= 0;
	if (mem_total == 0 || (!known(&s) && a.shown == 0)) {
		/* the device does not say, or nothing is known yet: every task goes on; watch them */
		for (int i = 0; i < ndoor; i++)
			door[i]->admit = 1;
		out->admitted += ndoor;
		out->room = CTLMEM_ANY;
		out->watch = mem_total > 0 && ndoor > 0;
		out->planned = 0;
	} else {
		admit_door(door, ndoor, &s, room, at, &a, out);
		out->planned = a.mean + CTLMEM_Z * sqrt(a.var) > 0 ? (uint64_t)(a.mean + CTLMEM_Z * sqrt(a.var)) : 0;
		out->settling = out->gate && !known(&s);
		admit_room(&s, room, a, out);
	}
	free(door);
	free(extra);
}

uint64_t
ctlmem_expect(const struct ctlmem *m)
{
	struct stats s;

	stats_of(m, NULL, 0, &s);
	return s.mean > 0 ? (uint64_t)s.mean : 0;
}
