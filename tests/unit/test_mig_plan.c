/*
 * test_mig_plan: the MIG planner against rules written here, separately
 * from src/share/mig*.c (tests/unit/mig_fixture.h): an independent
 * validator of plans, and an exhaustive search that gives the optimum of
 * small request mixes to compare with. Profiles come from
 * data/mig-profiles.csv, every product in it.
 */
#include "mig_fixture.h"
#include "share/mig_lp.h"
#include "util/knob.h"

/* ------------------------------------------------------------------ tests */

static int cond;

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
		for (int seed = 1; seed <= (san_pass() ? 10 : 60); seed++) {
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
 * One small mix planned within budget: the plan's bounds against the
 * exhaustive optimum best. 0 they hold, 1 the optimum beats them (said on a
 * diagnostic line), -1 no plan. *cut counts the plans not proven optimal.
 */
static int
bounds_check(int pi, int seed, const struct mig_gpu *g, int ng, const struct mig_request *r, int nr,
    long budget, const struct mig_score *best, int *cut)
{
	struct mig_plan p;
	int beaten;

	if (mig_plan(g, ng, r, nr, budget, &p) < 0)
		return -1;
	*cut += !p.optimal;
	beaten = bound_beaten(&p, best);
	if (beaten)
		printf("# %s seed %d, budget %ld: gap level %d, plan (%d,%llu,%d,%d) bounds (%d,%llu,%d,%d) "
		    "exhaustive (%d,%llu,%d,%d)\n", products[pi].name, seed, budget, p.gap_level, p.score.satisfied,
		    (unsigned long long)p.score.waste, p.score.sms, p.score.ops, p.bound_satisfied,
		    (unsigned long long)p.bound_waste, p.bound_sms, p.bound_ops, best->satisfied,
		    (unsigned long long)best->waste, best->sms, best->ops);
	mig_plan_free(&p);
	return beaten;
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
		for (int seed = 1; seed <= (san_pass() ? 5 : 25); seed++) {
			struct mig_gpu g[2];
			struct mig_request r[4];
			struct mig_score best;
			int ng, nr, rc;

			rng_state = (unsigned long long)seed * 7351 + (unsigned long long)pi * 17;
			ng = small_mix(pi, seed, g, r, &nr);
			best = brute_force(g, ng, r, nr);
			rc = bounds_check(pi, seed, g, ng, r, nr, 50 + seed * 40, &best, &cut);
			cases += rc >= 0;
			wrong += rc > 0;
		}
	is_int(wrong, 0, "%d small mixes cut off early (%d not proven): no plan beats the bounds they report", cases,
	    cut);
}

/*
 * The same, the budget swept (150 to 1500 units, by 45) on each small mix:
 * the search is cut off at every stage, the bags' among them (where a bag
 * search runs out of work at one drop vector, the bound it reports must
 * still allow for the vectors after it, the last one too).
 */
static void
test_bounds_sweep(void)
{
	int wrong = 0, cases = 0, cut = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= (san_pass() ? 10 : 50); seed++) {
			struct mig_gpu g[2];
			struct mig_request r[4];
			struct mig_score best;
			int ng, nr;

			rng_state = (unsigned long long)seed * 7351 + (unsigned long long)pi * 17;
			ng = small_mix(pi, seed, g, r, &nr);
			best = brute_force(g, ng, r, nr);
			for (long budget = 150; budget <= 1500; budget += 45) {
				int rc = bounds_check(pi, seed, g, ng, r, nr, budget, &best, &cut);

				cases += rc >= 0;
				wrong += rc > 0;
			}
		}
	is_int(wrong, 0, "%d plans of small mixes, budgets from 150 to 1500 (%d not proven): no plan beats their bounds",
	    cases, cut);
}

/*
 * The LP solver alone, on an LP that needs more pivots than REFACTOR (40)
 * lets pass before it inverts the basis again from scratch: x_i <= i + 1
 * for 60 columns of costs 1 to 7, and a row bounding their sum that never
 * binds (its slack stays basic: the inverse is not the identity). Each
 * column enters once; after the refactorization the solve goes on to the
 * optimum, its values and duals.
 */
