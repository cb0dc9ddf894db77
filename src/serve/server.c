/* server.c - the HTTP front of the evaluator (see server.h): routing, in
 * on_headers (endpoint and method, what the headers decide) and on_request
 * (what each call of a connection does next), and the server's life: the
 * daemon on the loop, signals and the drain. Endpoint paths are named in
 * stats.c (ee_endpoint_of); the rest of a request's work is in body.c,
 * submit.c and answer.c (server_int.h). */
#include "serve/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "engine/engine.h"
#include "base/err.h"
#include "base/loop.h"
#include "engine/evaluate.h"
#include "serve/auth.h"
#include "serve/budget.h"
#include "serve/dispatch.h"
#include "serve/heal.h"
#include "serve/refcache.h"
#include "serve/request.h"
#include "serve/run_code.h"
#include "serve/run_jupyter.h"
#include "serve/sessions.h"
#include "serve/stats.h"
#include "serve/server_int.h"

/* ---- connections -------------------------------------------------------- */

void free_conn(struct conn *c)
{
	struct ee_server *srv = c->srv;

	ee_budget_release(&srv->budget, c->share, c->charged);
	ee_budget_release(&srv->budget, NULL, c->reserved);
	ee_budget_leave(&srv->budget, c->share);
	ee_dispatch_unreserve(srv->dispatch, c->held);
	unawait(c);
	free(c->groups);
	ee_buf_free(&c->body);
	for (size_t i = 0; c->texts && i < c->req.n_runs; i++)
		free(c->texts[i]);
	free(c->texts);
	free(c->lens);
	free(c->slots);
	ee_request_free(&c->req);
	free(c);
}

/* ---- requests ----------------------------------------------------------- */

static int is_method(const char *method, const char *want)
{
	return strcmp(method, want) == 0;
}

/* The circuit breaker tripped (engine/breaker.h): nothing is evaluated
 * until a person resumes it. /run_code answers as SandboxFusion would. */
static enum MHD_Result refuse_tripped(struct conn *c)
{
	const char *why = ee_engine_breaker(c->srv->eng)->why;
	if (c->endpoint != EE_EP_RUN_CODE)
		return refuse(c, 503, EE_REJ_TRIPPED, why, NULL);
	c->srv->stats.rejected[EE_REJ_TRIPPED]++;
	return answer_json(c, 503, ee_run_code_sandbox_error(why), NULL);
}

/* POST /v1/admin/resume: only with a token (a server without one has no
 * way to tell a person from a candidate's client). */
static enum MHD_Result answer_resume(struct conn *c)
{
	if (!c->srv->cfg->token)
		return answer_error(c, 403,
		                    "POST /v1/admin/resume needs the server started with --token-file", NULL,
		                    NULL);
	int was = ee_engine_breaker(c->srv->eng)->tripped;
	ee_engine_resume(c->srv->eng);
	if (was)
		fprintf(stderr, "execeval serve: circuit breaker resumed by POST /v1/admin/resume\n");
	return answer_json(c, 200, json_pack("{s:s, s:b}", "status", "ok", "was_tripped", was), NULL);
}

/* ---- /v1/sessions (sessions.h) ------------------------------------------ */

static void sessions_ready(void *ctx)
{
	struct conn *c = ctx;

	c->sess_ready = 1;
	if (c->suspended)
		MHD_resume_connection(c->mc); /* answered when MHD calls on_request again */
}

static enum MHD_Result sessions_reply(struct conn *c, unsigned code, char *text, size_t len)
{
	struct header retry[] = { { MHD_HTTP_HEADER_RETRY_AFTER, "5" }, { NULL, NULL } };

	return text ? answer(c, code, text, len, "application/json", code == 429 ? retry : NULL) : MHD_NO;
}

static enum MHD_Result sessions_answer(struct conn *c)
{
	unsigned code;
	char *text;
	size_t len;

	if (c->suspended) {
		c->suspended = 0;
		c->srv->suspended--;
	}
	if (c->jupyter)
		ee_run_jupyter_answer(c->jupyter, &code, &text, &len);
	else
		ee_sessions_answer(c->sess_wait, &code, &text, &len);
	c->sess_wait = NULL;
	c->jupyter = NULL;
	return sessions_reply(c, code, text, len);
}

