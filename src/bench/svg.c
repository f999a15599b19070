/*
 * svg: one chart per exercise, a standalone SVG file a browser opens:
 * throughput against processes, one polyline per mode, the single-process
 * limit as a dashed line, axes with ticks and labels, and a legend. An
 * exercise with several sizes gets one panel per size, side by side, so
 * that the curves of one size are never compared with another's scale.
 *
 * P is drawn on a log2 axis: the levels measured double, and so stay evenly
 * spaced.
 */
#include "bench/bench.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <string.h>

#define PANEL_W 420
#define PANEL_H 300
#define PAD_L 64
#define PAD_R 16
#define PAD_T 36
#define PAD_B 48
#define COLS 3
#define LEGEND_H 34
#define TITLE_H 30
#define MIN_W 800

static const char *const mode_color[BM_NMODES] = {
	[BM_TIMESLICE] = "#1f77b4",
	[BM_MPS] = "#d62728",
	[BM_STREAMS] = "#2ca02c",
	[BM_BATCHED] = "#9467bd",
	[BM_MPS_CAPPED] = "#ff7f0e",
};

struct panel {
	double x0, y0;          /* top left of the panel */
	double pmin, pmax;      /* P range (log2) */
	double ymax;            /* top of the value axis */
};

static void
xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
				fputc(*s, f);
			else
				fputc('?', f);  /* keep the file plain ASCII, always well formed */
		}
	}
}

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks up to max. */
static double
nice_step(double max)
{
	double raw = max / 5, p = pow(10, floor(log10(raw))), m = raw / p;

	if (m <= 1)
		return p;
	if (m <= 2)
		return 2 * p;
	if (m <= 5)
		return 5 * p;
	return 10 * p;
}

static double
px(const struct panel *pn, int procs)
{
	double w = PANEL_W - PAD_L - PAD_R;
	double l = log2(procs);

	if (pn->pmax <= pn->pmin)
		return pn->x0 + PAD_L + w / 2;
	return pn->x0 + PAD_L + w * (l - pn->pmin) / (pn->pmax - pn->pmin);
}

static double
py(const struct panel *pn, double v)
{
	double h = PANEL_H - PAD_T - PAD_B;

	return pn->y0 + PAD_T + h * (1 - v / pn->ymax);
}

static void
panel_range(const struct bench_run *r, const struct bench_exercise *e, int size, struct panel *pn)
{
	double top = 0;

	pn->pmin = INFINITY;
	pn->pmax = -INFINITY;
	for (int i = 0; i < r->cfg.nprocs; i++) {
		double l = log2(r->cfg.procs[i]), lim = bench_limit_for(r, e, size, r->cfg.procs[i]);

		pn->pmin = fmin(pn->pmin, l);
		pn->pmax = fmax(pn->pmax, l);
		if (!isnan(lim))
			top = fmax(top, lim);
	}
	for (int i = 0; i < e->npts; i++)
		if (e->pts[i].size == size && e->pts[i].st.n > 0)
			top = fmax(top, e->pts[i].st.max);
	if (!(top > 0))
		top = 1;
	pn->ymax = ceil(top * 1.05 / nice_step(top * 1.05)) * nice_step(top * 1.05);
}

/* The user's command, shortened to what fits over a panel. */
static void
command_text(const struct bench_run *r, FILE *f)
{
	struct sbuf b;

	sbuf_init(&b);
	for (int i = 0; i < r->cfg.ncmd; i++) {
		if (i)
			sbuf_addc(&b, ' ');
		sbuf_add(&b, r->cfg.cmd[i]);
	}
	if (b.len > 48)
		strcpy(b.buf + 45, "...");
	xml_text(f, b.len ? b.buf : "your command");
	sbuf_free(&b);
}

static void
draw_axes(const struct bench_run *r, const struct bench_exercise *e, const struct panel *pn,
    int size, FILE *f)
{
	double left = pn->x0 + PAD_L, right = pn->x0 + PANEL_W - PAD_R;
	double top = pn->y0 + PAD_T, bottom = pn->y0 + PANEL_H - PAD_B;
	double step = nice_step(pn->ymax);

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"panel\">", (left + right) / 2, pn->y0 + 22);
	if (e->id == EX_COMMAND)
		command_text(r, f);
	else
		fprintf(f, "N=%d", size);
	fputs("</text>\n", f);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", left,
	    bottom, right, bottom);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", left,
	    top, left, bottom);
	for (double v = 0; v <= pn->ymax * 1.0001; v += step) {
		double y = py(pn, v);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n",
		    left, y, right, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"ytick\">%g</text>\n", left - 6, y + 4, v);
	}
	for (int i = 0; i < r->cfg.nprocs; i++) {
		double x = px(pn, r->cfg.procs[i]);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", x,
		    bottom, x, bottom + 5);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xtick\">%d</text>\n", x, bottom + 18,
		    r->cfg.procs[i]);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xlabel\">processes (P)</text>\n",
	    (left + right) / 2, bottom + 38);
	fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" class=\"ylabel\">",
	    pn->x0 + 16, (top + bottom) / 2);
	xml_text(f, e->unit);
	fputs("</text>\n", f);
}

