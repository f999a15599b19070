/*
 * test_mig_plan: the MIG planner against rules written here, separately
 * from src/share/mig*.c (tests/unit/mig_fixture.h): an independent
 * validator of plans, and an exhaustive search that gives the optimum of
 * small request mixes to compare with. Profiles come from
 * data/mig-profiles.csv, every product in it.
 */
#include "mig_fixture.h"

/* ------------------------------------------------------------------ tests */

static int cond;

static int
plan_one(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    struct mig_plan *p)
{
	int rc = mig_plan(gpus, ngpus, reqs, nreqs, 0, p);

	if (rc < 0)
		printf("# mig_plan: %s\n", err_msg());
	return rc;
}

static void
test_geometry_rules(void)
{
	struct product *h = product_get("H100-80GB");
	struct mig_gpu g = h->gpu;
	int p1 = mig_profile_find(&g, "1g.10gb"), p1me = mig_profile_find(&g, "1g.10gb+me");
	int p3 = mig_profile_find(&g, "3g.40gb"), p4 = mig_profile_find(&g, "4g.40gb");
	int prof[8];
	struct mig_placement at[8];
	char why[256] = "";

	ok(p1 >= 0 && p1me >= 0 && p3 >= 0 && p4 >= 0, "H100 profiles found");
	is_int(g.compute_slices, 7, "H100: 7 compute slices");
	is_int(g.mem_slices, 8, "H100: 8 memory slices");
	prof[0] = p4, at[0] = (struct mig_placement){0, 4};
	prof[1] = p3, at[1] = (struct mig_placement){4, 4};
	ok(mig_geometry_valid(&g, prof, at, 2, why, sizeof why), "4g at 0+4 with 3g at 4+4 is valid");
	ok(t_valid(&g, prof, at, 2, why), "... and so says the test's own rule");
	prof[0] = p3, at[0] = (struct mig_placement){0, 4};
	ok(mig_geometry_valid(&g, prof, at, 2, why, sizeof why), "3g at 0+4 with 3g at 4+4 is valid");
	for (int i = 0; i < 7; i++)
		prof[i] = p1, at[i] = (struct mig_placement){(unsigned)i, 1};
	ok(mig_geometry_valid(&g, prof, at, 7, why, sizeof why), "seven 1g at 0..6 are valid");
	prof[0] = p1, at[0] = (struct mig_placement){6, 1};
	prof[1] = p3, at[1] = (struct mig_placement){4, 4};
	cond = !mig_geometry_valid(&g, prof, at, 2, why, sizeof why);
	ok(cond, "1g at 6 overlaps 3g at 4+4: %s", why);
	prof[0] = p1, at[0] = (struct mig_placement){7, 1};
	cond = !mig_geometry_valid(&g, prof, at, 1, why, sizeof why);
	ok(cond, "1g at 7 is not a placement: %s", why);
	prof[0] = p1me, at[0] = (struct mig_placement){0, 1};
	prof[1] = p1me, at[1] = (struct mig_placement){1, 1};
	cond = !mig_geometry_valid(&g, prof, at, 2, why, sizeof why);
	ok(cond, "two 1g+me: %s", why);
	/* compute slices are counted apart from memory slices: a made-up profile shows it */
	g.nprofiles = 1;
	g.profiles[0] = h->gpu.profiles[p1];
	g.profiles[0].slices = 2;
	g.compute_slices = 7;
	for (int i = 0; i < 4; i++)
		prof[i] = 0, at[i] = (struct mig_placement){(unsigned)i, 1};
	cond = !mig_geometry_valid(&g, prof, at, 4, why, sizeof why);
	ok(cond, "8 compute slices of 7: %s", why);
	ok(mig_geometry_valid(&g, prof, at, 3, why, sizeof why), "6 compute slices of 7 are fine");
}

