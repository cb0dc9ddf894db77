/* relay.c - the separate judge's relay rules (see relay.h).
 *
 * Each message is rebuilt from its typed fields only (never forwarded as
 * the bytes that came), so whatever else a sender puts in an event stays
 * with the supervisor. */
#include "protocol/relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define MAX_TEXT    1000   /* a name, a type's name, a keyword */
#define MAX_DIGITS  100001 /* the harness's int limit, with a sign */
#define MAX_FLOAT   40
#define MAX_MESSAGE 4000 /* an exception's message and text */

void ee_relay_init(struct ee_relay *r)
{
	memset(r, 0, sizeof(*r));
	ee_flat_init(&r->flat, 1);
}

static int bad(struct ee_err *err, const char *why)
{
	return ee_fail(err, EE_ERR_USAGE, "separate judge: %s", why);
}

static int short_string(const json_t *v, size_t max)
{
	return json_is_string(v) && json_string_length(v) >= 1 && json_string_length(v) <= max;
}

static int int_text(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 0;

	if (!s || n == 0 || n > MAX_DIGITS)
		return 0;
	if (s[0] == '-')
		i = 1;
	if (i == n)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* A walk over one message's values: its node budget, whether handles may
 * occur, and how many {"stream":true} it names (streams NULL: none may). */
struct walk {
	size_t nodes;
	int handles;
	size_t *streams;
};

static int hex_text(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n % 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int check_node(const json_t *v, int depth, struct walk *w, struct ee_err *err);

static int check_items(const json_t *list, int depth, struct walk *w, int pairs, struct ee_err *err)
{
	size_t i;
	const json_t *item;

	if (!json_is_array(list))
		return bad(err, "a container's items are not a list");
	json_array_foreach (list, i, item) {
		if (!pairs) {
			if (check_node(item, depth + 1, w, err) < 0)
				return -1;
			continue;
		}
		if (!json_is_array(item) || json_array_size(item) != 2)
			return bad(err, "a dict item is not a pair");
		if (check_node(json_array_get(item, 0), depth + 1, w, err) < 0 ||
		    check_node(json_array_get(item, 1), depth + 1, w, err) < 0)
			return -1;
	}
	return 0;
}

/* Recursion is bounded by EE_RELAY_MAX_DEPTH, checked before descending. */
static int check_node(const json_t *v, int depth, struct walk *w, struct ee_err *err)
{
	if (++w->nodes > EE_RELAY_MAX_NODES)
		return bad(err, "a value of too many nodes");
	if (depth > EE_RELAY_MAX_DEPTH)
		return bad(err, "a value nested too deep");
	if (json_is_null(v) || json_is_boolean(v) || json_is_string(v))
		return 0;
	if (!json_is_object(v) || json_object_size(v) != 1)
		return bad(err, "not a canonical value");
	const char *tag = json_object_iter_key(json_object_iter((json_t *)v));
	const json_t *in = json_object_iter_value(json_object_iter((json_t *)v));
	if (strcmp(tag, "int") == 0)
		return int_text(in) ? 0 : bad(err, "a malformed int");
	if (strcmp(tag, "float") == 0)
		return short_string(in, MAX_FLOAT) ? 0 : bad(err, "a malformed float");
	if (strcmp(tag, "bytes") == 0) /* the judge's channel only: lower-case hex pairs */
		return hex_text(in) ? 0 : bad(err, "malformed bytes");
	if (strcmp(tag, "complex") == 0) /* [real, imag]: each a float's text, one node in all */
		return json_is_array(in) && json_array_size(in) == 2 &&
		                       short_string(json_array_get(in, 0), MAX_FLOAT) &&
		                       short_string(json_array_get(in, 1), MAX_FLOAT)
		               ? 0
		               : bad(err, "a malformed complex");
	if (strcmp(tag, "type") == 0) /* a builtin type, by name */
		return short_string(in, MAX_TEXT) ? 0 : bad(err, "a malformed type");
	if (strcmp(tag, "other") == 0)
		return short_string(in, MAX_TEXT) ? 0 : bad(err, "a malformed other");
	if (strcmp(tag, "handle") == 0)
		return w->handles && json_is_integer(in) && json_integer_value(in) >= 0
		               ? 0
		               : bad(err, "a handle out of place");
	if (strcmp(tag, "kept") == 0) /* a call argument streamed before, kept by the candidate */
		return w->handles && json_is_integer(in) && json_integer_value(in) >= 0
		               ? 0
		               : bad(err, "a kept value out of place");
	if (strcmp(tag, "stream") == 0) { /* the next value streamed before the message */
		if (!w->streams || !json_is_true(in))
			return bad(err, "a streamed value out of place");
		++*w->streams;
		return 0;
	}
	if (strcmp(tag, "dict") == 0)
		return check_items(in, depth, w, 1, err);
	if (strcmp(tag, "list") == 0 || strcmp(tag, "tuple") == 0 || strcmp(tag, "set") == 0 ||
	    strcmp(tag, "frozenset") == 0)
		return check_items(in, depth, w, 0, err);
	return bad(err, "an unknown tag");
}

int ee_relay_check_value(const json_t *v, int handles, struct ee_err *err)
{
	struct walk w = { .handles = handles };
	if (!v)
		return bad(err, "a value is missing");
	return check_node(v, 0, &w, err);
}

/* The values streamed before a message: as many, and as whole, as it
 * names; the stream starts again for the next message, whose sender may
 * name handles (next_is_a_call) or not. */
static int streamed_as_named(struct ee_relay *r, size_t named, int next_is_a_call, struct ee_err *err)
{
	int ok = ee_flat_whole(&r->flat) && r->flat.values == named;
	ee_flat_init(&r->flat, next_is_a_call);
	return ok ? 0 : bad(err, "streamed values other than the message names");
}

/* frame = "<len>:<compact JSON of obj>,"; obj is consumed. */
static int frame_of(json_t *obj, char **ret_frame, size_t *ret_len, struct ee_err *err)
{
	if (!obj)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	char *text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(obj);
	if (!text)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	size_t n = strlen(text);
	if (n > EE_RELAY_MAX_FRAME) {
		free(text);
		return bad(err, "a message over the frame limit");
	}
	char *frame = malloc(n + 24);
	if (!frame) {
		free(text);
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	}
	int head = snprintf(frame, 24, "%zu:", n);
	memcpy(frame + head, text, n);
	frame[head + n] = ',';
	frame[head + n + 1] = '\0';
	free(text);
	*ret_frame = frame;
	*ret_len = (size_t)head + n + 1;
	return 0;
}

int ee_relay_names(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len,
                   struct ee_err *err)
{
	const json_t *names = json_object_get(ev, "names"), *name;
	size_t i;

	if (r->names_sent)
		return bad(err, "a second serving event");
	if (!json_is_array(names) || json_array_size(names) > EE_RELAY_MAX_NAMES)
		return bad(err, "serving: bad names");
	json_array_foreach (names, i, name)
		if (!short_string(name, MAX_TEXT))
			return bad(err, "serving: bad names");
	/* [[global name, module name]]: the judge imports its own copy of each. */
	const json_t *modules = json_object_get(ev, "modules"), *pair;
	if (modules && (!json_is_array(modules) || json_array_size(modules) > EE_RELAY_MAX_NAMES))
		return bad(err, "serving: bad modules");
	json_array_foreach (modules, i, pair)
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !short_string(json_array_get(pair, 0), MAX_TEXT) ||
		    !short_string(json_array_get(pair, 1), MAX_TEXT))
			return bad(err, "serving: bad modules");
	/* The other globals, named only: the judge reads those a test mentions (handle 0). */
	const json_t *values = json_object_get(ev, "values");
	if (values && (!json_is_array(values) || json_array_size(values) > EE_RELAY_MAX_NAMES))
		return bad(err, "serving: bad values");
	json_array_foreach (values, i, name)
		if (!short_string(name, MAX_TEXT))
			return bad(err, "serving: bad values");
	r->names_sent = 1;
	json_t *none = json_array();
	json_t *out = json_pack("{s:O, s:O, s:O}", "names", names, "modules", modules ? modules : none,
	                        "values", values ? values : none);
	json_decref(none);
	return frame_of(out, ret_frame, ret_len, err);
}

/* A call's arguments: canonical values (handles allowed), keywords as
 * [name, value] pairs; all of them share one node budget, as one message;
 * *streams counts the streamed ones they name. */
static int check_arguments(const json_t *args, const json_t *kwargs, size_t *streams, struct ee_err *err)
{
	struct walk w = { .handles = 1, .streams = streams };
	size_t i;
	const json_t *item;

	if (!json_is_array(args) || !json_is_array(kwargs))
		return bad(err, "call: bad arguments");
	json_array_foreach (args, i, item)
		if (check_node(item, 1, &w, err) < 0)
			return -1;
	json_array_foreach (kwargs, i, item) {
		if (!json_is_array(item) || json_array_size(item) != 2 ||
		    !short_string(json_array_get(item, 0), MAX_TEXT))
			return bad(err, "call: a bad keyword argument");
		if (check_node(json_array_get(item, 1), 1, &w, err) < 0)
			return -1;
	}
	return 0;
}

/* A call of a handle may name one member: "attr" (a read, no arguments),
 * "method" (a call of it), "setattr" (one argument, the value). -1 when
 * it names two. */
static int handle_member(const json_t *ev, const char **ret_key, const json_t **ret_member)
{
	static const char *const keys[] = { "attr", "method", "setattr" };

	*ret_member = NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *m = json_object_get(ev, keys[i]);
		if (m && *ret_member)
			return -1;
		if (m) {
			*ret_member = m;
			*ret_key = keys[i];
		}
	}
	return 0;
}

