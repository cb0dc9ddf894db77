"""verl: execeval as the custom reward function.

    custom_reward_function.path=/path/to/clients/python/execeval/verl.py
    custom_reward_function.name=compute_score

verl loads this file by its path and calls, for each response (its naive
and prime reward managers),
compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...),
ground_truth being the row's reward_model.ground_truth: a JSON string of
(or an object) {"inputs", "outputs"}, {"fn_name", "inputs", "outputs"} or
{"assert_case": [...]}, as the server reads verl's rows (docs/formats.md),
or any other tests value _adapt.task_from_value takes. The response goes to
the server in one /v1/batch request with all its tests (verl's sandbox
reward sends one request per test). The answer is a dict, as verl's
managers take it: "score" (the record's reward: EXECEVAL_REWARD picks the
formula), "acc" (1.0 for a pass, else 0.0) and "infra_error" (1.0 when the
host failed: the score is then EXECEVAL_INFRA_REWARD, 0 by default, since
verl has no way to leave a sample out).

With reward_model.reward_manager=batch verl calls
compute_score(data_sources=[...], solution_strs=[...], ground_truths=[...], extra_infos=[...])
once for the whole batch: the answer is then a list of floats, the
responses sent as /v1/batch requests of consecutive responses to one
ground truth (a GRPO group), EXECEVAL_MAX_IN_FLIGHT at once.

Configuration: _adapt's EXECEVAL_* variables; the settings' names (url,
reward, timeout_s, ...) also as keywords, which is how verl's
custom_reward_function.reward_kwargs reach the function. extra_info's
"task_id", when there is one, names the task in the records."""
if __package__:
    from . import _adapt
else:  # loaded by file path, as verl loads it: this tree's package
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from execeval import _adapt

# What verl's default scorer takes and a custom one may be given too: the
# sandbox's URL is execeval's here; the others have no meaning for it.
IGNORED = ("sandbox_fusion_url", "concurrent_semaphore")


def _settings(kwargs):
    kwargs = {k: v for k, v in kwargs.items() if k not in IGNORED}
    if kwargs.get("memory_limit_mb") is not None:
        kwargs.setdefault("memory_mb", kwargs["memory_limit_mb"])
    kwargs.pop("memory_limit_mb", None)
    return _adapt.Settings(**kwargs)


def _task(ground_truth, extra_info):
    task_id = extra_info.get("task_id") if isinstance(extra_info, dict) else None
    return _adapt.task_from_value(ground_truth, task_id)


def records(solution_strs, ground_truths, extra_infos=None, settings=None):
    """The records behind the scores, in order (None: no answer, masked)."""
    settings = settings or _adapt.Settings()
    extra_infos = extra_infos if extra_infos is not None else [None] * len(solution_strs)
    items = [(_task(gt, ei), s) for s, gt, ei in zip(solution_strs, ground_truths, extra_infos)]
    return _adapt.evaluate(items, settings)


def _score(record, settings):
    reward = _adapt.reward_of(record)
    return settings.infra_reward if reward is None else reward


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, *,
                  data_sources=None, solution_strs=None, ground_truths=None, extra_infos=None, **kwargs):
    """One response: {"score", "acc", "infra_error"}; a batch (the plural
    keywords): a list of scores."""
    settings = _settings(kwargs)
    if solution_strs is not None:
        recs = records(_adapt.plain(solution_strs), _adapt.plain(ground_truths),
                       None if extra_infos is None else _adapt.plain(extra_infos), settings)
        return [_score(r, settings) for r in recs]
    if solution_str is None or ground_truth is None:
        raise TypeError("compute_score needs solution_str and ground_truth (or the batch's plurals)")
    rec = records([solution_str], [ground_truth], [extra_info], settings)[0]
    return {"score": _score(rec, settings),
            "acc": 1.0 if rec is not None and rec.get("status") == "pass" else 0.0,
            "infra_error": 1.0 if _adapt.is_infra(rec) else 0.0}
