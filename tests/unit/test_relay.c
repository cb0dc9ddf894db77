/* test_relay.c - the separate judge's relay rules (protocol/relay.h):
 * canonical values within bounds, calls and replies in turn, frames
 * rebuilt from typed fields only. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "protocol/relay.h"
#include "fixture_json.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct value_case {
	const char *json;
	int handles, ok;
};

static const struct value_case values[] = {
	{ "null", 0, 1 },
	{ "true", 0, 1 },
	{ "'s'", 0, 1 },
	{ "{'int':'-12'}", 0, 1 },
	{ "{'float':'nan'}", 0, 1 },
	{ "{'tuple':[{'list':[]},{'set':[1]}]}", 0, 0 }, /* a bare JSON number is no canonical value */
	{ "{'dict':[[{'int':'1'},'a']]}", 0, 1 },
	{ "{'dict':[[{'int':'1'}]]}", 0, 0 },
	{ "{'int':'1e3'}", 0, 0 },
	{ "{'int':'-'}", 0, 0 },
	{ "{'int':'1','float':'1'}", 0, 0 },
	{ "{'pickle':'x'}", 0, 0 },
	{ "{'handle':3}", 0, 0 },
	{ "{'handle':3}", 1, 1 },
	{ "{'handle':-1}", 1, 0 },
	{ "{'other':'Foo'}", 0, 1 },
	{ "{'complex':['1.0','-0.0']}", 0, 1 },
	{ "{'list':[{'complex':['nan','inf']}]}", 0, 1 },
	{ "{'complex':['1.0']}", 0, 0 },
	{ "{'complex':['1.0','2.0','3.0']}", 0, 0 },
	{ "{'complex':[{'float':'1.0'},'2.0']}", 0, 0 },
	{ "{'complex':'1+2j'}", 0, 0 },
	{ "{'complex':['1.0','11111111111111111111111111111111111111111']}", 0, 0 },
	{ "{'type':'int'}", 0, 1 },
	{ "{'bytes':'00ff'}", 0, 1 },
	{ "{'bytes':''}", 0, 1 },
	{ "{'bytes':'0'}", 0, 0 },
	{ "{'bytes':'FF'}", 0, 0 },
	{ "{'type':''}", 0, 0 },
	{ "{'type':['int']}", 0, 0 },
	{ "[1]", 0, 0 },
	{ "1.5", 0, 0 },
};

Test(relay, canonical_values_checked)
{
	for (size_t i = 0; i < COUNT(values); i++) {
		json_t *v = fix(values[i].json);
		struct ee_err err = { 0 };
		int rc = ee_relay_check_value(v, values[i].handles, &err);
		cr_expect_eq(rc == 0, values[i].ok, "%s: rc %d (%s)", values[i].json, rc, err.msg);
		json_decref(v);
	}
}

static json_t *nested(int depth)
{
	json_t *v = json_null();
	for (int i = 0; i < depth; i++)
		v = json_pack("{s:[o]}", "list", v);
	return v;
}

