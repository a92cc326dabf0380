/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_probe.c: the probe engine end to end on loopback (probes/rendezvous.c,
 * links.c, net.c): four processes, one per node, with real sockets and a
 * test credential in place of MUNGE.  A whole run, a node that never comes,
 * and forged messages sent to the leader while it runs (no credential, a bad
 * credential, another uid, another job, oversized, truncated, a node
 * speaking for another).
 */
#include "test_common.h"

#include "dtprobes.h"
#include "probes_private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4

/* ---- a credential for tests: "TEST:<uid>:<hex payload>" ---- */

static uid_t test_uid = 0;

static enum dtplan_err fake_encode(struct dtplan_auth *a, const void *payload, size_t len,
				   char **cred, struct dtplan_error *err)
{
	const uint8_t *p = payload;
	char *c = malloc(32 + 2 * len);
	int n;

	(void)a;
	(void)err;
	if (c == NULL)
		return DTPLAN_ERR_NOMEM;
	n = sprintf(c, "TEST:%u:", (unsigned)test_uid);
	for (size_t i = 0; i < len; i++)
		n += sprintf(c + n, "%02x", p[i]);
	*cred = c;
	return DTPLAN_OK;
}

static enum dtplan_err fake_decode(struct dtplan_auth *a, const char *cred, size_t cred_len,
				   void **payload, size_t *len, uid_t *uid,
				   struct dtplan_error *err)
{
	char *text = strndup(cred, cred_len), *hex;
	unsigned u;
	uint8_t *p;
	size_t n;

	(void)a;
	*payload = NULL;
	*len = 0;
	if (text == NULL || sscanf(text, "TEST:%u:", &u) != 1 ||
	    (hex = strchr(text + 5, ':')) == NULL || strlen(hex + 1) % 2 != 0) {
		free(text);
		return err ? (snprintf(err->text, sizeof(err->text), "invalid credential"),
			      err->code = DTPLAN_ERR_POLICY)
			   : DTPLAN_ERR_POLICY;
	}
	hex++;
	n = strlen(hex) / 2;
	p = malloc(n + 1);
	for (size_t i = 0; p != NULL && i < n; i++) {
		unsigned b;

		sscanf(hex + 2 * i, "%2x", &b);
		p[i] = (uint8_t)b;
	}
	free(text);
	*payload = p;
	*len = n;
	*uid = (uid_t)u;
	return DTPLAN_OK;
}

static struct dtplan_auth fake_auth = {fake_encode, fake_decode, NULL, NULL};

/* ---- nodes ---- */

static char hosts[N][64] = {"node1", "node2", "node3", "node4"};
static struct sockaddr_storage addrs[N];
static struct dtplan_topology *topo;

static enum dtplan_err discover(void *arg, struct dtplan_node *out, struct dtplan_error *err)
{
	int gpus = (int)(intptr_t)arg;

	(void)err;
	memset(out, 0, sizeof(*out));
	snprintf(out->source, sizeof(out->source), "xml");
	out->n_gpus = gpus;
	out->n_domains = 1;
	out->domains[0].n_gpus = gpus;
	for (int i = 0; i < gpus; i++) {
		snprintf(out->gpus[i].model, sizeof(out->gpus[i].model), "H100");
		out->gpus[i].nic = -1;
		out->domains[0].gpus[i] = i;
	}
	return DTPLAN_OK;
}

static void pick_ports(void)
{
	for (int tries = 0; tries < 50; tries++) {
		uint16_t base = (uint16_t)(30000 + (getpid() * 7 + tries * 97) % 25000);
		bool ok = true;

		for (int i = 0; i < N && ok; i++) {
			struct sockaddr_in *a = (struct sockaddr_in *)&addrs[i];
			int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

			memset(a, 0, sizeof(*a));
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			a->sin_port = htons((uint16_t)(base + i));
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			ok = bind(fd, (struct sockaddr *)a, sizeof(*a)) == 0;
			close(fd);
		}
		if (ok)
			return;
	}
	fail_msg("no free loopback ports");
}

