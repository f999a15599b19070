/*
 * test_farm_life: the farm's lifecycle against generated event sequences
 * (issue 42). The whole `gpupack run` (options, setup, the loop, launch,
 * the verdict and its effects, the journal, --resume) runs in-process on a
 * fake clock with fake processes: the link wraps (-Wl,--wrap) spawn_task,
 * kill, waitpid, poll and clock_mono, and the watchdog. Each sequence draws
 * a farm (inputs, -j, --retries, --halt, --timeout), each attempt's fate
 * (exit status, length) and events (signals to gpupack, once or repeated;
 * a task killed from outside; the disk filling up), runs it, then runs
 * --resume with every task succeeding, and checks the promises:
 *  - no input is recorded twice, in any run, and after --resume every
 *    input is recorded exactly once;
 *  - a record says what its attempt did: its exit status or signal, a
 *    timeout's -1; an attempt gpupack ended for a stop is never recorded;
 *  - --resume starts exactly the inputs without a record, once each;
 *  - never more tasks at once than -j; every task ended and reaped when
 *    the run returns (none left); the run ends (no wait without an end).
 * Sequences run in batches, each batch a child process (a violation, a
 * crash or a run that never ends is reported with its sequence's seed; the
 * next batch goes on after it).
 *   LIFE_N (1,000; 200 under the sanitizers) sequences from LIFE_SEED (1),
 *   LIFE_JOBS (1) at once; LIFE_VERBOSE=1 prints each violation,
 *   LIFE_PROGRESS=K a line every K sequences, LIFE_DEBUG=1 the draw and
 *   the farm's stderr. `make torture-life` runs 1,000,000.
 * Not generated here: MPS faults, -j auto, nodes, a second farm (their
 * verdicts are test_farm_verdict's; the second farm is run-owners.t's).
 */
#include "cmd/cmd.h"
#include "farm/journal.h"
#include "farm/spawn.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_IN 16
#define MAX_FAKE 1024
#define MAX_EV 4

/* ---- the sequence: its draw ---------------------------------------------------------- */

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

enum ev_kind { EV_INT, EV_TERM, EV_HUP, EV_KILL_TASK, EV_TERM_TASK, EV_DISK_FULL };

struct ev {
	double at;
	int kind;
	int done;
};

struct fate {
	int status;       /* wait status when it ends by itself */
	double len;       /* fake seconds */
};

static struct {
	int n, jobs, retries, timeout, halt;
	struct ev ev[MAX_EV];
	int nev;
	struct fate fate[MAX_IN + 1][8];
	int resume;       /* the --resume run: every attempt exits 0 at once */
} sq;

/* ---- fake processes ---------------------------------------------------------------------- */

struct fake {
	pid_t pid;
	int value, attempt;
	int state;        /* 1 running, 2 ended (a zombie), 3 reaped */
	int status;
	double end;
	int by_us;        /* ended by a signal from gpupack */
};

static struct fake fk[MAX_FAKE];
static int nfk, running, max_running, polls;
static int attempts[MAX_IN + 1], resumed[MAX_IN + 1];
/* the last attempt of each value that ended: its status, and whether gpupack ended it */
static int last_status[MAX_IN + 1], last_by_us[MAX_IN + 1], last_set[MAX_IN + 1];
static double now_t = 1000, t0 = 1000;   /* the fake clock; the sequence's start */
static pid_t next_pid = 4000000;
static char violation[512];

static void
violate(const char *what)
{
	if (!violation[0])
		snprintf(violation, sizeof violation, "%s", what);
}

static struct fake *
find(pid_t pid)
{
	for (int i = 0; i < nfk; i++)
		if (fk[i].pid == pid)
			return &fk[i];
	return NULL;
}

static void
end_fake(struct fake *p, int status, int by_us)
{
	p->state = 2;
	p->status = status;
	p->by_us = by_us;
	running--;
	last_status[p->value] = status;
	last_by_us[p->value] = by_us;
	last_set[p->value] = 1;
}

/* ---- the wrapped calls --------------------------------------------------------------------- */

