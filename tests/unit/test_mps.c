/*
 * test_mps: the pure parts of src/share/mps*.c: parsers of the control
 * daemon's replies (server lists, ps tables, states, errors), server.log
 * fault lines and offsets, limits, the client environment, and where a
 * device's state lives (UUIDs that are not safe file names).
 */
#include "share/mps.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static void
test_pids(void)
{
	pid_t *p;
	int n;

	mps_parse_pids("1234\n5678\n", &p, &n);
	is_int(n, 2, "two pids");
	is_int(p[0], 1234, "first pid");
	is_int(p[1], 5678, "second pid");
	free(p);
	mps_parse_pids("  42  \r\nnot a pid\n\n-7\n0\n99", &p, &n);
	is_int(n, 2, "junk, negative and zero lines skipped; last line without newline kept");
	is_int(p[0], 42, "spaces and CR trimmed");
	is_int(p[1], 99, "last line");
	free(p);
	mps_parse_pids("", &p, &n);
	is_int(n, 0, "empty reply: no pids");
	free(p);
}

static void
test_ps(void)
{
	struct mps_ps_row *r;
	int n;
	const char *text =
	    "PID ID SERVER DEVICE NAMESPACE COMMAND\n"
	    "9741 0 6472 GPU-cb1213a3-d6a4-be7f 4026531836 ./a.out --n 4096\n"
	    "9743 1 6472 GPU-cb1213a3-d6a4-be7f 4026531836 /usr/bin/python3 train.py\n"
	    "garbage line\n";

	mps_parse_ps(text, &r, &n);
	is_int(n, 2, "ps: two clients, header and junk skipped");
	is_int(r[0].pid, 9741, "ps: client pid");
	is_int(r[0].server, 6472, "ps: server pid");
	is_str(r[0].device, "GPU-cb1213a3-d6a4-be7f", "ps: device");
	is_str(r[0].command, "./a.out --n 4096", "ps: command keeps its spaces");
	is_str(r[1].command, "/usr/bin/python3 train.py", "ps: second command");
	free(r);
	mps_parse_ps("PID ID SERVER DEVICE NAMESPACE COMMAND\n", &r, &n);
	is_int(n, 0, "ps: header only");
	free(r);
	mps_parse_ps("Server not found\n", &r, &n);
	is_int(n, 0, "ps: 580's answer without a server");
	free(r);
	mps_parse_ps("12 0 34\n", &r, &n);
	is_int(n, 1, "ps: short row (older daemons) still gives pid and server");
	is_int(r[0].server, 34, "ps: short row server");
	is_str(r[0].command, "", "ps: short row without command");
	free(r);
}

static void
test_states_and_errors(void)
{
	is_int(mps_parse_server_state("ACTIVE\n"), MPS_SERVER_ACTIVE, "ACTIVE");
	is_int(mps_parse_server_state("FAULT"), MPS_SERVER_FAULT, "FAULT");
	is_int(mps_parse_server_state("Server 12 status: INITIALIZING"), MPS_SERVER_INITIALIZING,
	    "INITIALIZING inside a sentence");
	is_int(mps_parse_server_state("what"), MPS_SERVER_UNKNOWN, "unknown state");
	is_str(mps_server_state_name(MPS_SERVER_FAULT), "fault", "state name");
	ok(mps_reply_is_error("Error: invalid server pid"), "an Error: line is an error");
	ok(mps_reply_is_error("Unrecognized command"), "unrecognized is an error");
	/* the texts driver 580 prints (bench/results/2026-11-22-probe-h200.txt) */
	ok(mps_reply_is_error("Unknown command \"bogus_command\""), "580: unknown command");
	ok(mps_reply_is_error("Server 0 not found"), "580: unknown server");
	ok(mps_reply_is_error("A server PID is required"), "580: missing server pid");
	ok(mps_reply_is_error("Cannot find MPS control daemon process"), "580: no daemon");
	ok(!mps_reply_is_error("25.0\n"), "580: the echo of set_default_active_thread_percentage");
	ok(!mps_reply_is_error("1G\n"), "580: a pinned memory limit");
	ok(!mps_reply_is_error("100.0\n"), "a number is not an error");
	ok(!mps_reply_is_error(""), "empty is not an error");
	ok(mps_log_line_fatal("[2026-11-22 01:00:00.000 Server 12] Server encountered a fatal GPU error "
	    "(Xid 13); to be torn down"), "fatal GPU error line");
	ok(!mps_log_line_fatal("[2026-11-22 01:00:00.000 Server 12] Server has started"),
	    "ordinary line is not a fault");
}

