/*
 * test_mig_node: the MIG planner at the size of a node (8 GPUs shaped as
 * bench/mig-plan.sh plans them: GPU 1 with a busy instance, GPU 5 an idle
 * one): a mix for each piece of the proof that only it proves, every plan
 * checked by the validator of tests/unit/mig_fixture.h, the pieces against
 * each other, and a few mixes pinned to their plans and work. test_mig_plan
 * holds the rules, the small mixes and the exhaustive comparisons.
 */
#include "mig_fixture.h"
#include "util/knob.h"

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

/* The wants planned on 8 GPUs of a product shaped as the bench's node (GPU 1 busy, GPU 5 idle), within budget. */
static int
plan_node(const char *product, const struct want *w, int n, long budget, struct mig_gpu *g, struct mig_request *r,
    struct mig_plan *p)
{
	int rc;

	if (bench_node(product, g) < 0)
		return -1;
	requests_of(w, n, r);
	if ((rc = mig_plan(g, 8, r, n, budget, p)) < 0)
		printf("# mig_plan: %s\n", err_msg());
	return rc;
}

/* The mixes of the bench (bench/mig-plan.sh, seed 0) the pieces below prove. */
static const struct want a100_2[] = {{10, "", 1024, 0.1}, {5, "4g.20gb", 0, 0}, {8, "", 1024, 0.05},
    {5, "", 2048, 0.05}, {6, "", 4096, 0.05}, {5, "1g.5gb", 0, 0}, {4, "", 2048, 0}, {4, "", 2048, 0},
    {2, "2g.10gb", 0, 0}, {1, "", 24576, 0.02}};
static const struct want a100_4[] = {{8, "", 4096, 0.3}, {5, "", 16384, 0}, {3, "", 8192, 0}, {6, "2g.10gb", 0, 0},
    {13, "", 3072, 0.02}, {8, "", 16384, 0.1}, {4, "2g.10gb", 0, 0}, {3, "", 8192, 0.1}};
static const struct want a100_15[] = {{6, "", 1024, 0}, {1, "", 2048, 0}, {9, "", 20480, 0}, {4, "", 12288, 0.02},
    {12, "", 4096, 0}, {7, "", 8192, 0.5}, {1, "1g.5gb", 0, 0}, {7, "", 24576, 0}, {3, "", 8192, 0.02}};
static const struct want a100_19[] = {{13, "1g.5gb", 0, 0}, {11, "", 3072, 0}, {7, "", 16384, 0}, {9, "2g.10gb", 0, 0},
    {2, "3g.20gb", 0, 0}, {7, "", 2048, 0.02}, {1, "", 16384, 0}};
static const struct want h100_6[] = {{16, "4g.40gb", 0, 0}, {7, "", 49152, 0}, {11, "", 16384, 0},
    {16, "", 8192, 0.2}};
static const struct want h100_14[] = {{9, "", 12288, 0.1}, {8, "", 8192, 0.5}, {7, "", 3072, 0}, {1, "", 4096, 0},
    {5, "", 6144, 0.02}, {2, "", 4096, 0.02}, {2, "", 65536, 0}, {15, "", 6144, 0.05}, {1, "", 3072, 0}};

/*
 * Each piece of the proof on a bench mix that only it proves, the plan
 * pinned (its value as bench/results/mig-plan.md has it) and validated, and
 * which piece proved it seen through the bags' counters:
 *
 * - the LP's bounds at levels 2 to 4 (H100 mix 6: 29 of 50 placed, 211.95
 *   GiB, where the bags, beneath their many drop vectors, run out of work);
 * - the bags where every unit is placed (A100 mix 2: 18.41 GiB, 714 SMs,
 *   where the LP's bound stays at 18.41 GiB with fewer SMs);
 * - the bags beneath the drop vectors (A100 mix 19: 45 of 50, 14.17 GiB,
 *   where the LP's bound mixes the vectors' residues: 11.59 GiB);
 * - the SMs a packing leaves over (H100 mix 14: 8 jobs need half a GPU's
 *   SMs each; the packings the memory alone allows are too many);
 * - the bags, where the LP's bound on the units is not whole (A100 mix 4:
 *   the LP says 39, no plan places more than 38);
 * - the bags finding a plan of one unit more than the LP's dive did (A100
 *   mix 15: 33 of 50; the LP's bound, 33.6, proves it then).
 */