static void
test_lp_refactor(void)
{
	enum { N = 60, M = N + 1 };
	double b[M], col[M], want = 0;
	char sense[M];
	struct mig_lp lp;
	int st, bad = 0;

	for (int i = 0; i < M; i++) {
		b[i] = i < N ? i + 1 : 1e4;
		sense[i] = 'L';
	}
	mig_lp_init(&lp, M, b, sense);
	for (int j = 0; j < N; j++) {
		for (int i = 0; i < M; i++)
			col[i] = i == j || i == N;
		mig_lp_add(&lp, col, 1 + j % 7);
		want += (double)(j + 1) * (1 + j % 7);
	}
	st = mig_lp_solve(&lp);
	for (int j = 0; st == MIG_LP_OPTIMAL && j < N; j++)
		bad += fabs(mig_lp_value(&lp, j) - (j + 1)) > 1e-9 || fabs(lp.y[j] - (1 + j % 7)) > 1e-9;
	ok(st == MIG_LP_OPTIMAL && lp.pivots > 40 && fabs(lp.obj - want) < 1e-6 && bad == 0 && fabs(lp.y[N]) < 1e-9,
	    "the LP solver through a refactorization (%ld pivots): the optimum %.0f, its values and duals (%d wrong)",
	    lp.pivots, lp.obj, bad);
	mig_lp_free(&lp);
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


/* test_mixes_exhaustive's mix for product pi and seed: ng GPUs into g, 5 requests into r, *units their units. */
static int
dom_mix(int pi, int seed, struct mig_gpu *g, struct mig_request *r, int *units)
{
	const struct mig_gpu *g0;
	uint64_t top = 0, low = UINT64_MAX;
	int nu, ng = 2 + seed % 2;

	*units = 0;
	rng_state = (unsigned long long)seed * 65537 + (unsigned long long)pi * 101;
	for (int i = 0; i < ng; i++)
		g[i] = gpu_of(&products[i == 1 && seed % 3 == 0 ? (pi + 1) % nproducts : pi], i);
	g0 = &g[0];
	for (int q = 0; q < g0->nprofiles; q++) {
		top = g0->profiles[q].mem_bytes > top ? g0->profiles[q].mem_bytes : top;
		low = g0->profiles[q].mem_bytes < low ? g0->profiles[q].mem_bytes : low;
	}
	memset(r, 0, 5 * sizeof *r);
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
		*units += r[i].count;
	}
	return ng;
}

/*
 * Small mixes over two or three GPUs (one of another product every third
 * time), half of them asking for more than fits, of classes of every kind
 * (a named profile, memory jobs, small jobs that share an instance, two of
 * them alike where they share, so that the order between classes that
 * stand for each other is used), against the exhaustive optimum: each plan
 * the optimum, and proven by the planner where the GPUs are of one product
 * (the bags take one product; on two, the LP's bounds prove what they can,
 * and a plan they call proven must be the optimum).
 */
#define DOM_SEEDS 40

static int
dom_seeds(void)
{
	return san_pass() ? 5 : DOM_SEEDS;
}

/* The exhaustive optimum of dom_mix(pi, seed), searched once for the tests below. */
static struct mig_score
dom_best(int pi, int seed, const struct mig_gpu *g, int ng, const struct mig_request *r)
{
	static struct mig_score cache[MAX_PRODUCTS][DOM_SEEDS + 1];
	static unsigned char have[MAX_PRODUCTS][DOM_SEEDS + 1];

	if (!have[pi][seed]) {
		cache[pi][seed] = brute_force(g, ng, r, 5);
		have[pi][seed] = 1;
	}
	return cache[pi][seed];
}

static void
test_mixes_exhaustive(void)
{
	int worse = 0, cases = 0, notopt = 0, over = 0, mixed = 0, mixedopt = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= dom_seeds(); seed++) {
			struct mig_gpu g[3];
			struct mig_request r[5];
			struct mig_plan p;
			struct mig_score best;
			int units, ng = dom_mix(pi, seed, g, r, &units), two;

			if (mig_plan(g, ng, r, 5, 0, &p) < 0) {
				printf("# mig_plan: %s\n", err_msg());
				continue;
			}
			best = dom_best(pi, seed, g, ng, r);
			two = strcmp(g[0].name, g[1].name) != 0;
			cases++;
			over += best.satisfied < units;
			mixed += two;
			mixedopt += two && p.optimal;
			notopt += !two && !p.optimal;
			if (!two || p.optimal)
				worse += differs(products[pi].name, seed, "plan", &p.score, &best);
			else
				worse += mig_score_better(&p.score, &best);
			mig_plan_free(&p);
		}
	is_int(worse, 0, "%d small mixes on two or three GPUs (%d over capacity, %d of two products, %d of those "
	    "proven): each plan the exhaustive optimum where proven, none better", cases, over, mixed, mixedopt);
	is_int(notopt, 0, "... and on one product the planner proved each optimal itself");
}

/*
 * The bags alone against the exhaustive optimum: the same small mixes, the
 * LP failing from its first call and the bags blind to the first plans
 * (mig.lp_fail_from, mig.bags_blind), so that the bags prove the most units
 * and find the rest's optimum by themselves: on one product, each plan the
 * optimum, proven, by the bags (their proofs counted). A bag wrongly held
 * not a plan (the packing, the exclusive units' instances, the GPUs'
 * tables), a drop vector or a bag that a bound drops wrongly, or a plan
 * rebuilt wrong leaves a plan that differs or is not proven.
 */
