/* test_sha256.c - SHA-256 (sha256.h) against the FIPS 180-2 test vectors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/sha256.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct vector {
	const char *message;
	size_t repeat; /* the message repeated this many times */
	const char *digest;
};

/* FIPS 180-2 appendix B (one block, two blocks, a million 'a'), the empty
 * message, and lengths around the padding boundary (55, 56, 64 bytes). */
static const struct vector vectors[] = {
	{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmn"
	  "opqrstnopqrstu",
	  1, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	{ "a", 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
	{ "a", 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
	{ "a", 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
};

static void digest_of(const struct vector *v, size_t chunk, char hex[EE_SHA256_HEX])
{
	struct ee_sha256 c;
	uint8_t d[EE_SHA256_LEN];
	size_t len = strlen(v->message) * v->repeat;
	char *all = malloc(len + 1);

	cr_assert_not_null(all);
	for (size_t i = 0; i < v->repeat; i++)
		memcpy(all + i * strlen(v->message), v->message, strlen(v->message));
	ee_sha256_init(&c);
	for (size_t off = 0; off < len; off += chunk)
		ee_sha256_update(&c, all + off, len - off < chunk ? len - off : chunk);
	ee_sha256_final(&c, d);
	ee_sha256_hex(d, hex);
	free(all);
}

Test(sha256, fips_180_2_vectors_in_one_update)
{
	for (size_t i = 0; i < COUNT(vectors); i++) {
		char hex[EE_SHA256_HEX];
		digest_of(&vectors[i], (size_t)-1 / 2, hex);
		cr_expect_str_eq(hex, vectors[i].digest, "vector %zu", i);
	}
	no_leaks();
}

Test(sha256, any_split_of_the_input_gives_the_same_digest)
{
	static const size_t chunks[] = { 1, 3, 63, 64, 65, 127, 1000 };
	for (size_t i = 0; i < COUNT(vectors); i++) {
		if (vectors[i].repeat > 1000)
			continue; /* a million bytes one at a time: slow under ASan, proven above */
		for (size_t j = 0; j < COUNT(chunks); j++) {
			char hex[EE_SHA256_HEX];
			digest_of(&vectors[i], chunks[j], hex);
			cr_expect_str_eq(hex, vectors[i].digest, "vector %zu in chunks of %zu", i, chunks[j]);
		}
	}
	no_leaks();
}

Test(sha256, file_is_streamed)
{
	char path[] = "/tmp/ee-sha256-XXXXXX", hex[EE_SHA256_HEX];
	struct ee_err err = { 0 };
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	cr_assert_not_null(f);
	for (int i = 0; i < 1000000; i++) /* bigger than the read buffer */
		fputc('a', f);
	fclose(f);
	cr_assert_eq(ee_sha256_file(path, hex, &err), 0, "%s", err.msg);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	unlink(path);
	no_leaks();
}

Test(sha256, missing_file_is_an_error_naming_it)
{
	char hex[EE_SHA256_HEX];
	struct ee_err err = { 0 };

	cr_expect_eq(ee_sha256_file("/nonexistent/ee-sha256", hex, &err), -1);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect(strstr(err.msg, "/nonexistent/ee-sha256") != NULL, "%s", err.msg);
	cr_expect(strstr(err.msg, "No such file") != NULL, "%s", err.msg);
	cr_expect_eq(ee_sha256_file("/", hex, &err), -1, "a directory cannot be read");
	no_leaks();
}

Test(sha256, hex_digests_are_told_from_other_text)
{
	static const struct {
		const char *s;
		int hex;
	} cases[] = {
		{ "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", 1 },
		{ "CDC76E5C9914FB9281A1C7E284D73E67F1809A48A497200E046D39CCC7112CD0",
		  0 }, /* ours are lowercase */
		{ "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd", 0 },   /* 63 digits */
		{ "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd00", 0 }, /* 65 */
		{ "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cdg", 0 },
		{ "", 0 },
		{ NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(ee_sha256_is_hex(cases[i].s), cases[i].hex, "case %zu", i);
	uint8_t digest[EE_SHA256_LEN] = { 0xab };
	char hex[EE_SHA256_HEX];
	ee_sha256_hex(digest, hex);
	cr_expect(ee_sha256_is_hex(hex), "what ee_sha256_hex writes");
}
