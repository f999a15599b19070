/*
 * usage: one command's wall time, CPU time, peak GPU memory and GPU energy
 * (gpu/usage.h). What is exact and what is not:
 *   wall: the monotonic clock from fork to the command's end: exact.
 *   CPU: the kernel's rusage of the command and the children it waited
 *     for (user + system): exact; a child it left running is not counted.
 *   peak memory: the most its processes held at once in the device's
 *     per-process samples (NVML's running processes, MPS clients included):
 *     an estimate, since a peak between two samples is missed; unknown
 *     where the driver gives no per-process memory.
 *   energy: the device's counter over the command's life; its resolution
 *     measured from the readings themselves (gpu/energy): unknown when the
 *     life spans fewer than GPU_ENERGY_MIN_UPDATES updates, never 0; exact
 *     when every sample showed the command alone on the device, else an
 *     estimate (the device's whole energy, others' share included).
 */
#include "gpu/usage.h"
#include "util/json.h"

#include <math.h>
#include <string.h>

static void
field(struct gpu_usage_field *f, double v, int q, const char *why)
{
	f->value = q == GPU_USAGE_UNKNOWN ? NAN : v;
	f->quality = q;
	snprintf(f->why, sizeof f->why, "%s", why);
}

void
gpu_usage_init(struct gpu_usage *u)
{
	memset(u, 0, sizeof *u);
	gpu_energy_meter_init(&u->meter);
	field(&u->wall_s, NAN, GPU_USAGE_UNKNOWN, "not measured");
	field(&u->cpu_s, NAN, GPU_USAGE_UNKNOWN, "not measured");
	field(&u->peak_mem, NAN, GPU_USAGE_UNKNOWN, "not measured");
	field(&u->energy_j, NAN, GPU_USAGE_UNKNOWN, "not measured");
}

void
gpu_usage_feed_sample(struct gpu_usage *u, const struct gpu_sample *s, int (*mine)(pid_t, void *), void *arg)
{
	double held = 0;
	int seen = 0, with_mem = 0;

	if (!s || s->nprocs < 0) {
		u->procs_unknown = 1;
		return;
	}
	u->samples++;
	for (int i = 0; i < s->nprocs && i < GPU_SAMPLE_PROCS; i++) {
		if (!mine(s->procs[i].pid, arg)) {
			u->others_seen = 1;
			continue;
		}
		seen++;
		if (s->procs[i].mem > 0) {
			with_mem++;
			held += (double)s->procs[i].mem;
		}
	}
	if (s->nprocs > GPU_SAMPLE_PROCS)
		u->others_seen = 1;  /* those not listed may be anyone's */
	/* its processes listed without memory: the driver does not say (no figure from this sample) */
	if (seen > 0)
		u->mine_seen++;
	if (seen > 0 && with_mem < seen)
		return;
	u->samples_mem++;
	if (held > u->peak_bytes)
		u->peak_bytes = held;
}

void
gpu_usage_feed_energy(struct gpu_usage *u, double t, uint64_t mj)
{
	gpu_energy_meter_feed(&u->meter, t, mj);
	u->energy_reads++;
}

