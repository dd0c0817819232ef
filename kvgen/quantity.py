"""Kubernetes quantities ("10Gi", "1.5T", "512Mi", "500m"), parsed the way Kubernetes parses them.

The grammar is apimachinery's (``pkg/api/resource/quantity.go``)::

    <quantity>  ::= <signedNumber><suffix>
    <suffix>    ::= Ki | Mi | Gi | Ti | Pi | Ei          (powers of 1024)
                  | n | u | m | "" | k | M | G | T | P | E  (powers of 1000)
                  | e<signedInteger> | E<signedInteger>  (powers of 10)

The value is computed with Python's Decimal exactly as the Kubernetes Python client's
``kubernetes.utils.quantity.parse_quantity`` does; that client is the oracle of the tests
(tests/test_quantity.py) and is no longer needed at run time (it is 126 MB and took about
280 ms to import). Spec fields are checked against narrower patterns (kvgen.spec) first.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, DecimalException

GiB = 1024**3
MiB = 1024**2

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([KMGTPE])i|([numkMGTPE])|[eE]([+-]?[0-9]+))?")
_POWER = {"n": -3, "u": -2, "m": -1, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}  # K: Ki only


class QuantityError(ValueError):
    pass


def _invalid(value: object) -> QuantityError:
    return QuantityError(f"{value!r} is not a Kubernetes quantity (examples: 10Gi, 512Mi, 1.5T)")


def parse(value: str | int | float) -> Decimal:
    """The quantity as a Decimal (bytes for memory and storage)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, (int, float, Decimal)):
        return Decimal(value)
    if not isinstance(value, str):
        raise _invalid(value)
    m = _QUANTITY.fullmatch(value)
    if m is None:
        raise _invalid(value)
    number, binary, decimal, exponent = m.groups()
    if exponent is not None:
        return Decimal(value)  # 1e3, 1.5E-2: Decimal reads the exponent itself
    try:
        if binary:
            return Decimal(number) * (Decimal(1024) ** Decimal(_POWER[binary]))
        if decimal:
            return Decimal(number) * (Decimal(1000) ** Decimal(_POWER[decimal]))
        return Decimal(number)
    except DecimalException as exc:
        raise _invalid(value) from exc


def to_bytes(value: str | int | float) -> int:
    """Whole bytes, rounded up (a fractional byte is still a byte to allocate)."""
    return math.ceil(parse(value))


def format_bytes(n: int) -> str:
    """The shortest exact form of a byte count: 10737418240 -> "10Gi", 1610612736 -> "1536Mi".

    Exact, never rounded: a value that is no whole number of KiB is written in plain bytes.
    """
    for suffix, unit in (("Ti", 1024**4), ("Gi", GiB), ("Mi", MiB), ("Ki", 1024)):
        if n and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def round_up_gib(n: int) -> int:
    """Bytes rounded up to a whole GiB."""
    return math.ceil(n / GiB) * GiB