static void
draw_mode(const struct bench_run *r, const struct bench_exercise *e, const struct panel *pn,
    int size, int mode, FILE *f)
{
	int drawn = 0;

	for (int i = 0; i < r->cfg.nprocs; i++) {
		const struct bench_point *p = bench_point_get(e, size, mode, r->cfg.procs[i]);

		if (!p || p->st.n == 0)
			continue;
		if (!drawn++)
			fprintf(f, "<polyline class=\"line\" stroke=\"%s\" points=\"", mode_color[mode]);
		fprintf(f, "%s%.1f,%.1f", drawn > 1 ? " " : "", px(pn, r->cfg.procs[i]),
		    py(pn, p->st.median));
	}
	if (drawn)
		fputs("\"/>\n", f);
	for (int i = 0; i < r->cfg.nprocs; i++) {
		const struct bench_point *p = bench_point_get(e, size, mode, r->cfg.procs[i]);
		double x = px(pn, r->cfg.procs[i]);

		if (!p || p->st.n == 0)
			continue;
		/* the whisker shows min to max of the repeats */
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x,
		    py(pn, p->st.min), x, py(pn, p->st.max), mode_color[mode]);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s P=%d: %.4g %s"
		    "</title></circle>\n", x, py(pn, p->st.median), mode_color[mode],
		    bench_mode_name(mode), p->procs, p->st.median, e->unit);
	}
}

static void
draw_limit(const struct bench_run *r, const struct bench_exercise *e, const struct panel *pn,
    int size, FILE *f)
{
	int drawn = 0;

	for (int i = 0; i < r->cfg.nprocs; i++) {
		double l = bench_limit_for(r, e, size, r->cfg.procs[i]);

		if (isnan(l))
			continue;
		if (!drawn++)
			fputs("<polyline class=\"limit\" points=\"", f);
		fprintf(f, "%s%.1f,%.1f", drawn > 1 ? " " : "", px(pn, r->cfg.procs[i]), py(pn, l));
	}
	if (drawn)
		fputs("\"/>\n", f);
}

static int
has_limit(const struct bench_run *r, const struct bench_exercise *e)
{
	for (int s = 0; s < e->nsizes; s++)
		for (int i = 0; i < r->cfg.nprocs; i++)
			if (!isnan(bench_limit_for(r, e, e->sizes[s], r->cfg.procs[i])))
				return 1;
	return 0;
}

static void
draw_legend(const struct bench_run *r, const struct bench_exercise *e, double y, FILE *f)
{
	double x = 16;

	for (int m = 0; m < BM_NMODES; m++) {
		if (m != BM_TIMESLICE && !(e->modes & 1u << m))
			continue;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"line\" "
		    "stroke=\"%s\"/>\n", x, y, x + 24, y, mode_color[m]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">%s</text>\n", x + 30, y + 4,
		    bench_mode_name(m));
		x += 40 + 8.0 * (double)strlen(bench_mode_name(m));
	}
	if (has_limit(r, e)) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"limit\"/>\n", x,
		    y, x + 24, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">single-process limit</text>\n",
		    x + 30, y + 4);
	}
}

int
bench_write_svg(const struct bench_run *r, const struct bench_exercise *e, FILE *f)
{
	int cols = e->nsizes < COLS ? e->nsizes : COLS;
	int rows = (e->nsizes + COLS - 1) / COLS;
	int width, height;

	if (cols < 1)
		cols = rows = 1;
	/* room for the title and the legend even with one panel */
	width = cols * PANEL_W < MIN_W ? MIN_W : cols * PANEL_W;
	height = TITLE_H + rows * PANEL_H + LEGEND_H;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
	    width, height, width, height);
	fputs("<style>\n"
	    ".axis{stroke:#000;stroke-width:1}\n"
	    ".grid{stroke:#ddd;stroke-width:1}\n"
	    ".line{fill:none;stroke-width:2}\n"
	    ".limit{fill:none;stroke:#000;stroke-width:1.5;stroke-dasharray:6,4}\n"
	    ".panel{text-anchor:middle;font-weight:bold}\n"
	    ".xtick,.xlabel{text-anchor:middle}\n"
	    ".ytick{text-anchor:end}\n"
	    ".ylabel{text-anchor:middle}\n"
	    "</style>\n", f);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height);
	fputs("<text x=\"16\" y=\"20\" font-size=\"14\">", f);
	if (r->setup.simulated)
		fputs("SIMULATED, not measured: ", f);
	fprintf(f, "exercise %d: ", e->id);
	xml_text(f, e->title);
	fputs(" (", f);
	xml_text(f, r->setup.gpu_name);
	fputs(")</text>\n", f);
	for (int s = 0; s < e->nsizes; s++) {
		struct panel pn = {.x0 = (s % COLS) * PANEL_W, .y0 = TITLE_H + (s / COLS) * PANEL_H};

		panel_range(r, e, e->sizes[s], &pn);
		draw_axes(r, e, &pn, e->sizes[s], f);
		for (int m = 0; m < BM_NMODES; m++)
			if (m == BM_TIMESLICE || e->modes & 1u << m)
				draw_mode(r, e, &pn, e->sizes[s], m, f);
		/* last, so that the dashes stay visible where batched reaches the limit */
		draw_limit(r, e, &pn, e->sizes[s], f);
	}
	draw_legend(r, e, TITLE_H + rows * PANEL_H + LEGEND_H / 2.0, f);
	fputs("</svg>\n", f);
	return ferror(f) ? err_set(EXIT_ENV, "writing the chart failed") : 0;
}
