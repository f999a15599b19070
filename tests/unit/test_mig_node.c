/*
 * test_mig_node: the MIG planner at the size of a node (8 GPUs shaped as
 * bench/mig-plan.sh plans them: GPU 1 with a busy instance, GPU 5 an idle
 * one): a mix for each piece of the proof that only it proves or that once
 * went wrong, every plan checked by the validator of tests/unit/
 * mig_fixture.h, and a few mixes pinned to their plans and work.
 * test_mig_plan holds the rules, the small mixes and the exhaustive
 * comparisons.
 */
#include "mig_fixture.h"

static int cond;

/*
 * A node as bench/mig-plan.sh plans it: 8 GPUs of the product, GPU 1 with a
 * busy instance of the first profile (never touched), GPU 5 an idle one
 * (-1, said, if the CSV has no such product).
 */
static int
bench_node(const char *product, struct mig_gpu *g)
{
	const struct product *pr = product_get(product);

	if (!pr) {
		ok(0, "%s in the CSV", product);
		return -1;
	}
	for (int i = 0; i < 8; i++) {
		g[i] = gpu_of(pr, i);
		if (i == 1 || i == 5) {
			g[i].nexisting = 1;
			g[i].existing[0] = (struct mig_existing){.gi_id = 1, .profile = 0, .at = {i == 1 ? 0 : 1, 1},
			    .busy = i == 1, .npids = i == 1, .pids = {4242}};
		}
	}
	return 0;
}

/*
 * A random node: bench_node's 8 GPUs and `least` to least + more - 1
 * random requests of up to maxcount units each, from rng seed rs; the
 * number of requests, -1 if the product is not in the CSV (said).
 */
static int
node_mix(const char *product, unsigned long long rs, int least, int more, int maxcount, struct mig_gpu *g,
    struct mig_request *r)
{
	int nr;

	if (bench_node(product, g) < 0)
		return -1;
	rng_state = rs;
	nr = least + (int)rnd((unsigned)more);
	for (int i = 0; i < nr; i++)
		random_request(&g[0], &r[i], maxcount);
	return nr;
}

/*
 * Waste comes in steps: on 8 A100s the instances' memory is a multiple of
 * 5 GiB, so 50 small jobs of 80.23 GiB in all waste at least 4.77 GiB
 * (85 GiB of instances), which proves the waste level where the LP alone
 * (0.32 GiB) cannot within the budget (bench/results/mig-plan.md, A100 mix 9).
 */
static void
test_lattice(void)
{
	struct mig_gpu g[8];
	struct mig_request r[3];
	struct mig_plan p;

	if (bench_node("A100-40GB", g) < 0)
		return;
	mig_parse_spec("9x2G", &r[0]);
	r[0].share = 0.05;
	mig_parse_spec("3x7g.40gb", &r[1]);
	mig_parse_spec("38x1G", &r[2]);
	r[2].share = 0.02;
	if (plan_one(g, 8, r, 3, &p) < 0)
		return;
	cond = p.score.satisfied == 50 && p.score.waste == (uint64_t)(17 * 5120 - 9 * 2576 - 38 * 1552) << 20 &&
	    (p.gap_level == 0 || p.gap_level > 2) && p.bound_waste == p.score.waste;
	ok(cond, "8 A100s, 50 small jobs: waste %.2f GiB proven (gap level %d, waste bound %.2f GiB)",
	    p.score.waste / 1073741824.0, p.gap_level, p.bound_waste / 1073741824.0);
	mig_plan_free(&p);
	/*
	 * The whole objective, from an independent DP over the GPUs (Python, on
	 * tests/tools/mig_check.py's own geometry enumeration): 448 SMs, 9
	 * operations. The branch and price alone stopped at 504 SMs unproven;
	 * the DP (mig_dp.c) proves it with four times the default budget.
	 */
	if (mig_plan(g, 8, r, 3, 4 * MIG_NODE_LIMIT, &p) < 0) {
		ok(0, "mig_plan: %s", err_msg());
		return;
	}
	ok(p.optimal && p.score.sms == 448 && p.score.ops == 9,
	    "8 A100s, 50 small jobs, 4x the budget: %d SMs, %d operations, proven %d", p.score.sms, p.score.ops, p.optimal);
	mig_plan_free(&p);
}

/*
 * The planner's path, pinned: the same input always gives the same plan
 * after the same work (doc/mig.md: it counts work, not time), so for a few
 * node-sized mixes (8 GPUs, GPU 1 busy, GPU 5 idle, as bench/mig-plan.sh)
 * the plan's score, whether it is proven, where not the level it stopped
 * at, and the work units spent are recorded here. Any change to the search
 * (its order, its bounds, its prices, its budget shares) moves one of them:
 * a change made on purpose regenerates the table with
 *   MIG_PLAN_GOLDEN_PRINT=1 build/tests/unit/test_mig_node
 * and says in its commit why the numbers moved.
 */
struct golden {
	const char *product;
	int seed, satisfied;
	unsigned long long waste;
	int sms, ops, optimal, gap_level;
	long nodes;
};

/*
 * With the DP over units (mig_dp.c, the split DP left out), then the
 * branch and price alone (mig_dp_disabled too); the whole planner gives
 * the first table's figures (main()).
 */
static const struct golden goldens[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 1, 0, 58840},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 43365},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 87044},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 53440},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 1, 0, 64088},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 63171},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 60017},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 61931},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 116647},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 351511},
	{"H200-141GB", 1, 27, 96989085696ULL, 294, 10, 1, 0, 206838},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 105240},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 77371},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 1, 0, 97639},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 374801},
};

