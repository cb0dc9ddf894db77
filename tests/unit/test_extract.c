/* test_extract.c - code extraction from a model's generation (extract.h). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "input/compose.h"
#include "input/extract.h"
#include "input/task.h"

/* S(x): a literal and its exact length, NULs included. */
#define S(x) x, sizeof(x) - 1

struct extract_case {
	const char *name;
	const char *text;
	size_t text_len;
	enum ee_extract_mode mode;
	const char *want;
	size_t want_len;
	int want_found;
};

#define AUTO   EE_EXTRACT_AUTO
#define FENCED EE_EXTRACT_FENCED
#define NONE   EE_EXTRACT_NONE

static const struct extract_case cases[] = {
	/* tags */
	{ "python", S("```python\nx = 1\n```\n"), AUTO, S("x = 1\n"), 1 },
	{ "py", S("```py\nx\n```"), AUTO, S("x\n"), 1 },
	{ "python3 mixed case", S("```Python3\nx\n```"), AUTO, S("x\n"), 1 },
	{ "PYTHON", S("```PYTHON\nx\n```"), AUTO, S("x\n"), 1 },
	{ "tilde python", S("~~~python\nx\n~~~"), AUTO, S("x\n"), 1 },
	{ "tag then attributes", S("```python title=\"a.py\"\nx\n```"), AUTO, S("x\n"), 1 },
	{ "tag with spaces around", S("```  python3 \nx\n```"), AUTO, S("x\n"), 1 },
	{ "untagged backticks", S("```\nx\n```"), AUTO, S("x\n"), 1 },
	{ "untagged tildes", S("~~~\nx\n~~~"), AUTO, S("x\n"), 1 },
	{ "prose around", S("Here:\n```python\nx\n```\nDone."), AUTO, S("x\n"), 1 },
	/* choice between blocks */
	{ "other language skipped", S("```js\nf()\n```\n```python\nx\n```"), AUTO, S("x\n"), 1 },
	{ "only other language", S("```bash\nls\n```\n"), AUTO, S("```bash\nls\n```\n"), 0 },
	{ "pycon is another language", S("```pycon\n>>> 1\n```"), AUTO, S("```pycon\n>>> 1\n```"), 0 },
	{ "python beats earlier untagged", S("```\nuntagged\n```\n```python\npy\n```"), AUTO, S("py\n"), 1 },
	{ "last untagged of two", S("```\na\n```\n```\nb\n```"), AUTO, S("b\n"), 1 },
	{ "last python of two", S("```python\na\n```\n```python\nb\n```"), AUTO, S("b\n"), 1 },
	{ "python beats later untagged", S("```python\npy\n```\n```\nuntagged\n```"), AUTO, S("py\n"), 1 },
	{ "untagged after other language", S("```sh\nls\n```\n```\nb\n```"), AUTO, S("b\n"), 1 },
	{ "fences inside other block ignored",
	  S("~~~markdown\n```python\nbad\n```\n~~~\n```python\ngood\n```"), AUTO, S("good\n"), 1 },
	/* fence shapes */
	{ "unclosed runs to end", S("text\n```python\nx = 1\ny = 2"), AUTO, S("x = 1\ny = 2"), 1 },
	{ "unclosed with newline", S("```python\nx\n"), AUTO, S("x\n"), 1 },
	{ "longer fence holds shorter", S("````python\n```\nnot closed\n````\n"), AUTO,
	  S("```\nnot closed\n"), 1 },
	{ "longer closer closes", S("```python\nx\n`````\nafter"), AUTO, S("x\n"), 1 },
	{ "other char does not close", S("~~~python\n```\nx\n~~~"), AUTO, S("```\nx\n"), 1 },
	{ "closer with trailing blanks", S("```python\nx\n```  \t\n"), AUTO, S("x\n"), 1 },
	{ "closer with text is body", S("```python\na\n``` x\nb\n```"), AUTO, S("a\n``` x\nb\n"), 1 },
	{ "tagged line inside block is body", S("```\na\n```python\nb\n```"), AUTO, S("a\n```python\nb\n"),
	  1 },
	{ "two backticks are no fence", S("``python\nx\n``"), AUTO, S("``python\nx\n``"), 0 },
	{ "inline triple backticks", S("```print(1)```"), AUTO, S("```print(1)```"), 0 },
	{ "empty block", S("```python\n```"), AUTO, S(""), 1 },
	{ "opener at end of text", S("say\n```python"), AUTO, S(""), 1 },
	/* indentation */
	{ "indented body kept", S("```python\ndef f():\n    return 1\n```"), AUTO,
	  S("def f():\n    return 1\n"), 1 },
	{ "fence indented 3 spaces", S("   ```python\nx\n   ```"), AUTO, S("x\n"), 1 },
	{ "fence indented 4 spaces is text", S("    ```python\nx\n    ```"), AUTO,
	  S("    ```python\nx\n    ```"), 0 },
	{ "indented closer closes", S("```python\nx\n  ```\ny\n```"), AUTO, S("x\n"), 1 },
	{ "closer indented 4 is body", S("```python\nx\n    ```\ny\n```"), AUTO, S("x\n    ```\ny\n"), 1 },
	{ "opener indentation removed from body", S("  ```python\n  def f():\n      return 1\n  ```"), AUTO,
	  S("def f():\n    return 1\n"), 1 },
	{ "no more than the opener's indentation removed", S(" ```\n   x\ny\n ```"), AUTO, S("  x\ny\n"), 1 },
	/* line endings and bytes */
	{ "CRLF", S("```python\r\nx = 1\r\n```\r\nbye\r\n"), AUTO, S("x = 1\r\n"), 1 },
	{ "CRLF untagged", S("```\r\nx\r\n```\r\n"), AUTO, S("x\r\n"), 1 },
	{ "NUL in body", S("```python\na\0b\n```"), AUTO, S("a\0b\n"), 1 },
	/* no fence */
	{ "plain code", S("def f():\n    return 1\n"), AUTO, S("def f():\n    return 1\n"), 0 },
	{ "empty", S(""), AUTO, S(""), 0 },
	/* modes */
	{ "none keeps fences", S("```python\nx\n```"), NONE, S("```python\nx\n```"), 0 },
	{ "none empty", S(""), NONE, S(""), 0 },
	{ "fenced with block", S("hi\n```python\nx\n```"), FENCED, S("x\n"), 1 },
	{ "fenced untagged", S("```\nx\n```"), FENCED, S("x\n"), 1 },
	{ "fenced without block", S("x = 1\n"), FENCED, S(""), 0 },
	{ "fenced other language only", S("```c\nint x;\n```"), FENCED, S(""), 0 },
	{ "fenced empty", S(""), FENCED, S(""), 0 },
};

