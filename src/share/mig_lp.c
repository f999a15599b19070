/*
 * mig_lp: a small dense linear program solver for the MIG planner's
 * configuration LP (mig_bound.c). Revised primal simplex with an explicit
 * basis inverse, two phases (artificial variables for the rows the all-slack
 * basis cannot satisfy), columns added between solves (column generation:
 * the basis stays valid, the next solve starts from it).
 *
 * Sizes are tiny (tens of rows, hundreds of columns), so the inverse is
 * dense and refactorized from scratch every REFACTOR pivots. Numerics need
 * not be exact: the planner only takes the duals from here and recomputes
 * the bound they imply exactly (a Lagrangian bound is valid for any prices),
 * so rounding can make the bound looser, never wrong.
 */
#include "share/mig_lp.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-9
#define REFACTOR 40

/* Variable ids: j >= 0 a column; -1 - i the slack of row i; -1 - m - i its artificial. */
#define SLACK(lp, i) (-1 - (i))
#define ART(lp, i) (-1 - (lp)->m - (i))

void
mig_lp_init(struct mig_lp *lp, int m, const double *b, const char *sense)
{
	memset(lp, 0, sizeof *lp);
	lp->m = m;
	lp->b = xcalloc((size_t)m + 1, sizeof *lp->b);
	lp->sense = xcalloc((size_t)m + 1, 1);
	memcpy(lp->b, b, sizeof *b * (size_t)m);
	memcpy(lp->sense, sense, (size_t)m);
	lp->binv = xcalloc((size_t)m * (size_t)m + 1, sizeof *lp->binv);
	lp->xb = xcalloc((size_t)m + 1, sizeof *lp->xb);
	lp->basic = xcalloc((size_t)m + 1, sizeof *lp->basic);
	lp->y = xcalloc((size_t)m + 1, sizeof *lp->y);
	lp->u = xcalloc((size_t)m + 1, sizeof *lp->u);
	lp->work = xcalloc((size_t)m * (size_t)m * 2 + 1, sizeof *lp->work);
	lp->where = xmalloc(((size_t)2 * (size_t)m + 64) * sizeof *lp->where);
	for (int i = 0; i < 2 * m + 64; i++)
		lp->where[i] = -1;
	for (int i = 0; i < m; i++) {
		int slack = sense[i] == 'L' && b[i] >= 0;

		lp->basic[i] = slack ? SLACK(lp, i) : ART(lp, i);
		lp->binv[(size_t)i * (size_t)m + (size_t)i] = slack ? 1 : (b[i] < 0 ? -1 : 1);
		lp->where[lp->basic[i] + 2 * m] = i;
		lp->xb[i] = fabs(b[i]);
		lp->nart += !slack;
	}
}

void
mig_lp_free(struct mig_lp *lp)
{
	free(lp->b);
	free(lp->sense);
	free(lp->a);
	free(lp->c);
	free(lp->binv);
	free(lp->xb);
	free(lp->basic);
	free(lp->y);
	free(lp->u);
	free(lp->work);
	free(lp->where);
	memset(lp, 0, sizeof *lp);
}

int
mig_lp_add(struct mig_lp *lp, const double *col, double cost)
{
	if (lp->n == lp->cap) {
		size_t cap = lp->cap ? (size_t)lp->cap * 2 : 64;

		lp->a = xrealloc(lp->a, cap * (size_t)lp->m * sizeof *lp->a);
		lp->c = xrealloc(lp->c, cap * sizeof *lp->c);
		lp->where = xrealloc(lp->where, (cap + 2 * (size_t)lp->m) * sizeof *lp->where);
		for (size_t i = (size_t)lp->cap + 2 * (size_t)lp->m; i < cap + 2 * (size_t)lp->m; i++)
			lp->where[i] = -1;
		lp->cap = (int)cap;
	}
	memcpy(lp->a + (size_t)lp->n * (size_t)lp->m, col, sizeof *col * (size_t)lp->m);
	lp->c[lp->n] = cost;
	return lp->n++;
}

/* Column of variable v into out (dense, m). */
static void
column(const struct mig_lp *lp, int v, double *out)
{
	if (v >= 0) {
		memcpy(out, lp->a + (size_t)v * (size_t)lp->m, sizeof *out * (size_t)lp->m);
		return;
	}
	memset(out, 0, sizeof *out * (size_t)lp->m);
	if (v >= -lp->m) {
		int i = -1 - v;

		out[i] = lp->sense[i] == 'G' ? -1 : 1;
	} else {
		int i = -1 - lp->m - v;

		out[i] = lp->b[i] < 0 ? -1 : 1;
	}
}

static double
cost(const struct mig_lp *lp, int v, int phase)
{
	if (phase == 1)
		return v < -lp->m ? -1 : 0;
	return v >= 0 ? lp->c[v] : 0;
}

