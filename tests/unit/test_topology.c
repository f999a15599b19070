/*
 * test_topology: the topology parser (every shipped machine, every mistake
 * with its file:line), the canonical writer (round trips), the MIG changes
 * checked as the driver checks them, and the sim backend's file rewrites
 * and failure injection.
 */
#include "gpu/backend.h"
#include "gpu/topology.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include "tap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *shipped[] = {
	"h200-141gb.topo", "h200-141gb-x2.topo", "h100-80gb.topo", "h100-80gb-mig.topo",
	"h100-80gb-mig-busy.topo", "h100-80gb-x8.topo", "a100-40gb.topo", "a100-80gb.topo",
	"a30-24gb.topo",
};

static char srcdir[PATH_MAX];

static void
topo_path(const char *name, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s/topologies/%s", srcdir, name) >= size)
		out[0] = '\0';
}

/* A small valid machine the error cases below change one line of. */
#define HEAD "gpupack-topology 1\ndriver 580.1\ncuda 13.0\n"
#define GPU0 "gpu 0\nuuid GPU-aaaa\nname Test GPU\nmemory total=80GiB\nsms 132\ncompute-capability 9.0\n"
#define MIGON "mig current=enabled pending=enabled\n"
#define PROFILES \
	"profile index=0 id=19 name=1g.10gb slices=1 memory=10GiB sms=16 max=7 " \
	"placements=0+1,1+1,2+1,3+1,4+1,5+1,6+1\n" \
	"profile index=7 id=20 name=1g.10gb+me slices=1 memory=10GiB sms=16 max=1 " \
	"placements=0+1,1+1,2+1,3+1,4+1,5+1,6+1\n" \
	"profile index=2 id=9 name=3g.40gb slices=3 memory=40GiB sms=60 max=2 placements=0+4,4+4\n" \
	"profile index=4 id=0 name=7g.80gb slices=7 memory=80GiB sms=132 max=1 placements=0+8\n"

static int
parse(const char *text, struct topology *t)
{
	return topo_parse("t.topo", text, strlen(text), t);
}

static void
test_shipped(void)
{
	for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		struct topology t, u;
		char path[PATH_MAX], *a, *b;
		int rc;

		topo_path(shipped[i], path, sizeof path);
		rc = topo_load(path, &t);
		if (!ok(rc == 0, "%s parses", shipped[i])) {
			printf("#   %s\n", err_msg());
			continue;
		}
		ok(t.sys.ngpus >= 1 && t.sys.gpus[0].nprofiles >= 4, "%s: GPUs and profile table",
		    shipped[i]);
		/* canonical text parses back to the same canonical text */
		a = topo_format(&t, NULL);
		rc = parse(a, &u);
		ok(rc == 0, "%s: canonical form parses", shipped[i]);
		if (rc == 0) {
			b = topo_format(&u, NULL);
			is_str(b, a, "%s: round trip is stable", shipped[i]);
			free(b);
			topo_free(&u);
		}
		free(a);
		topo_free(&t);
	}
}

static void
test_values(void)
{
	struct topology t;
	char path[PATH_MAX];
	const struct gpu_info *g;

	topo_path("h100-80gb-mig.topo", path, sizeof path);
	if (!ok(topo_load(path, &t) == 0, "h100-80gb-mig loads"))
		return;
	g = &t.sys.gpus[0];
	is_str(t.sys.driver_version, "580.159.04", "driver version");
	is_str(t.sys.cuda_version, "13.0", "cuda version");
	is_str(g->name, "NVIDIA H100 80GB HBM3", "name is the rest of the line");
	ok(g->mem_total == MIB(81559), "memory total in MiB exactly");
	is_int(g->mig_current, MIG_ENABLED, "MIG current enabled");
	is_int(g->nprofiles, 7, "seven profiles from the CSV");
	is_int(g->ngi, 4, "four GPU instances");
	is_str(g->gi[0].profile, "3g.40gb", "first GI profile");
	is_int(g->gi[0].placement.start, 4, "first GI placement start");
	is_int(g->gi[0].sms, 60, "GI SMs from its profile");
	ok(g->gi[0].mem_total == MIB(40448), "GI memory from its profile (measured on an H100)");
	is_int(g->gi[0].nci, 1, "one CI");
	is_int(g->gi[0].ci[0].profile_index, 2, "CI profile index of a 3-slice CI");
	ok(str_starts(g->gi[0].ci[0].uuid, "MIG-"), "CI UUID kept");
	is_int(g->profiles[0].copy_engines, 1, "copy engines default to slices");
	topo_free(&t);
}

