/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_posted.c: what a collector takes (lib/json/posted_json.c): each
 * kind's members and types, and the refusals, each with its code and the
 * message dtplan serve answers with.
 */
#include "test_common.h"

#include <jansson.h>

#define REPORT_HEAD                                                                                \
	"{\"schema\":\"dtplan.report/1\",\"sender\":\"t\",\"time\":null,\"cluster\":\"c\","        \
	"\"job_id\":1,\"user\":\"u\",\"uid\":0,\"nodes\":null,\"host\":\"h\",\"state\":\"ok\","    \
	"\"warnings\":[]"
#define OBS_HEAD                                                                                   \
	"{\"schema\":\"dtplan.observation/1\",\"job_id\":7,\"user\":\"u\",\"cluster\":\"c\","      \
	"\"gpu\":\"g\",\"model\":\"m\",\"framework\":\"f\",\"predicted_step_s\":1,"                \
	"\"measured_step_s\":1.5,\"measured_step_spread_s\":0,\"steps\":3,\"checkpoint_s\":null,"  \
	"\"time\":\"t\""

struct posted_case {
	const char *name;
	const char *text;
	enum dtplan_err rv;
	enum dtplan_posted_kind kind; /* with DTPLAN_OK */
	const char *message;          /* a part of err.text otherwise */
};

static const struct posted_case cases[] = {
	{"report__whole__taken", REPORT_HEAD ",\"plan\":{\"schema\":\"dtplan.plan/1\"}}", DTPLAN_OK,
	 DTPLAN_POSTED_REPORT, NULL},
	{"report__no_plan__taken", REPORT_HEAD ",\"plan\":null}", DTPLAN_OK, DTPLAN_POSTED_REPORT,
	 NULL},
	{"report__plan_without_schema__refused", REPORT_HEAD ",\"plan\":{}}", DTPLAN_ERR_PARSE, 0,
	 "\"plan\" has no \"schema\""},
	{"report__job_id_string__refused",
	 "{\"schema\":\"dtplan.report/1\",\"sender\":null,\"time\":null,\"cluster\":null,"
	 "\"job_id\":\"47\"}",
	 DTPLAN_ERR_PARSE, 0, "\"job_id\" must be an integer or null"},
	{"report__no_state__refused",
	 "{\"schema\":\"dtplan.report/1\",\"sender\":null,"
	 "\"time\":null,\"cluster\":null,\"job_id\":null,\"user\":null,"
	 "\"uid\":null,\"nodes\":null,\"host\":null}",
	 DTPLAN_ERR_PARSE, 0, "no member \"state\""},
	{"observation__whole__taken", OBS_HEAD ",\"fingerprint\":\"09af\"}", DTPLAN_OK,
	 DTPLAN_POSTED_OBSERVATION, NULL},
	{"observation__fingerprint_upper__refused", OBS_HEAD ",\"fingerprint\":\"09AF\"}",
	 DTPLAN_ERR_PARSE, 0, "\"fingerprint\" must be lowercase hex, not '09AF'"},
	{"observation__fingerprint_empty__refused", OBS_HEAD ",\"fingerprint\":\"\"}",
	 DTPLAN_ERR_PARSE, 0, "\"fingerprint\" must be lowercase hex"},
	{"observation__measured_1e300__range",
	 "{\"schema\":\"dtplan.observation/1\",\"job_id\":7,\"user\":\"u\",\"cluster\":\"c\","
	 "\"gpu\":\"g\",\"model\":\"m\",\"framework\":\"f\",\"predicted_step_s\":1,"
	 "\"measured_step_s\":1e300,\"measured_step_spread_s\":0,\"steps\":3,"
	 "\"checkpoint_s\":null,\"time\":\"t\",\"fingerprint\":\"09af\"}",
	 DTPLAN_ERR_RANGE, 0, "\"measured_step_s\" is 1e+300, outside its physical range"},
	{"observation__predicted_denormal__range",
	 "{\"schema\":\"dtplan.observation/1\",\"job_id\":7,\"user\":\"u\",\"cluster\":\"c\","
	 "\"gpu\":\"g\",\"model\":\"m\",\"framework\":\"f\",\"predicted_step_s\":1e-310,"
	 "\"measured_step_s\":1,\"measured_step_spread_s\":0,\"steps\":3,"
	 "\"checkpoint_s\":null,\"time\":\"t\",\"fingerprint\":\"09af\"}",
	 DTPLAN_ERR_RANGE, 0, "\"predicted_step_s\" is"},
	{"report__uplink_oversubscription_negative__range",
	 REPORT_HEAD ",\"plan\":{\"schema\":\"dtplan.plan/1\",\"measurements\":{\"uplinks\":"
		     "[{\"switch\":\"s\",\"oversubscription\":-5}]}}}",
	 DTPLAN_ERR_RANGE, 0, "an uplink's \"oversubscription\" is -5"},
	{"measurement__tier_bandwidth_negative__range",
	 "{\"schema\":\"dtplan.measurements/1\",\"job_id\":5,\"measurements\":{\"tiers\":"
	 "{\"ib\":{\"bandwidth_bytes_per_s\":-1}}}}",
	 DTPLAN_ERR_RANGE, 0, "a tier's \"bandwidth_bytes_per_s\" is -1"},
	{"measurement__whole__taken",
	 "{\"schema\":\"dtplan.measurements/1\",\"job_id\":5,\"measurements\":{}}", DTPLAN_OK,
	 DTPLAN_POSTED_MEASUREMENT, NULL},
	{"measurement__array__refused",
	 "{\"schema\":\"dtplan.measurements/1\",\"job_id\":5,\"measurements\":[]}",
	 DTPLAN_ERR_PARSE, 0, "\"measurements\" must be an object"},
	{"schema__other__unsupported", "{\"schema\":\"something/else\"}", DTPLAN_ERR_UNSUPPORTED, 0,
	 "schema 'something/else' is not one the collector takes"},
	{"schema__missing__unsupported", "{}", DTPLAN_ERR_UNSUPPORTED, 0, "no \"schema\" string"},
	{"schema__number__unsupported", "{\"schema\":1}", DTPLAN_ERR_UNSUPPORTED, 0,
	 "no \"schema\" string"},
	{"array__refused", "[]", DTPLAN_ERR_PARSE, 0, "must be a JSON object"},
	{"garbage__refused", "{not json", DTPLAN_ERR_PARSE, 0, "not JSON: line 1: "},
	{"empty__refused", "", DTPLAN_ERR_PARSE, 0, "not JSON: "},
	{"duplicate_key__refused", "{\"schema\":\"a\",\"schema\":\"b\"}", DTPLAN_ERR_PARSE, 0,
	 "duplicate"},
	{"deep__refused",
	 "{\"schema\":\"dtplan.measurements/1\",\"job_id\":1,\"measurements\":"
	 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
	 DTPLAN_ERR_PARSE, 0, "nested more than"},
};

