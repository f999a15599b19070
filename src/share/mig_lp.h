/*
 * mig_lp: a small dense linear program solver (src/share/mig_lp.c) for the
 * MIG planner's configuration LP. Maximizes c.x subject to rows
 * A x (<=, >=, =) b, x >= 0, with columns added between solves.
 */
#ifndef GPUPACK_SHARE_MIG_LP_H
#define GPUPACK_SHARE_MIG_LP_H

enum { MIG_LP_OPTIMAL, MIG_LP_INFEASIBLE, MIG_LP_FAIL };

struct mig_lp {
	int m;                        /* rows */
	int n, cap;                   /* columns */
	double *a;                    /* [cap * m]: column j at a + j * m */
	double *c;                    /* [cap]: objective, maximized */
	double *b;                    /* [m] */
	char *sense;                  /* [m]: 'L' (<=), 'G' (>=), 'E' (=) */
	/* the basis */
	int *basic;                   /* [m]: column, or -1 - i slack of row i, or -1 - m - i artificial */
	int *where;                   /* [2m + cap]: variable v's row in the basis (at v + 2m), -1 none */
	long pivots;
	double *binv;                 /* [m * m]: its inverse, row major */
	double *xb;                   /* [m]: basic values */
	int nart;                     /* artificials still to drive out (phase 1 pending) */
	int since;                    /* pivots since the last refactorization */
	int bad;                      /* numerical trouble: the duals are not to be trusted */
	/* results */
	double *y;                    /* [m]: duals (phase 1's while infeasible) */
	double obj;
	double *u, *work;             /* scratch */
};

void mig_lp_init(struct mig_lp *lp, int m, const double *b, const char *sense);
void mig_lp_free(struct mig_lp *lp);
/* Add a column (m entries) with its objective coefficient; its index. */
int mig_lp_add(struct mig_lp *lp, const double *col, double cost);
/*
 * Solve from the current basis. MIG_LP_OPTIMAL: y holds the duals, obj the
 * value. MIG_LP_INFEASIBLE: y holds phase 1's duals (price columns with zero
 * costs against them, add, solve again). MIG_LP_FAIL: give up on the LP.
 */
int mig_lp_solve(struct mig_lp *lp);
/* The value of column col in the current basic solution. */
double mig_lp_value(const struct mig_lp *lp, int col);

#endif
