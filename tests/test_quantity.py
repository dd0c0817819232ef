"""kvgen.core.quantity against the oracle: the Kubernetes Python client's parse_quantity (a test
dependency only; kvgen does not import it at run time)."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes.utils.quantity import parse_quantity as reference

from kvgen.core import quantity

digits = st.text("0123456789", min_size=1, max_size=12)
number = st.one_of(
    digits,
    st.builds(lambda a, b: f"{a}.{b}", digits, digits),
    st.builds(lambda a: f"{a}.", digits),
    st.builds(lambda b: f".{b}", digits),
)
sign = st.sampled_from(["", "+", "-"])
suffix = st.one_of(
    st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"]),
    st.builds(lambda e, s, d: f"{e}{s}{d}", st.sampled_from("eE"), sign, st.text("0123456789", min_size=1, max_size=2)),
)
kubernetes_quantity = st.builds(lambda s, n, x: f"{s}{n}{x}", sign, number, suffix)


@pytest.mark.heavy
@settings(max_examples=2000, deadline=None)
@given(kubernetes_quantity)
def test_every_kubernetes_quantity_has_the_reference_value(text):
    assert quantity.parse(text) == reference(text)


@pytest.mark.heavy
@settings(max_examples=500, deadline=None)
@given(st.one_of(st.integers(min_value=0, max_value=2**70), st.floats(min_value=0, max_value=1e20)))
def test_numbers_have_the_reference_value(value):
    assert quantity.parse(value) == reference(value)


@pytest.mark.heavy
@settings(max_examples=2000, deadline=None)
@given(st.text("0123456789.+-eEKMGTPEimnuk ", max_size=8))
def test_text_kvgen_reads_has_the_reference_value(text):
    """Any text kvgen accepts, the reference accepts with the same value."""
    try:
        ours = quantity.parse(text)
    except quantity.QuantityError:
        return
    assert ours == reference(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("10Gi", 10 * 1024**3),
        ("1.5T", Decimal("1.5e12")),
        ("512Mi", 512 * 1024**2),
        ("500m", Decimal("0.5")),
        ("1e3", 1000),
        ("2E", 2 * 10**18),
        ("7", 7),
    ],
)
def test_known_values(text, expected):
    assert quantity.parse(text) == expected


@pytest.mark.parametrize("text", ["", "Gi", "1ki", "1 Gi", "1Gi ", "0x10", "NaN", "1e", "1.2.3", "--1", "1_000", "1Gb"])
def test_not_quantities(text):
    with pytest.raises(quantity.QuantityError):
        quantity.parse(text)


def test_true_is_not_a_quantity():
    with pytest.raises(quantity.QuantityError):
        quantity.parse(True)


@pytest.mark.heavy
def test_kvgen_does_not_import_the_kubernetes_client():
    """The client is a test oracle only: rendering must not import it (126 MB installed,
    about 280 ms to import)."""
    code = (
        "import sys, runpy; sys.argv = ['kvgen', 'render', '--quiet', 'examples/kaito-gemma-4-12b.yaml'];\n"
        "import kvgen.app.cli, contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: kvgen.app.cli.main()\n"
        "    except SystemExit: pass\n"
        "print('kubernetes' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=__import__("conftest").ROOT
    )
    assert out.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize(
    "n,text",
    [
        (10 * 1024**3, "10Gi"),
        (1536 * 1024**2, "1536Mi"),
        (3 * 1024**4, "3Ti"),
        (5 * 1024, "5Ki"),
        (100 * 10**9, "97656250Ki"),  # 100G is a whole number of KiB
        (10**9 + 1, "1000000001"),  # no whole number of KiB: plain bytes, never rounded
        (1023, "1023"),
        (0, "0"),
    ],
)
def test_format_bytes_is_the_shortest_exact_form(n, text):
    from kvgen.core.quantity import format_bytes, to_bytes

    assert format_bytes(n) == text
    assert to_bytes(text) == n