static enum MHD_Result sessions_body(struct conn *c, const char *method)
{
	struct ee_server *srv = c->srv;
	unsigned code = 0;
	char *text = NULL;
	size_t len = 0;
	int rc = c->endpoint == EE_EP_RUN_JUPYTER
	                 ? ee_run_jupyter_submit(srv->run_jupyter, c->body.data ? c->body.data : "",
	                                         c->body.len, sessions_ready, c, &c->jupyter, &code, &text,
	                                         &len)
	                 : ee_sessions_request(srv->sessions, method, c->sess_path, c->body.data, c->body.len,
	                                       sessions_ready, c, &c->sess_wait, &code, &text, &len);

	ee_buf_free(&c->body);
	ee_budget_release(&srv->budget, c->share, c->charged);
	c->charged = 0;
	if (rc < 0)
		return MHD_NO;
	if (rc == 0)
		return sessions_reply(c, code, text, len);
	c->suspended = 1;
	srv->suspended++;
	MHD_suspend_connection(c->mc);
	return MHD_YES;
}

/* Routing and everything decidable from the headers. Returns MHD_YES with
 * c->answered set when it answered, MHD_YES otherwise (read the body). */
static enum MHD_Result on_headers(struct conn *c, const char *method)
{
	struct ee_server *srv = c->srv;
	int post = c->endpoint == EE_EP_RUN || c->endpoint == EE_EP_BATCH || c->endpoint == EE_EP_RUN_CODE ||
	           c->endpoint == EE_EP_GET_REWARD || c->endpoint == EE_EP_ADMIN_RESUME ||
	           c->endpoint == EE_EP_RUN_JUPYTER;
	int get_ok = is_method(method, "GET") || is_method(method, "HEAD");

