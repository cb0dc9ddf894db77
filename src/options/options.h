/* options.h - every evaluation option, declared once (issue 13).
 *
 * One row per option: its name, type, default, range or choices, help
 * text, the front ends that take it (run, eval, serve's command line, the
 * HTTP request with the server's value as its ceiling) and where its value
 * lands (an offset into struct ee_eval_options, or a setter). The getopt
 * tables, the parsing of values, the evaluation part of every --help, the
 * defaults and the HTTP request's option fields (http.h) are all derived
 * from the table, so adding an option is one row plus the code that uses it.
 * Front-end-only options (-o, --resume, --listen, ...) stay in their front end.
 */
#ifndef EE_OPTIONS_H
#define EE_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/evaluate.h"
#include "input/extract.h"

struct ee_err;
struct ee_task_limits;

/* The front ends, as a bit set. */
enum ee_front {
	EE_FRONT_RUN = 1,
	EE_FRONT_EVAL = 2,
	EE_FRONT_SERVE = 4,
	EE_FRONT_HTTP = 8,    /* a request's field; the server's own value is its ceiling */
	EE_FRONT_DOCKER = 16, /* execeval docker-command: the limits and --image */
};

/* The JSON values a text row's request field takes: a number reaches the
 * row's parse as its text, as it would be written on the command line. */
enum ee_http_json { EE_HTTP_STRING = 1, EE_HTTP_NUMBER = 2 };

enum ee_option_type {
	EE_OPT_FLAG,   /* no argument: stores flag_value */
	EE_OPT_UINT,   /* a whole number in [0, max] */
	EE_OPT_DOUBLE, /* a number */
	EE_OPT_ENUM,   /* one of choices */
	EE_OPT_TEXT,   /* a text the row's parse reads (a rule like "tokens:ci") */
};

/* Where option values land: the evaluation options and the extraction mode
 * (which is the front end's: it turns text into a program before evaluation). */
struct ee_option_sink {
	struct ee_eval_options *opt;
	enum ee_extract_mode *extract;
};

struct ee_option {
	const char *name; /* the long option, without "--" */
	enum ee_option_type type;
	unsigned fronts;     /* enum ee_front bits */
	const char *metavar; /* the argument in --help ("S", "MB"); enums list their choices */
	size_t offset;       /* into struct ee_eval_options, when set is NULL */
	size_t size;         /* of that field: sizeof(int), sizeof(double), ... */
	double def;          /* the default (an enum's value); a flag's: the field's */
	unsigned alt_fronts; /* these front ends default to alt_def instead */
	double alt_def;
	int flag_value;                         /* what a flag stores */
	unsigned long max;                      /* EE_OPT_UINT's largest value */
	const struct ee_option_choice *choices; /* base/choice.h: a module's own table, or options.c's */
	size_t n_choices;
	/* instead of storing at offset (value: the parsed number or choice) */
	void (*set)(const struct ee_option *row, double value, struct ee_option_sink *s);
	/* EE_OPT_TEXT: reads arg into s (arg NULL: the default), -1 with a
	 * message naming --NAME; example is a value it takes (tests, help) */
	int (*parse)(const struct ee_option *row, const char *arg, struct ee_option_sink *s,
	             struct ee_err *err);
	const char *example;
	const char *help;     /* lines separated by '\n' */
	const char *help_run; /* run's wording, when it differs; NULL: help */
	/* EE_FRONT_HTTP: the request's field; when http_limit, it is under
	 * "limits" and struct ee_task_limits holds it and its has_ flag */
	const char *http;
	int http_limit;
	unsigned http_json; /* a text row's JSON forms (enum ee_http_json); 0: a string */
	size_t task_offset, task_has_offset;
};

extern const struct ee_option ee_options[];
extern const size_t ee_options_count;

/* getopt_long's code of the i-th row: above every front end's own codes. */
#define EE_OPTION_CODE 1000
#define EE_OPTIONS_MAX 64 /* rows, at most: a getopt table's size */

/* The row getopt_long returned code for, or NULL when code is not a row's. */
const struct ee_option *ee_option_of_code(int code);
/* The row called name (without "--"), or NULL. */
const struct ee_option *ee_option_named(const char *name);

/* own (terminated by a zero entry) then every row front takes, into
 * out[0..cap) with the terminator: -1 when cap is too small. */
int ee_options_getopt(const struct option *own, unsigned front, struct option *out, size_t cap);

/* The defaults of every row front takes (and ee_limits_default's for the
 * limits no row sets). */
void ee_options_defaults(unsigned front, struct ee_option_sink *s);
/* A row's default for front. */
double ee_option_default(const struct ee_option *row, unsigned front);

/* Parses arg for row and stores it: -1 with a message naming --NAME. */
int ee_option_set(const struct ee_option *row, const char *arg, struct ee_option_sink *s, struct ee_err *err);
/* An enum row's value of name: -1 when name is none of its choices. */
int ee_option_choice(const struct ee_option *row, const char *name, int *ret);
/* "a, b or c" (last "or") or "a, b, c" (last ", ") into buf. */
void ee_option_choices_text(const struct ee_option *row, const char *last, char *buf, size_t size);

/* The rows front takes, as --help lines, help text from column col. */
void ee_options_help(FILE *out, unsigned front, int col);

/* A row's value in o, as a double (limits and ints alike). */
double ee_option_value(const struct ee_option *row, const struct ee_eval_options *o);

/* Strict values: the whole string must parse; messages name the flag. */
int ee_parse_double(const char *flag, const char *s, double *ret, struct ee_err *err);
int ee_parse_uint(const char *flag, const char *s, unsigned long max, unsigned long *ret, struct ee_err *err);

#endif
