/*
 * test_slurm_conf: what the Slurm plugin is told, parsed strictly
 * (src/slurm/jobconf.c): a job's --gpupack-mps SPEC, the site's
 * plugstack.conf arguments, the limits the two give together, %n in the
 * state root, and how a site numbers tasks' devices (src/slurm/jobmps.c).
 */
#include "slurm/jobconf.h"
#include "slurm/jobmps.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/units.h"

#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
spec_bad(const char *s, const char *why)
{
	struct jobmps_spec sp = {7, 7, 7, 7};
	int rc = jobmps_spec_parse(s, &sp);
	int ok_ = rc == -1 && err_code() == EXIT_USAGE && strstr(err_msg(), why) != NULL &&
	    strchr(err_msg(), '\n') == NULL && sp.off == 7;

	ok(ok_, "SPEC '%s' refused: %s", s, err_msg());
	err_clear();
	return ok_;
}

static int
conf_bad(const char *a, const char *b, const char *why)
{
	char *av[2] = {(char *)a, (char *)b};
	struct jobmps_conf c;
	int rc = jobmps_conf_parse(b ? 2 : 1, av, &c);
	int ok_ = rc == -1 && err_code() == EXIT_USAGE && strstr(err_msg(), why) != NULL;

	ok(ok_, "arguments '%s%s%s' refused: %s", a, b ? " " : "", b ? b : "", err_msg());
	err_clear();
	return ok_;
}

