/*
 * wline: a small, strict reader for the flat JSON objects workers print.
 * Strict because a worker that printed garbage must fail its point loudly
 * rather than be read as zeros.
 */
#include "bench/wline.h"
#include "util/err.h"
#include "util/str.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	const char *p;
};

static void
skip_ws(struct rd *r)
{
	while (*r->p && isspace((unsigned char)*r->p))
		r->p++;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A string at r->p (after the opening quote is checked here); NUL escapes refused. */
static int
read_string(struct rd *r, struct sbuf *b)
{
	if (*r->p != '"')
		return err_set(EXIT_INTERNAL, "expected a string");
	r->p++;
	for (; *r->p && *r->p != '"'; r->p++) {
		unsigned cp = 0;

		if ((unsigned char)*r->p < 0x20)
			return err_set(EXIT_INTERNAL, "control character in a string");
		if (*r->p != '\\') {
			sbuf_addc(b, *r->p);
			continue;
		}
		r->p++;
		switch (*r->p) {
		case '"': case '\\': case '/': sbuf_addc(b, *r->p); break;
		case 'n': sbuf_addc(b, '\n'); break;
		case 't': sbuf_addc(b, '\t'); break;
		case 'r': sbuf_addc(b, '\r'); break;
		case 'b': sbuf_addc(b, '\b'); break;
		case 'f': sbuf_addc(b, '\f'); break;
		case 'u':
			for (int i = 1; i <= 4; i++) {
				int h = hexval(r->p[i]);

				if (h < 0)
					return err_set(EXIT_INTERNAL, "bad \\u escape");
				cp = cp * 16 + (unsigned)h;
			}
			r->p += 4;
			/* keep ASCII; anything else becomes '?': names only, never data */
			sbuf_addc(b, cp > 0 && cp < 0x80 ? (char)cp : '?');
			break;
		default:
			return err_set(EXIT_INTERNAL, "bad escape in a string");
		}
	}
	if (*r->p != '"')
		return err_set(EXIT_INTERNAL, "unterminated string");
	r->p++;
	return 0;
}

/* Skip a nested object or array, strings included. */
static int
skip_nested(struct rd *r)
{
	int depth = 0;

	do {
		if (*r->p == '"') {
			struct sbuf tmp;
			int rc;

			sbuf_init(&tmp);
			rc = read_string(r, &tmp);
			sbuf_free(&tmp);
			if (rc < 0)
				return -1;
			continue;
		}
		if (!*r->p)
			return err_set(EXIT_INTERNAL, "unterminated object or array");
		if (*r->p == '{' || *r->p == '[')
			depth++;
		else if (*r->p == '}' || *r->p == ']')
			depth--;
		r->p++;
	} while (depth > 0);
	return 0;
}

static int
read_value(struct rd *r, struct wval *v)
{
	char *end;

	if (*r->p == '"') {
		struct sbuf b;

		sbuf_init(&b);
		if (read_string(r, &b) < 0) {
			sbuf_free(&b);
			return -1;
		}
		v->type = WV_STR;
		v->str = sbuf_detach(&b);
		return 0;
	}
	if (*r->p == '{' || *r->p == '[') {
		v->type = WV_NESTED;
		return skip_nested(r);
	}
	if (strncmp(r->p, "true", 4) == 0 || strncmp(r->p, "false", 5) == 0) {
		v->type = WV_BOOL;
		v->num = *r->p == 't';
		r->p += *r->p == 't' ? 4 : 5;
		return 0;
	}
	if (strncmp(r->p, "null", 4) == 0) {
		v->type = WV_NULL;
		r->p += 4;
		return 0;
	}
	if (*r->p != '-' && !isdigit((unsigned char)*r->p))
		return err_set(EXIT_INTERNAL, "expected a value");
	v->num = strtod(r->p, &end);
	if (end == r->p || !isfinite(v->num))
		return err_set(EXIT_INTERNAL, "bad number");
	v->type = WV_NUM;
	r->p = end;
	return 0;
}

static int
read_member(struct rd *r, struct wline *w, size_t *cap)
{
	struct sbuf key;
	struct wval v = {0};

	sbuf_init(&key);
	if (read_string(r, &key) < 0)
		goto fail;
	skip_ws(r);
	if (*r->p != ':') {
		err_set(EXIT_INTERNAL, "expected ':' after a key");
		goto fail;
	}
	r->p++;
	skip_ws(r);
	if (read_value(r, &v) < 0)
		goto fail;
	v.key = sbuf_detach(&key);
	xgrow(&w->v, cap, (size_t)w->n + 1, sizeof *w->v);
	w->v[w->n++] = v;
	return 0;
fail:
	sbuf_free(&key);
	free(v.str);
	return -1;
}

int
wline_parse(const char *text, struct wline *w)
{
	struct rd r = {text};
	size_t cap = 0;

	memset(w, 0, sizeof *w);
	skip_ws(&r);
	if (*r.p != '{')
		return err_set(EXIT_INTERNAL, "not a JSON object");
	r.p++;
	skip_ws(&r);
	while (*r.p != '}') {
		if (w->n > 0) {
			if (*r.p != ',')
				goto bad;
			r.p++;
			skip_ws(&r);
		}
		if (read_member(&r, w, &cap) < 0)
			goto fail;
		skip_ws(&r);
	}
	r.p++;
	skip_ws(&r);
	if (*r.p)
		goto bad;
	return 0;
bad:
	err_set(EXIT_INTERNAL, "not a JSON object");
fail:
	wline_free(w);
	return -1;
}

void
wline_free(struct wline *w)
{
	for (int i = 0; i < w->n; i++) {
		free(w->v[i].key);
		free(w->v[i].str);
	}
	free(w->v);
	memset(w, 0, sizeof *w);
}

static const struct wval *
find(const struct wline *w, const char *key)
{
	/* the last one wins, as in most JSON readers */
	for (int i = w->n - 1; i >= 0; i--)
		if (strcmp(w->v[i].key, key) == 0)
			return &w->v[i];
	return NULL;
}

int
wline_num(const struct wline *w, const char *key, double *out)
{
	const struct wval *v = find(w, key);

	if (!v || v->type != WV_NUM)
		return -1;
	*out = v->num;
	return 0;
}

int
wline_bool(const struct wline *w, const char *key, int *out)
{
	const struct wval *v = find(w, key);

	if (!v || v->type != WV_BOOL)
		return -1;
	*out = (int)v->num;
	return 0;
}

const char *
wline_str(const struct wline *w, const char *key)
{
	const struct wval *v = find(w, key);

	return v && v->type == WV_STR ? v->str : NULL;
}