static void
test_parsers(void)
{
	struct mig_request r, *v = NULL;
	int n;

	ok(mig_parse_spec("3x1g.10gb", &r) == 0 && r.count == 3 && strcmp(r.profile, "1g.10gb") == 0,
	    "3x1g.10gb: three of a profile");
	ok(mig_parse_spec("4x20G", &r) == 0 && r.count == 4 && r.mem_bytes == (20ULL << 30) && !r.profile[0],
	    "4x20G: four of 20 GiB");
	cond = mig_parse_spec("0x1g.10gb", &r) < 0 && err_code() == EXIT_USAGE;
	ok(cond, "0x...: %s", err_msg());
	cond = mig_parse_spec("4x-1G", &r) < 0 && err_code() == EXIT_USAGE;
	ok(cond, "4x-1G: %s", err_msg());
	cond = mig_parse_spec("4x0G", &r) < 0;
	ok(cond, "4x0G refused: %s", err_msg());
	ok(mig_parse_spec("x20G", &r) < 0, "no count refused");
	ok(mig_parse_spec("20G", &r) < 0, "no x refused");
	cond = mig_parse_spec("99999x1g.10gb", &r) < 0;
	ok(cond, "huge count refused: %s", err_msg());
	ok(mig_parse_requests("req", "# jobs\n4 8G 0.1\n\n2 1g.10gb # named\n1 30G\n", &v, &n) == 0 && n == 3,
	    "request file with comments");
	ok(n == 3 && v[0].count == 4 && v[0].mem_bytes == (8ULL << 30) && fabs(v[0].share - 0.1) < 1e-12 &&
	    strcmp(v[1].profile, "1g.10gb") == 0 && v[2].share == 0, "request file fields");
	is_str(n == 3 ? v[2].label : "", "req:5", "label is file:line");
	free(v);
	cond = mig_parse_requests("req", "1 8G\n2 8G 1.5\n", &v, &n) < 0 && strncmp(err_msg(), "req:2: ", 7) == 0;
	ok(cond,
	    "share above 1: %s", err_msg());
	free(v);
	cond = mig_parse_requests("req", "1 8G\nfoo\n", &v, &n) < 0 && strncmp(err_msg(), "req:2: ", 7) == 0;
	ok(cond,
	    "one field: %s", err_msg());
	free(v);
	cond = mig_parse_requests("req", "1 8G 0.5 x\n", &v, &n) < 0;
	ok(cond, "four fields: %s", err_msg());
	free(v);
	cond = mig_parse_requests("req", "1 1g.10gb 0.5\n", &v, &n) < 0;
	ok(cond, "share with a profile: %s", err_msg());
	free(v);
	cond = mig_parse_requests("req", "4000 8G\n4000 8G\n", &v, &n) < 0;
	ok(cond, "too many units: %s", err_msg());
	free(v);
	ok(mig_parse_requests("req", "", &v, &n) == 0 && n == 0, "empty file: no requests");
	free(v);
}

