/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wire.c: the probe's messages as bytes (doc/internals/probe.md, "Wire
 * format").  Frames and bodies are big-endian; every count read from a
 * buffer is checked against the bytes left before anything is allocated,
 * so a hostile length costs nothing.  Pure code: the credential itself is
 * made and checked by probes/auth.c.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SRC "probe message"
#define MIB ((size_t)1 << 20)

static const struct {
	const char *name;
	size_t body_max;
} types[DTPLAN_WIRE__LAST] = {
	[DTPLAN_WIRE_JOIN] = {"join", 64},     [DTPLAN_WIRE_INVENTORY] = {"inventory", 64 * MIB},
	[DTPLAN_WIRE_GO] = {"go", 64 * MIB},   [DTPLAN_WIRE_PROBE] = {"probe", 64},
	[DTPLAN_WIRE_REPORT] = {"report", 64}, [DTPLAN_WIRE_RESULTS] = {"results", 64 * MIB},
};

const char *dtplan_wire_type_name(unsigned type)
{
	if (type == 0 || type >= DTPLAN_WIRE__LAST)
		return "?";
	return types[type].name;
}

size_t dtplan_wire_body_max(unsigned type)
{
	if (type == 0 || type >= DTPLAN_WIRE__LAST)
		return 0;
	return types[type].body_max;
}

/* ------------------------------------------------------------------------
 * Writing and reading big-endian fields
 * ---------------------------------------------------------------------- */

/* The message is written into the one growing text (base/base.h), as bytes. */
static void w_bytes(struct dtplan__text *w, const void *p, size_t n)
{
	dtplan__text_put(w, p, n);
}