int ee_relay_call(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len, struct ee_err *err)
{
	const json_t *call = json_object_get(ev, "call"), *fn = json_object_get(ev, "fn");
	const json_t *handle = json_object_get(ev, "handle");
	const json_t *args = json_object_get(ev, "args"), *kwargs = json_object_get(ev, "kwargs");
	const char *member_key = NULL; /* what of the handle, if anything */
	const json_t *member;
	int twice = handle_member(ev, &member_key, &member) < 0;
	int attr = member && strcmp(member_key, "attr") == 0;
	int set = member && strcmp(member_key, "setattr") == 0;

	if (!r->names_sent)
		return bad(err, "a call before the candidate served");
	if (r->awaiting)
		return bad(err, "a call before the previous one's reply");
	if (!json_is_integer(call) || json_integer_value(call) != r->next_call)
		return bad(err, "a call out of turn");
	if (!!fn == !!handle || (fn && !short_string(fn, MAX_TEXT)) ||
	    (handle && (!json_is_integer(handle) || json_integer_value(handle) < 0)))
		return bad(err, "call: name a function or a handle");
	if (twice || (member && (!handle || !short_string(member, MAX_TEXT))))
		return bad(err, "call: an attribute or a method of a handle, by name");
	size_t streams = 0;
	if (check_arguments(args, kwargs, &streams, err) < 0 || streamed_as_named(r, streams, 0, err) < 0)
		return -1;
	if ((attr && json_array_size(args)) || (set && json_array_size(args) != 1) ||
	    ((attr || set) && json_array_size(kwargs)))
		return bad(err, "call: an attribute read takes no arguments, a set one");
	json_t *out = json_pack("{s:I, s:O, s:O, s:O}", "call", (json_int_t)r->next_call,
	                        fn ? "fn" : "handle", fn ? fn : handle, "args", args, "kwargs", kwargs);
	if (out && member && json_object_set(out, member_key, (json_t *)member)) {
		json_decref(out);
		out = NULL;
	}
	if (frame_of(out, ret_frame, ret_len, err) < 0)
		return -1;
	r->attr_read = attr;
	r->next_call++;
	r->awaiting = 1;
	return 0;
}

