"""Kubernetes quantities ("10Gi", "1.5T", "512Mi", "500m"), parsed the way Kubernetes parses them.

The grammar is apimachinery's (``pkg/api/resource/quantity.go``)::

    <quantity>  ::= <signedNumber><suffix>
    <suffix>    ::= Ki | Mi | Gi | Ti | Pi | Ei          (powers of 1024)
                  | n | u | m | "" | k | M | G | T | P | E  (powers of 1000)
                  | e<signedInteger> | E<signedInteger>  (powers of 10)

The value is computed with Python's Decimal exactly as the Kubernetes Python client's
``kubernetes.utils.quantity.parse_quantity`` does; that client is the oracle of the tests
(tests/test_quantity.py) and is no longer needed at run time (it is 126 MB and took about
280 ms to import). Spec fields are checked against narrower patterns (kvgen.spec.models) first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

from kvgen.core.errors import KvgenError

GiB = 1024**3
MiB = 1024**2
MAX_MAGNITUDE = Decimal("1e30")  # far above any size kvgen accepts; larger numbers are refused before any arithmetic

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([KMGTPE])i|([numkMGTPE])|[eE]([+-]?[0-9]+))?")
_POWER = {"n": -3, "u": -2, "m": -1, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}  # K: Ki only


class QuantityError(KvgenError, ValueError):
    pass


def _invalid(value: object) -> QuantityError:
    return QuantityError(f"{shorten(value)} is not a Kubernetes quantity (examples: 10Gi, 512Mi, 1.5T)")


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
    except ArithmeticError as exc:  # DecimalException included
        raise _invalid(value) from exc


def shorten(value: object, limit: int = 40, quote: bool = True) -> str:
    """repr(value) (or str with ``quote=False``) for a message, cut short: a hostile spec's value
    may be a megabyte long. A printable string is quoted as errors.quoted() quotes it; repr also
    escapes the control characters a hostile value may hold, which quoted() leaves as they are."""
    text = repr(value) if quote else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def to_bytes(value: str | int | float) -> int:
    """Whole bytes, rounded up (a fractional byte is still a byte to allocate). A magnitude of
    10^30 or more is refused before rounding: "1e999999999" is a valid quantity whose integer
    has a billion digits, and a million-digit size takes half a minute to convert. (Smaller sizes
    beyond kvgen's bound are refused, with that bound, by kvgen.plan.apiserver.)"""
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


# ----------------------------------------------------------------------------- parsed once
#
# The spec's quantities are parsed once, when the spec is validated (kvgen.spec.models): the
# planning modules read the number, and messages and output echo the text as written.


@dataclass(frozen=True, slots=True)
class Size:
    """A size as the spec wrote it ("10Gi", or a whole number of bytes as text) and its bytes."""

    text: str
    bytes: int

    @classmethod
    def parse(cls, text: str) -> Size:
        """The size of ``text`` (a QuantityError when it is no quantity or beyond any size)."""
        return cls(text, to_bytes(text))

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Cpu:
    """A CPU quantity as the spec wrote it ("4", "0.5", "500m") and its exact value in millicores
    (a Decimal: the spec's pattern allows fractions of a millicore, which Kubernetes compares exactly)."""

    text: str
    millicores: Decimal

    @classmethod
    def parse(cls, text: str) -> Cpu:
        return cls(text, parse(text) * 1000)

    @classmethod
    def cores(cls, n: int) -> Cpu:
        """A whole number of cores, written as kvgen writes a computed request ("4")."""
        return cls(str(n), Decimal(n * 1000))

    def __str__(self) -> str:
        return self.text
