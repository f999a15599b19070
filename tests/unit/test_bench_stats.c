/*
 * test_bench_stats: medians, spreads and ratios of repeats, and the reader
 * of workers' JSON lines (src/bench/stats.c, src/bench/wline.c).
 */
#include "bench/stats.h"
#include "bench/wline.h"
#include "tap.h"

#include <math.h>

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fmax(1, fabs(b));
}

static void
test_stats(void)
{
	double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {5};
	double copy[] = {3, 1, 2};
	struct stats st;

	stats_of(odd, 3, &st);
	ok(st.n == 3 && near(st.median, 2) && near(st.min, 1) && near(st.max, 3),
	    "odd count: median is the middle value, min and max");
	ok(near(st.spread, 1.0), "spread is (max - min) / median");
	ok(odd[0] == copy[0] && odd[1] == copy[1] && odd[2] == copy[2], "input is not reordered");
	stats_of(even, 4, &st);
	ok(near(st.median, 2.5), "even count: mean of the two middle values");
	stats_of(one, 1, &st);
	ok(near(st.median, 5) && st.spread == 0, "one value: spread 0");
	stats_of(NULL, 0, &st);
	ok(st.n == 0 && isnan(st.median) && isnan(st.spread), "no values: NaN, never a made-up 0");
	ok(isnan(stats_ratio(1, 0)), "ratio over 0 is NaN");
	ok(isnan(stats_ratio(NAN, 2)), "ratio with NaN is NaN");
	ok(near(stats_ratio(3, 2), 1.5), "ratio");
	{
		double skew[] = {10, 10, 10, 10, 1000};

		stats_of(skew, 5, &st);
		ok(near(st.median, 10), "one outlier does not move the median");
	}
}

static void
test_wline(void)
{
	struct wline w;
	double d;
	int b;

	ok(wline_parse("{\"mode\":\"matmul\",\"ok\":true,\"t_start\":1763776000.125,"
	    "\"flops\":1.5e12,\"nested\":{\"a\":[1,2,{\"b\":\"}\"}]},\"e\":\"x\\\"y\\u0041\","
	    "\"n\":null}\n", &w) == 0, "a worker line parses");
	ok(wline_num(&w, "t_start", &d) == 0 && near(d, 1763776000.125), "epoch seconds keep precision");
	ok(wline_num(&w, "flops", &d) == 0 && near(d, 1.5e12), "exponent numbers");
	ok(wline_bool(&w, "ok", &b) == 0 && b == 1, "booleans");
	is_str(wline_str(&w, "mode"), "matmul", "strings");
	is_str(wline_str(&w, "e"), "x\"yA", "escapes");
	ok(wline_num(&w, "mode", &d) < 0, "a string is not a number");
	ok(wline_num(&w, "missing", &d) < 0, "missing keys are missing");
	ok(wline_str(&w, "nested") == NULL, "nested values are skipped, not read as strings");
	wline_free(&w);

	ok(wline_parse("{}", &w) == 0 && w.n == 0, "empty object");
	wline_free(&w);
	ok(wline_parse("{\"a\":1} trailing", &w) < 0, "trailing garbage refused");
	ok(wline_parse("{\"a\" 1}", &w) < 0, "missing colon refused");
	ok(wline_parse("{\"a\":1,}", &w) < 0, "trailing comma refused");
	ok(wline_parse("{\"a\":\"open", &w) < 0, "unterminated string refused");
	ok(wline_parse("{\"a\":{\"b\":1}", &w) < 0, "unterminated object refused");
	ok(wline_parse("{\"a\":nope}", &w) < 0, "bad literal refused");
	ok(wline_parse("[1,2]", &w) < 0, "an array is not a worker line");
	ok(wline_parse("", &w) < 0, "nothing is not a worker line");
	ok(wline_parse("{\"a\":1}{\"b\":2}", &w) < 0, "two objects refused");
}

int
main(void)
{
	test_stats();
	test_wline();
	return done_testing();
}
