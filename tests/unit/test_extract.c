/* test_extract.c - code extraction from a model's generation (extract.h). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "extract.h"

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
	{ "first untagged of two", S("```\na\n```\n```\nb\n```"), AUTO, S("a\n"), 1 },
	{ "first python of two", S("```python\na\n```\n```python\nb\n```"), AUTO, S("a\n"), 1 },
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
	{ "indented fence is text", S("  ```python\nx\n  ```"), AUTO, S("  ```python\nx\n  ```"), 0 },
	{ "indented closer is body", S("```python\nx\n  ```\ny\n```"), AUTO, S("x\n  ```\ny\n"), 1 },
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