/* A returned value's changed arguments: [[position or keyword, value]...]. */
static int check_changed(const json_t *changed, struct walk *w, struct ee_err *err)
{
	size_t i;
	const json_t *item;

	if (!json_is_array(changed))
		return bad(err, "reply: bad changed arguments");
	json_array_foreach (changed, i, item) {
		const json_t *key = json_array_get(item, 0);
		if (!json_is_array(item) || json_array_size(item) != 2 ||
		    !(short_string(key, MAX_TEXT) || (json_is_integer(key) && json_integer_value(key) >= 0)))
			return bad(err, "reply: bad changed arguments");
		if (check_node(json_array_get(item, 1), 1, w, err) < 0)
			return -1;
	}
	return 0;
}

/* The returned value, then its changed arguments: as many streamed values
 * as came before the reply, in that order. */
static json_t *returned_reply(struct ee_relay *r, const json_t *ev, json_t *out, struct ee_err *err)
{
	const json_t *value = json_object_get(ev, "value"), *changed = json_object_get(ev, "changed");
	size_t streams = 0;
	struct walk w = { .streams = &streams };

	if (!value) {
		bad(err, "a value is missing");
		return NULL;
	}
	if (check_node(value, 0, &w, err) < 0)
		return NULL;
	w.nodes = 0; /* the changed arguments' own budget, as before */
	if ((changed && check_changed(changed, &w, err) < 0) || streamed_as_named(r, streams, 1, err) < 0)
		return NULL;
	json_object_set(out, "value", (json_t *)value);
	if (changed)
		json_object_set(out, "changed", (json_t *)changed);
	return out;
}

