/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_http.c: the collector's HTTP server (libmicrohttpd) and the trust a
 * report needs.
 *
 * POST / takes one document: a plan report (dtplan.report/1), a job's
 * observed step times (dtplan.observation/1) or a prolog's measurements
 * (dtplan.measurements/1).  In order, a report is refused (and counted
 * under its reason) when its address posts faster than the rate (429), its
 * body is larger than max_body (413, before it is read when Content-Length
 * says so), it has no MUNGE credential in DTPLAN_REPORT_CRED_HEADER (401),
 * the credential is not one of munged's key for this body, has expired or
 * was seen before (403, 403, 409: remembered in the store until its time to
 * live has passed, on top of munged's own replay cache), the body is not a
 * document of those kinds (400, dtplan_posted_parse()), or the credential's uid is neither root (a
 * node's plugin) nor the uid of the user the report names (403).
 *
 * GET answers what serve_page.c and serve_view.c write: the dashboard at /,
 * a job's page at /job/ID (a report's at /report/ID), a leaf's or a rack's
 * nodes at /fabric/leaf/NAME and /fabric/rack/NAME, /metrics, /fabric,
 * /calibration and /plan/ID.svg; /healthz answers 200 "ok" when the store
 * answers a trivial SELECT (its lock had within SERVE_HEALTH_TIMEOUT_S),
 * 503 and why otherwise.  Nothing else is served.
 *
 * Every refusal is logged to stderr with the client's address, the
 * poster's uid once its credential is checked, and why: SERVE_LOG_PER_S
 * lines a second at most, then a line saying how many were suppressed.
 *
 * Every connection is bounded: idle ones close after SERVE_TIMEOUT_S, and
 * every one, trickling or not, request_timeout after it opened (the
 * reaper); at most SERVE_CONNECTIONS at once (SERVE_PER_ADDRESS per
 * address), so a client that holds connections open costs the others
 * nothing but its share.  The rate is kept per exact address.
 *
 * The trust (doc/internals/collector.md): measurements only from root; a
 * user's plan is kept for its page but its fabric figures are not (the
 * store keeps those of root's reports only); figures out of their
 * physical range are refused ("range", dtplan_posted_parse()); a poster's
 * reports share its budget of the store.
 */
#include "config.h"

#include "serve_int.h"
#include "dtprobes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Addresses the rate is kept for: an exact table (each slot holds its
 * address and is found by comparing it), the least recently used slot
 * reused for a new address.  No two addresses share a bucket. */
#define RATE_SLOTS 1024

/* Refusals logged a second at most. */
#define SERVE_LOG_PER_S 10

/* One address's token bucket. */
struct rate_slot {
	char addr[INET6_ADDRSTRLEN];
	double tokens, last;
};

/* Open connections, for the whole-request deadline (SERVE_CONNECTIONS of
 * them at most, so the table has room for each). */
struct conn_slot {
	struct MHD_Connection *c;
	int fd;
	double started;
};

struct server {
	const struct serve_opts *o;
	struct serve_store *st;
	json_t *fabric;          /* the --fabric file; NULL: none */
	struct serve_site *site; /* its leaves, nodes and racks (read only) */
	struct MHD_Daemon *d;
	pthread_mutex_t lock;           /* counters, rates and the log's budget */
	struct serve_counters counters; /* refusals not yet in the store */
	double flushed;                 /* when they were last added to it */
	double log_second;              /* the second the log's budget is of */
	int log_lines;                  /* refusals logged in it */
	unsigned long long suppressed;  /* and those not logged */
	struct rate_slot rates[RATE_SLOTS];
	/* the reaper: closes connections older than request_timeout */
	pthread_mutex_t conn_lock;
	pthread_cond_t conn_wake;
	pthread_t reaper;
	bool reaper_started, stopping;
	struct conn_slot conns[SERVE_CONNECTIONS + 16];
};

