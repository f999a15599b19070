/*
 * topology_parse: the topology format (doc/topology.md) read into a struct
 * topology, every line checked, every error "file:line: what". The parser
 * works from memory so the fuzzer can drive it; topo_load() reads the file.
 */
#include "gpu/topology.h"
#include "gpu/topology_internal.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LINE 4096
#define MAX_WORDS 32
#define MAX_SIZE ((uint64_t)1 << 50) /* 1 PiB: keeps sizes exact through parse_size's double */

/* ---- the parser ---- */

struct parser {
	const char *file;
	int line;
	struct topology *t;
	struct gpu_info *g;       /* the GPU being described, or NULL */
	int gpu_line;             /* where it started */
	unsigned seen;            /* SEEN_* of the current GPU */
	int driver, cuda;
};

enum {
	SEEN_UUID = 1 << 0, SEEN_NAME = 1 << 1, SEEN_PCI = 1 << 2, SEEN_MEM = 1 << 3,
	SEEN_SMS = 1 << 4, SEEN_CC = 1 << 5, SEEN_MODE = 1 << 6, SEEN_MIG = 1 << 7,
	SEEN_UTIL = 1 << 8,
};

static int __attribute__((format(printf, 2, 3)))
perr(struct parser *p, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return err_set(EXIT_USAGE, "%s:%d: %s", p->file, p->line, what);
}

/* Add location to an error another function recorded. */
static int
ploc(struct parser *p)
{
	err_prefix("%s:%d", p->file, p->line);
	return -1;
}

struct attr {
	const char *key;
	const char *val; /* NULL: not given */
};

/*
 * Fill attrs[] (keys set by the caller, ending with a NULL key) from
 * key=value words. Unknown, repeated or malformed words are errors.
 */
static int
get_attrs(struct parser *p, const char *kw, char **w, int n, struct attr *a)
{
	for (int i = 0; i < n; i++) {
		char *eq = strchr(w[i], '=');
		int found = 0;

		if (!eq || eq == w[i])
			return perr(p, "'%s': expected key=value, got '%s'", kw, w[i]);
		*eq = '\0';
		for (struct attr *x = a; x->key; x++) {
			if (strcmp(x->key, w[i]) != 0)
				continue;
			if (x->val)
				return perr(p, "'%s': attribute '%s' given twice", kw, w[i]);
			x->val = eq + 1;
			found = 1;
		}
		if (!found) {
			char list[256];
			size_t off = 0;

			list[0] = '\0';
			for (struct attr *x = a; x->key && off < sizeof list; x++)
				off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
				    x == a ? "" : ", ", x->key);
			return perr(p, "'%s': unknown attribute '%s' (known: %s)", kw, w[i], list);
		}
	}
	return 0;
}

static int
need(struct parser *p, const char *kw, const struct attr *a, const char *key)
{
	for (; a->key; a++)
		if (strcmp(a->key, key) == 0 && a->val)
			return 0;
	return perr(p, "'%s': missing attribute '%s'", kw, key);
}

static int
num(struct parser *p, const char *what, const char *s, long min, long max, long *out)
{
	if (parse_long(s, min, max, out) < 0)
		return perr(p, "%s: '%s' is not a whole number from %ld to %ld", what, s, min, max);
	return 0;
}

static int
size(struct parser *p, const char *what, const char *s, uint64_t *out)
{
	if (parse_size(s, out) < 0) {
		err_prefix("%s:%d: %s", p->file, p->line, what);
		return -1;
	}
	if (*out > MAX_SIZE)
		return perr(p, "%s: '%s' is larger than 1 PiB", what, s);
	return 0;
}

