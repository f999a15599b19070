/*
 * farmsim: one farm over many nodes (src/farm/nodes.c), simulated on one
 * machine. Each node is a struct farm of its own driven through the farm's
 * real coordination calls (nodes_prepare, nodes_setup, nodes_take,
 * nodes_tick, nodes_unrecorded, nodes_idle, nodes_exit_status, nodes_close,
 * and journal_end for its records), linked in; the link wraps the file
 * calls they make (simfs.c: the shared directory, with the weaker
 * semantics asked for), clock_mono (the simulated clock) and joblock_take
 * (locks that do or do not reach across clients). What is simulated here
 * is only what runs around those calls: each node walks the inputs in
 * order as a slot frees up, as queue.c does, and its tasks take the length
 * drawn for them on a clock that jumps from event to event.
 *
 * It reports the makespan against the ideal, the coordination's cost
 * (calls, server metadata operations, names created, CPU spent in those
 * calls, the whole process's CPU) per task and per second, the tail, the work redone after node
 * kills, and checks the merged joblog: every input recorded exactly once
 * (lost: none; twice: none). Exit 0 when that holds, 1 when not, 2 usage.
 *
 *   farmsim -n NODES -t TASKS [-s SLOTS] [--len S] [--spread F] [--slow K:F]
 *           [--kills K] [--lost S] [--known S] [--ttl S] [--nocto]
 *           [--append-delay S] [--nolocks] [--seed N]
 *
 * --known S: a killed node's loss is known S seconds after its kill, as
 * when its watchdog marks it (gpupack killed on a node still up) or Slurm
 * says its node is down at the survivors' next question: its lost mark is
 * created then, as the watchdog creates it (nodes_lost_mark). Without it,
 * only the GPUPACK_FARM_LOST rule (--lost) finds a killed node. Slurm is
 * never asked (nodes_slurm_ask is wrapped: no answer, counted as
 * slurm_asks): the nodes run as Slurm's tasks, but what Slurm would say is
 * --known's lost mark, and a real scontrol on the machine is not consulted.
 */
#include "farm/cost.h"
#include "farm/journal.h"
#include "farm/nodes.h"
#include "farm/state.h"
#include "farm/task.h"
#include "simfs.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOBLOG "/sim/runs.log"

struct cfg {
	int nodes, slots, kills;
	unsigned long long tasks;
	double len, spread, slow_factor, lost, known;
	int slow_nodes;
	uint64_t seed;
	struct simfs_opts fs;
};

enum { EV_END, EV_TICK, EV_KILL, EV_MARK };

struct ev {
	double t;
	int kind, node, slot;
	unsigned gen;
};

struct slotst {
	unsigned long long seq;
	double start, end;
	unsigned gen;
	int busy;
};

struct node {
	struct farm f;
	struct farm_opts o;
	struct slotst *slot;
	int busy, alive, finished, fenced, closed, code, doomed;
	double kill_at;             /* when it is killed (simulated seconds from the start); 0: never */
	unsigned long long cursor;
	int walk_done;
	double factor, end;
};

static struct cfg cfg;
static struct node *nd;
static double now_t;
static uint64_t rng;
static struct ev *heap;
static size_t nheap, capheap;
static unsigned char *runs_of, *ends_of;   /* per input: attempts started, run to their end */
static double work, last_start, last_end;
static unsigned long long coord_calls;
static int failed_setup;

/*
 * Under the sanitizers (make check's second pass): the simulation keeps what
 * its killed nodes held to the end, by design, so leaks are not reported.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* ---- the clock and the wrapped calls outside the filesystem ------------------------------ */

double __wrap_clock_mono(void);
int __wrap_nodes_slurm_ask(const char *node, const char *jobid, double timeout);

static unsigned long long slurm_asks;

/* Slurm is not asked: no answer (the GPUPACK_FARM_LOST rule, or --known's mark, stands). */
int
__wrap_nodes_slurm_ask(const char *node, const char *jobid, double timeout)
{
	(void)node, (void)jobid, (void)timeout;
	slurm_asks++;
	return -1;
}

