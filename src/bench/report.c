/*
 * report: the tables people read and the JSON programs read. Both show the
 * same numbers: medians with min and max, speed-up over one process,
 * efficiency against the single-process limit, spread, and the
 * recommendation of each size.
 */
#include "bench/bench.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"
#include "util/err.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *
fmt_num(char *buf, size_t size, double v)
{
	if (isnan(v))
		return "-";
	if (fabs(v) >= 1000)
		snprintf(buf, size, "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.3g", v);
	return buf;
}

static const char *
fmt_ratio(char *buf, size_t size, double v)
{
	if (isnan(v))
		return "-";
	snprintf(buf, size, "%.2fx", v);
	return buf;
}

static const char *
fmt_pct(char *buf, size_t size, double v)
{
	if (isnan(v))
		return "-";
	snprintf(buf, size, "%.0f%%", v * 100);
	return buf;
}

static double
one_process(const struct bench_exercise *e, int size)
{
	const struct bench_point *p = bench_point_get(e, size, BM_TIMESLICE, 1);

	return p && p->st.n > 0 ? p->st.median : NAN;
}

static void
size_heading(const struct bench_exercise *e, int size, FILE *f)
{
	if (e->id == EX_COMMAND)
		fprintf(f, "\n");
	else if (e->cpu_ms > 0)
		fprintf(f, "\n  N=%d, %d ms of CPU work between GPU calls\n", size, e->cpu_ms);
	else
		fprintf(f, "\n  N=%d\n", size);
}

static void
point_row(const struct bench_run *r, const struct bench_exercise *e, const struct bench_point *p,
    struct table *t)
{
	char med[32], mn[32], mx[32], su[32], ef[32], sp[32], pr[16], n[16], en[32];
	double one = one_process(e, p->size);

	snprintf(pr, sizeof pr, "%d", p->procs);
	snprintf(n, sizeof n, "%d", p->st.n);
	if (p->st.n == 0) {
		table_row(t, bench_mode_name(p->mode), pr, p->error ? "failed" : "-", NULL, NULL, NULL,
		    NULL, NULL, NULL, NULL);
		return;
	}
	table_row(t, bench_mode_name(p->mode), pr, fmt_num(med, sizeof med, p->st.median),
	    fmt_num(mn, sizeof mn, p->st.min), fmt_num(mx, sizeof mx, p->st.max),
	    fmt_ratio(su, sizeof su, stats_ratio(p->st.median, one)),
	    fmt_pct(ef, sizeof ef, stats_ratio(p->st.median, bench_limit_for(r, e, p->size, p->procs))),
	    fmt_pct(sp, sizeof sp, p->st.spread), n, fmt_num(en, sizeof en, p->est.n > 0 ? p->est.median : NAN));
}

static void
print_rec(const struct bench_exercise *e, const struct bench_rec *rec, int sim, FILE *f)
{
	char v[32], b[32], g1[32], gt[32];

	if (!rec->valid) {
		fprintf(f, "  recommendation: none (nothing measured)\n");
		return;
	}
	fprintf(f, "  %srecommendation: %s, P=%d: %s %s, %s one process, %s time-slicing at P=%d",
	    sim ? "simulated " : "", bench_mode_name(rec->mode), rec->procs, fmt_num(v, sizeof v, rec->value), e->unit,
	    fmt_ratio(g1, sizeof g1, rec->gain_one), fmt_ratio(gt, sizeof gt, rec->gain_timeslice),
	    rec->procs);
	if (rec->best_mode != rec->mode || rec->best_procs != rec->procs)
		fprintf(f, " (best: %s P=%d, %s, %.1f%% more; this one is simpler)",
		    bench_mode_name(rec->best_mode), rec->best_procs, fmt_num(b, sizeof b, rec->best),
		    (rec->best / rec->value - 1) * 100);
	fputc('\n', f);
	if (isnan(rec->energy))
		return;
	if (rec->energy_clear) {
		fprintf(f, "  fewest joules: %s, P=%d: %s J%s, at %.0f%% of the best %s\n",
		    bench_mode_name(rec->energy_mode), rec->energy_procs, fmt_num(v, sizeof v, rec->energy),
		    e->id == EX_COMMAND ? " per task" : "", 100 * stats_ratio(rec->energy_value, rec->best), e->unit);
	} else if (isnan(rec->energy_next)) {
		fprintf(f, "  fewest joules: none clearly lower (only %s, P=%d has joules: %s J%s)\n",
		    bench_mode_name(rec->energy_mode), rec->energy_procs, fmt_num(v, sizeof v, rec->energy),
		    e->id == EX_COMMAND ? " per task" : "");
	} else {
		fprintf(f, "  fewest joules: none clearly lower (%s, P=%d: %s J and %s, P=%d: %s J%s differ "
		    "by no more than the spread, %.0f%%)\n", bench_mode_name(rec->energy_mode), rec->energy_procs,
		    fmt_num(v, sizeof v, rec->energy), bench_mode_name(rec->energy_next_mode),
		    rec->energy_next_procs, fmt_num(b, sizeof b, rec->energy_next),
		    e->id == EX_COMMAND ? " per task" : "", 100 * rec->energy_spread);
	}
}