Test(relay, depth_and_nodes_bounded)
{
	struct ee_err err = { 0 };
	json_t *ok = nested(EE_RELAY_MAX_DEPTH), *deep = nested(EE_RELAY_MAX_DEPTH + 1);
	cr_expect_eq(ee_relay_check_value(ok, 0, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_relay_check_value(deep, 0, &err), -1);
	cr_expect(strstr(err.msg, "too deep"), "%s", err.msg);
	json_t *items = json_array();
	for (int i = 0; i < EE_RELAY_MAX_NODES; i++)
		json_array_append_new(items, json_null());
	json_t *wide = json_pack("{s:o}", "list", items); /* one node too many with the list */
	cr_expect_eq(ee_relay_check_value(wide, 0, &err), -1);
	cr_expect(strstr(err.msg, "too many nodes"), "%s", err.msg);
	json_decref(ok);
	json_decref(deep);
	json_decref(wide);
}

static char *step(int (*fn)(struct ee_relay *, const json_t *, char **, size_t *, struct ee_err *),
                  struct ee_relay *r, const char *json, struct ee_err *err)
{
	json_t *ev = fix(json);
	char *frame = NULL;
	size_t len = 0;
	int rc = fn(r, ev, &frame, &len, err);
	json_decref(ev);
	if (rc < 0)
		return NULL;
	cr_expect_eq(strlen(frame), len);
	return frame;
}

Test(relay, a_call_and_its_reply_in_turn)
{
	struct ee_relay r;
	struct ee_err err = { 0 };
	ee_relay_init(&r);

	cr_expect_null(
	        step(ee_relay_call, &r, "{'ev':'call','call':0,'fn':'add','args':[],'kwargs':[]}", &err),
	        "a call before serving");
	char *f = step(ee_relay_names, &r, "{'ev':'serving','names':['add'],'seq':4,'nonce':'n'}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect_str_eq(f, "42:{\"names\":[\"add\"],\"modules\":[],\"values\":[]},");
	free(f);
	cr_expect_null(step(ee_relay_names, &r, "{'ev':'serving','names':[]}", &err), "served twice");
	cr_expect_null(
	        step(ee_relay_call, &r, "{'ev':'call','call':1,'fn':'add','args':[],'kwargs':[]}", &err),
	        "out of turn");
	f = step(ee_relay_call, &r,
	         "{'ev':'call','call':0,'fn':'add','args':[{'int':'1'},{'handle':0}],"
	         "'kwargs':[['b',{'int':'2'}]],'secret':'dropped','seq':9}",
	         &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(strstr(f, "\"fn\":\"add\"") && !strstr(f, "secret") && !strstr(f, "seq"), "%s", f);
	free(f);
	cr_expect_null(
	        step(ee_relay_call, &r, "{'ev':'call','call':1,'fn':'add','args':[],'kwargs':[]}", &err),
	        "a second call before the reply");
	cr_expect_null(
	        step(ee_relay_reply, &r, "{'ev':'reply','call':1,'status':'returned','value':null}", &err),
	        "a reply to another call");
	cr_expect_null(step(ee_relay_reply, &r,
	                    "{'ev':'reply','call':0,'status':'returned','value':{'handle':1}}", &err),
	               "a handle inside a returned value");
	f = step(ee_relay_reply, &r,
	         "{'ev':'reply','call':0,'status':'returned','value':{'int':'3'},'changed':[[0,{'list':[]}]],"
	         "'forged':'pass'}",
	         &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(!strstr(f, "forged") && strstr(f, "\"changed\""), "%s", f);
	free(f);
	cr_expect_null(
	        step(ee_relay_reply, &r, "{'ev':'reply','call':0,'status':'returned','value':null}", &err),
	        "a second reply");
	f = step(ee_relay_call, &r, "{'ev':'call','call':1,'handle':0,'args':[],'kwargs':[]}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	free(f);
	f = step(ee_relay_reply, &r,
	         "{'ev':'reply','call':1,'status':'raised','error_type':'SystemExit','message':'m','exit':"
	         "true}",
	         &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(strstr(f, "\"exit\":true"), "%s", f);
	free(f);
}

static char *part(struct ee_relay *r, int from_judge, const char *json, struct ee_err *err)
{
	json_t *ev = fix(json);
	char *frame = NULL;
	size_t len = 0;
	int rc = ee_relay_part(r, from_judge, ev, &frame, &len, err);
	json_decref(ev);
	return rc < 0 ? NULL : frame;
}

/* Values past the canonical bounds stream in parts before their message,
 * which names exactly as many, whole; each part is relayed as it comes. */
Test(relay, streamed_values_are_named_by_their_message)
{
	struct ee_relay r;
	struct ee_err err = { 0 };
	ee_relay_init(&r);

	cr_expect_null(part(&r, 1, "{'ev':'part','data':'N'}", &err), "a part before serving");
	free(step(ee_relay_names, &r, "{'ev':'serving','names':['f']}", &err));
	char *f = part(&r, 1, "{'ev':'part','data':'l2;I2;1,','seq':3}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect_str_eq(f, "19:{\"part\":\"l2;I2;1,\"},");
	free(f);
	cr_expect_null(step(ee_relay_call, &r,
	                    "{'ev':'call','call':0,'fn':'f','args':[{'stream':true}],'kwargs':[]}", &err),
	               "a value cut short");
	ee_relay_init(&r);
	free(step(ee_relay_names, &r, "{'ev':'serving','names':['f']}", &err));
	free(part(&r, 1, "{'ev':'part','data':'l2;I2;1,'}", &err));
	free(part(&r, 1, "{'ev':'part','data':'2;h0;'}", &err));
	cr_expect_null(part(&r, 0, "{'ev':'part','data':'N'}", &err), "the candidate's part outside a call");
	cr_expect_null(
	        step(ee_relay_call, &r,
	             "{'ev':'call','call':0,'fn':'f','args':[{'stream':true},{'stream':true}],'kwargs':[]}",
	             &err),
	        "named twice, streamed once");
	ee_relay_init(&r);
	free(step(ee_relay_names, &r, "{'ev':'serving','names':['f']}", &err));
	free(part(&r, 1, "{'ev':'part','data':'l2;I2;1,'}", &err));
	free(part(&r, 1, "{'ev':'part','data':'2;h0;'}", &err));
	f = step(ee_relay_call, &r,
	         "{'ev':'call','call':0,'fn':'f','args':[{'stream':true},{'kept':3}],'kwargs':[]}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	free(f);
	cr_expect_null(part(&r, 1, "{'ev':'part','data':'N'}", &err), "the judge's part during a call");
	cr_expect_null(step(ee_relay_reply, &r,
	                    "{'ev':'reply','call':0,'status':'returned','value':{'kept':0}}", &err),
	               "a kept value in a reply");
	cr_expect_null(part(&r, 0, "{'ev':'part','data':'h0;'}", &err), "a handle from the candidate");
	ee_relay_init(&r);
	free(step(ee_relay_names, &r, "{'ev':'serving','names':['f']}", &err));
	free(step(ee_relay_call, &r, "{'ev':'call','call':0,'fn':'f','args':[],'kwargs':[]}", &err));
	free(part(&r, 0, "{'ev':'part','data':'s3:a;b'}", &err));
	free(part(&r, 0, "{'ev':'part','data':'I1;7;'}", &err));
	cr_expect_null(
	        step(ee_relay_reply, &r, "{'ev':'reply','call':0,'status':'returned','value':null}", &err),
	        "streamed values the reply does not name");
	ee_relay_init(&r);
	free(step(ee_relay_names, &r, "{'ev':'serving','names':['f']}", &err));
	free(step(ee_relay_call, &r, "{'ev':'call','call':0,'fn':'f','args':[],'kwargs':[]}", &err));
	free(part(&r, 0, "{'ev':'part','data':'s3:a;bI1;7;'}", &err));
	f = step(ee_relay_reply, &r,
	         "{'ev':'reply','call':0,'status':'returned','value':{'stream':true},'changed':[[0,{'stream':"
	         "true}]]}",
	         &err);
	cr_assert_not_null(f, "%s", err.msg);
	free(f);
	cr_expect_null(part(&r, 1, "{'ev':'part','data':''}", &err), "an empty part");
	cr_expect_null(step(ee_relay_call, &r,
	                    "{'ev':'call','call':1,'fn':'f','args':[{'stream':false}],'kwargs':[]}", &err),
	               "a malformed placeholder");
}

Test(relay, serving_names_modules)
{
	struct ee_relay r;
	struct ee_err err = { 0 };
	ee_relay_init(&r);
	char *f = step(ee_relay_names, &r,
	               "{'ev':'serving','names':['f'],'modules':[['np','numpy']],'values':['LIMIT'],'x':1}",
	               &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(strstr(f, "\"modules\":[[\"np\",\"numpy\"]]") && strstr(f, "\"values\":[\"LIMIT\"]") &&
	                  !strstr(f, "\"x\""),
	          "%s", f);
	free(f);
	static const char *const bad_modules[] = {
		"{'ev':'serving','names':[],'values':{}}",
		"{'ev':'serving','names':[],'values':[1]}",
		"{'ev':'serving','names':[],'values':['']}",
		"{'ev':'serving','names':[],'modules':{}}",
		"{'ev':'serving','names':[],'modules':[['np']]}",
		"{'ev':'serving','names':[],'modules':[['np','']]}",
		"{'ev':'serving','names':[],'modules':[['np',{'int':'1'}]]}",
	};
	for (size_t i = 0; i < COUNT(bad_modules); i++) {
		ee_relay_init(&r);
		cr_expect_null(step(ee_relay_names, &r, bad_modules[i], &err), "%s", bad_modules[i]);
		cr_expect_eq(r.names_sent, 0, "%s", bad_modules[i]);
	}
}

/* obj.x is a read of handle 0's attribute; a callable one comes back as
 * "method" (only to a read), and obj.m(1) is one call naming it. */
Test(relay, attribute_reads_and_method_calls)
{
	struct ee_relay r;
	struct ee_err err = { 0 };
	ee_relay_init(&r);
	r.names_sent = 1;

	char *f = step(ee_relay_call, &r,
	               "{'ev':'call','call':0,'handle':0,'attr':'put','args':[],'kwargs':[]}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(strstr(f, "\"attr\":\"put\"") && strstr(f, "\"handle\":0"), "%s", f);
	free(f);
	f = step(ee_relay_reply, &r, "{'ev':'reply','call':0,'status':'method','value':'forged'}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect_str_eq(f, "28:{\"call\":0,\"status\":\"method\"},");
	free(f);
	f = step(ee_relay_call, &r,
	         "{'ev':'call','call':1,'handle':0,'method':'put','args':[{'int':'1'}],'kwargs':[]}", &err);
	cr_assert_not_null(f, "%s", err.msg);
	cr_expect(strstr(f, "\"method\":\"put\"") && !strstr(f, "attr"), "%s", f);
	free(f);
	cr_expect_null(step(ee_relay_reply, &r, "{'ev':'reply','call':1,'status':'method'}", &err),
	               "\"method\" answers an attribute read only");
}

static const char *const bad_calls[] = {
	"{'ev':'call','call':0,'args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'fn':'f','handle':1,'args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'fn':'','args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'fn':'f','args':[1],'kwargs':[]}",
	"{'ev':'call','call':0,'fn':'f','args':[],'kwargs':[['k']]}",
	"{'ev':'call','call':0,'fn':'f','args':[]}",
	"{'ev':'call','call':0,'fn':'f','attr':'x','args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'attr':'x','method':'m','args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'attr':'','args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'method':7,'args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'attr':'x','args':[{'int':'1'}],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'setattr':'x','args':[],'kwargs':[]}",
	"{'ev':'call','call':0,'handle':0,'setattr':'x','method':'m','args':[null],'kwargs':[]}",
};

static const char *const bad_replies[] = {
	"{'ev':'reply','call':0}",
	"{'ev':'reply','call':0,'status':'pass'}",
	"{'ev':'reply','call':0,'status':'handle','handle':'x','type':'T','callable':true}",
	"{'ev':'reply','call':0,'status':'raised'}",
	"{'ev':'reply','call':0,'status':'returned','value':{'x':1}}",
	"{'ev':'reply','call':0,'status':'returned','value':null,'changed':[[-1,null]]}",
};

Test(relay, malformed_messages_refused)
{
	for (size_t i = 0; i < COUNT(bad_calls); i++) {
		struct ee_relay r;
		struct ee_err err = { 0 };
		ee_relay_init(&r);
		r.names_sent = 1;
		cr_expect_null(step(ee_relay_call, &r, bad_calls[i], &err), "%s", bad_calls[i]);
		cr_expect_eq(err.code, EE_ERR_USAGE, "%s", bad_calls[i]);
	}
	for (size_t i = 0; i < COUNT(bad_replies); i++) {
		struct ee_relay r;
		struct ee_err err = { 0 };
		ee_relay_init(&r);
		r.names_sent = r.awaiting = 1;
		r.next_call = 1;
		cr_expect_null(step(ee_relay_reply, &r, bad_replies[i], &err), "%s", bad_replies[i]);
		cr_expect_eq(r.awaiting, 1, "a refused reply is not an answer: %s", bad_replies[i]);
	}
}
