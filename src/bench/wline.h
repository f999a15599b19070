/*
 * wline: one JSON line of a worker (gpupack-work or `gpupack run --json`),
 * read into key/value pairs. Only flat objects are kept: a nested object or
 * array is skipped whole, so that workers may add keys without breaking us.
 */
#ifndef GPUPACK_BENCH_WLINE_H
#define GPUPACK_BENCH_WLINE_H

enum wval_type { WV_NULL, WV_BOOL, WV_NUM, WV_STR, WV_NESTED };

struct wval {
	char *key;
	int type;        /* enum wval_type */
	double num;      /* WV_NUM, and WV_BOOL as 0/1 */
	char *str;       /* WV_STR */
};

struct wline {
	int n;
	struct wval *v;
};

/* Parse one JSON object; -1 with err set (EXIT_INTERNAL) when it is not one. */
int wline_parse(const char *text, struct wline *w);
void wline_free(struct wline *w);

/* Look-ups: 0 found with the right type, -1 missing or another type. */
int wline_num(const struct wline *w, const char *key, double *out);
int wline_bool(const struct wline *w, const char *key, int *out);
/* The string, or NULL. */
const char *wline_str(const struct wline *w, const char *key);

#endif
