/*
 * test_bench_output: what bench writes (src/bench/report.c, src/bench/svg.c)
 * from a run filled by hand: the SVG is well-formed XML with a polyline per
 * mode, the dashed limit, ticks, labels and a legend; the JSON has its
 * stable keys and never NaN; the tables show the recommendation.
 */
#include "bench/bench.h"
#include "tap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A small well-formedness check: every tag closes in order, attributes are
 * quoted, no stray '<' or '&' in text. Enough to catch a writer that forgets
 * a closing tag or escapes nothing.
 */
static int
well_formed(const char *s, char *why, size_t size)
{
	char stack[64][32];
	int depth = 0, root_seen = 0;

	while (*s) {
		if (*s == '&') {
			if (!strncmp(s, "&lt;", 4) || !strncmp(s, "&gt;", 4) || !strncmp(s, "&amp;", 5) ||
			    !strncmp(s, "&quot;", 6)) {
				s++;
				continue;
			}
			snprintf(why, size, "bare '&'");
			return 0;
		}
		if (*s != '<') {
			if (!isspace((unsigned char)*s) && depth == 0 && root_seen) {
				snprintf(why, size, "text after the root element");
				return 0;
			}
			s++;
			continue;
		}
		if (!strncmp(s, "<?", 2)) {
			s = strstr(s, "?>");
			if (!s) {
				snprintf(why, size, "unterminated <?");
				return 0;
			}
			s += 2;
			continue;
		}
		if (s[1] == '/') {
			size_t n = strcspn(s + 2, ">");

			if (depth == 0 || strlen(stack[depth - 1]) != n ||
			    strncmp(stack[depth - 1], s + 2, n) != 0) {
				snprintf(why, size, "</%.*s> does not close <%s>", (int)n, s + 2,
				    depth ? stack[depth - 1] : "");
				return 0;
			}
			depth--;
			s += n + 3;
			continue;
		}
		{
			const char *p = s + 1;
			size_t n = strcspn(p, " \t\n/>");
			char q = 0;

			if (n == 0 || n >= sizeof stack[0]) {
				snprintf(why, size, "bad tag name");
				return 0;
			}
			for (p += n; *p && (q || (*p != '>')); p++) {
				if (q && *p == q)
					q = 0;
				else if (!q && (*p == '"' || *p == '\''))
					q = *p;
				else if (!q && *p == '<') {
					snprintf(why, size, "'<' inside a tag");
					return 0;
				}
			}
			if (!*p) {
				snprintf(why, size, "unterminated tag");
				return 0;
			}
			if (p[-1] != '/') {
				if (depth == 64) {
					snprintf(why, size, "too deep");
					return 0;
				}
				memcpy(stack[depth], s + 1, n);
				stack[depth++][n] = '\0';
			}
			root_seen = 1;
			s = p + 1;
		}
	}
	if (depth) {
		snprintf(why, size, "<%s> never closed", stack[depth - 1]);
		return 0;
	}
	return root_seen;
}

static int
count(const char *s, const char *what)
{
	int n = 0;

	for (s = strstr(s, what); s; s = strstr(s + 1, what))
		n++;
	return n;
}

static void
put(struct bench_exercise *e, int size, int mode, int procs, double median)
{
	struct bench_point *p = bench_point_add(e, size, mode, procs);

	p->value[0] = median * 0.98;
	p->value[1] = median;
	p->value[2] = median * 1.03;
	p->elapsed[0] = p->elapsed[1] = p->elapsed[2] = 0.5;
	p->nrep = 3;
	p->iters = 100;
}

static void
fill(struct bench_run *r)
{
	static const int procs[] = {1, 2, 4, 8};
	struct bench_exercise *e;

	memset(r, 0, sizeof *r);
	bench_config_defaults(&r->cfg, 1);
	r->cfg.work = "/x/gpupack-work";
	strcpy(r->setup.gpu_name, "NVIDIA H100 <80GB> & co");
	strcpy(r->setup.uuid, "GPU-0935e153-333f-178e-fcc2-6348e796093e");
	strcpy(r->setup.driver, "580.159.04");
	strcpy(r->setup.cuda, "13.0");
	strcpy(r->setup.date, "2026-11-22T02:00:00Z");
	r->setup.cmdline = strdup("gpupack bench --quick");
	bench_init(r);
	e = &r->ex[0];
	for (int s = 0; s < e->nsizes; s++) {
		put(e, e->sizes[s], BM_TIMESLICE, 1, 10);
		put(e, e->sizes[s], BM_MPS, 1, 10);
		for (int i = 1; i < 4; i++) {
			put(e, e->sizes[s], BM_TIMESLICE, procs[i], 9);
			put(e, e->sizes[s], BM_MPS, procs[i], 10 * procs[i] * 0.9);
			put(e, e->sizes[s], BM_STREAMS, procs[i], 10 * procs[i] * 0.8);
			put(e, e->sizes[s], BM_BATCHED, procs[i], 10 * procs[i]);
		}
	}
	/* one failed point: no repeats, an error */
	bench_point_add(e, e->sizes[0], BM_MPS, 16)->error = strdup("matmul N=512 mps P=16: boom");
	e = &r->ex[1];
	put(e, e->sizes[0], BM_TIMESLICE, 1, 10);
	put(e, e->sizes[0], BM_MPS, 1, 10);
	for (int i = 1; i < 4; i++) {
		put(e, e->sizes[0], BM_MPS, procs[i], 10 * procs[i] * 0.9);
		put(e, e->sizes[0], BM_MPS_CAPPED, procs[i], 10 * procs[i] * 0.85);
	}
	r->failed = 1;
	bench_summarize(r);
}