static void w_u8(struct dtplan__text *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void w_u16(struct dtplan__text *w, uint16_t v)
{
	uint8_t b[2];

	put16(b, v);
	w_bytes(w, b, 2);
}

static void w_u32(struct dtplan__text *w, uint32_t v)
{
	uint8_t b[4];

	put32(b, v);
	w_bytes(w, b, 4);
}

static void w_u64(struct dtplan__text *w, uint64_t v)
{
	w_u32(w, (uint32_t)(v >> 32));
	w_u32(w, (uint32_t)v);
}

/* A double as its IEEE 754 bits; non-finite values become 0. */
static void w_f64(struct dtplan__text *w, double v)
{
	uint64_t bits;

	if (!isfinite(v))
		v = 0.0;
	memcpy(&bits, &v, sizeof(bits));
	w_u64(w, bits);
}

static void w_addr(struct dtplan__text *w, const struct dtplan_wire_addr *a)
{
	w_u8(w, a->family);
	w_bytes(w, a->addr, 16);
	w_u16(w, a->port);
}

/* Hands the buffer over, or reports NOMEM. */
static enum dtplan_err w_finish(struct dtplan__text *w, uint8_t **out, size_t *len,
				struct dtplan_error *err)
{
	*out = NULL;
	*len = 0;
	if (w->failed)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	*out = w->s != NULL ? (uint8_t *)w->s : malloc(1);
	if (*out == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	*len = w->len;
	return DTPLAN_OK;
}

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	const char *bad; /* the first field that did not fit, NULL while fine */
};

static bool r_need(struct rbuf *r, size_t n, const char *what)
{
	if (r->bad != NULL)
		return false;
	if (r->len - r->off < n) {
		r->bad = what;
		return false;
	}
	return true;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t r_u8(struct rbuf *r, const char *what)
{
	if (!r_need(r, 1, what))
		return 0;
	return r->p[r->off++];
}

static uint16_t r_u16(struct rbuf *r, const char *what)
{
	uint16_t v;

	if (!r_need(r, 2, what))
		return 0;
	v = get16(r->p + r->off);
	r->off += 2;
	return v;
}

static uint32_t r_u32(struct rbuf *r, const char *what)
{
	uint32_t v;

	if (!r_need(r, 4, what))
		return 0;
	v = get32(r->p + r->off);
	r->off += 4;
	return v;
}

static uint64_t r_u64(struct rbuf *r, const char *what)
{
	uint64_t hi = r_u32(r, what);

	return hi << 32 | r_u32(r, what);
}

static double r_f64(struct rbuf *r, const char *what)
{
	uint64_t bits = r_u64(r, what);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

static void r_addr(struct rbuf *r, struct dtplan_wire_addr *a, const char *what)
{
	a->family = r_u8(r, what);
	if (r_need(r, 16, what)) {
		memcpy(a->addr, r->p + r->off, 16);
		r->off += 16;
	}
	a->port = r_u16(r, what);
	if (r->bad == NULL && a->family != 0 && a->family != 4 && a->family != 6)
		r->bad = what;
}

/* A count of items of at least `each` bytes: no more than the bytes left
 * can hold (so a hostile count allocates nothing). */
static size_t r_count(struct rbuf *r, size_t each, const char *what)
{
	uint32_t n = r_u32(r, what);

	if (r->bad != NULL)
		return 0;
	if (each > 0 && (size_t)n > (r->len - r->off) / each) {
		r->bad = what;
		return 0;
	}
	return n;
}

/* Ends a decode: the whole body used, no field short. */
static enum dtplan_err r_finish(struct rbuf *r, const char *type, struct dtplan_error *err)
{
	if (r->bad != NULL)
		return dtplan__error(
			err, DTPLAN_ERR_PARSE, SRC, 0,
			"%s body: %s is truncated or out of range (at byte %zu of %zu)", type,
			r->bad, r->off, r->len);
	if (r->off != r->len)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s body: %zu bytes left over after the last field", type,
				     r->len - r->off);
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * Frames
 * ---------------------------------------------------------------------- */

static const uint8_t frame_magic[4] = {'D', 'T', 'P', 'W'};
static const uint8_t seal_magic[4] = {'D', 'T', 'P', 'C'};

void dtplan_wire_header_encode(const struct dtplan_wire_header *h,
			       uint8_t out[DTPLAN_WIRE_HEADER_LEN])
{
	memcpy(out, frame_magic, 4);
	out[4] = h->version;
	out[5] = h->type;
	put16(out + 6, h->cred_len);
	put32(out + 8, h->job_id);
	put32(out + 12, h->session);
	put32(out + 16, h->round);
	put32(out + 20, h->sender);
	put32(out + 24, h->body_len);
}

enum dtplan_err dtplan_wire_header_decode(const uint8_t *buf, size_t len,
					  struct dtplan_wire_header *h, struct dtplan_error *err)
{
	memset(h, 0, sizeof(*h));
	if (buf == NULL || len < DTPLAN_WIRE_HEADER_LEN)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "truncated header (%zu of %d bytes)", buf ? len : 0,
				     DTPLAN_WIRE_HEADER_LEN);
	if (memcmp(buf, frame_magic, 4) != 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "not a dtplan probe message (bad magic)");
	h->version = buf[4];
	h->type = buf[5];
	h->cred_len = get16(buf + 6);
	h->job_id = get32(buf + 8);
	h->session = get32(buf + 12);
	h->round = get32(buf + 16);
	h->sender = get32(buf + 20);
	h->body_len = get32(buf + 24);
	if (h->version != DTPLAN_WIRE_VERSION)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "protocol version %u (this dtplan speaks %d)", h->version,
				     DTPLAN_WIRE_VERSION);
	if (h->type == 0 || h->type >= DTPLAN_WIRE__LAST)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "unknown message type %u",
				     h->type);
	if (h->cred_len == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s message without a credential", types[h->type].name);
	if (h->cred_len > DTPLAN_WIRE_CRED_MAX)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "credential of %u bytes (at most %d)", h->cred_len,
				     DTPLAN_WIRE_CRED_MAX);
	if (h->body_len > types[h->type].body_max)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s body of %u bytes (at most %zu)", types[h->type].name,
				     h->body_len, types[h->type].body_max);
	return DTPLAN_OK;
}