static void
print_size(const struct bench_run *r, const struct bench_exercise *e, int si, FILE *f)
{
	struct table t;

	size_heading(e, e->sizes[si], f);
	table_init(&t, "lrrrrrrrrr", 2);
	table_row(&t, "mode", "P", e->unit, "min", "max", "speed-up", "efficiency", "spread", "runs",
	    e->id == EX_COMMAND ? "J/task" : "J");
	for (int m = 0; m < BM_NMODES; m++)
		for (int i = 0; i < e->npts; i++)
			if (e->pts[i].size == e->sizes[si] && e->pts[i].mode == m)
				point_row(r, e, &e->pts[i], &t);
	table_print(&t, f);
	table_free(&t);
	for (int i = 0; i < e->npts; i++) {
		if (e->pts[i].size == e->sizes[si] && e->pts[i].reused_from) {
			/* said once: the uncapped rows were measured in exercise 1, in the same repeats */
			fprintf(f, "  (uncapped rows: exercise 1's points, %s)\n", r->model.on ?
			    "the same configurations" : "measured there in the same repeats");
			break;
		}
	}
	print_rec(e, &e->rec[si], r->setup.simulated, f);
}

/* The first lines of a simulated run: what its figures are, since no GPU gave them. */
static void
print_simulated(const struct bench_run *r, FILE *f)
{
	const struct bench_model *m = &r->model;

	fprintf(f, "SIMULATED: no GPU was measured. ");
	if (!m->on) {
		fprintf(f, "Every figure is the worker's own (%s), not a GPU's.\n", r->cfg.work);
		return;
	}
	fprintf(f, "Every figure below comes from a model of the GPU (doc/bench.md).\n"
	    "model: FP32 peak %.1f TFLOP/s (%d SMs x %d lanes x 2 x %.2f GHz%s); SGEMM at most "
	    "%.1f (%.0f%%);\na call costs %.0f us besides its work; MPS overlaps 4 clients' calls, "
	    "time-slicing runs one at a time\n", m->peak / 1e12, m->sms, m->lanes, m->ghz,
	    m->known ? "" : ", assumed: compute capability not in the model", m->rate / 1e12,
	    100 * m->rate / m->peak, m->call_s * 1e6);
}