pid_t __wrap_spawn_task(const struct spawn_req *r);
int __wrap_kill(pid_t pid, int sig);
int __real_kill(pid_t pid, int sig);
pid_t __wrap_waitpid(pid_t pid, int *st, int opts);
pid_t __real_waitpid(pid_t pid, int *st, int opts);
int __wrap_poll(struct pollfd *p, nfds_t n, int timeout);
int __real_poll(struct pollfd *p, nfds_t n, int timeout);
double __wrap_clock_mono(void);

pid_t
__wrap_spawn_task(const struct spawn_req *r)
{
	struct fake *p;
	int v = 0, a;
	char line[32];
	int len;

	for (int i = 0; r->argv[i]; i++)
		v = atoi(r->argv[i]);
	if (v < 1 || v > sq.n || nfk == MAX_FAKE) {
		violate("a task started with no input of ours");
		errno = EAGAIN;
		return -1;
	}
	a = attempts[v]++;
	if (sq.resume)
		resumed[v]++;
	p = &fk[nfk++];
	*p = (struct fake){.pid = next_pid++, .value = v, .attempt = a, .state = 1};
	if (sq.resume) {
		p->status = 0;
		p->end = now_t + 0.01;
	} else {
		p->status = sq.fate[v][a < 7 ? a : 7].status;
		p->end = now_t + sq.fate[v][a < 7 ? a : 7].len;
	}
	/* what it prints: its input (the write end is the farm's: it closes it after the start) */
	len = snprintf(line, sizeof line, "out %d\n", v);
	if (r->fd_out >= 0 && write(r->fd_out, line, (size_t)len) < 0)
		(void)0;
	if (++running > max_running)
		max_running = running;
	return p->pid;
}

int
__wrap_kill(pid_t pid, int sig)
{
	struct fake *p = find(pid < 0 ? -pid : pid);

	if (!p)
		return __real_kill(pid, sig);
	if (p->state != 1) {
		errno = ESRCH;
		return p->state == 2 ? 0 : -1;
	}
	if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP)
		end_fake(p, sig, 1);
	return 0;
}

pid_t
__wrap_waitpid(pid_t pid, int *st, int opts)
{
	int alive = 0;

	for (int i = 0; i < nfk; i++) {
		struct fake *p = &fk[i];

		if (pid > 0 && p->pid != pid)
			continue;
		if (p->state == 2) {
			p->state = 3;
			if (st)
				*st = p->status;
			return p->pid;
		}
		alive += p->state == 1;
	}
	if (pid > 0 && !find(pid))
		return __real_waitpid(pid, st, opts);
	if (alive && (opts & WNOHANG))
		return 0;
	if (alive) {
		violate("waitpid without WNOHANG on a running task");
		return 0;
	}
	errno = ECHILD;
	return -1;
}

/* the farm reaps with wait4 (for each task's CPU time): the fakes' waitpid, no CPU used */
pid_t __wrap_wait4(pid_t pid, int *st, int opts, struct rusage *ru);

pid_t
__wrap_wait4(pid_t pid, int *st, int opts, struct rusage *ru)
{
	if (ru)
		memset(ru, 0, sizeof *ru);
	return __wrap_waitpid(pid, st, opts);
}

double
__wrap_clock_mono(void)
{
	return now_t;
}

static void
fire(struct ev *e)
{
	struct rlimit rl = {4096, 4096};
	int pick = -1, k = 0;

	e->done = 1;
	switch (e->kind) {
	case EV_INT:
		__real_kill(getpid(), SIGINT);
		break;
	case EV_TERM:
		__real_kill(getpid(), SIGTERM);
		break;
	case EV_HUP:
		__real_kill(getpid(), SIGHUP);
		break;
	case EV_KILL_TASK:
	case EV_TERM_TASK:
		/* a running task, killed from outside */
		for (int i = 0; i < nfk; i++)
			if (fk[i].state == 1 && rnd((uint32_t)++k) == 0)
				pick = i;
		if (pick >= 0)
			end_fake(&fk[pick], e->kind == EV_KILL_TASK ? SIGKILL : SIGTERM, 0);
		break;
	case EV_DISK_FULL:
		/* the journal's file cannot grow past 4 KiB from now (EFBIG, as a full disk) */
		setrlimit(RLIMIT_FSIZE, &rl);
		break;
	}
}