Test(extract, table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct extract_case *tc = &cases[i];
		struct ee_err err = { 0 };
		char *out = NULL;
		size_t len = 0;
		int found = -1;
		int r = ee_extract(tc->text, tc->text_len, tc->mode, &out, &len, &found, &err);
		cr_assert_eq(r, 0, "%s: %s", tc->name, err.msg);
		cr_expect_eq(len, tc->want_len, "%s: length %zu, want %zu", tc->name, len, tc->want_len);
		cr_expect(len == tc->want_len && memcmp(out, tc->want, len) == 0, "%s: got '%s'", tc->name,
		          out);
		cr_expect_eq(out[len], '\0', "%s: NUL-terminated", tc->name);
		cr_expect_eq(found, tc->want_found, "%s: found %d", tc->name, found);
		free(out);
	}
}

/* With the task's entry point "f", and how the program was found. */
struct code_case {
	const char *name;
	const char *text;
	size_t text_len;
	enum ee_extract_mode mode;
	const char *want;
	size_t want_len;
	const char *want_how; /* ee_extraction_name */
};

static const struct code_case code_cases[] = {
	/* the block defining the entry point */
	{ "definition before a usage example",
	  S("```python\ndef f(x):\n    return x\n```\n```python\nprint(f(1))\n```"), AUTO,
	  S("def f(x):\n    return x\n"), "entry-point" },
	{ "usage example before definition",
	  S("```python\nf(1)\n```\n```python\ndef f(x):\n    return x\n```"), AUTO,
	  S("def f(x):\n    return x\n"), "entry-point" },
	{ "last of two definitions",
	  S("```python\ndef f(): return 1\n```\n```\ndef f(): return 2\n```\n```python\nf()\n```"), AUTO,
	  S("def f(): return 2\n"), "entry-point" },
	{ "untagged definition beats tagged usage", S("```\ndef f(): pass\n```\n```python\nf()\n```"), AUTO,
	  S("def f(): pass\n"), "entry-point" },
	{ "async def", S("```python\nasync def f():\n  pass\n```\n```python\nx\n```"), AUTO,
	  S("async def f():\n  pass\n"), "entry-point" },
	{ "def with blanks", S("```python\ndef  f (a):\n  pass\n```\n```python\nx\n```"), AUTO,
	  S("def  f (a):\n  pass\n"), "entry-point" },
	{ "class", S("```python\nclass f:\n  pass\n```\n```python\nx\n```"), AUTO, S("class f:\n  pass\n"),
	  "entry-point" },
	{ "class with bases", S("```python\nclass f(B): pass\n```\n```python\nx\n```"), AUTO,
	  S("class f(B): pass\n"), "entry-point" },
	{ "assignment", S("```python\nf = lambda: 1\n```\n```python\nx\n```"), AUTO, S("f = lambda: 1\n"),
	  "entry-point" },
	{ "assignment without blank", S("```python\nf=1\n```\n```python\nx\n```"), AUTO, S("f=1\n"),
	  "entry-point" },
	{ "comparison is no definition", S("```python\nf == 1\n```\n```python\nx\n```"), AUTO, S("x\n"),
	  "tagged" },
	{ "nested def is no definition",
	  S("```python\nclass C:\n    def f(self): pass\n```\n```python\nx\n```"), AUTO, S("x\n"), "tagged" },
	{ "longer name is no definition", S("```python\ndef f2(): pass\n```\n```python\nx\n```"), AUTO,
	  S("x\n"), "tagged" },
	{ "prefix name is no definition", S("```python\ndef ff(): pass\n```\n```python\nx\n```"), AUTO,
	  S("x\n"), "tagged" },
	{ "def f without paren", S("```python\ndef f\n```\n```python\nx\n```"), AUTO, S("x\n"), "tagged" },
	{ "async class is no definition", S("```python\nasync class f: pass\n```\n```python\nx\n```"), AUTO,
	  S("x\n"), "tagged" },
	{ "other language defining it skipped", S("```js\nf = 1\n```\n```python\nx\n```"), AUTO, S("x\n"),
	  "tagged" },
	{ "definition under indented fence", S("  ```python\n  def f(): pass\n  ```\n```python\nx\n```"),
	  AUTO, S("def f(): pass\n"), "entry-point" },
	{ "unclosed definition", S("```\nx\n```\n```python\ndef f():\n    return 1"), AUTO,
	  S("def f():\n    return 1"), "entry-point+unclosed" },
	{ "CRLF definition", S("```python\r\ndef f():\r\n  pass\r\n```\r\n```python\r\nx\r\n```"), AUTO,
	  S("def f():\r\n  pass\r\n"), "entry-point" },
	/* kinds */
	{ "tagged", S("```py\nx\n```"), AUTO, S("x\n"), "tagged" },
	{ "untagged", S("```\nx\n```"), AUTO, S("x\n"), "fenced" },
	{ "unclosed tagged", S("```python\nx"), AUTO, S("x"), "tagged+unclosed" },
	{ "whole text", S("x = 1\n"), AUTO, S("x = 1\n"), "whole-text" },
	{ "none", S("<think>a</think>```python\nx\n```"), NONE, S("<think>a</think>```python\nx\n```"),
	  "none" },
	{ "fenced without block", S("x\n"), FENCED, S(""), "no-block" },
	/* reasoning */
	{ "draft in think skipped",
	  S("<think>\n```python\ndef f(): return 0\n```\n</think>\n```python\ndef f(): return 1\n```"), AUTO,
	  S("def f(): return 1\n"), "entry-point+think-stripped" },
	{ "only block in think", S("<think>\n```python\nx\n```\n</think>\ny = 2\n"), AUTO, S("\ny = 2\n"),
	  "whole-text+think-stripped" },
	{ "unclosed think to the end", S("```python\nx\n```\n<think>\n```python\ndraft\n```"), AUTO, S("x\n"),
	  "tagged+think-stripped" },
	{ "close without open drops what precedes",
	  S("draft\n```python\nbad\n```\n</think>\n```python\ngood\n```"), AUTO, S("good\n"),
	  "tagged+think-stripped" },
	{ "two think spans", S("<think>a</think>```python\nx\n```\n<think>```python\ny\n```</think>"), AUTO,
	  S("x\n"), "tagged+think-stripped" },
	{ "think stripped under fenced", S("<think>```python\nx\n```</think>"), FENCED, S(""),
	  "no-block+think-stripped" },
	{ "think only", S("<think>everything"), AUTO, S(""), "whole-text+think-stripped" },
	{ "Think is not think", S("<Think>a</Think>x"), AUTO, S("<Think>a</Think>x"), "whole-text" },
	/* MBPP's markers */
	{ "begin done", S("[BEGIN]\ndef f(): pass\n[DONE]\nmore"), AUTO, S("def f(): pass\n"), "begin-done" },
	{ "begin done on one line", S("[BEGIN] x = 1 [DONE]"), AUTO, S("x = 1 "), "begin-done" },
	{ "done only: the prompt ended with begin", S("def f(): pass\n[DONE]\n[BEGIN]\nnext\n[DONE]"), AUTO,
	  S("def f(): pass\n"), "begin-done" },
	{ "begin unclosed", S("[BEGIN]\r\nx = 1\n"), AUTO, S("x = 1\n"), "begin-done+unclosed" },
	{ "fence beats markers", S("[BEGIN]\n```python\nx\n```\n[DONE]"), AUTO, S("x\n"), "tagged" },
	{ "markers not under fenced", S("[BEGIN]\nx\n[DONE]"), FENCED, S(""), "no-block" },
};