static int
placement(struct parser *p, const char *what, const char *s, struct mig_placement *pl)
{
	char buf[32];
	char *plus;
	long a, b;

	if (str_copy(buf, s, sizeof buf) >= sizeof buf || !(plus = strchr(buf, '+')))
		return perr(p, "%s: '%s' is not a placement START+SIZE", what, s);
	*plus = '\0';
	if (parse_long(buf, 0, TOPO_MEM_SLICES - 1, &a) < 0 ||
	    parse_long(plus + 1, 1, TOPO_MEM_SLICES, &b) < 0 || a + b > TOPO_MEM_SLICES)
		return perr(p, "%s: '%s' is not a placement START+SIZE within %d memory slices",
		    what, s, TOPO_MEM_SLICES);
	pl->start = (unsigned)a;
	pl->size = (unsigned)b;
	return 0;
}

/* A one-word value into a fixed field; too long is an error, not a truncation. */
static int
word(struct parser *p, const char *what, const char *s, char *dst, size_t n)
{
	if (!*s)
		return perr(p, "%s: empty", what);
	if (str_copy(dst, s, n) >= n)
		return perr(p, "%s: '%.40s...' is longer than %zu characters", what, s, n - 1);
	return 0;
}

static int
need_gpu(struct parser *p, const char *kw)
{
	if (!p->g)
		return perr(p, "'%s' outside a GPU (put it after a 'gpu N' line)", kw);
	return 0;
}

static int
once(struct parser *p, const char *kw, unsigned bit)
{
	if (p->seen & bit)
		return perr(p, "'%s' given twice for GPU %d", kw, p->g->index);
	p->seen |= bit;
	return 0;
}

static int
nwords(struct parser *p, const char *kw, int n, int want)
{
	if (n != want)
		return perr(p, "'%s' takes %d value%s, got %d", kw, want, want == 1 ? "" : "s", n);
	return 0;
}

/* The GPU ends: required lines present and consistent. */
static int
gpu_end(struct parser *p)
{
	static const struct { unsigned bit; const char *kw; } req[] = {
		{SEEN_UUID, "uuid"}, {SEEN_NAME, "name"}, {SEEN_MEM, "memory"},
		{SEEN_SMS, "sms"}, {SEEN_CC, "compute-capability"},
	};
	struct gpu_info *g = p->g;

	if (!g)
		return 0;
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
		if (!(p->seen & req[i].bit))
			return err_set(EXIT_USAGE, "%s:%d: GPU %d has no '%s' line", p->file, p->gpu_line,
			    g->index, req[i].kw);
	if (g->nprofiles && g->mig_current == MIG_UNSUPPORTED)
		return err_set(EXIT_USAGE, "%s:%d: GPU %d has MIG profiles but no 'mig current=... "
		    "pending=...' line", p->file, p->gpu_line, g->index);
	p->g = NULL;
	return 0;
}

static int
kw_gpu(struct parser *p, char **w, int n)
{
	struct gpu_system *sys = &p->t->sys;
	long idx;

	if (nwords(p, "gpu", n, 1) < 0 || gpu_end(p) < 0)
		return -1;
	if (!p->driver || !p->cuda)
		return perr(p, "'driver' and 'cuda' lines must come before the first GPU");
	if (num(p, "gpu index", w[0], 0, TOPO_MAX_GPUS - 1, &idx) < 0)
		return -1;
	if (idx != sys->ngpus)
		return perr(p, "GPU %ld out of order: GPUs are listed by index from 0, expected %d",
		    idx, sys->ngpus);
	sys->gpus = xrealloc(sys->gpus, (size_t)(sys->ngpus + 1) * sizeof *sys->gpus);
	p->t->util = xrealloc(p->t->util, (size_t)(sys->ngpus + 1) * sizeof *p->t->util);
	p->g = &sys->gpus[sys->ngpus];
	memset(p->g, 0, sizeof *p->g);
	memset(&p->t->util[sys->ngpus], 0, sizeof p->t->util[0]);
	sys->ngpus++;
	p->g->index = (int)idx;
	p->g->compute_mode = COMPUTE_DEFAULT;
	p->g->mig_current = p->g->mig_pending = MIG_UNSUPPORTED;
	p->seen = 0;
	p->gpu_line = p->line;
	return 0;
}

/* n hex digits at s, then the character end. */
static int
hex_run(const char *s, int n, char end)
{
	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s[n] == end;
}