int
__wrap_poll(struct pollfd *p, nfds_t n, int timeout)
{
	double next = 1e18;
	int r;

	if (++polls > 200000) {
		violate("the run did not end (200,000 turns)");
		_exit(3);
	}
	r = __real_poll(p, n, 0);
	if (r != 0)
		return r;
	for (int i = 0; i < nfk; i++)
		if (fk[i].state == 1 && fk[i].end < next)
			next = fk[i].end;
	for (int i = 0; i < sq.nev; i++)
		if (!sq.resume && !sq.ev[i].done && sq.ev[i].at < next)
			next = sq.ev[i].at;
	if (timeout >= 0 && now_t + timeout / 1000.0 < next)
		next = now_t + timeout / 1000.0;
	if (next >= 1e17) {
		violate("the run waits for nothing: no task, no event, no deadline");
		_exit(3);
	}
	if (next > now_t)
		now_t = next;
	for (int i = 0; i < nfk; i++)
		if (fk[i].state == 1 && fk[i].end <= now_t)
			end_fake(&fk[i], fk[i].status, 0);
	for (int i = 0; i < sq.nev; i++)
		if (!sq.resume && !sq.ev[i].done && sq.ev[i].at <= now_t)
			fire(&sq.ev[i]);
	return __real_poll(p, n, 0);
}

/* the watchdog is a process of its own: not in a run on a fake clock */
struct guard;
int __wrap_guard_start(struct guard *g, int nslots, int *killed);
void __wrap_guard_task_started(struct guard *g, int slot, pid_t pgid, unsigned long long seq);
void __wrap_guard_task_ended(struct guard *g, int slot, pid_t pgid);
void __wrap_guard_mps_started(struct guard *g, const char *uuid);
int __wrap_guard_reaped(struct guard *g, pid_t pid);
void __wrap_guard_stop(struct guard *g);
int __wrap_guard_sweep(struct guard *g, unsigned long long seq);

int
__wrap_guard_start(struct guard *g, int nslots, int *killed)
{
	*killed = 0;
	return 0;
}

void __wrap_guard_task_started(struct guard *g, int slot, pid_t pgid, unsigned long long seq) {}
void __wrap_guard_task_ended(struct guard *g, int slot, pid_t pgid) {}
void __wrap_guard_mps_started(struct guard *g, const char *uuid) {}
int __wrap_guard_reaped(struct guard *g, pid_t pid) { return 0; }
void __wrap_guard_stop(struct guard *g) {}
int __wrap_guard_sweep(struct guard *g, unsigned long long seq) { return 0; }

/* ---- one sequence ---------------------------------------------------------------------------- */

static void
draw(uint64_t seed)
{
	static const double lens[] = {0.01, 0.2, 0.5, 1.0, 2.5};

	rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	memset(&sq, 0, sizeof sq);
	sq.n = 1 + (int)rnd(MAX_IN - 4);
	sq.jobs = 1 + (int)rnd(4);
	sq.retries = rnd(3) == 0 ? 1 + (int)rnd(3) : 0;
	sq.timeout = rnd(5) == 0 ? 1 + (int)rnd(2) : 0;
	sq.halt = (int)rnd(6);   /* 0-2 none; 3 now,fail=1; 4 soon,fail=1; 5 now,success=1 */
	for (int v = 1; v <= sq.n; v++)
		for (int a = 0; a < 8; a++) {
			uint32_t k = rnd(20);

			sq.fate[v][a].status = k < 13 ? 0 : k < 17 ? (1 << 8) : k < 19 ? (2 << 8) : SIGSEGV;
			sq.fate[v][a].len = lens[rnd(5)];
		}
	sq.nev = (int)rnd(MAX_EV + 1);
	for (int i = 0; i < sq.nev; i++) {
		uint32_t k = rnd(12);

		sq.ev[i].at = t0 + rnd(400) / 100.0;
		sq.ev[i].kind = k < 3 ? EV_INT : k < 5 ? EV_TERM : k < 6 ? EV_HUP : k < 9 ? EV_KILL_TASK :
		    k < 11 ? EV_TERM_TASK : EV_DISK_FULL;
	}
}