static void opts_for(struct dtplan_probe_opts *o, uint32_t self, double start)
{
	memset(o, 0, sizeof(*o));
	o->source = "probe";
	o->job_id = 4242;
	o->session = 0;
	o->n_hosts = N;
	o->hosts = (const char(*)[64])hosts;
	o->self = self;
	o->uid = 0;
	o->auth = &fake_auth;
	dtplan_probe_params_init(&o->params);
	/* every time ten times longer under valgrind (test_bound_s()): the
	 * rounds must still take their samples there */
	o->params.budget_s = 4.0 * test_bound_s(1);
	o->params.slot_s = 0.2 * test_bound_s(1);
	o->params.bulk_s = 0.05 * test_bound_s(1);
	o->params.bulk_bytes = 4u << 20;
	o->params.ping_count = 8;
	o->params.ping_window_s = 0.02 * test_bound_s(1);
	o->start_s = start;
	o->discover = discover;
	o->discover_arg = (void *)(intptr_t)(self == 3 ? 4 : 8);
	o->topology = topo;
	o->addrs = addrs;
}

/* Starts nodes [1, N) but `skip` as processes; returns their pids. */
static void start_nodes(pid_t *pids, int skip, double start)
{
	for (uint32_t i = 1; i < N; i++) {
		pids[i] = -1;
		if ((int)i == skip)
			continue;
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct dtplan_probe_opts o;
			struct dtplan_measure_file f;

			if (getenv("DTPLAN_PROBE_DEBUG") == NULL)
				dtplan_log_set_sink(NULL, NULL);
			opts_for(&o, i, start);
			_exit(dtplan_probe_run(&o, &f, NULL) == DTPLAN_OK ? 0 : 1);
		}
	}
}

static void wait_nodes(pid_t *pids)
{
	for (int i = 1; i < N; i++) {
		int st = 0;

		if (pids[i] <= 0)
			continue;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

static char logbuf[1 << 16];
static size_t loglen;

static void sink(enum dtplan_log_level level, const char *msg, void *arg)
{
	(void)arg;
	/* DTPLAN_PROBE_DEBUG=1: every node's messages on stderr */
	if (getenv("DTPLAN_PROBE_DEBUG") != NULL)
		fprintf(stderr, "[%d] %s\n", (int)getpid(), msg);
	if (level <= DTPLAN_LOG_INFO && loglen < sizeof(logbuf) - 1)
		loglen += (size_t)snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s\n", msg);
}

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(dtplan_topology_parse_string("SwitchName=leaf1 Nodes=node[1-2]\n"
						      "SwitchName=leaf2 Nodes=node[3-4]\n"
						      "SwitchName=spine Switches=leaf[1-2]\n",
						      "topo", &topo, NULL),
			 DTPLAN_OK);
	pick_ports();
	loglen = 0;
	logbuf[0] = '\0';
	dtplan_log_set_sink(sink, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dtplan_topology_destroy(topo);
	dtplan_log_set_sink(NULL, NULL);
	return 0;
}

/* Two leaves of two: intra A 1-2 and 3-4, cross 1-3, concurrent 1->3 and
 * 4->2: five links, every node reported, two distinct inventories. */
static void run__four_nodes__every_inventory_and_link(void **state)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	struct dtplan_error err = {0};
	pid_t pids[N];
	double t0 = dtplan_probe_clock();

	(void)state;
	start_nodes(pids, -1, t0);
	opts_for(&o, 0, t0);
	assert_int_equal(dtplan_probe_run(&o, &f, &err), DTPLAN_OK);
	wait_nodes(pids);
	assert_non_null(f.m);
	if (f.m->n_reported != N || f.m->n_missing != 0)
		fail_msg("reported %zu, missing %zu; log:\n%s", f.m->n_reported, f.m->n_missing,
			 logbuf);
	assert_int_equal(f.job_id, 4242);
	assert_int_equal(f.n_records, 2);
	assert_int_equal(f.host_record[0], f.host_record[2]);
	assert_true(f.host_record[3] != f.host_record[0]);
	assert_int_equal(f.records[f.host_record[3]].n_gpus, 4);
	assert_int_equal(f.m->n_links, 5);
	for (size_t i = 0; i < f.m->n_links; i++) {
		if (!(f.m->links[i].flags & DTPLAN_LINK_OK))
			fail_msg("link %zu (%u -> %u) failed; log:\n%s", i, f.m->links[i].from,
				 f.m->links[i].to, logbuf);
		assert_true(f.m->links[i].bandwidth_bytes_per_s > 1e6);
		assert_true(f.m->links[i].samples > 0);
	}
	assert_true(f.m->intra.measured && f.m->cross.measured);
	assert_int_equal(f.m->n_uplinks, 2);
	assert_true(f.m->elapsed_s < o.params.budget_s);
	assert_int_equal(f.m->n_notes, 0);
	dtplan_measure_file_fini(&f);
}

/* node3 never starts: the leader ends within the budget and names it. */
static void run__a_node_never_comes__missing_within_budget(void **state)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	pid_t pids[N];
	double t0 = dtplan_probe_clock();

	(void)state;
	start_nodes(pids, 2, t0);
	opts_for(&o, 0, t0);
	assert_int_equal(dtplan_probe_run(&o, &f, NULL), DTPLAN_OK);
	assert_true(dtplan_probe_clock() - t0 <= o.params.budget_s + 0.1);
	wait_nodes(pids);
	assert_int_equal(f.m->n_reported, 3);
	assert_int_equal(f.m->n_missing, 1);
	assert_int_equal(f.m->missing[0], 2);
	assert_int_equal(f.host_record[2], -1);
	/* the others still probed each other: 1-2 inside leaf1, 1 -> 4 across */
	assert_true(f.m->n_links >= 2);
	dtplan_measure_file_fini(&f);
}

