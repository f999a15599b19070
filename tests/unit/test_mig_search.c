/*
 * test_mig_search: the MIG planner's search without its LP. Where the
 * simplex cannot finish, the bound is the objective alone and there is no
 * dive: the bags (mig_bag*.c) must still prove the most units and the rest
 * of the objective, from the first plans alone; and a simplex failing
 * midway (in the dive, at a level's bound) must leave plans valid and
 * bounds true. mig.lp_fail_from (a knob, tests only) makes the simplex
 * fail from a given call on. The rules and the exhaustive optimum are
 * tests/unit/mig_fixture.h's.
 *
 * Where no reference can say what the plan should be (the search's work,
 * plans cut off early), the results are pinned per product, as
 * test_mig_node pins the planner's path: a change to the search or to the
 * plans made without an LP shows, and one made on purpose regenerates them:
 *   MIG_PLAN_GOLDEN_PRINT=1 build/tests/unit/test_mig_search
 * saying in its commit why they moved.
 */
#include "mig_fixture.h"
#include "util/knob.h"

static int
plan_at(const struct mig_gpu *g, int ng, const struct mig_request *r, int nr, long budget, long fail_from,
    struct mig_plan *p)
{
	int rc;

	knob_put(KNOB_MIG_LP_FAIL_FROM, fail_from);
	rc = mig_plan(g, ng, r, nr, budget, p);
	knob_put(KNOB_MIG_LP_FAIL_FROM, 0);
	if (rc < 0)
		printf("# mig_plan: %s\n", err_msg());
	return rc;
}

/* What is pinned per product (see the top of the file). */
struct pin {
	const char *product;
	long alone_work;      /* test_search_alone: the planner's work on the product's small mixes */
	long twin_work;       /* test_twins: on three twin GPUs */
	long cut_satisfied;   /* test_lp_failing_midway: the plans' units satisfied, ... */
	long cut_waste_mib;   /* ... waste in MiB, */
	long cut_ops;         /* ... operations, */
	int cut_proven;       /* ... how many proven */
};

static const struct pin pins[] = {
	{"H200-141GB", 10816, 42475, 670, 11174176, 572, 221},
	{"H100-80GB", 12393, 46969, 710, 4476736, 592, 223},
	{"A100-40GB", 9660, 55371, 750, 1868832, 614, 216},
	{"A30-24GB", 7359, 25171, 730, 1055360, 414, 244},
	{"A100-80GB", 11685, 40693, 780, 4076960, 615, 218},
};

static struct pin got[16];

static int
print_pins(void)
{
	return getenv("MIG_PLAN_GOLDEN_PRINT") != NULL;
}

/*
 * Every LP failing from the first: the objective alone bounds, there is no
 * dive, and the bags find and prove the exhaustive optimum from the first
 * plans: the most units by looking for a plan of one unit more until none
 * exists, then the rest. Half the mixes have two identical GPUs.
 */
static void
test_search_alone(void)
{
	long work[16] = {0};

	knob_put(KNOB_MIG_LP_FAIL_FROM, 1);
	check_optimal(0, ", every LP failing: the bags alone", work);
	knob_put(KNOB_MIG_LP_FAIL_FROM, 0);
	for (int pi = 0; pi < nproducts; pi++)
		got[pi].alone_work = work[pi];
}

/*
 * Three twin GPUs, too many plans for the exhaustive search: the bags alone
 * (every LP failing, a budget that cuts some off) against the whole
 * planner. Its plan is valid, never better than one the planner proved
 * optimal, and equal to it where both are proven.
 */
static void
test_twins(void)
{
	char why[256] = "";
	int bad = 0, cases = 0, both = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= (san_pass() ? 3 : 10); seed++) {
			struct mig_gpu g[3];
			struct mig_request r[6];
			struct mig_plan p, q;
			int nr = 3 + seed % 3;

			rng_state = (unsigned long long)seed * 15485863 + (unsigned long long)pi * 7;
			for (int i = 0; i < 3; i++)
				g[i] = gpu_of(&products[pi], i);
			for (int i = 0; i < nr; i++)
				random_request(&g[0], &r[i], 4);
			if (plan_at(g, 3, r, nr, 0, 0, &q) < 0) {
				bad++;
				continue;
			}
			if (plan_at(g, 3, r, nr, 200000, 1, &p) < 0) {
				bad++;
				mig_plan_free(&q);
				continue;
			}
			cases++;
			got[pi].twin_work += p.nodes;
			if (!validate(g, 3, r, nr, &p, why) || (q.optimal && mig_score_better(&p.score, &q.score)) ||
			    (q.optimal && p.optimal && mig_score_better(&q.score, &p.score))) {
				bad++;
				printf("# %s seed %d: alone %s(%d,%llu,%d,%d) %s, the planner %s(%d,%llu,%d,%d)\n",
				    products[pi].name, seed, p.optimal ? "proven " : "", p.score.satisfied,
				    (unsigned long long)p.score.waste, p.score.sms, p.score.ops, why, q.optimal ? "proven " : "",
				    q.score.satisfied, (unsigned long long)q.score.waste, q.score.sms, q.score.ops);
			}
			both += p.optimal && q.optimal;
			mig_plan_free(&p);
			mig_plan_free(&q);
		}
	is_int(bad, 0, "%d mixes on three twin GPUs, every LP failing: valid plans, none better than the planner's "
	    "proven one, equal where both are proven (%d)", cases, both);
}