static const struct golden goldens_bp[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 0, 3, 369314},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 65525},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 115104},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 90609},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 0, 2, 326311},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 82265},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 75184},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 80799},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 137986},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 131876},
	{"H200-141GB", 1, 27, 107994939392ULL, 314, 13, 0, 2, 373202},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 115372},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 63131},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 0, 2, 381865},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 168456},
};

/* The whole planner (the bags first where every unit is placed, the split DP beside the rest). */
static const struct golden goldens_all[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 1, 0, 47918},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 46527},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 53957},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 83059},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 1, 0, 54644},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 44323},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 40903},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 47274},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 92237},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 52269},
	{"H200-141GB", 1, 27, 96989085696ULL, 294, 10, 1, 0, 46869},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 72846},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 36444},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 1, 0, 58487},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 93591},
};


static void
test_golden(const struct golden *rec, int nrec, const char *who)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int print = getenv("MIG_PLAN_GOLDEN_PRINT") != NULL, n = 0, bad = 0, invalid = 0;

	for (int pi = 0; pi < 3; pi++)
		for (int seed = 1; seed <= 5; seed++) {
			struct mig_gpu g[8];
			struct mig_request r[12];
			struct mig_plan p;
			int nr;
			char why[256] = "";

			if ((nr = node_mix(names[pi], (unsigned long long)seed * 104729 + (unsigned long long)pi * 31, 3, 6, 12,
			    g, r)) < 0)
				return;
			if (plan_one(g, 8, r, nr, &p) < 0)
				return;
			/* every plan valid, whatever its path (the pairs of GPUs planned again among them) */
			if (!validate(g, 8, r, nr, &p, why)) {
				invalid++;
				printf("# %s seed %d: %s\n", names[pi], seed, why);
			}
			if (print)
				printf("\t{\"%s\", %d, %d, %lluULL, %d, %d, %d, %d, %ld},\n", names[pi], seed, p.score.satisfied,
				    (unsigned long long)p.score.waste, p.score.sms, p.score.ops, p.optimal, p.gap_level, p.nodes);
			else if (n >= nrec || strcmp(rec[n].product, names[pi]) != 0 ||
			    rec[n].seed != seed || rec[n].satisfied != p.score.satisfied ||
			    rec[n].waste != (unsigned long long)p.score.waste || rec[n].sms != p.score.sms ||
			    rec[n].ops != p.score.ops || rec[n].optimal != p.optimal ||
			    rec[n].gap_level != p.gap_level || rec[n].nodes != p.nodes) {
				bad++;
				printf("# %s seed %d: %d units, waste %llu, %d SMs, %d ops, optimal %d, gap %d, work %ld: "
				    "not as recorded\n", names[pi], seed, p.score.satisfied, (unsigned long long)p.score.waste,
				    p.score.sms, p.score.ops, p.optimal, p.gap_level, p.nodes);
			}
			n++;
			mig_plan_free(&p);
		}
	ok(!print && bad == 0 && invalid == 0 && n == nrec,
	    "%d node-sized mixes%s: valid, the same plans after the same work as recorded (%d differ, %d not valid)", n, who,
	    bad, invalid);
}

/*
 * A mix the DP over the GPUs (mig_dp.c) proves: 8 H100s, GPU 1 busy, 19
 * 1g.20gb, 18 2g.20gb, 4 jobs of 24 GiB, 9 of 4 GiB: 38 placed, 8.11 GiB
 * wasted, 894 SMs, 33 operations, the optimum an independent DP (Python,
 * on mig_check.py's geometry enumeration) finds; the branch and price alone
 * stopped at 35 operations unproven.
 */
static void
test_dp(void)
{
	struct mig_gpu g[8];
	struct mig_request r[4];
	struct mig_plan p;

	if (bench_node("H100-80GB", g) < 0)
		return;
	mig_parse_spec("19x1g.20gb", &r[0]);
	mig_parse_spec("18x2g.20gb", &r[1]);
	mig_parse_spec("4x24G", &r[2]);
	mig_parse_spec("9x4G", &r[3]);
	if (plan_one(g, 8, r, 4, &p) < 0)
		return;
	ok(p.optimal && p.score.satisfied == 38 && p.score.waste == (uint64_t)8304 << 20 && p.score.sms == 894 &&
	    p.score.ops == 33, "8 H100s, 50 jobs: %d placed, waste %.4f GiB, %d SMs, %d operations, proven %d",
	    p.score.satisfied, p.score.waste / 1073741824.0, p.score.sms, p.score.ops, p.optimal);
	mig_plan_free(&p);
}

/* A class of requests as the tests below write them: count, profile ("" for none), MiB, share. */
struct want {
	int count;
	const char *profile;
	unsigned mib;
	double share;
};

/* r[0..n-1] from w, labelled class1, class2, ... */
static void
requests_of(const struct want *w, int n, struct mig_request *r)
{
	for (int i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].count = w[i].count;
		str_copy(r[i].profile, w[i].profile, sizeof r[i].profile);
		r[i].mem_bytes = (uint64_t)w[i].mib << 20;
		r[i].share = w[i].share;
		snprintf(r[i].label, sizeof r[i].label, "class%d", i + 1);
	}
}

/* The wants planned on 8 GPUs of a product shaped as the bench's node (GPU 1 busy, GPU 5 idle). */
static int
plan_node(const char *product, const struct want *w, int n, struct mig_gpu *g, struct mig_request *r,
    struct mig_plan *p)
{
	if (bench_node(product, g) < 0)
		return -1;
	requests_of(w, n, r);
	return plan_one(g, 8, r, n, p);
}

