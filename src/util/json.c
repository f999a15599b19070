/*
 * json: the writer behind every --json. It tracks commas per nesting level
 * so that callers write members in order and never think about separators.
 */
#include "util/json.h"
#include "util/err.h"

#include <math.h>
#include <string.h>

void
json_init(struct json *j, int pretty)
{
	memset(j, 0, sizeof *j);
	sbuf_init(&j->out);
	j->pretty = pretty;
}

void
json_free(struct json *j)
{
	sbuf_free(&j->out);
}

void
json_quote(struct sbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	sbuf_addc(b, '"');
	for (; *p; p++) {
		switch (*p) {
		case '"': sbuf_add(b, "\\\""); break;
		case '\\': sbuf_add(b, "\\\\"); break;
		case '\n': sbuf_add(b, "\\n"); break;
		case '\r': sbuf_add(b, "\\r"); break;
		case '\t': sbuf_add(b, "\\t"); break;
		default:
			if (*p < 0x20)
				sbuf_printf(b, "\\u%04x", *p);
			else
				sbuf_addc(b, (char)*p);
		}
	}
	sbuf_addc(b, '"');
}

static void
indent(struct json *j)
{
	if (!j->pretty)
		return;
	sbuf_addc(&j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		sbuf_add(&j->out, "  ");
}

/* Separator, indentation and "key": before a new member. */
static void
member(struct json *j, const char *key)
{
	if (j->depth > 0 && j->count[j->depth - 1]++ > 0)
		sbuf_addc(&j->out, ',');
	if (j->depth > 0)
		indent(j);
	if (key) {
		json_quote(&j->out, key);
		sbuf_add(&j->out, j->pretty ? ": " : ":");
	}
}

static void
open_level(struct json *j, const char *key, char c)
{
	member(j, key);
	sbuf_addc(&j->out, c);
	if (j->depth < JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

static void
close_level(struct json *j, char c)
{
	int had = j->depth > 0 && j->depth <= JSON_MAX_DEPTH && j->count[j->depth - 1] > 0;

	j->depth--;
	if (had)
		indent(j);
	sbuf_addc(&j->out, c);
}

void json_obj_begin(struct json *j, const char *key) { open_level(j, key, '{'); }
void json_obj_end(struct json *j) { close_level(j, '}'); }
void json_arr_begin(struct json *j, const char *key) { open_level(j, key, '['); }
void json_arr_end(struct json *j) { close_level(j, ']'); }

void
json_str(struct json *j, const char *key, const char *val)
{
	member(j, key);
	if (val)
		json_quote(&j->out, val);
	else
		sbuf_add(&j->out, "null");
}

void
json_int(struct json *j, const char *key, long long val)
{
	member(j, key);
	sbuf_printf(&j->out, "%lld", val);
}

void
json_uint(struct json *j, const char *key, unsigned long long val)
{
	member(j, key);
	sbuf_printf(&j->out, "%llu", val);
}

void
json_double(struct json *j, const char *key, double val)
{
	member(j, key);
	if (isnan(val) || isinf(val))
		sbuf_add(&j->out, "null");
	else
		sbuf_printf(&j->out, "%.6g", val);
}

void
json_bool(struct json *j, const char *key, int val)
{
	member(j, key);
	sbuf_add(&j->out, val ? "true" : "false");
}

void
json_null(struct json *j, const char *key)
{
	member(j, key);
	sbuf_add(&j->out, "null");
}

int
json_print(struct json *j, FILE *f)
{
	if (fputs(j->out.buf, f) == EOF || fputc('\n', f) == EOF || fflush(f) == EOF)
		return err_sys(EXIT_ENV, "writing output");
	return 0;
}
