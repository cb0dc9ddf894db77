/* serve.c - `execeval serve`: the evaluator as an HTTP service (docs/api.md). */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/engine.h"
#include "protocol/job.h"
#include "base/err.h"
#include "serve/auth.h"
#include "serve/server.h"

static const char usage_head[] =
        "usage: execeval serve [OPTIONS]\n"
        "  --listen HOST:PORT     address to bind (default 127.0.0.1:8080; port 0: any free port)\n"
        "  -j, --jobs N           sandboxes at once (default: number of cores)\n"
        "  --queue N              evaluations that may wait for a sandbox (default 1024);\n"
        "                         a request that does not fit gets 429 with Retry-After\n"
        "  --max-body BYTES       largest request body (default 16777216): 413 above\n"
        "  --max-buffered MB      bytes held at once for all clients: bodies as they arrive,\n"
        "                         parsed requests, records awaiting their answer (default 256)\n"
        "  --max-buffered-per-ip MB   of which bodies and parsed requests of one client\n"
        "                         address (default: a quarter of --max-buffered)\n"
        "  --max-tests-per-task N tests in one task (default 10000): 413 above\n"
        "  --max-request-tests N  tests over all runs of one request, a batch's shared task\n"
        "                         once per run (default 500000): 413 above\n"
        "  --max-body-values N    JSON values in one body (default 250000): 413 above, read\n"
        "                         before the body is parsed, so no body holds the loop long\n"
        "  --body-min-rate KIB    a body must arrive at this many KiB/s on average once\n"
        "                         --body-grace has passed, else its connection is closed\n"
        "                         (default 16)\n"
        "  --body-grace S         seconds a body may take before the rate counts (default 10)\n"
        "  --max-connections N    open connections at once (default 1024); more wait in the\n"
        "                         kernel's listen backlog until one closes\n"
        "  --max-connections-per-ip N   open connections from one address (default 0: no\n"
        "                         limit; behind a proxy every client has the proxy's address);\n"
        "                         more are closed as soon as accepted\n"
        "  --idle-timeout S       close a connection idle this long (default 60)\n"
        "  --token-file FILE      require 'Authorization: Bearer TOKEN'; TOKEN is the file's\n"
        "                         content less a trailing newline: 16 to 4096 printable ASCII\n"
        "                         characters, no spaces; GET /healthz stays open\n"
        "  --grace S              after SIGTERM, time to finish accepted work (default 30)\n"
        "  --run-code-deadline S  POST /run_code: seconds a request may wait to start, then\n"
        "                         504 (default: its compile_timeout + 9, so that the answer\n"
        "                         comes within the client's compile_timeout + run_timeout + 10)\n"
        "  --run-code-queue N     POST /run_code requests that may wait (default: one per\n"
        "                         4 MiB of memory, 256 to 16384); past it 504\n"
        "  --run-code-coalesce N  POST /run_code: up to N waiting requests of one program\n"
        "                         (same limits, no files) run in one sandbox, each in its\n"
        "                         own process; a request can then read counters of the\n"
        "                         earlier ones (docs/api.md). Default 1: a sandbox each\n"
        "  --max-sessions N       sessions live at once, of /v1/sessions and POST\n"
        "                         /run_jupyter (default 64); past it 429\n"
        "  --session-preload M,M  modules every session imports before its first cell\n"
        "                         (e.g. numpy,sympy); candidates see what is loaded\n"
        "  --reference-cache MB   generated tests' reference results kept, least recently\n"
        "                         used dropped first (default 64; 0: only runs in flight\n"
        "                         are shared)\n"
        "Evaluation options (defaults of every request; a request's and its task's limits\n"
        "override the limits, up to the server's own):\n";
static const char usage_tail[] =
        "Endpoints: POST /v1/run, POST /v1/batch, POST /run_code, POST /run_jupyter,\n"
        "POST /get_reward, /v1/sessions, GET /healthz, GET /metrics, GET /v1/ping,\n"
        "POST /v1/admin/resume (docs/api.md).\n";

struct serve_args {
	const char *listen;
	const char *token_file;
	unsigned long jobs, queue, max_body, max_buffered_mb, max_connections, per_ip, idle_timeout;
	unsigned long per_ip_mb, max_tests, max_request_tests, max_values, min_rate_kib;
	double grace, body_grace, run_code_deadline;
	unsigned long run_code_queue;
	unsigned long run_code_coalesce;
	unsigned long reference_cache_mb;
	unsigned long max_sessions;
	const char *session_preload;
	enum ee_extract_mode extract;
	struct ee_eval_options opt;
};

/* --session-preload's modules, a NULL-terminated array: dotted names, none
 * the default deny list names (a preloaded module is one a cell finds
 * imported). */