/*
 * The row walk (mig_dpmoves.c) takes an instance's contents by their
 * reduced waste, least first, and stops at the first its bound rules out:
 * every later one fails it too. Planned once so and once looking at every
 * content (mig_dp_no_stop), with a budget that both finish in, each mix
 * must build the same moves and give the same plan, and the first must
 * have left contents unseen. A wrong order, or a stop at a filter
 * that does not grow with rc (past a class's count, say), builds fewer.
 * 8 H100s: test_dp's mix; 8 H200s, bench mix 12 (47 small jobs that
 * share instances, thousands of contents each: most go unseen).
 */
static void
test_contents_stop(void)
{
	static const struct want h100[] = {{19, "1g.20gb", 0, 0}, {18, "2g.20gb", 0, 0}, {4, "", 24576, 0},
	    {9, "", 4096, 0}};
	static const struct want h200[] = {{9, "", 2048, 0.05}, {3, "7g.141gb", 0, 0}, {38, "", 1024, 0.02}};
	const struct { const char *product; const struct want *w; int n; } mix[] = {
	    {"H100-80GB", h100, 4}, {"H200-141GB", h200, 3}};

	for (size_t i = 0; i < sizeof mix / sizeof *mix; i++) {
		struct mig_request r[8];
		struct mig_gpu g[8];
		struct mig_plan p[2];
		long built[2], unseen[2];
		int got = 0;

		for (int stop = 0; stop < 2; stop++) {
			long b0 = mig_dp_moves_built, u0 = mig_dp_contents_unseen;

			mig_dp_no_stop = !stop;
			if (bench_node(mix[i].product, g) == 0) {
				requests_of(mix[i].w, mix[i].n, r);
				got += mig_plan(g, 8, r, mix[i].n, 20000000, &p[stop]) == 0;
			}
			mig_dp_no_stop = 0;
			built[stop] = mig_dp_moves_built - b0;
			unseen[stop] = mig_dp_contents_unseen - u0;
		}
		if (got < 2) {
			ok(0, "%s: planned", mix[i].product);
			continue;
		}
		ok(built[0] == built[1] && built[1] > 0 && unseen[0] == 0 && unseen[1] > 0 &&
		    !mig_score_better(&p[0].score, &p[1].score) && !mig_score_better(&p[1].score, &p[0].score),
		    "8 %s, %d classes: the same %ld moves built (%ld looking at every content), %ld contents unseen, "
		    "the same plan (%.2f GiB, optimal %d)", mix[i].product, mix[i].n, built[1], built[0], unseen[1],
		    p[1].score.waste / 1073741824.0, p[1].optimal);
		mig_plan_free(&p[0]);
		mig_plan_free(&p[1]);
	}
}

/*
 * Level 1 proven late: on 8 A100s with this mix (bench mix 18), level 1's
 * share runs out with 44 units placed against a bound of 45, and level 2's
 * dive then finds a plan of 45. The most units are then proven after all:
 * the planner must go on as if level 1 had been (the DP's turn, the later
 * levels against 45 units), so that a plan not proven names a real waste
 * bound. Before, the gap moved to the waste level with the bound 0.
 */
static void
test_level1_late(void)
{
	static const struct want want[] = {{7, "", 2048, 0.05}, {8, "", 8192, 0}, {1, "", 2048, 0.15}, {3, "", 4096, 0},
	    {10, "", 1024, 0.1}, {8, "1g.5gb", 0, 0}, {6, "", 20480, 0.5}, {1, "", 1024, 0.05},
	    {4, "", 2048, 0.5}, {2, "", 1024, 0.02}};
	struct mig_request r[10];
	struct mig_gpu g[8];
	struct mig_plan p;

	if (plan_node("A100-40GB", want, 10, g, r, &p) < 0)
		return;
	ok(p.score.satisfied == 45 && (p.optimal || (p.gap_level == 2 && p.bound_waste > 0 &&
	    p.bound_waste <= p.score.waste) || p.gap_level > 2),
	    "8 A100s, level 1 proven late: %d placed, waste %.2f GiB, gap level %d, waste bound %.2f GiB",
	    p.score.satisfied, p.score.waste / 1073741824.0, p.gap_level, p.bound_waste / 1073741824.0);
	mig_plan_free(&p);
}

/*
 * One more unit from a pair of GPUs: on 8 H200s with this mix (the bench's
 * generator, seed 2, mix 13) level 1's branch and price runs out with 36
 * units placed against a bound of 37. Pairs of GPUs planned again for one
 * more unit (mig_dp_improve_units) find a plan of 37, which proves level 1,
 * and the DP then proves the plan optimal. Before, the plan stopped at 36,
 * "no plan satisfies more than 37".
 */
static void
test_units_pairs(void)
{
	static const struct want want[] = {{4, "", 98304, 0.25}, {12, "7g.141gb", 0, 0}, {20, "", 6144, 0.1},
	    {8, "", 16384, 0}, {6, "", 3072, 0}};
	struct mig_request r[5];
	struct mig_gpu g[8];
	struct mig_plan p;
	long found = mig_dp_units_found;
	char why[256] = "";

	if (plan_node("H200-141GB", want, 5, g, r, &p) < 0)
		return;
	ok(p.score.satisfied == 37 && p.optimal && mig_dp_units_found > found && validate(g, 8, r, 5, &p, why),
	    "8 H200s, one more unit from a pair of GPUs: %d placed, optimal %d, %ld found so %s", p.score.satisfied,
	    p.optimal, mig_dp_units_found - found, why);
	mig_plan_free(&p);
}