static void
test_bags_exhaustive(void)
{
	int worse = 0, cases = 0, notopt = 0, all = 0, proofs = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= dom_seeds(); seed++) {
			struct mig_gpu g[3];
			struct mig_request r[5];
			struct mig_plan p;
			struct mig_score best;
			int units, ng = dom_mix(pi, seed, g, r, &units), rc;

			if (strcmp(g[0].name, g[ng - 1].name) != 0 || (ng == 3 && strcmp(g[0].name, g[1].name) != 0))
				continue;
			knob_reset();
			knob_put(KNOB_MIG_LP_FAIL_FROM, 1);
			knob_put(KNOB_MIG_BAGS_BLIND, 1);
			rc = mig_plan(g, ng, r, 5, 0, &p);
			proofs += knob(KNOB_MIG_BAG_PROOFS) > 0;
			if (rc == 0 && !knob(KNOB_MIG_BAG_PROOFS))
				printf("# %s seed %d: (%d,%llu,%d,%d) gap %d bounds (%d,%llu,%d,%d) work %ld, not by the bags\n",
				    products[pi].name, seed, p.score.satisfied, (unsigned long long)p.score.waste, p.score.sms,
				    p.score.ops, p.gap_level, p.bound_satisfied, (unsigned long long)p.bound_waste, p.bound_sms,
				    p.bound_ops, p.nodes);
			knob_reset();
			if (rc < 0) {
				printf("# mig_plan: %s\n", err_msg());
				continue;
			}
			best = dom_best(pi, seed, g, ng, r);
			cases++;
			all += best.satisfied == units;
			notopt += !p.optimal;
			worse += differs(products[pi].name, seed, "the bags alone", &p.score, &best);
			mig_plan_free(&p);
		}
	is_int(worse, 0, "%d small mixes of one product (%d placing every unit), the LP failing, the bags blind: each "
	    "plan the exhaustive optimum", cases, all);
	ok(notopt == 0 && proofs == cases, "... proven by the bags themselves (%d of %d)", proofs, cases);
}

/*
 * The order between classes that stand for each other (the drop vectors,
 * mig_bagdrop.c): on one A100-40GB, 4 jobs of 9.5 GiB and 3 of the same
 * memory needing 40 SMs (a 3g.20gb at least). Four jobs at most fit: the
 * four small ones in 1g.10gb instances. Only the vector that leaves out
 * the jobs that need more SMs is tried; the other way round, the bags,
 * blind, would find no plan and prove one.
 */
static void
test_bags_stand_for(void)
{
	struct mig_gpu g[1];
	struct mig_request r[2];
	struct mig_plan p;
	struct mig_score best;
	long proofs;

	g[0] = gpu_of(product_get("A100-40GB"), 0);
	memset(r, 0, sizeof r);
	for (int i = 0; i < 2; i++) {
		r[i].count = 4 - i;
		r[i].mem_bytes = ((uint64_t)19 << 29) - MIG_CONTEXT_RESERVE;
		r[i].share = i ? 0.4 : 0;
		snprintf(r[i].label, sizeof r[i].label, "class%d", i + 1);
	}
	knob_reset();
	knob_put(KNOB_MIG_LP_FAIL_FROM, 1);
	knob_put(KNOB_MIG_BAGS_BLIND, 1);
	cond = mig_plan(g, 1, r, 2, 0, &p) == 0;
	proofs = knob(KNOB_MIG_BAG_PROOFS);
	knob_reset();
	if (!ok(cond, "one A100, 4 + 3 jobs of one memory: planned")) {
		printf("# %s\n", err_msg());
		return;
	}
	best = brute_force(g, 1, r, 2);
	ok(best.satisfied == 4 && proofs == 1 && !mig_score_better(&best, &p.score) && p.optimal,
	    "one A100, 4 + 3 jobs of one memory, 3 needing 40 SMs: the bags' plan, beneath the vector that leaves "
	    "those out, is the exhaustive optimum (%d placed, %d SMs), proven", p.score.satisfied, p.score.sms);
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
	test_lp_refactor();
	test_parsers();
	test_examples();
	test_random_valid();
	check_optimal(0, "", NULL);
	test_bounds_hold();
	test_bounds_sweep();
	test_mixes_exhaustive();
	test_bags_exhaustive();
	test_bags_stand_for();
	test_handmade();
	/* the LP's bounds and the first plans alone, as where the bags give up */
	knob_put(KNOB_MIG_BAGS_OFF, 1);
	test_bounds_hold();
	knob_reset();
	test_plan_file();
	return done_testing();
}