static char *
capture(const struct bench_run *r, int what, int ex)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (what == 0)
		bench_print_tables(r, f);
	else if (what == 1)
		bench_write_json(r, f);
	else
		bench_write_svg(r, &r->ex[ex], f);
	fclose(f);
	return buf;
}

static void
test_svg(const struct bench_run *r)
{
	char why[128] = "", *svg = capture(r, 2, 0), *caps;

	ok(well_formed(svg, why, sizeof why), "matmul.svg is well-formed XML %s", why);
	ok(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL, "standalone SVG root");
	ok(count(svg, "class=\"line\" stroke=") >= 2 * 4, "a polyline per mode and panel (%d)",
	    count(svg, "class=\"line\" stroke="));
	ok(count(svg, "<polyline class=\"limit\"") == 2, "the limit in each of the 2 panels");
	ok(strstr(svg, "stroke-dasharray") != NULL, "the limit is dashed");
	ok(count(svg, "class=\"xtick\"") == 2 * 4, "an x tick per P per panel");
	ok(count(svg, "class=\"ytick\"") >= 2 * 3, "y ticks");
	ok(strstr(svg, "processes (P)") && strstr(svg, ">TFLOP/s<"), "axis labels");
	ok(strstr(svg, "single-process limit") && strstr(svg, ">mps</text>"), "legend");
	ok(strstr(svg, "&lt;80GB&gt; &amp; co") != NULL, "the GPU name is escaped");
	ok(!strstr(svg, "nan") && !strstr(svg, "inf"), "no NaN or inf coordinates");
	caps = capture(r, 2, 1);
	ok(well_formed(caps, why, sizeof why), "caps.svg is well-formed XML %s", why);
	ok(strstr(caps, ">mps-capped</text>") != NULL, "caps chart has the capped line");
	ok(count(caps, "<polyline class=\"limit\"") == 1, "caps borrows exercise 1's limit");
	ok(!well_formed("<svg><g></svg>", why, sizeof why), "the checker itself catches a bad file");
	free(svg);
	free(caps);
}

static void
test_json(const struct bench_run *r)
{
	static const char *const keys[] = {
		"\"setup\"", "\"gpu\"", "\"uuid\"", "\"driver\"", "\"cuda\"", "\"date\"",
		"\"command\"", "\"exercises\"", "\"points\"", "\"repeats\"", "\"median\"", "\"min\"",
		"\"max\"", "\"spread\"", "\"speedup\"", "\"efficiency\"", "\"recommendations\"",
		"\"gain_over_one\"", "\"gain_over_timeslice\"", "\"failed_points\"", "\"error\"",
	};
	char *js = capture(r, 1, 0);

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		ok(strstr(js, keys[i]) != NULL, "JSON has %s", keys[i]);
	ok(!strstr(js, "nan") && !strstr(js, "inf"), "JSON never has NaN (null instead)");
	ok(strstr(js, "\"error\": \"matmul N=512 mps P=16: boom\"") != NULL, "a failed point says why");
	ok(strstr(js, "\"command\": \"gpupack bench --quick\"") != NULL, "the command line");
	free(js);
}

static void
test_table(const struct bench_run *r)
{
	char *t = capture(r, 0, 0);

	ok(strstr(t, "NVIDIA H100 <80GB> & co") && strstr(t, "driver 580.159.04, CUDA 13.0"),
	    "the setup heads the tables");
	ok(count(t, "recommendation: ") == 3, "a recommendation per size (2 + 1)");
	/* batched P=8 is 80, mps P=8 is 72: mps is 10% below, batched wins */
	ok(strstr(t, "recommendation: batched, P=8: 80 TFLOP/s, 8.00x one process, 8.89x time-slicing")
	    != NULL, "the recommendation with its gains");
	ok(strstr(t, "failed") != NULL, "a failed point shows");
	ok(strstr(t, "efficiency") && strstr(t, "spread") && strstr(t, "speed-up"), "the columns");
	free(t);
}

int
main(void)
{
	struct bench_run r;

	fill(&r);
	test_svg(&r);
	test_json(&r);
	test_table(&r);
	bench_free(&r);
	return done_testing();
}
