/*
 * gpujson: the JSON of backend structs that several commands print, written
 * once so that `devices --json` and `mig profiles --json` use the same keys.
 */
#ifndef GPUPACK_CMD_GPUJSON_H
#define GPUPACK_CMD_GPUJSON_H

#include "gpu/backend.h"
#include "util/json.h"

/* {"start": S, "size": N} under key (NULL inside an array). */
void json_mig_placement(struct json *j, const char *key, const struct mig_placement *pl);
/* One GPU-instance profile: name, profile_index, profile_id, slices, memory_bytes, sms,
 * max_count, copy_engines, placements. */
void json_mig_profile(struct json *j, const struct mig_profile *pr);

#endif