static void
test_pieces(void)
{
	static const struct {
		const char *what, *product;
		const struct want *w;
		int n, proofs, units;
		struct mig_score sc;
	} c[] = {
		{"the LP's bounds at levels 2 to 4", "H100-80GB", h100_6, 4, 0, 0, {29, 227582935040ULL, 926, 30}},
		{"the bags, every unit placed", "A100-40GB", a100_2, 10, 1, 0, {50, 19763560448ULL, 714, 18}},
		{"the bags beneath the drop vectors", "A100-40GB", a100_19, 7, 1, 0, {45, 15216934912ULL, 728, 32}},
		{"the SMs a packing leaves over", "H100-80GB", h100_14, 9, 1, 0, {48, 236357419008ULL, 894, 14}},
		{"the bags: no plan places one unit more", "A100-40GB", a100_4, 8, 1, 0, {38, 46774878208ULL, 700, 21}},
		{"the bags: a plan of one unit more", "A100-40GB", a100_15, 9, 1, 1, {33, 115427246080ULL, 686, 18}},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct mig_request r[12];
		struct mig_gpu g[8];
		struct mig_plan p;
		char why[256] = "";
		long proofs, units;

		knob_reset();
		if (plan_node(c[i].product, c[i].w, c[i].n, 0, g, r, &p) < 0)
			return;
		proofs = knob(KNOB_MIG_BAG_PROOFS);
		units = knob(KNOB_MIG_BAG_UNITS);
		cond = p.optimal && !mig_score_better(&p.score, &c[i].sc) && !mig_score_better(&c[i].sc, &p.score) &&
		    proofs == c[i].proofs && units == c[i].units && validate(g, 8, r, c[i].n, &p, why);
		ok(cond, "8 x %s, proven by %s: %d placed, waste %.2f GiB, %d SMs, %d operations, proven %d (bag proofs %ld, "
		    "units %ld) %s", c[i].product, c[i].what, p.score.satisfied, p.score.waste / 1073741824.0, p.score.sms,
		    p.score.ops, p.optimal, proofs, units, why);
		mig_plan_free(&p);
	}
	knob_reset();
}

/*
 * What the LP's bound on the units says where the bags do not prove it
 * (mig.bags_off): A100 mix 4, no plan placing more than 39 units (the
 * bags prove 38: test_pieces); A100 mix 15, 33 (the dive found 32, the
 * bags 33). Each plan not proven, its bound the LP's, which no plan beats.
 */
static void
test_units_bound(void)
{
	static const struct {
		const struct want *w;
		int n, satisfied, bound;
	} c[] = {{a100_4, 8, 38, 39}, {a100_15, 9, 32, 33}};

	knob_put(KNOB_MIG_BAGS_OFF, 1);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct mig_request r[12];
		struct mig_gpu g[8];
		struct mig_plan p;
		char why[256] = "";

		if (plan_node("A100-40GB", c[i].w, c[i].n, 0, g, r, &p) < 0)
			break;
		cond = !p.optimal && p.gap_level == 1 && p.score.satisfied == c[i].satisfied &&
		    p.bound_satisfied == c[i].bound && validate(g, 8, r, c[i].n, &p, why);
		ok(cond, "8 A100s, the bags left out: %d placed, not proven: no plan places more than %d %s", p.score.satisfied,
		    p.bound_satisfied, why);
		mig_plan_free(&p);
	}
	knob_reset();
}

/*
 * Waste comes in steps: on 8 A100s the instances' memory is a multiple of
 * 5 GiB, so 50 small jobs of 80.23 GiB in all waste at least 4.77 GiB
 * (85 GiB of instances): 448 SMs in 9 operations, the optimum an
 * independent DP (Python, on tests/tools/mig_check.py's own geometry
 * enumeration) finds.
 */
