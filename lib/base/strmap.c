/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strmap.c: a small string -> int hash map (open addressing), so that name
 * lookups stay linear on clusters of tens of thousands of nodes.
 *
 * The names come from outside (posted reports, the fabric service's
 * answer, measurement files), so the hash is keyed: SipHash-1-3 under a
 * key of the map's own, drawn from one random secret per process
 * (getrandom(), once) and a count of the maps made, as Jansson seeds its
 * objects' hashes (json_object_seed()).  Whoever chooses the names cannot
 * choose where they land, and two maps of the same names place them apart.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* The process's secret: 0 until the first map draws it. */
static uint64_t process_secret;
/* Maps keyed so far, so that no two share a key. */
static uint64_t maps_keyed;

/* SplitMix64's finaliser: a bijection of 64 bits that mixes every bit. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t draw_secret(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
		/* no entropy yet (early boot): what differs between processes */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
			  ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts);
	}
	return s != 0 ? s : 1;
}

/* A new map's key: the secret (drawn once; threads race to set it, the
 * first wins) mixed with the map's number, distinct for every map. */
static void new_key(struct dtplan__strmap *m)
{
	uint64_t secret = __atomic_load_n(&process_secret, __ATOMIC_ACQUIRE), n;

	if (secret == 0) {
		uint64_t mine = draw_secret(), none = 0;

		secret = __atomic_compare_exchange_n(&process_secret, &none, mine, false,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
				 ? mine
				 : none;
	}
	n = __atomic_add_fetch(&maps_keyed, 1, __ATOMIC_RELAXED);
	/* mix64() is a bijection and the odd step makes each n a new input */
	m->seed[0] = mix64(secret + n * 0x9e3779b97f4a7c15ULL);
	m->seed[1] = mix64(m->seed[0] ^ secret);
}

#define SIPROUND(v0, v1, v2, v3)                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

/* SipHash-1-3 (Aumasson and Bernstein; the variant Python and Rust's
 * HashMap use) of the NUL-terminated s under key k. */
static uint64_t hash_name(const uint64_t k[2], const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), left = len & 7;
	uint64_t v0 = k[0] ^ 0x736f6d6570736575ULL, v1 = k[1] ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k[0] ^ 0x6c7967656e657261ULL, v3 = k[1] ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56, w;

	for (const unsigned char *end = p + (len - left); p < end; p += 8) {
		w = 0;
		for (int i = 0; i < 8; i++)
			w |= (uint64_t)p[i] << (8 * i);
		v3 ^= w;
		SIPROUND(v0, v1, v2, v3);
		v0 ^= w;
	}
	for (size_t i = 0; i < left; i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

static enum dtplan_err alloc_slots(struct dtplan__strmap *m, size_t cap)
{
	m->keys = calloc(cap, sizeof(*m->keys));
	m->values = calloc(cap, sizeof(*m->values));
	if (m->keys == NULL || m->values == NULL) {
		free(m->keys);
		free(m->values);
		m->keys = NULL;
		m->values = NULL;
		return DTPLAN_ERR_NOMEM;
	}
	m->cap = cap;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__strmap_init(struct dtplan__strmap *m, size_t expected)
{
	size_t cap = 16;

	memset(m, 0, sizeof(*m));
	new_key(m);
	while (cap < expected * 2 && cap < ((size_t)1 << 40))
		cap *= 2;
	return alloc_slots(m, cap);
}

void dtplan__strmap_fini(struct dtplan__strmap *m)
{
	if (m == NULL)
		return;
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}

/* Slot holding key, or the free slot where it would go. */
static size_t find_slot(const struct dtplan__strmap *m, const char *key)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)hash_name(m->seed, key) & mask;

	while (m->keys[i] != NULL && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & mask;
	return i;
}

static enum dtplan_err grow(struct dtplan__strmap *m)
{
	struct dtplan__strmap bigger = {.seed = {m->seed[0], m->seed[1]}};
	enum dtplan_err rv;

	rv = alloc_slots(&bigger, m->cap * 2);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->keys[i] == NULL)
			continue;
		j = find_slot(&bigger, m->keys[i]);
		bigger.keys[j] = m->keys[i];
		bigger.values[j] = m->values[i];
	}
	bigger.len = m->len;
	dtplan__strmap_fini(m);
	*m = bigger;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__strmap_put(struct dtplan__strmap *m, const char *key, int value, int *old)
{
	enum dtplan_err rv;
	size_t i;

	if (m->cap == 0) {
		/* a map never initialised (= {0}) is keyed as it is first used */
		if (m->seed[0] == 0 && m->seed[1] == 0)
			new_key(m);
		rv = alloc_slots(m, 16);
		if (rv != DTPLAN_OK)
			return rv;
	}
	if ((m->len + 1) * 2 > m->cap) {
		rv = grow(m);
		if (rv != DTPLAN_OK)
			return rv;
	}
	i = find_slot(m, key);
	if (m->keys[i] != NULL) {
		if (old != NULL)
			*old = m->values[i];
		return DTPLAN_ERR_INVAL;
	}
	m->keys[i] = key;
	m->values[i] = value;
	m->len++;
	return DTPLAN_OK;
}

int dtplan__strmap_get(const struct dtplan__strmap *m, const char *key)
{
	size_t i;

	if (m == NULL || m->cap == 0 || key == NULL)
		return -1;
	i = find_slot(m, key);
	return m->keys[i] != NULL ? m->values[i] : -1;
}