Test(extract, code_table)
{
	for (size_t i = 0; i < sizeof(code_cases) / sizeof(code_cases[0]); i++) {
		const struct code_case *tc = &code_cases[i];
		struct ee_err err = { 0 };
		struct ee_extract_info info = { .imports = 7 };
		char *out = NULL, how[EE_EXTRACTION_NAME_MAX];
		size_t len = 0;
		int r = ee_extract_code(tc->text, tc->text_len, tc->mode, "f", &out, &len, &info, &err);
		cr_assert_eq(r, 0, "%s: %s", tc->name, err.msg);
		cr_expect(len == tc->want_len && memcmp(out, tc->want, len) == 0, "%s: got '%s'", tc->name,
		          out);
		cr_expect_eq(out[len], '\0', "%s: NUL-terminated", tc->name);
		ee_extraction_name(&info, how, sizeof(how));
		cr_expect_str_eq(how, tc->want_how, "%s: extraction %s", tc->name, how);
		free(out);
	}
}

Test(extract, no_entry_point_takes_last_tagged)
{
	static const char text[] = "```python\ndef f(): pass\n```\n```python\nf()\n```";
	const char *entries[] = { NULL, "" };
	for (size_t i = 0; i < 2; i++) {
		struct ee_extract_info info;
		char *out = NULL;
		size_t len = 0;
		cr_assert_eq(
		        ee_extract_code(text, sizeof(text) - 1, AUTO, entries[i], &out, &len, &info, NULL),
		        0);
		cr_expect_str_eq(out, "f()\n");
		cr_expect_eq(info.how, EE_HOW_TAGGED);
		free(out);
	}
}

