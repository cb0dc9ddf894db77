/* relay-floor.c - the floor of a relayed call on this host (issue 33).
 *
 * A round trip of the split judge's shape with no work at all: a "judge"
 * writes 64 bytes to a pipe, a "supervisor" (epoll, as the engine's loop)
 * reads them and writes them to a "candidate", which answers the same
 * way back. Then the same two ends talking directly. What the harness and
 * the supervisor add to a relayed call sits on top of this.
 *
 *   cc -O2 -o /tmp/relay-floor bench/relay-floor.c && /tmp/relay-floor [N]
 *
 * Then the relayed shape again under four placements (sched_setaffinity):
 * the judge and the candidate on one CPU with the relay free, the three on
 * one CPU, the pair on one CPU and the relay on the other, the judge and
 * the candidate on different CPUs.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Where each process runs: -1 anywhere, else that CPU. */
static void pin(int cpu)
{
	cpu_set_t set;
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void echo(int in, int out, int n)
{
	char b[64];
	for (int i = 0; i < n; i++)
		if (read(in, b, sizeof(b)) <= 0 || write(out, b, sizeof(b)) != (ssize_t)sizeof(b))
			_exit(1);
	_exit(0);
}

static void relay(int from_judge, int to_cand, int from_cand, int to_judge, int n)
{
	int ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };
	e.data.fd = from_judge;
	epoll_ctl(ep, EPOLL_CTL_ADD, from_judge, &e);
	e.data.fd = from_cand;
	epoll_ctl(ep, EPOLL_CTL_ADD, from_cand, &e);
	for (int i = 0; i < 2 * n; i++) {
		struct epoll_event ev;
		char b[256];
		if (epoll_wait(ep, &ev, 1, -1) != 1)
			_exit(1);
		ssize_t got = read(ev.data.fd, b, sizeof(b));
		if (got <= 0 || write(ev.data.fd == from_judge ? to_cand : to_judge, b, (size_t)got) != got)
			_exit(1);
	}
	_exit(0);
}

static double judge(int out, int in, int n)
{
	char b[64] = { 0 };
	double t = now_us();
	for (int i = 0; i < n; i++)
		if (write(out, b, sizeof(b)) != (ssize_t)sizeof(b) || read(in, b, sizeof(b)) <= 0)
			return -1;
	return (now_us() - t) / n;
}

static double relayed(int n, int judge_cpu, int relay_cpu, int cand_cpu)
{
	int j2s[2], s2c[2], c2s[2], s2j[2];
	if (pipe(j2s) < 0 || pipe(s2c) < 0 || pipe(c2s) < 0 || pipe(s2j) < 0)
		return -1;
	if (fork() == 0) {
		pin(cand_cpu);
		echo(s2c[0], c2s[1], n);
	}
	if (fork() == 0) {
		pin(relay_cpu);
		relay(j2s[0], s2c[1], c2s[0], s2j[1], n);
	}
	cpu_set_t all;
	sched_getaffinity(0, sizeof(all), &all);
	pin(judge_cpu);
	double us = judge(j2s[1], s2j[0], n);
	sched_setaffinity(0, sizeof(all), &all);
	while (wait(NULL) > 0)
		;
	for (int k = 0; k < 2; k++) {
		close(j2s[k]), close(s2c[k]), close(c2s[k]), close(s2j[k]);
	}
	return us;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	int s2c[2], c2s[2];
	if (n <= 0 || pipe(s2c) < 0 || pipe(c2s) < 0)
		return 2;
	printf("relayed through a third process: %.1f us a round trip\n", relayed(n, -1, -1, -1));
	if (fork() == 0)
		echo(s2c[0], c2s[1], n);
	printf("direct, two processes: %.1f us a round trip\n", judge(s2c[1], c2s[0], n));
	while (wait(NULL) > 0)
		;
	printf("relayed, judge and candidate on CPU 1, relay free: %.1f us\n", relayed(n, 1, -1, 1));
	printf("relayed, all three on CPU 1: %.1f us\n", relayed(n, 1, 1, 1));
	printf("relayed, judge and candidate on CPU 1, relay on CPU 0: %.1f us\n", relayed(n, 1, 0, 1));
	printf("relayed, judge on CPU 0, candidate on CPU 1, relay free: %.1f us\n", relayed(n, 0, -1, 1));
	return 0;
}