/* Recompute the inverse of the basis and the basic values; -1 if singular. */
static int
refactor(struct mig_lp *lp)
{
	int m = lp->m;
	double *a = lp->work, *inv = lp->work + (size_t)m * (size_t)m;

	for (int i = 0; i < m; i++)
		column(lp, lp->basic[i], lp->u), memcpy(a + (size_t)i * (size_t)m, lp->u, sizeof *a * (size_t)m);
	/* a holds B by columns: a[col * m + row]; invert B into inv (row major) */
	for (int i = 0; i < m * m; i++)
		inv[i] = 0;
	for (int i = 0; i < m; i++)
		inv[(size_t)i * (size_t)m + (size_t)i] = 1;
	/* Gauss-Jordan on B (row r, col c at a[c * m + r]) with partial pivoting */
	for (int c = 0; c < m; c++) {
		int p = c;

		for (int r = c + 1; r < m; r++)
			if (fabs(a[(size_t)c * (size_t)m + (size_t)r]) > fabs(a[(size_t)c * (size_t)m + (size_t)p]))
				p = r;
		if (fabs(a[(size_t)c * (size_t)m + (size_t)p]) < 1e-12)
			return -1;
		if (p != c)
			for (int k = 0; k < m; k++) {
				double t = a[(size_t)k * (size_t)m + (size_t)p];

				a[(size_t)k * (size_t)m + (size_t)p] = a[(size_t)k * (size_t)m + (size_t)c];
				a[(size_t)k * (size_t)m + (size_t)c] = t;
				t = inv[(size_t)p * (size_t)m + (size_t)k];
				inv[(size_t)p * (size_t)m + (size_t)k] = inv[(size_t)c * (size_t)m + (size_t)k];
				inv[(size_t)c * (size_t)m + (size_t)k] = t;
			}
		{
			double d = a[(size_t)c * (size_t)m + (size_t)c];

			for (int k = 0; k < m; k++) {
				a[(size_t)k * (size_t)m + (size_t)c] /= d;
				inv[(size_t)c * (size_t)m + (size_t)k] /= d;
			}
		}
		for (int r = 0; r < m; r++) {
			double f = a[(size_t)c * (size_t)m + (size_t)r];

			if (r == c || f == 0)
				continue;
			for (int k = 0; k < m; k++) {
				a[(size_t)k * (size_t)m + (size_t)r] -= f * a[(size_t)k * (size_t)m + (size_t)c];
				inv[(size_t)r * (size_t)m + (size_t)k] -= f * inv[(size_t)c * (size_t)m + (size_t)k];
			}
		}
	}
	memcpy(lp->binv, inv, sizeof *inv * (size_t)m * (size_t)m);
	for (int i = 0; i < m; i++) {
		double v = 0;

		for (int k = 0; k < m; k++)
			v += lp->binv[(size_t)i * (size_t)m + (size_t)k] * lp->b[k];
		lp->xb[i] = v > -TOL && v < 0 ? 0 : v;
	}
	return 0;
}

/* Duals of the basis for the phase's costs: y = c_B B^-1. */
static void
duals(struct mig_lp *lp, int phase)
{
	int m = lp->m;

	for (int k = 0; k < m; k++)
		lp->y[k] = 0;
	for (int i = 0; i < m; i++) {
		double cb = cost(lp, lp->basic[i], phase);

		if (cb != 0)
			for (int k = 0; k < m; k++)
				lp->y[k] += cb * lp->binv[(size_t)i * (size_t)m + (size_t)k];
	}
}

static double
reduced(struct mig_lp *lp, int v, int phase)
{
	double d = cost(lp, v, phase);

	if (v >= 0) {
		const double *a = lp->a + (size_t)v * (size_t)lp->m;

		for (int i = 0; i < lp->m; i++)
			d -= lp->y[i] * a[i];
		return d;
	}
	column(lp, v, lp->u);
	for (int i = 0; i < lp->m; i++)
		d -= lp->y[i] * lp->u[i];
	return d;
}

static int
is_basic(const struct mig_lp *lp, int v)
{
	return lp->where[v + 2 * lp->m] >= 0;
}

/* Pivot v into the basis in place of row r's variable (u = B^-1 A_v). */
static void
pivot(struct mig_lp *lp, int r, int v)
{
	int m = lp->m;
	double ur = lp->u[r], t = lp->xb[r] / ur;
	double *row = lp->binv + (size_t)r * (size_t)m;

	for (int k = 0; k < m; k++)
		row[k] /= ur;
	for (int i = 0; i < m; i++) {
		double f = lp->u[i];

		if (i == r || f == 0)
			continue;
		for (int k = 0; k < m; k++)
			lp->binv[(size_t)i * (size_t)m + (size_t)k] -= f * row[k];
		lp->xb[i] -= f * t;
		if (lp->xb[i] < 0 && lp->xb[i] > -TOL)
			lp->xb[i] = 0;
	}
	lp->xb[r] = t;
	lp->where[lp->basic[r] + 2 * m] = -1;
	lp->where[v + 2 * m] = r;
	lp->basic[r] = v;
	lp->pivots++;
	if (++lp->since > REFACTOR) {
		lp->since = 0;
		if (refactor(lp) < 0)
			lp->bad = 1;
	}
}