/* A request's state, from its first call to its completion. */
struct request {
	char *body;
	size_t len, cap;
	bool over;    /* more than max_body: read and dropped */
	bool limited; /* refused by the rate */
	char addr[INET6_ADDRSTRLEN];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *reason_at(int k)
{
	return serve_reason_name((enum serve_reason)k);
}

/* Adds the refusals counted to the store's counters; call with s->lock
 * held (the store's is taken after it, never before).  Kept for the next
 * time when the store fails. */
static void flush_refused(struct server *s)
{
	if (serve_store_count(s->st, "refused", s->counters.refused, SERVE_N_REASONS, reason_at))
		memset(&s->counters, 0, sizeof(s->counters));
	s->flushed = now_s();
}

/* Counts refusal r and logs it to stderr with the client's address, the
 * poster's uid when known (uid >= 0) and why: SERVE_LOG_PER_S lines a
 * second at most, then one line saying how many were not logged. */
static void count_refused(struct server *s, enum serve_reason r, const char *addr, long long uid,
			  const char *why)
{
	double t = now_s();
	unsigned long long suppressed = 0;
	bool log;
	char who[32] = "";

	pthread_mutex_lock(&s->lock);
	s->counters.refused[r]++;
	if (t - s->flushed >= 1.0)
		flush_refused(s);
	if (t - s->log_second >= 1.0) {
		suppressed = s->suppressed;
		s->suppressed = 0;
		s->log_second = t;
		s->log_lines = 0;
	}
	log = s->log_lines < SERVE_LOG_PER_S;
	if (log)
		s->log_lines++;
	else
		s->suppressed++;
	pthread_mutex_unlock(&s->lock);
	if (suppressed > 0 && s->o->json)
		serve_json_line(stderr, "suppressed",
				json_pack("{s:I}", "lines", (json_int_t)suppressed));
	else if (suppressed > 0)
		fprintf(stderr, "dtplan serve: suppressed %llu refusal lines\n", suppressed);
	if (!log)
		return;
	if (s->o->json) {
		serve_json_line(stderr, "refused",
				json_pack("{s:s, s:o, s:s, s:s}", "address",
					  addr != NULL ? addr : "?", "uid",
					  uid >= 0 ? json_integer(uid) : json_null(), "reason",
					  serve_reason_name(r), "message", why != NULL ? why : ""));
		return;
	}
	if (uid >= 0)
		snprintf(who, sizeof(who), " uid %lld", uid);
	fprintf(stderr, "dtplan serve: refused a report from %s%s: %s: %s\n",
		addr != NULL ? addr : "?", who, serve_reason_name(r), why != NULL ? why : "");
}

/* True when addr may post now: a bucket of 2 x rate tokens (at least one),
 * refilled at rate a second. */
static bool rate_take(struct server *s, const char *addr)
{
	struct rate_slot *slot = NULL, *oldest = &s->rates[0];
	double t = now_s(), burst = fmax(1.0, 2.0 * s->o->rate);
	bool ok;

	pthread_mutex_lock(&s->lock);
	/* 1,024 comparisons under the lock: far less than the credential costs */
	for (size_t i = 0; i < RATE_SLOTS && slot == NULL; i++) {
		if (strcmp(s->rates[i].addr, addr) == 0)
			slot = &s->rates[i];
		else if (s->rates[i].last < oldest->last)
			oldest = &s->rates[i];
	}
	if (slot == NULL) {
		slot = oldest;
		snprintf(slot->addr, sizeof(slot->addr), "%s", addr);
		slot->tokens = burst;
		slot->last = t;
	}
	slot->tokens = fmin(burst, slot->tokens + (t - slot->last) * s->o->rate);
	slot->last = t;
	ok = slot->tokens >= 1.0;
	if (ok)
		slot->tokens -= 1.0;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void client_addr(struct MHD_Connection *c, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	snprintf(buf, size, "?");
	if (sa != NULL && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
			  (socklen_t)size);
	else if (sa != NULL && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
			  (socklen_t)size);
}

/* Queues text (copied) with the status and type; the security headers on all. */
static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
			      const char *text, size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* the page runs no script; pictures come from here only */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; img-src 'self'; style-src 'unsafe-inline'");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result answer_take(struct MHD_Connection *c, unsigned status, const char *type,
				   char *text)
{
	enum MHD_Result rc;

	if (text == NULL)
		return answer(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "store unavailable\n",
			      18);
	rc = answer(c, status, type, text, strlen(text));
	free(text);
	return rc;
}

/* A refusal from addr (uid: the poster's, -1 when not known): counted,
 * logged and said as JSON {"refused": reason, "message": ...}. */
static enum MHD_Result refuse_from(struct server *s, struct MHD_Connection *c, const char *addr,
				   long long uid, unsigned status, enum serve_reason r,
				   const char *message)
{
	json_t *j = json_pack("{s:s, s:s}", "refused", serve_reason_name(r), "message",
			      message != NULL ? message : "");
	char *text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	enum MHD_Result rc;

	json_decref(j);
	count_refused(s, r, addr, uid, message);
	if (text == NULL)
		return answer(c, status, "text/plain", serve_reason_name(r),
			      strlen(serve_reason_name(r)));
	rc = answer(c, status, "application/json", text, strlen(text));
	free(text);
	return rc;
}

/* The uid of user name; false when the system has no such user. */
static bool uid_of(const char *name, uid_t *uid)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || found == NULL)
		return false;
	*uid = found->pw_uid;
	return true;
}

