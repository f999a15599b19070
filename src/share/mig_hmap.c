/*
 * mig_hmap: an open-addressed hash from keys of one word or a pair of
 * words to indices, for the bags (mig_bag*.c: the GPUs' rows remembered,
 * the packings' states). A first word of UINT64_MAX marks a free slot:
 * the keys are packed counts, whose guard bits are clear, or small
 * counts, so never that.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FREE UINT64_MAX

void
mig_hm_init(struct hmap *h, size_t want, int words)
{
	h->cap = 64;
	while (h->cap < 2 * want)
		h->cap *= 2;
	h->words = words;
	h->key = xcalloc((size_t)words * h->cap, sizeof *h->key);
	memset(h->key, 0xff, (size_t)words * h->cap * sizeof *h->key);
	h->val = xcalloc(h->cap, sizeof *h->val);
	h->n = 0;
}

void
mig_hm_free(struct hmap *h)
{
	free(h->key);
	free(h->val);
	memset(h, 0, sizeof *h);
}

static size_t
slot(const struct hmap *h, uint64_t a, uint64_t b)
{
	const uint64_t *k = h->key;
	size_t w = (size_t)h->words;
	size_t i = (size_t)(((a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL)) >> 17) & (h->cap - 1);

	while (k[w * i] != FREE && !(k[w * i] == a && (w == 1 || k[w * i + 1] == b)))
		i = (i + 1) & (h->cap - 1);
	return i;
}

const int *
mig_hm_find(const struct hmap *h, uint64_t a, uint64_t b)
{
	size_t i = slot(h, a, h->words == 2 ? b : 0);

	return h->key[(size_t)h->words * i] == FREE ? NULL : &h->val[i];
}

int *
mig_hm_get(struct hmap *h, uint64_t a, uint64_t b)
{
	size_t w = (size_t)h->words, i;

	if (w == 1)
		b = 0;
	if (2 * (h->n + 1) > h->cap) {
		struct hmap g;

		mig_hm_init(&g, h->cap, h->words);
		for (size_t x = 0; x < h->cap; x++)
			if (h->key[w * x] != FREE) {
				uint64_t kb = w == 2 ? h->key[w * x + 1] : 0;
				size_t y = slot(&g, h->key[w * x], kb);

				memcpy(&g.key[w * y], &h->key[w * x], w * sizeof *h->key);
				g.val[y] = h->val[x];
				g.n++;
			}
		mig_hm_free(h);
		*h = g;
	}
	i = slot(h, a, b);
	if (h->key[w * i] == FREE) {
		h->key[w * i] = a;
		if (w == 2)
			h->key[w * i + 1] = b;
		h->val[i] = -1;
		h->n++;
	}
	return &h->val[i];
}