void
gpu_usage_finish(struct gpu_usage *u, double wall_s, double user_s, double sys_s)
{
	struct gpu_energy_res res;
	char why[160];

	field(&u->wall_s, wall_s, wall_s >= 0 ? GPU_USAGE_EXACT : GPU_USAGE_UNKNOWN,
	    wall_s >= 0 ? "the monotonic clock from start to end" : "no clock");
	if (isnan(user_s) || isnan(sys_s))
		field(&u->cpu_s, NAN, GPU_USAGE_UNKNOWN, "the kernel gave no rusage");
	else
		field(&u->cpu_s, user_s + sys_s, GPU_USAGE_EXACT,
		    "the kernel's user + system time of the command and the children it waited for");

	if (u->samples > 0 && u->mine_seen == 0)
		field(&u->peak_mem, NAN, GPU_USAGE_UNKNOWN,
		    "its processes never appeared in the driver's process list (none on the GPU, or hidden)");
	else if (u->samples_mem > 0)
		field(&u->peak_mem, u->peak_bytes, GPU_USAGE_ESTIMATE,
		    u->procs_unknown || u->samples_mem < u->samples ?
		    "the most its processes held in a sample; some samples had no per-process memory" :
		    "the most its processes held at once in the driver's per-process samples");
	else if (u->samples > 0)
		field(&u->peak_mem, NAN, GPU_USAGE_UNKNOWN, "the driver listed its processes without their memory");
	else
		field(&u->peak_mem, NAN, GPU_USAGE_UNKNOWN, "the driver gives no per-process memory here");

	if (u->energy_reads == 0) {
		field(&u->energy_j, NAN, GPU_USAGE_UNKNOWN, "the GPU keeps no energy counter");
		return;
	}
	if (gpu_energy_meter_res(&u->meter, &res) < 0) {
		field(&u->energy_j, NAN, GPU_USAGE_UNKNOWN,
		    "the energy counter did not move twice: its resolution is not known");
		return;
	}
	if (!gpu_energy_window_ok(&res, u->meter.last.t - u->meter.first.t)) {
		snprintf(why, sizeof why, "%.3f s is under %d updates of the energy counter (every %.0f ms)",
		    u->meter.last.t - u->meter.first.t, GPU_ENERGY_MIN_UPDATES, res.period_s * 1000);
		field(&u->energy_j, NAN, GPU_USAGE_UNKNOWN, why);
		return;
	}
	if (u->counter_shared)
		field(&u->energy_j, gpu_energy_joules(&res, &u->meter.first, &u->meter.last), GPU_USAGE_ESTIMATE,
		    "the whole GPU's energy counter over its life (a MIG device has no counter of its own)");
	else if (u->samples > 0 && !u->others_seen && !u->procs_unknown)
		field(&u->energy_j, gpu_energy_joules(&res, &u->meter.first, &u->meter.last), GPU_USAGE_EXACT,
		    "the device's energy counter over its life; no other process was seen on the device");
	else
		field(&u->energy_j, gpu_energy_joules(&res, &u->meter.first, &u->meter.last), GPU_USAGE_ESTIMATE,
		    u->others_seen ? "the device's energy counter over its life, other processes' share included" :
		    "the device's energy counter over its life; whether others used the device is not known");
	if (isnan(u->energy_j.value))
		field(&u->energy_j, NAN, GPU_USAGE_UNKNOWN, "the energy counter went backwards (a driver reload?)");
}

const char *
gpu_usage_quality_name(int q)
{
	return q == GPU_USAGE_EXACT ? "exact" : q == GPU_USAGE_ESTIMATE ? "estimate" : "unknown";
}

static void
print_field(FILE *f, const char *name, const struct gpu_usage_field *x, double scale, const char *fmt,
    const char *unit)
{
	char v[48];

	if (isnan(x->value))
		snprintf(v, sizeof v, "-");
	else {
		snprintf(v, sizeof v, fmt, x->value / scale);
		strncat(v, unit, sizeof v - strlen(v) - 1);
	}
	fprintf(f, "  %-12s %-12s %-9s %s\n", name, v, gpu_usage_quality_name(x->quality), x->why);
}

void
gpu_usage_print(const struct gpu_usage *u, const char *cmd, FILE *f)
{
	fprintf(f, "gpupack: mps exec: usage of %s:\n", cmd);
	print_field(f, "wall", &u->wall_s, 1, "%.3f", " s");
	print_field(f, "CPU time", &u->cpu_s, 1, "%.3f", " s");
	print_field(f, "peak memory", &u->peak_mem, 1048576.0, "%.0f", " MiB");
	print_field(f, "GPU energy", &u->energy_j, 1, "%.1f", " J");
}

static void
json_field(struct json *j, const char *key, const struct gpu_usage_field *x)
{
	json_obj_begin(j, key);
	json_double(j, "value", x->value);
	json_str(j, "quality", gpu_usage_quality_name(x->quality));
	json_str(j, "how", x->why);
	json_obj_end(j);
}

int
gpu_usage_json(const struct gpu_usage *u, const char *cmd, int exit_status, const char *uuid, FILE *f)
{
	struct json j;
	int rc;

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_str(&j, "command", cmd);
	json_int(&j, "exit_status", exit_status);
	json_str(&j, "device", uuid);
	json_field(&j, "wall_s", &u->wall_s);
	json_field(&j, "cpu_s", &u->cpu_s);
	json_field(&j, "peak_memory_bytes", &u->peak_mem);
	json_field(&j, "energy_j", &u->energy_j);
	json_int(&j, "samples", u->samples);
	json_obj_end(&j);
	rc = json_print(&j, f);
	json_free(&j);
	return rc;
}