static int
run_farm(const char *topo)
{
	char *argv[64], jobs[16], retries[16], timeout[16], vals[MAX_IN][8];
	int argc = 0, rc;
	struct ctx c = {.sim = topo};

	snprintf(jobs, sizeof jobs, "%d", sq.jobs);
	argv[argc++] = "run";
	argv[argc++] = "--share";
	argv[argc++] = "timeslice";
	argv[argc++] = "-j";
	argv[argc++] = jobs;
	argv[argc++] = "--joblog";
	argv[argc++] = "jl";
	if (sq.resume)
		argv[argc++] = "--resume";
	if (sq.retries) {
		snprintf(retries, sizeof retries, "%d", sq.retries);
		argv[argc++] = "--retries";
		argv[argc++] = retries;
	}
	if (sq.timeout) {
		snprintf(timeout, sizeof timeout, "%d", sq.timeout);
		argv[argc++] = "--timeout";
		argv[argc++] = timeout;
	}
	if (sq.halt >= 3 && !sq.resume) {
		argv[argc++] = "--halt";
		argv[argc++] = sq.halt == 3 ? "now,fail=1" : sq.halt == 4 ? "soon,fail=1" : "now,success=1";
	}
	argv[argc++] = "true";
	argv[argc++] = ":::";
	for (int v = 1; v <= sq.n; v++) {
		snprintf(vals[v - 1], sizeof vals[v - 1], "%d", v);
		argv[argc++] = vals[v - 1];
	}
	argv[argc] = NULL;
	polls = 0;
	rc = cmd_run(argc, argv, &c);
	ctx_close(&c);
	return rc;
}

/* The joblog's records: recs[v] counts them; status[v] the last one's (exitval, signal). */
static int
read_journal(int recs[], int exitval[], int sig[])
{
	FILE *f = fopen("jl", "r");
	char line[4096];
	int first = 1;

	memset(recs, 0, sizeof(int) * (MAX_IN + 1));
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long seq;
		int ev, sg;

		if (first) {
			first = 0;
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		if (journal_parse_line(line, &seq, &ev, &sg) < 0 || seq < 1 || seq > (unsigned long long)sq.n) {
			violate("a torn or foreign line in the joblog");
			continue;
		}
		recs[seq]++;
		exitval[seq] = ev;
		sig[seq] = sg;
	}
	fclose(f);
	return 0;
}

static void
check_ended(const char *which)
{
	char msg[128];

	for (int i = 0; i < nfk; i++)
		if (fk[i].state != 3) {
			snprintf(msg, sizeof msg, "%s: a task %s when the run returned", which,
			    fk[i].state == 1 ? "still running" : "not reaped");
			violate(msg);
		}
	if (max_running > sq.jobs) {
		snprintf(msg, sizeof msg, "%s: %d tasks at once under -j %d", which, max_running, sq.jobs);
		violate(msg);
	}
}