static void
test_examples(void)
{
	struct product *h200 = product_get("H200-141GB"), *h100 = product_get("H100-80GB");
	struct mig_gpu g[2];
	struct mig_request r[3];
	struct mig_plan p;
	char why[256] = "";

	g[0] = gpu_of(h200, 0);
	mig_parse_spec("2x3g.71gb", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 2 && p.score.waste == 0, "H200 2x3g.71gb: both");
	cond = validate(g, 1, r, 1, &p, why);
	ok(cond, "... valid: %s", why);
	ok(p.gpus[0].ninst == 2 && p.gpus[0].inst[0].at.start == 0 && p.gpus[0].inst[1].at.start == 4,
	    "... at 0+4 and 4+4");
	ok(p.optimal, "... proven optimal");
	mig_plan_free(&p);

	g[0] = gpu_of(h100, 0);
	/* a real H100's 1g.20gb holds 20096 MiB (measured), not the 20 GiB of its name */
	mig_parse_spec("4x19G", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 4 &&
	    p.score.waste == 4 * (20096ULL - 19456ULL - 528ULL) * 1048576ULL,
	    "H100 4x19G: all four, 112 MiB left in each beside the job and its 528 MiB context");
	ok(p.gpus[0].ninst == 4 && strcmp(g[0].profiles[p.gpus[0].inst[0].profile].name, "1g.20gb") == 0,
	    "... as 1g.20gb (the fewest SMs for 19 GiB)");
	mig_plan_free(&p);

	mig_parse_spec("4x20G", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 2 && p.gpus[0].ninst == 2 &&
	    strcmp(g[0].profiles[p.gpus[0].inst[0].profile].name, "3g.40gb") == 0,
	    "H100 4x20G: two, in 3g.40gb; a 1g.20gb is 384 MiB short of 20 GiB");
	mig_plan_free(&p);

	g[0] = gpu_of(h200, 0);
	mig_parse_spec("4x7G", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 4, "H200 4x7G: all four");
	cond = validate(g, 1, r, 1, &p, why);
	ok(cond, "... valid: %s", why);
	ok(p.gpus[0].ninst == 2 && p.gpus[0].inst[0].shared && p.units[0].thread_pct == 50 &&
	    p.units[0].mem_limit == (7ULL << 30) + MIG_CONTEXT_RESERVE,
	    "... two to a 1g.18gb through MPS, 50%% and 7 GiB + the context each");
	mig_plan_free(&p);

	mig_parse_spec("9x1g.18gb", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 7, "H200 9x1g.18gb: seven fit");
	cond = p.units[8].gpu == -1 && strstr(p.units[8].why, "no room");
	ok(cond, "... the rest unsatisfied: %s",
	    p.units[8].why);
	mig_plan_free(&p);

	mig_parse_spec("1x200G", &r[0]);
	cond = plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 0 && strstr(p.units[0].why, "more memory");
	ok(cond,
	    "1x200G: unsatisfied, too big: %s", p.units[0].why);
	mig_plan_free(&p);

	mig_parse_spec("3x9g.10gb", &r[0]);
	cond = mig_plan(g, 1, r, 1, 0, &p) < 0 && err_code() == EXIT_USAGE;
	ok(cond, "unknown profile: %s", err_msg());
	mig_parse_spec("1x8G", &r[0]);
	cond = mig_plan(g, 0, r, 1, 0, &p) < 0 && err_code() == EXIT_USAGE;
	ok(cond, "no GPU: %s", err_msg());

	/* a busy 3g stays; only one more 3g fits */
	g[0] = gpu_of(h200, 0);
	g[0].nexisting = 1;
	g[0].existing[0] = (struct mig_existing){.gi_id = 5, .profile = mig_profile_find(&g[0], "3g.71gb"),
	    .at = {0, 4}, .busy = 1, .npids = 1, .pids = {4242}};
	mig_parse_spec("2x3g.71gb", &r[0]);
	cond = plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 1 && validate(g, 1, r, 1, &p, why);
	ok(cond,
	    "busy 3g kept, one more 3g: %s", why);
	mig_plan_free(&p);

	/* an idle 3g at 4+4 is reused */
	g[0].existing[0].busy = 0;
	g[0].existing[0].at = (struct mig_placement){4, 4};
	mig_parse_spec("1x3g.71gb", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 1 && p.score.ops == 0, "idle 3g reused: no ops");
	cond = validate(g, 1, r, 1, &p, why);
	ok(cond, "... valid: %s", why);
	mig_plan_free(&p);

	/* an idle 7g is in the way of two 3g: destroyed */
	g[0].existing[0].profile = mig_profile_find(&g[0], "7g.141gb");
	g[0].existing[0].at = (struct mig_placement){0, 8};
	mig_parse_spec("2x3g.71gb", &r[0]);
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 2 && p.score.ops == 3,
	    "idle 7g replaced by two 3g: 3 ops");
	cond = validate(g, 1, r, 1, &p, why);
	ok(cond, "... valid: %s", why);
	mig_plan_free(&p);

	/* two GPUs: the plan spreads */
	g[0] = gpu_of(h200, 0);
	g[1] = gpu_of(h200, 1);
	mig_parse_spec("2x7g.141gb", &r[0]);
	cond = plan_one(g, 2, r, 1, &p) == 0 && p.score.satisfied == 2 && validate(g, 2, r, 1, &p, why);
	ok(cond,
	    "2x7g on two H200: one each: %s", why);
	mig_plan_free(&p);

	/* a compute share needs SMs */
	mig_parse_spec("1x10G", &r[0]);
	r[0].share = 0.5; /* 66 SMs of 132: a 4g (64) is too small */
	ok(plan_one(g, 1, r, 1, &p) == 0 && p.score.satisfied == 1 &&
	    g[0].profiles[p.gpus[0].inst[0].profile].sms >= 66, "share 0.5 gets >= 66 SMs");
	mig_plan_free(&p);
}