/*
 * The DP's second try takes the moves its first built (s->dp_moves): on 8
 * H200s with this mix (the bench's generator, seed 8, mix 1: 42 of 50
 * placed, 145.64 GiB wasted) both tries used to build every GPU's moves
 * and run out in their layers. The second now filters the first's (a
 * superset: built against a plan no better) and spends that work on its
 * layers, which prove the plan. The bounds by instance memory (below) let
 * the first try prove it alone, so they are off here: what is tested is
 * the second try's reuse.
 */
static void reused(const char *product, const struct want *want, int nw, const long *counter, const char *counted,
    int found, const char *what);

static void
test_moves_reused(void)
{
	static const struct want want[] = {{14, "2g.35gb", 0, 0}, {10, "", 71680, 0}, {21, "", 3072, 0},
	    {5, "1g.35gb", 0, 0}};

	mig_dp_no_memtab = 1;
	reused("H200-141GB", want, 4, &mig_dp_moves_reused, "GPUs' moves reused", 0, "the DP's moves reused");
	mig_dp_no_memtab = 0;
}

/*
 * The DP's bounds by instance memory (mig_dpmem.c): the GPUs
 * still to come must give their rows at least the memory their units ask
 * for, and no more than that plus the waste still allowed, and rows of
 * that memory have at least so many SMs. On 8 A100s, the bench generator's
 * seed 2, mix 15 (40 of 50 placed): with them the default budget proves
 * 10.98 GiB optimal; without, it stops at 15.98 GiB unproven, and given 15
 * times the budget proves the same 10.98: the bounds drop no better plan.
 */
static void
test_memtab(void)
{
	static const struct want want[] = {{10, "", 4096, 0}, {4, "2g.10gb", 0, 0}, {5, "", 4096, 0.5},
	    {9, "", 2048, 0}, {3, "4g.20gb", 0, 0}, {11, "", 32768, 0.05}, {2, "", 4096, 0}, {6, "", 4096, 0}};
	struct mig_request r[8];
	struct mig_gpu g[8];
	struct mig_plan p[3];
	long cut = mig_dp_memtab_cut, cut_on;
	int got = 0;

	for (int i = 0; i < 3; i++) {
		mig_dp_no_memtab = i > 0;
		if (bench_node("A100-40GB", g) == 0) {
			requests_of(want, 8, r);
			got += mig_plan(g, 8, r, 8, i == 2 ? MIG_NODE_LIMIT * 15 : 0, &p[i]) == 0;
		}
		if (i == 0)
			cut_on = mig_dp_memtab_cut - cut;
		mig_dp_no_memtab = 0;
	}
	if (!ok(got == 3, "8 A100s, seed 2 mix 15: planned three times"))
		return;
	ok(p[0].optimal && cut_on > 0 && !p[1].optimal && mig_score_better(&p[0].score, &p[1].score) && p[2].optimal &&
	    !mig_score_better(&p[0].score, &p[2].score) && !mig_score_better(&p[2].score, &p[0].score),
	    "8 A100s, seed 2 mix 15: with the bounds by memory %.2f GiB proven %d (%ld states cut); without, %.2f GiB "
	    "proven %d, and %.2f GiB proven %d at 15 times the budget", p[0].score.waste / 1073741824.0, p[0].optimal,
	    cut_on, p[1].score.waste / 1073741824.0, p[1].optimal, p[2].score.waste / 1073741824.0, p[2].optimal);
	for (int i = 0; i < 3; i++)
		mig_plan_free(&p[i]);
}

/*
 * The DP's second try goes on from the layers its first left: on 8 H100s,
 * the generator's seed 4 mix 3 (all 50 placed), the first try's exact pass
 * runs out building layer 7 of 8; the second, with the branch and price's
 * plan and the LP's prices, takes its layer 6 (2,333 of 2,748 states kept)
 * and finishes, proving 115.23 GiB optimal; from scratch it ran out again.
 * On 8 A100s (seed 0 mix 13 of the bench: 39 of 50 placed) the second try
 * goes on from layer 1 and finds a better plan, whose load on GPU 0 is
 * rebuilt through the moves the first try's states name; the plan kept
 * must be the one the DP found. Likewise on 8 H100s, seed 5 mix 3 (40 of
 * 50), where rebuilding through this try's moves instead gave a plan of 16
 * operations, not the DP's 14, still called optimal.
 */
/*
 * A plan the DP may prove only with what its run before kept (counter
 * counts it): optimal, the counter moved, valid; with found, the plan
 * kept is the one the DP found (its loads rebuilt right).
 */
static void
reused(const char *product, const struct want *want, int nw, const long *counter, const char *counted, int found,
    const char *what)
{
	struct mig_request r[16];
	struct mig_gpu g[8];
	struct mig_plan p;
	long before = *counter;
	char why[256] = "";

	if (plan_node(product, want, nw, g, r, &p) < 0)
		return;
	if (found && (mig_dp_found.satisfied < 0 || mig_score_better(&p.score, &mig_dp_found) ||
	    mig_score_better(&mig_dp_found, &p.score)))
		snprintf(why, sizeof why, "(the DP's plan %d units %.2f GiB %d SMs %d operations, not the one kept: %d SMs %d)",
		    mig_dp_found.satisfied, mig_dp_found.waste / 1073741824.0, mig_dp_found.sms, mig_dp_found.ops, p.score.sms,
		    p.score.ops);
	ok(p.optimal && *counter > before && !why[0] && validate(g, 8, r, nw, &p, why),
	    "8 %s, %s: %d placed, waste %.2f GiB, optimal %d, %ld %s %s", product, what, p.score.satisfied,
	    p.score.waste / 1073741824.0, p.optimal, *counter - before, counted, why);
	mig_plan_free(&p);
}