void dtplan_wire_seal(const struct dtplan_wire_header *h, const void *body,
		      uint8_t out[DTPLAN_WIRE_SEAL_LEN])
{
	memcpy(out, seal_magic, 4);
	out[4] = h->version;
	out[5] = h->type;
	put16(out + 6, 0);
	put32(out + 8, h->job_id);
	put32(out + 12, h->session);
	put32(out + 16, h->round);
	put32(out + 20, h->sender);
	put32(out + 24, h->body_len);
	dtplan__sha256(body != NULL ? body : "", body != NULL ? h->body_len : 0, out + 28);
}

/* Compares the seal's fields (and with body, its digest). */
static enum dtplan_err check_seal(const struct dtplan_wire_header *h, const void *body, bool digest,
				  const void *payload, size_t len, struct dtplan_error *err)
{
	uint8_t want[DTPLAN_WIRE_SEAL_LEN];
	const uint8_t *p = payload;

	if (payload == NULL || len != DTPLAN_WIRE_SEAL_LEN || memcmp(p, seal_magic, 4) != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, SRC, 0,
				     "the credential carries no dtplan seal");
	dtplan_wire_seal(h, digest ? body : NULL, want);
	if (memcmp(p + 8, want + 8, 4) != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, SRC, 0,
				     "the credential was made for job %u, the message says %u",
				     get32(p + 8), h->job_id);
	if (memcmp(p + 12, want + 12, 8) != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, SRC, 0,
				     "the credential was made for session %u round %u, the message "
				     "says session %u round %u",
				     get32(p + 12), get32(p + 16), h->session, h->round);
	if (memcmp(p, want, digest ? DTPLAN_WIRE_SEAL_LEN : 28) != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, SRC, 0,
				     "the credential was made for another %s message (sender, "
				     "length or body differ)",
				     dtplan_wire_type_name(h->type));
	return DTPLAN_OK;
}

enum dtplan_err dtplan_wire_check_seal(const struct dtplan_wire_header *h, const void *body,
				       const void *payload, size_t len, struct dtplan_error *err)
{
	return check_seal(h, body, true, payload, len, err);
}

enum dtplan_err dtplan_wire_check_seal_fields(const struct dtplan_wire_header *h,
					      const void *payload, size_t len,
					      struct dtplan_error *err)
{
	return check_seal(h, NULL, false, payload, len, err);
}

enum dtplan_err dtplan_wire_frame_decode(const uint8_t *buf, size_t len,
					 struct dtplan_wire_frame *f, struct dtplan_error *err)
{
	enum dtplan_err rv;
	size_t want;

