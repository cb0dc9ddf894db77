/* body.c - reading a POST's body (see server_int.h): each chunk is charged
 * to the budget and the client address's share as it arrives, a body must
 * keep up the minimum rate, and one over a cap is refused at its end. */
#include <arpa/inet.h>
#include <math.h>
#include <microhttpd.h>
#include <stdio.h>

#include "serve/server_int.h"

/* Whether the body has fallen under body_min_rate: after the grace, the
 * bytes arrived must keep up with rate x (time since the headers - grace). */
static int too_slow(const struct conn *c)
{
	const struct ee_server_config *cfg = c->srv->cfg;
	double late = now_s() - ts_s(&c->arrived) - cfg->body_grace_s;

	return late > 0 && (double)c->received < cfg->body_min_rate * late;
}

/* The connection's idle timeout, cut to when the body would fall under
 * the minimum rate without another byte: libmicrohttpd then closes it,
 * so a silent trickler is cut as well as a slow one. */
void pace(struct conn *c)
{
	const struct ee_server_config *cfg = c->srv->cfg;
	double due = cfg->body_grace_s + (double)c->received / cfg->body_min_rate;
	double left = ceil(due - (now_s() - ts_s(&c->arrived)));
	unsigned t = left < 1 ? 1 : left > 86400 ? 86400 : (unsigned)left;

	if (cfg->idle_timeout_s && t > cfg->idle_timeout_s)
		t = cfg->idle_timeout_s;
	MHD_set_connection_option(c->mc, MHD_CONNECTION_OPTION_TIMEOUT, t);
}

/* The client's address, numeric ("127.0.0.1", "::1"). */
static void client_address(struct MHD_Connection *mc, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *info =
	        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info ? info->client_addr : NULL;

	snprintf(buf, size, "unknown");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)size);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)size);
}

int join_share(struct conn *c)
{
	char address[INET6_ADDRSTRLEN];

	client_address(c->mc, address, sizeof(address));
	c->share = ee_budget_join(&c->srv->budget, address);
	return c->share ? 0 : -1;
}

/* Drops the body read so far; the request is answered code at its end. */
static void refuse_body(struct conn *c, unsigned code, int reason)
{
	c->refused = code;
	c->refused_reason = reason;
	ee_buf_free(&c->body);
	ee_budget_release(&c->srv->budget, c->share, c->charged);
	c->charged = 0;
}

/* A body without Content-Length (chunked) can only be refused once it has
 * been read: libmicrohttpd queues no answer mid-body. Its excess is counted
 * and dropped, up to DISCARD_MAX, then the connection is cut. */
#define DISCARD_MAX (64u << 20)

enum MHD_Result on_upload(struct conn *c, const char *data, size_t n)
{
	struct ee_server *srv = c->srv;

	c->received += n;
	if (too_slow(c)) {
		srv->stats.rejected[EE_REJ_TOO_SLOW]++;
		return MHD_NO; /* closes it: no answer can be queued mid-body */
	}
	pace(c);
	if (c->refused) {
		c->discarded += n;
		return c->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
	}
	if (c->body.len + n > srv->cfg->max_body) {
		refuse_body(c, 413, EE_REJ_TOO_LARGE);
		return MHD_YES;
	}
	int over = ee_budget_charge(&srv->budget, c->share, n);
	if (over != EE_BUDGET_OK) {
		refuse_body(c, 429, over);
		return MHD_YES;
	}
	c->charged += n;
	if (ee_buf_append(&c->body, data, n) < 0)
		return MHD_NO;
	return MHD_YES;
}
