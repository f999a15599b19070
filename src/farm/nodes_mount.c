/*
 * nodes_mount: the one filesystem a farm over nodes refuses (farm/nodes.h,
 * doc/slurm.md's contract). An NFS mount with nocto answers open(2) from
 * its attribute cache, for up to acregmax seconds (60 by default): the
 * others' heartbeats would look that much older (a live node declared
 * lost) and the end's wait for their logs could give up before it sees
 * them. Found in /proc/self/mountinfo, whose NFS options say nocto, noac
 * and any acregmax other than the default.
 */
#include "farm/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFS_ACREGMAX_DEFAULT 60.0

/* Does the comma-separated opts hold name (alone, or name=value: *value set)? */
static int
has_opt(const char *opts, const char *name, const char **value)
{
	size_t n = strlen(name);

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (strncmp(p, name, n) != 0)
			continue;
		if (p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n')
			return 1;
		if (p[n] == '=' && value) {
			*value = p + n + 1;
			return 1;
		}
	}
	return 0;
}

/* Is mount point mnt a prefix of path, as a directory? */
static size_t
covers(const char *mnt, size_t len, const char *path)
{
	if (len == 1 && mnt[0] == '/')
		return 1;
	return strncmp(mnt, path, len) == 0 && (path[len] == '/' || path[len] == '\0') ? len : 0;
}

int
nodes_mount_check(const char *mountinfo, const char *path, double lost_after, char *why, size_t size)
{
	const char *best = NULL;
	size_t best_len = 0;

	/* the mount that holds path: the longest mount point over it (field 5 of each line) */
	for (const char *l = mountinfo; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *f = l, *end;
		size_t len;

		for (int i = 0; i < 4 && f; i++)
			f = strchr(f, ' ') ? strchr(f, ' ') + 1 : NULL;
		if (!f || !(end = strchr(f, ' ')))
			continue;
		len = covers(f, (size_t)(end - f), path);
		if (len >= best_len && len > 0) {
			best = l;
			best_len = len;
		}
	}
	if (best) {
		const char *sep = strstr(best, " - "), *opts, *v = NULL;
		double acregmax = NFS_ACREGMAX_DEFAULT;

		/* after " - ": the type, the source, the filesystem's options */
		if (!sep || strncmp(sep + 3, "nfs", 3) != 0)
			return 0;
		opts = strchr(sep + 3, ' ');
		opts = opts ? strchr(opts + 1, ' ') : NULL;
		if (!opts || !has_opt(opts + 1, "nocto", NULL) || has_opt(opts + 1, "noac", NULL))
			return 0;
		if (has_opt(opts + 1, "acregmax", &v))
			acregmax = atof(v);
		if (acregmax * 2 < lost_after)
			return 0;
		snprintf(why, size, "%s is on an NFS mount with nocto, which answers open(2) from a cache of up "
		    "to %.0f s: the farm reads the others' heartbeats and logs through open(2); mount it without "
		    "nocto (close-to-open, the default), or with actimeo=%.0f or less, below half of "
		    "GPUPACK_FARM_LOST (%.0f s)", path, acregmax, lost_after / 2 - 1 > 0 ? lost_after / 2 - 1 : 0,
		    lost_after);
		return 1;
	}
	return 0;
}
