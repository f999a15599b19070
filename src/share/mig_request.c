/*
 * mig_request: the request parsers: one spec (COUNTxPROFILE, COUNTxMEMORY)
 * and request files (COUNT MEMORY|PROFILE [SHARE] a line). Profile names
 * are checked later, against the GPUs, by the planner.
 */
#include "share/mig.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