static void
print_legend(const struct bench_run *r, FILE *f)
{
	if (r->model.on) {
		fprintf(f, "one modelled value per point; speed-up over one process;\n");
	} else {
		fprintf(f, "median of %d repeats", r->cfg.repeats);
		if (r->cfg.max_repeats > r->cfg.repeats)
			fprintf(f, " (%d where those spread more than %.0f%%)", r->cfg.max_repeats,
			    r->cfg.noisy_spread * 100);
		fprintf(f, "; runs: repeats measured; speed-up over one process;\n");
	}
	fprintf(f, "efficiency: share of the single-process limit (the better of batched and streams "
	    "at the same P);\nspread: (max - min) / median");
	if (!r->model.on)
		fprintf(f, "; J: joules of a repeat's work (the same at every P; per task\nin exercise 4), "
		    "from the GPU's energy counter (- where it keeps none)");
	fputc('\n', f);
	if (!r->model.on && r->b) {
		if (r->eres_ok)
			fprintf(f, "energy counter: updates every %.0f ms (steps of %llu mJ): a J spans >= %d "
			    "updates (%.2f s);\nwhere a point's repeats are shorter, its work runs once more, "
			    "lengthened (for at most %.2f s),\nelse its repeats are summed; - where even their sum "
			    "is shorter\n", r->eres.period_s * 1000, (unsigned long long)r->eres.step_mj,
			    GPU_ENERGY_MIN_UPDATES, GPU_ENERGY_MIN_UPDATES * r->eres.period_s,
			    bench_energy_budget(&r->cfg));
		else
			fprintf(f, "energy counter: its resolution could not be measured (it moved %d times in "
			    "the time given): no J is trusted\n", r->eres.changes);
	}
}

void
bench_print_tables(const struct bench_run *r, FILE *f)
{
	const struct bench_setup *s = &r->setup;
	const char *sim = s->simulated ? "SIMULATED " : "";

	if (s->simulated)
		print_simulated(r, f);
	fprintf(f, "gpupack bench on %s%s (%s), driver %s, CUDA %s, %s\n",
	    s->simulated ? "a simulated " : "", s->gpu_name, s->uuid,
	    s->driver[0] ? s->driver : "?", s->cuda[0] ? s->cuda : "?", s->date);
	print_legend(r, f);
	for (int x = 0; x < r->nex; x++) {
		const struct bench_exercise *e = &r->ex[x];

		fprintf(f, "\n%sexercise %d: %s\n", sim, e->id, e->title);
		for (int si = 0; si < e->nsizes; si++)
			print_size(r, e, si, f);
	}
	if (r->failed)
		fprintf(f, "\n%d point%s failed (see the messages above)\n", r->failed,
		    r->failed == 1 ? "" : "s");
	if (r->model.on)
		fprintf(f, "\nsimulated, not measured: %s\n", s->cmdline ? s->cmdline : "");
	else if (r->wall_s > 0)
		fprintf(f, "\n%s in %.0f s: %s\n", s->simulated ? "simulated" : "measured", r->wall_s,
		    s->cmdline ? s->cmdline : "");
}

/* ---- JSON --------------------------------------------------------------- */

static void
json_list(struct json *j, const char *key, const double *v, int n)
{
	json_arr_begin(j, key);
	for (int i = 0; i < n; i++)
		json_double(j, NULL, v[i]);
	json_arr_end(j);
}

/* The model a simulated run's figures come from; null when they were measured. */
static void
json_model(const struct bench_run *r, struct json *j)
{
	const struct bench_model *m = &r->model;

	if (!m->on) {
		json_null(j, "model");
		return;
	}
	json_obj_begin(j, "model");
	json_int(j, "sms", m->sms);
	json_int(j, "fp32_lanes_per_sm", m->lanes);
	json_double(j, "clock_ghz", m->ghz);
	json_bool(j, "known_architecture", m->known);
	json_double(j, "peak_tflops", m->peak / 1e12);
	json_double(j, "sgemm_tflops", m->rate / 1e12);
	json_double(j, "call_us", m->call_s * 1e6);
	json_obj_end(j);
}