/* Root, or the uid of the user the document names (its "uid", and the uid
 * of its "user" on this host): false with why in msg otherwise. */
static bool user_may(json_t *doc, uid_t cred_uid, char *msg, size_t size)
{
	json_t *uid = json_object_get(doc, "uid");
	const char *user = json_string_value(json_object_get(doc, "user"));
	uid_t named;

	if (cred_uid == 0)
		return true;
	if (json_is_integer(uid) && json_integer_value(uid) != (json_int_t)cred_uid) {
		snprintf(msg, size, "the credential is uid %u's, the report names uid %lld",
			 (unsigned)cred_uid, (long long)json_integer_value(uid));
		return false;
	}
	if (user == NULL) {
		snprintf(msg, size, "the report names no user, and uid %u is not root",
			 (unsigned)cred_uid);
		return false;
	}
	if (!uid_of(user, &named)) {
		snprintf(msg, size, "user '%s' is not known here", user);
		return false;
	}
	if (named != cred_uid) {
		snprintf(msg, size, "the credential is uid %u's, user '%s' is uid %u",
			 (unsigned)cred_uid, user, (unsigned)named);
		return false;
	}
	return true;
}

static enum serve_reason reason_of(const char *r)
{
	if (r != NULL && strcmp(r, "replayed") == 0)
		return SERVE_REPLAYED;
	if (r != NULL && strcmp(r, "expired") == 0)
		return SERVE_EXPIRED;
	if (r != NULL && strcmp(r, "munge") == 0)
		return SERVE_MUNGE;
	return SERVE_FORGED;
}