static int split_preload(const char *list, char ***ret, size_t *n, struct ee_err *err)
{
	*ret = NULL;
	*n = 0;
	if (!list || !list[0])
		return 0;
	size_t cap = 1;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	char **names = calloc(cap + 1, sizeof(*names));
	if (!names)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	*ret = names;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len > 100 ||
		    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") < len)
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "--session-preload: expected module names separated by commas, got '%s'",
			        list);
		if (!(names[*n] = strndup(p, len)))
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
		for (size_t i = 0; ee_default_denylist[i]; i++) {
			size_t dl = strlen(ee_default_denylist[i]);
			if (strncmp(names[*n], ee_default_denylist[i], dl) == 0 &&
			    (names[*n][dl] == '\0' || names[*n][dl] == '.'))
				return ee_fail(err, EE_ERR_USAGE, "--session-preload: %s is a denied import",
				               names[*n]);
		}
		(*n)++;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int parse_option(int c, struct serve_args *a, struct ee_err *err)
{
	enum {
		O_LISTEN = 256,
		O_QUEUE,
		O_BODY,
		O_BUFFERED,
		O_CONNS,
		O_IDLE,
		O_TOKEN,
		O_GRACE,
		O_HELP,
		O_PER_IP,
		O_BUFFERED_PER_IP,
		O_MAX_TESTS,
		O_REQUEST_TESTS,
		O_MIN_RATE,
		O_BODY_GRACE,
		O_MAX_VALUES,
		O_RUN_CODE_DEADLINE,
		O_RUN_CODE_QUEUE,
		O_REFERENCE_CACHE,
		O_RUN_CODE_COALESCE,
		O_MAX_SESSIONS,
		O_SESSION_PRELOAD,
	};
	const struct ee_option *row = ee_option_of_code(c);

	if (row) {
		return ee_option_set(row, optarg, &(struct ee_option_sink){ &a->opt, &a->extract }, err);
	}
	switch (c) {
	case O_LISTEN: a->listen = optarg; return 0;
	case 'j': return ee_parse_uint("--jobs", optarg, 4096, &a->jobs, err);
	case O_QUEUE: return ee_parse_uint("--queue", optarg, 1u << 20, &a->queue, err);
	case O_BODY: return ee_parse_uint("--max-body", optarg, 1ul << 30, &a->max_body, err);
	case O_BUFFERED: return ee_parse_uint("--max-buffered", optarg, 1u << 20, &a->max_buffered_mb, err);
	case O_CONNS: return ee_parse_uint("--max-connections", optarg, 1u << 16, &a->max_connections, err);
	case O_IDLE: return ee_parse_uint("--idle-timeout", optarg, 86400, &a->idle_timeout, err);
	case O_PER_IP: return ee_parse_uint("--max-connections-per-ip", optarg, 1u << 16, &a->per_ip, err);
	case O_BUFFERED_PER_IP:
		return ee_parse_uint("--max-buffered-per-ip", optarg, 1u << 20, &a->per_ip_mb, err);
	case O_MAX_TESTS: return ee_parse_uint("--max-tests-per-task", optarg, 1u << 24, &a->max_tests, err);
	case O_REQUEST_TESTS:
		return ee_parse_uint("--max-request-tests", optarg, 1u << 30, &a->max_request_tests, err);
	case O_MAX_VALUES: return ee_parse_uint("--max-body-values", optarg, 1u << 30, &a->max_values, err);
	case O_MIN_RATE: return ee_parse_uint("--body-min-rate", optarg, 1u << 20, &a->min_rate_kib, err);
	case O_BODY_GRACE:
		if (ee_parse_double("--body-grace", optarg, &a->body_grace, err) < 0)
			return -1;
		if (!(a->body_grace >= 0 && a->body_grace <= 3600))
			return ee_fail(err, EE_ERR_USAGE,
			               "--body-grace: expected seconds in [0, 3600], got '%s'", optarg);
		return 0;
	case O_RUN_CODE_QUEUE:
		return ee_parse_uint("--run-code-queue", optarg, 1u << 20, &a->run_code_queue, err);
	case O_RUN_CODE_COALESCE:
		return ee_parse_uint("--run-code-coalesce", optarg, 16, &a->run_code_coalesce, err);
	case O_MAX_SESSIONS: return ee_parse_uint("--max-sessions", optarg, 100000, &a->max_sessions, err);
	case O_SESSION_PRELOAD: a->session_preload = optarg; return 0;
	case O_REFERENCE_CACHE:
		return ee_parse_uint("--reference-cache", optarg, 1u << 20, &a->reference_cache_mb, err);
	case O_RUN_CODE_DEADLINE:
		if (ee_parse_double("--run-code-deadline", optarg, &a->run_code_deadline, err) < 0)
			return -1;
		if (!(a->run_code_deadline > 0 && a->run_code_deadline <= 3600))
			return ee_fail(err, EE_ERR_USAGE,
			               "--run-code-deadline: expected seconds in (0, 3600], got '%s'",
			               optarg);
		return 0;
	case O_TOKEN: a->token_file = optarg; return 0;
	case O_GRACE:
		if (ee_parse_double("--grace", optarg, &a->grace, err) < 0)
			return -1;
		if (!(a->grace >= 0 && a->grace <= 86400))
			return ee_fail(err, EE_ERR_USAGE, "--grace: expected seconds in [0, 86400], got '%s'",
			               optarg);
		return 0;
	case 'h':
	case O_HELP: cli_usage(usage_head, EE_FRONT_SERVE, 25, usage_tail); exit(EXIT_PASS);
	}
	return ee_fail(err, EE_ERR_USAGE, "unknown or incomplete option (see execeval serve --help)");
}

