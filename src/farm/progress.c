/*
 * progress: the bar, the ETA and the summary (see progress.h). Busy share
 * is the time a device had at least one task running over the run's
 * makespan: the figure that says whether packing kept a GPU fed.
 */
#include "farm/progress.h"
#include "farm/control.h"
#include "farm/farm.h"
#include "util/fs.h"
#include "farm/usagefarm.h"
#include "util/json.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static double
makespan(const struct farm_stats *s)
{
	return s->t_end > s->t0 ? s->t_end - s->t0 : 0;
}

double
progress_busy_share(const struct group *g, const struct farm_stats *s)
{
	double m = makespan(s), busy = g->busy;

	if (g->running > 0 && g->busy_since > 0 && s->t_end > g->busy_since)
		busy += s->t_end - g->busy_since;
	return m > 0 ? fmin(1.0, busy / m) : 0;
}

/* -j auto: where the count started, where it settled, and each decision with its signals. */
static void
auto_json(struct json *j, const struct group *g, double now)
{
	const struct ctl *c = g->ctl;

	json_str(j, "jobs", c ? "auto" : NULL);
	if (!c) {
		json_null(j, "auto");
		return;
	}
	json_obj_begin(j, "auto");
	json_int(j, "start", c->cfg.start);
	json_int(j, "max", c->cfg.max);
	json_int(j, "final", c->limit);
	json_int(j, "settled", ctl_settled(c, now, NULL));
	json_uint(j, "footprint", g->footprint);
	json_int(j, "waited", g->waited);
	json_double(j, "cores_start", g->cores_start);
	json_double(j, "cores_run", g->cores_run);
	json_arr_begin(j, "decisions");
	for (size_t i = 0; i < c->nlog; i++) {
		const struct ctl_decision *d = &c->log[i];

		json_obj_begin(j, NULL);
		json_double(j, "t", d->t);
		json_int(j, "limit", d->limit);
		if (d->rate >= 0)
			json_double(j, "rate", d->rate);
		else
			json_null(j, "rate");
		if (d->gpu >= 0)
			json_double(j, "gpu", d->gpu);
		else
			json_null(j, "gpu");
		if (d->cpu >= 0)
			json_double(j, "cpu", d->cpu);
		else
			json_null(j, "cpu");
		if (d->jpt >= 0)
			json_double(j, "j_per_task", d->jpt);
		else
			json_null(j, "j_per_task");
		json_str(j, "why", d->why);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_uint(j, "decisions_dropped", c->dropped);
	json_obj_end(j);
}

/* Joules a device's GPU used over the farm; -1 unread. */
static double
energy_of(const struct group *g)
{
	return g->en.energy_ok == 2 ? (double)(g->en.energy1 - g->en.energy0) / 1000.0 : -1;
}

/* Every GPU's energy over the farm, each GPU once (MIG devices share theirs); -1: none read. */
static double
energy_total(const struct group *g, int ng)
{
	double sum = -1;

	for (int i = 0; i < ng; i++) {
		int again = 0;

		if (g[i].cap == 0 || energy_of(&g[i]) < 0)
			continue;
		for (int k = 0; k < i; k++)
			again |= g[k].cap > 0 && g[k].gpu_index == g[i].gpu_index && energy_of(&g[k]) >= 0;
		if (!again)
			sum = (sum < 0 ? 0 : sum) + energy_of(&g[i]);
	}
	return sum;
}

static void
json_or_null(struct json *j, const char *key, double v)
{
	if (v >= 0)
		json_double(j, key, v);
	else
		json_null(j, key);
}

unsigned long long
progress_total(const struct farm_stats *s)
{
	unsigned long long all = s->total ? s->total : s->inputs_done ? s->inputs : 0, not_here;

	not_here = s->skipped + s->others;
	if (all == 0 || all < not_here)
		return 0;
	all -= not_here;
	/* -X groups records the count could not foresee: never fewer than have ended */
	return all < s->done + s->failed ? s->done + s->failed : all;
}

/*
 * parallel's compute_eta: the average time per task, smoothed towards it
 * as the run goes on; an ETA that rose by less than 10% keeps the last one.
 * The average is over the time since the run started (parallel's since the
 * first task ended, in whole seconds: an ETA of 0 s until then).
 */
long
progress_eta(struct progress *p, const struct farm_stats *s, double now)
{
	unsigned long long total = progress_total(s), ended = s->done + s->failed;
	double pct, avg;
	long eta;

	if (ended == 0 || total == 0)
		return 0;
	pct = (double)ended / (double)total;
	if (pct > 1)
		pct = 1;
	avg = (now - s->t0) / (double)ended;
	if (p->smoothed == 0)
		p->smoothed = avg;
	p->smoothed = (1 - pct) * p->smoothed + pct * avg;
	eta = (long)((double)(total - (ended < total ? ended : total)) * p->smoothed);
	if ((double)eta * 0.9 < (double)p->last_eta && p->last_eta < eta)
		eta = p->last_eta;
	else
		p->last_eta = eta;
	return eta;
}

void
progress_dhms(long s, char *buf, size_t size)
{
	long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;

	if (d)
		snprintf(buf, size, "%ldd%02ldh%02ldm%02lds", d, h, m, sec);
	else if (h)
		snprintf(buf, size, "%ldh%02ldm%02lds", h, m, sec);
	else if (m)
		snprintf(buf, size, "%ldm%02lds", m, sec);
	else
		snprintf(buf, size, "%lds", sec);
}

void
progress_label(const struct group *g, int ng, int i, char *buf, size_t size)
{
	int same = 0, nth = 0;

	for (int k = 0; k < ng; k++)
		if (g[k].gpu_index == g[i].gpu_index) {
			same++;
			if (k < i)
				nth++;
		}
	if (same > 1)
		snprintf(buf, size, "%d.%d", g[i].gpu_index, nth);
	else
		snprintf(buf, size, "%d", g[i].gpu_index);
}

/* each device's tasks running / the count it may run now */
static void
devices(struct sbuf *b, const struct group *g, int ng)
{
	char label[32];
	int first = 1;

	for (int i = 0; i < ng; i++) {
		if (g[i].cap <= 0)
			continue;
		progress_label(g, ng, i, label, sizeof label);
		sbuf_printf(b, "%s%s:%d/%d", first ? "" : " ", label, g[i].running, g[i].jobs);
		first = 0;
	}
}

/*
 * parallel's --bar: "pct% done:left=ETA arg" across the terminal, in
 * reverse video as far as the run got; gpupack puts its devices after the
 * ETA. With the total not known yet: what ended, what was read so far.
 */
static void
bar_line(struct progress *p, const struct farm_stats *s, const struct group *g, int ng, double now,
    const char *arg, int cols, struct sbuf *out)
{
	unsigned long long total = progress_total(s), ended = s->done + s->failed;
	struct sbuf t;
	char eta[32];
	int width = cols > 1 ? cols - 1 : 1, fill = 0;
	double pct = 0;

	sbuf_init(&t);
	if (total > 0) {
		pct = ended >= total ? 1 : (double)ended / (double)total;
		progress_dhms(progress_eta(p, s, now), eta, sizeof eta);
		sbuf_printf(&t, "%d%% %llu:%llu=%s ", (int)(pct * 100), ended, total - (ended < total ? ended :
		    total), eta);
	} else {
		sbuf_printf(&t, "%llu done of >=%llu ", ended, s->inputs - s->skipped - s->others);
	}
	if (s->failed)
		sbuf_printf(&t, "%llu failed ", s->failed);
	sbuf_addc(&t, '[');
	devices(&t, g, ng);
	sbuf_add(&t, "] ");
	sbuf_add(&t, arg ? arg : "");
	/* the text cut or padded to the width; newlines and tabs of an input shown as spaces */
	for (size_t i = 0; i < t.len; i++)
		if (t.buf[i] == '\n' || t.buf[i] == '\t' || t.buf[i] == '\r')
			t.buf[i] = ' ';
	if (t.len > (size_t)width) {
		t.len = (size_t)width;
		t.buf[t.len] = '\0';
	}
	while (t.len < (size_t)width)
		sbuf_addc(&t, ' ');
	fill = (int)(width * pct);
	sbuf_add(out, "\033[7m");
	sbuf_addn(out, t.buf, (size_t)fill);
	sbuf_add(out, "\033[0m");
	sbuf_addn(out, t.buf + fill, t.len - (size_t)fill);
	sbuf_free(&t);
}

/* parallel's --eta and --progress status: "ETA: 5s Left: 3 AVG: 1.20s  0:2/9/100%/1.1s ..." */
static void
status_line(struct progress *p, const struct farm_stats *s, const struct group *g, int ng, double now,
    int cols, struct sbuf *out)
{
	unsigned long long total = progress_total(s), ended = s->done + s->failed, started = 0;
	char label[32];

	if (p->mode == PROGRESS_ETA) {
		long eta = progress_eta(p, s, now);
		double avg = ended ? (now - s->t0) / (double)ended : 0;

		if (total)
			sbuf_printf(out, "ETA: %lds Left: %llu AVG: %.2fs  ", eta, total - (ended < total ?
			    ended : total), avg);
		else
			sbuf_printf(out, "ETA: ?s Left: ? AVG: %.2fs  ", avg);
	}
	for (int i = 0; i < ng; i++)
		started += g[i].tasks;
	for (int i = 0; i < ng && started; i++) {
		unsigned long completed = g[i].tasks - (unsigned long)g[i].running;

		if (g[i].cap <= 0)
			continue;
		progress_label(g, ng, i, label, sizeof label);
		sbuf_printf(out, "%s:%d/%lu/%d%%/%.1fs ", label, g[i].running, completed,
		    (int)(g[i].tasks * 100 / started), completed ? (now - s->t0) / (double)completed : 0);
	}
	if (cols > 1 && out->len > (size_t)cols - 1) {
		out->len = (size_t)cols - 1;
		out->buf[out->len] = '\0';
	}
}

void
progress_line(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now, const char *arg, int cols, struct sbuf *out)
{
	if (p->mode == PROGRESS_BAR)
		bar_line(p, s, g, ng, now, arg, cols, out);
	else
		status_line(p, s, g, ng, now, cols, out);
}

/* ---- the terminal ------------------------------------------------------- */

static int
is_tty(struct progress *p, int fd)
{
	if (p->tty[fd] == 0)
		p->tty[fd] = isatty(fd) ? 1 : -1;
	return p->tty[fd] > 0;
}

static int
columns(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return atoi(c);
	return 80;
}

/* --eta, --progress: parallel's header lines, devices for its computers */
static void
header(struct progress *p, const struct group *g, int ng, struct sbuf *b)
{
	char label[32];

	p->header_done = 1;
	if (p->mode == PROGRESS_BAR)
		return;
	sbuf_add(b, "Devices / slots\n");
	for (int i = 0; i < ng; i++) {
		progress_label(g, ng, i, label, sizeof label);
		sbuf_printf(b, "%s:%s / %d\n", label, g[i].t.uuid, g[i].cap);
	}
	sbuf_add(b, "\nDevice:tasks running/tasks completed/%of started tasks/Average seconds to "
	    "complete\n");
}

static void
draw(struct progress *p, const struct farm_stats *s, const struct group *g, int ng, double now,
    const char *arg, const char *end)
{
	struct sbuf b;

	sbuf_init(&b);
	if (p->midline)
		sbuf_addc(&b, '\n');
	p->midline = 0;
	if (!p->header_done)
		header(p, g, ng, &b);
	sbuf_add(&b, "\r");
	progress_line(p, s, g, ng, now, arg, columns(), &b);
	sbuf_add(&b, "\033[K");
	sbuf_add(&b, end);
	if (write_all(2, b.buf, b.len) == 0)
		p->drawn = !*end;
	sbuf_free(&b);
}

void
progress_draw(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now, const char *arg)
{
	if (p->mode == PROGRESS_NONE || !is_tty(p, 2))
		return;
	draw(p, s, g, ng, now, arg, "");
}

void
progress_pause(struct progress *p)
{
	if (!p->drawn)
		return;
	p->drawn = 0;
	if (write_all(2, "\r\033[K", 4) < 0)
		return;
}

void
progress_wrote(struct progress *p, int fd, int nl)
{
	if (p->mode != PROGRESS_NONE && is_tty(p, 2) && is_tty(p, fd))
		p->midline = !nl;
}

void
progress_end(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now)
{
	if (p->mode == PROGRESS_NONE || !is_tty(p, 2))
		return;
	draw(p, s, g, ng, now, "", "\n");
}

void
progress_summary(const struct farm_stats *s, const struct group *g, int ng, FILE *f)
{
	double m = makespan(s);
	unsigned long long ended = s->done + s->failed;

	fprintf(f, "gpupack: run: %llu %s, %llu failed, %llu skipped, makespan %.3f s, %.1f tasks/s, "
	    "share %s%s; busy:", ended, plural(ended, "task", "tasks"), s->failed, s->skipped, m,
	    m > 0 ? (double)ended / m : 0, share_name(s->share),
	    !s->simulated ? "" : s->share == SHARE_MPS ? " (SIMULATED GPUs, gpupack's MPS stand-in)" :
	    " (SIMULATED GPUs)");
	for (int i = 0; i < ng; i++) {
		char label[32];

		if (g[i].cap <= 0)
			continue;
		progress_label(g, ng, i, label, sizeof label);
		fprintf(f, " %s:%.0f%%", label, 100 * progress_busy_share(&g[i], s));
	}
	fprintf(f, "\n");
	usagefarm_summary(s->usage, f, m);
}

int
progress_json(const struct farm_stats *s, const struct group *g, int ng, FILE *f)
{
	double m = makespan(s);
	unsigned long long ended = s->done + s->failed;
	struct json j;
	int rc;

	json_init(&j, 0);
	json_obj_begin(&j, NULL);
	json_uint(&j, "tasks", ended);
	json_uint(&j, "done", s->done);
	json_uint(&j, "failed", s->failed);
	json_uint(&j, "skipped", s->skipped);
	if (s->shard_n > 0) {
		char sh[48];

		snprintf(sh, sizeof sh, "%lu/%lu", s->shard_k, s->shard_n);
		json_str(&j, "shard", sh);
	} else {
		json_str(&j, "shard", NULL);
	}
	json_uint(&j, "retries", s->retried);
	json_uint(&j, "fault_retries", s->fault_retries);
	json_uint(&j, "reruns", s->reruns);
	json_obj_begin(&j, "rerun_reasons");
	for (size_t i = 0; i < sizeof s->rerun_why / sizeof s->rerun_why[0] && s->rerun_why[i].why; i++)
		json_uint(&j, s->rerun_why[i].why, s->rerun_why[i].n);
	json_obj_end(&j);
	json_double(&j, "makespan_s", m);
	json_double(&j, "tasks_per_s", m > 0 ? (double)ended / m : 0);
	json_or_null(&j, "energy_j", energy_total(g, ng));
	json_or_null(&j, "j_per_task", ended > 0 && energy_total(g, ng) >= 0 ? energy_total(g, ng) / (double)ended :
	    -1);
	json_str(&j, "share", share_name(s->share));
	json_bool(&j, "simulated", s->simulated);
	json_bool(&j, "interrupted", s->interrupted);
	json_int(&j, "exit_status", s->exit_status);
	json_int(&j, "max_rss_kib", s->max_rss_kib);
	json_arr_begin(&j, "devices");
	for (int i = 0; i < ng; i++) {
		json_obj_begin(&j, NULL);
		json_str(&j, "uuid", g[i].t.uuid);
		json_int(&j, "gpu_index", g[i].gpu_index);
		json_int(&j, "slots", g[i].cap);
		json_str(&j, "slots_limited_by", g[i].limit);
		json_uint(&j, "tasks", g[i].tasks);
		json_double(&j, "busy_s", progress_busy_share(&g[i], s) * m);
		json_double(&j, "busy_share", progress_busy_share(&g[i], s));
		json_uint(&j, "mem_free", g[i].t.mem_free);
		json_bool(&j, "mps_daemon_started", g[i].mps_ours);
		json_int(&j, "mps_restarts", g[i].h.mps_restarts);
		json_or_null(&j, "energy_j", energy_of(&g[i]));
		json_bool(&j, "energy_shared", g[i].en.energy_shared);
		/* its own joules per attempt ended: not where its GPU's counter is shared (MIG) */
		json_or_null(&j, "j_per_task", !g[i].en.energy_shared && g[i].ended > 0 && energy_of(&g[i]) >= 0 ?
		    energy_of(&g[i]) / (double)g[i].ended : -1);
		auto_json(&j, &g[i], s->t_end);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	usagefarm_json(s->usage, &j, m);
	json_obj_end(&j);
	rc = json_print(&j, f);
	json_free(&j);
	return rc;
}
