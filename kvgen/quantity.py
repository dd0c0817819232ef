"""Kubernetes quantities ("10Gi", "1.5T", "512Mi"), parsed the way Kubernetes parses them.

Parsing is delegated to the Kubernetes Python client's reference implementation; this module
only adds the two conversions kvgen needs: a whole number of bytes, and a canonical string.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from kubernetes.utils.quantity import parse_quantity

from kvgen.errors import KvgenError

GiB = 1024**3
MiB = 1024**2


class QuantityError(KvgenError, ValueError):
    pass


def parse(value: str | int | float) -> Decimal:
    """The quantity as a Decimal (bytes for memory and storage)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    try:
        return Decimal(parse_quantity(value))
    except (ValueError, TypeError, InvalidOperation) as exc:
        raise QuantityError(
            f"{value!r} is not a Kubernetes quantity (examples: 10Gi, 512Mi, 1.5T)"
        ) from exc


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