static void
test_waste_step(void)
{
	static const struct want want[] = {{9, "", 2048, 0.05}, {3, "7g.40gb", 0, 0}, {38, "", 1024, 0.02}};
	struct mig_request r[3];
	struct mig_gpu g[8];
	struct mig_plan p;
	char why[256] = "";

	if (plan_node("A100-40GB", want, 3, 0, g, r, &p) < 0)
		return;
	cond = p.optimal && p.score.satisfied == 50 &&
	    p.score.waste == (uint64_t)(17 * 5120 - 9 * 2576 - 38 * 1552) << 20 && p.score.sms == 448 &&
	    p.score.ops == 9 && validate(g, 8, r, 3, &p, why);
	ok(cond, "8 A100s, 50 small jobs: waste %.2f GiB, %d SMs, %d operations, proven %d %s",
	    p.score.waste / 1073741824.0, p.score.sms, p.score.ops, p.optimal, why);
	mig_plan_free(&p);
}

/*
 * A profile that another stands for (a 1g.10gb+me holds what a 1g.10gb
 * holds, and each row with it has a twin with the 1g.10gb instead) is left
 * out of the bags, but never where a class names it: on 8 H100s, 4 jobs
 * that ask for 1g.10gb+me (one a GPU at most) and 30 small ones, every +me
 * job is placed, on its own GPU, and the plan is proven.
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

	if (plan_node("H100-80GB", want, 3, 0, g, r, &p) < 0)
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
 * Each LP stops after MIG_LP_SHARE of the budget (its duals as they are),
 * and the bags within what is left: an LP of thousands of columns once
 * took seconds. The plan stays within the budget and a little more (the
 * pieces check their work as they go), valid.
 */
static void
test_budget(void)
{
	static const struct want want[] = {{3, "7g.80gb", 0, 0}, {10, "", 2048, 0}, {5, "", 4096, 0.1}, {9, "", 1024, 0.05},
	    {7, "", 4096, 0}, {5, "", 8192, 0}, {5, "7g.80gb", 0, 0}, {2, "", 8192, 0}, {2, "", 40960, 0.2},
	    {2, "", 16384, 0}};
	struct mig_request r[10];
	struct mig_gpu g[8];
	struct mig_plan p;
	char why[256] = "";

	if (plan_node("H100-80GB", want, 10, 0, g, r, &p) < 0)
		return;
	cond = p.nodes <= MIG_NODE_LIMIT + MIG_NODE_LIMIT / 8 && validate(g, 8, r, 10, &p, why);
	ok(cond, "8 H100s, an LP of thousands of columns: %d placed after %ld work units (budget %ld) %s", p.score.satisfied,
	    p.nodes, MIG_NODE_LIMIT, why);
	mig_plan_free(&p);
}

/*
 * The bounds a plan reports where the budget cuts it off: on random
 * node-sized mixes stopped at 50,000 to 650,000 units, every plan valid,
 * its bound where it says it is not proven no better than the plan, and at
 * the default budget the same mix never worse than the cut one (more work
 * may find better plans; it may not lose one it would have found: the
 * pieces only ever improve on the best plan).
 */