Test(extract, extraction_name_fits_and_truncates)
{
	struct ee_extract_info all = {
		.how = EE_HOW_ENTRY_POINT, .unclosed = 1, .think_stripped = 1, .imports = 2
	};
	struct ee_extract_info bad = { .how = (enum ee_extract_how)99 };
	char buf[EE_EXTRACTION_NAME_MAX], tiny[4];

	ee_extraction_name(&all, buf, sizeof(buf));
	cr_expect_str_eq(buf, "entry-point+unclosed+think-stripped+imports");
	ee_extraction_name(&all, tiny, sizeof(tiny));
	cr_expect_str_eq(tiny, "ent");
	ee_extraction_name(&bad, buf, sizeof(buf));
	cr_expect_str_eq(buf, "unknown");
}

Test(extract, null_text_with_length_fails)
{
	struct ee_err err = { 0 };
	char *out = NULL;
	size_t len = 7;
	int found = -1;

	cr_assert_lt(ee_extract(NULL, 5, EE_EXTRACT_AUTO, &out, &len, &found, &err), 0);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect_neq(err.msg[0], '\0');
	cr_expect_null(out);
	cr_expect_eq(len, 7, "outputs untouched on failure");
}

Test(extract, null_text_without_length_is_empty)
{
	char *out = NULL;
	size_t len = 7;
	int found = -1;

	cr_assert_eq(ee_extract(NULL, 0, EE_EXTRACT_AUTO, &out, &len, &found, NULL), 0);
	cr_expect_str_eq(out, "");
	cr_expect_eq(len, 0);
	cr_expect_eq(found, 0);
	free(out);
}