static void
test_layers_reused(void)
{
	static const struct want h100[] = {{17, "2g.20gb", 0, 0}, {11, "", 3072, 0}, {18, "", 4096, 0}, {4, "", 12288, 0.3}};
	static const struct want a100[] = {{6, "", 20480, 0.2}, {10, "", 1024, 0.02}, {4, "1g.5gb", 0, 0},
	    {1, "4g.20gb", 0, 0}, {9, "1g.5gb", 0, 0}, {7, "2g.10gb", 0, 0}, {6, "", 2048, 0.2}, {1, "", 1024, 0.1},
	    {6, "7g.40gb", 0, 0}};
	static const struct want h100b[] = {{13, "", 3072, 0.1}, {4, "2g.20gb", 0, 0}, {13, "", 4096, 0},
	    {6, "", 32768, 0}, {1, "1g.20gb", 0, 0}, {11, "", 49152, 0}, {2, "", 2048, 0.3}};
	const char *rebuilt = "the DP's second try from the first's layers, a better plan rebuilt through them";

	reused("H100-80GB", h100, 4, &mig_dp_layers_reused, "runs resumed", 0, "the DP's second try from the first's layers");
	reused("A100-40GB", a100, 9, &mig_dp_layers_reused, "runs resumed", 1, rebuilt);
	reused("H100-80GB", h100b, 7, &mig_dp_layers_reused, "runs resumed", 1, rebuilt);
}

/*
 * One LP of thousands of columns: on 8 H100s with this mix (the bench's
 * generator, seed 2, mix 7) the dive's column generations ran 400 rounds
 * each, some 60 million work units (3.4 s) against a budget of 500,000.
 * Each LP now stops after MIG_LP_SHARE of the budget (its duals as they
 * are) and the dive after half its level's: the plan stays within a small
 * multiple of the budget, valid.
 */
static void
test_lp_capped(void)
{
	static const struct want want[] = {{3, "7g.80gb", 0, 0}, {10, "", 2048, 0}, {5, "", 4096, 0.1}, {9, "", 1024, 0.05},
	    {7, "", 4096, 0}, {5, "", 8192, 0}, {5, "7g.80gb", 0, 0}, {2, "", 8192, 0}, {2, "", 40960, 0.2},
	    {2, "", 16384, 0}};
	struct mig_request r[10];
	struct mig_gpu g[8];
	struct mig_plan p;
	char why[256] = "";

	if (plan_node("H100-80GB", want, 10, g, r, &p) < 0)
		return;
	cond = p.nodes <= 2 * MIG_NODE_LIMIT && validate(g, 8, r, 10, &p, why);
	ok(cond, "8 H100s, an LP of thousands of columns: %d placed after %ld work units (budget %ld) %s", p.score.satisfied,
	    p.nodes, MIG_NODE_LIMIT, why);
	mig_plan_free(&p);
}

/*
 * Mixes proven only by one piece of the DP, each plan pinned and validated:
 *
 * - pairs of GPUs planned again exactly (mig_dp_improve): on 8 H100s, 31
 *   jobs of 8 GiB (13 of them with a 2% share) and 19 of 1 GiB (the
 *   bench's H100 mix 19), the branch and price's best plan wastes 13.22
 *   GiB and the DP, which prunes by it, runs out; each pair's best loads
 *   for the units the two hold (the other GPUs' loads kept) bring the plan
 *   down until the DP proves 4.09 GiB optimal (three GPUs of a 7g.80gb, one
 *   of a 3g.40gb with a 1g.20gb). Before, it stopped at 13.22, not proven;
 * - the waste level's root LP duals as the DP's prices: on 8 A100s over
 *   capacity (the generator's seed 3, mix 19: 31 of 50 placed) the DP's own
 *   price steps leave its bound well below the LP's and its states too many
 *   for the budget; from the LP's prices (a state's bound the larger of
 *   the two) it proves the plan. Before, it stopped at "waste >= 2.97 GiB".
 */
static void
test_dp_pieces(void)
{
	static const struct {
		const char *what, *product;
		struct want want[8];
		int n, satisfied;
		unsigned waste_mib;
		int sms;
	} c[] = {
		{"pairs of GPUs planned again", "H100-80GB",
		    {{2, "", 8192, 0}, {13, "", 8192, 0.02}, {4, "", 8192, 0}, {12, "", 8192, 0}, {19, "", 1024, 0}}, 5,
		    50, 4192, 482},
		{"the LP's prices", "A100-40GB",
		    {{10, "", 20480, 0}, {4, "7g.40gb", 0, 0}, {7, "", 3072, 0.02}, {14, "", 4096, 0},
			{3, "", 32768, 0.05}, {9, "4g.20gb", 0, 0}, {3, "", 2048, 0}}, 7, 31, 4736, 574},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct mig_request r[8];
		struct mig_gpu g[8];
		struct mig_plan p;
		char why[256] = "";

		if (plan_node(c[i].product, c[i].want, c[i].n, g, r, &p) < 0)
			return;
		cond = p.optimal && p.score.satisfied == c[i].satisfied && p.score.waste == (uint64_t)c[i].waste_mib << 20 &&
		    p.score.sms == c[i].sms && validate(g, 8, r, c[i].n, &p, why);
		ok(cond, "8 x %s, proven by %s: %d placed, waste %.2f GiB, %d SMs, proven %d %s", c[i].product, c[i].what,
		    p.score.satisfied, p.score.waste / 1073741824.0, p.score.sms, p.optimal, why);
		mig_plan_free(&p);
	}
}