struct bad {
	const char *text;
	const char *want; /* substring of the error, which must start with t.topo:LINE: */
	int line;
};

static const struct bad bads[] = {
	{"", "empty file", 1},
	{"gpupack-topology 2\n", "version '2' is not supported", 1},
	{"# hello\ngpupack-topology 1\n", "not a gpupack topology", 1},
	{HEAD "color blue\n", "unknown keyword 'color'", 4},
	{HEAD GPU0 "sms 12\n", "'sms' given twice", 10},
	{HEAD "gpu 0\nuuid GPU-a\nsms many\n", "sms: 'many' is not a whole number", 6},
	{HEAD "gpu 0\nmemory total=80\n", "no unit", 5},
	{HEAD "gpu 0\nmemory total=80GiB bogus=1\n", "unknown attribute 'bogus'", 5},
	{HEAD "gpu 0\nmemory total=80GiB total=1GiB\n", "given twice", 5},
	{HEAD "gpu 0\nmemory total=1GiB used=2GiB\n", "more than total", 5},
	{HEAD "gpu 1\n", "out of order", 4},
	{HEAD "gpu 0\nuuid GPU-aaaa\nname X\n", "has no 'memory' line", 4},
	{HEAD GPU0 "gpu 1\nuuid GPU-AAAA\n", "duplicate UUID", 11},
	{HEAD GPU0 "uuid2 x\n", "unknown keyword", 10},
	{HEAD "uuid GPU-x\n", "outside a GPU", 4},
	{"gpupack-topology 1\ngpu 0\n", "'driver' and 'cuda' lines must come before", 2},
	{HEAD GPU0 "compute-mode shared\n", "compute-mode 'shared'", 10},
	{HEAD GPU0 "compute-capability 9\n", "'compute-capability' given twice", 10},
	{HEAD GPU0 PROFILES, "'profile' on a GPU without MIG", 10},
	{HEAD GPU0 "mig current=disabled pending=disabled\n" PROFILES "gi id=1 profile=7g.80gb placement=0+8\n",
	    "not current=enabled", 15},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=2g.20gb placement=0+2\n", "is not a profile", 15},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=3g.40gb placement=2+4\n",
	    "not one of profile 3g.40gb's (0+4,4+4)", 15},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=3g.40gb placement=0+4\n"
	    "gi id=2 profile=1g.10gb placement=3+1\n", "overlaps GPU instance 1", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=1g.10gb+me placement=0+1\n"
	    "gi id=2 profile=20 placement=1+1\n", "allows at most 1 instance", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=3g.40gb placement=0+4\n"
	    "gi id=1 profile=3g.40gb placement=4+4\n", "GPU instance 1 given twice", 16},
	{HEAD GPU0 MIGON "profile index=0 id=1 name=4g slices=4 memory=20GiB sms=64 max=3 "
	    "placements=0+2,2+2,4+2\ngi id=1 profile=4g placement=0+2\ngi id=2 profile=4g placement=2+2\n",
	    "not enough compute slices", 13},
	{HEAD GPU0 MIGON PROFILES "ci gi=1 id=0\n", "no GPU instance 1", 15},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8\nci gi=1 id=0\nci gi=1 id=1\n",
	    "already has compute instance 0", 17},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8\nci gi=1 id=0 uuid=GPU-aaaa\n",
	    "does not start with MIG-", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=3g.40gb placement=0+4\nci gi=1 id=0 "
	    "uuid=MIG-592a00a9-dd7a-46cc-80f7-ce58ee46c56e\ngi id=2 profile=3g.40gb placement=4+4\n"
	    "ci gi=2 id=0 uuid=MIG-592A00A9-DD7A-46CC-80F7-CE58EE46C56E\n", "duplicate UUID MIG-592A", 18},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8\nci gi=1 id=0 uuid=MIG-592\n",
	    "'MIG-592' is not a whole MIG UUID", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8\nci gi=1 id=0 "
	    "uuid=MIG-592a00a9-dd7a-46cc-80f7-ce58ee46c56\n", "is not a whole MIG UUID", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8\nci gi=1 id=0 "
	    "uuid=MIG-GPU-aaaa/1\n", "is not a whole MIG UUID", 16},
	{HEAD GPU0 MIGON PROFILES "gi id=1 profile=7g.80gb placement=0+8 used=81GiB\n",
	    "used is more than", 15},
	{HEAD GPU0 "process pid=7 name=a memory=1GiB gi=1 ci=0\n", "no MIG device gi=1 ci=0", 10},
	{HEAD GPU0 "process pid=7 name=a memory=1GiB gi=1\n", "both gi= and ci=", 10},
	{HEAD GPU0 "process pid=0 name=a memory=1GiB\n", "pid: '0' is not a whole number", 10},
	{HEAD GPU0 "process pid=7 name=a memory=1GiB\nprocess pid=7 name=b memory=0\n", "given twice", 11},
	{HEAD "fail create-gi after x\n", "fail after: 'x'", 4},
	{HEAD "fail explode after 1\n", "unknown op 'explode'", 4},
	{HEAD "fail create-gi\n", "takes OP after N", 4},
	{HEAD GPU0 MIGON "profile index=0 id=1 name=a slices=5 memory=1GiB sms=1 max=1 placements=0+1\n",
	    "slices: 5 is not", 11},
	{HEAD GPU0 MIGON "profile index=0 id=1 name=a slices=1 memory=1GiB sms=1 max=1 placements=7+2\n",
	    "within 8 memory slices", 11},
	{HEAD GPU0 MIGON "profile index=0 id=1 name=a slices=1 memory=1GiB sms=1 max=1\n",
	    "missing attribute 'placements'", 11},
	{HEAD GPU0 MIGON PROFILES "profile index=0 id=99 name=x slices=1 memory=1GiB sms=1 max=1 "
	    "placements=0+1\n", "repeats the index", 15},
	{HEAD GPU0 "name Again\n", "'name' given twice", 10},
	{HEAD GPU0 "name\n", "'name' needs a value", 10},
	{HEAD "gpu 0\nname   # nothing\n", "name: empty", 5},
	{HEAD "driver 2\n", "'driver' given twice", 4},
	{HEAD "gpu 0\nmemory total=2PiB\n", "unknown unit", 5},
	{HEAD "gpu 0\nmemory total=2048TiB\n", "larger than 1 PiB", 5},
	{HEAD "gpu 0\nsms 1 2\n", "takes 1 value", 5},
	{HEAD "gpu 0\nmemory total\n", "expected key=value", 5},
	{"gpupack-topology 1\ndriver 1\n", "no 'cuda' line", 2},
	{HEAD, "no 'gpu' line", 3},
};

