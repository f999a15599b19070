/*
 * units: the one place where sizes and durations are parsed, so that every
 * command accepts the same spellings and refuses the same mistakes, and the
 * one convention for sizes: K M G T (with or without i, iB) are powers of
 * 1024, as Slurm and nvidia-smi write them; KB MB GB TB are powers of 1000,
 * as NVIDIA's MIG profile names are (a 1g.20gb holds 20096 MiB).
 */
#include "util/units.h"
#include "util/err.h"
#include "util/str.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a non-negative decimal number at *p; advance *p. */
static int
read_number(const char **p, double *v)
{
	const char *s = *p;
	double x = 0, scale = 1;
	int digits = 0;

	while (isdigit((unsigned char)*s)) {
		x = x * 10 + (*s++ - '0');
		digits++;
		if (x > 1e18)
			return -1;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			scale /= 10;
			x += (*s++ - '0') * scale;
			digits++;
		}
	}
	if (!digits)
		return -1;
	*v = x;
	*p = s;
	return 0;
}

int
parse_size(const char *s, uint64_t *bytes)
{
	const char *p = s;
	double v, mult;

	if (!s || read_number(&p, &v) < 0)
		return err_set(EXIT_USAGE, "size '%s' is not a number with a unit (e.g. 512M, 10G)", s ? s : "");
	switch (toupper((unsigned char)*p)) {
	case 'K': mult = 1024.0; break;
	case 'M': mult = 1024.0 * 1024; break;
	case 'G': mult = 1024.0 * 1024 * 1024; break;
	case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
	case 'B': mult = 1; break;
	case '\0':
		if (v == 0) {
			*bytes = 0;
			return 0;
		}
		return err_set(EXIT_USAGE, "size '%s' has no unit (K, M, G or T)", s);
	default:
		return err_set(EXIT_USAGE, "size '%s' has an unknown unit (use K, M, G or T)", s);
	}
	if (mult > 1) {
		p++;
		if (*p == 'i' || *p == 'I') {
			p++;
			if (*p == 'B' || *p == 'b')
				p++;
		} else if (*p == 'B' || *p == 'b') {
			/* KB MB GB TB: the SI units, powers of 1000 (as NVIDIA's MIG profile names) */
			p++;
			for (double m = mult; m > 1; m /= 1024)
				v *= 1000.0 / 1024.0;
		}
	} else {
		p++;
	}
	if (*p)
		return err_set(EXIT_USAGE, "size '%s' has trailing characters after its unit", s);
	v *= mult;
	if (v >= 4611686018427387904.0) /* 2^62 */
		return err_set(EXIT_USAGE, "size '%s' is too large", s);
	*bytes = (uint64_t)floor(v + 1e-6 * (v > 1e6 ? 1 : 0));
	return 0;
}

int
parse_duration(const char *s, double *seconds)
{
	const char *p = s;
	double total = 0, v;
	int pairs = 0;

	if (!s || !*s)
		return err_set(EXIT_USAGE, "duration '' is empty");
	while (*p) {
		double mult;

		if (read_number(&p, &v) < 0)
			return err_set(EXIT_USAGE, "duration '%s' is not a number with a unit (e.g. 30s, 5m, 250ms)", s);
		if (*p == '\0' && pairs == 0) {
			mult = 1;
		} else if (strncmp(p, "ms", 2) == 0) {
			mult = 0.001;
			p += 2;
		} else if (*p == 's') {
			mult = 1;
			p++;
		} else if (*p == 'm') {
			mult = 60;
			p++;
		} else if (*p == 'h') {
			mult = 3600;
			p++;
		} else if (*p == 'd') {
			mult = 86400;
			p++;
		} else {
			return err_set(EXIT_USAGE, "duration '%s' has an unknown unit (use ms, s, m, h or d)", s);
		}
		total += v * mult;
		pairs++;
	}
	if (total > 1e9)
		return err_set(EXIT_USAGE, "duration '%s' is too long", s);
	*seconds = total;
	return 0;
}

char *
format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	else if (v >= 100 || v == floor(v))
		snprintf(buf, size, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
	return buf;
}

char *
format_size_mps(uint64_t bytes, char *buf, size_t size)
{
	if (bytes && bytes % GIB(1) == 0)
		snprintf(buf, size, "%lluG", (unsigned long long)(bytes >> 30));
	else
		snprintf(buf, size, "%lluM", (unsigned long long)(bytes >= MIB(1) ? bytes >> 20 : 1));
	return buf;
}

/* ---- GNU parallel's numbers with unit prefixes ------------------------- */

struct arith {
	const char *p;
	int depth;
	int bad;
};

static double arith_sum(struct arith *a);

