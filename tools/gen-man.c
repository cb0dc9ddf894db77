/* gen-man.c - writes the man page execeval.1 from its hand-written template
 * and the options table (options/options.h), so the evaluation options the
 * page lists are the ones the binary takes, with the same help text.
 *
 *   gen-man TEMPLATE VERSION > execeval.1
 *
 * The template is roff, copied as it is except for two substitutions: a
 * line "@OPTIONS FRONT@" (FRONT: run, eval or serve) becomes one .TP entry
 * per row of the table that front end takes, and "@VERSION@" anywhere
 * becomes VERSION. An unknown "@..." line is an error, so a typo in the
 * template cannot silently drop a section. Built and run by make
 * (build/execeval.1); not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options/options.h"

static const struct {
	const char *name;
	unsigned front;
} fronts[] = {
	{ "run", EE_FRONT_RUN },
	{ "eval", EE_FRONT_EVAL },
	{ "serve", EE_FRONT_SERVE },
};

/* s as roff text: a backslash is \e, every '-' a minus (\-: options stay
 * copy-pasteable), each '\n' of the table's help a space (its lines were
 * broken for a terminal), and a line never starts with a control character. */
static void put_text(FILE *out, const char *s, int line_start)
{
	for (; *s; s++) {
		if (line_start && (*s == '.' || *s == '\''))
			fputs("\\&", out);
		line_start = 0;
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else if (*s == '\n')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

/* ".TP\n\fB--name\fR \fIARG\fR\nhelp": an enum's ARG is its choices, a|b|c. */
static void put_row(FILE *out, const struct ee_option *row, unsigned front)
{
	const char *help = front == EE_FRONT_RUN && row->help_run ? row->help_run : row->help;

	fputs(".TP\n\\fB", out);
	put_text(out, "--", 0);
	put_text(out, row->name, 0);
	fputs("\\fR", out);
	if (row->type == EE_OPT_ENUM) {
		fputs(" \\fB", out);
		for (size_t i = 0; i < row->n_choices; i++) {
			if (i)
				fputs("\\fR|\\:\\fB", out); /* \: a break point: a long list wraps */
			put_text(out, row->choices[i].name, 0);
		}
		fputs("\\fR", out);
	} else if (row->metavar) {
		fputs(" \\fI", out);
		put_text(out, row->metavar, 0);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	put_text(out, help, 1);
	fputc('\n', out);
}

static int put_options(FILE *out, const char *name)
{
	for (size_t f = 0; f < sizeof(fronts) / sizeof(fronts[0]); f++) {
		if (strcmp(fronts[f].name, name) != 0)
			continue;
		for (size_t i = 0; i < ee_options_count; i++)
			if (ee_options[i].fronts & fronts[f].front)
				put_row(out, &ee_options[i], fronts[f].front);
		return 0;
	}
	return -1;
}

/* line with every "@VERSION@" replaced by version. */
static void put_line(FILE *out, const char *line, const char *version)
{
	static const char key[] = "@VERSION@";
	const char *at;

	while ((at = strstr(line, key))) {
		fwrite(line, 1, (size_t)(at - line), out);
		fputs(version, out);
		line = at + strlen(key);
	}
	fputs(line, out);
}

int main(int argc, char **argv)
{
	char line[4096], front[32];
	unsigned long n = 0;
	FILE *in;
	char tail;

	if (argc != 3) {
		fputs("usage: gen-man TEMPLATE VERSION > execeval.1\n", stderr);
		return 2;
	}
	in = fopen(argv[1], "r");
	if (!in) {
		perror(argv[1]);
		return 2;
	}
	while (fgets(line, sizeof(line), in)) {
		n++;
		if (!strchr(line, '\n') && !feof(in)) {
			fprintf(stderr, "%s:%lu: line too long\n", argv[1], n);
			return 2;
		}
		if (line[0] != '@') {
			put_line(stdout, line, argv[2]);
			continue;
		}
		if (sscanf(line, "@OPTIONS %31[a-z]%c", front, &tail) != 2 || tail != '@' ||
		    put_options(stdout, front) < 0) {
			fprintf(stderr, "%s:%lu: not a known substitution: %s", argv[1], n, line);
			return 2;
		}
	}
	if (ferror(in) || fclose(in) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
		fputs("gen-man: read or write error\n", stderr);
		return 2;
	}
	return 0;
}