struct mode_case {
	const char *s;
	int want_rc;
	enum ee_extract_mode want;
};

static const struct mode_case mode_cases[] = {
	{ "auto", 0, EE_EXTRACT_AUTO },
	{ "fenced", 0, EE_EXTRACT_FENCED },
	{ "none", 0, EE_EXTRACT_NONE },
	{ "AUTO", -1, 0 },
	{ "", -1, 0 },
	{ "nonee", -1, 0 },
	{ "fence", -1, 0 },
	{ NULL, -1, 0 },
};

Test(extract, mode_parse_table)
{
	for (size_t i = 0; i < sizeof(mode_cases) / sizeof(mode_cases[0]); i++) {
		const struct mode_case *tc = &mode_cases[i];
		enum ee_extract_mode mode = (enum ee_extract_mode)99;
		int r = ee_extract_mode_parse(tc->s, &mode);
		cr_expect_eq(r, tc->want_rc, "'%s': rc %d", tc->s ? tc->s : "(null)", r);
		if (tc->want_rc == 0)
			cr_expect_eq(mode, tc->want, "'%s'", tc->s);
		else
			cr_expect_eq(mode, (enum ee_extract_mode)99, "'%s' left *ret alone",
			             tc->s ? tc->s : "(null)");
	}
}

/* ee_compose: the prompt's imports for generations (compose.h). */
struct compose_case {
	const char *name;
	int format; /* enum ee_task_format */
	const char *prompt;
	int source; /* enum ee_sample_source */
	const char *text;
	enum ee_extract_mode mode;
	const char *want;
	const char *want_how;
};

#define HE   EE_FORMAT_HUMANEVAL
#define MBPP EE_FORMAT_MBPP
#define GEN  EE_SAMPLE_GENERATION

static const char list_prompt[] =
        "from typing import List\n\n\ndef f(x: List[int]) -> int:\n    \"\"\" doc \"\"\"\n";

