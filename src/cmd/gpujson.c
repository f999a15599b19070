/*
 * gpujson: shared JSON of MIG placements and profiles.
 */
#include "cmd/gpujson.h"

void
json_mig_placement(struct json *j, const char *key, const struct mig_placement *pl)
{
	json_obj_begin(j, key);
	json_uint(j, "start", pl->start);
	json_uint(j, "size", pl->size);
	json_obj_end(j);
}

void
json_mig_profile(struct json *j, const struct mig_profile *pr)
{
	json_obj_begin(j, NULL);
	json_str(j, "name", pr->name);
	json_int(j, "profile_index", pr->index);
	json_uint(j, "profile_id", pr->id);
	json_int(j, "slices", pr->slices);
	json_uint(j, "memory_bytes", pr->mem_bytes);
	json_int(j, "sms", pr->sms);
	json_int(j, "max_count", pr->max_count);
	json_int(j, "copy_engines", pr->copy_engines);
	json_arr_begin(j, "placements");
	for (int k = 0; k < pr->nplacements; k++)
		json_mig_placement(j, NULL, &pr->placements[k]);
	json_arr_end(j);
	json_obj_end(j);
}
