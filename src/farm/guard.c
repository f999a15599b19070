/*
 * guard: the watchdog that ends a killed run's tasks, and the run record
 * that lets the next run end them when the watchdog was killed too
 * (guard.h says why three layers). The watchdog is a fork of gpupack that
 * keeps nothing of it but the pipe: its output goes to /dev/null (it must
 * not hold a pipe that a shell reads to its end), it ignores the terminal's
 * signals (Ctrl-C reaches the whole process group; gpupack decides what
 * they mean), and it is named gpupack-guard in ps.
 */
#include "farm/guard.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REC_HEAD 128             /* "gpupack-run 1 <boot id>\n", padded */
#define REC_LINE 64              /* "<pgid> <start> <seq>\n", padded; blank: a free slot */
#define REC_MAX_SLOTS 65536
#define KILL_ROUNDS 50

static void
sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- killing what a run left ------------------------------------------ */

struct kill_scan {
	const char *env;
	int killed, unknown;
	unsigned long long unknown_sum; /* the unknown ones by pid and start: has the set moved? */
};

static int
kill_carriers(const struct proc_stat *st, void *arg)
{
	struct kill_scan *k = arg;

	if (st->pid == getpid())
		return 0;
	if (proc_has_env(st->pid, k->env)) {
		if (kill(st->pid, SIGKILL) == 0)
			k->killed++;
	} else if (proc_env_unknown(st)) {
		k->unknown++;
		k->unknown_sum += (unsigned long long)st->pid * 1000003ULL ^ st->start;
	}
	return 0;
}

/*
 * Is the sweep over after a look that killed `killed` and could not tell
 * `unknown` (their set summed in `sum`; `prev_sum` the last look's)? A
 * process between fork and exec reads empty for a moment: look again. One
 * that stays unreadable over two looks (a non-dumpable one: ssh, an agent)
 * will not become readable by waiting, so it does not hold the sweep.
 */
int
guard_sweep_done(int killed, int unknown, unsigned long long sum, int prev_unknown, unsigned long long prev_sum)
{
	if (killed > 0)
		return 0;
	return unknown == 0 || (unknown == prev_unknown && sum == prev_sum);
}

int
guard_kill_run(const char *env, const pid_t *pgid, const unsigned long long *start, int n)
{
	int total = 0, prev_unknown = -1;
	unsigned long long prev_sum = 0;

	for (int round = 0; round < KILL_ROUNDS; round++) {
		struct kill_scan k = {env, 0, 0, 0};

		/* a group whose leader is the one recorded is the task's, whole */
		for (int i = 0; i < n; i++)
			if (pgid[i] > 0 && proc_is(pgid[i], start[i]) && kill(-pgid[i], SIGKILL) == 0)
				k.killed++;
		/* the rest, by the token they inherited (children that left the group too) */
		if (proc_each(kill_carriers, &k) < 0)
			err_clear();
		if (guard_sweep_done(k.killed, k.unknown, k.unknown_sum, prev_unknown, prev_sum))
			break;
		prev_unknown = k.unknown;
		prev_sum = k.unknown_sum;
		total += k.killed;
		sleep_ms(10);
	}
	return total;
}

/* ---- the run record ------------------------------------------------------ */

static int
parse_token(const char *name, pid_t *pid, unsigned long long *start)
{
	char *end;
	long p = strtol(name, &end, 10);

	if (end == name || *end != '-' || p <= 0 || p > (1L << 22))
		return -1;
	errno = 0;
	*start = strtoull(end + 1, &end, 10);
	if (errno || *end || *start == 0)
		return -1;
	*pid = (pid_t)p;
	return 0;
}

/* The slots of a dead run's record: the groups running there. */
static int
read_record(int runs, const char *name, pid_t **pgid, unsigned long long **start, int *n)
{
	char boot[64], want[80], *data = NULL;
	size_t len = 0;

	*pgid = NULL;
	*start = NULL;
	*n = 0;
	if (read_file_at(runs, name, REC_HEAD + (size_t)REC_MAX_SLOTS * REC_LINE, &data, &len) < 0)
		return -1;
	proc_boot_id(boot, sizeof boot);
	snprintf(want, sizeof want, "gpupack-run 1 %s\n", boot);
	/* another boot's: nothing of it can be running */
	if (len < REC_HEAD || !*boot || strncmp(data, want, strlen(want)) != 0) {
		free(data);
		return 0;
	}
	*pgid = xcalloc((len - REC_HEAD) / REC_LINE + 1, sizeof **pgid);
	*start = xcalloc((len - REC_HEAD) / REC_LINE + 1, sizeof **start);
	for (size_t off = REC_HEAD; off + REC_LINE <= len; off += REC_LINE) {
		char line[REC_LINE + 1];
		long p;
		unsigned long long s, seq;

		memcpy(line, data + off, REC_LINE);
		line[REC_LINE] = '\0';
		if (sscanf(line, "%ld %llu %llu", &p, &s, &seq) == 3 && p > 0 && p <= (1L << 22) && s > 0) {
			(*pgid)[*n] = (pid_t)p;
			(*start)[*n] = s;
			(*n)++;
		}
	}
	free(data);
	return 0;
}