/* No other node's prolog runs (Slurm without PrologFlags=Alloc): the
 * leader stops waiting after 0.3 of the budget and says why. */
static void run__alone__note_on_prolog_flags(void **state)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	double t0 = dtplan_probe_clock();

	(void)state;
	opts_for(&o, 0, t0);
	assert_int_equal(dtplan_probe_run(&o, &f, NULL), DTPLAN_OK);
	assert_true(dtplan_probe_clock() - t0 < 0.3 * o.params.budget_s + 0.5);
	assert_int_equal(f.m->n_reported, 1);
	assert_int_equal(f.m->n_missing, 3);
	assert_int_equal(f.host_record[0], 0);
	assert_int_equal(f.m->n_notes, 1);
	assert_non_null(strstr(f.m->notes[0], "no other node joined within"));
	assert_non_null(strstr(f.m->notes[0], "PrologFlags=Alloc"));
	dtplan_measure_file_fini(&f);
}

/* MUNGE refuses every other node's credential (here: expired, as when
 * their clocks are behind the leader's): the note says MUNGE and why, not
 * PrologFlags. */
static enum dtplan_err expired_decode(struct dtplan_auth *a, const char *cred, size_t cred_len,
				      void **payload, size_t *len, uid_t *uid,
				      struct dtplan_error *err)
{
	(void)a, (void)cred, (void)cred_len, (void)uid;
	*payload = NULL;
	*len = 0;
	/* what probes/auth.c says for EMUNGE_CRED_EXPIRED */
	if (err != NULL) {
		err->code = DTPLAN_ERR_POLICY;
		snprintf(err->source, sizeof(err->source), "munge");
		snprintf(err->text, sizeof(err->text),
			 "invalid credential: Expired credential (older than its time to live: "
			 "is the sender's clock behind this node's?)");
	}
	return DTPLAN_ERR_POLICY;
}

