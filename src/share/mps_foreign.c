/*
 * mps_foreign: control daemons running on this machine that gpupack did not
 * start (a site's own, another user's). Found from /proc so that `devices`
 * and `mps status` can name them; never touched.
 */
#include "share/mps.h"
#include "share/mps_internal.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
is_managed_pid(pid_t pid, const struct mps_daemon *ours, int nours)
{
	for (int i = 0; i < nours; i++)
		if (ours[i].pid == pid)
			return 1;
	return 0;
}

/* Is /proc/PID a control daemon: argv[0] named like the control program, run with -d? */
static int
foreign_candidate(pid_t pid, const char *control_base)
{
	char path[64], *data = NULL, *base;
	size_t len = 0;
	int yes = 0;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	if (read_file(path, &data, &len) < 0) {
		err_clear();
		return 0;
	}
	if (len > 0) {
		size_t a0 = strlen(data);

		base = strrchr(data, '/');
		base = base ? base + 1 : data;
		yes = (strcmp(base, CONTROL_NAME) == 0 || (control_base && strcmp(base, control_base) == 0)) &&
		    a0 + 1 < len && strcmp(data + a0 + 1, "-d") == 0;
	}
	free(data);
	return yes;
}

static void
foreign_pipe_dir(pid_t pid, char *out, size_t size)
{
	char path[64], *data = NULL;
	size_t len = 0;

	str_copy(out, "?", size);
	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	if (read_file(path, &data, &len) < 0) {
		err_clear();
		return;
	}
	str_copy(out, "/tmp/nvidia-mps", size); /* the daemon's default */
	for (size_t off = 0; off < len; off += strlen(data + off) + 1)
		if (str_starts(data + off, "CUDA_MPS_PIPE_DIRECTORY="))
			str_copy(out, data + off + strlen("CUDA_MPS_PIPE_DIRECTORY="), size);
	free(data);
}

int
mps_foreign_list(const struct mps_daemon *ours, int nours, struct mps_foreign **out, int *n)
{
	char control[PATH_MAX];
	const char *base = NULL;
	size_t cap = 0;
	struct dirent *e;
	DIR *dir;

	*out = NULL;
	*n = 0;
	if (mps_control_path(control, sizeof control) == 0) {
		base = strrchr(control, '/');
		base = base ? base + 1 : control;
	}
	err_clear();
	dir = opendir("/proc");
	if (!dir)
		return err_sys(EXIT_ENV, "cannot read /proc");
	while ((e = readdir(dir)) != NULL) {
		long v;
		struct mps_foreign f;

		if (!isdigit((unsigned char)e->d_name[0]) || parse_long(e->d_name, 1, 1L << 30, &v) < 0) {
			err_clear();
			continue;
		}
		if (is_managed_pid((pid_t)v, ours, nours) || !foreign_candidate((pid_t)v, base))
			continue;
		memset(&f, 0, sizeof f);
		f.pid = (pid_t)v;
		foreign_pipe_dir(f.pid, f.pipe_dir, sizeof f.pipe_dir);
		xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
		(*out)[(*n)++] = f;
	}
	closedir(dir);
	return 0;
}
