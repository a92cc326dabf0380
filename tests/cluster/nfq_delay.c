/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfq_delay.c: adds a fixed one-way delay to the packets an iptables NFQUEUE
 * rule hands it (this kernel has no netem; ../shared/TESTBED.md, "Shaping
 * links").  Each packet is held for DELAY_US microseconds, then accepted, in
 * arrival order.  measure.bats builds it (cc nfq_delay.c -lnetfilter_queue)
 * and queues the packets that cross the racks' uplinks.
 *
 * Usage: nfq_delay QUEUE DELAY_US
 * Runs until killed (SIGTERM); prints "ready" once bound to the queue, and
 * when killed "held N packets, median H us": how long the packets really
 * waited from their arrival to their verdict (a timer in a VM wakes late:
 * the yardstick is what was held, not what was asked).
 */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING 65536
#define SAMPLES (1 << 20)

static struct held {
	uint32_t id;
	double due;
} ring[RING];
static size_t head, tail; /* held packets: [tail, head) */
static double delay_s;
static double holds[SAMPLES]; /* seconds from arrival to verdict */
static size_t n_holds;
static volatile sig_atomic_t stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* the verdict for the oldest held packet, its wait recorded */
static void release(struct nfq_q_handle *qh, double t)
{
	if (n_holds < SAMPLES)
		holds[n_holds++] = t - (ring[tail % RING].due - delay_s);
	nfq_set_verdict(qh, ring[tail % RING].id, NF_ACCEPT, 0, NULL);
	tail++;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa,
		     void *data)
{
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);

	(void)msg;
	(void)data;
	if (ph == NULL)
		return 0;
	if (head - tail == RING) /* full: let it through at once */
		return nfq_set_verdict(qh, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL);
	ring[head % RING].id = ntohl(ph->packet_id);
	ring[head % RING].due = now() + delay_s;
	head++;
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct nfq_handle *h;
	struct nfq_q_handle *qh;
	char buf[65536] __attribute__((aligned));
	int fd;

	if (argc != 3) {
		fprintf(stderr, "Usage: nfq_delay QUEUE DELAY_US\n");
		return 2;
	}
	delay_s = strtod(argv[2], NULL) * 1e-6;
	/* wake when a packet is due, not up to 50 us later (the default slack) */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	h = nfq_open();
	if (h == NULL) {
		perror("nfq_open");
		return 1;
	}
	qh = nfq_create_queue(h, (uint16_t)atoi(argv[1]), on_packet, NULL);
	if (qh == NULL || nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) {
		perror("nfq_create_queue");
		return 1;
	}
	nfq_set_queue_maxlen(qh, RING);
	fd = nfq_fd(h);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd p = {fd, POLLIN, 0};
		struct timespec ts = {0, 10000000}; /* idle: look at stop every 10 ms */
		double t = now();

		while (tail < head && ring[tail % RING].due <= t)
			release(qh, t);
		if (tail < head) {
			double wait = ring[tail % RING].due - t;

			ts.tv_sec = (time_t)wait;
			ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		}
		if (ppoll(&p, 1, &ts, NULL) > 0) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (n > 0)
				nfq_handle_packet(h, buf, (int)n);
			else if (n < 0 && errno == ENOBUFS)
				continue; /* the kernel dropped some: they pass by the bypass */
		}
	}
	while (tail < head)
		release(qh, now());
	nfq_destroy_queue(qh);
	nfq_close(h);
	qsort(holds, n_holds, sizeof(*holds), cmp_double);
	printf("held %zu packets, median %.0f us\n", n_holds,
	       n_holds > 0 ? holds[n_holds / 2] * 1e6 : 0.0);
	return 0;
}