	if (c->endpoint == EE_EP_SESSIONS) { /* POST, GET and DELETE, by path (sessions.c) */
		post = is_method(method, "POST");
		get_ok = is_method(method, "GET") || is_method(method, "DELETE");
	}
	if (c->endpoint == EE_EP_OTHER)
		return answer_error(
		        c, 404,
		        "no such endpoint (POST /v1/run, POST /v1/batch, POST /run_code, "
		        "POST /run_jupyter, POST /get_reward, /v1/sessions, GET /healthz, GET /metrics, "
		        "GET /v1/ping, POST /v1/admin/resume)",
		        NULL, NULL);
	if (post ? !is_method(method, "POST") : !get_ok) {
		struct header allow[] = { { MHD_HTTP_HEADER_ALLOW, c->endpoint == EE_EP_SESSIONS
			                                                   ? "POST, GET, DELETE"
			                                           : post ? "POST"
			                                                  : "GET, HEAD" },
			                  { NULL, NULL } };
		return answer_error(c, 405, post ? "use POST" : "use GET", NULL, allow);
	}
	/* GETs are answered on the next call: a response queued with the
	 * headers makes libmicrohttpd close the connection (it cannot know
	 * no body follows), and clients polling /healthz keep theirs open. */
	if (c->endpoint == EE_EP_HEALTHZ || c->endpoint == EE_EP_PING)
		return MHD_YES;
	if (srv->cfg->token &&
	    !ee_token_check(srv->cfg->token, MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
	                                                                 MHD_HTTP_HEADER_AUTHORIZATION)))
		return refuse(c, 401, EE_REJ_UNAUTHORIZED, "missing or wrong bearer token", NULL);
	if (c->endpoint == EE_EP_METRICS)
		return MHD_YES;
	if (c->endpoint == EE_EP_ADMIN_RESUME)
		return answer_resume(c);
	if (ee_engine_breaker(srv->eng)->tripped)
		return refuse_tripped(c);
	if (srv->draining)
		return refuse(c, 503, EE_REJ_DRAINING, "the server is shutting down", NULL);

	const char *length =
	        MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long declared = length ? strtoull(length, NULL, 10) : 0;
	if (declared > srv->cfg->max_body)
		return refuse(c, 413, EE_REJ_TOO_LARGE, "the body is larger than the server's --max-body",
		              NULL);
	/* Nothing is charged for a declared length: a client that declares
	 * 16 MiB and sends a byte holds a byte. A full queue or budget is
	 * answered after the body (an answer queued now would close the
	 * connection, and a batch that can never fit deserves its 413). */
	if (join_share(c) < 0)
		return MHD_NO;
	pace(c);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls)
{
	struct ee_server *srv = cls;
	struct conn *c = *con_cls;

	if (!c) {
		if (!(c = calloc(1, sizeof(*c))))
			return MHD_NO;
		c->srv = srv;
		c->mc = mc;
		c->endpoint = ee_endpoint_of(url);
		if (c->endpoint == EE_EP_SESSIONS)
			snprintf(c->sess_path, sizeof(c->sess_path), "%s", url + strlen("/v1/sessions"));
		clock_gettime(CLOCK_MONOTONIC, &c->arrived);
		ee_buf_init(&c->body, srv->cfg->max_body);
		*con_cls = c;
		return on_headers(c, method);
	}
	if (c->answered) {
		*upload_size = 0; /* the rest of a refused body is read and dropped */
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		return on_upload(c, upload, n);
	}
	if (c->endpoint == EE_EP_HEALTHZ)
		return answer_health(c);
	if (c->endpoint == EE_EP_METRICS)
		return answer_metrics(c);
	if (c->endpoint == EE_EP_PING) /* SandboxFusion's liveness probe */
		return answer(c, 200, strdup("\"pong\""), 6, "application/json", NULL);
	if (c->call && c->call_ready) /* resumed: /run_code's answer is there */
		return run_code_answer(c);
	if ((c->sess_wait || c->jupyter) && c->sess_ready) /* resumed: a session's answer is there */
		return sessions_answer(c);
	if (c->share) /* the body is in: back to the idle timeout */
		MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->cfg->idle_timeout_s);
	if (c->refused == 413)
		return refuse(c, 413, EE_REJ_TOO_LARGE, "the body is larger than the server's --max-body",
		              NULL);
	if (c->refused == 429)
		return refuse_budget(c, c->refused_reason);
	if (c->endpoint == EE_EP_SESSIONS || c->endpoint == EE_EP_RUN_JUPYTER)
		return sessions_body(c, method);
	if (c->texts) { /* resumed: every record is back */
		if (c->suspended) {
			c->suspended = 0;
			srv->suspended--;
		}
		return answer_records(c);
	}
	return on_body_complete(c);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct ee_server *srv = cls;
	struct conn *c = *con_cls;

	if (!c)
		return;
	*con_cls = NULL;
	if (c->answered)
		srv->answering--;
	/* MHD closed a POST whose body stopped short: the minimum rate (pace). */
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED && c->share && !c->answered && !c->req.n_runs)
		srv->stats.rejected[EE_REJ_TOO_SLOW]++;
	if (c->call) {
		if (c->suspended)
			srv->suspended--;
		ee_run_code_abandon(c->call);
		c->call = NULL;
	}
	if (c->sess_wait || c->jupyter) {
		if (c->suspended)
			srv->suspended--;
		ee_sessions_abandon(c->sess_wait);
		ee_run_jupyter_abandon(c->jupyter);
		c->sess_wait = NULL;
		c->jupyter = NULL;
	}
	if (c->pending > 0) {
		c->orphaned = 1; /* its evaluations still run; on_record frees it */
		return;
	}
	free_conn(c);
}

/* ---- life --------------------------------------------------------------- */

static void on_http(void *ctx)
{
	struct ee_server *srv = ctx;
	MHD_run(srv->daemon);
}

/* Stops accepting; accepted work goes on. */
static void start_drain(struct ee_server *srv, int signo)
{
	srv->draining = 1;
	clock_gettime(CLOCK_MONOTONIC, &srv->deadline);
	srv->deadline.tv_sec += (time_t)srv->cfg->grace_s;
	srv->deadline.tv_nsec += (long)((srv->cfg->grace_s - floor(srv->cfg->grace_s)) * 1e9);
	if (srv->deadline.tv_nsec >= 1000000000L) {
		srv->deadline.tv_sec++;
		srv->deadline.tv_nsec -= 1000000000L;
	}
	ee_sessions_end_all(srv->sessions); /* a live interpreter is no accepted work to finish */
	int fd = MHD_quiesce_daemon(srv->daemon);
	if (fd >= 0)
		close(fd);
	if (srv->cfg->log)
		srv->cfg->log("signal %d: draining: %u running, %zu queued; new connections refused", signo,
		              ee_dispatch_running(srv->dispatch), ee_dispatch_waiting(srv->dispatch));
}