/*
 * The DP's moves leave out the rows of a profile another one stands for
 * (a 1g.10gb+me holds what a 1g.10gb holds, and each row with it has a
 * twin with the 1g.10gb instead), but never where a class names it: on 8
 * H100s, 4 jobs that ask for 1g.10gb+me (one a GPU at most) and 30 small
 * ones, every +me job is placed, on its own GPU, and the plan is proven.
 */
static void
test_me_kept(void)
{
	static const struct want want[] = {{4, "1g.10gb+me", 0, 0}, {20, "", 8192, 0}, {10, "", 2048, 0.05}};
	struct mig_request r[3];
	struct mig_gpu g[8];
	struct mig_plan p;
	char why[256] = "";
	int me = 0;

	if (plan_node("H100-80GB", want, 3, g, r, &p) < 0)
		return;
	for (int j = 0; j < p.ngpus; j++)
		for (int i = 0; i < p.gpus[j].ninst; i++)
			me += p.gpus[j].inst[i].nunits > 0 &&
			    strcmp(g[j].profiles[p.gpus[j].inst[i].profile].name, "1g.10gb+me") == 0;
	cond = p.optimal && p.score.satisfied == 34 && me == 4 && validate(g, 8, r, 3, &p, why);
	ok(cond, "8 H100s, 4 x 1g.10gb+me and 30 small jobs: %d placed, %d +me instances used, proven %d %s",
	    p.score.satisfied, me, p.optimal, why);
	mig_plan_free(&p);
}

/*
 * The DP's plan rebuilt from its moves: on 8 H200s with this mix (the
 * bench generator's seed 2, mix 3) at 700,000 units, the DP's best state
 * puts 25 small jobs on one GPU. Its loads were rebuilt by a search over
 * which units go in which instance, which gave up after a million steps
 * (10 ms, not counted) and lost the plan: 42.52 GiB wasted where the DP
 * had found 27.02. Each load now comes from the contents its move was
 * built of, by a DP over the instances, and is counted as work.
 */
static void
test_dp_rebuilt(void)
{
	static const struct want want[] = {{8, "", 4096, 0}, {6, "", 122880, 0.05}, {3, "3g.71gb", 0, 0},
	    {1, "", 20480, 0}, {7, "3g.71gb", 0, 0}, {1, "", 1024, 0.05}, {9, "", 2048, 0}, {3, "", 12288, 0},
	    {9, "", 3072, 0.05}, {3, "2g.35gb", 0, 0}};
	struct mig_request r[10];
	struct mig_gpu g[8];
	struct mig_plan p;
	char why[256] = "";

	if (bench_node("H200-141GB", g) < 0)
		return;
	requests_of(want, 10, r);
	if (mig_plan(g, 8, r, 10, 700000, &p) < 0)
		return;
	cond = p.score.satisfied == 44 && p.score.waste == 29007806464ULL && validate(g, 8, r, 10, &p, why);
	ok(cond, "8 H200s, 25 small jobs on one GPU: %d placed, waste %.2f GiB %s", p.score.satisfied,
	    p.score.waste / 1073741824.0, why);
	mig_plan_free(&p);
}

/*
 * The pairs of GPUs planned again (mig_dp_improve) on random node-sized
 * mixes cut off at 400,000 to 800,000 units of work, where the DP's first
 * run gives up and the pairs get their turn: every plan valid (the kept
 * GPUs' loads and the pair's new ones together), and the pairs must have
 * found better plans on some of them, or this test tests nothing.
 */
static void
test_local_valid(void)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int bad = 0, plans = 0;
	long found = mig_dp_local_found;
	char why[256] = "";

	for (int pi = 0; pi < 3; pi++)
		for (int seed = 1; seed <= 20; seed++) {
			struct mig_gpu g[8];
			struct mig_request r[12];
			struct mig_plan p;
			int nr;

			if ((nr = node_mix(names[pi], (unsigned long long)seed * 7877 + (unsigned long long)pi * 13, 5, 5, 10, g,
			    r)) < 0)
				return;
			if (mig_plan(g, 8, r, nr, 400000 + 25000 * (long)rnd(17), &p) < 0) {
				bad++;
				continue;
			}
			plans++;
			if (!validate(g, 8, r, nr, &p, why)) {
				bad++;
				printf("# %s seed %d: %s\n", names[pi], seed, why);
			}
			mig_plan_free(&p);
		}
	ok(bad == 0 && mig_dp_local_found > found, "%d node-sized mixes cut off: all valid, %ld better plans from pairs of GPUs",
	    plans, mig_dp_local_found - found);
}

/*
 * Dominance proves a mix (the bench's A100 mix 9, test_lattice's: 50
 * small jobs, all placed): 448 SMs in 9 operations, where the DP without
 * it runs out of its share and the plan stops at 462 SMs, not proven
 * (SMs >= 448): the states that another with one more unit placed matches
 * are what the DP's layers cannot afford.
 */
static void
test_dom_proves(void)
{
	static const struct want want[] = {{9, "", 2048, 0.05}, {3, "7g.40gb", 0, 0}, {38, "", 1024, 0.02}};
	struct mig_request r[3];
	struct mig_gpu g[8];
	struct mig_plan p;
	long dropped = mig_dp_dom_dropped;

	if (bench_node("A100-40GB", g) < 0)
		return;
	requests_of(want, 3, r);
	if (plan_one(g, 8, r, 3, &p) < 0)
		return;
	ok(p.optimal && p.score.satisfied == 50 && p.score.sms == 448 && p.score.ops == 9 &&
	    mig_dp_dom_dropped > dropped, "8 A100s, 50 jobs: %d placed, waste %.2f GiB, %d SMs, %d operations, "
	    "proven %d after %ld work units, %ld states dropped by dominance", p.score.satisfied,
	    p.score.waste / 1073741824.0, p.score.sms, p.score.ops, p.optimal, p.nodes, mig_dp_dom_dropped - dropped);
	mig_plan_free(&p);
}