static json_t *handle_reply(const json_t *ev, json_t *out, struct ee_err *err)
{
	const json_t *handle = json_object_get(ev, "handle"), *type = json_object_get(ev, "type");
	const json_t *is_callable = json_object_get(ev, "callable");

	if (!json_is_integer(handle) || json_integer_value(handle) < 0 || !short_string(type, MAX_TEXT) ||
	    !json_is_boolean(is_callable)) {
		bad(err, "reply: a malformed handle");
		return NULL;
	}
	json_object_set(out, "handle", (json_t *)handle);
	json_object_set(out, "type", (json_t *)type);
	json_object_set(out, "callable", (json_t *)is_callable);
	return out;
}

static json_t *raised_reply(const json_t *ev, json_t *out, struct ee_err *err)
{
	/* denied: the deny-list entry behind it, which the judge's test reports
	 * as inline's would (an error, "denied import: NAME"). */
	static const char *const texts[] = { "error_type", "message", "text", "denied" };

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const json_t *t = json_object_get(ev, texts[i]);
		if (t && (!json_is_string(t) || json_string_length(t) > MAX_MESSAGE)) {
			bad(err, "reply: a malformed exception");
			return NULL;
		}
		if (t)
			json_object_set(out, texts[i], (json_t *)t);
	}
	if (!json_is_string(json_object_get(ev, "error_type"))) {
		bad(err, "reply: an exception without its type");
		return NULL;
	}
	if (json_is_true(json_object_get(ev, "exit")))
		json_object_set_new(out, "exit", json_true());
	return out;
}

int ee_relay_reply(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len,
                   struct ee_err *err)
{
	const json_t *call = json_object_get(ev, "call");
	const char *status = json_string_value(json_object_get(ev, "status"));

	if (!r->awaiting || !json_is_integer(call) || json_integer_value(call) != r->next_call - 1)
		return bad(err, "a reply out of turn");
	if (!status)
		return bad(err, "reply: no status");
	json_t *out = json_pack("{s:I, s:s}", "call", (json_int_t)(r->next_call - 1), "status", status);
	if (!out)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	json_t *done = NULL;
	if (strcmp(status, "returned") == 0)
		done = returned_reply(r, ev, out, err);
	else if (strcmp(status, "handle") == 0)
		done = handle_reply(ev, out, err);
	else if (strcmp(status, "raised") == 0)
		done = raised_reply(ev, out, err);
	else if (strcmp(status, "too_large") == 0 || strcmp(status, "refused") == 0)
		done = out;
	else if (strcmp(status, "method") == 0 && r->attr_read)
		done = out; /* the attribute read named a callable: nothing else crosses */
	else
		bad(err, "reply: an unknown status");
	if (!done) {
		json_decref(out);
		return -1;
	}
	if (frame_of(out, ret_frame, ret_len, err) < 0)
		return -1;
	/* Any other answer drops what was streamed before it (the judge's
	 * decoder reads streamed values only for a returned one). */
	ee_flat_init(&r->flat, 1);
	r->awaiting = 0;
	return 0;
}

int ee_relay_part(struct ee_relay *r, int from_judge, const json_t *ev, char **ret_frame, size_t *ret_len,
                  struct ee_err *err)
{
	const json_t *data = json_object_get(ev, "data");

	if (!r->names_sent || r->awaiting == from_judge)
		return bad(err, from_judge ? "a part during a call" : "a part outside a call");
	if (!json_is_string(data) || json_string_length(data) == 0 ||
	    json_string_length(data) > EE_RELAY_MAX_FRAME / 2)
		return bad(err, "a malformed part");
	if (ee_flat_feed(&r->flat, json_string_value(data), json_string_length(data), err) < 0)
		return -1;
	return frame_of(json_pack("{s:O}", "part", data), ret_frame, ret_len, err);
}
