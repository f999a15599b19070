/*
 * mig_print: a MIG plan as `mig plan` prints it: tables or one JSON object
 * (keys in doc/mig.md). Presentation only; the plan comes from
 * src/share/mig_plan.c.
 */
#include "cmd/mig_print.h"
#include "share/mig.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *
state_name(int state)
{
	switch (state) {
	case MIG_INST_NEW: return "create";
	case MIG_INST_KEEP: return "reuse";
	case MIG_INST_IDLE: return "idle";
	case MIG_INST_BUSY: return "busy";
	default: return "destroy";
	}
}

/* Unit k (1-based) of its request, in plan order. */
static int
unit_number(const struct mig_plan *p, int u)
{
	int k = 0;

	for (int i = 0; i <= u; i++)
		k += p->units[i].request == p->units[u].request;
	return k;
}

void
mig_print_plan_json(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p, const struct mig_op *ops, int nops)
{
	struct json j;
	char what[320];

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_bool(&j, "optimal", p->optimal);
	json_int(&j, "search_nodes", p->nodes);
	json_int(&j, "requested", p->nunits);
	json_int(&j, "satisfied", p->score.satisfied);
	json_uint(&j, "waste_bytes", p->score.waste);
	json_int(&j, "sms", p->score.sms);
	json_int(&j, "operation_count", p->score.ops);
	json_int(&j, "bound_satisfied", p->bound_satisfied);
	json_uint(&j, "bound_waste_bytes", p->bound_waste);
	json_int(&j, "bound_sms", p->bound_sms);
	json_int(&j, "bound_operation_count", p->bound_ops);
	json_int(&j, "gap_level", p->gap_level);
	json_arr_begin(&j, "gpus");
	for (int g = 0; g < p->ngpus; g++) {
		const struct mig_gpu *gpu = &gpus[g];

		json_obj_begin(&j, NULL);
		json_int(&j, "index", gpu->index);
		json_str(&j, "uuid", gpu->uuid);
		json_str(&j, "name", gpu->name);
		json_bool(&j, "mig_enabled", gpu->mig_enabled);
		json_arr_begin(&j, "instances");
		for (int i = 0; i < p->gpus[g].ninst; i++) {
			const struct mig_inst *in = &p->gpus[g].inst[i];
			const struct mig_profile *pr = &gpu->profiles[in->profile];

			json_obj_begin(&j, NULL);
			json_int(&j, "instance", i);
			json_str(&j, "state", state_name(in->state));
			json_str(&j, "profile", pr->name);
			json_uint(&j, "profile_id", pr->id);
			json_obj_begin(&j, "placement");
			json_uint(&j, "start", in->at.start);
			json_uint(&j, "size", in->at.size);
			json_obj_end(&j);
			if (in->state == MIG_INST_NEW)
				json_null(&j, "gpu_instance_id");
			else
				json_uint(&j, "gpu_instance_id", in->gi_id);
			json_uint(&j, "memory_bytes", pr->mem_bytes);
			json_int(&j, "sms", pr->sms);
			json_int(&j, "units", in->nunits);
			json_uint(&j, "requested_bytes", in->mem_used);
			json_bool(&j, "mps_shared", in->shared);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "units");
	for (int r = 0; r < nreqs; r++)
		for (int u = 0; u < p->nunits; u++) {
			const struct mig_unit *un = &p->units[u];

			if (un->request != r)
				continue;
			json_obj_begin(&j, NULL);
			json_str(&j, "request", reqs[r].label);
			json_int(&j, "unit", unit_number(p, u));
			json_bool(&j, "satisfied", un->gpu >= 0);
			if (un->gpu >= 0) {
				const struct mig_inst *in = &p->gpus[un->gpu].inst[un->inst];

				json_int(&j, "gpu", gpus[un->gpu].index);
				json_int(&j, "instance", un->inst);
				json_str(&j, "profile", gpus[un->gpu].profiles[in->profile].name);
				json_obj_begin(&j, "placement");
				json_uint(&j, "start", in->at.start);
				json_uint(&j, "size", in->at.size);
				json_obj_end(&j);
				json_int(&j, "mps_thread_percentage", un->thread_pct);
				json_uint(&j, "mps_memory_limit_bytes", un->mem_limit);
			} else {
				json_str(&j, "reason", un->why);
			}
			json_obj_end(&j);
		}
	json_arr_end(&j);
	json_arr_begin(&j, "operations");
	for (int i = 0; i < nops; i++)
		json_str(&j, NULL, mig_op_describe(gpus, ngpus, &ops[i], what, sizeof what));
	json_arr_end(&j);
	json_obj_end(&j);
	json_print(&j, stdout);
	json_free(&j);
}

static void
plan_gpu_table(const struct mig_gpu *gpu, const struct mig_gpu_plan *gp)
{
	struct table t;

	printf("GPU %d  %s  %s  (MIG %s)\n", gpu->index, gpu->uuid, gpu->name,
	    gpu->mig_enabled ? "enabled" : "disabled");
	if (gp->ninst == 0) {
		printf("  no instances\n");
		return;
	}
	table_init(&t, "rllrrrrl", 2);
	table_row(&t, "#", "STATE", "PROFILE", "PLACEMENT", "GI", "MEMORY", "SMS", "HOLDS");
	for (int i = 0; i < gp->ninst; i++) {
		const struct mig_inst *in = &gp->inst[i];
		const struct mig_profile *pr = &gpu->profiles[in->profile];
		char n[16], at[32], gi[16], mem[32], sms[16], holds[64];

		snprintf(n, sizeof n, "%d", i);
		snprintf(at, sizeof at, "%u+%u", in->at.start, in->at.size);
		snprintf(gi, sizeof gi, "%u", in->gi_id);
		snprintf(sms, sizeof sms, "%d", pr->sms);
		format_size(pr->mem_bytes, mem, sizeof mem);
		if (in->nunits == 0)
			snprintf(holds, sizeof holds, "-");
		else
			snprintf(holds, sizeof holds, "%d request%s%s", in->nunits, in->nunits == 1 ? "" : "s",
			    in->shared ? " (MPS)" : "");
		table_row(&t, n, state_name(in->state), pr->name, at, in->state == MIG_INST_NEW ? NULL : gi, mem,
		    sms, holds);
	}
	table_print(&t, stdout);
	table_free(&t);
}

static void
plan_units_table(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p)
{
	struct table t;
	int unsat = 0;

	printf("requests:\n");
	table_init(&t, "lrlll", 2);
	table_row(&t, "REQUEST", "UNIT", "GPU", "INSTANCE", "MPS");
	for (int r = 0; r < nreqs; r++)
		for (int u = 0; u < p->nunits; u++) {
			const struct mig_unit *un = &p->units[u];
			char k[16], gpu[16], inst[64], mps[96], a[32];

			if (un->request != r)
				continue;
			if (un->gpu < 0) {
				unsat++;
				continue;
			}
			snprintf(k, sizeof k, "%d", unit_number(p, u));
			snprintf(gpu, sizeof gpu, "%d", gpus[un->gpu].index);
			snprintf(inst, sizeof inst, "#%d %s at %u+%u", un->inst,
			    gpus[un->gpu].profiles[p->gpus[un->gpu].inst[un->inst].profile].name,
			    p->gpus[un->gpu].inst[un->inst].at.start, p->gpus[un->gpu].inst[un->inst].at.size);
			if (un->mem_limit)
				snprintf(mps, sizeof mps, "threads %d%%, memory %s", un->thread_pct,
				    format_size(un->mem_limit, a, sizeof a));
			else
				snprintf(mps, sizeof mps, "-");
			table_row(&t, reqs[r].label, k, gpu, inst, mps);
		}
	table_print(&t, stdout);
	table_free(&t);
	if (!unsat)
		return;
	printf("unsatisfied:\n");
	for (int r = 0; r < nreqs; r++)
		for (int u = 0; u < p->nunits; u++)
			if (p->units[u].request == r && p->units[u].gpu < 0)
				printf("  %s unit %d: %s\n", reqs[r].label, unit_number(p, u), p->units[u].why);
}

/* "optimal", or how far from it the bound says the plan can be. */
static void
plan_verdict(const struct mig_plan *p, char *buf, size_t len)
{
	static const char cut[] = "not proven optimal (search budget reached; --effort N searches longer): ";
	char w[32];

	switch (p->gap_level) {
	case 0:
		snprintf(buf, len, "optimal");
		break;
	case 1:
		snprintf(buf, len, "%sno plan satisfies more than %d", cut, p->bound_satisfied);
		break;
	case 2:
		snprintf(buf, len, "%snone satisfies more, none wastes less than %s", cut,
		    format_size(p->bound_waste, w, sizeof w));
		break;
	case 3:
		snprintf(buf, len, "%snone satisfies more or wastes less, none uses fewer than %d SMs", cut,
		    p->bound_sms);
		break;
	default:
		snprintf(buf, len, "%snone is better before the operations, none needs fewer than %d", cut,
		    p->bound_ops);
		break;
	}
}

void
mig_print_plan_table(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p)
{
	char w[32], verdict[256];

	plan_verdict(p, verdict, sizeof verdict);
	printf("plan: %d of %d requests satisfied; %s of instance memory unrequested; %d SMs; %d operation%s; %s\n",
	    p->score.satisfied, p->nunits, format_size(p->score.waste, w, sizeof w), p->score.sms, p->score.ops,
	    p->score.ops == 1 ? "" : "s", verdict);
	for (int g = 0; g < p->ngpus; g++)
		plan_gpu_table(&gpus[g], &p->gpus[g]);
	plan_units_table(gpus, ngpus, reqs, nreqs, p);
}

