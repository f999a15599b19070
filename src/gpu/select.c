/*
 * select: device selectors. Indices are the driver's, as nvidia-smi shows
 * them; UUIDs match whole and case-insensitively.
 */
#include "gpu/select.h"
#include "util/err.h"
#include "util/str.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
gpu_target_gpu(const struct gpu_system *sys, int gpu, struct gpu_target *t)
{
	const struct gpu_info *g = &sys->gpus[gpu];

	memset(t, 0, sizeof *t);
	t->gpu = gpu;
	t->gi = t->ci = -1;
	str_copy(t->uuid, g->uuid, sizeof t->uuid);
	t->mem_total = g->mem_total;
	t->mem_free = g->mem_free;
	t->sms = g->sms;
}

void
gpu_target_mig(const struct gpu_system *sys, int gpu, int gi, int ci, struct gpu_target *t)
{
	const struct mig_gi *g = &sys->gpus[gpu].gi[gi];

	memset(t, 0, sizeof *t);
	t->gpu = gpu;
	t->gi = gi;
	t->ci = ci;
	str_copy(t->uuid, g->ci[ci].uuid, sizeof t->uuid);
	t->mem_total = g->mem_total;
	t->mem_free = g->mem_total > g->mem_used ? g->mem_total - g->mem_used : 0;
	t->sms = g->ci[ci].sms ? g->ci[ci].sms : g->sms;
}

static int
is_index(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int
gpu_select_one(const struct gpu_system *sys, const char *sel, struct gpu_target *out)
{
	if (is_index(sel)) {
		long idx;

		if (parse_long(sel, 0, 1 << 20, &idx) < 0)
			return err_set(EXIT_USAGE, "device '%s': not a valid index", sel);
		for (int i = 0; i < sys->ngpus; i++)
			if (sys->gpus[i].index == idx) {
				gpu_target_gpu(sys, i, out);
				return 0;
			}
		if (sys->ngpus == 0)
			return err_set(EXIT_USAGE, "device %s: no GPU found", sel);
		return err_set(EXIT_USAGE, "device %s: no such GPU (indices 0 to %d)", sel,
		    sys->gpus[sys->ngpus - 1].index);
	}
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];

		if (strcasecmp(g->uuid, sel) == 0) {
			gpu_target_gpu(sys, i, out);
			return 0;
		}
		for (int j = 0; j < g->ngi; j++)
			for (int k = 0; k < g->gi[j].nci; k++)
				if (strcasecmp(g->gi[j].ci[k].uuid, sel) == 0) {
					gpu_target_mig(sys, i, j, k, out);
					return 0;
				}
	}
	return err_set(EXIT_USAGE, "device '%s': no GPU or MIG device has that index or UUID", sel);
}

static void
push(struct gpu_target **v, int *n, size_t *cap, const struct gpu_target *t)
{
	xgrow(v, cap, (size_t)*n + 1, sizeof **v);
	(*v)[(*n)++] = *t;
}

/* A whole GPU, or its MIG devices when MIG is on. */
static void
push_gpu(const struct gpu_system *sys, int gpu, struct gpu_target **v, int *n, size_t *cap)
{
	const struct gpu_info *g = &sys->gpus[gpu];
	struct gpu_target t;

	if (g->mig_current != MIG_ENABLED) {
		gpu_target_gpu(sys, gpu, &t);
		push(v, n, cap, &t);
		return;
	}
	for (int j = 0; j < g->ngi; j++)
		for (int k = 0; k < g->gi[j].nci; k++) {
			gpu_target_mig(sys, gpu, j, k, &t);
			push(v, n, cap, &t);
		}
}

int
gpu_select(const struct gpu_system *sys, const char *sel, struct gpu_target **out, int *n)
{
	struct gpu_target *v = NULL;
	size_t cap = 0;
	char *copy, *tok, *save = NULL;

	*out = NULL;
	*n = 0;
	if (!sel) {
		for (int i = 0; i < sys->ngpus; i++)
			push_gpu(sys, i, &v, n, &cap);
		*out = v;
		return 0;
	}
	copy = xstrdup(sel);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct gpu_target t;
		int first = *n;

		tok = str_trim(tok);
		if (gpu_select_one(sys, tok, &t) < 0)
			goto fail;
		if (t.gi < 0)
			push_gpu(sys, t.gpu, &v, n, &cap);
		else
			push(&v, n, &cap, &t);
		for (int i = first; i < *n; i++)
			for (int j = 0; j < first; j++)
				if (strcasecmp(v[i].uuid, v[j].uuid) == 0) {
					err_set(EXIT_USAGE, "device '%s' is selected twice", tok);
					goto fail;
				}
	}
	if (*n == 0 && sel[0] == '\0') {
		err_set(EXIT_USAGE, "empty device selection");
		goto fail;
	}
	free(copy);
	*out = v;
	return 0;
fail:
	free(copy);
	free(v);
	*n = 0;
	return -1;
}