static void
json_setup(const struct bench_run *r, struct json *j)
{
	const struct bench_setup *s = &r->setup;
	const struct bench_config *c = &r->cfg;

	json_obj_begin(j, "setup");
	json_bool(j, "simulated", s->simulated);
	json_model(r, j);
	json_str(j, "gpu", s->gpu_name);
	json_str(j, "uuid", s->uuid);
	json_int(j, "gpu_index", s->gpu_index);
	json_str(j, "driver", s->driver);
	json_str(j, "cuda", s->cuda);
	json_str(j, "backend", s->backend);
	json_str(j, "worker_device", s->work_device[0] ? s->work_device : NULL);
	json_str(j, "date", s->date);
	json_str(j, "host", s->host);
	json_str(j, "command", s->cmdline);
	json_str(j, "version", GPUPACK_VERSION);
	json_str(j, "worker", c->work);
	json_bool(j, "quick", c->quick);
	json_int(j, "repeats", c->repeats);
	json_int(j, "max_repeats", c->max_repeats);
	json_double(j, "noisy_spread", c->noisy_spread);
	json_double(j, "target_s", c->target_s);
	json_bool(j, "mps_started", s->mps_started);
	json_double(j, "worker_setup_s", r->setup1 > 0 ? r->setup1 : NAN);
	json_double(j, "workers_ready_s", r->pool_ready_s > 0 ? r->pool_ready_s : NAN);
	json_int(j, "worker_groups", r->pools_started);
	json_double(j, "energy_period_s", r->eres_ok ? r->eres.period_s : NAN);
	json_double(j, "energy_step_j", r->eres_ok ? (double)r->eres.step_mj / 1000.0 : NAN);
	json_int(j, "energy_min_updates", GPU_ENERGY_MIN_UPDATES);
	json_double(j, "wall_s", r->wall_s);
	json_arr_begin(j, "procs");
	for (int i = 0; i < c->nprocs; i++)
		json_int(j, NULL, c->procs[i]);
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_point(const struct bench_run *r, const struct bench_exercise *e, const struct bench_point *p,
    struct json *j)
{
	json_obj_begin(j, NULL);
	json_int(j, "size", p->size);
	json_str(j, "mode", bench_mode_name(p->mode));
	json_int(j, "procs", p->procs);
	json_int(j, "iters", p->iters);
	json_double(j, "median", p->st.median);
	json_double(j, "min", p->st.min);
	json_double(j, "max", p->st.max);
	json_double(j, "spread", p->st.spread);
	json_double(j, "speedup", stats_ratio(p->st.median, one_process(e, p->size)));
	json_double(j, "limit", bench_limit_for(r, e, p->size, p->procs));
	json_double(j, "efficiency",
	    stats_ratio(p->st.median, bench_limit_for(r, e, p->size, p->procs)));
	json_list(j, "repeats", p->value, p->nrep);
	json_list(j, "elapsed_s", p->elapsed, p->nrep);
	json_list(j, "start_skew_s", p->skew, p->nrep);
	json_bool(j, "noisy", p->noisy);
	json_int(j, "retries", p->retries);
	json_int(j, "late_kept", p->late_kept);
	json_str(j, "error", p->error);
	json_str(j, "reused_from", p->reused_from);
	json_double(j, "setup_s", p->setup_s > 0 ? p->setup_s : NAN);
	json_double(j, "margin_s", p->margin_s > 0 ? p->margin_s : NAN);
	json_double(j, "energy_j", p->est.n > 0 ? p->est.median : NAN);
	json_list(j, "energy_repeats_j", p->energy, p->nrep);
	json_list(j, "energy_windows_s", p->ewindow, p->nrep);
	json_int(j, "energy_summed_repeats", p->epooled);
	json_int(j, "energy_lengthened_by", p->elong);
	json_int(j, "energy_lengthened_runs", p->elong_runs);
	json_double(j, "energy_lengthened_j", p->elong > 0 ? p->elong_j : NAN);
	json_double(j, "energy_lengthened_window_s", p->elong > 0 ? p->elong_window : NAN);
	json_obj_end(j);
}

static void
json_rec(const struct bench_rec *rec, struct json *j)
{
	json_obj_begin(j, NULL);
	json_int(j, "size", rec->size);
	if (!rec->valid) {
		json_null(j, "mode");
		json_obj_end(j);
		return;
	}
	json_str(j, "mode", bench_mode_name(rec->mode));
	json_int(j, "procs", rec->procs);
	json_double(j, "value", rec->value);
	json_double(j, "gain_over_one", rec->gain_one);
	json_double(j, "gain_over_timeslice", rec->gain_timeslice);
	json_str(j, "best_mode", bench_mode_name(rec->best_mode));
	json_int(j, "best_procs", rec->best_procs);
	json_double(j, "best", rec->best);
	json_double(j, "one_process", rec->one);
	json_double(j, "timeslice", rec->timeslice);
	json_bool(j, "energy_clear", rec->energy_clear);
	json_double(j, "energy_spread", rec->energy_spread);
	if (isnan(rec->energy) || !rec->energy_clear) {
		json_null(j, "energy_best_mode");
	} else {
		json_str(j, "energy_best_mode", bench_mode_name(rec->energy_mode));
		json_int(j, "energy_best_procs", rec->energy_procs);
		json_double(j, "energy_best_j", rec->energy);
		json_double(j, "energy_best_value", rec->energy_value);
	}
	json_obj_end(j);
}

static void
json_exercise(const struct bench_run *r, const struct bench_exercise *e, struct json *j)
{
	json_obj_begin(j, NULL);
	json_int(j, "id", e->id);
	json_str(j, "name", e->name);
	json_str(j, "title", e->title);
	json_str(j, "unit", e->unit);
	json_int(j, "cpu_ms", e->cpu_ms);
	json_arr_begin(j, "sizes");
	for (int i = 0; i < e->nsizes; i++)
		json_int(j, NULL, e->sizes[i]);
	json_arr_end(j);
	json_arr_begin(j, "points");
	for (int i = 0; i < e->npts; i++)
		json_point(r, e, &e->pts[i], j);
	json_arr_end(j);
	json_arr_begin(j, "recommendations");
	for (int i = 0; i < e->nsizes; i++)
		json_rec(&e->rec[i], j);
	json_arr_end(j);
	json_obj_end(j);
}

int
bench_write_json(const struct bench_run *r, FILE *f)
{
	struct json j;
	int rc;

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	/* first, so that nobody reads a simulated run's figures as measured ones */
	json_bool(&j, "simulated", r->setup.simulated);
	json_setup(r, &j);
	json_arr_begin(&j, "exercises");
	for (int x = 0; x < r->nex; x++)
		json_exercise(r, &r->ex[x], &j);
	json_arr_end(&j);
	json_int(&j, "failed_points", r->failed);
	json_obj_end(&j);
	rc = json_print(&j, f);
	json_free(&j);
	return rc;
}

/* ---- --out DIR ---------------------------------------------------------- */

static int
write_one(const char *dir, const char *name, const struct bench_run *r,
    const struct bench_exercise *e, int what)
{
	char path[PATH_MAX];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return err_sys(EXIT_ENV, "%s", path);
	if (what == 0)
		bench_print_tables(r, f);
	else if (what == 1)
		rc = bench_write_json(r, f);
	else
		rc = bench_write_svg(r, e, f);
	if (fclose(f) != 0 && rc == 0)
		rc = err_sys(EXIT_ENV, "%s", path);
	return rc;
}

/* A directory the user names is theirs: create it if missing, never change its mode. */
static int
out_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "%s", dir);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(EXIT_USAGE, "%s: not a directory", dir);
	return 0;
}

int
bench_write_dir(const struct bench_run *r, const char *dir)
{
	if (out_dir(dir) < 0)
		return -1;
	if (write_one(dir, "table.txt", r, NULL, 0) < 0 || write_one(dir, "bench.json", r, NULL, 1) < 0)
		return -1;
	return bench_write_svgs(r, dir);
}

int
bench_write_svgs(const struct bench_run *r, const char *dir)
{
	if (out_dir(dir) < 0)
		return -1;
	for (int x = 0; x < r->nex; x++) {
		char name[64];

		snprintf(name, sizeof name, "%s.svg", r->ex[x].name);
		if (write_one(dir, name, r, &r->ex[x], 2) < 0)
			return -1;
	}
	return 0;
}