static void
test_spec(void)
{
	struct jobmps_spec sp;
	char buf[128];

	ok(jobmps_spec_parse("", &sp) == 0 && !sp.off && sp.sm_pct == 0 && sp.mem_bytes == 0 &&
	    sp.priority == MPS_PRIO_UNSET, "empty SPEC: nothing set");
	ok(jobmps_spec_parse(NULL, &sp) == 0 && sp.sm_pct == 0, "no SPEC at all: nothing set");
	ok(jobmps_spec_parse("sm=25,mem=1G,priority=low", &sp) == 0 && sp.sm_pct == 25 &&
	    sp.mem_bytes == GIB(1) && sp.priority == MPS_PRIO_LOW, "sm=25,mem=1G,priority=low");
	is_str(jobmps_spec_format(&sp, buf, sizeof buf), "sm=25,mem=1G,priority=low", "formatted back");
	ok(jobmps_spec_parse("mem=512M", &sp) == 0 && sp.mem_bytes == MIB(512) && sp.sm_pct == 0,
	    "mem alone");
	ok(jobmps_spec_parse("sm=12.5", &sp) == 0 && sp.sm_pct == 12.5, "a fractional percentage");
	ok(jobmps_spec_parse("off", &sp) == 0 && sp.off, "off");
	spec_bad("sm=0", "more than 0 and at most 100");
	spec_bad("sm=101", "more than 0 and at most 100");
	spec_bad("sm=ten", "more than 0");
	spec_bad("mem=1", "no unit");
	spec_bad("mem=512K", "at least 1M");
	spec_bad("priority=high", "want normal or low");
	spec_bad("colour=blue", "unknown item 'colour'");
	spec_bad("sm", "is not KEY=VALUE");
	spec_bad("sm=25,", "an empty item");
	spec_bad(",sm=25", "an empty item");
	spec_bad("sm=25,,mem=1G", "an empty item");
	spec_bad("off,sm=25", "off takes no limits");
	spec_bad("sm=10,sm=20", "'sm=10,sm=20': sm= given twice");
	spec_bad("off,off", "off given twice");
	{
		char big[400];

		memset(big, 'a', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		spec_bad(big, "too long");
	}
}

static void
test_conf(void)
{
	char *args[] = {"control=/opt/mps/ctl", "state=/run/x/%n", "default=sm=50,mem=4G", "max=sm=80,mem=8G",
		"enable=always", "on_error=run", "grace=30s", "cuda_index=local", "sim=/t/m.topo"};
	struct jobmps_conf c;
	char root[64];

	ok(jobmps_conf_parse(0, NULL, &c) == 0 && strcmp(c.state, JOBMPS_STATE_DEFAULT) == 0 &&
	    c.grace == JOBMPS_GRACE_DEFAULT && !c.always && !c.run_without && c.index == JOBMPS_INDEX_AUTO &&
	    c.control[0] == '\0', "no arguments: the defaults");
	ok(jobmps_state_root(&c, "gpu07", root, sizeof root) == 0 && strcmp(root, "/run/gpupack/gpu07") == 0,
	    "the default state root is the node's own (several slurmd may share a host)");
	ok(jobmps_state_fits(&c, "a-node-of-19-chars-") == 0, "it leaves room for a node name of 19 characters");
	ok(jobmps_conf_parse(9, args, &c) == 0, "every argument");
	ok(strcmp(c.control, "/opt/mps/ctl") == 0 && c.def.sm_pct == 50 && c.def.mem_bytes == GIB(4) &&
	    c.max.sm_pct == 80 && c.max.mem_bytes == GIB(8) && c.always && c.run_without && c.grace == 30 &&
	    c.index == JOBMPS_INDEX_LOCAL && strcmp(c.sim, "/t/m.topo") == 0, "each read as written");
	ok(jobmps_state_root(&c, "gpu07", root, sizeof root) == 0 && strcmp(root, "/run/x/gpu07") == 0,
	    "%%n in state= is the node");
	ok(jobmps_state_root(&c, "a-node-name-long-enough-to-overflow-the-buffer-given-here", root,
	    sizeof root) == -1, "a state root that does not fit is an error");
	err_clear();
	conf_bad("bogus=1", NULL, "unknown argument 'bogus=1' (known: control=");
	conf_bad("verbose", NULL, "unknown argument 'verbose'");
	conf_bad("control=bin/ctl", NULL, "want an absolute path");
	conf_bad("state=", NULL, "want an absolute path");
	conf_bad("default=sm=500", NULL, "default=: sm=500");
	conf_bad("default=off", NULL, "say enable=ask");
	conf_bad("max=priority=low", NULL, "only sm= and mem= have a maximum");
	conf_bad("enable=sometimes", NULL, "want ask or always");
	conf_bad("on_error=ignore", NULL, "want fail or run");
	conf_bad("grace=forever", NULL, "want a duration");
	conf_bad("grace=2h", NULL, "at most 1h");
	conf_bad("cuda_index=pci", NULL, "want auto, global or local");
	conf_bad("max=sm=50", "default=sm=80", "default sm=80 is over max sm=50");
	conf_bad("max=mem=1G", "default=mem=2G", "default mem= is over max mem=");
	conf_bad("grace=10", "grace=20", "grace= given twice ('grace=20')");
	conf_bad("state=/run/a", "state=/run/b", "state= given twice");
	/* a job id of 8 digits and a UUID leave 33 bytes for the state root */
	conf_bad("state=/run/gpupack-slurm-state-is-too-long", NULL, "too long for MPS's socket paths");
	conf_bad("state=/run/gpupack-slurm-state-is-too-long/%n", NULL, "give the plugin a shorter state=");
}

static void
test_limits(void)
{
	char *args[] = {"default=sm=50,priority=low", "max=sm=80,mem=8G"};
	struct jobmps_conf c;
	struct jobmps_spec sp;
	struct mps_limits l;

	jobmps_conf_parse(2, args, &c);
	ok(jobmps_limits(&c, NULL, &l) == 0 && l.sm_pct == 50 && l.mem_bytes == GIB(8) &&
	    l.priority == MPS_PRIO_LOW, "nothing asked: the defaults, the maximum memory");
	jobmps_spec_parse("sm=70,mem=2G,priority=normal", &sp);
	ok(jobmps_limits(&c, &sp, &l) == 0 && l.sm_pct == 70 && l.mem_bytes == GIB(2) &&
	    l.priority == MPS_PRIO_NORMAL, "what the job asks wins over the defaults");
	jobmps_spec_parse("sm=90", &sp);
	ok(jobmps_limits(&c, &sp, &l) == -1 && strstr(err_msg(), "sm=90 is over this site's maximum sm=80"),
	    "over the maximum sm: refused");
	err_clear();
	jobmps_spec_parse("mem=9G", &sp);
	ok(jobmps_limits(&c, &sp, &l) == -1 && strstr(err_msg(), "mem=9 GiB is over this site's maximum mem=8 GiB"),
	    "over the maximum mem: refused");
	err_clear();
	jobmps_conf_parse(0, NULL, &c);
	ok(jobmps_limits(&c, NULL, &l) == 0 && l.sm_pct == 0 && l.mem_bytes == 0 &&
	    l.priority == MPS_PRIO_UNSET, "no defaults, no maxima: no limits");
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static void
test_index_mode(void)
{
	char dir[] = "/tmp/gpupack-slurmconf.XXXXXX", sc[64], cg[64];

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(sc, sizeof sc, "%s/slurm.conf", dir);
	snprintf(cg, sizeof cg, "%s/cgroup.conf", dir);
	is_int(jobmps_index_mode(sc), JOBMPS_INDEX_GLOBAL, "no slurm.conf: global indices");
	write_text(sc, "ClusterName=x\nTaskPlugin=task/affinity,task/cgroup\n");
	is_int(jobmps_index_mode(sc), JOBMPS_INDEX_GLOBAL, "task/cgroup without cgroup.conf: global");
	write_text(cg, "ConstrainCores=yes\n# ConstrainDevices=yes\n");
	is_int(jobmps_index_mode(sc), JOBMPS_INDEX_GLOBAL, "ConstrainDevices commented out: global");
	write_text(cg, "ConstrainCores=yes\n  constraindevices = Yes  # as sites write it\n");
	is_int(jobmps_index_mode(sc), JOBMPS_INDEX_LOCAL, "task/cgroup and ConstrainDevices=yes: local");
	write_text(sc, "TaskPlugin=task/affinity\n");
	is_int(jobmps_index_mode(sc), JOBMPS_INDEX_GLOBAL, "ConstrainDevices without task/cgroup: global");
	unlink(sc);
	unlink(cg);
	rmdir(dir);
}

static void
test_split(void)
{
	char *items[3];
	int n = jobmps_split_list("0, 2,GPU-ab", items, 3);

	ok(n == 3 && strcmp(items[0], "0") == 0 && strcmp(items[1], "2") == 0 &&
	    strcmp(items[2], "GPU-ab") == 0, "a device list split and trimmed");
	for (int i = 0; i < n; i++)
		free(items[i]);
	ok(jobmps_split_list("0,1,2,3", items, 3) == -1, "more devices than fit: an error");
	err_clear();
	is_int(jobmps_split_list(NULL, items, 3), 0, "no list: no device");
}

int
main(void)
{
	test_spec();
	test_conf();
	test_limits();
	test_index_mode();
	test_split();
	return done_testing();
}