/*
 * A whole MIG UUID, as the driver gives one: "MIG-" and 8-4-4-4-12 hex
 * digits (R470 and later), or the old "MIG-GPU-<uuid>/GI/CI". A truncated
 * one would reach tasks as their CUDA_VISIBLE_DEVICES and name no device.
 */
static int
mig_uuid_ok(const char *u)
{
	const char *s = u + 4;

	if (strncasecmp(u, "MIG-GPU-", 8) == 0) {
		const char *a = strchr(u + 8, '/'), *b = a ? strchr(a + 1, '/') : NULL;

		return a && b && a > u + 8 && b > a + 1 && b[1] && strspn(a + 1, "0123456789") ==
		    (size_t)(b - a - 1) && strspn(b + 1, "0123456789") == strlen(b + 1);
	}
	return strncasecmp(u, "MIG-", 4) == 0 && hex_run(s, 8, '-') && hex_run(s + 9, 4, '-') &&
	    hex_run(s + 14, 4, '-') && hex_run(s + 19, 4, '-') && hex_run(s + 24, 12, '\0');
}

static int
kw_uuid(struct parser *p, char **w, int n)
{
	if (need_gpu(p, "uuid") < 0 || nwords(p, "uuid", n, 1) < 0 || once(p, "uuid", SEEN_UUID) < 0)
		return -1;
	if (strncasecmp(w[0], "GPU-", 4) != 0 || !w[0][4])
		return perr(p, "uuid '%s' does not start with GPU-", w[0]);
	if (topo_uuid_taken(&p->t->sys, w[0]))
		return perr(p, "duplicate UUID %s", w[0]);
	return word(p, "uuid", w[0], p->g->uuid, sizeof p->g->uuid);
}

static int
kw_pci(struct parser *p, char **w, int n)
{
	if (need_gpu(p, "pci") < 0 || nwords(p, "pci", n, 1) < 0 || once(p, "pci", SEEN_PCI) < 0)
		return -1;
	return word(p, "pci", w[0], p->g->pci_bus_id, sizeof p->g->pci_bus_id);
}

static int
kw_memory(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"total", NULL}, {"used", NULL}, {"reserved", NULL}, {NULL, NULL}};
	struct gpu_info *g = p->g;

	if (need_gpu(p, "memory") < 0 || once(p, "memory", SEEN_MEM) < 0 ||
	    get_attrs(p, "memory", w, n, a) < 0 || need(p, "memory", a, "total") < 0)
		return -1;
	if (size(p, "memory total", a[0].val, &g->mem_total) < 0 ||
	    (a[1].val && size(p, "memory used", a[1].val, &g->mem_used) < 0) ||
	    (a[2].val && size(p, "memory reserved", a[2].val, &g->mem_reserved) < 0))
		return -1;
	if (g->mem_total == 0)
		return perr(p, "memory total must not be 0");
	if (g->mem_used + g->mem_reserved > g->mem_total)
		return perr(p, "memory used plus reserved is more than total");
	g->mem_free = g->mem_total - g->mem_used - g->mem_reserved;
	return 0;
}

static int
kw_sms(struct parser *p, char **w, int n)
{
	long v;

	if (need_gpu(p, "sms") < 0 || nwords(p, "sms", n, 1) < 0 || once(p, "sms", SEEN_SMS) < 0 ||
	    num(p, "sms", w[0], 1, 1024, &v) < 0)
		return -1;
	p->g->sms = (int)v;
	return 0;
}

static int
kw_cc(struct parser *p, char **w, int n)
{
	char buf[16];
	char *dot;
	long maj, min;

	if (need_gpu(p, "compute-capability") < 0 || nwords(p, "compute-capability", n, 1) < 0 ||
	    once(p, "compute-capability", SEEN_CC) < 0)
		return -1;
	if (str_copy(buf, w[0], sizeof buf) >= sizeof buf || !(dot = strchr(buf, '.')))
		return perr(p, "compute-capability '%s' is not MAJOR.MINOR", w[0]);
	*dot = '\0';
	if (parse_long(buf, 1, 99, &maj) < 0 || parse_long(dot + 1, 0, 9, &min) < 0)
		return perr(p, "compute-capability '%s' is not MAJOR.MINOR", w[0]);
	p->g->cc_major = (int)maj;
	p->g->cc_minor = (int)min;
	return 0;
}