static void
sequence(uint64_t seed, const char *topo)
{
	int recs[MAX_IN + 1], ev[MAX_IN + 1], sg[MAX_IN + 1], unrec[MAX_IN + 1];
	struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
	char msg[160];

	/* a fresh start: the clock on by an hour (nothing of the last sequence is due) */
	t0 = now_t = now_t + 3600;
	nfk = running = max_running = 0;
	violation[0] = '\0';
	memset(attempts, 0, sizeof attempts);
	memset(last_set, 0, sizeof last_set);
	draw(seed);
	if (getenv("LIFE_DEBUG")) {
		fprintf(stderr, "n %d -j %d retries %d timeout %d halt %d;", sq.n, sq.jobs, sq.retries, sq.timeout,
		    sq.halt);
		for (int i = 0; i < sq.nev; i++)
			fprintf(stderr, " ev %d at %+.2f", sq.ev[i].kind, sq.ev[i].at - t0);
		fprintf(stderr, "\n");
	}
	run_farm(topo);
	setrlimit(RLIMIT_FSIZE, &inf);
	check_ended("first run");
	read_journal(recs, ev, sg);
	for (int v = 1; v <= sq.n; v++) {
		unrec[v] = recs[v] == 0;
		if (recs[v] > 1) {
			snprintf(msg, sizeof msg, "input %d recorded %d times", v, recs[v]);
			violate(msg);
		}
		if (recs[v] != 1)
			continue;
		if (!last_set[v]) {
			snprintf(msg, sizeof msg, "input %d recorded, no attempt of it ended", v);
			violate(msg);
			continue;
		}
		/* what the record says is what its last attempt did */
		if (ev[v] == -1) {
			if (!sq.timeout || !last_by_us[v]) {
				snprintf(msg, sizeof msg, "input %d recorded as timed out, not ended by --timeout", v);
				violate(msg);
			}
		} else if (last_by_us[v]) {
			snprintf(msg, sizeof msg, "input %d recorded (exit %d, signal %d) after gpupack ended it", v,
			    ev[v], sg[v]);
			violate(msg);
		} else if (WIFEXITED(last_status[v]) ? ev[v] != WEXITSTATUS(last_status[v]) || sg[v] != 0 :
		    sg[v] != WTERMSIG(last_status[v])) {
			snprintf(msg, sizeof msg, "input %d recorded exit %d signal %d, its attempt's status was %#x",
			    v, ev[v], sg[v], last_status[v]);
			violate(msg);
		}
	}
	/* a run nothing stopped (no signal to gpupack, no --halt, room on the disk) records every input */
	if (sq.halt < 3) {
		int stopped = 0;

		for (int i = 0; i < sq.nev; i++)
			stopped |= sq.ev[i].done && (sq.ev[i].kind == EV_INT || sq.ev[i].kind == EV_TERM ||
			    sq.ev[i].kind == EV_HUP || sq.ev[i].kind == EV_DISK_FULL);
		for (int v = 1; v <= sq.n && !stopped; v++)
			if (recs[v] != 1) {
				snprintf(msg, sizeof msg, "a run nothing stopped left input %d unrecorded", v);
				violate(msg);
			}
	}
	/* --resume: every task succeeds; exactly the unrecorded ones run, once */
	sq.resume = 1;
	nfk = running = max_running = 0;
	memset(resumed, 0, sizeof resumed);
	run_farm(topo);
	check_ended("--resume");
	read_journal(recs, ev, sg);
	for (int v = 1; v <= sq.n; v++) {
		if (resumed[v] != unrec[v]) {
			snprintf(msg, sizeof msg, "--resume ran input %d %d times (%s after the first run)", v,
			    resumed[v], unrec[v] ? "unrecorded" : "recorded");
			violate(msg);
		}
		if (recs[v] != 1) {
			snprintf(msg, sizeof msg, "after --resume input %d has %d records", v, recs[v]);
			violate(msg);
		}
	}
}

/* A sequence's directory: files only (the joblog and its side files) */
static void
rm_dir(const char *dir)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = d >= 0 ? fdopendir(d) : NULL;
	struct dirent *e;

	if (!dp) {
		if (d >= 0)
			close(d);
		return;
	}
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(d, e->d_name, 0);
	closedir(dp);
	rmdir(dir);
}

/*
 * Sequences in a child process (a batch): seeds from *next on, one after
 * another in the one process (a fork each costs more than the sequence),
 * each said on the pipe as "S seed" when it starts and "R seed" (kept the
 * promises) or "V seed why" when it ends. A batch that dies (a crash, a run
 * that waits forever) is the violation of the seed it was in; the next
 * batch starts after it. Returns the violations; *next moves on.
 */
