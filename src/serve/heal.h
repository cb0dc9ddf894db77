/* heal.h - how a server whose sandboxes cannot start finds out that they
 * can again, with no client's request to find it.
 *
 * The engine is sick after EE_ENGINE_SICK_AFTER failed sandbox starts in
 * a row and well again after one that succeeds (engine.h). A sick server's
 * /healthz answers 503, so a readiness probe takes it out of its Service
 * and no client request comes to prove it well. While sick, each GET
 * /healthz pokes the healer: it runs one trivial candidate (trusted, in
 * the dispatcher's own lane), at most one at a time and one a second; the
 * candidate's start is counted like any other, so the next /healthz
 * answers 200 once the host can hold a sandbox again.
 *
 * Lifecycle: ee_heal_new after the dispatcher, ee_heal_free after it (a
 * probe dropped from its queue calls back then). Owns its task; borrows
 * the dispatcher and the options for its life.
 */
#ifndef EE_SERVE_HEAL_H
#define EE_SERVE_HEAL_H

struct ee_dispatch;
struct ee_engine;
struct ee_err;
struct ee_eval_options;
struct ee_heal;

int ee_heal_new(struct ee_engine *eng, struct ee_dispatch *d, const struct ee_eval_options *o,
                struct ee_heal **ret, struct ee_err *err);
/* Runs a probe if the engine is sick, none is in flight and the last
 * started a second ago or more; else nothing. */
void ee_heal_poke(struct ee_heal *h);
/* Probes started since the server did. */
unsigned long ee_heal_probes(const struct ee_heal *h);
void ee_heal_free(struct ee_heal *h); /* accepts NULL */

#endif
