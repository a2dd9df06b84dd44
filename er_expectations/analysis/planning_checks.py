"""The options of :func:`~er_expectations.analysis.planning.simulate` and
:func:`~er_expectations.analysis.planning.plan_sample_size`, checked before any work: whole
numbers in range, sample sizes, designs and replications (SPEC 1, 12.3)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from er_expectations.analysis.expected_errors import EXPECTED_ERRORS
from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.engines.base import DESIGNS

__all__ = ["MAX_DRAWS", "MIN_REPS", "SIM_DESIGNS", "check_designs", "check_int", "check_reps", "check_sizes"]

#: Fewest replications accepted: below 100 the coverage (a share) is too noisy to read.
MIN_REPS = 100
#: Most draws per simulated sample or planned benchmark.
MAX_DRAWS = 10**6


def check_int(value: object, *, parameter: str, minimum: int, maximum: int, why: str) -> int:
    """``value`` as an int in [minimum, maximum]; :class:`InputError` naming ``parameter`` and ``why``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InputError(f"{parameter}={value!r} is not a whole number; {why}")
    if not minimum <= int(value) <= maximum:
        raise InputError(f"{parameter}={value!r} is out of range; {why} (from {minimum:,} to {maximum:,})")
    return int(value)


def check_sizes(sizes: object, *, parameter: str = "sizes") -> tuple[int, ...]:
    """Sample sizes (numbers of draws): whole numbers ≥ 2, each once, in the order given."""
    if isinstance(sizes, (int, np.integer)) and not isinstance(sizes, bool):
        sizes = (sizes,)
    if isinstance(sizes, (str, bytes, Mapping)) or not isinstance(sizes, Iterable):
        raise InputError(f"{parameter}={sizes!r}: give a list of numbers of draws, e.g. (200, 400, 800)")
    out: list[int] = []
    for s in sizes:
        n = check_int(s, parameter=parameter, minimum=2, maximum=MAX_DRAWS,
                       why="a sample size is a number of draws ≥ 2 (a standard error needs two draws)")
        if n not in out:
            out.append(n)
    if not out:
        raise InputError(f"{parameter}=[] gives no sample size; give numbers of draws, e.g. (200, 400, 800)")
    return tuple(out)


#: The designs :func:`simulate` replays: those of SPEC 1 and the expected-errors design of
#: SPEC 12.3 (records drawn with probability q_r from the ER system's match probabilities).
SIM_DESIGNS = (*DESIGNS, EXPECTED_ERRORS)


def check_designs(designs: object, *, parameter: str = "designs") -> tuple[str, ...]:
    """Sampling designs of SPEC 1 and 12.3: 'cluster_size', 'uniform' and/or 'expected_errors'
    (did-you-mean on a typo)."""
    if isinstance(designs, str):
        designs = (designs,)
    if isinstance(designs, (bytes, Mapping)) or not isinstance(designs, Iterable):
        raise InputError(f"{parameter}={designs!r}: give one or more of {quote_list(SIM_DESIGNS, conjunction='and')}")
    out: list[str] = []
    for d in designs:
        if not isinstance(d, str) or d not in SIM_DESIGNS:
            close = did_you_mean(str(d), SIM_DESIGNS)
            hint = f"; {close}" if close else ""
            raise InputError(f"{parameter}: unknown design {d!r}{hint} Known designs: "
                             f"{quote_list(SIM_DESIGNS, conjunction='and')} (records drawn uniformly, i.e. clusters ∝ "
                             "size; clusters drawn uniformly; records drawn by their expected errors)")
        if d not in out:
            out.append(d)
    if not out:
        raise InputError(f"{parameter}=[] gives no design; give {quote_list(SIM_DESIGNS)}")
    return tuple(out)


def check_reps(reps: object, *, parameter: str = "reps") -> int:
    """Number of replications: a whole number ≥ :data:`MIN_REPS`."""
    return check_int(reps, parameter=parameter, minimum=MIN_REPS, maximum=10**7,
                      why=f"give at least {MIN_REPS} replications (1000 for the figures of a report)")