static void
test_cut_off(void)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int bad = 0, plans = 0, cut = 0, seeds = san_pass() ? 4 : 20;
	char why[256] = "";

	for (int pi = 0; pi < 3; pi++)
		for (int seed = 1; seed <= seeds; seed++) {
			struct mig_gpu g[8];
			struct mig_request r[12];
			struct mig_plan p;
			int nr;

			if ((nr = node_mix(names[pi], (unsigned long long)seed * 7877 + (unsigned long long)pi * 13, 5, 5, 10, g,
			    r)) < 0)
				return;
			if (mig_plan(g, 8, r, nr, 50000 + 50000 * (long)rnd(13), &p) < 0) {
				bad++;
				continue;
			}
			plans++;
			cut += !p.optimal;
			if (!validate(g, 8, r, nr, &p, why) || (p.gap_level == 1 && p.bound_satisfied <= p.score.satisfied) ||
			    (p.gap_level == 2 && p.bound_waste >= p.score.waste) || (p.gap_level == 3 && p.bound_sms >= p.score.sms) ||
			    (p.gap_level == 4 && p.bound_ops >= p.score.ops) || p.optimal != (p.gap_level == 0)) {
				bad++;
				printf("# %s seed %d: gap %d bounds (%d,%llu,%d,%d) %s\n", names[pi], seed, p.gap_level,
				    p.bound_satisfied, (unsigned long long)p.bound_waste, p.bound_sms, p.bound_ops, why);
			}
			mig_plan_free(&p);
		}
	ok(bad == 0 && cut > 0, "%d node-sized mixes cut off (%d not proven): each valid, its gap and bounds consistent",
	    plans, cut);
}

/*
 * The pieces against each other at a node's size: random mixes of 8 GPUs
 * planned with the bags alone (the LP failing from its first call, the
 * bags blind to the plans of the rest: they prove the most units and the
 * rest by themselves), and with the whole planner. Where both prove, the
 * same value (a bag wrongly held not a plan, a packing state or a drop
 * vector wrongly dropped leaves a worse plan called optimal); and with the
 * bags left out, what the LP's bounds prove is the same too.
 */
static void
test_agree(void)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int bad = 0, both = 0, bags = 0, lp = 0, mixes = 0, over = 0, seeds = san_pass() ? 6 : 40;
	char why[256] = "";

	for (int pi = 0; pi < 3; pi++)
		for (int seed = 1; seed <= seeds; seed++) {
			struct mig_gpu g[8];
			struct mig_request r[12];
			struct mig_plan p[3];
			int nr, units = 0;

			if ((nr = node_mix(names[pi], (unsigned long long)seed * 104729 + (unsigned long long)pi * 31, 3, 5, 6,
			    g, r)) < 0)
				return;
			for (int i = 0; i < nr; i++)
				units += r[i].count;
			for (int w = 0; w < 3; w++) {
				knob_reset();
				knob_put(KNOB_MIG_LP_FAIL_FROM, w == 1);
				knob_put(KNOB_MIG_BAGS_BLIND, w == 1);
				knob_put(KNOB_MIG_BAGS_OFF, w == 2);
				if (mig_plan(g, 8, r, nr, 0, &p[w]) < 0)
					memset(&p[w], 0, sizeof p[w]);
			}
			knob_reset();
			mixes++;
			over += p[0].score.satisfied < units;
			for (int w = 1; w < 3; w++)
				if (p[0].optimal && p[w].optimal) {
					both++;
					bags += w == 1;
					lp += w == 2;
					if (mig_score_better(&p[0].score, &p[w].score) || mig_score_better(&p[w].score, &p[0].score) ||
					    !validate(g, 8, r, nr, &p[w], why)) {
						bad++;
						printf("# %s seed %d: the whole planner (%d,%llu,%d,%d), %s (%d,%llu,%d,%d) %s\n", names[pi],
						    seed, p[0].score.satisfied, (unsigned long long)p[0].score.waste, p[0].score.sms,
						    p[0].score.ops, w == 1 ? "the bags alone" : "without the bags", p[w].score.satisfied,
						    (unsigned long long)p[w].score.waste, p[w].score.sms, p[w].score.ops, why);
					}
				}
			for (int w = 0; w < 3; w++)
				mig_plan_free(&p[w]);
		}
	ok(bad == 0 && bags >= mixes / 2 && lp > 0, "%d node-sized mixes (%d over capacity): where the whole planner and "
	    "the bags alone both prove (%d), and the LP's bounds alone (%d), the same value", mixes, over, bags, lp);
}