static void
test_errors(void)
{
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		struct topology t;
		char prefix[32];
		int rc = parse(bads[i].text, &t);

		snprintf(prefix, sizeof prefix, "t.topo:%d: ", bads[i].line);
		ok(rc < 0 && err_code() == EXIT_USAGE && str_starts(err_msg(), prefix) &&
		    strstr(err_msg(), bads[i].want) != NULL, "bad input %zu refused at line %d: %s", i,
		    bads[i].line, bads[i].want);
		if (rc == 0)
			topo_free(&t);
		else if (!str_starts(err_msg(), prefix) || !strstr(err_msg(), bads[i].want))
			printf("#   got: %s\n", err_msg());
	}
}

static void
test_odd_bytes(void)
{
	struct topology t;
	char *big = xmalloc(5000 + 64);
	const char nul[] = "gpupack-topology 1\ndri\0ver 1\n";

	ok(topo_parse("t.topo", nul, sizeof nul - 1, &t) < 0 && strstr(err_msg(), "t.topo:2: NUL byte"),
	    "a NUL byte is refused with its line");
	strcpy(big, HEAD "# ");
	memset(big + strlen(big), 'x', 5000);
	big[strlen(HEAD) + 2 + 5000] = '\0';
	ok(parse(big, &t) < 0 && strstr(err_msg(), "t.topo:4: line longer"),
	    "an overlong line is refused with its line");
	free(big);
	ok(parse(HEAD GPU0 "name  Spaced   Name   # comment\n", &t) < 0, "name twice still refused");
	ok(parse("gpupack-topology 1\r\ndriver 1\r\ncuda 2\r\n" "gpu 0\r\nuuid GPU-1\r\nname A B # c\r\n"
	    "memory total=1GiB\r\nsms 1\r\ncompute-capability 8.0\r\n", &t) == 0,
	    "CRLF line ends and a trailing comment are accepted");
	if (t.sys.ngpus == 1) {
		is_str(t.sys.gpus[0].name, "A B", "comment and CR stripped from the name");
		topo_free(&t);
	}
}