/*
 * The simplex failing from its n-th call on, for n from 2 to 40, every
 * other n with a budget of 250 to 490 units that cuts plans off: the dive
 * stops partway (the GPUs it leaves get the empty load), a level's bound
 * loses its LP. Each plan is valid and its score is what it says; none is
 * beaten where it says proven, nor below a bound it reports.
 */
static void
test_lp_failing_midway(void)
{
	static const long from[] = {2, 3, 4, 5, 7, 10, 14, 20, 28, 40};
	char why[256] = "";
	int invalid = 0, wrong = 0, cases = 0, cut = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= (san_pass() ? 5 : 25); seed++)
			for (size_t f = 0; f < sizeof from / sizeof from[0]; f++) {
				struct mig_gpu g[2];
				struct mig_request r[4];
				struct mig_plan p;
				struct mig_score best;
				int ng, nr;

				rng_state = (unsigned long long)seed * 7351 + (unsigned long long)pi * 17;
				ng = small_mix(pi, seed, g, r, &nr);
				if (plan_at(g, ng, r, nr, f % 2 ? 0 : 250 + 30 * (long)f, from[f], &p) < 0)
					continue;
				best = brute_force(g, ng, r, nr);
				cases++;
				cut += !p.optimal;
				got[pi].cut_satisfied += p.score.satisfied;
				got[pi].cut_waste_mib += (long)(p.score.waste >> 20);
				got[pi].cut_ops += p.score.ops;
				got[pi].cut_proven += p.optimal;
				if (!validate(g, ng, r, nr, &p, why)) {
					invalid++;
					printf("# %s seed %d, LP failing from call %ld: %s\n", products[pi].name, seed, from[f],
					    why);
				} else if (bound_beaten(&p, &best)) {
					wrong++;
					printf("# %s seed %d, LP failing from call %ld: gap level %d, plan (%d,%llu,%d,%d) "
					    "exhaustive (%d,%llu,%d,%d)\n", products[pi].name, seed, from[f], p.gap_level,
					    p.score.satisfied, (unsigned long long)p.score.waste, p.score.sms, p.score.ops,
					    best.satisfied, (unsigned long long)best.waste, best.sms, best.ops);
				}
				mig_plan_free(&p);
			}
	is_int(invalid, 0, "%d plans with the LP failing midway: all valid", cases);
	is_int(wrong, 0, "... none beaten by the exhaustive optimum where it says proven, nor below a bound it "
	    "reports (%d not proven)", cut);
}

static void
test_pins(void)
{
	int n = (int)(sizeof pins / sizeof pins[0]), bad = 0;

	for (int pi = 0; pi < nproducts; pi++) {
		const struct pin *w = pi < n ? &pins[pi] : NULL, *g = &got[pi];

		if (print_pins()) {
			printf("\t{\"%s\", %ld, %ld, %ld, %ld, %ld, %d},\n", products[pi].name, g->alone_work, g->twin_work,
			    g->cut_satisfied, g->cut_waste_mib, g->cut_ops, g->cut_proven);
			continue;
		}
		if (!w || strcmp(w->product, products[pi].name) != 0 || w->alone_work != g->alone_work ||
		    w->twin_work != g->twin_work || w->cut_satisfied != g->cut_satisfied ||
		    w->cut_waste_mib != g->cut_waste_mib || w->cut_ops != g->cut_ops || w->cut_proven != g->cut_proven) {
			bad++;
			printf("# %s: search work %ld, on twins %ld; cut off: %ld units, %ld MiB wasted, %ld ops, %d proven: "
			    "not as recorded\n", products[pi].name, g->alone_work, g->twin_work, g->cut_satisfied,
			    g->cut_waste_mib, g->cut_ops, g->cut_proven);
		}
	}
	ok(!print_pins() && bad == 0 && n == nproducts, "%d products: the bags' work and the plans made without an "
	    "LP as recorded (%d differ)", nproducts, bad);
}

int
main(void)
{
	int loaded = load_csv() == 0;

	if (!ok(loaded && nproducts >= 4 && nproducts <= 16, "data/mig-profiles.csv: %d products", nproducts))
		return done_testing();
	test_search_alone();
	test_twins();
	test_lp_failing_midway();
	/* the sanitizer pass runs fewer mixes, and valgrind's long double is a double: the sums pinned are the first pass's */
	if (san_pass() || getenv("GPUPACK_VALGRIND"))
		ok(1, "# SKIP the bags' work and the plans made without an LP, as recorded: fewer mixes in the "
		    "sanitizer pass, long double a double under valgrind");
	else
		test_pins();
	return done_testing();
}