static int
kw_compute_mode(struct parser *p, char **w, int n)
{
	static const int modes[] = {COMPUTE_DEFAULT, COMPUTE_EXCLUSIVE_THREAD, COMPUTE_PROHIBITED,
	    COMPUTE_EXCLUSIVE_PROCESS};

	if (need_gpu(p, "compute-mode") < 0 || nwords(p, "compute-mode", n, 1) < 0 ||
	    once(p, "compute-mode", SEEN_MODE) < 0)
		return -1;
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(w[0], compute_mode_name(modes[i])) == 0) {
			p->g->compute_mode = modes[i];
			return 0;
		}
	return perr(p, "compute-mode '%s' is not default, exclusive-thread, prohibited or "
	    "exclusive-process", w[0]);
}

static int
mig_mode(struct parser *p, const char *what, const char *s, int *out)
{
	if (strcmp(s, "enabled") == 0)
		*out = MIG_ENABLED;
	else if (strcmp(s, "disabled") == 0)
		*out = MIG_DISABLED;
	else
		return perr(p, "%s: '%s' is not enabled or disabled", what, s);
	return 0;
}

static int
kw_mig(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"current", NULL}, {"pending", NULL}, {NULL, NULL}};

	if (need_gpu(p, "mig") < 0 || once(p, "mig", SEEN_MIG) < 0)
		return -1;
	if (p->g->nprofiles)
		return perr(p, "'mig' must come before the GPU's profiles");
	if (n == 1 && strcmp(w[0], "unsupported") == 0)
		return 0;
	if (get_attrs(p, "mig", w, n, a) < 0 || need(p, "mig", a, "current") < 0 ||
	    need(p, "mig", a, "pending") < 0)
		return -1;
	if (mig_mode(p, "mig current", a[0].val, &p->g->mig_current) < 0 ||
	    mig_mode(p, "mig pending", a[1].val, &p->g->mig_pending) < 0)
		return -1;
	return 0;
}

static int
kw_util(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"gpu", NULL}, {"memory", NULL}, {NULL, NULL}};
	struct topo_util *u;
	long g, m;

	if (need_gpu(p, "utilization") < 0 || once(p, "utilization", SEEN_UTIL) < 0 ||
	    get_attrs(p, "utilization", w, n, a) < 0 || need(p, "utilization", a, "gpu") < 0 ||
	    need(p, "utilization", a, "memory") < 0 ||
	    num(p, "utilization gpu", a[0].val, 0, 100, &g) < 0 ||
	    num(p, "utilization memory", a[1].val, 0, 100, &m) < 0)
		return -1;
	u = &p->t->util[p->t->sys.ngpus - 1];
	u->gpu = (unsigned)g;
	u->mem = (unsigned)m;
	return 0;
}

static int
placement_list(struct parser *p, const char *s, struct mig_profile *pr)
{
	char buf[256];
	char *tok, *save = NULL;

	if (str_copy(buf, s, sizeof buf) >= sizeof buf)
		return perr(p, "profile placements: list too long");
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct mig_placement pl;

		if (pr->nplacements >= MIG_MAX_PLACEMENTS)
			return perr(p, "profile placements: more than %d", MIG_MAX_PLACEMENTS);
		if (placement(p, "profile placements", tok, &pl) < 0)
			return -1;
		for (int i = 0; i < pr->nplacements; i++)
			if (pr->placements[i].start == pl.start)
				return perr(p, "profile placements: %s given twice", tok);
		pr->placements[pr->nplacements++] = pl;
	}
	if (pr->nplacements == 0)
		return perr(p, "profile placements: empty");
	return 0;
}

