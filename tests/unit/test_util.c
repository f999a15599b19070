/*
 * test_util: the shared pieces every command leans on: sizes and durations
 * as users write them, the JSON writer's escaping and shape, table layout,
 * private directories that refuse symlinks and foreign or open modes, atomic
 * writes, and the device selectors of src/gpu/select.c.
 */
#include "gpu/backend.h"
#include "gpu/select.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/knob.h"
#include "util/proc.h"
#include "util/str.h"
#include "util/table.h"
#include "util/units.h"

#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
size_ok(const char *s, uint64_t want)
{
	uint64_t got = 12345;
	int rc = parse_size(s, &got);

	ok(rc == 0 && got == want, "parse_size('%s') = %llu", s, (unsigned long long)want);
	if (rc != 0 || got != want)
		printf("#   rc %d got %llu (%s)\n", rc, (unsigned long long)got, rc ? err_msg() : "");
}

static void
size_bad(const char *s, const char *why)
{
	uint64_t got = 777;
	int rc = parse_size(s, &got);

	ok(rc < 0 && err_code() == EXIT_USAGE && strstr(err_msg(), why) && got == 777,
	    "parse_size('%s') refused: %s", s, why);
}

static void
test_sizes(void)
{
	size_ok("10G", GIB(10));
	size_ok("10GiB", GIB(10));
	size_ok("10GB", 10000000000ULL);
	size_ok("20gb", 20000000000ULL);
	size_ok("1KB", 1000);
	size_ok("1.5MB", 1500000);
	size_ok("2TB", 2000000000000ULL);
	size_ok("10Gi", GIB(10));
	size_ok("10g", GIB(10));
	size_ok("512M", MIB(512));
	size_ok("81559MiB", MIB(81559));
	size_ok("1.5K", 1536);
	size_ok(".5M", 524288);
	size_ok("0", 0);
	size_ok("5B", 5);
	size_ok("1.7B", 1);
	size_ok("4096T", (uint64_t)1 << 52);
	size_bad("1", "no unit");
	size_bad("10X", "unknown unit");
	size_bad("10GiBx", "trailing");
	size_bad("", "not a number");
	size_bad("-1G", "not a number");
	size_bad("G", "not a number");
	size_bad("1e3M", "unknown unit");
	size_bad("4194304T", "too large");
	size_bad("10 G", "unknown unit");
}

static void
dur_ok(const char *s, double want)
{
	double got = -1;
	int rc = parse_duration(s, &got);

	ok(rc == 0 && fabs(got - want) < 1e-9, "parse_duration('%s') = %g", s, want);
}

static void
dur_bad(const char *s, const char *why)
{
	double got = -1;

	ok(parse_duration(s, &got) < 0 && strstr(err_msg(), why) && got == -1,
	    "parse_duration('%s') refused: %s", s, why);
}

static void
test_durations(void)
{
	dur_ok("30", 30);
	dur_ok("2.5", 2.5);
	dur_ok("250ms", 0.25);
	dur_ok("1h30m", 5400);
	dur_ok("1d", 86400);
	dur_ok("1m30s", 90);
	dur_ok("0", 0);
	dur_bad("", "empty");
	dur_bad("5x", "unknown unit");
	dur_bad("1m30", "unknown unit");
	dur_bad("ms", "not a number");
	dur_bad("30 s", "unknown unit");
	dur_bad("20000d", "too long");
}

static void
test_format(void)
{
	char b[32];

	is_str(format_size(0, b, sizeof b), "0 B", "format_size 0");
	is_str(format_size(1023, b, sizeof b), "1023 B", "format_size 1023");
	is_str(format_size(1024, b, sizeof b), "1 KiB", "format_size 1 KiB");
	is_str(format_size(1536, b, sizeof b), "1.5 KiB", "format_size 1.5 KiB");
	is_str(format_size(MIB(81559), b, sizeof b), "79.6 GiB", "format_size H100 memory");
	is_str(format_size(GIB(140), b, sizeof b), "140 GiB", "format_size >= 100 has no decimals");
	is_str(format_size_mps(GIB(10), b, sizeof b), "10G", "format_size_mps whole GiB");
	is_str(format_size_mps(MIB(512), b, sizeof b), "512M", "format_size_mps whole MiB");
	is_str(format_size_mps(100, b, sizeof b), "1M", "format_size_mps below 1 MiB rounds up to 1M");
}