static int parse_args(int argc, char **argv, struct serve_args *a, struct ee_err *err)
{
	static const struct option own[] = {
		{ "listen", required_argument, NULL, 256 },
		{ "jobs", required_argument, NULL, 'j' },
		{ "queue", required_argument, NULL, 257 },
		{ "max-body", required_argument, NULL, 258 },
		{ "max-buffered", required_argument, NULL, 259 },
		{ "max-connections", required_argument, NULL, 260 },
		{ "idle-timeout", required_argument, NULL, 261 },
		{ "token-file", required_argument, NULL, 262 },
		{ "grace", required_argument, NULL, 263 },
		{ "help", no_argument, NULL, 264 },
		{ "max-connections-per-ip", required_argument, NULL, 265 },
		{ "max-buffered-per-ip", required_argument, NULL, 266 },
		{ "max-tests-per-task", required_argument, NULL, 267 },
		{ "max-request-tests", required_argument, NULL, 268 },
		{ "body-min-rate", required_argument, NULL, 269 },
		{ "body-grace", required_argument, NULL, 270 },
		{ "max-body-values", required_argument, NULL, 271 },
		{ "run-code-deadline", required_argument, NULL, 272 },
		{ "run-code-queue", required_argument, NULL, 273 },
		{ "reference-cache", required_argument, NULL, 274 },
		{ "run-code-coalesce", required_argument, NULL, 275 },
		{ "max-sessions", required_argument, NULL, 276 },
		{ "session-preload", required_argument, NULL, 277 },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[EE_OPTIONS_MAX + sizeof(own) / sizeof(own[0])];
	int c;

	ee_options_getopt(own, EE_FRONT_SERVE, longopts, sizeof(longopts) / sizeof(longopts[0]));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hj:", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return ee_fail(err, EE_ERR_USAGE,
			               "unknown or incomplete option '%s' (see execeval serve --help)",
			               argv[optind - 1]);
		if (parse_option(c, a, err) < 0)
			return -1;
	}
	if (optind < argc)
		return ee_fail(err, EE_ERR_USAGE, "unexpected argument '%s'", argv[optind]);
	if (a->jobs == 0 || a->max_body == 0 || a->max_buffered_mb == 0 || a->max_connections == 0 ||
	    a->per_ip_mb == 0 || a->max_tests == 0 || a->max_request_tests == 0 || a->max_values == 0 ||
	    a->min_rate_kib == 0)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "--jobs, --max-body, --max-buffered, --max-buffered-per-ip, --max-connections, "
		        "--max-tests-per-task, --max-request-tests, --max-body-values and --body-min-rate "
		        "must be at least 1");
	return 0;
}

