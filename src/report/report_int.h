/* report_int.h - the report's state, shared by report.c (gathering) and
 * html.c (writing the page). Not a public header: everyone else goes
 * through report.h. */
#ifndef EE_REPORT_INT_H
#define EE_REPORT_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "base/strmap.h"

struct ee_summary;

/* Statuses by severity (the summary's order): a task's worst is the
 * highest index any of its samples reached. */
enum { REP_PASS, REP_ASSERTION_FAIL, REP_SYNTAX_ERROR, REP_TIMEOUT, REP_ERROR, REP_N_STATUS };
extern const char *const ee_report_status_names[REP_N_STATUS];

struct rep_task {
	char *id;
	char *cls;          /* the first non-empty class seen, or NULL */
	unsigned long n, c; /* samples, passing samples */
	double score_sum;
	int worst;                            /* REP_* */
	unsigned long failures;               /* samples that did not pass */
	double wall_max;                      /* ms; < 0: no record said */
	double mem_max;                       /* KiB, peak_memory_kb else peak_rss_kb; < 0: none */
	json_t *shown;                        /* failing samples kept (array of objects, see report.c) */
	uint64_t shown_kind[EE_REPORT_SHOWN]; /* hash of each one's detail class */
	size_t shown_cost[EE_REPORT_SHOWN];   /* bytes each one holds */
};

struct ee_report {
	struct ee_summary *summary;
	struct ee_strmap task_ix; /* id -> index into tasks */
	struct rep_task *tasks;
	size_t n_tasks, cap_tasks;
	size_t kept_bytes;       /* of EE_REPORT_KEEP_BYTES, held by shown failures */
	unsigned long unkept;    /* failures not kept because of that budget */
	unsigned long records;   /* added */
	struct ee_strmap models; /* distinct models, at most REP_MAX_MODELS */
	int more_models;         /* a record named a model past that cap */
	int oom;
};

#define REP_MAX_MODELS 32

#endif