static void
test_random_valid(void)
{
	char why[256] = "";
	int bad = 0, plans = 0, limited = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= 60; seed++) {
			struct mig_gpu g[4];
			struct mig_request r[8];
			struct mig_plan p;
			int ng = 1 + (int)rnd(3), nr = 1 + (int)rnd(6);

			rng_state = (unsigned long long)seed * 7919 + (unsigned long long)pi;
			for (int i = 0; i < ng; i++) {
				g[i] = gpu_of(&products[pi], i);
				if (rnd(2))
					random_existing(&g[i]);
			}
			for (int i = 0; i < nr; i++)
				random_request(&g[0], &r[i], 4);
			if (plan_one(g, ng, r, nr, &p) < 0) {
				bad++;
				continue;
			}
			plans++;
			limited += !p.optimal;
			if (!validate(g, ng, r, nr, &p, why)) {
				bad++;
				printf("# %s seed %d: %s\n", products[pi].name, seed, why);
			}
			mig_plan_free(&p);
		}
	is_int(bad, 0, "random mixes on every product: %d plans, all valid (%d hit the node limit)", plans,
	    limited);
}

/*
 * The bounds a plan reports hold whatever the budget: on small mixes cut
 * off after a few hundred units of work, no plan (the exhaustive optimum)
 * beats what the bound says at the first level not proven.
 */
static void
test_bounds_hold(void)
{
	int wrong = 0, cases = 0, cut = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= 25; seed++) {
			struct mig_gpu g[2];
			struct mig_request r[4];
			struct mig_plan p;
			struct mig_score best;
			int ng, nr;

			rng_state = (unsigned long long)seed * 7351 + (unsigned long long)pi * 17;
			ng = small_mix(pi, seed, g, r, &nr);
			if (mig_plan(g, ng, r, nr, 50 + seed * 40, &p) < 0)
				continue;
			best = brute_force(g, ng, r, nr);
			cases++;
			cut += !p.optimal;
			if (bound_beaten(&p, &best)) {
				wrong++;
				printf("# %s seed %d: gap level %d, plan (%d,%llu,%d,%d) bounds (%d,%llu,%d,%d) exhaustive "
				    "(%d,%llu,%d,%d)\n", products[pi].name, seed, p.gap_level, p.score.satisfied,
				    (unsigned long long)p.score.waste, p.score.sms, p.score.ops, p.bound_satisfied,
				    (unsigned long long)p.bound_waste, p.bound_sms, p.bound_ops, best.satisfied,
				    (unsigned long long)best.waste, best.sms, best.ops);
			}
			mig_plan_free(&p);
		}
	is_int(wrong, 0, "%d small mixes cut off early (%d not proven): no plan beats the bounds they report", cases,
	    cut);
}

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
 * Hand-made GPUs: a GPU whose one profile is the whole GPU, and one whose
 * smallest profile is listed first and alone at its size (the products'
 * tables hide mistakes there: their first profile has a "+me" twin of the
 * same memory, and the whole-GPU profile shares its end with others).
 */
