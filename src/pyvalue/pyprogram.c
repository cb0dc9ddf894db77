/* pyprogram.c - the check-program shape, HumanEval's `{test}\ncheck(NAME)`
 * (see pyliteral.h, ee_pyprogram_convert), read with the literal reader of
 * pyliteral.c and the assert shape's parts of pyassert.c.
 *
 * Read line by line as Python's tokenizer would see it: a logical line
 * starts at a physical line's indentation (spaces only here: a tab or form
 * feed in indentation is refused, so no tab-width rule is involved), blank
 * and comment-only lines do not count, and the literal reader consumes the
 * newlines inside brackets and triple-quoted strings.
 */
#include "pyvalue/pyliteral.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/pyliteral_int.h"

/* Python's truth value of a canonical literal. */
static bool truthy(const json_t *v)
{
	if (json_is_null(v))
		return false;
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_string(v))
		return json_string_length(v) > 0;
	const char *text = json_string_value(json_object_get(v, "int"));
	if (text)
		return strcmp(text, "0") != 0;
	text = json_string_value(json_object_get(v, "float"));
	if (text)
		return strtod(text, NULL) != 0; /* nan is true, as in Python */
	const char *key = json_object_iter_key(json_object_iter((json_t *)v));
	return key && json_array_size(json_object_get(v, key)) > 0;
}

/* The end of a logical line: blanks, an optional comment, then a newline
 * (consumed) or the end of the text. */
static bool at_line_end(struct reader *r)
{
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) == '#')
		pylit_skip_comment(r);
	if (pylit_peek(r, 0) < 0)
		return true;
	if (pylit_peek(r, 0) != '\n')
		return false;
	r->pos++;
	return true;
}

/* Skips blank and comment-only lines; returns the indentation (in spaces)
 * of the next logical line with pos at its first character, 0 at the end
 * of the text, -1 when its indentation holds anything but spaces or it
 * starts with a backslash continuation. */
static int next_line(struct reader *r)
{
	for (;;) {
		int width = 0;
		bool other = false;
		while (pylit_peek(r, 0) == ' ' || pylit_peek(r, 0) == '\t' || pylit_peek(r, 0) == '\f') {
			other = other || pylit_peek(r, 0) != ' ';
			width++;
			r->pos++;
		}
		int ch = pylit_peek(r, 0);
		if (ch == '#') {
			pylit_skip_comment(r);
			ch = pylit_peek(r, 0);
		}
		if (ch < 0)
			return 0;
		if (ch == '\n') {
			r->pos++;
			continue;
		}
		return other || ch == '\\' || width > EE_PYPROG_MAX_INDENT ? -1 : width;
	}
}

struct program {
	char def_name[128]; /* check */
	char param[128];    /* candidate */
	char fn[128];       /* the name check() is called with */
	json_t *assigned;   /* names bound at the top level (object used as a set) */
	json_t *calls;      /* [{"args", "kwargs", "expected"}, ...] */
};

/* One statement of check's body: a string (a docstring, or any string
 * expression), `assert LITERAL` with a true literal (a no-op), or the
 * assert shape on the parameter; each with an optional literal message. */
static bool read_body_statement(struct reader *r, struct program *p)
{
	int ch = pylit_peek(r, 0);

	if (ch == '\'' || ch == '"' ||
	    ((ch == 'r' || ch == 'R' || ch == 'u' || ch == 'U') &&
	     (pylit_peek(r, 1) == '\'' || pylit_peek(r, 1) == '"'))) {
		json_t *v = pylit_read_value(r);
		bool ok = json_is_string(v);
		json_decref(v);
		return ok && at_line_end(r);
	}
	if (!pylit_read_keyword_at(r, "assert"))
		return false;
	struct ee_pycall c = { .args = pylit_made(r, json_array()), .kwargs = pylit_made(r, json_array()) };
	bool ok = false, is_call = false;
	if (!c.args || !c.kwargs)
		goto out;
	if (pylit_call_first(r)) {
		if (!pylit_read_call(r, &c) || !pylit_read_eq(r))
			goto out;
		c.expected = pylit_read_value(r);
		is_call = true;
	} else {
		c.expected = pylit_read_value(r);
		if (!c.expected)
			goto out;
		pylit_skip_blanks(r);
		if (pylit_peek(r, 0) == '=') {
			if (!pylit_read_eq(r) || !pylit_read_call(r, &c))
				goto out;
			is_call = true;
		} else if (!truthy(c.expected)) {
			goto out; /* `assert False`, `assert 0`: always fails; left alone */
		}
	}
	if (!c.expected || (is_call && strcmp(c.fn, p->param) != 0))
		goto out;
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) == ',') { /* the message: a literal, ignored */
		r->pos++;
		json_t *msg = pylit_read_value(r);
		if (!msg)
			goto out;
		json_decref(msg);
	}
	if (!at_line_end(r))
		goto out;
	ok = true;
	if (is_call) {
		if (json_array_size(p->calls) >= EE_PYPROG_MAX_CALLS)
			ok = false;
		else
			ok = pylit_stored(
			        r, json_array_append_new(p->calls, json_pack("{s:O, s:O, s:O}", "args",
			                                                     c.args, "kwargs", c.kwargs,
			                                                     "expected", c.expected)) == 0);
	}
