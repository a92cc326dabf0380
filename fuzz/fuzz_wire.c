/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_wire.c: a probe message as a node of the measurement receives it
 * from the network (lib/measure/wire.c): the frame (header, credential, body),
 * then its body by the header's type; the input's bytes are also read as
 * each body type directly.  Properties: a frame that decodes is exactly
 * its parts, within their caps; a body that decodes encodes again.
 */
#include "fuzz.h"

#include "dtplan.h"

/* Decodes body as a body of type t and encodes it again. */
static void body(unsigned t, const uint8_t *b, size_t len)
{
	uint8_t *out = NULL;
	size_t n = 0;

	switch (t) {
	case DTPLAN_WIRE_JOIN: {
		struct dtplan_wire_join j;

		if (dtplan_wire_join_decode(b, len, &j, NULL) == DTPLAN_OK)
			DTPLAN_FUZZ_CHECK(dtplan_wire_join_encode(&j, &out, &n, NULL) == DTPLAN_OK);
		break;
	}
	case DTPLAN_WIRE_INVENTORY: {
		struct dtplan_wire_inventory v;

		if (dtplan_wire_inventory_decode(b, len, DTPLAN_HOSTLIST_MAX, &v, NULL) ==
		    DTPLAN_OK) {
			DTPLAN_FUZZ_CHECK(dtplan_wire_inventory_encode(&v, &out, &n, NULL) ==
					  DTPLAN_OK);
			dtplan_wire_inventory_fini(&v);
		}
		break;
	}
	case DTPLAN_WIRE_GO: {
		struct dtplan_wire_go g;

		if (dtplan_wire_go_decode(b, len, &g, NULL) == DTPLAN_OK) {
			DTPLAN_FUZZ_CHECK(dtplan_wire_go_encode(&g, &out, &n, NULL) == DTPLAN_OK);
			dtplan_wire_go_fini(&g);
		}
		break;
	}
	case DTPLAN_WIRE_PROBE: {
		struct dtplan_wire_probe p;

		if (dtplan_wire_probe_decode(b, len, &p, NULL) == DTPLAN_OK)
			DTPLAN_FUZZ_CHECK(dtplan_wire_probe_encode(&p, &out, &n, NULL) ==
					  DTPLAN_OK);
		break;
	}
	case DTPLAN_WIRE_REPORT: {
		struct dtplan_wire_report r;

		if (dtplan_wire_report_decode(b, len, &r, NULL) == DTPLAN_OK)
			DTPLAN_FUZZ_CHECK(dtplan_wire_report_encode(&r, &out, &n, NULL) ==
					  DTPLAN_OK);
		break;
	}
	case DTPLAN_WIRE_RESULTS: {
		struct dtplan_wire_results r;

		if (dtplan_wire_results_decode(b, len, &r, NULL) == DTPLAN_OK) {
			DTPLAN_FUZZ_CHECK(dtplan_wire_results_encode(&r, &out, &n, NULL) ==
					  DTPLAN_OK);
			dtplan_wire_results_fini(&r);
		}
		break;
	}
	default:
		break;
	}
	free(out);
}

DTPLAN_FUZZ_TARGET(wire)
{
	struct dtplan_wire_frame f;

	if (dtplan_wire_frame_decode(data, size, &f, NULL) == DTPLAN_OK) {
		DTPLAN_FUZZ_CHECK(f.h.cred_len <= DTPLAN_WIRE_CRED_MAX &&
				  f.h.body_len <= dtplan_wire_body_max(f.h.type));
		DTPLAN_FUZZ_CHECK(DTPLAN_WIRE_HEADER_LEN + (size_t)f.h.cred_len + f.h.body_len ==
				  size);
		body(f.h.type, f.body, f.h.body_len);
	}
	if (size > 0)
		body(1 + data[0] % (DTPLAN_WIRE__LAST - 1), data + 1, size - 1);
	return 0;
}