static int
kw_profile(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"index", NULL}, {"id", NULL}, {"name", NULL}, {"slices", NULL},
	    {"memory", NULL}, {"sms", NULL}, {"max", NULL}, {"placements", NULL}, {"ce", NULL},
	    {NULL, NULL}};
	static const char *req[] = {"index", "id", "name", "slices", "memory", "sms", "max",
	    "placements"};
	struct gpu_info *g = p->g;
	struct mig_profile pr;
	long v;

	if (need_gpu(p, "profile") < 0 || get_attrs(p, "profile", w, n, a) < 0)
		return -1;
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
		if (need(p, "profile", a, req[i]) < 0)
			return -1;
	if (g->mig_current == MIG_UNSUPPORTED)
		return perr(p, "'profile' on a GPU without MIG (give 'mig current=... pending=...' first)");
	if (g->ngi)
		return perr(p, "'profile' after a 'gi' line: list the profiles first");
	if (g->nprofiles >= TOPO_MAX_PROFILES)
		return perr(p, "more than %d profiles", TOPO_MAX_PROFILES);
	memset(&pr, 0, sizeof pr);
	if (num(p, "profile index", a[0].val, 0, 31, &v) < 0)
		return -1;
	pr.index = (int)v;
	if (num(p, "profile id", a[1].val, 0, 255, &v) < 0)
		return -1;
	pr.id = (unsigned)v;
	if (word(p, "profile name", a[2].val, pr.name, sizeof pr.name) < 0 ||
	    num(p, "profile slices", a[3].val, 1, 8, &v) < 0)
		return -1;
	pr.slices = (int)v;
	if (topo_ci_profile_index(pr.slices) < 0)
		return perr(p, "profile slices: %d is not 1, 2, 3, 4, 6, 7 or 8", pr.slices);
	if (size(p, "profile memory", a[4].val, &pr.mem_bytes) < 0 ||
	    num(p, "profile sms", a[5].val, 1, 1024, &v) < 0)
		return -1;
	pr.sms = (int)v;
	if (num(p, "profile max", a[6].val, 1, 8, &v) < 0)
		return -1;
	pr.max_count = (int)v;
	if (placement_list(p, a[7].val, &pr) < 0)
		return -1;
	pr.copy_engines = pr.slices;
	if (a[8].val) {
		if (num(p, "profile ce", a[8].val, 0, 16, &v) < 0)
			return -1;
		pr.copy_engines = (int)v;
	}
	if (pr.sms > g->sms && (p->seen & SEEN_SMS))
		return perr(p, "profile %s has more SMs (%d) than the GPU (%d)", pr.name, pr.sms, g->sms);
	for (int i = 0; i < g->nprofiles; i++) {
		const struct mig_profile *o = &g->profiles[i];

		if (o->index == pr.index || o->id == pr.id || strcmp(o->name, pr.name) == 0)
			return perr(p, "profile %s (index %d, id %u) repeats the index, id or name of "
			    "profile %s", pr.name, pr.index, pr.id, o->name);
	}
	g->profiles = xrealloc(g->profiles, (size_t)(g->nprofiles + 1) * sizeof *g->profiles);
	g->profiles[g->nprofiles++] = pr;
	return 0;
}