static void
test_limits(void)
{
	struct mps_limits a = {0, 0, MPS_PRIO_UNSET}, b = {100, 0, MPS_PRIO_NORMAL};
	struct mps_limits c = {25, 1ULL << 30, MPS_PRIO_LOW}, bad = {101, 0, MPS_PRIO_UNSET};
	char buf[128];

	ok(mps_limits_equal(&a, &b), "unset limits equal sm 100 and normal priority");
	ok(!mps_limits_equal(&a, &c), "different limits differ");
	ok(mps_limits_check(&c) == 0, "sm 25, 1G, low is valid");
	ok(mps_limits_check(&bad) < 0 && err_code() == EXIT_USAGE, "sm 101 is a usage error");
	err_clear();
	bad.sm_pct = -1;
	ok(mps_limits_check(&bad) < 0, "negative sm refused");
	err_clear();
	bad.sm_pct = 50;
	bad.priority = 7;
	ok(mps_limits_check(&bad) < 0, "priority 7 refused");
	err_clear();
	is_str(mps_limits_format(&c, buf, sizeof buf), "sm 25%, mem 1 GiB, priority low", "limits for people");
}

static void
test_env_and_log(const char *tmp)
{
	struct mps_daemon d;
	char *env[6], path[600];
	int n;
	FILE *f;

	memset(&d, 0, sizeof d);
	snprintf(d.pipe_dir, sizeof d.pipe_dir, "%s/pipe", tmp);
	snprintf(d.log_dir, sizeof d.log_dir, "%s", tmp);
	n = mps_client_env(&d, 0, 0, env);
	is_int(n, 2, "client env without limits: two variables");
	ok(str_starts(env[0], "CUDA_MPS_PIPE_DIRECTORY=") && str_ends(env[0], "/pipe"), "pipe directory");
	ok(str_starts(env[1], "CUDA_MPS_LOG_DIRECTORY="), "log directory");
	for (int i = 0; i < n; i++)
		free(env[i]);
	n = mps_client_env(&d, 12.5, 512ULL << 20, env);
	is_int(n, 4, "with limits: four variables");
	is_str(env[2], "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=12.5", "thread percentage for this client");
	is_str(env[3], "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1032M",
	    "pinned limit for ordinal 0: the 512M asked for plus the context's 520M");
	is_int(mps_pinned_limit(0), 0, "no --mem: no limit");
	is_int(mps_pinned_limit(1ULL << 30), (1ULL << 30) + MPS_CONTEXT_RESERVE, "--mem 1G: 1G + the reserve");
	for (int i = 0; i < n; i++)
		free(env[i]);

	is_int(mps_log_offset(&d), 0, "no server.log: offset 0");
	snprintf(path, sizeof path, "%s/server.log", tmp);
	f = fopen(path, "w");
	fprintf(f, "[2026-11-22 01:00:00.000 Server 1] Server encountered a fatal GPU error\n");
	fprintf(f, "[2026-11-22 01:00:01.000 Server 1] Server recovered\n");
	fclose(f);
	{
		long off = mps_log_offset(&d);

		ok(off > 0, "offset is the log's size");
		/* a fault before the offset is not this client's; one after it is */
		f = fopen(path, "a");
		fprintf(f, "[2026-11-22 01:00:02.000 Server 1] Server encountered a fatal GPU error (Xid 31)\n");
		fclose(f);
		is_int(mps_fault_since(&d, off), 1, "a fatal line after the offset is seen");
		is_int(mps_fault_since(&d, 1L << 40), 1, "an offset past the end (rotated log) reads it all");
		is_int(mps_fault_culprit(&d, off, 3130), -1, "a fault line that names no process: culprit unknown");
		/*
		 * driver 580's lines (H200, 2026-12-03, fault farm k1): the server named
		 * a training (7085) while the illegal address was another's (6887);
		 * every client torn down is then called "error trigging". A fault that
		 * tore others down names no culprit
		 */
		f = fopen(path, "a");
		fprintf(f, "[2026-12-03 19:14:24.131 Server  6666] Client {PID: 7085, Context: 1} encountered a fatal GPU error.\n"
		    "[2026-12-03 19:14:24.131 Server  6666] Server is handling a fatal GPU error.\n"
		    "[2026-12-03 19:14:24.131 Server  6666] All clients belonging to error trigging process 6887 will be torn down\n"
		    "[2026-12-03 19:14:24.131 Server  6666] All clients belonging to error trigging process 7085 will be torn down\n"
		    "[2026-12-03 19:14:24.132 Server  6666] Failed to accept client {PID: 6900, Context ID: 1} with status 807\n");
		fclose(f);
		is_int(mps_fault_culprit(&d, off, 7085), -1, "a fault that tore others down: the client it names is not proven its culprit");
		is_int(mps_fault_culprit(&d, off, 6887), -1, "nor is a client torn down with it a proven victim");
		is_int(mps_fault_culprit(&d, off, 6900), -1, "nor one refused meanwhile");
		off = mps_log_offset(&d);
		/* the lone client's fault (the same run, its rerun): named and torn down alone */
		f = fopen(path, "a");
		fprintf(f, "[2026-12-03 19:14:29.981 Server  6666] Client {PID: 7086, Context: 1} encountered a fatal GPU error.\n"
		    "[2026-12-03 19:14:29.981 Server  6666] Server is handling a fatal GPU error.\n"
		    "[2026-12-03 19:14:29.981 Server  6666] All clients belonging to error trigging process 7086 will be torn down\n"
		    "[2026-12-03 19:14:29.982 Server  6666] Failed to accept client {PID: 6901, Context ID: 1} with status 807\n");
		fclose(f);
		is_int(mps_fault_culprit(&d, off, 7086), 1, "a fault that tore down the client it names alone: its culprit");
		is_int(mps_fault_culprit(&d, off, 6901), 0, "a client refused meanwhile is a victim");
		is_int(mps_fault_culprit(&d, off, 708), 0, "a pid that is a prefix of the culprit's is not it");
		off = mps_log_offset(&d);
		/* read before its teardown lines came: not yet known */
		f = fopen(path, "a");
		fprintf(f, "[2026-12-03 19:15:00.000 Server  6666] Client {PID: 7087, Context: 1} encountered a fatal GPU error.\n");
		fclose(f);
		is_int(mps_fault_culprit(&d, off, 7087), -1, "the naming line read alone (its teardown not yet written): none yet");
		f = fopen(path, "a");
		fprintf(f, "[2026-12-03 19:15:00.000 Server  6666] All clients belonging to error trigging process 7087 will be torn down\n");
		fclose(f);
		is_int(mps_fault_culprit(&d, off, 7087), 1, "then its teardown, naming it alone: its culprit");
	}
	is_int((int)mps_log_line_torn("[x] All clients belonging to error trigging process 42 will be torn down"), 42,
	    "a teardown line's pid");
	is_int((int)mps_log_line_torn("All clients belonging to error trigging process 42x will be torn down"), 0,
	    "a teardown pid followed by junk: none");
	is_int((int)mps_log_line_torn("All clients belonging to error trigging process -4 will be torn down"), 0,
	    "a teardown's negative pid: none");
	is_int((int)mps_log_line_torn("Client {PID: 42, Context: 1} encountered a fatal GPU error."), 0,
	    "the naming line is no teardown line");
	is_int((int)mps_log_line_culprit("Client {PID: 42, Context: 1} encountered a fatal GPU error."), 42,
	    "the culprit line's pid");
	is_int((int)mps_log_line_culprit("All clients belonging to error trigging process 42 will be torn down"), 0,
	    "the teardown's list names victims too: not a culprit");
	is_int((int)mps_log_line_culprit("Client {PID: 42x, Context: 1} encountered a fatal GPU error."), 0,
	    "a pid followed by junk: none");
	is_int((int)mps_log_line_culprit("Client {PID: -1, Context: 1} encountered a fatal GPU error."), 0,
	    "no negative pid");
	is_int((int)mps_log_line_culprit("Server encountered a fatal GPU error"), 0, "a line without one: none");
}