/*
 * The split DP (mig_split.c) on node-sized mixes of the bench (seed 0):
 * 8 H100s, mix 2 (15 jobs of 1 GiB, 5 of 8 GiB, 16 of 64 GiB, 8 of 3 GiB,
 * 6 of 6 GiB): 40 placed, 92.88 GiB wasted, where the DP over units and
 * the branch and price stopped at 93.25 GiB unproven (bound 88.47); 8
 * H200s, mix 2 (the same jobs): 47 placed, 69.77 GiB, where they stopped
 * at 75.02 (68.31), unproven even at 500 times the budget. Each plan the
 * split DP found, rebuilt valid, and proven at the default budget; the
 * independent integer program (mig_check.py) agrees on the H200's. The
 * bags are left out: beneath their drop vectors they prove both first.
 */
static void
test_split(void)
{
	static const struct want mix2[] = {{15, "", 1024, 0.02}, {2, "", 8192, 0}, {3, "", 8192, 0}, {16, "", 65536, 0},
	    {8, "", 3072, 0}, {6, "", 6144, 0.05}};
	static const struct { const char *product; int satisfied; unsigned long long waste; } want[] = {
	    {"H100-80GB", 40, 99723771904ULL}, {"H200-141GB", 47, 74910269440ULL}};

	mig_split_no_bags = 1;
	for (int i = 0; i < 2; i++) {
		struct mig_request r[6];
		struct mig_gpu g[8];
		struct mig_plan p;
		long proofs = mig_split_proofs, found = mig_split_found;
		char why[256] = "";

		if (plan_node(want[i].product, mix2, 6, g, r, &p) < 0)
			continue;
		ok(p.optimal && p.score.satisfied == want[i].satisfied && p.score.waste == want[i].waste &&
		    mig_split_proofs > proofs && mig_split_found > found && validate(g, 8, r, 6, &p, why),
		    "8 %s, bench mix 2: the split DP finds and proves %d placed, %.2f GiB, %d SMs, %d operations (optimal "
		    "%d, found %ld) %s", want[i].product, p.score.satisfied, p.score.waste / 1073741824.0, p.score.sms,
		    p.score.ops, p.optimal, mig_split_found - found, why);
		mig_plan_free(&p);
	}
	mig_split_no_bags = 0;
}

/*
 * The bags (mig_splitbag.c): 8 A100s, bench mix 2 (10 classes, every one
 * of the 50 jobs placed): 18.41 GiB, 714 SMs, 18 operations, found and
 * proven by the bags, where the DP over units, the branch and price and
 * the split DP stopped at 23.41 GiB unproven (bound 18.41): the bags of
 * 18.41 GiB of waste that hold every unit and have fewer SMs are none.
 */
static void
test_bags(void)
{
	static const struct want mix2[] = {{10, "", 1024, 0.1}, {5, "4g.20gb", 0, 0}, {8, "", 1024, 0.05},
	    {5, "", 2048, 0.05}, {6, "", 4096, 0.05}, {5, "1g.5gb", 0, 0}, {4, "", 2048, 0}, {4, "", 2048, 0},
	    {2, "2g.10gb", 0, 0}, {1, "", 24576, 0.02}};
	struct mig_request r[10];
	struct mig_gpu g[8];
	struct mig_plan p;
	long proofs = mig_bag_proofs;
	char why[256] = "";

	mig_bag_own.satisfied = -1;
	if (plan_node("A100-40GB", mix2, 10, g, r, &p) < 0)
		return;
	ok(p.optimal && p.score.satisfied == 50 && p.score.waste == 19763560448ULL && p.score.sms == 714 &&
	    p.score.ops == 18 && mig_bag_proofs > proofs && mig_bag_own.waste == p.score.waste &&
	    mig_bag_own.ops == p.score.ops && validate(g, 8, r, 10, &p, why),
	    "8 A100-40GB, bench mix 2: the bags find and prove %d placed, %.2f GiB (%llu), %d SMs, %d operations "
	    "(optimal %d) %s", p.score.satisfied, p.score.waste / 1073741824.0, (unsigned long long)p.score.waste,
	    p.score.sms, p.score.ops, p.optimal, why);
	mig_plan_free(&p);
}

/*
 * The bags against the rest at a node's size: mixes of 8 GPUs, planned
 * with the bags left out (mig_split_no_bags) and proven so, then with
 * them: where the bags finished, the plan must be proven with the same
 * value (a bag wrongly held not a plan, a packing state or a drop vector
 * wrongly dropped, leaves a worse plan called optimal), and valid; both
 * where every unit is placed and where the mix does not fit.
 */