static int
kw_gi(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"id", NULL}, {"profile", NULL}, {"placement", NULL}, {"used", NULL},
	    {NULL, NULL}};
	struct gpu_info *g = p->g;
	struct mig_profile *pr;
	struct mig_placement pl;
	struct mig_gi gi;
	long v;

	if (need_gpu(p, "gi") < 0 || get_attrs(p, "gi", w, n, a) < 0 || need(p, "gi", a, "id") < 0 ||
	    need(p, "gi", a, "profile") < 0 || need(p, "gi", a, "placement") < 0)
		return -1;
	if (g->mig_current != MIG_ENABLED)
		return perr(p, "'gi' on GPU %d whose MIG mode is not current=enabled", g->index);
	if (g->ngi >= TOPO_MAX_GI)
		return perr(p, "more than %d GPU instances", TOPO_MAX_GI);
	if (num(p, "gi id", a[0].val, 0, 63, &v) < 0)
		return -1;
	if (topo_gi_by_id(g, (unsigned)v))
		return perr(p, "GPU instance %ld given twice", v);
	pr = topo_profile_by_name(g, a[1].val);
	if (!pr) {
		long id;

		if (parse_long(a[1].val, 0, 255, &id) == 0)
			pr = topo_profile_by_id(g, (unsigned)id);
	}
	if (!pr)
		return perr(p, "gi profile '%s' is not a profile of GPU %d", a[1].val, g->index);
	if (placement(p, "gi placement", a[2].val, &pl) < 0)
		return -1;
	if (topo_gi_fits(g, pr, &pl) < 0)
		return ploc(p);
	topo_gi_init(&gi, (unsigned)v, pr, &pl);
	if (a[3].val) {
		if (size(p, "gi used", a[3].val, &gi.mem_used) < 0)
			return -1;
		if (gi.mem_used > gi.mem_total)
			return perr(p, "gi used is more than the instance's memory");
	}
	g->gi = xrealloc(g->gi, (size_t)(g->ngi + 1) * sizeof *g->gi);
	g->gi[g->ngi++] = gi;
	return 0;
}

static int
kw_ci(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"gi", NULL}, {"id", NULL}, {"uuid", NULL}, {NULL, NULL}};
	struct gpu_info *g = p->g;
	struct mig_gi *gi;
	struct mig_ci ci;
	long gid, cid;

	if (need_gpu(p, "ci") < 0 || get_attrs(p, "ci", w, n, a) < 0 || need(p, "ci", a, "gi") < 0 ||
	    need(p, "ci", a, "id") < 0 || num(p, "ci gi", a[0].val, 0, 63, &gid) < 0 ||
	    num(p, "ci id", a[1].val, 0, MIG_MAX_CI - 1, &cid) < 0)
		return -1;
	if (!(gi = topo_gi_by_id(g, (unsigned)gid)))
		return perr(p, "ci: GPU %d has no GPU instance %ld (give its 'gi' line first)", g->index, gid);
	if (gi->nci >= 1)
		return perr(p, "ci: GPU instance %ld already has compute instance %u spanning it",
		    gid, gi->ci[0].id);
	topo_ci_init(&ci, (unsigned)cid, gi, g, topo_profile_by_id(g, gi->profile_id));
	if (a[2].val) {
		if (strncasecmp(a[2].val, "MIG-", 4) != 0 || !a[2].val[4])
			return perr(p, "ci uuid '%s' does not start with MIG-", a[2].val);
		if (!mig_uuid_ok(a[2].val))
			return perr(p, "ci uuid '%s' is not a whole MIG UUID (MIG- and 8-4-4-4-12 hex "
			    "digits)", a[2].val);
		if (word(p, "ci uuid", a[2].val, ci.uuid, sizeof ci.uuid) < 0)
			return -1;
	} else if (!(p->seen & SEEN_UUID)) {
		return perr(p, "ci without uuid= needs the GPU's 'uuid' line first (to derive one)");
	}
	if (topo_uuid_taken(&p->t->sys, ci.uuid))
		return perr(p, "duplicate UUID %s", ci.uuid);
	gi->ci[gi->nci++] = ci;
	return 0;
}