static void posted_parse__table__expected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct posted_case *c = &cases[i];
		struct dtplan_error err = {0};
		enum dtplan_posted_kind kind = DTPLAN_POSTED__LAST;
		struct json_t *doc = (struct json_t *)&err; /* set to NULL on failure */
		enum dtplan_err rv;

		rv = dtplan_posted_parse(c->text, strlen(c->text), &doc, &kind, &err);
		if (rv != c->rv)
			fail_msg("%s: returned %d (%s), expected %d", c->name, rv, err.text, c->rv);
		if (rv == DTPLAN_OK) {
			assert_non_null(doc);
			assert_true(json_is_object(doc));
			if (kind != c->kind)
				fail_msg("%s: kind %d, expected %d", c->name, kind, c->kind);
		} else {
			assert_null(doc);
			if (strstr(err.text, c->message) == NULL)
				fail_msg("%s: message '%s' lacks '%s'", c->name, err.text,
					 c->message);
			assert_string_equal(err.source, "report");
		}
		json_decref(doc);
	}
}

/* The length given is read, not a NUL: a body is not NUL-terminated. */
static void posted_parse__length__bounds_text(void **state)
{
	static const char text[] = "{\"schema\":\"dtplan.measurements/1\",\"job_id\":5,"
				   "\"measurements\":{}}trailing garbage";
	struct json_t *doc = NULL;
	enum dtplan_posted_kind kind;

	(void)state;
	assert_int_equal(dtplan_posted_parse(text, (size_t)(strstr(text, "trailing") - text), &doc,
					     &kind, NULL),
			 DTPLAN_OK);
	assert_int_equal(kind, DTPLAN_POSTED_MEASUREMENT);
	json_decref(doc);
	assert_int_equal(dtplan_posted_parse(text, strlen(text), &doc, &kind, NULL),
			 DTPLAN_ERR_PARSE);
	assert_null(doc);
}

static void posted_parse__null__inval(void **state)
{
	struct json_t *doc = NULL;
	enum dtplan_posted_kind kind;

	(void)state;
	assert_int_equal(dtplan_posted_parse(NULL, 0, &doc, &kind, NULL), DTPLAN_ERR_INVAL);
	assert_null(doc);
	assert_int_equal(dtplan_posted_parse("{}", 2, NULL, &kind, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_posted_parse("{}", 2, &doc, NULL, NULL), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(posted_parse__table__expected),
		cmocka_unit_test(posted_parse__length__bounds_text),
		cmocka_unit_test(posted_parse__null__inval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