static void
arith_space(struct arith *a)
{
	while (*a->p == ' ' || *a->p == '\t')
		a->p++;
}

static double
arith_primary(struct arith *a)
{
	char *end;
	double v;

	arith_space(a);
	if (*a->p == '(') {
		if (++a->depth > 64) {
			a->bad = 1;
			return 0;
		}
		a->p++;
		v = arith_sum(a);
		arith_space(a);
		if (*a->p != ')')
			a->bad = 1;
		else
			a->p++;
		a->depth--;
		return v;
	}
	if (!((*a->p >= '0' && *a->p <= '9') || *a->p == '.')) {
		a->bad = 1;
		return 0;
	}
	/* digits and one dot, as perl's numeric literals (no exponent: 'e' was a prefix) */
	v = 0;
	end = (char *)a->p;
	{
		double scale = 0.1;
		int dot = 0, digits = 0;

		for (; (*end >= '0' && *end <= '9') || (*end == '.' && !dot); end++) {
			if (*end == '.') {
				dot = 1;
			} else if (!dot) {
				v = v * 10 + (*end - '0');
				digits++;
			} else {
				v += (*end - '0') * scale;
				scale /= 10;
				digits++;
			}
		}
		if (!digits)
			a->bad = 1;
	}
	a->p = end;
	return v;
}

/* unary minus binds looser than ** (perl: -2**2 is -4) */
static double
arith_unary(struct arith *a)
{
	double v;

	arith_space(a);
	if (*a->p == '-' || *a->p == '+') {
		int neg = *a->p == '-';

		if (++a->depth > 64) {
			a->bad = 1;
			return 0;
		}
		a->p++;
		v = arith_unary(a);
		a->depth--;
		return neg ? -v : v;
	}
	v = arith_primary(a);
	arith_space(a);
	if (a->p[0] == '*' && a->p[1] == '*') {
		if (++a->depth > 64) {
			a->bad = 1;
			return 0;
		}
		a->p += 2;
		v = pow(v, arith_unary(a));
		a->depth--;
	}
	return v;
}

static double
arith_product(struct arith *a)
{
	double v = arith_unary(a);

	for (;;) {
		char op;
		double r;

		arith_space(a);
		op = *a->p;
		if (!(op == '/' || op == '%' || (op == '*' && a->p[1] != '*')))
			return v;
		a->p++;
		r = arith_unary(a);
		if ((op == '/' || op == '%') && r == 0) {
			a->bad = 1;   /* perl: Illegal division by zero */
			return 0;
		}
		if (op == '*')
			v *= r;
		else if (op == '/')
			v /= r;
		else
			v = fmod(trunc(v), trunc(r));
	}
}

static double
arith_sum(struct arith *a)
{
	double v = arith_product(a);

	for (;;) {
		char op;

		arith_space(a);
		op = *a->p;
		if (op != '+' && op != '-')
			return v;
		a->p++;
		if (op == '+')
			v += arith_product(a);
		else
			v -= arith_product(a);
	}
}

int
parse_prefixed(const char *s, double *out)
{
	/* parallel's multiply_binary_prefix, in its order: "ki" before "K" before "k" */
	static const char binary[] = "KMGTPEZYX", decimal[] = "kmgtpezyx";
	struct sbuf b;
	struct arith a;
	double v;

	if (strlen(s) > 256)
		return err_set(EXIT_USAGE, "'%.20s...': too long for a number", s);
	sbuf_init(&b);
	for (const char *p = s; *p; p++) {
		const char *bi = *p ? strchr(binary, toupper((unsigned char)*p)) : NULL;
		const char *de = *p ? strchr(decimal, *p) : NULL;
		int times;

		if (bi && (p[1] == 'i' || p[1] == 'I')) {
			times = (int)(bi - binary) + 1;
			for (int i = 0; i < times; i++)
				sbuf_add(&b, "*1024");
			p++;
		} else if (bi && isupper((unsigned char)*p)) {
			times = (int)(bi - binary) + 1;
			for (int i = 0; i < times; i++)
				sbuf_add(&b, "*1024");
		} else if (de) {
			times = (int)(de - decimal) + 1;
			for (int i = 0; i < times; i++)
				sbuf_add(&b, "*1000");
		} else {
			sbuf_addc(&b, *p);
		}
	}
	a = (struct arith){b.buf ? b.buf : "", 0, 0};
	v = arith_sum(&a);
	arith_space(&a);
	if (a.bad || *a.p || !isfinite(v)) {
		sbuf_free(&b);
		return err_set(EXIT_USAGE, "'%s': not a number (GNU parallel's: 10, 1k, 2M, 1k+1k; "
		    "k m g t are 1000s, K M G T 1024s)", s);
	}
	sbuf_free(&b);
	*out = v;
	return 0;
}