/* The whole body has arrived: check it, keep it, answer. */
static enum MHD_Result take_report(struct server *s, struct MHD_Connection *c, struct request *q)
{
	const char *cred =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, DTPLAN_REPORT_CRED_HEADER);
	struct dtplan_report_cred rc;
	struct dtplan_error err = {0};
	enum serve_reason reason;
	enum dtplan_posted_kind kind;
	const char *why = NULL;
	json_t *doc = NULL;
	enum dtplan_err ret;
	char msg[600], ok[64];
	long long id = 0, now = (long long)time(NULL);
	enum MHD_Result r;
	long long uid = -1; /* the poster's, once its credential is checked */
	int seen;

	if (cred == NULL || cred[0] == '\0')
		return refuse_from(s, c, q->addr, uid, MHD_HTTP_UNAUTHORIZED, SERVE_UNAUTHENTICATED,
				   "no MUNGE credential (" DTPLAN_REPORT_CRED_HEADER ")");
	if (dtplan_report_cred_check(s->o->munge_socket, cred, q->body, q->len, &rc, &why, &err) !=
	    DTPLAN_OK) {
		reason = reason_of(why);
		return refuse_from(s, c, q->addr, uid,
				   reason == SERVE_MUNGE      ? MHD_HTTP_SERVICE_UNAVAILABLE
				   : reason == SERVE_REPLAYED ? MHD_HTTP_CONFLICT
							      : MHD_HTTP_FORBIDDEN,
				   reason, err.text);
	}
	uid = (long long)rc.uid;
	seen = serve_store_cred_remember(s->st, rc.id, rc.expires, now);
	if (seen < 0)
		return refuse_from(s, c, q->addr, uid, MHD_HTTP_SERVICE_UNAVAILABLE, SERVE_STORAGE,
				   "cannot remember the credential");
	if (seen == 0)
		return refuse_from(s, c, q->addr, uid, MHD_HTTP_CONFLICT, SERVE_REPLAYED,
				   "this credential was taken before");
	ret = dtplan_posted_parse(q->body, q->len, &doc, &kind, &err);
	if (ret == DTPLAN_ERR_NOMEM)
		return refuse_from(s, c, q->addr, uid, MHD_HTTP_SERVICE_UNAVAILABLE, SERVE_STORAGE,
				   err.text);
	if (ret != DTPLAN_OK)
		return refuse_from(s, c, q->addr, uid, MHD_HTTP_BAD_REQUEST,
				   ret == DTPLAN_ERR_UNSUPPORTED ? SERVE_SCHEMA
				   : ret == DTPLAN_ERR_RANGE     ? SERVE_RANGE
								 : SERVE_MALFORMED,
				   err.text);
	if (!user_may(doc, rc.uid, msg, sizeof(msg))) {
		r = refuse_from(s, c, q->addr, uid, MHD_HTTP_FORBIDDEN, SERVE_USER, msg);
		goto out;
	}
	/* the prolog's measurements are the fabric's: root's alone */
	if (kind == DTPLAN_POSTED_MEASUREMENT && rc.uid != 0) {
		snprintf(msg, sizeof(msg),
			 "measurements are taken from root (the prolog) only, not from uid %u",
			 (unsigned)rc.uid);
		r = refuse_from(s, c, q->addr, uid, MHD_HTTP_FORBIDDEN, SERVE_USER, msg);
		goto out;
	}
	ret = serve_store_add(s->st, kind, doc, q->body, (long long)rc.uid, now, &id, &err);
	if (ret == DTPLAN_ERR_RANGE) {
		r = refuse_from(s, c, q->addr, uid, MHD_HTTP_CONTENT_TOO_LARGE, SERVE_BUDGET,
				err.text);
		goto out;
	}
	if (ret != DTPLAN_OK) {
		r = refuse_from(s, c, q->addr, uid, MHD_HTTP_SERVICE_UNAVAILABLE, SERVE_STORAGE,
				err.text);
		goto out;
	}
	snprintf(ok, sizeof(ok), "{\"accepted\":\"%s\",\"id\":%lld}", serve_kind_name(kind), id);
	r = answer(c, MHD_HTTP_OK, "application/json", ok, strlen(ok));
out:
	json_decref(doc);
	return r;
}

/* A page: 200 and the HTML, 404 when what it shows is not known, 503
 * when the store fails. */
static enum MHD_Result answer_page(struct MHD_Connection *c, char *html, bool missing,
				   const char *what)
{
	if (html == NULL && missing)
		return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", what, strlen(what));
	return answer_take(c, MHD_HTTP_OK, "text/html; charset=utf-8", html);
}

static enum MHD_Result get(struct server *s, struct MHD_Connection *c, const char *url)
{
	char why[256], *html;
	long long id, now = (long long)time(NULL);
	char tail[8];
	bool missing = false;