__attribute__((format(printf, 1, 2))) static void log_line(const char *fmt, ...)
{
	va_list ap;

	fputs("execeval serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One trivial candidate through the real sandbox before listening: a host
 * that cannot run sandboxes (a missing capability, no cgroup access) fails
 * here with exit 3, instead of passing readiness probes and answering every
 * request 500. */
static int self_check(struct ee_engine *eng, const struct ee_eval_options *o, struct ee_err *err)
{
	double ms;

	if (ee_engine_check(eng, o, &ms, err) == 0)
		return 0;
	char why[sizeof(err->msg)];
	snprintf(why, sizeof(why), "%s", err->msg);
	ee_fail(err, EE_ERR_SANDBOX, "self-check: %.200s (see execeval doctor)", why);
	return -1;
}

static int serve(struct serve_args *a, struct ee_server_config *cfg, struct ee_err *err)
{
	struct ee_engine_config ecfg = { .opt = &a->opt, .workers = (unsigned)a->jobs };
	struct ee_engine *eng = NULL;
	struct ee_server *srv = NULL;
	char where[80];
	int code = EXIT_SANDBOX;

	if (ee_engine_open(&ecfg, &eng, err) < 0)
		goto out;
	cfg->isolation = ee_engine_warm(eng) ? "warm" : "cold";
	if (self_check(eng, &a->opt, err) < 0 || ee_server_new(eng, &a->opt, cfg, &srv, err) < 0)
		goto out;
	ee_server_address(srv, where, sizeof(where));
	log_line("listening on http://%s (%lu workers, %s isolation, queue %lu)", where, a->jobs,
	         cfg->isolation, a->queue);
	int rc = ee_server_run(srv, err);
	if (rc < 0)
		goto out;
	log_line(rc ? "stopped by signal %d" : "stopped: every accepted request was answered", rc);
	code = rc ? 128 + rc : EXIT_PASS;
out:
	ee_server_free(srv);
	ee_engine_close(eng);
	return code;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a = {
		.listen = "127.0.0.1:8080",
		.queue = 1024,
		.max_body = 16u << 20,
		.max_buffered_mb = 256,
		.max_connections = 1024,
		.idle_timeout = 60,
		.grace = 30,
		.per_ip_mb = ULONG_MAX, /* a quarter of --max-buffered, below */
		.max_tests = 10000,
		.max_request_tests = 500000,
		.max_values = 250000,
		.min_rate_kib = 16,
		.body_grace = 10,
		.reference_cache_mb = 64,
		.run_code_coalesce = 1,
		.max_sessions = 64,
	};
	struct ee_server_config cfg;
	struct ee_err err = { 0 };
	char *token = NULL;
	char **preload = NULL;
	int code = EXIT_USAGE;

	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	a.jobs = cores > 0 ? (unsigned long)cores : 1;
	/* run_hidden_on_fail: RL-facing, the gate would tell a running candidate
	 * its public verdict */
	ee_options_defaults(EE_FRONT_SERVE, &(struct ee_option_sink){ &a.opt, &a.extract });
	memset(&cfg, 0, sizeof(cfg));
	if (parse_args(argc, argv, &a, &err) < 0 || ee_listen_parse(a.listen, &cfg.addr, &err) < 0 ||
	    (a.token_file && ee_token_load(a.token_file, &token, &err) < 0)) {
		fprintf(stderr, "execeval serve: %s\n", err.msg);
		goto out;
	}
	cli_clamp_limits("serve", &a.opt.limits);
	if (!token && !ee_listen_is_loopback(&cfg.addr))
		log_line(
		        "warning: listening on %s without --token-file: anyone who can reach it can run code "
		        "in its sandboxes",
		        a.listen);
	cfg.token = token;
	cfg.max_body = a.max_body;
	cfg.max_buffered = (size_t)a.max_buffered_mb << 20;
	cfg.max_buffered_per_ip = a.per_ip_mb == ULONG_MAX ? cfg.max_buffered / 4 : (size_t)a.per_ip_mb << 20;
	cfg.max_tests_per_task = a.max_tests;
	cfg.max_request_tests = a.max_request_tests;
	cfg.max_body_values = a.max_values;
	cfg.body_min_rate = (double)a.min_rate_kib * 1024;
	cfg.body_grace_s = a.body_grace;
	cfg.max_connections = (unsigned)a.max_connections;
	cfg.max_connections_per_ip = (unsigned)a.per_ip;
	cfg.idle_timeout_s = (unsigned)a.idle_timeout;
	cfg.grace_s = a.grace;
	cfg.jobs = (unsigned)a.jobs;
	cfg.queue = a.queue;
	cfg.run_code_deadline_s = a.run_code_deadline;
	cfg.run_code_queue = a.run_code_queue;
	cfg.run_code_coalesce = (unsigned)a.run_code_coalesce;
	cfg.reference_cache = (size_t)a.reference_cache_mb << 20;
	cfg.max_sessions = (unsigned)a.max_sessions;
	if (split_preload(a.session_preload, &preload, &cfg.n_session_preload, &err) < 0) {
		fprintf(stderr, "execeval serve: %s\n", err.msg);
		goto out;
	}
	cfg.session_preload = (const char *const *)preload;
	cfg.extract = a.extract;
	cfg.log = log_line;
	code = serve(&a, &cfg, &err);
	if (code == EXIT_SANDBOX)
		fprintf(stderr, "execeval serve: %s\n", err.msg);
out:
	free(token);
	for (size_t i = 0; preload && preload[i]; i++)
		free(preload[i]);
	free(preload);
	return code;
}