static void run__credentials_refused__note_names_munge_not_prolog_flags(void **state)
{
	struct dtplan_auth clock_auth = {fake_encode, expired_decode, NULL, NULL};
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	pid_t pids[N];
	double t0 = dtplan_probe_clock();

	(void)state;
	start_nodes(pids, -1, t0);
	opts_for(&o, 0, t0);
	o.auth = &clock_auth;
	assert_int_equal(dtplan_probe_run(&o, &f, NULL), DTPLAN_OK);
	wait_nodes(pids);
	assert_int_equal(f.m->n_reported, 1);
	assert_true(f.m->n_notes >= 1);
	assert_non_null(strstr(f.m->notes[0], "no other node joined within"));
	assert_non_null(strstr(f.m->notes[0], "MUNGE refused their credentials"));
	assert_non_null(strstr(f.m->notes[0], "clock"));
	assert_null(strstr(f.m->notes[0], "PrologFlags"));
	dtplan_measure_file_fini(&f);
}

/* ---- forged messages ---- */

static int connect_leader(void)
{
	return dtprobe__connect(&addrs[0], dtplan_probe_clock() + 1.0);
}

/* Reads the leader's greeting (one whole frame) as a node would before it
 * speaks: left unread, it would reset the connection at close() before the
 * leader read the forgery. */
static void read_greeting(int fd)
{
	uint8_t head[DTPLAN_WIRE_HEADER_LEN], rest[DTPLAN_WIRE_CRED_MAX + 64];
	double deadline = dtplan_probe_clock() + 1.0 * test_bound_s(1);
	size_t n;

	if (dtprobe__read_all(fd, head, sizeof(head), deadline) != 0)
		return;
	n = (size_t)head[6] << 8 | head[7];
	n += (size_t)head[24] << 24 | (size_t)head[25] << 16 | (size_t)head[26] << 8 | head[27];
	if (n <= sizeof(rest))
		dtprobe__read_all(fd, rest, n, deadline);
}

/* Sends raw bytes to the leader and closes. */
static void send_raw(const void *buf, size_t len)
{
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		fd = connect_leader();
		if (fd < 0)
			usleep(20000);
	}
	if (fd < 0)
		_exit(3);
	read_greeting(fd);
	dtprobe__write_all(fd, buf, len, dtplan_probe_clock() + 1.0);
	usleep(20000);
	close(fd);
}

/* A JOIN of node `sender` for job `job` with a credential of uid, optionally
 * cut to `cut` bytes (0: whole); cred "": none. */
static void forge(uint32_t job, uint32_t sender, uid_t uid, const char *cred_override, size_t cut,
		  size_t body_len)
{
	struct dtplan_wire_header h = {
		DTPLAN_WIRE_VERSION, DTPLAN_WIRE_JOIN, 0, job, 0, 0, sender, 0};
	struct dtplan_wire_join j = {N, {0}};
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN], *body = NULL, *frame = NULL;
	char *cred = NULL;
	size_t blen = 0, flen = 0;

	dtplan_wire_join_encode(&j, &body, &blen, NULL);
	h.body_len = (uint32_t)blen;
	dtplan_wire_seal(&h, body, seal);
	if (body_len > 0)
		blen = body_len; /* the header claims more than it sends */
	h.body_len = (uint32_t)blen;
	test_uid = uid;
	fake_encode(NULL, seal, sizeof(seal), &cred, NULL);
	if (cred_override != NULL) {
		free(cred);
		cred = strdup(cred_override);
	}
	frame = malloc(DTPLAN_WIRE_HEADER_LEN + strlen(cred) + blen + 64);
	h.cred_len = (uint16_t)strlen(cred);
	dtplan_wire_header_encode(&h, frame);
	memcpy(frame + DTPLAN_WIRE_HEADER_LEN, cred, strlen(cred));
	memcpy(frame + DTPLAN_WIRE_HEADER_LEN + strlen(cred), body, 23);
	flen = DTPLAN_WIRE_HEADER_LEN + strlen(cred) + (body_len > 0 ? 23 : blen);
	send_raw(frame, cut > 0 ? cut : flen);
	free(body);
	free(cred);
	free(frame);
}