	if (strcmp(url, "/") == 0)
		return answer_take(c, MHD_HTTP_OK, "text/html; charset=utf-8",
				   serve_page(s->st, s->site, s->fabric != NULL, now));
	/* a job's page, a report's; a leaf's or a rack's nodes (the name as
	 * libmicrohttpd unescaped it) */
	if (sscanf(url, "/job/%lld%7s", &id, tail) == 1 && id > 0) {
		html = serve_job_page(s->st, id, 0, now, &missing);
		return answer_page(c, html, missing, "no such job\n");
	}
	if (sscanf(url, "/report/%lld%7s", &id, tail) == 1 && id > 0) {
		html = serve_job_page(s->st, 0, id, now, &missing);
		return answer_page(c, html, missing, "no such report\n");
	}
	if (strncmp(url, "/fabric/leaf/", 13) == 0 && url[13] != '\0') {
		html = serve_nodes_page(s->st, s->site, url + 13, false, now, &missing);
		return answer_page(c, html, missing, "no such leaf\n");
	}
	if (strncmp(url, "/fabric/rack/", 13) == 0 && url[13] != '\0') {
		html = serve_nodes_page(s->st, s->site, url + 13, true, now, &missing);
		return answer_page(c, html, missing, "no such rack\n");
	}
	if (strcmp(url, "/metrics") == 0) {
		struct serve_counters pending;

		/* the refusals counted so far, in the store before it answers;
		 * those a full or failing store did not take are shown all the
		 * same */
		pthread_mutex_lock(&s->lock);
		flush_refused(s);
		pending = s->counters;
		pthread_mutex_unlock(&s->lock);
		return answer_take(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
				   serve_metrics(s->st, &pending));
	}
	if (strcmp(url, "/healthz") == 0) {
		if (serve_store_ping(s->st, why, sizeof(why) - 1))
			return answer(c, MHD_HTTP_OK, "text/plain", "ok\n", 3);
		strcat(why, "\n");
		return answer(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", why, strlen(why));
	}
	if (strcmp(url, "/fabric") == 0) {
		if (s->fabric == NULL)
			return answer(c, MHD_HTTP_NOT_FOUND, "text/plain",
				      "no fabric (dtplan serve --fabric)\n", 35);
		return answer_take(c, MHD_HTTP_OK, "application/json",
				   serve_fabric(s->st, s->fabric));
	}
	if (strcmp(url, "/calibration") == 0)
		return answer_take(c, MHD_HTTP_OK, "application/json", serve_calibration(s->st));
	if (sscanf(url, "/plan/%lld%7s", &id, tail) == 2 && strcmp(tail, ".svg") == 0 && id > 0) {
		char *svg = serve_plan_svg(s->st, id, &missing);

		if (svg == NULL && missing)
			return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "no such plan\n", 13);
		return answer_take(c, MHD_HTTP_OK, "image/svg+xml", svg);
	}
	return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", 10);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *size, void **state)
{
	struct server *s = cls;
	struct request *q = *state;
	const char *cl;

	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return get(s, c, url);
	if (strcmp(method, "POST") != 0)
		return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET or POST\n", 12);
	if (strcmp(url, "/") != 0)
		return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "reports go to /\n", 16);
	if (q == NULL) {
		/* first call: the headers only */
		q = calloc(1, sizeof(*q));
		if (q == NULL)
			return MHD_NO;
		*state = q;
		client_addr(c, q->addr, sizeof(q->addr));
		if (!rate_take(s, q->addr))
			return refuse_from(s, c, q->addr, -1, MHD_HTTP_TOO_MANY_REQUESTS,
					   SERVE_RATE_LIMITED,
					   "this address posts faster than the collector takes");
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl != NULL && strtoull(cl, NULL, 10) > s->o->max_body)
			return refuse_from(s, c, q->addr, -1, MHD_HTTP_CONTENT_TOO_LARGE,
					   SERVE_OVERSIZED,
					   "the body is larger than the collector takes");
		return MHD_YES;
	}
	if (*size > 0) {
		if (!q->over && *size > s->o->max_body - q->len) {
			q->over = true;
			free(q->body);
			q->body = NULL;
			q->len = q->cap = 0;
		}
		if (!q->over) {
			if (q->len + *size + 1 > q->cap) {
				size_t cap = q->cap ? q->cap : 16384;
				char *tmp;

				while (cap < q->len + *size + 1)
					cap *= 2;
				tmp = realloc(q->body, cap);
				if (tmp == NULL)
					return MHD_NO;
				q->body = tmp;
				q->cap = cap;
			}
			memcpy(q->body + q->len, data, *size);
			q->len += *size;
			q->body[q->len] = '\0';
		}
		*size = 0;
		return MHD_YES;
	}
	if (q->over)
		return refuse_from(s, c, q->addr, -1, MHD_HTTP_CONTENT_TOO_LARGE, SERVE_OVERSIZED,
				   "the body is larger than the collector takes");
	if (q->body == NULL)
		return refuse_from(s, c, q->addr, -1, MHD_HTTP_BAD_REQUEST, SERVE_MALFORMED,
				   "no body");
	return take_report(s, c, q);
}

static void on_done(void *cls, struct MHD_Connection *c, void **state,
		    enum MHD_RequestTerminationCode why)
{
	struct request *q = *state;

	if (q != NULL) {
		free(q->body);
		free(q);
	}
	*state = NULL;
}

