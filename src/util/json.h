/*
 * json: a small streaming JSON writer for --json output (one object, stable
 * keys). Inside an object pass the key; inside an array pass NULL.
 */
#ifndef GPUPACK_UTIL_JSON_H
#define GPUPACK_UTIL_JSON_H

#include <stdio.h>

#include "util/str.h"

#define JSON_MAX_DEPTH 32

struct json {
	struct sbuf out;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written at each level */
	int pretty;
};

void json_init(struct json *j, int pretty);
void json_free(struct json *j);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val); /* NULL: null */
void json_int(struct json *j, const char *key, long long val);
void json_uint(struct json *j, const char *key, unsigned long long val);
void json_double(struct json *j, const char *key, double val); /* NaN/inf: null */
void json_bool(struct json *j, const char *key, int val);
void json_null(struct json *j, const char *key);
/* Append s as a quoted, escaped JSON string. */
void json_quote(struct sbuf *b, const char *s);
/* Write the document (with a final newline) to f; returns 0 or -1 (err set). */
int json_print(struct json *j, FILE *f);

#endif