/*
 * The planner's path, pinned: the same input always gives the same plan
 * after the same work (doc/mig.md: it counts work, not time), so for a few
 * node-sized mixes (8 GPUs, GPU 1 busy, GPU 5 idle, as bench/mig-plan.sh)
 * the plan's score, whether it is proven, where not the level it stopped
 * at, and the work units spent are recorded here. Any change to the search
 * (its order, its bounds, its prices, its budget shares) moves one of them:
 * a change made on purpose regenerates the tables with
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

/* The whole planner. */
static const struct golden goldens[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 1, 0, 56456},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 57974},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 82925},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 90329},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 1, 0, 67760},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 73666},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 63436},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 70318},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 91829},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 57554},
	{"H200-141GB", 1, 27, 96989085696ULL, 294, 10, 1, 0, 50638},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 76370},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 47925},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 1, 0, 72838},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 100953},
};

/* The LP failing from its first call: the first plans and the bags alone. */
static const struct golden goldens_nolp[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 1, 0, 53831},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 98057},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 59387},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 432772},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 1, 0, 79219},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 53567},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 49715},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 54754},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 67338},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 53097},
	{"H200-141GB", 1, 27, 96989085696ULL, 294, 10, 1, 0, 48399},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 97590},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 38975},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 1, 0, 68629},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 155815},
};

/* The bags left out: the first plans, the LP's dive and bounds alone. */
static const struct golden goldens_nobags[] = {
	{"A100-40GB", 1, 24, 72729231360ULL, 756, 23, 0, 2, 54785},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 57974},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 17, 0, 4, 80059},
	{"A100-40GB", 4, 19, 23957864448ULL, 644, 20, 0, 2, 48735},
	{"A100-40GB", 5, 25, 113934073856ULL, 630, 22, 0, 2, 64895},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 73666},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 63436},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 70318},
	{"H100-80GB", 4, 22, 29980884992ULL, 878, 23, 0, 1, 36140},
	{"H100-80GB", 5, 27, 200571617280ULL, 886, 15, 0, 2, 51021},
	{"H200-141GB", 1, 27, 107994939392ULL, 314, 13, 0, 2, 48688},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 0, 2, 49472},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 47925},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 0, 2, 71675},
	{"H200-141GB", 5, 36, 176932519936ULL, 902, 26, 0, 2, 69653},
};

static void
test_golden(const struct golden *rec, int nrec, const char *who)
{
	static const char *const names[] = {"A100-40GB", "H100-80GB", "H200-141GB"};
	int print = getenv("MIG_PLAN_GOLDEN_PRINT") != NULL, n = 0, bad = 0, invalid = 0;

	if (print)
		printf("# %s\n", who);
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
	if (getenv("GPUPACK_VALGRIND")) {
		/* valgrind computes long double in double precision: the bounds, so the paths, move a little */
		ok(invalid == 0, "%d node-sized mixes, %s: valid (%d not)", n, who, invalid);
		ok(1, "# SKIP %s: the plans and work as recorded (valgrind's long double is a double)", who);
		return;
	}
	ok(!print && bad == 0 && invalid == 0 && n == nrec,
	    "%d node-sized mixes, %s: valid, the same plans after the same work as recorded (%d differ, %d not valid)", n,
	    who, bad, invalid);
}

int
main(void)
{
	cond = load_csv() == 0 && nproducts >= 4;
	if (!ok(cond, "data/mig-profiles.csv: %d products", nproducts))
		return done_testing();
	test_pieces();
	test_units_bound();
	test_waste_step();
	test_me_kept();
	test_budget();
	test_cut_off();
	test_agree();
	test_golden(goldens, (int)(sizeof goldens / sizeof goldens[0]), "the whole planner");
	knob_put(KNOB_MIG_LP_FAIL_FROM, 1);
	test_golden(goldens_nolp, (int)(sizeof goldens_nolp / sizeof goldens_nolp[0]), "the LP failing");
	knob_reset();
	knob_put(KNOB_MIG_BAGS_OFF, 1);
	test_golden(goldens_nobags, (int)(sizeof goldens_nobags / sizeof goldens_nobags[0]), "the bags left out");
	knob_reset();
	return done_testing();
}