/* Each connection's start, for the reaper; *ctx holds its slot. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn_slot *slot = *ctx;

	pthread_mutex_lock(&s->conn_lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (size_t i = 0; ci != NULL && i < sizeof(s->conns) / sizeof(s->conns[0]); i++) {
			if (s->conns[i].c == NULL) {
				s->conns[i].c = c;
				s->conns[i].fd = ci->connect_fd;
				s->conns[i].started = now_s();
				*ctx = &s->conns[i];
				break;
			}
		}
	} else if (slot != NULL) {
		/* before libmicrohttpd closes the socket: the reaper never
		 * shuts down a descriptor that was reused */
		slot->c = NULL;
		slot->fd = -1;
		*ctx = NULL;
	}
	pthread_mutex_unlock(&s->conn_lock);
}

/* The whole-request deadline: every half second, a connection open longer
 * than request_timeout is shut down (libmicrohttpd then reads its end and
 * closes it), whether it trickles or not. */
static void *reaper(void *arg)
{
	struct server *s = arg;
	struct timespec ts;

	pthread_mutex_lock(&s->conn_lock);
	while (!s->stopping) {
		double t = now_s();

		for (size_t i = 0; i < sizeof(s->conns) / sizeof(s->conns[0]); i++) {
			struct conn_slot *slot = &s->conns[i];

			if (slot->c != NULL && slot->fd >= 0 &&
			    t - slot->started > s->o->request_timeout) {
				shutdown(slot->fd, SHUT_RDWR);
				slot->fd = -1;
			}
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &ts);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

/* ADDR:PORT or [ADDR6]:PORT into ss. */
static bool parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *colon;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (close == NULL || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host))
			return false;
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (colon == NULL || (size_t)(colon - text) >= sizeof(host))
			return false;
		memcpy(host, text, (size_t)(colon - text));
		host[colon - text] = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port > 65535)
		return false;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in);
		return true;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in6);
		return true;
	}
	return false;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct serve_opts *o = cls;
	char msg[512];
	size_t n;

	if (o == NULL || !o->json) {
		fputs("dtplan serve: ", stderr);
		vfprintf(stderr, fmt, ap);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	serve_json_line(stderr, "server", json_pack("{s:s}", "message", msg));
}

static void stop_reaper(struct server *s)
{
	serve_site_destroy(s->site);
	s->site = NULL;
	if (s->reaper_started) {
		pthread_mutex_lock(&s->conn_lock);
		s->stopping = true;
		pthread_cond_signal(&s->conn_wake);
		pthread_mutex_unlock(&s->conn_lock);
		pthread_join(s->reaper, NULL);
	}
	pthread_cond_destroy(&s->conn_wake);
	pthread_mutex_destroy(&s->conn_lock);
	pthread_mutex_destroy(&s->lock);
}

bool serve_listen_valid(const char *text)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_listen(text, &ss, &len);
}

struct server *serve_start(const struct serve_opts *o, struct serve_store *st, json_t *fabric,
			   unsigned *port, struct dtplan_error *err)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	socklen_t len;
	unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (s == NULL || !parse_listen(o->listen, &ss, &len)) {
		free(s);
		if (err != NULL) {
			memset(err, 0, sizeof(*err));
			err->code = DTPLAN_ERR_INVAL;
			snprintf(err->source, sizeof(err->source), "--listen");
			snprintf(err->text, sizeof(err->text), "'%s' is not ADDR:PORT", o->listen);
		}
		return NULL;
	}
	s->o = o;
	s->st = st;
	s->fabric = fabric;
	if (serve_site_create(fabric, &s->site, err) != DTPLAN_OK) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_cond_init(&s->conn_wake, NULL);
	if (pthread_create(&s->reaper, NULL, reaper, s) == 0)
		s->reaper_started = true;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
				on_mhd_log, (void *)o, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o->threads,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SERVE_PER_ADDRESS,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
	if (s->d == NULL) {
		stop_reaper(s);
		free(s);
		if (err != NULL) {
			memset(err, 0, sizeof(*err));
			err->code = DTPLAN_ERR_IO;
			snprintf(err->source, sizeof(err->source), "--listen");
			snprintf(err->text, sizeof(err->text), "cannot listen on %s: %s", o->listen,
				 strerror(errno));
		}
		return NULL;
	}
	di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di != NULL ? di->port : 0;
	return s;
}

void serve_stop(struct server *s)
{
	if (s == NULL)
		return;
	MHD_stop_daemon(s->d);
	/* the refusals not yet kept */
	pthread_mutex_lock(&s->lock);
	flush_refused(s);
	pthread_mutex_unlock(&s->lock);
	stop_reaper(s);
	free(s);
}