static void
test_handmade(void)
{
	struct mig_gpu g;
	struct mig_request r[1];
	struct mig_plan p;

	memset(&g, 0, sizeof g);
	str_copy(g.uuid, "GPU-handmade-0", sizeof g.uuid);
	g.nprofiles = 1;
	g.profiles[0] = (struct mig_profile){.index = 0, .id = 0, .slices = 7, .mem_bytes = (uint64_t)40 << 30, .sms = 98,
	    .max_count = 1, .nplacements = 1, .placements = {{0, 8}}};
	str_copy(g.profiles[0].name, "7g.40gb", sizeof g.profiles[0].name);
	mig_gpu_derive(&g);
	ok(g.compute_slices == 7 && g.mem_slices == 8 && g.full_sms == 98,
	    "its shape from its one placement: %d compute slices, %d memory slices, %d SMs", g.compute_slices, g.mem_slices,
	    g.full_sms);
	mig_parse_spec("1x7g.40gb", &r[0]);
	if (plan_one(&g, 1, r, 1, &p) < 0)
		return;
	ok(p.score.satisfied == 1 && p.optimal, "a GPU with one profile, the whole GPU: 1x7g.40gb placed (%d)",
	    p.score.satisfied);
	mig_plan_free(&p);

	/* 1g.5gb (first, the only 5 GiB profile) and 7g.40gb: a 6 GiB job is no small job, it shares nothing */
	g.nprofiles = 2;
	g.profiles[1] = g.profiles[0];
	g.profiles[1].index = 1;
	g.profiles[0] = (struct mig_profile){.index = 0, .id = 19, .slices = 1, .mem_bytes = (uint64_t)5 << 30, .sms = 14,
	    .max_count = 7, .nplacements = 7, .placements = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}};
	str_copy(g.profiles[0].name, "1g.5gb", sizeof g.profiles[0].name);
	mig_gpu_derive(&g);
	mig_parse_spec("2x6G", &r[0]);
	if (plan_one(&g, 1, r, 1, &p) < 0)
		return;
	ok(p.score.satisfied == 1 && p.optimal,
	    "2x6G where the smallest profile holds 5 GiB: one placed alone in the 7g, none shared (%d)",
	    p.score.satisfied);
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
 *   MIG_PLAN_GOLDEN_PRINT=1 build/tests/unit/test_mig_plan
 * and says in its commit why the numbers moved.
 */
struct golden {
	const char *product;
	int seed, satisfied;
	unsigned long long waste;
	int sms, ops, optimal, gap_level;
	long nodes;
};

/* With the DP (mig_dp.c), then the branch and price alone (mig_dp_disabled). */
static const struct golden goldens[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 1, 0, 57660},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 42104},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 113906},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 52591},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 1, 0, 64141},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 48822},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 45679},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 47625},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 108373},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 272612},
	{"H200-141GB", 1, 27, 107994939392ULL, 314, 13, 0, 2, 800290},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 85245},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 60537},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 1, 0, 97649},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 412784},
};

