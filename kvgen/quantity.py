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
MAX_MAGNITUDE = Decimal("1e30")  # far above any size kvgen accepts; larger numbers are refused before any arithmetic


class QuantityError(KvgenError, ValueError):
    pass


def parse(value: str | int | float) -> Decimal:
    """The quantity as a Decimal (bytes for memory and storage)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    try:
        return Decimal(parse_quantity(value))
    except (ValueError, TypeError, InvalidOperation, ArithmeticError) as exc:
        raise QuantityError(
            f"{shorten(value)} is not a Kubernetes quantity (examples: 10Gi, 512Mi, 1.5T)"
        ) from exc


def shorten(value: object, limit: int = 40, quote: bool = True) -> str:
    """repr(value) (or str with ``quote=False``) for a message, cut short: a hostile spec's value
    may be a megabyte long."""
    text = repr(value) if quote else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def to_bytes(value: str | int | float) -> int:
    """Whole bytes, rounded up (a fractional byte is still a byte to allocate). A magnitude of
    10^30 or more is refused before rounding: "1e999999999" is a valid quantity whose integer
    has a billion digits, and a million-digit size takes half a minute to convert. (Smaller sizes
    beyond kvgen's bound are refused, with that bound, by kvgen.apiserver.)"""
    number = parse(value)
    if number.is_nan():
        raise QuantityError(f"{shorten(value)} is not a Kubernetes quantity (examples: 10Gi, 512Mi, 1.5T)")
    if number.copy_abs() >= MAX_MAGNITUDE:  # no arithmetic: 1E+999999999 is beyond the decimal context
        raise QuantityError(f"{shorten(value, quote=False)} is beyond any size (10^30 bytes or more)")
    return math.ceil(number)


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
