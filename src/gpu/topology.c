/*
 * topology: the simulated machine. Owns the topology format (parse and
 * canonical write, doc/topology.md) and the checks a MIG change must pass.
 * The parser and the mutators share the geometry checks, so a file can never
 * describe a machine the operations could not have built.
 */
#include "gpu/topology.h"
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

/* NVML_COMPUTE_INSTANCE_PROFILE_* of a CI spanning all slices of its GI. */
static int
ci_profile_index(int slices)
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

static struct mig_profile *
profile_by_id(struct gpu_info *g, unsigned id)
{
	for (int i = 0; i < g->nprofiles; i++)
		if (g->profiles[i].id == id)
			return &g->profiles[i];
	return NULL;
}

static struct mig_profile *
profile_by_name(struct gpu_info *g, const char *name)
{
	for (int i = 0; i < g->nprofiles; i++)
		if (strcmp(g->profiles[i].name, name) == 0)
			return &g->profiles[i];
	return NULL;
}

static struct mig_gi *
gi_by_id(struct gpu_info *g, unsigned id)
{
	for (int i = 0; i < g->ngi; i++)
		if (g->gi[i].id == id)
			return &g->gi[i];
	return NULL;
}

static struct mig_ci *
ci_by_id(struct mig_gi *gi, unsigned id)
{
	for (int i = 0; i < gi->nci; i++)
		if (gi->ci[i].id == id)
			return &gi->ci[i];
	return NULL;
}

/* Is uuid used anywhere in the machine (GPU or MIG)? */
static int
uuid_taken(const struct gpu_system *sys, const char *uuid)
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

static void
placements_str(const struct mig_profile *p, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < p->nplacements && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%u+%u", i ? "," : "",
		    p->placements[i].start, p->placements[i].size);
}

/*
 * Can an instance of profile p go at placement pl on g? The checks the
 * driver makes: an allowed placement, no overlap, compute slices and the
 * profile's count left. Message without location; the caller adds it.
 */
static int
gi_fits(const struct gpu_info *g, const struct mig_profile *p, const struct mig_placement *pl)
{
	char list[128];
	int allowed = 0, used = 0, same = 0;

	for (int i = 0; i < p->nplacements; i++)
		if (p->placements[i].start == pl->start && p->placements[i].size == pl->size)
			allowed = 1;
	if (!allowed) {
		placements_str(p, list, sizeof list);
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

static unsigned
free_gi_id(const struct gpu_info *g)
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

static void
gi_init(struct mig_gi *gi, unsigned id, const struct mig_profile *p, const struct mig_placement *pl)
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

static void
ci_init(struct mig_ci *ci, unsigned id, const struct mig_gi *gi, const struct gpu_info *g,
    const struct mig_profile *p)
{
	memset(ci, 0, sizeof *ci);
	ci->id = id;
	ci->slices = p->slices;
	ci->profile_index = ci_profile_index(p->slices);
	ci->sms = gi->sms;
	topo_mig_uuid(g->uuid, gi->id, id, ci->uuid, sizeof ci->uuid);
}

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

static int
kw_uuid(struct parser *p, char **w, int n)
{
	if (need_gpu(p, "uuid") < 0 || nwords(p, "uuid", n, 1) < 0 || once(p, "uuid", SEEN_UUID) < 0)
		return -1;
	if (strncasecmp(w[0], "GPU-", 4) != 0 || !w[0][4])
		return perr(p, "uuid '%s' does not start with GPU-", w[0]);
	if (uuid_taken(&p->t->sys, w[0]))
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
	if (ci_profile_index(pr.slices) < 0)
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
	if (gi_by_id(g, (unsigned)v))
		return perr(p, "GPU instance %ld given twice", v);
	pr = profile_by_name(g, a[1].val);
	if (!pr) {
		long id;

		if (parse_long(a[1].val, 0, 255, &id) == 0)
			pr = profile_by_id(g, (unsigned)id);
	}
	if (!pr)
		return perr(p, "gi profile '%s' is not a profile of GPU %d", a[1].val, g->index);
	if (placement(p, "gi placement", a[2].val, &pl) < 0)
		return -1;
	if (gi_fits(g, pr, &pl) < 0)
		return ploc(p);
	gi_init(&gi, (unsigned)v, pr, &pl);
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
	if (!(gi = gi_by_id(g, (unsigned)gid)))
		return perr(p, "ci: GPU %d has no GPU instance %ld (give its 'gi' line first)", g->index, gid);
	if (gi->nci >= 1)
		return perr(p, "ci: GPU instance %ld already has compute instance %u spanning it",
		    gid, gi->ci[0].id);
	ci_init(&ci, (unsigned)cid, gi, g, profile_by_id(g, gi->profile_id));
	if (a[2].val) {
		if (strncasecmp(a[2].val, "MIG-", 4) != 0 || !a[2].val[4])
			return perr(p, "ci uuid '%s' does not start with MIG-", a[2].val);
		if (word(p, "ci uuid", a[2].val, ci.uuid, sizeof ci.uuid) < 0)
			return -1;
	} else if (!(p->seen & SEEN_UUID)) {
		return perr(p, "ci without uuid= needs the GPU's 'uuid' line first (to derive one)");
	}
	if (uuid_taken(&p->t->sys, ci.uuid))
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
		if (!(gi = gi_by_id(g, (unsigned)gid)) || !ci_by_id(gi, (unsigned)cid))
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

		placements_str(p, list, sizeof list);
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
	if (!(p = profile_by_id(g, profile_id)))
		return err_set(EXIT_USAGE, "create GPU instance on GPU %d: no GPU instance profile has "
		    "id %u", gpu, profile_id);
	if (g->ngi >= TOPO_MAX_GI)
		return err_set(EXIT_USAGE, "create GPU instance %s on GPU %d: %d instances already",
		    p->name, gpu, g->ngi);
	if (where) {
		pl = *where;
		if (gi_fits(g, p, &pl) < 0)
			return err_prefix("create GPU instance %s at %u+%u on GPU %d", p->name, pl.start,
			    pl.size, gpu);
	} else {
		int i;

		for (i = 0; i < p->nplacements; i++)
			if (gi_fits(g, p, &p->placements[i]) == 0)
				break;
		if (i == p->nplacements)
			return err_set(EXIT_USAGE, "create GPU instance %s on GPU %d: no free placement",
			    p->name, gpu);
		pl = p->placements[i];
	}
	gi_init(&gi, free_gi_id(g), p, &pl);
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
	if (!(gi = gi_by_id(g, gi_id)))
		return err_set(EXIT_USAGE, "create compute instance on GPU %d: no GPU instance %u",
		    gpu, gi_id);
	if (gi->nci)
		return err_set(EXIT_USAGE, "create compute instance in GPU instance %u on GPU %d: "
		    "compute instance %u already spans it", gi_id, gpu, gi->ci[0].id);
	ci_init(&ci, 0, gi, g, profile_by_id(g, gi->profile_id));
	if (uuid_taken(&t->sys, ci.uuid))
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
	if (!(gi = gi_by_id(g, gi_id)) || !(ci = ci_by_id(gi, ci_id)))
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
	if (!(gi = gi_by_id(g, gi_id)))
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