/* u = B^-1 A_v */
static void
ftran(struct mig_lp *lp, int v)
{
	int m = lp->m;
	double *col = lp->work;

	column(lp, v, col);
	for (int i = 0; i < m; i++) {
		double s = 0;

		for (int k = 0; k < m; k++)
			s += lp->binv[(size_t)i * (size_t)m + (size_t)k] * col[k];
		lp->u[i] = s;
	}
}

/*
 * Primal simplex for one phase from the current basis. Dantzig's rule,
 * Bland's after a run of degenerate pivots (no cycling). 0 optimal,
 * -1 trouble (iteration cap, unbounded, singular).
 */
static int
simplex(struct mig_lp *lp, int phase)
{
	int degenerate = 0;

	for (int it = 0; it < 50 * (lp->m + lp->n) + 1000; it++) {
		int q = 0, r = -1, bland = degenerate > 50, have = 0;
		double best = TOL * 10, ratio = 0;

		if (lp->bad)
			return -1;
		duals(lp, phase);
		/* entering: a column, a slack (not of an equality row), an artificial in phase 1 */
		for (int v = -2 * lp->m; v < lp->n; v++) {
			double d;

			if (v < 0 && v >= -lp->m && lp->sense[-1 - v] == 'E')
				continue;
			if (v < -lp->m && phase == 2)
				continue;
			if (is_basic(lp, v))
				continue;
			d = reduced(lp, v, phase);
			if (d > best) {
				q = v;
				have = 1;
				if (bland)
					break;
				best = d;
			}
		}
		if (!have)
			return 0;
		ftran(lp, q);
		for (int i = 0; i < lp->m; i++)
			if (phase == 2 && lp->basic[i] < -lp->m && fabs(lp->u[i]) > TOL) {
				/* an artificial left at zero on a redundant row: it leaves first, it never grows */
				r = i;
				ratio = 0;
				break;
			} else if (lp->u[i] > TOL) {
				double t = lp->xb[i] / lp->u[i];

				if (r < 0 || t < ratio - 1e-12 || (t < ratio + 1e-12 && lp->basic[i] < lp->basic[r])) {
					r = i;
					ratio = t;
				}
			}
		if (r < 0)
			return -1; /* unbounded: cannot happen with the planner's rows */
		degenerate = ratio < TOL ? degenerate + 1 : 0;
		pivot(lp, r, q);
	}
	return -1;
}

int
mig_lp_solve(struct mig_lp *lp)
{
	double inf = 0;

	if (lp->bad)
		return MIG_LP_FAIL;
	if (lp->nart) {
		if (simplex(lp, 1) < 0)
			return MIG_LP_FAIL;
		for (int i = 0; i < lp->m; i++)
			if (lp->basic[i] < -lp->m)
				inf += lp->xb[i];
		if (inf > 1e-7) {
			duals(lp, 1);
			return MIG_LP_INFEASIBLE;
		}
		/* artificials left in the basis at zero: pivot them out where a column can take the row */
		for (int i = 0; i < lp->m; i++) {
			if (lp->basic[i] >= -lp->m)
				continue;
			for (int v = -lp->m; v < lp->n; v++) {
				if (v < 0 && lp->sense[-1 - v] == 'E')
					continue;
				if (is_basic(lp, v))
					continue;
				ftran(lp, v);
				if (fabs(lp->u[i]) > 1e-7) {
					pivot(lp, i, v);
					break;
				}
			}
		}
		lp->nart = 0;
		for (int i = 0; i < lp->m; i++)
			lp->nart += lp->basic[i] < -lp->m;
		if (lp->nart) /* a redundant row keeps its artificial at zero: phase 2 never lets it grow */
			lp->nart = 0;
	}
	if (simplex(lp, 2) < 0)
		return MIG_LP_FAIL;
	duals(lp, 2);
	lp->obj = 0;
	for (int i = 0; i < lp->m; i++)
		lp->obj += cost(lp, lp->basic[i], 2) * lp->xb[i];
	return MIG_LP_OPTIMAL;
}

double
mig_lp_value(const struct mig_lp *lp, int col)
{
	for (int i = 0; i < lp->m; i++)
		if (lp->basic[i] == col)
			return lp->xb[i];
	return 0;
}
