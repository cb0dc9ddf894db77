/* events_task.h - the task and nonce whose event streams the corpus of
 * fuzz_events holds (its files are read against them by fuzz_events and by
 * test_oom's events subject). */
#ifndef EE_TEST_EVENTS_TASK_H
#define EE_TEST_EVENTS_TASK_H

#define EVENTS_TASK_JSON                                                                                     \
	"{\"task_id\":\"f\",\"tests\":["                                                                     \
	"{\"kind\":\"assert\",\"code\":\"assert 1\"},"                                                       \
	"{\"kind\":\"call\",\"fn\":\"f\",\"args\":[1],\"expected\":[1,2]},"                                  \
	"{\"kind\":\"io\",\"stdout\":\"3\",\"visibility\":\"hidden\"}]}"
#define EVENTS_NONCE "0123456789abcdef0123456789abcdef"

#endif