/* Kills what runs and drops what waits: their requests get 503. */
static void force_stop(struct ee_server *srv, int signo, const char *why)
{
	if (srv->cfg->log)
		srv->cfg->log("%s: killing %u running, dropping %zu queued", why,
		              ee_dispatch_running(srv->dispatch), ee_dispatch_waiting(srv->dispatch));
	ee_dispatch_drop_waiting(srv->dispatch);
	ee_run_code_drop_waiting(srv->run_code);
	ee_sessions_end_all(srv->sessions);
	ee_run_jupyter_end_all(srv->run_jupyter);
	ee_loop_interrupt(srv->loop, signo);
}

static int on_signal(void *ctx, int signo)
{
	struct ee_server *srv = ctx;

	if (!srv->draining) {
		start_drain(srv, signo);
		return 1;
	}
	if (!srv->forced) {
		srv->forced = signo;
		force_stop(srv, signo, "second signal");
	}
	return 1;
}

static int finished(const struct ee_server *srv)
{
	return srv->draining && ee_dispatch_waiting(srv->dispatch) == 0 &&
	       ee_dispatch_running(srv->dispatch) == 0 && srv->suspended == 0 && srv->answering == 0 &&
	       ee_sessions_live(srv->sessions) == 0 && ee_run_jupyter_live(srv->run_jupyter) == 0;
}

/* Milliseconds epoll may sleep: MHD's next timeout, and the grace deadline. */
static int wait_ms(const struct ee_server *srv)
{
	MHD_UNSIGNED_LONG_LONG mhd;
	long long ms = MHD_get_timeout(srv->daemon, &mhd) == MHD_YES ? (long long)mhd : -1;

	if (srv->draining) {
		double left = ts_s(&srv->deadline) - now_s();
		long long grace_ms = left > 0 ? (long long)(left * 1000) + 1 : 0;
		if (ms < 0 || grace_ms < ms)
			ms = grace_ms;
		if (ms > 100 || ms < 0)
			ms = 100; /* the last answers' completion is noticed by polling */
	}
	/* /run_code's next deadline: its 504 is due then (run_code.h); the
	 * next /v1 or /get_reward candidate's latest start (dispatch.h). */
	long due = ee_run_code_next_ms(srv->run_code);
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	due = ee_dispatch_next_ms(srv->dispatch);
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	due = awaiting_next_ms(srv);
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	due = ee_sessions_tick(srv->sessions); /* idle and TTL ends due now, and the next */
	if (due >= 0 && (ms < 0 || due < ms))
		ms = due;
	return ms > 60000 || ms < 0 ? 60000 : (int)ms;
}

int ee_server_run(struct ee_server *srv, struct ee_err *err)
{
	int grace_over = 0;

	ee_loop_on_signal(srv->loop, on_signal, srv);
	while (!finished(srv)) {
		ee_run_code_tick(srv->run_code); /* 504s due: resumed before MHD runs */
		ee_dispatch_tick(srv->dispatch); /* and the candidates that can no longer start in time */
		expire_awaiting(srv);            /* or whose reference runs outlast it */
		MHD_run(srv->daemon);
		if (finished(srv))
			break;
		if (ee_loop_wait(srv->loop, wait_ms(srv), err) < 0)
			return -1;
		if (srv->draining && !srv->forced && !grace_over && now_s() >= ts_s(&srv->deadline)) {
			grace_over = 1;
			force_stop(srv, SIGTERM, "grace period over");
		}
	}
	ee_loop_on_signal(srv->loop, NULL, NULL);
	return srv->forced;
}

int ee_server_new(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_server_config *cfg,
                  struct ee_server **ret, struct ee_err *err)
{
	struct ee_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
	struct ee_loop *loop = ee_engine_loop(eng);