static void
test_bags_agree(void)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int bad = 0, both = 0, mixes = 0, over = 0, bothover = 0;
	char why[256] = "";

	for (int pi = 0; pi < 3; pi++)
		for (int seed = 1; seed <= 60; seed++) {
			struct mig_gpu g[8];
			struct mig_request r[12];
			struct mig_plan a, b;
			int nr, units = 0;
			long proofs;

			if ((nr = node_mix(names[pi], (unsigned long long)seed * 104729 + (unsigned long long)pi * 31, 3, 5, 6,
			    g, r)) < 0)
				return;
			for (int i = 0; i < nr; i++)
				units += r[i].count;
			mig_split_no_bags = 1;
			if (mig_plan(g, 8, r, nr, 0, &a) < 0) {
				mig_split_no_bags = 0;
				bad++;
				continue;
			}
			mig_split_no_bags = 0;
			if (!a.optimal) {
				mig_plan_free(&a);
				continue;
			}
			mixes++;
			over += a.score.satisfied < units;
			proofs = mig_bag_proofs;
			if (mig_plan(g, 8, r, nr, 0, &b) < 0) {
				bad++;
				mig_plan_free(&a);
				continue;
			}
			if (mig_bag_proofs > proofs) {
				both++;
				bothover += a.score.satisfied < units;
				if (!b.optimal || mig_score_better(&a.score, &b.score) || mig_score_better(&b.score, &a.score) || !validate(g, 8, r, nr, &b, why)) {
					bad++;
					printf("# %s seed %d: without the bags (%d,%llu,%d,%d), with (%d,%llu,%d,%d) optimal %d %s\n",
					    names[pi], seed, a.score.satisfied, (unsigned long long)a.score.waste, a.score.sms,
					    a.score.ops, b.score.satisfied, (unsigned long long)b.score.waste, b.score.sms, b.score.ops,
					    b.optimal, why);
				}
			}
			mig_plan_free(&a);
			mig_plan_free(&b);
		}
	ok(bad == 0 && both >= mixes / 2 && bothover > 0 && both > bothover, "%d node-sized mixes (%d over capacity), "
	    "proven without the bags: the %d the bags finished (%d over capacity) proven with the same value, valid", mixes,
	    over, both, bothover);
}

/*
 * The split DP on a thread of its own or on the calling thread
 * (mig_split_serial): the same plans, proofs, gaps and work, where the rest
 * proves (the split DP stopped), where only the split DP does (8 H100s,
 * bench mix 2), and where neither does (8 A100s, the bench generator's
 * seed 1, mix 6).
 */
static void
test_split_serial(void)
{
	static const struct want h100[] = {{15, "", 1024, 0.02}, {2, "", 8192, 0}, {3, "", 8192, 0},
	    {16, "", 65536, 0}, {8, "", 3072, 0}, {6, "", 6144, 0.05}};
	static const struct want a100[] = {{4, "", 2048, 0.05}, {5, "", 1024, 0}, {4, "", 3072, 0.1},
	    {10, "4g.20gb", 0, 0}, {3, "", 1024, 0.02}, {6, "", 2048, 0.2}, {7, "", 4096, 0}, {11, "2g.10gb", 0, 0}};
	static const struct want h200[] = {{9, "", 2048, 0.05}, {3, "7g.141gb", 0, 0}, {38, "", 1024, 0.02}};
	static const struct { const char *product; const struct want *w; int n; } mix[] = {
	    {"H100-80GB", h100, 6}, {"A100-40GB", a100, 8}, {"H200-141GB", h200, 3}};
	int same = 0, kinds[3] = {0};

	for (int i = 0; i < 3; i++) {
		struct mig_request r[8];
		struct mig_gpu g[8];
		struct mig_plan p[2];
		int got = 0;

		for (int serial = 0; serial < 2; serial++) {
			mig_split_serial = serial;
			got += plan_node(mix[i].product, mix[i].w, mix[i].n, g, r, &p[serial]) == 0;
		}
		mig_split_serial = 0;
		if (got < 2)
			continue;
		if (!mig_score_better(&p[0].score, &p[1].score) && !mig_score_better(&p[1].score, &p[0].score) &&
		    p[0].optimal == p[1].optimal && p[0].gap_level == p[1].gap_level && p[0].nodes == p[1].nodes &&
		    p[0].bound_waste == p[1].bound_waste)
			same++;
		kinds[i] = p[0].optimal;
		mig_plan_free(&p[0]);
		mig_plan_free(&p[1]);
	}
	ok(same == 3 && kinds[0] && !kinds[1] && kinds[2], "the split DP on a thread or not: the same plans, proofs and "
	    "work (%d of 3; proven %d %d %d)", same, kinds[0], kinds[1], kinds[2]);
}

int
main(void)
{
	cond = load_csv() == 0 && nproducts >= 4;
	if (!ok(cond, "data/mig-profiles.csv: %d products", nproducts))
		return done_testing();
	test_lattice();
	/* the DP over units, its pieces pinned: where the split DP would settle a mix first, it is left out */
	mig_split_disabled = 1;
	test_dp();
	test_contents_stop();
	test_level1_late();
	test_units_pairs();
	test_moves_reused();
	test_memtab();
	test_layers_reused();
	test_lp_capped();
	test_dp_pieces();
	test_me_kept();
	test_dp_rebuilt();
	test_local_valid();
	test_dom_proves();
	test_golden(goldens, (int)(sizeof goldens / sizeof goldens[0]), ", the DP over units");
	/* the branch and price alone, as where the DPs give up */
	mig_dp_disabled = 1;
	if (getenv("MIG_PLAN_GOLDEN_PRINT"))
		printf("# branch and price alone\n");
	test_golden(goldens_bp, (int)(sizeof goldens_bp / sizeof goldens_bp[0]), ", the branch and price alone");
	mig_dp_disabled = mig_split_disabled = 0;
	/* the whole planner */
	test_split();
	test_bags();
	test_bags_agree();
	test_split_serial();
	/*
	 * the rest proves all 15, so the split DP beside it is stopped and
	 * counts for nothing; where every unit is placed the bags run first,
	 * on the calling thread, and their work counts (or their proof ends it)
	 */
	if (getenv("MIG_PLAN_GOLDEN_PRINT"))
		printf("# the whole planner\n");
	test_golden(goldens_all, (int)(sizeof goldens_all / sizeof goldens_all[0]), ", the whole planner");
	return done_testing();
}
