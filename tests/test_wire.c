/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_wire.c: the probe's wire format (lib/measure/wire.c) and the SHA-256 its seal
 * uses (lib/base/sha256.c): headers, frames, seals, every body type, and hostile
 * input (short, oversized, truncated at every byte, trailing bytes, counts
 * larger than the message).
 */
#include "test_common.h"

#include "dtplan.h"
#include "base/base.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-4 examples and the empty message. */
static void sha256__known_vectors(void **state)
{
	static const struct {
		const char *in;
		const char *digest;
	} cases[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	uint8_t d[32];
	char h[65];
	char *million;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dtplan__sha256(cases[i].in, strlen(cases[i].in), d);
		hex(d, 32, h);
		assert_string_equal(h, cases[i].digest);
	}
	/* one million 'a': many blocks */
	million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	dtplan__sha256(million, 1000000, d);
	hex(d, 32, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static struct dtplan_wire_header header(uint8_t type, uint32_t body_len)
{
	struct dtplan_wire_header h = {
		.version = DTPLAN_WIRE_VERSION,
		.type = type,
		.cred_len = 200,
		.job_id = 4242,
		.session = 0,
		.round = 3,
		.sender = 7,
		.body_len = body_len,
	};

	return h;
}

static void header__round_trip__same_fields(void **state)
{
	struct dtplan_wire_header h = header(DTPLAN_WIRE_RESULTS, 1234), g;
	uint8_t buf[DTPLAN_WIRE_HEADER_LEN];

	(void)state;
	dtplan_wire_header_encode(&h, buf);
	assert_memory_equal(buf, "DTPW", 4);
	assert_int_equal(dtplan_wire_header_decode(buf, sizeof(buf), &g, NULL), DTPLAN_OK);
	assert_memory_equal(&g, &h, sizeof(h));
}

/* Each bad header is refused with a message naming what is wrong. */
static void header__bad__refused_with_reason(void **state)
{
	static const struct {
		const char *what;
		size_t offset; /* byte to overwrite (big-endian value of `width` bytes) */
		int width;
		uint32_t value;
		const char *message;
	} cases[] = {
		{"magic", 0, 1, 'X', "bad magic"},
		{"version", 4, 1, 1, "protocol version 1 (this dtplan speaks 2)"},
		{"type 0", 5, 1, 0, "unknown message type 0"},
		{"type 99", 5, 1, 99, "unknown message type 99"},
		{"no credential", 6, 2, 0, "without a credential"},
		{"credential", 6, 2, DTPLAN_WIRE_CRED_MAX + 1, "credential of 2049 bytes"},
		{"join body", 24, 4, 65, "join body of 65 bytes (at most 64)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_wire_header h = header(DTPLAN_WIRE_JOIN, 23), g;
		struct dtplan_error err = {0};
		uint8_t buf[DTPLAN_WIRE_HEADER_LEN];

		dtplan_wire_header_encode(&h, buf);
		for (int b = 0; b < cases[i].width; b++)
			buf[cases[i].offset + (size_t)b] =
				(uint8_t)(cases[i].value >> (8 * (cases[i].width - 1 - b)));
		assert_int_equal(dtplan_wire_header_decode(buf, sizeof(buf), &g, &err),
				 DTPLAN_ERR_PARSE);
		if (strstr(err.text, cases[i].message) == NULL)
			fail_msg("%s: '%s' does not say '%s'", cases[i].what, err.text,
				 cases[i].message);
	}
	/* short */
	{
		struct dtplan_wire_header g;
		struct dtplan_error err = {0};
		uint8_t buf[DTPLAN_WIRE_HEADER_LEN] = {'D', 'T', 'P', 'W'};

		assert_int_equal(dtplan_wire_header_decode(buf, 27, &g, &err), DTPLAN_ERR_PARSE);
		assert_non_null(strstr(err.text, "truncated header (27 of 28 bytes)"));
	}
	/* oversized bodies of the big types */
	{
		struct dtplan_wire_header h = header(DTPLAN_WIRE_INVENTORY, 64u << 20), g;
		struct dtplan_error err = {0};
		uint8_t buf[DTPLAN_WIRE_HEADER_LEN];

		dtplan_wire_header_encode(&h, buf);
		assert_int_equal(dtplan_wire_header_decode(buf, sizeof(buf), &g, NULL), DTPLAN_OK);
		h.body_len = (64u << 20) + 1;
		dtplan_wire_header_encode(&h, buf);
		assert_int_equal(dtplan_wire_header_decode(buf, sizeof(buf), &g, &err),
				 DTPLAN_ERR_PARSE);
		assert_non_null(strstr(err.text, "inventory body of 67108865 bytes"));
	}
}

static void frame__round_trip_truncated_trailing(void **state)
{
	struct dtplan_wire_header h = header(DTPLAN_WIRE_PROBE, 0);
	struct dtplan_wire_frame f;
	struct dtplan_error err = {0};
	const char *cred = "MUNGE:AwQFAAAAAAAAAAA=:";
	uint8_t *buf = NULL, *big;
	size_t len = 0;

	(void)state;
	assert_int_equal(dtplan_wire_frame_encode(&h, cred, "0123456789", 10, &buf, &len, &err),
			 DTPLAN_OK);
	assert_int_equal(len, DTPLAN_WIRE_HEADER_LEN + strlen(cred) + 10);
	assert_int_equal(dtplan_wire_frame_decode(buf, len, &f, &err), DTPLAN_OK);
	assert_int_equal(f.h.cred_len, strlen(cred));
	assert_int_equal(f.h.body_len, 10);
	assert_memory_equal(f.cred, cred, strlen(cred));
	assert_memory_equal(f.body, "0123456789", 10);
	assert_int_equal(dtplan_wire_frame_decode(buf, len - 1, &f, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "truncated probe message"));
	big = malloc(len + 1);
	assert_non_null(big);
	memcpy(big, buf, len);
	big[len] = 'x';
	assert_int_equal(dtplan_wire_frame_decode(big, len + 1, &f, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "1 bytes after the end of a probe message"));
	free(big);
	free(buf);
	/* over the caps: nothing is built */
	assert_int_equal(dtplan_wire_frame_encode(&h, cred, "x", 65, &buf, &len, &err),
			 DTPLAN_ERR_RANGE);
	assert_null(buf);
}

static void seal__binds_job_round_sender_body(void **state)
{
	struct dtplan_wire_header h = header(DTPLAN_WIRE_INVENTORY, 5), other;
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN];
	struct dtplan_error err = {0};

	(void)state;
	dtplan_wire_seal(&h, "hello", seal);
	assert_int_equal(dtplan_wire_check_seal(&h, "hello", seal, sizeof(seal), &err), DTPLAN_OK);
	/* another job's credential */
	other = h;
	other.job_id = 4243;
	assert_int_equal(dtplan_wire_check_seal(&other, "hello", seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	assert_non_null(strstr(err.text, "made for job 4242, the message says 4243"));
	/* another round */
	other = h;
	other.round = 4;
	assert_int_equal(dtplan_wire_check_seal(&other, "hello", seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	assert_non_null(strstr(err.text, "round 3"));
	/* another sender or another body */
	other = h;
	other.sender = 1;
	assert_int_equal(dtplan_wire_check_seal(&other, "hello", seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	assert_int_equal(dtplan_wire_check_seal(&h, "hellp", seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	assert_non_null(strstr(err.text, "another inventory message"));
	/* the fields alone, before the body is read */
	assert_int_equal(dtplan_wire_check_seal_fields(&h, seal, sizeof(seal), &err), DTPLAN_OK);
	other = h;
	other.job_id = 1;
	assert_int_equal(dtplan_wire_check_seal_fields(&other, seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	other = h;
	other.body_len = 6;
	assert_int_equal(dtplan_wire_check_seal_fields(&other, seal, sizeof(seal), &err),
			 DTPLAN_ERR_POLICY);
	/* not a seal at all */
	assert_int_equal(dtplan_wire_check_seal(&h, "hello", "x", 1, &err), DTPLAN_ERR_POLICY);
	assert_non_null(strstr(err.text, "no dtplan seal"));
}

/* Every strict prefix of a valid body fails to decode, and so does the body
 * with a byte more; the whole body decodes. */
static void check_prefixes(unsigned type, const uint8_t *body, size_t len)
{
	uint8_t *more = malloc(len + 1);

	assert_non_null(more);
	assert_int_equal(dtplan_wire_body_check(type, body, len, NULL), DTPLAN_OK);
	for (size_t n = 0; n < len; n++)
		if (dtplan_wire_body_check(type, body, n, NULL) != DTPLAN_ERR_PARSE)
			fail_msg("%s body: a prefix of %zu of %zu bytes decoded",
				 dtplan_wire_type_name(type), n, len);
	memcpy(more, body, len);
	more[len] = 0;
	assert_int_equal(dtplan_wire_body_check(type, more, len + 1, NULL), DTPLAN_ERR_PARSE);
	free(more);
}

static void join__round_trip(void **state)
{
	struct dtplan_wire_join j, k;
	uint8_t *b = NULL;
	size_t n = 0;

	(void)state;
	memset(&j, 0, sizeof(j)); /* padding too: compared with memcmp */
	j.n_nodes = 8;
	j.addr.family = 4;
	j.addr.port = 29001;
	memcpy(j.addr.addr, "\x0a\xd5\x01\x02", 4);
	assert_int_equal(dtplan_wire_join_encode(&j, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(n, 4 + 19);
	assert_int_equal(dtplan_wire_join_decode(b, n, &k, NULL), DTPLAN_OK);
	assert_memory_equal(&j, &k, sizeof(j));
	check_prefixes(DTPLAN_WIRE_JOIN, b, n);
	b[4] = 5; /* address family 5 */
	assert_int_equal(dtplan_wire_join_decode(b, n, &k, NULL), DTPLAN_ERR_PARSE);
	free(b);
}

static void inventory__round_trip_and_hostile(void **state)
{
	char *records[] = {"{\"a\": 1}", "{\"b\": 2}"};
	struct dtplan_wire_entry entries[3] = {
		{.node = 0, .record = 0, .addr = {.family = 4, .port = 1}},
		{.node = 5, .record = 1, .addr = {.family = 6, .port = 2}},
		{.node = 7, .record = DTPLAN_WIRE_NO_RECORD, .note = "hwloc discovery failed"},
	};
	struct dtplan_wire_inventory v = {2, records, 3, entries}, w;
	struct dtplan_error err = {0};
	uint8_t *b = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(dtplan_wire_inventory_encode(&v, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_inventory_decode(b, n, 8, &w, NULL), DTPLAN_OK);
	assert_int_equal(w.n_records, 2);
	assert_string_equal(w.records[1], "{\"b\": 2}");
	assert_int_equal(w.n_entries, 3);
	assert_int_equal(w.entries[1].node, 5);
	assert_int_equal(w.entries[1].addr.family, 6);
	assert_int_equal(w.entries[2].record, DTPLAN_WIRE_NO_RECORD);
	assert_string_equal(w.entries[2].note, "hwloc discovery failed");
	dtplan_wire_inventory_fini(&w);
	check_prefixes(DTPLAN_WIRE_INVENTORY, b, n);
	/* more entries, or records, than the job has nodes: refused before the
	 * entries (about 300 bytes each in memory, 29 on the wire) are allocated */
	assert_int_equal(dtplan_wire_inventory_decode(b, n, 2, &w, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "the entry count (more than the job's nodes)"));
	assert_null(w.entries);
	assert_int_equal(dtplan_wire_inventory_decode(b, n, 1, &w, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "the record count (more than the job's nodes)"));
	/* a record count of 2^32 - 1 in a short body: refused, nothing allocated */
	b[0] = b[1] = b[2] = b[3] = 0xff;
	assert_int_equal(dtplan_wire_inventory_decode(b, n, DTPLAN_HOSTLIST_MAX, &w, &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "the record count"));
	assert_null(w.records);
	free(b);
	/* an entry naming a record that is not there */
	entries[0].record = 2;
	assert_int_equal(dtplan_wire_inventory_encode(&v, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_inventory_decode(b, n, 8, &w, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "record index"));
	free(b);
}

static void go__round_trip(void **state)
{
	struct dtplan_wire_assign a[2];
	struct dtplan_wire_go g = {.delay_us = 50000,
				   .slot_us = 350000,
				   .n_rounds = 4,
				   .ping_count = 32,
				   .ping_bytes = 64,
				   .ping_window_us = 40000,
				   .bulk_us = 200000,
				   .bulk_bytes = 32u << 20,
				   .n_assign = 2,
				   .assign = a},
			      h;
	uint8_t *b = NULL;
	size_t n = 0;

	(void)state;
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		a[i].node = (uint32_t)i * 3;
		for (int k = 0; k < DTPLAN_PROBE_MAX_ROUNDS; k++)
			a[i].peer[k] = k < 4 ? k + i : -1;
		a[i].sends[1] = 1;
		a[i].kind[3] = DTPLAN_ROUND_CONCURRENT;
		a[i].peer_addr[2].family = 4;
		a[i].peer_addr[2].port = 29500;
	}
	assert_int_equal(dtplan_wire_go_encode(&g, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(n, 40 + 2 * (4 + 4 * (4 + 1 + 1 + 19)));
	assert_int_equal(dtplan_wire_go_decode(b, n, &h, NULL), DTPLAN_OK);
	assert_int_equal(h.n_assign, 2);
	assert_int_equal(h.bulk_bytes, 32u << 20);
	assert_memory_equal(&h.assign[1], &a[1], sizeof(a[1]));
	dtplan_wire_go_fini(&h);
	check_prefixes(DTPLAN_WIRE_GO, b, n);
	b[11] = 6; /* six rounds: more than a schedule has */
	assert_int_equal(dtplan_wire_go_decode(b, n, &h, NULL), DTPLAN_ERR_PARSE);
	free(b);
}

static void probe_report_results__round_trip(void **state)
{
	struct dtplan_wire_probe p = {1, 2, 32, 64, 200000, 1u << 25}, q;
	struct dtplan_wire_report r = {12345678, 0.15, 1.1875e8}, s;
	struct dtplan_link_result links[2] = {
		{0, 1, 1, DTPLAN_LINK_OK, 32, 50e-6, 4e-6, 1.1875e8},
		{5, 1, 4, DTPLAN_LINK_OK | DTPLAN_LINK_CONCURRENT | DTPLAN_LINK_CROSS, 30, 1.05e-3,
		 2e-5, 1.19e7},
	};
	uint32_t done[3] = {0, 5, 6};
	struct dtplan_wire_results res = {3, done, 2, links}, out;
	uint8_t *b = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(dtplan_wire_probe_encode(&p, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_probe_decode(b, n, &q, NULL), DTPLAN_OK);
	assert_true(q.from == 1 && q.to == 2 && q.ping_count == 32 && q.ping_bytes == 64 &&
		    q.bulk_us == 200000 && q.bulk_bytes == 1u << 25);
	check_prefixes(DTPLAN_WIRE_PROBE, b, n);
	free(b);
	assert_int_equal(dtplan_wire_report_encode(&r, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_report_decode(b, n, &s, NULL), DTPLAN_OK);
	assert_memory_equal(&r, &s, sizeof(r));
	check_prefixes(DTPLAN_WIRE_REPORT, b, n);
	free(b);
	assert_int_equal(dtplan_wire_results_encode(&res, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(n, 4 + 3 * 4 + 4 + 2 * 36);
	assert_int_equal(dtplan_wire_results_decode(b, n, &out, NULL), DTPLAN_OK);
	assert_int_equal(out.n_done, 3);
	assert_int_equal(out.done[2], 6);
	assert_int_equal(out.n, 2);
	for (int i = 0; i < 2; i++) {
		const struct dtplan_link_result *x = &out.links[i], *y = &links[i];

		assert_true(x->from == y->from && x->to == y->to && x->round == y->round &&
			    x->flags == y->flags && x->samples == y->samples);
		assert_true(x->latency_s == y->latency_s &&
			    x->latency_spread_s == y->latency_spread_s &&
			    x->bandwidth_bytes_per_s == y->bandwidth_bytes_per_s);
	}
	dtplan_wire_results_fini(&out);
	check_prefixes(DTPLAN_WIRE_RESULTS, b, n);
	free(b);
	/* a negative bandwidth or a link of a node with itself is refused */
	links[0].bandwidth_bytes_per_s = -1;
	assert_int_equal(dtplan_wire_results_encode(&res, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_results_decode(b, n, &out, NULL), DTPLAN_ERR_PARSE);
	free(b);
	links[0].bandwidth_bytes_per_s = 1;
	links[0].to = 0;
	assert_int_equal(dtplan_wire_results_encode(&res, &b, &n, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_wire_results_decode(b, n, &out, NULL), DTPLAN_ERR_PARSE);
	free(b);
	assert_int_equal(dtplan_wire_body_check(0, NULL, 0, NULL), DTPLAN_ERR_PARSE);
	assert_string_equal(dtplan_wire_type_name(DTPLAN_WIRE_GO), "go");
	assert_string_equal(dtplan_wire_type_name(77), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256__known_vectors),
		cmocka_unit_test(header__round_trip__same_fields),
		cmocka_unit_test(header__bad__refused_with_reason),
		cmocka_unit_test(frame__round_trip_truncated_trailing),
		cmocka_unit_test(seal__binds_job_round_sender_body),
		cmocka_unit_test(join__round_trip),
		cmocka_unit_test(inventory__round_trip_and_hostile),
		cmocka_unit_test(go__round_trip),
		cmocka_unit_test(probe_report_results__round_trip),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