static const struct golden goldens_bp[] = {
	{"A100-40GB", 1, 24, 56623104000ULL, 700, 13, 0, 3, 417657},
	{"A100-40GB", 2, 22, 66303557632ULL, 588, 22, 1, 0, 68651},
	{"A100-40GB", 3, 28, 85966454784ULL, 742, 15, 1, 0, 118230},
	{"A100-40GB", 4, 19, 2483027968ULL, 560, 10, 1, 0, 93735},
	{"A100-40GB", 5, 25, 113934073856ULL, 616, 21, 0, 2, 367021},
	{"H100-80GB", 1, 19, 169466658816ULL, 918, 20, 1, 0, 85391},
	{"H100-80GB", 2, 17, 182368337920ULL, 908, 17, 1, 0, 78310},
	{"H100-80GB", 3, 25, 5016387584ULL, 528, 20, 1, 0, 83925},
	{"H100-80GB", 4, 23, 31289507840ULL, 870, 24, 1, 0, 147167},
	{"H100-80GB", 5, 27, 180036304896ULL, 880, 12, 1, 0, 135002},
	{"H200-141GB", 1, 27, 107994939392ULL, 314, 13, 0, 2, 423889},
	{"H200-141GB", 2, 21, 347070267392ULL, 912, 20, 1, 0, 122534},
	{"H200-141GB", 3, 15, 41741713408ULL, 516, 11, 1, 0, 66257},
	{"H200-141GB", 4, 28, 57998835712ULL, 980, 22, 0, 2, 431299},
	{"H200-141GB", 5, 36, 116551319552ULL, 926, 19, 1, 0, 175618},
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

			if (bench_node(names[pi], g) < 0)
				return;
			rng_state = (unsigned long long)seed * 104729 + (unsigned long long)pi * 31;
			nr = 3 + (int)rnd(6);
			for (int i = 0; i < nr; i++)
				random_request(&g[0], &r[i], 12);
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

			if (bench_node(names[pi], g) < 0)
				return;
			rng_state = (unsigned long long)seed * 7877 + (unsigned long long)pi * 13;
			nr = 5 + (int)rnd(5);
			for (int i = 0; i < nr; i++)
				random_request(&g[0], &r[i], 10);
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
 * Dominance between the DP's states (mig_dpdom.c) against the exhaustive
 * optimum, where it has states to drop: small mixes over two or three
 * GPUs (one of another product every third time), half of them asking for
 * more than fits, of classes of every kind (a named profile, memory jobs,
 * small jobs that share an instance, two of them alike where they share).
 * The DP's bounds are off (mig_dp_no_prune), so that its layers hold every
 * state and dominance alone thins them: a wrong rule drops the states of
 * the only optimal plans, and the DP's own best is then worse.
 */
#ifndef DOM_SEEDS
#define DOM_SEEDS 40
#endif

static void
test_dom_exhaustive(void)
{
	int worse = 0, cases = 0, notopt = 0, over = 0, mixed = 0, dpcases = 0, dpworse = 0;
	long dropped = mig_dp_dom_dropped;

	mig_dp_no_prune = 1;
	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= DOM_SEEDS; seed++) {
			struct mig_gpu g[3];
			struct mig_request r[5];
			struct mig_plan p;
			struct mig_score best;
			const struct mig_gpu *g0;
			uint64_t top = 0, low = UINT64_MAX;
			int units = 0, nu, ng = 2 + seed % 2;

			rng_state = (unsigned long long)seed * 65537 + (unsigned long long)pi * 101;
			for (int i = 0; i < ng; i++)
				g[i] = gpu_of(&products[i == 1 && seed % 3 == 0 ? (pi + 1) % nproducts : pi], i);
			g0 = &g[0];
			for (int q = 0; q < g0->nprofiles; q++) {
				top = g0->profiles[q].mem_bytes > top ? g0->profiles[q].mem_bytes : top;
				low = g0->profiles[q].mem_bytes < low ? g0->profiles[q].mem_bytes : low;
			}
			memset(r, 0, sizeof r);
			/* a named profile, not +me */
			do
				nu = (int)rnd((unsigned)g0->nprofiles);
			while (strstr(g0->profiles[nu].name, "+me"));
			str_copy(r[0].profile, g0->profiles[nu].name, sizeof r[0].profile);
			r[0].count = 1 + (int)rnd(2);
			/* a large memory job, and a smaller one that stands in for it */
			r[1].mem_bytes = top / 2 + (uint64_t)rnd(4) * (top / 8) - MIG_CONTEXT_RESERVE;
			r[1].count = 1 + (int)rnd(2);
			r[2].mem_bytes = low + (uint64_t)rnd(3) * low - MIG_CONTEXT_RESERVE - ((uint64_t)1 << 29);
			r[2].share = rnd(2) ? 0.1 * (1 + rnd(3)) : 0;
			r[2].count = 1;
			/* small jobs that share an instance; two classes alike where they share (the same SMs) */
			r[3].mem_bytes = ((uint64_t)1 + rnd(3)) << 30;
			r[3].share = rnd(2) ? 0.05 * (1 + rnd(4)) : 0;
			r[3].count = 1 + (int)rnd(2);
			r[4] = r[3];
			r[4].mem_bytes -= rnd(2) ? (uint64_t)rnd(3) << 28 : 0;
			r[4].share = r[3].share > 0 ? r[3].share + 0.001 : 0.001;
			r[4].count = ng == 3 ? 1 : 1 + (int)rnd(2);
			for (int i = 0; i < 5; i++) {
				snprintf(r[i].label, sizeof r[i].label, "class%d", i + 1);
				units += r[i].count;
			}
			if (mig_plan(g, ng, r, 5, 0, &p) < 0) {
				printf("# mig_plan: %s\n", err_msg());
				continue;
			}
			best = brute_force(g, ng, r, 5);
			cases++;
			if (mig_dp_found.satisfied >= 0) {
				/* every state kept but those dominance drops: the DP's own best is the optimum */
				dpcases++;
				if (mig_score_better(&best, &mig_dp_found) || mig_score_better(&mig_dp_found, &best)) {
					dpworse++;
					printf("# %s seed %d: the DP's best (%d,%llu,%d,%d) exhaustive (%d,%llu,%d,%d)\n",
					    products[pi].name, seed, mig_dp_found.satisfied,
					    (unsigned long long)mig_dp_found.waste, mig_dp_found.sms, mig_dp_found.ops,
					    best.satisfied, (unsigned long long)best.waste, best.sms, best.ops);
				}
			}
			over += best.satisfied < units;
			mixed += strcmp(g[0].name, g[1].name) != 0;
			notopt += !p.optimal;
			if (mig_score_better(&best, &p.score) || mig_score_better(&p.score, &best)) {
				worse++;
				printf("# %s seed %d: plan (%d,%llu,%d,%d) exhaustive (%d,%llu,%d,%d)\n", products[pi].name,
				    seed, p.score.satisfied, (unsigned long long)p.score.waste, p.score.sms, p.score.ops,
				    best.satisfied, (unsigned long long)best.waste, best.sms, best.ops);
			}
			mig_plan_free(&p);
		}
	mig_dp_no_prune = 0;
	is_int(worse, 0, "%d small mixes on two or three GPUs (%d over capacity, %d of two products): the plan's "
	    "score equals the exhaustive optimum", cases, over, mixed);
	is_int(notopt, 0, "... and the planner proved each optimal itself");
	ok(dpworse == 0 && dpcases >= cases * 9 / 10, "... and so is the DP's own best, bounds off (%d of %d DP runs)",
	    dpcases - dpworse, dpcases);
	ok(over >= cases / 3 && mig_dp_dom_dropped - dropped > 0, "... with %ld states dropped by dominance",
	    mig_dp_dom_dropped - dropped);
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

static void
test_plan_file(void)
{
	struct product *h200 = product_get("H200-141GB");
	struct mig_gpu g[1];
	struct mig_request r[2];
	struct mig_plan p;
	struct mig_op *ops = NULL, *back = NULL;
	int n = 0, nb = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	g[0] = gpu_of(h200, 0);
	g[0].nexisting = 1;
	g[0].existing[0] = (struct mig_existing){.gi_id = 9, .profile = mig_profile_find(&g[0], "7g.141gb"),
	    .at = {0, 8}};
	mig_parse_spec("1x3g.71gb", &r[0]);
	mig_parse_spec("2x1g.18gb", &r[1]);
	plan_one(g, 1, r, 2, &p);
	mig_plan_ops(g, &p, &ops, &n);
	ok(n == 4 && !ops[0].create && ops[0].gi_id == 9 && ops[1].create, "ops: destroy the 7g, then 3 creates");
	f = open_memstream(&text, &len);
	mig_ops_write(ops, n, f);
	fclose(f);
	ok(mig_ops_parse("plan", text, &back, &nb) == 0 && nb == n && memcmp(back, ops, sizeof *ops * (size_t)n) == 0,
	    "plan file reads back the same operations");
	cond = mig_ops_check(g, 1, back, nb) == 0;
	ok(cond, "... and checks against the GPU: %s", err_msg());
	free(back);
	free(text);
	g[0].existing[0].busy = 1;
	cond = mig_ops_check(g, 1, ops, n) < 0 && strstr(err_msg(), "processes");
	ok(cond, "busy instance: %s", err_msg());
	g[0].existing[0].busy = 0;
	g[0].existing[0].gi_id = 10;
	cond = mig_ops_check(g, 1, ops, n) < 0 && strstr(err_msg(), "stale");
	ok(cond, "stale plan: %s", err_msg());
	free(ops);
	mig_plan_free(&p);

	cond = mig_ops_parse("f", "gpu X\n", &back, &nb) < 0;
	ok(cond, "no header: %s", err_msg());
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ncreate 1g.18gb 0+1\n", &back, &nb) < 0 &&
	    strncmp(err_msg(), "f:2: ", 5) == 0;
	ok(cond, "op before gpu: %s", err_msg());
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ngpu G\ncreate 1g.18gb 0+x\n", &back, &nb) < 0;
	ok(cond,
	    "bad placement: %s", err_msg());
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ngpu G\nfrob 1\n", &back, &nb) < 0;
	ok(cond, "unknown op: %s", err_msg());
	/* on an empty GPU, so that nothing but the overlap of the two creates can refuse them */
	g[0] = gpu_of(h200, 0);
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ngpu GPU-H200-141GB-0\ncreate 1g.18gb 0+1\ncreate 1g.18gb 1+1\n",
	    &back, &nb) == 0 && mig_ops_check(g, 1, back, nb) == 0;
	ok(cond, "two creates side by side accepted on an empty GPU");
	free(back);
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ngpu GPU-H200-141GB-0\ncreate 1g.18gb 0+1\ncreate 1g.18gb 0+1\n",
	    &back, &nb) == 0 && mig_ops_check(g, 1, back, nb) < 0 && strstr(err_msg(), "overlaps");
	ok(cond, "overlapping creates refused: %s", err_msg());
	free(back);
	g[0].nexisting = 1;
	g[0].existing[0] = (struct mig_existing){.gi_id = 3, .profile = mig_profile_find(&g[0], "1g.18gb"),
	    .at = {2, 1}};
	cond = mig_ops_parse("f", "gpupack-mig-plan 1\ngpu GPU-H200-141GB-0\ncreate 1g.18gb 2+1\n",
	    &back, &nb) == 0 && mig_ops_check(g, 1, back, nb) < 0 && strstr(err_msg(), "overlaps");
	ok(cond, "a create over an instance that stays refused: %s", err_msg());
	free(back);
}