static int
kw_process(struct parser *p, char **w, int n)
{
	struct attr a[] = {{"pid", NULL}, {"name", NULL}, {"memory", NULL}, {"gi", NULL},
	    {"ci", NULL}, {NULL, NULL}};
	struct gpu_info *g = p->g;
	struct gpu_process pr;
	long v;

	if (need_gpu(p, "process") < 0 || get_attrs(p, "process", w, n, a) < 0 ||
	    need(p, "process", a, "pid") < 0 || need(p, "process", a, "name") < 0 ||
	    need(p, "process", a, "memory") < 0)
		return -1;
	if (g->nprocs >= TOPO_MAX_PROCS)
		return perr(p, "more than %d processes", TOPO_MAX_PROCS);
	memset(&pr, 0, sizeof pr);
	pr.gi_id = pr.ci_id = -1;
	if (num(p, "process pid", a[0].val, 1, 4194304, &v) < 0)
		return -1;
	pr.pid = (pid_t)v;
	for (int i = 0; i < g->nprocs; i++)
		if (g->procs[i].pid == pr.pid)
			return perr(p, "process %ld given twice on GPU %d", v, g->index);
	if (word(p, "process name", a[1].val, pr.name, sizeof pr.name) < 0 ||
	    size(p, "process memory", a[2].val, &pr.mem_used) < 0)
		return -1;
	if (!a[3].val != !a[4].val)
		return perr(p, "process: give both gi= and ci=, or neither");
	if (a[3].val) {
		struct mig_gi *gi;
		long gid, cid;

		if (num(p, "process gi", a[3].val, 0, 63, &gid) < 0 ||
		    num(p, "process ci", a[4].val, 0, MIG_MAX_CI - 1, &cid) < 0)
			return -1;
		if (!(gi = topo_gi_by_id(g, (unsigned)gid)) || !topo_ci_by_id(gi, (unsigned)cid))
			return perr(p, "process: GPU %d has no MIG device gi=%ld ci=%ld", g->index, gid, cid);
		pr.gi_id = (int)gid;
		pr.ci_id = (int)cid;
	}
	g->procs = xrealloc(g->procs, (size_t)(g->nprocs + 1) * sizeof *g->procs);
	g->procs[g->nprocs++] = pr;
	return 0;
}

static int
kw_fail(struct parser *p, char **w, int n)
{
	struct topology *t = p->t;
	long after;
	int op;

	if (n != 3 || strcmp(w[1], "after") != 0)
		return perr(p, "'fail' takes OP after N (e.g. fail create-gi after 2)");
	if ((op = topo_op_parse(w[0])) < 0)
		return perr(p, "fail: unknown op '%s' (set-mig-mode, create-gi, create-ci, destroy-ci, "
		    "destroy-gi)", w[0]);
	if (num(p, "fail after", w[2], 0, 1000000, &after) < 0)
		return -1;
	for (int i = 0; i < t->nfail; i++)
		if (t->fail[i].op == op)
			return perr(p, "fail %s given twice", w[0]);
	if (t->nfail >= TOPO_MAX_FAIL)
		return perr(p, "more than %d 'fail' lines", TOPO_MAX_FAIL);
	t->fail[t->nfail].op = op;
	t->fail[t->nfail].after = after;
	t->nfail++;
	return 0;
}

static int
kw_version(struct parser *p, const char *kw, char **w, int n, char *dst, size_t size, int *seen)
{
	if (p->g)
		return perr(p, "'%s' must come before the first GPU", kw);
	if (*seen)
		return perr(p, "'%s' given twice", kw);
	if (nwords(p, kw, n, 1) < 0 || word(p, kw, w[0], dst, size) < 0)
		return -1;
	*seen = 1;
	return 0;
}

/* The GPU's name: the rest of the line after the keyword, comment removed. */
static int
kw_name(struct parser *p, char *rest)
{
	char *hash;

	if (need_gpu(p, "name") < 0 || once(p, "name", SEEN_NAME) < 0)
		return -1;
	for (hash = rest; (hash = strchr(hash, '#')) != NULL; hash++)
		if (hash == rest || isspace((unsigned char)hash[-1])) {
			*hash = '\0';
			break;
		}
	rest = str_trim(rest);
	return word(p, "name", rest, p->g->name, sizeof p->g->name);
}

/* Split line into words, stopping at a word that starts with '#'. */
static int
split(struct parser *p, char *line, char **w)
{
	int n = 0;

	for (;;) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			return n;
		if (n == MAX_WORDS)
			return perr(p, "more than %d words on one line", MAX_WORDS);
		w[n++] = line;
		while (*line && *line != ' ' && *line != '\t')
			line++;
		if (*line)
			*line++ = '\0';
	}
}