	memset(f, 0, sizeof(*f));
	rv = dtplan_wire_header_decode(buf, len, &f->h, err);
	if (rv != DTPLAN_OK)
		return rv;
	want = DTPLAN_WIRE_HEADER_LEN + (size_t)f->h.cred_len + (size_t)f->h.body_len;
	if (len < want)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "truncated %s message (%zu of %zu bytes)",
				     types[f->h.type].name, len, want);
	if (len > want)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%zu bytes after the end of a %s message", len - want,
				     types[f->h.type].name);
	f->cred = (const char *)buf + DTPLAN_WIRE_HEADER_LEN;
	f->body = buf + DTPLAN_WIRE_HEADER_LEN + f->h.cred_len;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_wire_frame_encode(const struct dtplan_wire_header *h, const char *cred,
					 const void *body, size_t len, uint8_t **out,
					 size_t *out_len, struct dtplan_error *err)
{
	struct dtplan_wire_header hh;
	size_t cl = cred != NULL ? strlen(cred) : 0;
	uint8_t *buf;

	*out = NULL;
	*out_len = 0;
	if (h == NULL || h->type == 0 || h->type >= DTPLAN_WIRE__LAST)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no header or unknown type");
	if (cl > DTPLAN_WIRE_CRED_MAX || len > types[h->type].body_max)
		return dtplan__error(err, DTPLAN_ERR_RANGE, SRC, 0,
				     "%s message: credential of %zu or body of %zu bytes is over "
				     "its limit",
				     types[h->type].name, cl, len);
	hh = *h;
	hh.cred_len = (uint16_t)cl;
	hh.body_len = (uint32_t)len;
	buf = malloc(DTPLAN_WIRE_HEADER_LEN + cl + len + 1);
	if (buf == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	dtplan_wire_header_encode(&hh, buf);
	if (cl > 0)
		memcpy(buf + DTPLAN_WIRE_HEADER_LEN, cred, cl);
	if (len > 0)
		memcpy(buf + DTPLAN_WIRE_HEADER_LEN + cl, body, len);
	*out = buf;
	*out_len = DTPLAN_WIRE_HEADER_LEN + cl + len;
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * Bodies
 * ---------------------------------------------------------------------- */

#define ADDR_LEN 19 /* family, 16 address bytes, port */

enum dtplan_err dtplan_wire_join_encode(const struct dtplan_wire_join *j, uint8_t **out,
					size_t *len, struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u32(&w, j->n_nodes);
	w_addr(&w, &j->addr);
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_join_decode(const uint8_t *body, size_t len, struct dtplan_wire_join *j,
					struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;

	memset(j, 0, sizeof(*j));
	j->n_nodes = r_u32(&r, "the node count");
	r_addr(&r, &j->addr, "the address");
	rv = r_finish(&r, "join", err);
	if (rv != DTPLAN_OK)
		memset(j, 0, sizeof(*j));
	return rv;
}

void dtplan_wire_inventory_fini(struct dtplan_wire_inventory *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->n_records; i++)
		free(v->records[i]);
	free(v->records);
	free(v->entries);
	memset(v, 0, sizeof(*v));
}

enum dtplan_err dtplan_wire_inventory_encode(const struct dtplan_wire_inventory *v, uint8_t **out,
					     size_t *len, struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u32(&w, (uint32_t)v->n_records);
	for (size_t i = 0; i < v->n_records; i++) {
		size_t n = strlen(v->records[i]);

		w_u32(&w, (uint32_t)n);
		w_bytes(&w, v->records[i], n);
	}
	w_u32(&w, (uint32_t)v->n_entries);
	for (size_t i = 0; i < v->n_entries; i++) {
		const struct dtplan_wire_entry *e = &v->entries[i];
		size_t n = strnlen(e->note, sizeof(e->note) - 1);

		w_u32(&w, e->node);
		w_u32(&w, e->record);
		w_addr(&w, &e->addr);
		w_u16(&w, (uint16_t)n);
		w_bytes(&w, e->note, n);
	}
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_inventory_decode(const uint8_t *body, size_t len, size_t max_nodes,
					     struct dtplan_wire_inventory *v,
					     struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;
	size_t n;

	memset(v, 0, sizeof(*v));
	n = r_count(&r, 4, "the record count");
	if (n > max_nodes)
		r.bad = "the record count (more than the job's nodes)";
	if (r.bad != NULL)
		n = 0;
	v->records = calloc(n + 1, sizeof(*v->records));
	if (v->records == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	for (size_t i = 0; i < n && r.bad == NULL; i++) {
		size_t l = r_count(&r, 1, "a record's length");

		if (!r_need(&r, l, "a record"))
			break;
		if (memchr(r.p + r.off, '\0', l) != NULL) {
			r.bad = "a record (NUL byte)";
			break;
		}
		v->records[i] = strndup((const char *)r.p + r.off, l);
		if (v->records[i] == NULL) {
			dtplan_wire_inventory_fini(v);
			return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		}
		v->n_records++;
		r.off += l;
	}
	n = r_count(&r, 4 + 4 + ADDR_LEN + 2, "the entry count");
	if (r.bad == NULL && n > max_nodes)
		r.bad = "the entry count (more than the job's nodes)";
	if (r.bad != NULL)
		n = 0;
	v->entries = calloc(n + 1, sizeof(*v->entries));
	if (v->entries == NULL) {
		dtplan_wire_inventory_fini(v);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	for (size_t i = 0; i < n && r.bad == NULL; i++) {
		struct dtplan_wire_entry *e = &v->entries[i];
		size_t l;

		e->node = r_u32(&r, "an entry's node");
		e->record = r_u32(&r, "an entry's record");
		r_addr(&r, &e->addr, "an entry's address");
		l = r_u16(&r, "an entry's note length");
		if (r.bad != NULL)
			break;
		if (l >= sizeof(e->note) || !r_need(&r, l, "an entry's note")) {
			r.bad = "an entry's note";
			break;
		}
		memcpy(e->note, r.p + r.off, l);
		e->note[l] = '\0';
		if (strlen(e->note) != l) {
			r.bad = "an entry's note (NUL byte)";
			break;
		}
		r.off += l;
		if (e->record != DTPLAN_WIRE_NO_RECORD && e->record >= v->n_records) {
			r.bad = "an entry's record index";
			break;
		}
		v->n_entries++;
	}
	rv = r_finish(&r, "inventory", err);
	if (rv != DTPLAN_OK)
		dtplan_wire_inventory_fini(v);
	return rv;
}

void dtplan_wire_go_fini(struct dtplan_wire_go *g)
{
	if (g == NULL)
		return;
	free(g->assign);
	memset(g, 0, sizeof(*g));
}

enum dtplan_err dtplan_wire_go_encode(const struct dtplan_wire_go *g, uint8_t **out, size_t *len,
				      struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u32(&w, g->delay_us);
	w_u32(&w, g->slot_us);
	w_u32(&w, g->n_rounds);
	w_u32(&w, g->ping_count);
	w_u32(&w, g->ping_bytes);
	w_u32(&w, g->ping_window_us);
	w_u32(&w, g->bulk_us);
	w_u64(&w, g->bulk_bytes);
	w_u32(&w, (uint32_t)g->n_assign);
	for (size_t i = 0; i < g->n_assign; i++) {
		const struct dtplan_wire_assign *a = &g->assign[i];

		w_u32(&w, a->node);
		for (uint32_t k = 0; k < g->n_rounds && k < DTPLAN_PROBE_MAX_ROUNDS; k++) {
			w_u32(&w, (uint32_t)a->peer[k]);
			w_u8(&w, a->sends[k]);
			w_u8(&w, a->kind[k]);
			w_addr(&w, &a->peer_addr[k]);
		}
	}
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_go_decode(const uint8_t *body, size_t len, struct dtplan_wire_go *g,
				      struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;
	size_t n;

	memset(g, 0, sizeof(*g));
	g->delay_us = r_u32(&r, "the delay");
	g->slot_us = r_u32(&r, "the slot");
	g->n_rounds = r_u32(&r, "the round count");
	g->ping_count = r_u32(&r, "the ping count");
	g->ping_bytes = r_u32(&r, "the ping size");
	g->ping_window_us = r_u32(&r, "the ping window");
	g->bulk_us = r_u32(&r, "the bulk time");
	g->bulk_bytes = r_u64(&r, "the bulk size");
	if (r.bad == NULL && g->n_rounds > DTPLAN_PROBE_MAX_ROUNDS)
		r.bad = "the round count";
	n = r_count(&r, 4 + (size_t)g->n_rounds * (4 + 1 + 1 + ADDR_LEN), "the assignment count");
	g->assign = calloc(n + 1, sizeof(*g->assign));
	if (g->assign == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	for (size_t i = 0; i < n && r.bad == NULL; i++) {
		struct dtplan_wire_assign *a = &g->assign[i];

		a->node = r_u32(&r, "an assignment's node");
		for (uint32_t k = 0; k < DTPLAN_PROBE_MAX_ROUNDS; k++)
			a->peer[k] = -1;
		for (uint32_t k = 0; k < g->n_rounds && r.bad == NULL; k++) {
			a->peer[k] = (int32_t)r_u32(&r, "an assignment's peer");
			a->sends[k] = r_u8(&r, "an assignment's direction");
			a->kind[k] = r_u8(&r, "an assignment's round kind");
			r_addr(&r, &a->peer_addr[k], "an assignment's address");
			if (r.bad == NULL && (a->peer[k] < -1 || a->sends[k] > 1 ||
					      a->kind[k] > DTPLAN_ROUND_CONCURRENT))
				r.bad = "an assignment";
		}
		if (r.bad == NULL)
			g->n_assign++;
	}
	rv = r_finish(&r, "go", err);
	if (rv != DTPLAN_OK)
		dtplan_wire_go_fini(g);
	return rv;
}

enum dtplan_err dtplan_wire_probe_encode(const struct dtplan_wire_probe *p, uint8_t **out,
					 size_t *len, struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u32(&w, p->from);
	w_u32(&w, p->to);
	w_u32(&w, p->ping_count);
	w_u32(&w, p->ping_bytes);
	w_u32(&w, p->bulk_us);
	w_u64(&w, p->bulk_bytes);
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_probe_decode(const uint8_t *body, size_t len,
					 struct dtplan_wire_probe *p, struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;

	memset(p, 0, sizeof(*p));
	p->from = r_u32(&r, "the prober");
	p->to = r_u32(&r, "the peer");
	p->ping_count = r_u32(&r, "the ping count");
	p->ping_bytes = r_u32(&r, "the ping size");
	p->bulk_us = r_u32(&r, "the bulk time");
	p->bulk_bytes = r_u64(&r, "the bulk size");
	rv = r_finish(&r, "probe", err);
	if (rv != DTPLAN_OK)
		memset(p, 0, sizeof(*p));
	return rv;
}

enum dtplan_err dtplan_wire_report_encode(const struct dtplan_wire_report *rep, uint8_t **out,
					  size_t *len, struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u64(&w, rep->bytes);
	w_f64(&w, rep->seconds);
	w_f64(&w, rep->bandwidth_bytes_per_s);
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_report_decode(const uint8_t *body, size_t len,
					  struct dtplan_wire_report *rep, struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;

	memset(rep, 0, sizeof(*rep));
	rep->bytes = r_u64(&r, "the byte count");
	rep->seconds = r_f64(&r, "the window");
	rep->bandwidth_bytes_per_s = r_f64(&r, "the bandwidth");
	if (r.bad == NULL &&
	    (!isfinite(rep->seconds) || rep->seconds < 0 || !isfinite(rep->bandwidth_bytes_per_s) ||
	     rep->bandwidth_bytes_per_s < 0))
		r.bad = "the figures";
	rv = r_finish(&r, "report", err);
	if (rv != DTPLAN_OK)
		memset(rep, 0, sizeof(*rep));
	return rv;
}

void dtplan_wire_results_fini(struct dtplan_wire_results *res)
{
	if (res == NULL)
		return;
	free(res->done);
	free(res->links);
	memset(res, 0, sizeof(*res));
}

#define LINK_LEN (4 + 4 + 1 + 1 + 2 + 8 + 8 + 8)

enum dtplan_err dtplan_wire_results_encode(const struct dtplan_wire_results *res, uint8_t **out,
					   size_t *len, struct dtplan_error *err)
{
	struct dtplan__text w = {0};

	w_u32(&w, (uint32_t)res->n_done);
	for (size_t i = 0; i < res->n_done; i++)
		w_u32(&w, res->done[i]);
	w_u32(&w, (uint32_t)res->n);
	for (size_t i = 0; i < res->n; i++) {
		const struct dtplan_link_result *l = &res->links[i];

		w_u32(&w, l->from);
		w_u32(&w, l->to);
		w_u8(&w, l->round);
		w_u8(&w, l->flags);
		w_u16(&w, l->samples);
		w_f64(&w, l->latency_s);
		w_f64(&w, l->latency_spread_s);
		w_f64(&w, l->bandwidth_bytes_per_s);
	}
	return w_finish(&w, out, len, err);
}

enum dtplan_err dtplan_wire_results_decode(const uint8_t *body, size_t len,
					   struct dtplan_wire_results *res,
					   struct dtplan_error *err)
{
	struct rbuf r = {body, len, 0, NULL};
	enum dtplan_err rv;
	size_t n;

	memset(res, 0, sizeof(*res));
	n = r_count(&r, 4, "the node count");
	res->done = calloc(n + 1, sizeof(*res->done));
	if (res->done == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	for (size_t i = 0; i < n && r.bad == NULL; i++)
		res->done[res->n_done++] = r_u32(&r, "a node");
	n = r_count(&r, LINK_LEN, "the link count");
	res->links = calloc(n + 1, sizeof(*res->links));
	if (res->links == NULL) {
		dtplan_wire_results_fini(res);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	for (size_t i = 0; i < n && r.bad == NULL; i++) {
		struct dtplan_link_result *l = &res->links[i];

		l->from = r_u32(&r, "a link's prober");
		l->to = r_u32(&r, "a link's peer");
		l->round = r_u8(&r, "a link's round");
		l->flags = r_u8(&r, "a link's flags");
		l->samples = r_u16(&r, "a link's samples");
		l->latency_s = r_f64(&r, "a link's latency");
		l->latency_spread_s = r_f64(&r, "a link's spread");
		l->bandwidth_bytes_per_s = r_f64(&r, "a link's bandwidth");
		if (r.bad == NULL &&
		    (l->round < 1 || l->round > DTPLAN_PROBE_MAX_ROUNDS || l->from == l->to ||
		     !isfinite(l->latency_s) || l->latency_s < 0 ||
		     !isfinite(l->latency_spread_s) || l->latency_spread_s < 0 ||
		     !isfinite(l->bandwidth_bytes_per_s) || l->bandwidth_bytes_per_s < 0))
			r.bad = "a link";
		if (r.bad == NULL)
			res->n++;
	}
	rv = r_finish(&r, "results", err);
	if (rv != DTPLAN_OK)
		dtplan_wire_results_fini(res);
	return rv;
}

enum dtplan_err dtplan_wire_body_check(unsigned type, const uint8_t *body, size_t len,
				       struct dtplan_error *err)
{
	enum dtplan_err rv;

	switch (type) {
	case DTPLAN_WIRE_JOIN: {
		struct dtplan_wire_join j;

		return dtplan_wire_join_decode(body, len, &j, err);
	}
	case DTPLAN_WIRE_INVENTORY: {
		struct dtplan_wire_inventory v;

		rv = dtplan_wire_inventory_decode(body, len, DTPLAN_HOSTLIST_MAX, &v, err);
		dtplan_wire_inventory_fini(&v);
		return rv;
	}
	case DTPLAN_WIRE_GO: {
		struct dtplan_wire_go g;

		rv = dtplan_wire_go_decode(body, len, &g, err);
		dtplan_wire_go_fini(&g);
		return rv;
	}
	case DTPLAN_WIRE_PROBE: {
		struct dtplan_wire_probe p;

		return dtplan_wire_probe_decode(body, len, &p, err);
	}
	case DTPLAN_WIRE_REPORT: {
		struct dtplan_wire_report rep;

		return dtplan_wire_report_decode(body, len, &rep, err);
	}
	case DTPLAN_WIRE_RESULTS: {
		struct dtplan_wire_results res;

		rv = dtplan_wire_results_decode(body, len, &res, err);
		dtplan_wire_results_fini(&res);
		return rv;
	}
	default:
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "unknown message type %u",
				     type);
	}
}