static void
test_lookup(const char *tmp)
{
	struct mps_daemon d;

	setenv("GPUPACK_STATE_DIR", tmp, 1);
	is_int(mps_lookup("GPU-0a0a0a0a-1111-2222-3333-444444444444", &d), 1, "no daemon: lookup says none");
	ok(str_ends(d.pipe_dir, "/mps/GPU-0a0a0a0a-1111-2222-3333-444444444444/pipe"), "pipe dir path");
	is_int(mps_lookup("MIG-GPU-0a0a0a0a-1111-2222-3333-444444444444/1/0", &d), 1,
	    "an old-style MIG uuid with slashes is looked up");
	ok(str_ends(d.dir, "/mps/MIG-GPU-0a0a0a0a-1111-2222-3333-444444444444_1_0"),
	    "its slashes become '_' in the directory name");
	ok(mps_lookup("../../etc", &d) < 0, "a uuid that climbs out is refused");
	err_clear();
}

/* What a daemon record may say: everything checked, a pid only with its start time. */
static void
test_record(void)
{
	struct mps_daemon d;
	const char *good = "uuid=GPU-a\ngpu_index=3\npid=4242\nstart_time=99\nsm_pct=25\n"
	    "mem_bytes=1073741824\npriority=1\ndevices=GPU-a\nowner=77-88\n";

	memset(&d, 0, sizeof d);
	ok(mps_record_parse(good, &d) == 0 && d.pid == 4242 && d.start_time == 99 && d.gpu_index == 3 &&
	    d.limits.sm_pct == 25 && d.limits.mem_bytes == 1073741824ULL && d.limits.priority == 1 &&
	    d.owner_pid == 77 && d.owner_start == 88 && strcmp(d.uuid, "GPU-a") == 0,
	    "a record gpupack wrote reads back whole");
	memset(&d, 0, sizeof d);
	ok(mps_record_parse("uuid=GPU-a\npid=4242\nstart_time=0\n", &d) == 0 && d.pid == 0,
	    "start_time=0: the pid is not trusted (dropped)");
	memset(&d, 0, sizeof d);
	ok(mps_record_parse("uuid=GPU-a\npid=4242\n", &d) == 0 && d.pid == 0,
	    "no start time at all: the pid is dropped too");
	memset(&d, 0, sizeof d);
	ok(mps_record_parse("owner=77-0\n", &d) == 0 && d.owner_pid == 0, "an owner without start time is none");
	memset(&d, 0, sizeof d);
	str_copy(d.uuid, "GPU-a", sizeof d.uuid);
	ok(mps_record_parse("uuid=GPU-b\n", &d) < 0 && strstr(err_msg(), "bad uuid"),
	    "a record naming another device than its directory's is refused");
	err_clear();
	{
		static const char *const bad[] = {
			"pid=-1\n", "pid=99999999\n", "pid=12x\n", "start_time=\n", "sm_pct=101\n",
			"sm_pct=nan\n", "priority=2\n", "gpu_index=5000\n", "mem_bytes=-1\n",
			"devices=GPU-a;rm\n", "owner=1\n", "no equals sign\n", NULL,
		};

		for (int i = 0; bad[i]; i++) {
			memset(&d, 0, sizeof d);
			ok(mps_record_parse(bad[i], &d) < 0 && err_code() == EXIT_ENV, "refused: %.*s",
			    (int)strcspn(bad[i], "\n"), bad[i]);
			err_clear();
		}
	}
	memset(&d, 0, sizeof d);
	ok(mps_record_parse("future_key=1\nuuid=GPU-a\n", &d) == 0, "a key of a newer gpupack is ignored");
}

int
main(void)
{
	char tmp[] = "/tmp/test_mps.XXXXXX";

	if (!mkdtemp(tmp))
		return 1;
	test_pids();
	test_ps();
	test_states_and_errors();
	test_limits();
	test_record();
	test_env_and_log(tmp);
	test_lookup(tmp);
	remove_tree(tmp);
	return done_testing();
}