static long
batch(uint64_t *next, uint64_t end, uint64_t step, const char *topo, const char *base, int verbose)
{
	char line[700], dir[700];
	uint64_t cur = 0;
	int in = 0, st, p[2];
	long bad = 0;
	FILE *r;
	pid_t pid;

	if (pipe(p) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		FILE *w;

		close(p[0]);
		w = fdopen(p[1], "w");
		dup2(nul, 1);
		if (!getenv("LIFE_DEBUG"))
			dup2(nul, 2);
		for (uint64_t sd = *next; sd < end; sd += step) {
			snprintf(dir, sizeof dir, "%s/s%llu", base, (unsigned long long)sd);
			fprintf(w, "S %llu\n", (unsigned long long)sd);
			fflush(w);
			if (mkdir(dir, 0700) < 0 || chdir(dir) < 0)
				_exit(2);
			sequence(sd, topo);
			if (chdir(base) < 0)
				_exit(2);
			if (violation[0])
				fprintf(w, "V %llu %s\n", (unsigned long long)sd, violation);
			else {
				fprintf(w, "R %llu\n", (unsigned long long)sd);
				rm_dir(dir);
			}
			fflush(w);
		}
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return 1;
	}
	r = fdopen(p[0], "r");
	while (fgets(line, sizeof line, r)) {
		unsigned long long sd;
		int k = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%*c %llu %n", &sd, &k) < 1)
			continue;
		if (line[0] == 'S') {
			cur = sd;
			in = 1;
			continue;
		}
		in = 0;
		*next = sd + step;
		if (line[0] == 'V') {
			bad++;
			if (verbose || bad <= 10)
				fprintf(stderr, "seed %llu: %s\n", sd, line + k);
		}
	}
	fclose(r);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (in) {
		/* it died in a sequence: that one broke a promise (or crashed) */
		bad++;
		fprintf(stderr, "seed %llu: %s\n", (unsigned long long)cur, WIFSIGNALED(st) ?
		    strsignal(WTERMSIG(st)) : WIFEXITED(st) && WEXITSTATUS(st) == 3 ? "the run did not end, or "
		    "waited for nothing" : "the batch failed");
		*next = cur + step;
	} else if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		bad++;
		*next = end;
	} else {
		*next = end;
	}
	return bad;
}

int
main(void)
{
	const char *src = getenv("GPUPACK_SRC");
	const char *e;
	/* make check's count: 1,000 (200 in the sanitizers' pass) */
	const char *pass = getenv("GPUPACK_TEST_PASS");
	long n = (e = getenv("LIFE_N")) ? atol(e) : pass && strcmp(pass, "san") == 0 ? 200 : 1000, bad = 0;
	uint64_t seed0 = (e = getenv("LIFE_SEED")) ? strtoull(e, NULL, 10) : 1;
	int jobs = (e = getenv("LIFE_JOBS")) ? atoi(e) : 1, verbose = getenv("LIFE_VERBOSE") != NULL;
	long progress = (e = getenv("LIFE_PROGRESS")) ? atol(e) : 0;
	char topo[1024], base[600], cwd[512];
	const char *tmp = getenv("TMPDIR");

	/* absolute: each sequence runs in a directory of its own (GPUPACK_SRC unset: the tree is here) */
	if (!src && !(src = getcwd(cwd, sizeof cwd))) {
		perror("test_farm_life: getcwd");
		return 2;
	}
	snprintf(topo, sizeof topo, "%s/topologies/h100-80gb.topo", src);
	if (access(topo, R_OK) != 0) {
		printf("Bail out! test_farm_life: cannot read the topology %s (%s): set GPUPACK_SRC to the source tree\n",
		    topo, strerror(errno));
		return 2;
	}
	snprintf(base, sizeof base, "%s/gpupack-life.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
	    tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	setenv("GPUPACK_STATE_DIR", base, 1);
	if (jobs < 1)
		jobs = 1;
	/* LIFE_JOBS workers, each its share of the seeds */
	{
		pid_t w[16];
		int st;

		if (jobs > 16)
			jobs = 16;
		for (int k = 0; k < jobs; k++) {
			w[k] = fork();
			if (w[k] == 0) {
				long b = 0;
				uint64_t next = seed0 + (uint64_t)k, end = seed0 + (uint64_t)n;

				/* batches of LIFE_PROGRESS (or all), a line after each */
				while (next < end) {
					uint64_t stop = progress > 0 ? next + (uint64_t)progress * (uint64_t)jobs : end;

					b += batch(&next, stop < end ? stop : end, (uint64_t)jobs, topo, base, verbose);
					if (progress > 0)
						fprintf(stderr, "worker %d: %llu sequences, %ld broke a promise\n", k,
						    (unsigned long long)((next - seed0 - (uint64_t)k) / (uint64_t)jobs), b);
				}
				_exit(b > 250 ? 250 : (int)b);
			}
		}
		for (int k = 0; k < jobs; k++) {
			while (waitpid(w[k], &st, 0) < 0 && errno == EINTR)
				;
			bad += WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		}
	}
	rmdir(base);
	ok(bad == 0, "%ld generated sequences from seed %llu (farm, fates, stops, --resume): %ld broke a promise",
	    n, (unsigned long long)seed0, bad);
	return done_testing();
}