static const struct compose_case compose_cases[] = {
	{ "missing import prepended", HE, list_prompt, GEN,
	  "```python\ndef f(x: List[int]) -> int:\n    return 1\n```", AUTO,
	  "from typing import List\ndef f(x: List[int]) -> int:\n    return 1\n", "entry-point+imports" },
	{ "import present", HE, list_prompt, GEN,
	  "```python\nfrom typing import List\ndef f(x): return 1\n```", AUTO,
	  "from typing import List\ndef f(x): return 1\n", "entry-point" },
	{ "import present with CRLF", HE, list_prompt, GEN,
	  "from typing import List\r\ndef f(x): return 1\r\n", AUTO,
	  "from typing import List\r\ndef f(x): return 1\r\n", "whole-text" },
	{ "indented import in the program does not count", HE, list_prompt, GEN,
	  "def f(x):\n    from typing import List\n", AUTO,
	  "from typing import List\ndef f(x):\n    from typing import List\n", "whole-text+imports" },
	{ "only the missing one of two", HE,
	  "import math\nfrom typing import List, Tuple\n\ndef f():\n    pass\n", GEN,
	  "```python\nimport math\ndef f(): pass\n```", AUTO,
	  "from typing import List, Tuple\nimport math\ndef f(): pass\n", "entry-point+imports" },
	{ "indented prompt import not taken", HE, "def f():\n    import math\n", GEN, "def f(): pass\n", AUTO,
	  "def f(): pass\n", "whole-text" },
	{ "docstring prose is no import", HE,
	  "\"\"\"\nfrom two integers, round it\nimport this, or that\n\"\"\"\ndef f(): pass\n", GEN,
	  "def f(): pass\n", AUTO, "import this, or that\ndef f(): pass\n", "whole-text+imports" },
	{ "parenthesised import not taken", HE, "from typing import (\n    List,\n)\ndef f(): pass\n", GEN,
	  "def f(): pass\n", AUTO, "def f(): pass\n", "whole-text" },
	{ "continued import not taken", HE, "import os, \\\n    sys\ndef f(): pass\n", GEN, "def f(): pass\n",
	  AUTO, "def f(): pass\n", "whole-text" },
	{ "after the program's __future__ lines", HE, list_prompt, GEN,
	  "```python\nfrom __future__ import annotations\ndef f(x: List): pass\n```", AUTO,
	  "from __future__ import annotations\nfrom typing import List\ndef f(x: List): pass\n",
	  "entry-point+imports" },
	{ "think stripped and imports", HE, list_prompt, GEN,
	  "<think>hm</think>```python\ndef f(x): pass\n```", AUTO,
	  "from typing import List\ndef f(x): pass\n", "entry-point+think-stripped+imports" },
	{ "fenced mode gets imports", HE, list_prompt, GEN, "```\ndef f(x): pass\n```", FENCED,
	  "from typing import List\ndef f(x): pass\n", "entry-point+imports" },
	{ "no block gets none", HE, list_prompt, GEN, "def f(x): pass\n", FENCED, "", "no-block" },
	{ "extract none gets none", HE, list_prompt, GEN, "def f(x): pass\n", NONE, "def f(x): pass\n",
	  "none" },
	{ "MBPP prompt is prose", MBPP, "import re\n", GEN, "def f(): pass\n", AUTO, "def f(): pass\n",
	  "whole-text" },
	{ "empty prompt", HE, "", GEN, "def f(): pass\n", AUTO, "def f(): pass\n", "whole-text" },
	{ "completion is prompt + completion", HE, list_prompt, EE_SAMPLE_COMPLETION, "    return 1\n", AUTO,
	  "from typing import List\n\n\ndef f(x: List[int]) -> int:\n    \"\"\" doc \"\"\"\n    return 1\n",
	  "completion" },
	{ "code as is", HE, list_prompt, EE_SAMPLE_CODE, "def f(x): pass\n", AUTO, "def f(x): pass\n",
	  "code" },
};

Test(extract, compose_table)
{
	for (size_t i = 0; i < sizeof(compose_cases) / sizeof(compose_cases[0]); i++) {
		const struct compose_case *tc = &compose_cases[i];
		struct ee_task t = { 0 };
		struct ee_sample s = { 0 };
		struct ee_extract_info info;
		struct ee_err err = { 0 };
		char *out = NULL, how[EE_EXTRACTION_NAME_MAX];

		t.format = tc->format;
		t.prompt = (char *)tc->prompt;
		t.entry_point = (char *)"f";
		s.source = tc->source;
		s.text = (char *)tc->text;
		cr_assert_eq(ee_compose(&t, &s, tc->mode, 0, &out, &info, &err), 0, "%s: %s", tc->name,
		             err.msg);
		cr_expect_str_eq(out, tc->want, "%s: got '%s'", tc->name, out);
		ee_extraction_name(&info, how, sizeof(how));
		cr_expect_str_eq(how, tc->want_how, "%s: extraction %s", tc->name, how);
		free(out);
	}
}