int
main(void)
{
	cond = load_csv() == 0 && nproducts >= 4;
	if (!ok(cond, "data/mig-profiles.csv: %d products", nproducts))
		return done_testing();
	for (int i = 0; i < nproducts; i++)
		ok(products[i].gpu.compute_slices == t_compute_slices(&products[i].gpu) &&
		    products[i].gpu.nprofiles >= 4, "%s: %d profiles, %d compute slices", products[i].name,
		    products[i].gpu.nprofiles, products[i].gpu.compute_slices);
	test_geometry_rules();
	test_parsers();
	test_examples();
	test_random_valid();
	check_optimal(0, "", NULL);
	test_bounds_hold();
	test_lattice();
	test_dp();
	test_level1_late();
	test_lp_capped();
	test_dp_pieces();
	test_me_kept();
	test_dp_rebuilt();
	test_local_valid();
	test_dom_proves();
	test_dom_exhaustive();
	test_handmade();
	test_golden(goldens, (int)(sizeof goldens / sizeof goldens[0]), "");
	/* the branch and price alone, as where the DP gives up */
	mig_dp_disabled = 1;
	if (getenv("MIG_PLAN_GOLDEN_PRINT"))
		printf("# branch and price alone\n");
	test_golden(goldens_bp, (int)(sizeof goldens_bp / sizeof goldens_bp[0]), ", the branch and price alone");
	check_optimal(0, ", the branch and price alone", NULL);
	mig_dp_disabled = 0;
	test_plan_file();
	return done_testing();
}