	srv->loop = loop;
	srv->eng = eng;
	srv->o = o;
	srv->cfg = cfg;
	srv->eval_s_avg = 0.05;
	ee_budget_init(&srv->budget, cfg->max_buffered, cfg->max_buffered_per_ip);
	if (ee_dispatch_new(eng, o, cfg->jobs, cfg->queue, &srv->dispatch, err) < 0) {
		free(srv);
		return -1;
	}
	if (ee_heal_new(eng, srv->dispatch, o, &srv->heal, err) < 0 ||
	    ee_refcache_new(srv->dispatch, o, cfg->reference_cache, &srv->refcache, err) < 0) {
		ee_server_free(srv);
		return -1;
	}
	/* Coalescing needs warm sandboxes: a cold one's harness is an exec'd,
	 * dumpable python3 its children could reach (harness apart.py). */
	int warm = cfg->isolation && strcmp(cfg->isolation, "warm") == 0;
	struct ee_run_code_config rc_cfg = { cfg->run_code_deadline_s, cfg->run_code_queue, cfg->jobs,
		                             warm ? cfg->run_code_coalesce : 1 };
	if (ee_run_code_new(srv->dispatch, o, &srv->budget, &srv->stats, &rc_cfg, &srv->run_code, err) < 0) {
		ee_server_free(srv);
		return -1;
	}
	struct ee_sessions_config sess_cfg = {
		.max_sessions = cfg->max_sessions,
		.limits = o->limits,
		.max_cell_timeout_s = EE_TIMEOUT_MAX_S,
		.idle_timeout_s = 300,
		.max_idle_timeout_s = 3600,
		.ttl_s = 3600,
		.max_ttl_s = 86400,
		.preload = cfg->session_preload,
		.n_preload = cfg->n_session_preload,
		.deny_imports = o->deny_imports,
	};
	struct ee_run_jupyter_config jup_cfg = {
		.limits = o->limits,
		.max_cell_timeout_s = EE_TIMEOUT_MAX_S,
		.max_total_timeout_s = 3600,
		.preload = cfg->session_preload,
		.n_preload = cfg->n_session_preload,
		.deny_imports = o->deny_imports,
	};
	/* Two warm workers fork sessions (one start each at a time: a start
	 * is a few ms), when the host runs warm; else sessions start cold.
	 * They start at the first session, not here (engine.h). */
	if (ee_engine_open_sessions(eng, o, cfg->session_preload, cfg->max_sessions ? 2 : 0, err) < 0 ||
	    ee_sessions_new(eng, &sess_cfg, &srv->sessions, err) < 0 ||
	    ee_run_jupyter_new(eng, srv->sessions, &jup_cfg, &srv->run_jupyter, err) < 0) {
		ee_server_free(srv);
		return -1;
	}
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;
	if (cfg->addr.sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
	                               (const struct sockaddr *)&cfg->addr.sa, MHD_OPTION_CONNECTION_LIMIT,
	                               cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	                               cfg->max_connections_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
	                               cfg->idle_timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	                               MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
	if (!srv->daemon) {
		char where[80];
		ee_listen_format((const struct sockaddr *)&cfg->addr.sa, where, sizeof(where));
		ee_fail_errno(err, EE_ERR_SANDBOX,
		              "cannot listen on %s (in use? another address with --listen)", where);
		ee_server_free(srv);
		return -1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info ||
	    ee_loop_add_fd(loop, info->epoll_fd, EE_LOOP_READABLE, on_http, srv, &srv->watch, err) < 0) {
		if (!info)
			ee_fail(err, EE_ERR_SANDBOX, "libmicrohttpd has no epoll fd");
		ee_server_free(srv);
		return -1;
	}
	*ret = srv;
	return 0;
}

void ee_server_address(const struct ee_server *srv, char *buf, size_t size)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (info && getsockname(info->listen_fd, (struct sockaddr *)&sa, &len) == 0)
		ee_listen_format((const struct sockaddr *)&sa, buf, size);
	else
		ee_listen_format((const struct sockaddr *)&srv->cfg->addr.sa, buf, size);
}

void ee_server_free(struct ee_server *srv)
{
	if (!srv)
		return;
	ee_loop_remove_fd(srv->watch);
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	ee_run_code_free(srv->run_code);
	ee_run_jupyter_free(srv->run_jupyter, srv->loop); /* before the table its runs hold places in */
	ee_sessions_free(srv->sessions, srv->loop);
	ee_dispatch_free(srv->dispatch); /* before the cache: a dropped reference run tells its entry */
	ee_refcache_free(srv->refcache);
	ee_heal_free(srv->heal); /* after the dispatcher too: a dropped probe calls back */
	ee_budget_free(&srv->budget);
	free(srv);
}
