/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe_forge.c: sends forged probe messages to a prolog's leader, for
 * tests/cluster/measure.bats.  Each kind goes on a connection of its own:
 *
 *   none       a join without a credential
 *   garbage    a join with a credential munged never made
 *   job        a join for another job (--job), with a valid credential
 *   uid        a join with a valid credential of the caller's uid (run it as
 *              someone else than the prolog's root)
 *   oversized  a join whose header claims a 64 MiB + 1 byte body
 *   truncated  a join cut in the middle of its credential
 *
 * Usage: probe_forge --to ADDR --port PORT --job ID [--socket MUNGE_SOCKET]
 *                    [--nodes N] [--wait SECONDS] KIND...
 *
 * It tries to connect until --wait seconds pass (the prolog may not listen
 * yet), then sends every kind, one connection each, and prints one line per
 * kind.  Exit status 0 when every kind was sent, 1 otherwise, 2 for bad usage.
 */
#include "config.h"

#include "dtprobes.h"
#include "probes_private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sockaddr_storage to;
static double wait_s = 10.0;

static int open_conn(void)
{
	double end = dtplan_probe_clock() + wait_s;
	int fd;

	for (;;) {
		fd = dtprobe__connect(&to, dtplan_probe_clock() + 0.5);
		if (fd >= 0 || dtplan_probe_clock() >= end)
			return fd;
		usleep(20000);
	}
}

/* Reads the leader's greeting (one whole frame) as a node would before it
 * speaks: left unread, it would reset the connection at close() before the
 * leader read the forgery. */
static void read_greeting(int fd)
{
	uint8_t head[DTPLAN_WIRE_HEADER_LEN], rest[DTPLAN_WIRE_CRED_MAX + 64];
	double deadline = dtplan_probe_clock() + 1.0;
	size_t n;

	if (dtprobe__read_all(fd, head, sizeof(head), deadline) != 0)
		return;
	n = (size_t)head[6] << 8 | head[7];
	n += (size_t)head[24] << 24 | (size_t)head[25] << 16 | (size_t)head[26] << 8 | head[27];
	if (n <= sizeof(rest))
		dtprobe__read_all(fd, rest, n, deadline);
}

/* The frame of a join of sender for job, with cred (NULL: a valid one from
 * auth) and a header that may claim another body length. */
static int forge(struct dtplan_auth *auth, uint32_t job, uint32_t n_nodes, const char *cred,
		 uint32_t claim, size_t cut)
{
	struct dtplan_wire_join j = {n_nodes, {0}};
	struct dtplan_wire_header h = {DTPLAN_WIRE_VERSION, DTPLAN_WIRE_JOIN, 0, job, 0, 0, 1, 0};
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN], *body = NULL, head[DTPLAN_WIRE_HEADER_LEN];
	char *made = NULL;
	size_t blen = 0;
	int fd, rc = -1;

	if (dtplan_wire_join_encode(&j, &body, &blen, NULL) != DTPLAN_OK)
		return -1;
	h.body_len = (uint32_t)blen;
	dtplan_wire_seal(&h, body, seal);
	if (cred == NULL) {
		struct dtplan_error err = {0};

		if (auth->encode(auth, seal, sizeof(seal), &made, &err) != DTPLAN_OK) {
			fprintf(stderr, "probe_forge: %s\n", err.text);
			goto out;
		}
		cred = made;
	}
	h.cred_len = (uint16_t)strlen(cred);
	if (claim > 0)
		h.body_len = claim;
	dtplan_wire_header_encode(&h, head);
	fd = open_conn();
	if (fd < 0) {
		fprintf(stderr, "probe_forge: cannot connect: %s\n", strerror(errno));
		goto out;
	}
	rc = 0;
	read_greeting(fd);
	if (cut > 0) {
		/* the header and part of the credential, then nothing more */
		dtprobe__write_all(fd, head, sizeof(head), dtplan_probe_clock() + 1);
		dtprobe__write_all(fd, cred, cut, dtplan_probe_clock() + 1);
	} else {
		dtprobe__write_all(fd, head, sizeof(head), dtplan_probe_clock() + 1);
		dtprobe__write_all(fd, cred, strlen(cred), dtplan_probe_clock() + 1);
		dtprobe__write_all(fd, body, blen, dtplan_probe_clock() + 1);
	}
	usleep(100000);
	close(fd);
out:
	free(made);
	free(body);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"to", required_argument, NULL, 't'},
		{"port", required_argument, NULL, 'p'},
		{"job", required_argument, NULL, 'j'},
		{"socket", required_argument, NULL, 's'},
		{"nodes", required_argument, NULL, 'n'},
		{"wait", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct dtplan_auth *auth = NULL;
	struct dtplan_auth_munge_opts ao = {NULL, 0, 0};
	struct dtplan_error err = {0};
	const char *addr = NULL, *sock = NULL;
	long port = 0, job = -1, nodes = 8;
	int c, failed = 0;

	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			addr = optarg;
			break;
		case 'p':
			port = strtol(optarg, NULL, 10);
			break;
		case 'j':
			job = strtol(optarg, NULL, 10);
			break;
		case 's':
			sock = optarg;
			break;
		case 'n':
			nodes = strtol(optarg, NULL, 10);
			break;
		case 'w':
			wait_s = strtod(optarg, NULL);
			break;
		default:
			return 2;
		}
	}
	if (addr == NULL || port <= 0 || port > 65535 || job < 0 || optind >= argc) {
		fprintf(stderr, "Usage: probe_forge --to ADDR --port PORT --job ID [--socket S] "
				"[--nodes N] [--wait S] KIND...\n");
		return 2;
	}
	/* for the prolog's root to decode, whoever makes them */
	ao.socket = sock;
	if (dtprobe__resolve(addr, (uint16_t)port, &to, &err) != DTPLAN_OK ||
	    dtplan_auth_munge_create(&ao, &auth, &err) != DTPLAN_OK) {
		fprintf(stderr, "probe_forge: %s\n", err.text);
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		const char *k = argv[i];
		int rc;

		if (strcmp(k, "none") == 0)
			rc = forge(auth, (uint32_t)job, (uint32_t)nodes, "", 0, 0);
		else if (strcmp(k, "garbage") == 0)
			rc = forge(auth, (uint32_t)job, (uint32_t)nodes,
				   "MUNGE:AwQFAAAnot+a+credential+at+all:", 0, 0);
		else if (strcmp(k, "job") == 0 || strcmp(k, "uid") == 0)
			rc = forge(auth, (uint32_t)job, (uint32_t)nodes, NULL, 0, 0);
		else if (strcmp(k, "oversized") == 0)
			rc = forge(auth, (uint32_t)job, (uint32_t)nodes, NULL, (64u << 20) + 1, 0);
		else if (strcmp(k, "truncated") == 0)
			rc = forge(auth, (uint32_t)job, (uint32_t)nodes, NULL, 0, 40);
		else {
			fprintf(stderr, "probe_forge: unknown kind '%s'\n", k);
			return 2;
		}
		printf("%s %s\n", k, rc == 0 ? "sent" : "NOT SENT");
		failed |= rc != 0;
	}
	dtplan_auth_destroy(auth);
	return failed ? 1 : 0;
}