static int
load_mig(const char *name, struct topology *t)
{
	char path[PATH_MAX];

	topo_path(name, path, sizeof path);
	return topo_load(path, t);
}

static void
test_changes(void)
{
	struct topology t;
	struct mig_placement at;
	unsigned id, ci;
	char *before, *after;

	if (!ok(load_mig("h100-80gb-mig.topo", &t) == 0, "mig topology for changes"))
		return;
	before = topo_format(&t, NULL);
	at.start = 0;
	at.size = 4;
	ok(topo_create_gi(&t, 0, 9, &at, &id) < 0 && strstr(err_msg(), "overlaps GPU instance"),
	    "create_gi on a taken placement refused");
	at.start = 1;
	ok(topo_create_gi(&t, 0, 9, &at, &id) < 0 && strstr(err_msg(), "not one of profile"),
	    "create_gi at a placement the profile lacks refused");
	ok(topo_create_gi(&t, 0, 77, NULL, &id) < 0 && strstr(err_msg(), "id 77"),
	    "create_gi with an unknown profile id refused");
	ok(topo_create_gi(&t, 3, 19, NULL, &id) < 0 && strstr(err_msg(), "no such GPU"),
	    "create_gi on a missing GPU refused");
	ok(topo_set_mig_mode(&t, 0, 0) < 0 && err_code() == EXIT_ENV, "MIG off with instances refused");
	ok(topo_destroy_gi(&t, 0, 2) < 0 && strstr(err_msg(), "compute instance 0 still exists"),
	    "destroy_gi with a CI refused");
	ok(topo_destroy_ci(&t, 0, 2, 5) < 0 && strstr(err_msg(), "no such instance"),
	    "destroy_ci of a missing CI refused");
	after = topo_format(&t, NULL);
	is_str(after, before, "refused changes change nothing");
	free(after);
	free(before);

	/* tear down one 1g and build it back; the derived UUID is the same each time */
	ok(topo_destroy_ci(&t, 0, 10, 0) == 0, "destroy_ci");
	ok(topo_destroy_gi(&t, 0, 10) == 0, "destroy_gi");
	is_int(t.sys.gpus[0].ngi, 3, "three GIs left");
	ok(topo_create_gi(&t, 0, 19, NULL, &id) == 0, "create_gi without placement");
	is_int(t.sys.gpus[0].gi[3].placement.start, 3, "first free 1g placement taken (3+1)");
	is_int(id, 1, "lowest free GI id");
	ok(topo_create_ci(&t, 0, id, &ci) == 0, "create_ci");
	is_int(ci, 0, "CI id 0");
	ok(topo_create_ci(&t, 0, id, &ci) < 0 && strstr(err_msg(), "already spans"),
	    "a second CI refused");
	{
		char want[GPU_UUID_LEN], other[GPU_UUID_LEN];

		topo_mig_uuid(t.sys.gpus[0].uuid, id, 0, want, sizeof want);
		topo_mig_uuid(t.sys.gpus[0].uuid, id + 1, 0, other, sizeof other);
		is_str(t.sys.gpus[0].gi[3].ci[0].uuid, want, "CI UUID derived from GPU UUID, GI, CI");
		ok(strcmp(want, other) != 0 && strlen(want) == 40, "derived UUIDs differ per GI");
	}
	at.start = 4;
	at.size = 1;
	ok(topo_create_gi(&t, 0, 19, &at, &id) < 0, "create_gi into 3g's slices refused");
	topo_free(&t);

	/* an empty MIG GPU: fill and count */
	if (load_mig("h100-80gb.topo", &t) == 0) {
		ok(topo_create_gi(&t, 0, 0, NULL, &id) < 0 && strstr(err_msg(), "MIG is not enabled"),
		    "create_gi with MIG disabled refused");
		ok(topo_set_mig_mode(&t, 0, 1) == 0 && t.sys.gpus[0].mig_current == MIG_ENABLED,
		    "MIG on with no processes: current at once");
		for (int i = 0; i < 7; i++)
			topo_create_gi(&t, 0, 19, NULL, &id);
		is_int(t.sys.gpus[0].ngi, 7, "seven 1g.10gb fit");
		ok(topo_create_gi(&t, 0, 19, NULL, &id) < 0, "the eighth does not");
		topo_free(&t);
	}
	if (load_mig("h100-80gb-mig-busy.topo", &t) == 0) {
		ok(topo_destroy_ci(&t, 0, 2, 0) < 0 && err_code() == EXIT_ENV &&
		    strstr(err_msg(), "in use by pid 4242 (python)"), "destroy_ci in use names the pid");
		ok(topo_destroy_gi(&t, 0, 9) < 0 && strstr(err_msg(), "pid 4243 (train)"),
		    "destroy_gi in use names the pid");
		topo_free(&t);
	}
	if (parse(HEAD GPU0 "mig current=disabled pending=disabled\n" PROFILES
	    "process pid=9 name=x memory=1GiB\n", &t) == 0) {
		ok(topo_set_mig_mode(&t, 0, 1) == 0 && t.sys.gpus[0].mig_current == MIG_DISABLED &&
		    t.sys.gpus[0].mig_pending == MIG_ENABLED, "MIG on with a process: pending only");
		topo_free(&t);
	}
	if (parse(HEAD GPU0, &t) == 0) {
		ok(topo_set_mig_mode(&t, 0, 1) < 0 && strstr(err_msg(), "does not support MIG"),
		    "MIG on a GPU without MIG refused");
		topo_free(&t);
	}
}

