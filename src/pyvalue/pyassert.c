/* pyassert.c - the literal-assert shape, `assert NAME(ARGS) == LITERAL` or
 * `assert LITERAL == NAME(ARGS)` (see pyliteral.h), read with the literal
 * reader of pyliteral.c.
 */
#include "pyvalue/pyliteral.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pyvalue/pyliteral_int.h"

void ee_pycall_free(struct ee_pycall *c)
{
	if (!c)
		return;
	free(c->fn);
	json_decref(c->args);
	json_decref(c->kwargs);
	json_decref(c->expected);
	memset(c, 0, sizeof(*c));
}

/* A keyword argument "name=" ahead? Leaves pos alone when not. */
static bool read_keyword(struct reader *r, char *name, size_t size)
{
	size_t save = r->pos;

	pylit_skip_blanks(r);
	if (pylit_read_name(r, name, size) && !pylit_is_keyword(name)) {
		pylit_skip_blanks(r);
		if (pylit_peek(r, 0) == '=' && pylit_peek(r, 1) != '=') {
			r->pos++;
			return true;
		}
	}
	r->pos = save;
	return false;
}

/* ARGS ")" after the "(": positional literals, then name=literal. */
static bool read_args(struct reader *r, struct ee_pycall *c)
{
	char name[128];

	for (bool need_comma = false;; need_comma = true) {
		if (pylit_eat(r, ')'))
			return true;
		if (need_comma && !pylit_eat(r, ','))
			return false;
		if (need_comma && pylit_eat(r, ')'))
			return true;
		bool kw = read_keyword(r, name, sizeof(name));
		if (!kw && json_array_size(c->kwargs) > 0)
			return false; /* positional after keyword: a SyntaxError */
		json_t *v = pylit_read_value(r);
		if (!v)
			return false;
		if (!kw) {
			if (!pylit_stored(r, json_array_append_new(c->args, v) == 0))
				return false;
			continue;
		}
		for (size_t i = 0; i < json_array_size(c->kwargs); i++) {
			if (strcmp(json_string_value(json_array_get(json_array_get(c->kwargs, i), 0)),
			           name) == 0) {
				json_decref(v);
				return false; /* repeated keyword: a SyntaxError */
			}
		}
		if (!pylit_stored(r, json_array_append_new(c->kwargs, json_pack("[so]", name, v)) == 0))
			return false;
	}
}

/* NAME(ARGS) */
bool pylit_read_call(struct reader *r, struct ee_pycall *c)
{
	char name[128];

	pylit_skip_blanks(r);
	if (!pylit_read_name(r, name, sizeof(name)) || pylit_is_keyword(name) || !pylit_eat(r, '('))
		return false;
	c->fn = strdup(name);
	if (!pylit_stored(r, c->fn != NULL))
		return false;
	r->brackets++;
	bool ok = read_args(r, c);
	r->brackets--;
	return ok;
}

/* "==" and not "===" */
bool pylit_read_eq(struct reader *r)
{
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) != '=' || pylit_peek(r, 1) != '=' || pylit_peek(r, 2) == '=')
		return false;
	r->pos += 2;
	return true;
}

/* Does the text at pos start a call (a name that is not a literal)? */
bool pylit_call_first(const struct reader *r)
{
	struct reader probe = *r;
	char name[128];

	pylit_skip_blanks(&probe);
	if (!pylit_read_name(&probe, name, sizeof(name)))
		return false;
	int q = pylit_peek(&probe, 0);
	if ((q == '\'' || q == '"') && strlen(name) <= 2)
		return false; /* a string prefix */
	return strcmp(name, "True") != 0 && strcmp(name, "False") != 0 && strcmp(name, "None") != 0;
}

/* The keyword `word` at pos, followed by a blank or a backslash
 * continuation (not a longer name, not a parenthesis): consumed. */
bool pylit_read_keyword_at(struct reader *r, const char *word)
{
	size_t len = strlen(word);

	if (r->n - r->pos <= len || memcmp(r->s + r->pos, word, len) != 0)
		return false;
	int ch = pylit_peek(r, len);
	if (ch != ' ' && ch != '\t' && ch != '\\')
		return false;
	r->pos += len;
	return true;
}

static bool read_shape(struct reader *r, struct ee_pycall *c)
{
	if (!pylit_read_keyword_at(r, "assert"))
		return false;
	if (pylit_call_first(r)) {
		if (!pylit_read_call(r, c) || !pylit_read_eq(r))
			return false;
		c->expected = pylit_read_value(r);
	} else {
		c->expected = pylit_read_value(r);
		if (!c->expected || !pylit_read_eq(r) || !pylit_read_call(r, c))
			return false;
	}
	if (!c->expected)
		return false;
	pylit_skip_blanks(r);
	if (pylit_peek(r, 0) == ',') { /* the message: a literal, ignored */
		r->pos++;
		json_t *msg = pylit_read_value(r);
		if (!msg)
			return false;
		json_decref(msg);
	}
	return pylit_at_statement_end(r);
}

int ee_pyassert_convert(const char *code, struct ee_pycall *ret)
{
	struct reader r = { .s = code, .n = code ? strlen(code) : 0 };
	struct ee_pycall c = { 0 };

	memset(ret, 0, sizeof(*ret));
	if (!code || r.n > EE_PYLIT_MAX_CODE)
		return 0;
	c.args = json_array();
	c.kwargs = json_array();
	if (!c.args || !c.kwargs) {
		ee_pycall_free(&c);
		return -1;
	}
	if (!read_shape(&r, &c)) {
		ee_pycall_free(&c);
		return r.oom ? -1 : 0;
	}
	*ret = c;
	return 1;
}