static void run__forged_messages__rejected_logged_measurements_unchanged(void **state)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	pid_t pids[N], forger;
	double t0 = dtplan_probe_clock();
	static const char *const expect[] = {
		"without a credential",    "invalid credential",
		"credential of uid 1000",  "another job (4243; this is job 4242)",
		"join body of 5000 bytes", "truncated message",
		"node 5 of a 4-node job",
	};

	(void)state;
	forger = fork();
	assert_true(forger >= 0);
	if (forger == 0) {
		uint8_t noise[40] = "DTPW\x01\x01";

		/* no credential: a header whose credential length is 0 */
		forge(4242, 1, 0, "", 0, 0);
		forge(4242, 1, 0, "TEST:garbage", 0, 0); /* a bad credential */
		forge(4242, 1, 1000, NULL, 0, 0);        /* another uid */
		forge(4243, 1, 0, NULL, 0, 0);           /* another job's id */
		forge(4242, 1, 0, NULL, 0, 5000);        /* oversized */
		forge(4242, 1, 0, NULL, 40, 0);          /* truncated */
		forge(4242, 5, 0, NULL, 0, 0);           /* a node the job does not have */
		send_raw(noise, sizeof(noise));
		_exit(0);
	}
	start_nodes(pids, -1, t0);
	opts_for(&o, 0, t0);
	assert_int_equal(dtplan_probe_run(&o, &f, NULL), DTPLAN_OK);
	wait_nodes(pids);
	waitpid(forger, NULL, 0);
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (strstr(logbuf, expect[i]) == NULL)
			fail_msg("no rejection saying '%s' in the log:\n%s", expect[i], logbuf);
	/* the measurements are those of a clean run */
	assert_int_equal(f.m->n_reported, N);
	assert_int_equal(f.m->n_missing, 0);
	assert_int_equal(f.m->n_links, 5);
	assert_int_equal(f.m->n_notes, 1);
	assert_non_null(strstr(f.m->notes[0], "messages rejected on node1"));
	dtplan_measure_file_fini(&f);
}

/* ---- a listener that is not the node's (issue 26) ---- */

enum fake_kind {
	FAKE_SILENT,    /* listens and waits for what comes */
	FAKE_OWN_CRED,  /* greets as node 1 with a credential of its own uid (1000) */
	FAKE_PASSED_ON, /* greets as node 1 with a root credential naming the real
			 * node's port: a greeting passed on from elsewhere */
};

/*
 * A process holding `at` (bound and listening before the fork) until
 * `until`: every connection gets the greeting `kind` says, then all it
 * sends is counted.  Writes the count of bytes received, and of those
 * connections that sent a credential ("TEST:"), to fd out.
 */
