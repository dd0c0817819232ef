"""A native spec's ``vllm.extraArgs`` checked: no flag kvgen owns (the table of kvgen.data.flags),
and nothing the pinned vLLM would refuse (its `vllm serve` parser from the contract snapshot).
The chart's twin is ``kvgen.checkExtraArgs`` (templates/plan/_vllmargs.tpl).
"""

from __future__ import annotations

from kvgen.core.errors import Problem, quoted
from kvgen.data import contract
from kvgen.data.flags import EXTRA_ARGS, refusal, table, vllm_snapshot


def check_extra_args(args: list[str]) -> list[Problem]:
    """Problems of a native spec's vllm.extraArgs, each at vllm.extraArgs[i]: a flag kvgen owns
    (in any spelling vLLM reads: --max_model_len, -tp=2, -n2, --kv-transfer-config.key), then
    anything vLLM would refuse. The chart's kvgen.checkExtraArgs (templates/plan/_vllmargs.tpl)
    reports the same."""
    if not args:
        return []
    owned = table()
    walked: list[Problem] = []
    parsed = contract.walk_argv(list(args), vllm_snapshot().vllm["serve"], walked)
    problems: list[Problem] = []
    taken: set[int] = set()  # the tokens of refused flags, and their values: said once
    for index, option, tokens in parsed.options:
        if option in owned:
            message, hint = refusal(option)
            problems.append(Problem((*EXTRA_ARGS, index), message, hint))
            taken.update(tokens)
    problems += [p.under(*EXTRA_ARGS) for p in walked if p.path[0] not in taken]
    for index, token in parsed.positionals:  # vllm serve's one positional is the model: kvgen's
        problems.append(
            Problem(
                (*EXTRA_ARGS, index),
                f"unexpected positional argument {quoted(token)} (vllm serve takes only the model)",
                "a value belongs to the flag before it: write --flag=value",
                code=contract.UNEXPECTED_ARGUMENT,
            )
        )
    return problems


__all__ = ["check_extra_args"]
