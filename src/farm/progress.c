/*
 * progress: the bar, the ETA and the summary. Busy share is the time a
 * device had at least one task running over the run's makespan: the figure
 * that says whether packing kept a GPU fed.
 */
#include "farm/progress.h"
#include "farm/control.h"
#include "farm/farm.h"
#include "util/json.h"
#include "util/str.h"

#include <math.h>
#include <string.h>
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
	return g->energy_ok == 2 ? (double)(g->energy1 - g->energy0) / 1000.0 : -1;
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

static void
add_eta(struct sbuf *b, const struct farm_stats *s, double now)
{
	unsigned long long left, ended = s->done + s->failed;
	double el = now - s->t0;

	if (!s->inputs_done || ended == 0) {
		sbuf_add(b, " eta ?");
		return;
	}
	left = s->inputs - s->skipped - s->others - ended;
	sbuf_printf(b, " eta %.0fs", el / (double)ended * (double)left);
}

void
progress_line(const struct farm_stats *s, const struct group *g, int ng, int bar, double now,
    char *buf, size_t size)
{
	unsigned long long total = s->inputs - s->skipped - s->others, ended = s->done + s->failed;
	struct sbuf b;

	sbuf_init(&b);
	if (bar && s->inputs_done && total > 0) {
		int fill = (int)(20 * ended / total);

		sbuf_printf(&b, "%3d%% [", (int)(100 * ended / total));
		for (int i = 0; i < 20; i++)
			sbuf_addc(&b, i < fill ? '#' : '.');
		sbuf_addc(&b, ']');
	}
	sbuf_printf(&b, " %llu/%s%llu done, %d running, %llu failed", ended,
	    s->inputs_done ? "" : ">=", total, s->running, s->failed);
	add_eta(&b, s, now);
	sbuf_add(&b, " |");
	for (int i = 0; i < ng; i++)
		if (g[i].cap > 0)
			sbuf_printf(&b, " %d:%d/%d", g[i].gpu_index, g[i].running, g[i].jobs);
	str_copy(buf, b.buf, size);
	sbuf_free(&b);
}

/*
 * The line is redrawn in place with a carriage return and an erase: only
 * on a terminal. Into a file or a pipe those would be junk, and the final
 * summary line says what the run did.
 */
static int
terminal(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(2);
	return tty;
}

void
progress_draw(const struct farm_stats *s, const struct group *g, int ng, int bar, double now)
{
	char line[512];

	if (!terminal())
		return;
	progress_line(s, g, ng, bar, now, line, sizeof line);
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

void
progress_clear(void)
{
	if (!terminal())
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

void
progress_summary(const struct farm_stats *s, const struct group *g, int ng, FILE *f)
{
	double m = makespan(s);
	unsigned long long ended = s->done + s->failed;

	fprintf(f, "gpupack: run: %llu %s, %llu failed, %llu skipped, makespan %.3f s, %.1f tasks/s, "
	    "share %s; busy:", ended, plural(ended, "task", "tasks"), s->failed, s->skipped, m,
	    m > 0 ? (double)ended / m : 0, share_name(s->share));
	for (int i = 0; i < ng; i++)
		if (g[i].cap > 0)
			fprintf(f, " %s %.0f%%", g[i].t.uuid, 100 * progress_busy_share(&g[i], s));
	fprintf(f, "\n");
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
		json_int(&j, "mps_restarts", g[i].mps_restarts);
		json_or_null(&j, "energy_j", energy_of(&g[i]));
		json_bool(&j, "energy_shared", g[i].energy_shared);
		/* its own joules per attempt ended: not where its GPU's counter is shared (MIG) */
		json_or_null(&j, "j_per_task", !g[i].energy_shared && g[i].ended > 0 && energy_of(&g[i]) >= 0 ?
		    energy_of(&g[i]) / (double)g[i].ended : -1);
		auto_json(&j, &g[i], s->t_end);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	rc = json_print(&j, f);
	json_free(&j);
	return rc;
}
