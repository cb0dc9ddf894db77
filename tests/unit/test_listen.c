/* test_listen.c - serve's listen addresses (listen.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "serve/listen.h"

Test(listen, addresses)
{
	struct {
		const char *in;
		const char *out; /* NULL: refused */
		int loopback;
	} cases[] = {
		{ "127.0.0.1:8080", "127.0.0.1:8080", 1 },
		{ "localhost:0", "127.0.0.1:0", 1 },
		{ "127.1.2.3:1", "127.1.2.3:1", 1 },
		{ "0.0.0.0:80", "0.0.0.0:80", 0 },
		{ "10.0.0.1:65535", "10.0.0.1:65535", 0 },
		{ "[::1]:8080", "[::1]:8080", 1 },
		{ "[::]:8080", "[::]:8080", 0 },
		{ "[::ffff:127.0.0.1]:9", "[::ffff:127.0.0.1]:9", 1 },
		{ "127.0.0.1", NULL, 0 },
		{ "127.0.0.1:", NULL, 0 },
		{ "127.0.0.1:65536", NULL, 0 },
		{ "127.0.0.1:-1", NULL, 0 },
		{ "127.0.0.1:80x", NULL, 0 },
		{ "example.com:80", NULL, 0 },
		{ "::1:80", NULL, 0 },
		{ "[::1:80", NULL, 0 },
		{ "[127.0.0.1]:80", NULL, 0 },
		{ ":80", NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_listen_addr a;
		struct ee_err err = { 0 };
		int rc = ee_listen_parse(cases[i].in, &a, &err);
		if (!cases[i].out) {
			cr_expect_eq(rc, -1, "case %s accepted", cases[i].in);
			cr_expect(strstr(err.msg, "--listen") != NULL, "%s", err.msg);
			continue;
		}
		cr_assert_eq(rc, 0, "case %s: %s", cases[i].in, err.msg);
		char buf[80];
		ee_listen_format((const struct sockaddr *)&a.sa, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].out);
		cr_expect_eq(ee_listen_is_loopback(&a), cases[i].loopback, "case %s", cases[i].in);
	}
}