static pid_t fake_listener(const struct sockaddr_storage *at, enum fake_kind kind, uint16_t real,
			   double until, int out)
{
	int lfd = socket(at->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	pid_t pid;

	assert_true(lfd >= 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(lfd, (const struct sockaddr *)at, sizeof(struct sockaddr_in)), 0);
	assert_int_equal(listen(lfd, 64), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid > 0) {
		close(lfd);
		return pid;
	}
	{
		struct dtprobe__peer_rules r = {4242, 0, N, 0, &fake_auth};
		size_t got[2] = {0, 0};

		while (dtplan_probe_clock() < until) {
			struct pollfd p = {lfd, POLLIN, 0};
			uint8_t buf[4096];
			int fd;

			if (poll(&p, 1, dtprobe__poll_ms(until)) <= 0)
				continue;
			fd = accept(lfd, NULL, NULL);
			if (fd < 0)
				continue;
			test_uid = kind == FAKE_OWN_CRED ? 1000 : 0;
			if (kind != FAKE_SILENT)
				dtprobe__hello_send(
					fd, &r, 1,
					kind == FAKE_PASSED_ON
						? real
						: ntohs(((const struct sockaddr_in *)at)->sin_port),
					until, NULL);
			for (;;) {
				struct pollfd q = {fd, POLLIN, 0};
				ssize_t n;

				if (poll(&q, 1, dtprobe__poll_ms(until)) <= 0)
					break;
				n = recv(fd, buf, sizeof(buf), 0);
				if (n <= 0)
					break;
				got[0] += (size_t)n;
				if (memmem(buf, (size_t)n, "TEST:", 5) != NULL)
					got[1]++;
			}
			close(fd);
		}
		if (write(out, got, sizeof(got)) != (ssize_t)sizeof(got))
			_exit(2);
		_exit(0);
	}
}

/*
 * node4 (index 3) is node2's child (index 1, fan-out 2): node2's port is
 * held by another process before the run, and no other node runs.
 * Whatever that process says, node4 sends it nothing at all, no credential
 * above all, and ends within its budget.
 */
static void fake_parent(enum fake_kind kind)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	double t0 = dtplan_probe_clock(), until;
	size_t got[2] = {9, 9};
	int pipefd[2], st = 0;
	pid_t fake, node;

	opts_for(&o, 3, t0);
	o.params.fanout = 2;
	o.params.budget_s = 1.0 * test_bound_s(1);
	/* FAKE_PASSED_ON: node2's greeting, from the port it would really
	 * listen on (addrs[2]'s), comes through a process at the port node4 dials */
	until = t0 + o.params.budget_s + 0.3;
	assert_int_equal(pipe(pipefd), 0);
	fake = fake_listener(&addrs[1], kind, ntohs(((struct sockaddr_in *)&addrs[2])->sin_port),
			     until, pipefd[1]);
	close(pipefd[1]);
	node = fork();
	assert_true(node >= 0);
	if (node == 0) {
		if (getenv("DTPLAN_PROBE_DEBUG") == NULL)
			dtplan_log_set_sink(NULL, NULL);
		_exit(dtplan_probe_run(&o, &f, NULL) == DTPLAN_OK ? 0 : 1);
	}
	assert_int_equal(waitpid(node, &st, 0), node);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(dtplan_probe_clock() - t0 <= o.params.budget_s + 0.2);
	assert_int_equal(read(pipefd[0], got, sizeof(got)), (ssize_t)sizeof(got));
	close(pipefd[0]);
	assert_int_equal(waitpid(fake, &st, 0), fake);
	if (got[0] != 0 || got[1] != 0)
		fail_msg("the process at node2's port received %zu bytes, %zu credentials", got[0],
			 got[1]);
}

static void run__parent_port_held_silently__child_sends_nothing(void **state)
{
	(void)state;
	fake_parent(FAKE_SILENT);
}

static void run__parent_port_held_greeting_of_another_uid__child_sends_nothing(void **state)
{
	(void)state;
	fake_parent(FAKE_OWN_CRED);
}

static void run__parent_greeting_passed_on_from_another_port__child_sends_nothing(void **state)
{
	(void)state;
	fake_parent(FAKE_PASSED_ON);
}

/* Every candidate of the range is held by another process: the listener
 * fails naming the job's ports and the reason, and so does a leader whose
 * one address is held. */