out:
	ee_pycall_free(&c);
	return ok;
}

/* "def NAME(PARAM):" then its body, every statement at one indentation. */
static bool read_def(struct reader *r, struct program *p)
{
	if (p->def_name[0] || !pylit_read_keyword_at(r, "def"))
		return false;
	pylit_skip_blanks(r);
	if (!pylit_read_name(r, p->def_name, sizeof(p->def_name)) || pylit_is_keyword(p->def_name) ||
	    !pylit_eat(r, '('))
		return false;
	r->brackets++;
	pylit_skip_blanks(r);
	bool ok = pylit_read_name(r, p->param, sizeof(p->param)) && !pylit_is_keyword(p->param) &&
	          pylit_eat(r, ')');
	r->brackets--;
	if (!ok || !pylit_eat(r, ':') || !at_line_end(r))
		return false;
	int indent = next_line(r);
	if (indent <= 0)
		return false; /* no body, or a body we do not read */
	for (;;) {
		if (!read_body_statement(r, p))
			return false;
		size_t line = r->pos;
		int next = next_line(r);
		if (next < 0 || (next > 0 && next != indent))
			return false; /* Python: an indentation error, or a nested block */
		if (next == 0) {
			r->pos = line; /* the top level goes on (or the text ends) */
			return true;
		}
	}
}

/* One top-level statement: NAME = LITERAL, a string, the def, or the final
 * call NAME(NAME) (which must end the program). Returns 1 for the final
 * call, 0 for another statement, -1 when not of the shape. */
static int read_top_statement(struct reader *r, struct program *p)
{
	char name[128];
	int ch = pylit_peek(r, 0);

	if (ch == '\'' || ch == '"') {
		json_t *v = pylit_read_value(r);
		bool ok = json_is_string(v);
		json_decref(v);
		return ok && at_line_end(r) ? 0 : -1;
	}
	if (strncmp(r->s + r->pos, "def", 3) == 0 && !pylit_is_name_char(pylit_peek(r, 3)))
		return read_def(r, p) ? 0 : -1;
	if (!pylit_read_name(r, name, sizeof(name)) || pylit_is_keyword(name))
		return -1;
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) == '=' && pylit_peek(r, 1) != '=') {
		r->pos++;
		json_t *v = pylit_read_value(r);
		bool ok = v && at_line_end(r) &&
		          pylit_stored(r, json_object_set_new(p->assigned, name, json_null()) == 0);
		json_decref(v);
		return ok ? 0 : -1;
	}
	if (!p->def_name[0] || strcmp(name, p->def_name) != 0 || !pylit_eat(r, '('))
		return -1;
	r->brackets++;
	pylit_skip_blanks(r);
	bool ok = pylit_read_name(r, p->fn, sizeof(p->fn)) && !pylit_is_keyword(p->fn) && pylit_eat(r, ')');
	r->brackets--;
	return ok && pylit_at_statement_end(r) ? 1 : -1;
}

static bool read_program(struct reader *r, struct program *p)
{
	for (;;) {
		int indent = next_line(r);
		if (indent != 0 || pylit_peek(r, 0) < 0)
			return false; /* indented, or the end before the final call */
		int rc = read_top_statement(r, p);
		if (rc < 0)
			return false;
		if (rc == 1)
			break;
	}
	/* The call must reach the candidate's function: not the def itself,
	 * nor a name the program rebinds, and at least one call must be left. */
	return strcmp(p->fn, p->def_name) != 0 && !json_object_get(p->assigned, p->fn) &&
	       !json_object_get(p->assigned, p->def_name) && json_array_size(p->calls) > 0;
}

int ee_pyprogram_convert(const char *code, struct ee_pyprogram *ret)
{
	struct reader r = { .s = code, .n = code ? strlen(code) : 0 };
	struct program p = { .assigned = json_object(), .calls = json_array() };
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	if (!p.assigned || !p.calls) {
		rc = -1;
		goto out;
	}
	if (!code || r.n > EE_PYLIT_MAX_CODE || memchr(code, '\r', r.n) || !read_program(&r, &p)) {
		rc = r.oom ? -1 : 0;
		goto out;
	}
	ret->fn = strdup(p.fn);
	if (!ret->fn) {
		rc = -1;
		goto out;
	}
	ret->calls = p.calls;
	p.calls = NULL;
	rc = 1;
out:
	json_decref(p.assigned);
	json_decref(p.calls);
	return rc;
}

void ee_pyprogram_free(struct ee_pyprogram *p)
{
	if (!p)
		return;
	free(p->fn);
	json_decref(p->calls);
	memset(p, 0, sizeof(*p));
}
