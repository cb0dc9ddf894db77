"""OpenRLHF: execeval as the local reward function.

    --remote_rm_url /path/to/clients/python/execeval/openrlhf.py --label_key tests

OpenRLHF loads this file by its path and calls
reward_func(queries, prompts, labels) with a list each: queries are the
prompts followed by the responses, prompts the prompts alone, labels the
dataset's --label_key column, here each a sample's tests (a JSON string or
an object: a whole row in any format the server reads, a verl ground truth,
a verification_info, a list of tests: _adapt.task_from_value). The response
is the query less its prompt.

The answer is OpenRLHF's dict: "rewards" (the records' rewards:
EXECEVAL_REWARD picks the formula), "scores" (the records' score, 0..1,
which OpenRLHF's dynamic filtering reads) and "extra_logs" ("pass" and
"infra_error", 1.0 or 0.0 each), as torch tensors when torch is importable
(it is, inside OpenRLHF), else lists. OpenRLHF has no way to leave a sample
out: an infrastructure failure gets EXECEVAL_INFRA_REWARD (default 0) as
its reward and 0 as its score, and counts in extra_logs' infra_error.

Configuration: _adapt's EXECEVAL_* variables only (OpenRLHF passes none)."""
if __package__:
    from . import _adapt
else:  # loaded by file path, as OpenRLHF loads it: this tree's package
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from execeval import _adapt


def _response(query, prompt):
    return query[len(prompt):] if prompt and query.startswith(prompt) else query


def records(queries, prompts, labels, settings=None):
    """The records behind the rewards, in order (None: no answer, masked)."""
    settings = settings or _adapt.Settings()
    items = [(_adapt.task_from_value(label), _response(q, p)) for q, p, label in zip(queries, prompts, labels)]
    return _adapt.evaluate(items, settings)


def _tensor(values):
    try:
        import torch
    except ImportError:
        return values
    return torch.tensor(values, dtype=torch.float32)


def reward_func(queries, prompts, labels):
    """{"rewards", "scores", "extra_logs"} for OpenRLHF."""
    if not len(queries) == len(prompts) == len(labels):
        raise ValueError("queries, prompts and labels differ in length (%d, %d, %d)"
                         % (len(queries), len(prompts), len(labels)))
    settings = _adapt.Settings()
    recs = records(list(queries), list(prompts), list(labels), settings)
    rewards, scores, passed, infra = [], [], [], []
    for rec in recs:
        reward = _adapt.reward_of(rec)
        bad = _adapt.is_infra(rec)
        rewards.append(settings.infra_reward if reward is None else reward)
        scores.append(0.0 if bad else float(rec.get("score") or 0.0))
        passed.append(1.0 if not bad and rec.get("status") == "pass" else 0.0)
        infra.append(1.0 if bad else 0.0)
    return {"rewards": _tensor(rewards), "scores": _tensor(scores),
            "extra_logs": {"pass": _tensor(passed), "infra_error": _tensor(infra)}}