static void listen__every_candidate_taken__names_the_ports(void **state)
{
	uint16_t lo = ntohs(((struct sockaddr_in *)&addrs[0])->sin_port), port = 0;
	int held[N], zero = 0, one = 1;
	struct dtplan_error err = {0};
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	char want[200];

	(void)state;
	/* pick_ports() reserved N consecutive ports: hold them all, as the
	 * listener binds (every address, IPv4 too) */
	for (int i = 0; i < N; i++) {
		struct sockaddr_in6 s6 = {0};

		held[i] = socket(AF_INET6, SOCK_STREAM, 0);
		assert_true(held[i] >= 0);
		setsockopt(held[i], IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		/* the earlier tests' connections to these ports may linger in
		 * TIME_WAIT; a listener still holds the port against the probe's
		 * own (SO_REUSEADDR lets no two sockets listen on one port) */
		setsockopt(held[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		s6.sin6_family = AF_INET6;
		s6.sin6_addr = in6addr_any;
		s6.sin6_port = htons((uint16_t)(lo + i));
		assert_int_equal(bind(held[i], (struct sockaddr *)&s6, sizeof(s6)), 0);
		assert_int_equal(listen(held[i], 1), 0);
	}
	assert_int_equal(dtprobe__listen(NULL, lo, (uint16_t)(lo + N - 1), 2, &port, &err), -1);
	snprintf(want, sizeof(want),
		 "cannot listen on any of ports %u, %u, %u, %u (the job's of probe_ports=%u-%u): "
		 "Address already in use",
		 lo + 2, lo + 3, lo, lo + 1, lo, lo + N - 1);
	assert_int_equal(err.code, DTPLAN_ERR_IO);
	assert_string_equal(err.text, want);
	memset(&err, 0, sizeof(err));
	assert_int_equal(dtprobe__listen(NULL, lo, lo, 7, &port, &err), -1);
	snprintf(
		want, sizeof(want),
		"cannot listen on port %u (the job's of probe_ports=%u-%u): Address already in use",
		lo, lo, lo);
	assert_string_equal(err.text, want);
	/* the leader's own address held: the run fails at once and says where */
	opts_for(&o, 0, dtplan_probe_clock());
	memset(&err, 0, sizeof(err));
	assert_int_equal(dtplan_probe_run(&o, &f, &err), DTPLAN_ERR_IO);
	snprintf(want, sizeof(want), "cannot listen at 127.0.0.1:%u: Address already in use", lo);
	assert_string_equal(err.text, want);
	assert_null(f.m);
	for (int i = 0; i < N; i++)
		close(held[i]);
}

/* node3's address is held by another process: node3 still reports its
 * inventory, takes no part in the rounds, and the leader says why. */
static void run__a_node_cannot_listen__reported_without_links_and_why(void **state)
{
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	pid_t pids[N];
	double t0 = dtplan_probe_clock();
	int held = socket(AF_INET, SOCK_STREAM, 0);
	char want[160];

	(void)state;
	assert_true(held >= 0);
	assert_int_equal(bind(held, (struct sockaddr *)&addrs[2], sizeof(struct sockaddr_in)), 0);
	assert_int_equal(listen(held, 1), 0);
	start_nodes(pids, -1, t0);
	opts_for(&o, 0, t0);
	assert_int_equal(dtplan_probe_run(&o, &f, NULL), DTPLAN_OK);
	wait_nodes(pids);
	close(held);
	assert_int_equal(f.m->n_reported, N);
	assert_int_equal(f.m->n_missing, 0);
	assert_true(f.host_record[2] >= 0);
	for (size_t i = 0; i < f.m->n_links; i++)
		assert_true(f.m->links[i].from != 2 && f.m->links[i].to != 2);
	assert_true(f.m->n_links >= 1);
	assert_int_equal(f.m->n_notes, 1);
	snprintf(want, sizeof(want),
		 "node3 took no part in the link probes: cannot listen at 127.0.0.1:%u: Address "
		 "already in use",
		 ntohs(((struct sockaddr_in *)&addrs[2])->sin_port));
	assert_string_equal(f.m->notes[0], want);
	dtplan_measure_file_fini(&f);
}

static enum dtplan_err no_encode(struct dtplan_auth *a, const void *payload, size_t len,
				 char **cred, struct dtplan_error *err)
{
	(void)a;
	(void)payload;
	(void)len;
	*cred = NULL;
	if (err != NULL) {
		err->code = DTPLAN_ERR_IO;
		snprintf(err->text, sizeof(err->text),
			 "cannot make a credential: Socket communication error");
	}
	return DTPLAN_ERR_IO;
}

/* munged down: a node of a job of several says so before it listens. */
static void run__no_credentials__fails_naming_munge(void **state)
{
	struct dtplan_auth broken = {no_encode, fake_decode, NULL, NULL};
	struct dtplan_probe_opts o;
	struct dtplan_measure_file f;
	struct dtplan_error err = {0};

	(void)state;
	opts_for(&o, 0, dtplan_probe_clock());
	o.auth = &broken;
	assert_int_equal(dtplan_probe_run(&o, &f, &err), DTPLAN_ERR_IO);
	assert_string_equal(err.text, "no MUNGE credentials: cannot make a credential: Socket "
				      "communication error");
}

/* What a greeting must be, each fault with its reason. */
static void hello_check__faults__policy_with_reason(void **state)
{
	static const struct {
		uint8_t type;
		uint32_t round, sender, n_nodes;
		uint16_t port;
		const char *text;
	} cases[] = {
		{DTPLAN_WIRE_JOIN, 0, 1, N, 600, NULL},
		{DTPLAN_WIRE_PROBE, 0, 1, N, 600, "a probe message where node 1's listener"},
		{DTPLAN_WIRE_JOIN, 2, 1, N, 600, "a join message where node 1's listener"},
		{DTPLAN_WIRE_JOIN, 0, 2, N, 600,
		 "the listener at port 600 is node 2's, not node 1's"},
		{DTPLAN_WIRE_JOIN, 0, 1, N + 1, 600, "node 1 counts 5 nodes in the job, not 4"},
		{DTPLAN_WIRE_JOIN, 0, 1, N, 601,
		 "the listener at port 600 speaks for node 1's at port 601"},
	};
	struct dtprobe__peer_rules r = {4242, 0, N, 0, &fake_auth};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_wire_join j = {cases[i].n_nodes, {4, {127, 0, 0, 1}, cases[i].port}};
		struct dtplan_wire_header h = {DTPLAN_WIRE_VERSION, cases[i].type,   0, 4242, 0,
					       cases[i].round,      cases[i].sender, 0};
		struct dtplan_error err = {0};
		uint8_t *body = NULL;
		size_t len = 0;

		assert_int_equal(dtplan_wire_join_encode(&j, &body, &len, NULL), DTPLAN_OK);
		h.body_len = (uint32_t)len;
		if (cases[i].text == NULL) {
			assert_int_equal(dtprobe__hello_check(&r, &h, body, 1, 600, &err),
					 DTPLAN_OK);
		} else {
			assert_int_equal(dtprobe__hello_check(&r, &h, body, 1, 600, &err),
					 DTPLAN_ERR_POLICY);
			if (strstr(err.text, cases[i].text) == NULL)
				fail_msg("case %zu: '%s', expected '%s'", i, err.text,
					 cases[i].text);
		}
		free(body);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(run__four_nodes__every_inventory_and_link, setup,
						teardown),
		cmocka_unit_test_setup_teardown(run__a_node_never_comes__missing_within_budget,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			run__credentials_refused__note_names_munge_not_prolog_flags, setup,
			teardown),
		cmocka_unit_test_setup_teardown(run__alone__note_on_prolog_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(
			run__forged_messages__rejected_logged_measurements_unchanged, setup,
			teardown),
		cmocka_unit_test_setup_teardown(run__parent_port_held_silently__child_sends_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			run__parent_port_held_greeting_of_another_uid__child_sends_nothing, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			run__parent_greeting_passed_on_from_another_port__child_sends_nothing,
			setup, teardown),
		cmocka_unit_test(hello_check__faults__policy_with_reason),
		cmocka_unit_test_setup_teardown(listen__every_candidate_taken__names_the_ports,
						setup, teardown),
		cmocka_unit_test_setup_teardown(run__no_credentials__fails_naming_munge, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			run__a_node_cannot_listen__reported_without_links_and_why, setup, teardown),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
