/*
 * strmap.c: a small string -> int hash map (open addressing, FNV-1a), so that
 * name lookups stay linear on clusters of tens of thousands of nodes.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
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
	size_t i = (size_t)hash_name(key) & mask;

	while (m->keys[i] != NULL && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & mask;
	return i;
}

static enum dtplan_err grow(struct dtplan__strmap *m)
{
	struct dtplan__strmap bigger = {0};
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