static int
parse_line(struct parser *p, char *line)
{
	static const struct {
		const char *kw;
		int (*fn)(struct parser *, char **, int);
	} kws[] = {
		{"gpu", kw_gpu}, {"uuid", kw_uuid}, {"pci", kw_pci}, {"memory", kw_memory},
		{"sms", kw_sms}, {"compute-capability", kw_cc}, {"compute-mode", kw_compute_mode},
		{"mig", kw_mig}, {"utilization", kw_util}, {"profile", kw_profile}, {"gi", kw_gi},
		{"ci", kw_ci}, {"process", kw_process}, {"fail", kw_fail},
	};
	char *w[MAX_WORDS];
	char *s = line;
	int n;

	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "name", 4) == 0 && (s[4] == ' ' || s[4] == '\t'))
		return kw_name(p, s + 5);
	if ((n = split(p, line, w)) <= 0)
		return n;
	if (strcmp(w[0], "driver") == 0)
		return kw_version(p, "driver", w + 1, n - 1, p->t->sys.driver_version,
		    sizeof p->t->sys.driver_version, &p->driver);
	if (strcmp(w[0], "cuda") == 0)
		return kw_version(p, "cuda", w + 1, n - 1, p->t->sys.cuda_version,
		    sizeof p->t->sys.cuda_version, &p->cuda);
	for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
		if (strcmp(w[0], kws[i].kw) == 0)
			return kws[i].fn(p, w + 1, n - 1);
	if (strcmp(w[0], "name") == 0)
		return perr(p, "'name' needs a value");
	return perr(p, "unknown keyword '%.64s'", w[0]);
}

static int
header(struct parser *p, const char *line)
{
	char rest[32];

	if (strncmp(line, "gpupack-topology ", 17) != 0)
		return perr(p, "not a gpupack topology (the first line must be 'gpupack-topology 1')");
	str_copy(rest, line + 17, sizeof rest);
	if (strcmp(str_trim(rest), "1") != 0)
		return perr(p, "topology format version '%s' is not supported (this gpupack reads 1)",
		    str_trim(rest));
	return 0;
}

int
topo_parse(const char *name, const char *buf, size_t len, struct topology *t)
{
	struct parser p = {.file = name, .t = t};
	char line[MAX_LINE + 1];
	size_t off = 0;

	memset(t, 0, sizeof *t);
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;

		p.line++;
		if (n > MAX_LINE) {
			perr(&p, "line longer than %d characters", MAX_LINE);
			goto fail;
		}
		memcpy(line, buf + off, n);
		line[n] = '\0';
		off += n + (nl ? 1 : 0);
		if (memchr(line, '\0', n)) {
			perr(&p, "NUL byte in a text file");
			goto fail;
		}
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		if (p.line == 1) {
			if (header(&p, line) < 0)
				goto fail;
			continue;
		}
		if (parse_line(&p, line) < 0)
			goto fail;
	}
	if (p.line == 0) {
		p.line = 1;
		perr(&p, "empty file (the first line must be 'gpupack-topology 1')");
		goto fail;
	}
	if (gpu_end(&p) < 0)
		goto fail;
	if (!p.driver || !p.cuda) {
		perr(&p, "no '%s' line", p.driver ? "cuda" : "driver");
		goto fail;
	}
	if (t->sys.ngpus == 0) {
		perr(&p, "no 'gpu' line: a machine needs at least one GPU");
		goto fail;
	}
	snprintf(t->sys.backend, sizeof t->sys.backend, "sim:%s", name);
	return 0;
fail:
	topo_free(t);
	return -1;
}

int
topo_load(const char *path, struct topology *t)
{
	char *data;
	size_t len;
	int rc;

	memset(t, 0, sizeof *t);
	if (read_file(path, &data, &len) < 0)
		return -1;
	rc = topo_parse(path, data, len, t);
	free(data);
	return rc;
}

void
topo_free(struct topology *t)
{
	gpu_system_free(&t->sys);
	free(t->util);
	memset(t, 0, sizeof *t);
}
