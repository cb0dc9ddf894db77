"""TRL's GRPOTrainer (and RLOOTrainer): execeval as a reward function.

    from execeval.trl import code_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[code_reward], train_dataset=ds, ...)

TRL calls a reward function with the completions and, as keywords, the
prompts, the completion ids, the trainer's state and every other column of
the dataset, one list element per completion:
reward_func(prompts=..., completions=..., completion_ids=..., trainer_state=..., **columns).
code_reward reads each completion's tests from its row's test column
(verification_info, input_output, test, tests, test_list, reward_model, ...:
any format the server reads, _adapt.TEST_COLUMNS) and returns one reward
per completion: the record's reward (EXECEVAL_REWARD picks the formula), or
None for an infrastructure failure, which TRL leaves out of the sum instead
of counting it against the model. A completion may be text or TRL's
conversational form (a list of messages: the last assistant message's
content is the reply).

code_reward_async is the same as a coroutine: TRL awaits a reward function
that is one, beside the others, in its own event loop.

Configuration: _adapt's EXECEVAL_* variables, or make_code_reward(url=...,
reward=..., ...) for a configured function."""
import asyncio
import functools

if __package__:
    from . import _adapt
else:  # loaded by file path: this tree's package
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from execeval import _adapt

# TRL's own keywords: not dataset columns.
TRL_KEYWORDS = ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric",
                "environments")


def records(completions, settings=None, **kwargs):
    """The records code_reward's rewards come from, in order (None: no answer,
    masked). kwargs: TRL's keywords and the dataset's columns."""
    settings = settings or _adapt.Settings()
    columns = {k: v for k, v in kwargs.items() if k not in TRL_KEYWORDS}
    prompts = kwargs.get("prompts")
    items = []
    for i, completion in enumerate(completions):
        row = {k: v[i] for k, v in columns.items() if isinstance(v, (list, tuple))}
        if settings.mode == "completion" and prompts is not None and isinstance(prompts[i], str):
            row["prompt"] = prompts[i]  # the text the completion continues
        items.append((_adapt.task_from_row(row), _adapt.text_of(completion)))
    return _adapt.evaluate(items, settings)


def make_code_reward(**settings):
    """A code_reward bound to these settings (url=, token=, reward=, mode=,
    timeout_s=, ...: _adapt.Settings), over the EXECEVAL_* variables."""
    _adapt.Settings(**settings)  # a typo fails here, not in the middle of training

    def code_reward(completions, **kwargs):
        """One reward per completion: the record's, None for an infra error."""
        recs = records(completions, _adapt.Settings(**settings), **kwargs)
        return [_adapt.reward_of(r) for r in recs]

    return code_reward


def make_code_reward_async(**settings):
    """make_code_reward's function as a coroutine function."""
    sync = make_code_reward(**settings)

    async def code_reward_async(completions, **kwargs):
        """code_reward, awaited: the requests run in a worker thread, so the
        event loop goes on meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(sync, completions, **kwargs))

    return code_reward_async


code_reward = make_code_reward()
code_reward_async = make_code_reward_async()