static int
copy_topo(const char *name, const char *dst)
{
	char path[PATH_MAX], *data;
	size_t len;
	int rc;

	topo_path(name, path, sizeof path);
	if (read_file(path, &data, &len) < 0)
		return -1;
	rc = write_file_atomic(dst, data, len, 0600);
	free(data);
	return rc;
}

static void
test_backend(void)
{
	char dir[] = "/tmp/gpupack-test-topo.XXXXXX", file[PATH_MAX];
	struct gpu_backend *b;
	struct gpu_system sys;
	struct mig_placement at = {0, 1};
	unsigned id, ci, g, m;
	char *text;

	if (!ok(mkdtemp(dir) != NULL, "scratch directory"))
		return;
	if ((size_t)snprintf(file, sizeof file, "%s/m.topo", dir) >= sizeof file)
		return;
	copy_topo("h100-80gb.topo", file);
	/* a utilization the file gives, so that a backend ignoring it (0, 0) fails */
	read_file(file, &text, NULL);
	{
		char *at_gpu = strstr(text, "\ngpu 0\n"), *withutil;

		ok(at_gpu != NULL, "the machine has a GPU 0");
		at_gpu += strlen("\ngpu 0\n");
		withutil = xasprintf("%.*s  utilization gpu=37 memory=12\n%s", (int)(at_gpu - text), text,
		    at_gpu);
		write_file_atomic(file, withutil, strlen(withutil), 0600);
		free(withutil);
	}
	free(text);
	unsetenv("GPUPACK_SIM_FAIL");
	ok(gpu_sim_open(file, 1, &b) == 0, "sim backend opens");
	ok(b->set_mig_mode(b, 0, 1) == 0, "set_mig_mode");
	ok(b->create_gi(b, 0, 19, &at, &id) == 0 && b->create_ci(b, 0, id, &ci) == 0, "create_gi and _ci");
	ok(b->utilization(b, 0, &g, &m) == 0 && g == 37 && m == 12, "utilization from the file");
	ok(b->utilization(b, 1, &g, &m) < 0 && err_code() == EXIT_USAGE, "and of a GPU the file lacks");
	err_clear();
	gpu_close(b);
	ok(gpu_sim_open(file, 1, &b) == 0 && gpu_snapshot(b, &sys, 0) == 0, "a new backend sees the file");
	is_int(sys.gpus[0].mig_current, MIG_ENABLED, "MIG mode persisted");
	is_int(sys.gpus[0].ngi, 1, "GI persisted");
	is_int(sys.gpus[0].nprofiles, 0, "profiles only when asked");
	gpu_system_free(&sys);
	gpu_close(b);

	/* the file's directive: the second create_gi fails, the third works */
	read_file(file, &text, NULL);
	{
		char *withfail = xasprintf("gpupack-topology 1\nfail create-gi after 1\n%s",
		    strchr(text, '\n') + 1);
		write_file_atomic(file, withfail, strlen(withfail), 0600);
		free(withfail);
	}
	free(text);
	at.start = 1;
	ok(gpu_sim_open(file, 1, &b) == 0, "opens with a fail line");
	ok(b->create_gi(b, 0, 19, &at, &id) == 0, "create_gi call 1 works");
	at.start = 2;
	ok(b->create_gi(b, 0, 19, &at, &id) < 0 && err_code() == EXIT_ENV &&
	    strstr(err_msg(), "simulated driver failure"), "create_gi call 2 fails as injected");
	ok(b->create_gi(b, 0, 19, &at, &id) == 0, "create_gi call 3 works");
	ok(gpu_snapshot(b, &sys, 0) == 0 && sys.gpus[0].ngi == 3, "the failed call changed nothing");
	gpu_system_free(&sys);
	gpu_close(b);

	setenv("GPUPACK_SIM_FAIL", "destroy-gi:1", 1);
	ok(gpu_sim_open(file, 1, &b) == 0, "opens with GPUPACK_SIM_FAIL");
	ok(b->destroy_gi(b, 0, 3) < 0 && strstr(err_msg(), "GPUPACK_SIM_FAIL"), "destroy_gi call 1 fails");
	ok(b->destroy_gi(b, 0, 3) == 0, "destroy_gi call 2 works");
	gpu_close(b);
	setenv("GPUPACK_SIM_FAIL", "destroy-gi", 1);
	ok(gpu_sim_open(file, 1, &b) < 0 && err_code() == EXIT_USAGE, "a bad GPUPACK_SIM_FAIL refused");
	unsetenv("GPUPACK_SIM_FAIL");
	if ((size_t)snprintf(file, sizeof file, "%s/missing.topo", dir) >= sizeof file)
		return;
	ok(gpu_sim_open(file, 1, &b) < 0 && strstr(err_msg(), "missing.topo"), "a missing file named");
	remove_tree(dir);
}

int
main(void)
{
	const char *src = getenv("GPUPACK_SRC");

	str_copy(srcdir, src && *src ? src : ".", sizeof srcdir);
	test_shipped();
	test_values();
	test_errors();
	test_odd_bytes();
	test_changes();
	test_backend();
	return done_testing();
}