int __wrap_joblock_take(struct joblock *l, const struct joblog_desc *d, const char *key, long place);
void __wrap_joblock_release(struct joblock *l);

double
__wrap_clock_mono(void)
{
	return now_t;
}

static int lock_taken;

/* A lock on the joblog: the first node holds it first; without cross-client locks, each does. */
int
__wrap_joblock_take(struct joblock *l, const struct joblog_desc *d, const char *key, long place)
{
	(void)d;
	(void)key;
	(void)place;
	memset(l, 0, sizeof *l);
	l->fd = -1;
	l->first = cfg.fs.nolocks || !lock_taken;
	lock_taken = 1;
	return 0;
}

void
__wrap_joblock_release(struct joblock *l)
{
	(void)l;
}

static void
set_time(double t)
{
	now_t = t;
	simfs_now(t);
}

static uint64_t
rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
rnd01(void)
{
	return (double)(rnd64() >> 11) / 9007199254740992.0;
}

/* ---- events ------------------------------------------------------------------------------ */

static int
before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->kind < b->kind);
}

static void
push(struct ev e)
{
	size_t i;

	if (nheap == capheap) {
		capheap = capheap ? capheap * 2 : 1024;
		heap = realloc(heap, capheap * sizeof *heap);
	}
	i = nheap++;
	while (i > 0 && before(&e, &heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = e;
}

static struct ev
pop(void)
{
	struct ev top = heap[0], last = heap[--nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= nheap)
			break;
		if (c + 1 < nheap && before(&heap[c + 1], &heap[c]))
			c++;
		if (!before(&heap[c], &last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (nheap > 0)
		heap[i] = last;
	return top;
}

/* ---- one node -------------------------------------------------------------------------- */

static double
task_len(unsigned long long seq)
{
	uint64_t h = (seq + 1) * 0x9e3779b97f4a7c15ULL ^ cfg.seed;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return cfg.len * (1.0 + cfg.spread * (2.0 * (double)(h >> 11) / 9007199254740992.0 - 1.0));
}

/* Enter node i: what the farm's calls see of "this process" is node i's. */
static void
enter(int i)
{
	char v[32];

	simfs_client(i);
	snprintf(v, sizeof v, "%d", i);
	setenv("SLURM_PROCID", v, 1);
	snprintf(v, sizeof v, "n%04d", i);
	setenv("SLURMD_NODENAME", v, 1);
}

/*
 * A coordination call, counted. Its CPU is not timed call by call (a CPU
 * clock is a system call, dearer than most calls it would time; a wall
 * clock counts the other work of a busy machine): the report gives the
 * whole process's CPU, the simulation around the calls included, as the
 * bound on theirs.
 */
#define TIMED(call) (++coord_calls, (void)t0, r = (call))

static int
start_node(int i, const char *input)
{
	struct node *n = &nd[i];
	double t0;
	int r;

	enter(i);
	n->f.o = &n->o;
	n->f.ht.halt_status = -1;
	n->f.sigfd = n->f.devnull = -1;
	/* its slots (none running: the farm's own runs are not simulated) and its inputs, counted */
	n->f.nr = cfg.slots;
	n->f.r = calloc((size_t)cfg.slots, sizeof *n->f.r);
	n->f.total_tasks = cfg.tasks;
	if (joblog_describe(&n->o.joblog, JOBLOG, 0, 0) < 0) {
		fprintf(stderr, "farmsim: node %d: %s\n", i, err_msg());
		return -1;
	}
	tasks_init(&n->o.ts);
	inputs_add_file(&n->o.ts.in, input, 0);
	n->slot = calloc((size_t)cfg.slots, sizeof *n->slot);
	n->alive = 1;
	n->cursor = 1;
	n->factor = i < cfg.slow_nodes ? cfg.slow_factor : 1.0;
	if (TIMED(nodes_prepare(&n->f)) != 1 || TIMED(nodes_setup(&n->f, 0x5eedULL)) != 1) {
		fprintf(stderr, "farmsim: node %d: %s\n", i, err_msg());
		return -1;
	}
	push((struct ev){now_t + 1.0, EV_TICK, i, 0, 0});
	return 0;
}

static void finish_node(int i);

static void
start_task(int i, unsigned long long seq)
{
	struct node *n = &nd[i];
	int s;

	for (s = 0; n->slot[s].busy; s++)
		;
	n->slot[s].busy = 1;
	n->slot[s].seq = seq;
	n->slot[s].start = now_t;
	n->slot[s].end = now_t + task_len(seq) * n->factor;
	n->slot[s].gen++;
	n->busy++;
	if (runs_of[seq] < 255)
		runs_of[seq]++;
	if (now_t > last_start)
		last_start = now_t;
	push((struct ev){n->slot[s].end, EV_END, i, s, n->slot[s].gen});
}

/* The node is idle (nothing runs, its walk is through): ask the farm what next. */
static void
idle(int i)
{
	struct node *n = &nd[i];
	double t0;
	int r;

	if (n->finished || n->busy > 0 || !n->walk_done)
		return;
	if (TIMED(nodes_idle(&n->f, now_t)) == 0) {
		finish_node(i);
		return;
	}
	if (!n->f.st.inputs_done) {
		/* a pass over the inputs for what a lost node left */
		n->walk_done = 0;
		n->cursor = 1;
	}
}

/* Fill free slots with the next inputs this node claims, as queue.c does. */
static void
fill(int i)
{
	struct node *n = &nd[i];
	double t0;
	int r, attempt;

	while (n->alive && !n->fenced && !n->finished && !n->walk_done && n->busy < cfg.slots) {
		unsigned long long seq = n->cursor++;

		if (seq > cfg.tasks) {
			n->walk_done = 1;
			n->f.st.inputs_done = 1;
			n->f.st.inputs = cfg.tasks;
			break;
		}
		(void)TIMED(nodes_take(&n->f, seq, &attempt));
		if (r == NODES_ERROR) {
			fprintf(stderr, "farmsim: node %d: %s\n", i, err_msg());
			exit(3);
		}
		if (r == NODES_RUN || (r == NODES_RERUN && attempt - 1 < FARM_OWN_RERUNS))
			start_task(i, seq);
	}
	if (n->walk_done && n->busy == 0) {
		idle(i);
		if (!n->walk_done)
			fill(i);
	}
}

/* gpupack ended a task itself (fenced): its end is not recorded. */
static void
drop_tasks(int i)
{
	struct node *n = &nd[i];

	for (int s = 0; s < cfg.slots; s++)
		if (n->slot[s].busy) {
			work += (now_t - n->slot[s].start) / n->factor;
			n->slot[s].busy = 0;
			n->slot[s].gen++;
		}
	n->busy = 0;
}

static void
on_end(const struct ev *e)
{
	struct node *n = &nd[e->node];
	struct slotst *s = &n->slot[e->slot];
	struct run run = {0};
	double t0;
	int r;

	if (!n->alive || !s->busy || s->gen != e->gen)
		return;
	enter(e->node);
	s->busy = 0;
	n->busy--;
	/* in the tasks' own seconds (a slow node's take longer, and are not work redone) */
	work += (s->end - s->start) / n->factor;
	if (ends_of[s->seq] < 255)
		ends_of[s->seq]++;
	if (now_t > last_end)
		last_end = now_t;
	if (!TIMED(nodes_unrecorded(&n->f, &run))) {
		struct joblog_rec rec = {.seq = s->seq, .start = s->start, .runtime = s->end - s->start,
		    .command = "task", .host = nodes_host(&n->f)};

		if (TIMED(journal_end(&n->f.j, &rec)) < 0) {
			fprintf(stderr, "farmsim: node %d: %s\n", e->node, err_msg());
			exit(3);
		}
	}
	fill(e->node);
}

static void
on_tick(const struct ev *e)
{
	struct node *n = &nd[e->node];
	double t0, due;
	int r;

	if (!n->alive || n->finished)
		return;
	enter(e->node);
	(void)TIMED((nodes_tick(&n->f, now_t), 0));
	if (n->f.stop == 2 && !n->fenced) {
		n->fenced = 1;
		drop_tasks(e->node);
	}
	if (n->fenced) {
		/* declared lost: it waits for the farm's end (nodes_exit_status, at the end) */
		n->finished = 1;
		n->end = now_t;
		return;
	}
	idle(e->node);
	if (!n->walk_done)
		fill(e->node);
	if (n->finished)
		return;
	due = nodes_due(&n->f, now_t);
	push((struct ev){now_t + (due > 0.01 ? due : 0.01), EV_TICK, e->node, 0, 0});
}

static void
on_kill(const struct ev *e)
{
	struct node *n = &nd[e->node];

	if (!n->alive || n->finished)
		return;
	drop_tasks(e->node);
	n->alive = 0;
	n->end = now_t;
	if (cfg.known >= 0)
		push((struct ev){now_t + cfg.known, EV_MARK, e->node, 0, 0});
}

/* A killed node's loss becomes known: its lost mark, as its watchdog writes it. */
static void
on_mark(const struct ev *e)
{
	struct node *n = &nd[e->node];
	char path[512];

	enter(e->node);
	if (nodes_lost_mark(&n->f, path, sizeof path) == 0 && symlink(nodes_owner(&n->f), path) < 0 && errno != EEXIST)
		fprintf(stderr, "farmsim: cannot create %s: %s\n", path, strerror(errno));
}

/* The farm is over here: its status, and the merged joblog by the first to get there. */
static void
finish_node(int i)
{
	struct node *n = &nd[i];
	double t0;
	int r;

	n->finished = 1;
	n->end = now_t;
	n->code = TIMED(nodes_exit_status(&n->f, 0));
	(void)TIMED((nodes_close(&n->f), 0));
	n->closed = 1;
}

/* ---- the run and its report ------------------------------------------------------------ */

static int
usage(void)
{
	fprintf(stderr, "usage: farmsim -n NODES -t TASKS [-s SLOTS] [--len S] [--spread F] [--slow K:F] "
	    "[--kills K] [--lost S] [--known S] [--ttl S] [--nocto] [--append-delay S] [--nolocks] [--seed N]\n");
	return 2;
}

static int
parse(int argc, char **argv)
{
	cfg = (struct cfg){.nodes = 4, .slots = 4, .tasks = 10000, .len = 1.0, .slow_factor = 1.0, .lost = 60.0,
	    .known = -1, .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--nocto") == 0) {
			cfg.fs.nocto = 1;
			continue;
		}
		if (strcmp(a, "--nolocks") == 0) {
			cfg.fs.nolocks = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (strcmp(a, "-n") == 0)
			cfg.nodes = atoi(v);
		else if (strcmp(a, "-t") == 0)
			cfg.tasks = strtoull(v, NULL, 10);
		else if (strcmp(a, "-s") == 0)
			cfg.slots = atoi(v);
		else if (strcmp(a, "--len") == 0)
			cfg.len = atof(v);
		else if (strcmp(a, "--spread") == 0)
			cfg.spread = atof(v);
		else if (strcmp(a, "--slow") == 0 && sscanf(v, "%d:%lf", &cfg.slow_nodes, &cfg.slow_factor) == 2)
			;
		else if (strcmp(a, "--kills") == 0)
			cfg.kills = atoi(v);
		else if (strcmp(a, "--lost") == 0)
			cfg.lost = atof(v);
		else if (strcmp(a, "--known") == 0)
			cfg.known = atof(v);
		else if (strcmp(a, "--ttl") == 0)
			cfg.fs.ttl = atof(v);
		else if (strcmp(a, "--append-delay") == 0)
			cfg.fs.append_delay = atof(v);
		else if (strcmp(a, "--seed") == 0)
			cfg.seed = strtoull(v, NULL, 10);
		else
			return usage();
	}
	if (cfg.nodes < 2 || cfg.slots < 1 || cfg.tasks < 1 || cfg.len <= 0 || cfg.kills >= cfg.nodes)
		return usage();
	return 0;
}

/* Every input once in the merged joblog: the lost (no record) and the twice-recorded. */
static void
check_joblog(unsigned long long *lost, unsigned long long *twice, unsigned long long *records)
{
	unsigned char *seen = calloc(cfg.tasks + 1, 1);
	const char *data, *p, *end;
	size_t len;

	*lost = *twice = *records = 0;
	if (simfs_peek(JOBLOG, &data, &len) < 0) {
		*lost = cfg.tasks;
		free(seen);
		return;
	}
	end = data + len;
	p = memchr(data, '\n', len);
	for (p = p ? p + 1 : end; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long long seq = strtoull(p, NULL, 10);

		if (seq >= 1 && seq <= cfg.tasks && seen[seq] < 255)
			seen[seq]++;
		(*records)++;
		p = nl ? nl + 1 : end;
	}
	for (unsigned long long s = 1; s <= cfg.tasks; s++) {
		*lost += seen[s] == 0;
		*twice += seen[s] > 1;
	}
	free(seen);
}

/* The ideal makespan given the kills: the time by which the nodes' capacity, each until its kill, does the work. */
static double
ideal_with_kills(double total)
{
	double lo = 0, hi = 1e12;

	for (int it = 0; it < 200; it++) {
		double mid = (lo + hi) / 2, cap = 0;

		for (int i = 0; i < cfg.nodes; i++) {
			double until = nd[i].kill_at > 0 && nd[i].kill_at < mid ? nd[i].kill_at : mid;

			cap += until * cfg.slots / nd[i].factor;
		}
		if (cap >= total)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static double
proc_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	char input[] = "/tmp/farmsim-input.XXXXXX", v[32];
	unsigned long long lost, twice, records, reran = 0;
	double ideal, capacity = 0, total = 0, end = 0, wall0 = proc_cpu();
	int fd, bad_exit = 0, fenced = 0, dead = 0;

	if (parse(argc, argv) != 0)
		return 2;
	rng = cfg.seed * 0x2545F4914F6CDD1DULL + 1;
	simfs_init(&cfg.fs, cfg.nodes);
	set_time(1000.0);
	fd = mkstemp(input);
	if (fd < 0 || write(fd, "1\n", 2) != 2)
		return 3;
	close(fd);
	snprintf(v, sizeof v, "%d", cfg.nodes);
	setenv("SLURM_STEP_NUM_TASKS", v, 1);
	setenv("SLURM_JOB_ID", "1", 1);
	setenv("SLURM_STEP_ID", "0", 1);
	snprintf(v, sizeof v, "%g", cfg.lost);
	setenv("GPUPACK_FARM_LOST", v, 1);
	unsetenv("GPUPACK_FARM_RUN");
	runs_of = calloc(cfg.tasks + 1, 1);
	ends_of = calloc(cfg.tasks + 1, 1);
	nd = calloc((size_t)cfg.nodes, sizeof *nd);
	for (unsigned long long s = 1; s <= cfg.tasks; s++)
		total += task_len(s);
	for (int i = 0; i < cfg.nodes; i++)
		capacity += cfg.slots / (i < cfg.slow_nodes ? cfg.slow_factor : 1.0);
	ideal = total / capacity;
	/* every node starts at once (srun), fills its slots, then the clock runs */
	for (int i = 0; i < cfg.nodes; i++)
		if (start_node(i, input) < 0)
			failed_setup++;
	if (failed_setup)
		return 3;
	for (int k = 0; k < cfg.kills; k++) {
		int who;

		/* distinct nodes, each killed once at a random moment of the run */
		do
			who = (int)(rnd64() % (uint64_t)cfg.nodes);
		while (nd[who].doomed);
		nd[who].doomed = 1;
		nd[who].kill_at = ideal * (0.1 + 0.7 * rnd01());
		push((struct ev){1000.0 + nd[who].kill_at, EV_KILL, who, 0, 0});
	}
	for (int i = 0; i < cfg.nodes; i++) {
		enter(i);
		fill(i);
	}
	while (nheap > 0) {
		struct ev e = pop();

		set_time(e.t);
		if (e.kind == EV_END)
			on_end(&e);
		else if (e.kind == EV_TICK)
			on_tick(&e);
		else if (e.kind == EV_KILL)
			on_kill(&e);
		else
			on_mark(&e);
	}
	/* those declared lost end with the farm's status, once it is written */
	for (int i = 0; i < cfg.nodes; i++) {
		if (!nd[i].alive) {
			dead++;
			continue;
		}
		if (nd[i].fenced) {
			char path[256];
			const char *d;
			size_t l;

			fenced++;
			snprintf(path, sizeof path, "%s.farm/1.0/status", JOBLOG);
			enter(i);
			if (simfs_peek(path, &d, &l) == 0) {
				nd[i].code = nodes_exit_status(&nd[i].f, 0);
				nodes_close(&nd[i].f);
			} else
				nd[i].code = -1;
		}
		if (nd[i].code != 0)
			bad_exit++;
		if (nd[i].end > end)
			end = nd[i].end;
	}
	for (unsigned long long s = 1; s <= cfg.tasks; s++)
		reran += runs_of[s] > 1 ? runs_of[s] - 1u : 0;
	check_joblog(&lost, &twice, &records);
	{
		double makespan = last_end - 1000.0, cpu = proc_cpu() - wall0;
		unsigned long long meta = simfs_meta(&simfs_server), calls = simfs_meta(&simfs_calls);

		printf("nodes %d slots %d tasks %llu len %g spread %g slow %d:%g kills %d lost_after %g known %g "
		    "ttl %g nocto %d append_delay %g nolocks %d seed %" PRIu64 "\n",
		    cfg.nodes, cfg.slots, cfg.tasks, cfg.len, cfg.spread, cfg.slow_nodes, cfg.slow_factor, cfg.kills,
		    cfg.lost, cfg.known, cfg.fs.ttl, cfg.fs.nocto, cfg.fs.append_delay, cfg.fs.nolocks, cfg.seed);
		double ik = ideal_with_kills(total);

		printf("makespan %.1f s  ideal %.1f s  ratio %.4f  farm_end %.1f s  tail %.2f s (last start to last end)\n",
		    makespan, ideal, makespan / ideal, end - 1000.0, last_end - last_start);
		if (cfg.kills > 0)
			printf("ideal given the kills %.1f s  ratio %.4f  (the lost detection: %g s)\n", ik, makespan / ik,
			    cfg.known >= 0 && cfg.known < cfg.lost ? cfg.known : cfg.lost);
		printf("meta_ops/task %.2f  server_ops/s %.0f  names/task %.3f  creates/task %.2f  "
		    "failed_creates/task %.2f  lookups/task %.2f  syncs/task %.2f  calls/task %.2f (cached %.2f)\n",
		    (double)meta / (double)cfg.tasks, (double)meta / makespan,
		    (double)simfs_names() / (double)cfg.tasks, (double)simfs_server.create / (double)cfg.tasks,
		    (double)simfs_server.exists / (double)cfg.tasks, (double)simfs_server.lookup / (double)cfg.tasks,
		    (double)simfs_server.sync / (double)cfg.tasks, (double)calls / (double)cfg.tasks,
		    (double)simfs_calls.cached / (double)cfg.tasks);
		printf("cpu/task %.1f us (the whole simulation: every node's coordination, the simulated "
		    "filesystem, the event loop)  cpu %.1f s  coord_calls/task %.2f\n",
		    cpu * 1e6 / (double)cfg.tasks, cpu, (double)coord_calls / (double)cfg.tasks);
		printf("work %.0f s  ideal_work %.0f s  redone %.0f s (%.3f%%)  reruns %llu  dead %d  fenced %d\n",
		    work, total, work - total, 100.0 * (work - total) / total, reran, dead, fenced);
		printf("records %llu  lost %llu  twice %llu  nonzero_exits %d  slurm_asks %llu\n", records, lost, twice,
		    bad_exit, slurm_asks);
		unlink(input);
		return lost == 0 && twice == 0 && bad_exit == 0 ? 0 : 1;
	}
}