static void
test_json(void)
{
	struct json j;
	struct sbuf b;

	sbuf_init(&b);
	json_quote(&b, "a\"b\\c\nd\te\r\x01\x1f caf\xc3\xa9 /");
	is_str(b.buf, "\"a\\\"b\\\\c\\nd\\te\\r\\u0001\\u001f caf\xc3\xa9 /\"",
	    "json_quote escapes quotes, backslashes and control characters, keeps UTF-8");
	sbuf_free(&b);

	json_init(&j, 0);
	json_obj_begin(&j, NULL);
	json_int(&j, "i", -3);
	json_uint(&j, "u", 18446744073709551615ULL);
	json_str(&j, "s", "x");
	json_str(&j, "n", NULL);
	json_bool(&j, "t", 1);
	json_double(&j, "nan", NAN);
	json_double(&j, "d", 0.5);
	json_arr_begin(&j, "a");
	json_int(&j, NULL, 1);
	json_obj_begin(&j, NULL);
	json_obj_end(&j);
	json_arr_begin(&j, NULL);
	json_arr_end(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	is_str(j.out.buf, "{\"i\":-3,\"u\":18446744073709551615,\"s\":\"x\",\"n\":null,\"t\":true,"
	    "\"nan\":null,\"d\":0.5,\"a\":[1,{},[]]}", "json writer: members, commas, nesting");
	json_free(&j);

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_arr_begin(&j, "k");
	json_int(&j, NULL, 1);
	json_arr_end(&j);
	json_obj_end(&j);
	is_str(j.out.buf, "{\n  \"k\": [\n    1\n  ]\n}", "json writer: pretty layout");
	json_free(&j);
}

static char *
table_text(struct table *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	table_print(t, f);
	fclose(f);
	return text;
}

static void
test_table(void)
{
	struct table t;
	char *text;

	table_init(&t, "lrl", 2);
	table_row(&t, "NAME", "SIZE", "NOTE");
	table_row(&t, "a", "10", NULL);
	table_row(&t, "longer", "5", "x y");
	text = table_text(&t);
	is_str(text, "  NAME    SIZE  NOTE\n  a         10  -\n  longer     5  x y\n",
	    "table: left and right alignment, NULL as '-', indent, no trailing space");
	free(text);
	table_free(&t);
}

static int
path_in(char *out, size_t size, const char *dir, const char *name)
{
	return (size_t)snprintf(out, size, "%s/%s", dir, name) < size ? 0 : -1;
}

static void
test_private_dir(const char *dir)
{
	char p[PATH_MAX], target[PATH_MAX];
	struct stat st;

	if (path_in(p, sizeof p, dir, "new") < 0)
		return;
	ok(private_dir(p) == 0 && stat(p, &st) == 0 && (st.st_mode & 07777) == 0700,
	    "private_dir creates a 0700 directory");
	ok(private_dir(p) == 0, "private_dir accepts its own directory again");

	path_in(p, sizeof p, dir, "open");
	mkdir(p, 0700);
	chmod(p, 0777);
	ok(private_dir(p) < 0 && err_code() == EXIT_ENV && strstr(err_msg(), "mode 0777"),
	    "private_dir refuses mode 0777");
	ok(stat(p, &st) == 0 && (st.st_mode & 07777) == 0777, "... and leaves it as it was");
	chmod(p, 0750);
	ok(private_dir(p) < 0 && strstr(err_msg(), "0750"), "private_dir refuses group access (0750)");

	path_in(target, sizeof target, dir, "new");
	path_in(p, sizeof p, dir, "link");
	ok(symlink(target, p) == 0, "a symlink to a private directory");
	ok(private_dir(p) < 0 && err_code() == EXIT_ENV && strstr(err_msg(), "symbolic link"),
	    "private_dir refuses a symlink even to a good directory");
	ok(lstat(p, &st) == 0 && S_ISLNK(st.st_mode), "... and leaves the symlink alone");

	path_in(p, sizeof p, dir, "file");
	write_file_atomic(p, "x", 1, 0600);
	ok(private_dir(p) < 0 && strstr(err_msg(), "not a directory"), "private_dir refuses a file");

	path_in(p, sizeof p, dir, "foreign");
	mkdir(p, 0700);
	if (geteuid() == 0 && chown(p, 65534, 65534) == 0) {
		ok(private_dir(p) < 0 && strstr(err_msg(), "owned by uid 65534"),
		    "private_dir refuses a directory of another user");
	} else {
		ok(1, "# SKIP foreign owner needs root to set up");
	}
	path_in(p, sizeof p, dir, "no/parent");
	ok(private_dir(p) < 0 && err_code() == EXIT_ENV, "private_dir without its parent fails");
}

static void
test_files(const char *dir)
{
	char p[PATH_MAX], outside[PATH_MAX], link[PATH_MAX], *data = NULL;
	size_t len = 0;
	struct stat st;

	path_in(p, sizeof p, dir, "f");
	ok(write_file_atomic(p, "hello\n", 6, 0640) == 0, "write_file_atomic");
	ok(read_file(p, &data, &len) == 0 && len == 6 && strcmp(data, "hello\n") == 0,
	    "read_file gives back what was written");
	free(data);
	ok(stat(p, &st) == 0 && (st.st_mode & 0777) == 0640, "write_file_atomic sets the mode");
	ok(write_file_atomic(p, "bye", 3, 0640) == 0 && read_file(p, &data, &len) == 0 &&
	    strcmp(data, "bye") == 0, "write_file_atomic replaces whole");
	free(data);
	path_in(p, sizeof p, dir, "missing");
	ok(read_file(p, &data, &len) < 0 && strstr(err_msg(), "missing"), "read_file names a missing file");

	/* remove_tree must not follow a symlink out of the tree */
	path_in(outside, sizeof outside, dir, "keep");
	mkdir(outside, 0700);
	path_in(p, sizeof p, outside, "precious");
	write_file_atomic(p, "x", 1, 0600);
	path_in(p, sizeof p, dir, "tree");
	mkdir(p, 0700);
	path_in(link, sizeof link, p, "link");
	ok(symlink(outside, link) == 0, "a tree with a symlink out of it");
	ok(remove_tree(p) == 0 && lstat(p, &st) < 0, "remove_tree removes the tree");
	path_in(p, sizeof p, outside, "precious");
	ok(stat(p, &st) == 0, "... but not what its symlink pointed to");
	path_in(p, sizeof p, dir, "tree");
	ok(remove_tree(p) == 0, "remove_tree of a missing path is fine");

	path_in(p, sizeof p, dir, "state");
	setenv("GPUPACK_STATE_DIR", p, 1);
	ok(state_dir("mps/x", link, sizeof link) == 0 && stat(link, &st) == 0 &&
	    (st.st_mode & 07777) == 0700 && str_ends(link, "/state/mps/x"),
	    "state_dir creates private subdirectories under GPUPACK_STATE_DIR");
	chmod(p, 0755);
	ok(state_dir(NULL, link, sizeof link) < 0 && strstr(err_msg(), "state directory"),
	    "state_dir refuses an open state directory");
	unsetenv("GPUPACK_STATE_DIR");
}

/* Reads are bounded and typed; state files are read and written by descriptor. */
static void
test_bounded(const char *dir)
{
	char p[PATH_MAX], q[PATH_MAX], out[PATH_MAX], *data = NULL;
	size_t len = 0;
	int dfd, fd;

	path_in(p, sizeof p, dir, "fifo");
	ok(mkfifo(p, 0600) == 0, "a FIFO where a file is expected");
	ok(read_file(p, &data, &len) < 0 && strstr(err_msg(), "a FIFO, not a regular file"),
	    "read_file refuses it at once rather than wait for a writer");
	ok(read_file("/dev/zero", &data, &len) < 0 && strstr(err_msg(), "a device"),
	    "read_file refuses /dev/zero rather than read forever");
	ok(read_file(dir, &data, &len) < 0 && strstr(err_msg(), "a directory"), "and a directory");
	path_in(p, sizeof p, dir, "big");
	ok(write_file_atomic(p, "0123456789", 10, 0600) == 0, "a ten-byte file");
	ok(read_file_max(p, 9, &data, &len) < 0 && strstr(err_msg(), "larger than 9"),
	    "read_file_max refuses a file over its bound");
	ok(read_file_max(p, 10, &data, &len) == 0 && len == 10, "and reads one at it");
	free(data);
	ok(read_file("/proc/self/stat", &data, &len) == 0 && len > 0, "/proc files are regular");
	free(data);

	dfd = private_dir_at(AT_FDCWD, dir, NULL, 0);
	ok(dfd >= 0, "private_dir_at opens a private directory");
	ok(write_file_atomic_at(dfd, "rec", "a=1\n", 4, 0600) == 0, "write_file_atomic_at");
	ok(read_file_at(dfd, "rec", 64, &data, &len) == 0 && strcmp(data, "a=1\n") == 0,
	    "read_file_at reads it back");
	free(data);
	ok(symlinkat("rec", dfd, "reclink") == 0, "a symlink to it");
	ok(read_file_at(dfd, "reclink", 64, &data, &len) < 0 && strstr(err_msg(), "symbolic link"),
	    "read_file_at never follows a symlink");
	ok(private_dir_at(dfd, "reclink", NULL, 0) < 0 && strstr(err_msg(), "symbolic link"),
	    "nor does private_dir_at");
	ok(private_dir_at(dfd, "fifo", NULL, 1) < 0 && strstr(err_msg(), "FIFO"),
	    "a FIFO is not a directory, and is said to be one");
	ok(private_dir_at(dfd, "none", NULL, 0) < 0 && errno == ENOENT, "without create a missing one is ENOENT");
	ok(faccessat(dfd, "none", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "and is not created");
	fd = private_dir_at(dfd, "sub", NULL, 1);
	ok(fd >= 0 && same_dir(strcat(strcpy(q, dir), "/sub"), fd), "same_dir: the path is still it");
	path_in(p, sizeof p, dir, "sub.old");
	ok(rename(q, p) == 0 && mkdir(q, 0700) == 0, "the directory swapped for another");
	ok(!same_dir(q, fd) && strstr(err_msg(), "replaced"), "same_dir sees the swap");
	err_clear();
	close(fd);
	close(dfd);

	path_in(p, sizeof p, dir, "st2");
	setenv("GPUPACK_STATE_DIR", p, 1);
	ok(state_dir_fd("mps", 0, out, sizeof out) < 0 && errno == ENOENT,
	    "state_dir_fd without create: a missing state directory is ENOENT");
	ok(access(p, F_OK) < 0, "and is not created");
	fd = state_dir_fd("mps/dev", 1, out, sizeof out);
	ok(fd >= 0 && str_ends(out, "/st2/mps/dev"), "state_dir_fd creates and opens each component");
	close(fd);
	path_in(q, sizeof q, p, "mps");
	path_in(out, sizeof out, dir, "elsewhere");
	mkdir(out, 0700);
	ok(rename(q, strcat(strcpy(p, out), "/mps")) == 0 && symlink(p, q) == 0,
	    "a component swapped for a symlink to a private directory");
	ok(state_dir_fd("mps/dev", 1, out, sizeof out) < 0 && strstr(err_msg(), "symbolic link"),
	    "state_dir_fd refuses to go through it");
	unsetenv("GPUPACK_STATE_DIR");
}

static void
test_proc(void)
{
	struct proc_stat st;
	char boot[64];

	ok(proc_parse_stat("42 (a) b) c) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7777 0 0\n", &st) == 0 &&
	    st.pid == 42 && st.ppid == 1 && st.pgid == 42 && st.state == 'S' && st.start == 7777,
	    "/proc/PID/stat with ') ' in the command name");
	ok(proc_parse_stat("42 (x) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0\n", &st) < 0,
	    "a start time of 0 is no process");
	ok(proc_parse_stat("42 (x) S 1 42", &st) < 0, "a short line is refused");
	ok(proc_parse_stat("x (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", &st) < 0,
	    "a bad pid is refused");
	ok(proc_start_time(getpid()) > 0 && proc_is(getpid(), proc_start_time(getpid())),
	    "our own start time");
	ok(!proc_is(getpid(), 0), "start time 0 matches nothing");
	ok(!proc_is(getpid(), proc_start_time(getpid()) + 1), "another start time is another process");
	setenv("GPUPACK_TEST_ENTRY", "yes", 1);
	ok(!proc_has_env(getpid(), "GPUPACK_TEST_ENTRY=yes"), "environ is what we started with, not setenv");
	proc_boot_id(boot, sizeof boot);
	ok(strlen(boot) >= 32, "the boot id");
}

/* Two GPUs: 0 whole (MIG off), 1 with MIG on and two MIG devices. */
static void
machine(struct gpu_system *sys)
{
	struct gpu_info *g;

	memset(sys, 0, sizeof *sys);
	sys->ngpus = 2;
	sys->gpus = xcalloc(2, sizeof *sys->gpus);
	g = &sys->gpus[0];
	g->index = 0;
	str_copy(g->uuid, "GPU-aaaa", sizeof g->uuid);
	g->mem_total = GIB(80);
	g->mem_free = GIB(70);
	g->sms = 132;
	g->mig_current = MIG_DISABLED;
	g = &sys->gpus[1];
	g->index = 1;
	str_copy(g->uuid, "GPU-bbbb", sizeof g->uuid);
	g->mig_current = MIG_ENABLED;
	g->ngi = 2;
	g->gi = xcalloc(2, sizeof *g->gi);
	for (int i = 0; i < 2; i++) {
		g->gi[i].id = (unsigned)i + 1;
		g->gi[i].nci = 1;
		g->gi[i].mem_total = GIB(40);
		g->gi[i].mem_used = GIB(10);
		g->gi[i].sms = 60;
		g->gi[i].ci[0].sms = 60;
		snprintf(g->gi[i].ci[0].uuid, sizeof g->gi[i].ci[0].uuid, "MIG-000%d", i);
	}
}

static void
test_select(void)
{
	struct gpu_system sys;
	struct gpu_target t, *v;
	int n;

	machine(&sys);
	ok(gpu_select_one(&sys, "0", &t) == 0 && t.gpu == 0 && t.gi == -1 &&
	    strcmp(t.uuid, "GPU-aaaa") == 0 && t.mem_free == GIB(70), "select by index");
	ok(gpu_select_one(&sys, "gpu-BBBB", &t) == 0 && t.gpu == 1, "select by UUID, any case");
	ok(gpu_select_one(&sys, "MIG-0001", &t) == 0 && t.gpu == 1 && t.gi == 1 && t.ci == 0 &&
	    t.mem_free == GIB(30) && t.sms == 60, "select a MIG device: its memory left and SMs");
	ok(gpu_select_one(&sys, "2", &t) < 0 && err_code() == EXIT_USAGE &&
	    strstr(err_msg(), "indices 0 to 1"), "an index out of range says which exist");
	ok(gpu_select_one(&sys, "GPU-cccc", &t) < 0 && err_code() == EXIT_USAGE, "an unknown UUID");
	ok(gpu_select_one(&sys, "-1", &t) < 0, "a negative index");

	ok(gpu_select(&sys, NULL, &v, &n) == 0 && n == 3 && v[0].gi == -1 && v[1].gi == 0 &&
	    v[2].gi == 1, "everything: GPU 0 whole, GPU 1 as its two MIG devices");
	free(v);
	ok(gpu_select(&sys, "1", &v, &n) == 0 && n == 2 && strcmp(v[1].uuid, "MIG-0001") == 0,
	    "a MIG-enabled GPU by index expands to its MIG devices");
	free(v);
	ok(gpu_select(&sys, " 0 , MIG-0000 ", &v, &n) == 0 && n == 2, "a list with spaces");
	free(v);
	ok(gpu_select(&sys, "0,0", &v, &n) < 0 && strstr(err_msg(), "twice") && v == NULL && n == 0,
	    "the same GPU twice is an error");
	ok(gpu_select(&sys, "1,MIG-0000", &v, &n) < 0 && strstr(err_msg(), "twice"),
	    "a MIG device twice (through its GPU) is an error");
	ok(gpu_select(&sys, "0,7", &v, &n) < 0 && v == NULL, "one bad selector fails the list");
	ok(gpu_select(&sys, "", &v, &n) < 0 && strstr(err_msg(), "empty"), "an empty selection");
	gpu_system_free(&sys);
}

static void
test_knobs(void)
{
	ok(knob(KNOB_MIG_BAGS_BLIND) == 0, "a knob starts at 0");
	ok(knob_set("mig.bags_blind", 1) == 0 && knob(KNOB_MIG_BAGS_BLIND) == 1, "set by name");
	ok(knob_set("mig.nothing", 1) < 0 && strstr(err_msg(), "no knob named 'mig.nothing'"),
	    "an unknown name is refused");
	ok(knob_parse("mig.bags_off=2,mig.lp_fail_from=7") == 0 && knob(KNOB_MIG_BAGS_OFF) == 2 &&
	    knob(KNOB_MIG_LP_FAIL_FROM) == 7, "GPUPACK_KNOBS' form sets each");
	ok(knob_parse("mig.bags_off=3,mig.lp_fail_from=x") < 0 && knob(KNOB_MIG_BAGS_OFF) == 2,
	    "a bad value sets nothing of the spec");
	ok(knob_parse("mig.bags_off") < 0 && strstr(err_msg(), "name=value"), "a name without a value");
	ok(knob_add(KNOB_MIG_BAGS_OFF, 5) == 7, "a counter adds");
	knob_reset();
	ok(knob(KNOB_MIG_BAGS_OFF) == 0 && knob(KNOB_MIG_BAGS_BLIND) == 0, "reset: all back to 0");
}

static void
prefixed_is(const char *s, double want)
{
	double got = -12345;
	int rc = parse_prefixed(s, &got);

	ok(rc == 0 && got == want, "parse_prefixed('%s') = %.17g (got %.17g)", s, want, got);
	err_clear();
}

static void
prefixed_refused(const char *s)
{
	double got;
	int rc = parse_prefixed(s, &got);

	ok(rc < 0 && err_code() == EXIT_USAGE && strstr(err_msg(), s) != NULL,
	    "parse_prefixed('%s') refused, naming it", s);
	err_clear();
}

/* GNU parallel's multiply_binary_prefix: the prefixes spelled out, then perl's arithmetic */
static void
test_prefixed(void)
{
	prefixed_is("10", 10);
	prefixed_is("1k", 1000);
	prefixed_is("1K", 1024);
	prefixed_is("1ki", 1024);
	prefixed_is("1Mi", 1048576);
	prefixed_is("1MI", 1048576);
	prefixed_is("2m", 2e6);
	prefixed_is("1G", 1073741824.0);
	prefixed_is("1.5k", 1500);
	prefixed_is("1k+1k", 2000);
	prefixed_is("1K+1k", 2024);
	prefixed_is("2*1M", 2097152);
	prefixed_is("-10", -10);
	prefixed_is("10-2*3", 4);
	prefixed_is("(1+2)k", 3000);
	prefixed_is("2**10", 1024);
	prefixed_is("-2**2", -4);
	prefixed_is("7%3", 1);
	prefixed_is("1k/4", 250);
	prefixed_is(" 1 k ", 1000);
	prefixed_is("1x", 1e27);
	prefixed_refused("");
	prefixed_refused("k");
	prefixed_refused("1q");
	prefixed_refused("1k+");
	prefixed_refused("(1");
	prefixed_refused("1/0");
	prefixed_refused("1%0");
	prefixed_refused("1..2");
	prefixed_refused("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))"
	    "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))");
}

int
main(void)
{
	char dir[] = "/tmp/gpupack-test-util.XXXXXX";

	test_sizes();
	test_prefixed();
	test_durations();
	test_format();
	test_json();
	test_table();
	test_select();
	test_proc();
	test_knobs();
	if (ok(mkdtemp(dir) != NULL, "scratch directory")) {
		test_private_dir(dir);
		test_files(dir);
		test_bounded(dir);
		remove_tree(dir);
	}
	return done_testing();
}