/* End the leftovers of every run whose gpupack is gone; remove their records. */
static int
reap_dead_runs(int runs, const char *self, int *killed)
{
	DIR *dir;
	struct dirent *e;
	int dfd = dup(runs);

	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return err_sys(EXIT_ENV, "cannot read the run records");
	}
	while ((e = readdir(dir)) != NULL) {
		pid_t pid, *pgid;
		unsigned long long start, *starts;
		char env[300];
		int n;

		if (parse_token(e->d_name, &pid, &start) < 0 || strcmp(e->d_name, self) == 0)
			continue;
		if (proc_is(pid, start))
			continue; /* a run still going: its tasks are its own */
		if (read_record(runs, e->d_name, &pgid, &starts, &n) < 0) {
			/* not a record of ours (a FIFO, a link): left alone, said once */
			warnx_("run record %s: %s", e->d_name, err_msg());
			err_clear();
			continue;
		}
		snprintf(env, sizeof env, GUARD_ENV "=%s", e->d_name);
		*killed += guard_kill_run(env, pgid, starts, n);
		free(pgid);
		free(starts);
		unlinkat(runs, e->d_name, 0);
	}
	closedir(dir);
	return 0;
}

static int
record_create(struct guard *g, const char *name)
{
	char head[REC_HEAD], boot[64];

	proc_boot_id(boot, sizeof boot);
	memset(head, ' ', sizeof head);
	head[sizeof head - 1] = '\n';
	memcpy(head, "gpupack-run 1 ", 14);
	memcpy(head + 14, boot, strlen(boot));
	head[14 + strlen(boot)] = '\n';
	g->rec = openat(g->runs, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (g->rec < 0)
		return err_sys(EXIT_ENV, "cannot create the run record %s", name);
	if (pwrite(g->rec, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    ftruncate(g->rec, REC_HEAD + (off_t)g->nslots * REC_LINE) < 0)
		return err_sys(EXIT_ENV, "cannot write the run record %s", name);
	return 0;
}

/* Slot lines are written in place: the record never grows with the number of tasks. */
static void
record_slot(struct guard *g, int slot, const char *text)
{
	char line[REC_LINE];
	size_t n = strlen(text);

	if (g->rec < 0 || slot < 1 || slot > g->nslots)
		return;
	memset(line, ' ', sizeof line);
	line[sizeof line - 1] = '\n';
	memcpy(line, text, n < sizeof line - 1 ? n : sizeof line - 1);
	if (pwrite(g->rec, line, sizeof line, REC_HEAD + (off_t)(slot - 1) * REC_LINE) < 0)
		return; /* the watchdog still knows; the record is the second line of defence */
}

/* ---- the watchdog ------------------------------------------------------- */

struct watched {
	pid_t *pgid;
	unsigned long long *start;
	int n, cap;
	char **uuids;
	int nuuids;
	char *mark, *mark_to;   /* the lost mark to create once the tasks are gone (guard_mark_on_death) */
};

static void
watch_line(struct watched *w, char *line)
{
	long p;
	unsigned long long s;

	if (line[0] == '+' && sscanf(line + 1, "%ld %llu", &p, &s) == 2) {
		for (int i = 0; i < w->n; i++)
			if (w->pgid[i] == 0) {
				w->pgid[i] = (pid_t)p;
				w->start[i] = s;
				return;
			}
		if (w->n < w->cap) {
			w->pgid[w->n] = (pid_t)p;
			w->start[w->n++] = s;
		}
	} else if (line[0] == '-' && sscanf(line + 1, "%ld", &p) == 1) {
		for (int i = 0; i < w->n; i++)
			if (w->pgid[i] == (pid_t)p)
				w->pgid[i] = 0;
	} else if (line[0] == 'm' && line[1] == ' ' && line[2]) {
		w->uuids = xrealloc(w->uuids, (size_t)(w->nuuids + 1) * sizeof *w->uuids);
		w->uuids[w->nuuids++] = xstrdup(line + 2);
	} else if (line[0] == 'l' && line[1] == ' ' && line[2]) {
		/* "l TARGET PATH": TARGET has no space, PATH may */
		char *sp = strchr(line + 2, ' ');

		if (sp && sp[1] == '/') {
			*sp = '\0';
			free(w->mark);
			free(w->mark_to);
			w->mark_to = xstrdup(line + 2);
			w->mark = xstrdup(sp + 1);
		}
	}
}

/* gpupack is gone: its tasks first (MPS clients before their daemon), then its daemons. */
static void
watch_end(struct watched *w, const struct guard *g)
{
	guard_kill_run(g->env, w->pgid, w->start, w->n);
	for (int i = 0; i < w->nuuids; i++) {
		struct mps_daemon d;

		int last = -1;

		/* left to the other runs that use it, if any: the last of them stops it */
		if (mps_lookup(w->uuids[i], &d) == 0 && !mps_used_by_others(&d, &last) && mps_stop(&d, 0, 1) < 0)
			err_clear();
		if (last >= 0)
			close(last);
		err_clear();
	}
	if (g->rec >= 0) {
		char name[sizeof g->token];

		str_copy(name, g->token, sizeof name);
		unlinkat(g->runs, name, 0);
	}
	/*
	 * A farm over nodes: gpupack died with its node still up and its tasks
	 * are gone now, so the others may take its claims over at once rather
	 * than after GPUPACK_FARM_LOST of silence (farm/nodes.h). Only here,
	 * at gpupack's death: a gpupack that is only slow never gets this mark
	 * from its own watchdog. A failure (EEXIST: the others said so first)
	 * leaves the others their own rules.
	 */
	if (w->mark && symlink(w->mark_to, w->mark) < 0)
		errno = 0;
}

static void __attribute__((noreturn))
watchdog(int in, struct guard *g)
{
	static const int quiet[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
	struct watched w = {0};
	char buf[PATH_MAX + 512];
	size_t have = 0;
	sigset_t none;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_NAME, "gpupack-guard");
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		signal(quiet[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	/* nothing of gpupack's but the pipe: no output pipe held open, no joblog */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != in && fd != g->rec && fd != g->runs)
			close(fd);
	w.cap = g->nslots + 1;
	w.pgid = xcalloc((size_t)w.cap, sizeof *w.pgid);
	w.start = xcalloc((size_t)w.cap, sizeof *w.start);
	for (;;) {
		ssize_t r = read(in, buf + have, sizeof buf - 1 - have);
		char *p, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			watch_end(&w, g);
			_exit(0);
		}
		have += (size_t)r;
		buf[have] = '\0';
		for (p = buf; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
			*nl = '\0';
			if (strcmp(p, "q") == 0)
				_exit(0);
			watch_line(&w, p);
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have >= sizeof buf - 1)
			have = 0; /* a line that long is none of ours */
	}
}

/* The watchdog died (seen by its exit, or by its pipe, whichever first): said once. */
static void
lost(struct guard *g, pid_t pid)
{
	if (!g->lost)
		warnx_("the watchdog (pid %ld) died: tasks may outlive a killed gpupack (the next run "
		    "ends them)", (long)pid);
	g->lost = 1;
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}

static void
tell(struct guard *g, const char *line)
{
	size_t n = strlen(line);

	if (g->fd < 0)
		return;
	while (n > 0) {
		ssize_t w = write(g->fd, line, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			lost(g, g->pid);
			return;
		}
		line += w;
		n -= (size_t)w;
	}
}

int
guard_start(struct guard *g, int nslots, int *killed)
{
	char path[PATH_MAX];
	int p[2];

	*killed = 0;
	g->fd = g->rec = g->runs = -1;
	g->nslots = nslots < REC_MAX_SLOTS ? nslots : REC_MAX_SLOTS;
	snprintf(g->token, sizeof g->token, "%ld-%llu", (long)getpid(), proc_start_time(getpid()));
	snprintf(g->env, sizeof g->env, GUARD_ENV "=%s", g->token);
	g->runs = state_dir_fd("runs", 1, path, sizeof path);
	if (g->runs < 0)
		return -1;
	if (reap_dead_runs(g->runs, g->token, killed) < 0 || record_create(g, g->token) < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_sys(EXIT_ENV, "pipe");
	g->pid = fork();
	if (g->pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_sys(EXIT_ENV, "cannot start the watchdog");
	}
	if (g->pid == 0) {
		close(p[1]);
		watchdog(p[0], g);
	}
	close(p[0]);
	g->fd = p[1];
	/* orphans of our tasks become our children: guard_sweep finds them however they hide */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		warnx_("cannot become the subreaper of the tasks: %s", strerror(errno));
	return 0;
}

void
guard_mark_on_death(struct guard *g, const char *path, const char *target)
{
	char line[PATH_MAX + 200];

	if (path[0] != '/' || strchr(target, ' ') || strchr(target, '\n') || strchr(path, '\n'))
		return;
	if ((size_t)snprintf(line, sizeof line, "l %s %s\n", target, path) >= sizeof line)
		return;
	tell(g, line);
}

void
guard_task_started(struct guard *g, int slot, pid_t pgid, unsigned long long seq)
{
	unsigned long long start = proc_start_time(pgid);
	char line[96];

	/* gone already (a fast task): its children, if any, carry the token */
	if (start == 0)
		return;
	snprintf(line, sizeof line, "%ld %llu %llu", (long)pgid, start, seq);
	record_slot(g, slot, line);
	snprintf(line, sizeof line, "+%ld %llu\n", (long)pgid, start);
	tell(g, line);
}

void
guard_task_ended(struct guard *g, int slot, pid_t pgid)
{
	char line[48];

	record_slot(g, slot, "");
	snprintf(line, sizeof line, "-%ld\n", (long)pgid);
	tell(g, line);
}

void
guard_mps_started(struct guard *g, const char *uuid)
{
	char line[GPU_UUID_LEN + 8];

	snprintf(line, sizeof line, "m %s\n", uuid);
	tell(g, line);
}

int
guard_reaped(struct guard *g, pid_t pid)
{
	if (g->pid <= 0 || pid != g->pid)
		return 0;
	g->pid = 0;
	lost(g, pid);
	return 1;
}

void
guard_stop(struct guard *g)
{
	if (g->runs >= 0)
		prctl(PR_SET_CHILD_SUBREAPER, 0);
	if (g->fd >= 0) {
		tell(g, "q\n");
		close(g->fd);
		g->fd = -1;
	}
	if (g->pid > 0)
		waitpid(g->pid, NULL, 0);
	g->pid = 0;
	if (g->rec >= 0) {
		close(g->rec);
		g->rec = -1;
		unlinkat(g->runs, g->token, 0);
	}
	if (g->runs >= 0)
		close(g->runs);
	g->runs = -1;
}

/* ---- what tasks left behind ---------------------------------------------- */

struct sweep {
	const char *env;        /* GPUPACK_RUN=<token> */
	const char *seq_env;    /* GPUPACK_SEQ=<seq>, or NULL: any task's */
	pid_t self, keep;       /* gpupack, its watchdog */
	pid_t *ours;            /* our children killed: reaped after */
	size_t nours, cap;
	int killed;
};

static int
sweep_one(const struct proc_stat *st, void *arg)
{
	struct sweep *s = arg;
	int orphan = !s->seq_env && st->ppid == s->self;

	if (st->pid == s->self || st->pid == s->keep)
		return 0;
	if (!orphan && !(proc_has_env(st->pid, s->env) && (!s->seq_env || proc_has_env(st->pid, s->seq_env))))
		return 0;
	if (kill(st->pid, SIGKILL) < 0)
		return 0;
	s->killed++;
	if (st->ppid == s->self) {
		xgrow(&s->ours, &s->cap, s->nours + 1, sizeof *s->ours);
		s->ours[s->nours++] = st->pid;
	}
	return 0;
}

int
guard_sweep(struct guard *g, unsigned long long seq)
{
	char seq_env[48];
	struct sweep s = {g->env, NULL, getpid(), g->pid > 0 ? g->pid : -1, NULL, 0, 0, 0};
	int total = 0;

	if (!g->env[0])
		return 0;
	if (seq > 0) {
		snprintf(seq_env, sizeof seq_env, "GPUPACK_SEQ=%llu", seq);
		s.seq_env = seq_env;
	}
	for (int round = 0; round < KILL_ROUNDS; round++) {
		s.killed = 0;
		if (proc_each(sweep_one, &s) < 0)
			err_clear();
		/* our own children, reaped when they are gone already (the loop reaps the rest) */
		for (size_t i = 0; i < s.nours; i++)
			waitpid(s.ours[i], NULL, WNOHANG);
		s.nours = 0;
		if (s.killed == 0)
			break;
		total += s.killed;
		sleep_ms(5);
	}
	free(s.ours);
	return total;
}
