"""Fuzz: mutated example specs never crash kvgen.

Hypothesis (derandomized: the same cases on every run) takes the examples (native specs) and
the operators' seeds (KAITO and KServe resources), mutates one to three places in them (a value
of the wrong type, a deletion, a huge or negative number, a wrong container, unicode, an
unknown key, a field the seed does not have drawn from kvgen's schema with a value its schema
describes), then mutates the YAML text itself in a quarter of the cases (an explicit tag on a
value or key, whether it fits or not: ``!!int lmcache``, ``!!set 5``; ``!!omap``/``!!set`` on a
collection; a YAML 1.1 literal such as ``on``, ``y``, ``010``, ``1:20`` written plain) and
sometimes damages the bytes, then runs `kvgen render` on the result through the
CLI entry. kvgen must exit 0 or 1, never with an internal error (4) or a traceback, and every
accepted output must parse as YAML objects. On a quarter as many cases, every accepted spec's
objects must also pass strict kubernetes-validate and a few API-server rules read off the output
(label values, requests within limits, int32 replicas), and a native spec kvgen accepts must be
accepted by the Helm chart with the same objects. The examples render to the same bytes in two
processes with different hash seeds.

    pytest -m fuzz                                # the default 1,700 cases (CI)
    KVGEN_FUZZ_EXAMPLES=10000 pytest -m fuzz      # a longer local run
    KVGEN_FUZZ_TALLY=codes.txt ...                # also write each case's exit code (a histogram)
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
from typing import Any

import pytest
import yaml
from conftest import ROOT, validate_strictly
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.render import templates as render

pytestmark = pytest.mark.fuzz

# 1,700 in the time 2,000 took before the tag layer (a tagged input takes the round-trip loader)
EXAMPLES = int(os.environ.get("KVGEN_FUZZ_EXAMPLES", "1700"))
INSTANCE = "Standard_NC24ads_A100_v4"  # for KServe resources that name none (ignored otherwise)
SEED_FILES = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "examples" / "seeds").glob("*.yaml"))


def _load(path) -> list[Any]:
    return [d for d in YAML(typ="safe", pure=True).load_all(path.read_text()) if d is not None]


SEEDS = {p.relative_to(ROOT).as_posix(): _load(p) for p in SEED_FILES}

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)  # no lone surrogates: not encodable
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    0.5,
    -0.5,
    2.0,
    float("inf"),
    float("-inf"),
    float("nan"),
    2**31,
    2**63 - 1,
    -(2**63),
    10**18,
    "",
    " ",
    "0",
    "1",
    "-1",
    "true",
    "null",
    "yes",
    " 10Gi",
    "10Gi ",
    "10GB",
    "1e400Gi",
    "9" * 400 + "Gi",
    "8Ei",
    "9Ei",
    "-5Gi",
    "0.5Mi",
    "500m",
    "1.5",
    "0x10",
    "NaN",
    "~",
    "--kv-transfer-config={}",
    "--api-key=sk-1",
    "--port=1",
    "hf://a/b",
    "$(X)",
    "ünïcødé",
    "\u202eevil",
    "名前",
    "a" * 300,
    [],
    {},
    [None],
    [1, "a"],
    {"a": 1},
    {"": None},
    [[[]]],
    {"emptyDir": {"size": "1Gi"}},
    "on",
    "off",
    "y",
    "n",
    "No",
    "010",
    "0o17",
    "1:20",
    "1_000",
    ".Inf",
    "=",
    "<<",
    "2001-12-14",
]
# the YAML text's own layer: tags (fitting or not) and literals that YAML 1.1 reads otherwise than 1.2
TAGS = [
    "!!int",
    "!!float",
    "!!bool",
    "!!str",
    "!!null",
    "!!binary",
    "!!timestamp",
    "!!set",
    "!!omap",
    "!!pairs",
    "!!map",
    "!!seq",
    "!!merge",
    "!!value",
    "!custom",
    "!",
    "!<tag:yaml.org,2002:int>",
    "!!python/tuple",
]
YAML11_LITERALS = [
    "on",
    "off",
    "yes",
    "no",
    "y",
    "n",
    "Y",
    "N",
    "ON",
    "010",
    "-07",
    "0o17",
    "0x1F",
    "1:20",
    "190:20:30",
    "1_000",
    "1_0.5",
    ".Inf",
    "-.inf",
    ".NaN",
    "~",
    "=",
    "<<",
    "2001-12-14",
    "1e3",
    "+1",
    "0b101",
    "",
]
PLAUSIBLE = [  # values that fit many fields, so that a fair share of mutated specs is accepted and rendered
    1,
    2,
    4,
    8,
    0.25,
    0.5,
    0.9,
    True,
    False,
    "1Gi",
    "10Gi",
    "100Gi",
    "512Mi",
    1073741824,
    "lru",
    "arc",
    "native",
    "lmcache",
    "4",
    "500m",
    "demo",
    "default",
    "--max-num-seqs=8",
    "Standard_NC24ads_A100_v4",
    "meta-llama/Llama-3.1-8B-Instruct",
    "LoadBalancer",
    "decode",
]
VALUES = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.integers(),
    st.floats(),
    TEXT,
    st.booleans(),
    st.lists(st.one_of(st.integers(), TEXT), max_size=3),
    st.dictionaries(TEXT, st.one_of(st.integers(), TEXT, st.none()), max_size=3),
)
KEYS = st.one_of(
    st.sampled_from(
        [
            "kvCacheOffloding",
            "backend",
            "cpu",
            "name",
            "spec",
            "metadata",
            "apiVersion",
            "kind",
            "env",
            "args",
            "secondary",
            "fileSystem",
            "pvc",
            "emptyDir",
            "ref",
            "template",
            "resource",
            "inference",
            "replicas",
            "<<",
        ]
    ),
    TEXT,
)


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _get(root: Any, path: tuple) -> Any:
    for part in path:
        root = root[part]
    return root


def _set(root: list, path: tuple, value: Any) -> None:
    _get(root, path[:-1])[path[-1]] = value


# --- schema-guided: fields the seeds do not have, with values their schema describes ------------------

SCHEMA = json.loads((ROOT / "schemas" / "kvgen.schema.json").read_text())


def _deref(node: Any) -> Any:
    for _ in range(20):
        if isinstance(node, dict) and "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        elif isinstance(node, dict) and len(node.get("allOf", ())) == 1 and "properties" not in node:
            node = node["allOf"][0]
        else:
            break
    return node if isinstance(node, dict) else {}


def _alternatives(node: Any) -> list[dict]:
    node = _deref(node)
    for key in ("anyOf", "oneOf"):
        if key in node:
            return [a for x in node[key] for a in _alternatives(x) if a.get("type") != "null"] or [node]
    return [node]


def _schema_at(path: tuple) -> list[dict]:
    """The schemas that may describe the value at ``path`` of a native spec."""
    nodes = [SCHEMA]
    for part in path:
        found = []
        for alt in (a for n in nodes for a in _alternatives(n)):
            if isinstance(part, int):
                if isinstance(alt.get("items"), dict):
                    found.append(alt["items"])
            elif part in alt.get("properties", {}):
                found.append(alt["properties"][part])
            elif isinstance(alt.get("additionalProperties"), dict):
                found.append(alt["additionalProperties"])
        nodes = found
    return [a for n in nodes for a in _alternatives(n)]


def _from_schema(draw, node: Any, depth: int = 0) -> Any:
    """A value for ``node``: mostly what it describes (an enum's member, its default or examples, an
    integer in its bounds, an object with its required fields), at times any odd or plausible value."""
    alt = draw(st.sampled_from(_alternatives(node)))
    if "enum" in alt:
        return copy.deepcopy(draw(st.sampled_from(alt["enum"])))
    known = [v for v in (alt.get("default"), *alt.get("examples", ())) if v is not None]
    if known and draw(st.booleans()):
        return copy.deepcopy(draw(st.sampled_from(known)))
    kind = alt.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from([k for k in kind if k != "null"] or ["null"]))
    if kind == "object" or "properties" in alt:
        props = alt.get("properties", {})
        if depth > 3 or not props:
            return {}
        names = [n for n in alt.get("required", []) if n in props]
        names += draw(st.lists(st.sampled_from(sorted(props)), max_size=2, unique=True))
        return {n: _from_schema(draw, props[n], depth + 1) for n in dict.fromkeys(names)}
    if kind == "array":
        return [_from_schema(draw, alt.get("items", {}), depth + 1)] if depth <= 3 else []
    if kind == "integer":
        low = alt.get("minimum", -2)
        return draw(st.integers(low, max(low, min(alt.get("maximum", low + 100), low + 2**20))))
    if kind == "number":
        return draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0, 2.5]))
    if kind == "boolean":
        return draw(st.booleans())
    return draw(st.sampled_from(PLAUSIBLE + ODD_VALUES[:20]))


def _add_from_schema(draw, docs: list) -> None:
    """A field the document does not have, from kvgen's schema, somewhere in a native spec."""
    if not docs or not isinstance(docs[0], dict) or "apiVersion" in docs[0]:
        return
    places = [p for p in _paths(docs[0]) if isinstance(_get(docs[0], p), dict)]
    path = draw(st.sampled_from(places))
    here = _get(docs[0], path)
    missing = sorted({name for alt in _schema_at(path) for name in alt.get("properties", {})} - set(here))
    if missing:
        name = draw(st.sampled_from(missing))
        schemas = [alt["properties"][name] for alt in _schema_at(path) if name in alt.get("properties", {})]
        here[name] = _from_schema(draw, draw(st.sampled_from(schemas)))


# --- the YAML text's layer -------------------------------------------------------------------------------

_VALUE_AT = re.compile(r"(?<=: )|(?<=- )|(?<=\[)|(?<=, )")  # where a value starts (block or flow)
_KEY_AT = re.compile(r"^ *(?:- )*", re.M)  # where a block mapping's key starts
_BLOCK_AT = re.compile(r":(?=\n)")  # a key whose value is a block collection on the next lines
_SCALAR = re.compile(r"[^\n,\]}]*")


def _text_mutation(draw, text: str) -> str:
    op = draw(st.sampled_from(["tag", "tag", "tag", "tag-empty", "tag-key", "tag-block", "yaml11", "yaml11"]))
    spots = {"tag": _VALUE_AT, "tag-empty": _VALUE_AT, "yaml11": _VALUE_AT, "tag-key": _KEY_AT, "tag-block": _BLOCK_AT}[
        op
    ]
    at = [m.end() for m in spots.finditer(text)]
    if not at:
        return text
    i = draw(st.sampled_from(at))
    tag = draw(st.sampled_from(TAGS))
    if op == "tag" or op == "tag-key":
        return f"{text[:i]}{tag} {text[i:]}"
    if op == "tag-block":
        return f"{text[:i]} {tag}{text[i:]}"
    scalar = _SCALAR.match(text, i)
    assert scalar is not None  # the pattern matches the empty string too
    end = i + scalar.end()  # the scalar that starts at i (empty before a nested collection)
    if op == "tag-empty":
        return f"{text[:i]}{tag}{text[end:]}"
    return f"{text[:i]}{draw(st.sampled_from(YAML11_LITERALS))}{text[end:]}"


@st.composite
def mutated(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    docs = copy.deepcopy(SEEDS[name])
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3]))):
        path = draw(st.sampled_from(_paths(docs)[1:]))  # never the stream itself
        value = _get(docs, path)
        op = draw(
            st.sampled_from(
                [
                    "plausible",
                    "plausible",
                    "plausible",
                    "delete",
                    "delete",
                    "replace",
                    "replace",
                    "replace",
                    "wrap",
                    "nest",
                    "stringify",
                    "key",
                    "unicode",
                    "number",
                    "schema",
                    "schema",
                    "schema",
                ]
            )
        )
        if op == "schema":
            _add_from_schema(draw, docs)
        elif op == "plausible" and not isinstance(value, (dict, list)):
            _set(docs, path, draw(st.sampled_from(PLAUSIBLE)))
        elif op == "replace":
            _set(docs, path, copy.deepcopy(draw(VALUES)))  # a copy: later mutations must not change the pool
        elif op == "delete":
            del _get(docs, path[:-1])[path[-1]]
        elif op == "wrap":
            _set(docs, path, draw(st.sampled_from([[value], {"value": value}, [value, copy.deepcopy(value)]])))
        elif op == "nest" and isinstance(value, (dict, list)):
            _set(docs, path, {draw(KEYS): value})
        elif op == "stringify":
            _set(docs, path, str(value))
        elif op == "key" and isinstance(value, dict):
            value[draw(KEYS)] = copy.deepcopy(draw(VALUES))
        elif op == "unicode":
            _set(docs, path, f"{value}{draw(TEXT)}" if not isinstance(value, (dict, list)) else draw(TEXT))
        elif op == "number":
            _set(docs, path, draw(st.sampled_from([10**k for k in (9, 12, 18, 19, 30)] + [-(10**19), 1e308, -1e-300])))
        if not docs:
            docs = [{}]
    buf = io.StringIO()
    dumper = YAML(typ="safe", pure=True)
    dumper.dump_all(docs, buf)
    text = buf.getvalue()
    if draw(st.integers(0, 3)) == 0:
        for _ in range(draw(st.sampled_from([1, 1, 2]))):
            text = _text_mutation(draw, text)
    data = text.encode("utf-8")
    damage = draw(st.integers(0, 29))
    if damage == 0 and data:  # cut short
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == 1:  # foreign bytes
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return name, data


_load_output = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(mutated())
def test_mutated_specs_exit_0_or_1_and_accepted_output_is_yaml(case):
    name, data = case
    result = CliRunner().invoke(app, ["render", "-", "--instance", INSTANCE], input=data)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    if os.environ.get("KVGEN_FUZZ_TALLY"):  # a file: one exit code per case, for a run's histogram
        with open(os.environ["KVGEN_FUZZ_TALLY"], "a") as tally:
            tally.write(f"{'crash' if crashed else result.exit_code}\n")
    assert not crashed and result.exit_code in (0, 1), (
        f"{name} mutated: exit {result.exit_code}\n{result.output}\n{data.decode('utf-8', 'replace')}"
    )
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    if result.exit_code == 0:
        objects = [d for d in yaml.load_all(result.stdout, Loader=_load_output) if d is not None]
        # the same data to a YAML 1.1 reader (PyYAML, as kubectl reads it) and a YAML 1.2 reader (libyaml with
        # ruamel.yaml's YAML 1.2 resolvers, kvgen's reader of its templates' output: a third of ruamel's time)
        assert objects == [d for d in render._load_all()(result.stdout) if d is not None], result.stdout
        assert objects and all(
            isinstance(o, dict) and o.get("kind") and o.get("metadata", {}).get("name") for o in objects
        ), result.stdout


# --- what an accepted spec renders, checked by oracles independent of kvgen -------------------------

import helm as chart  # noqa: E402
import helm_python  # noqa: E402

from kvgen.core import quantity  # noqa: E402
from kvgen.input.source import load_documents  # noqa: E402

LABEL_VALUE = __import__("re").compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
INT32_MAX = 2**31 - 1


def _api_server_rules(obj: dict) -> list[str]:
    """A few of the API server's own rules, read off the output (apimachinery IsValidLabelValue,
    core validation ValidateResourceRequirements, int32 replicas)."""
    bad = []
    for where in (obj.get("metadata", {}), obj.get("spec", {}).get("template", {}).get("metadata", {})):
        for key, value in (where.get("labels") or {}).items():
            if len(str(value)) > 63 or not LABEL_VALUE.match(str(value)):
                bad.append(f"label {key}={value!r}")
    replicas = obj.get("spec", {}).get("replicas")
    if replicas is not None and not 0 <= replicas <= INT32_MAX:
        bad.append(f"replicas {replicas}")
    pod = obj.get("spec", {}).get("template", {}).get("spec", {})
    for c in pod.get("containers", []) + pod.get("initContainers", []):
        res = c.get("resources", {})
        for name, request in (res.get("requests") or {}).items():
            limit = (res.get("limits") or {}).get(name)
            if limit is not None and name in ("cpu", "memory", "ephemeral-storage"):
                if quantity.to_bytes(str(request)) > quantity.to_bytes(str(limit)):
                    bad.append(f"{c['name']} {name} request {request} > limit {limit}")
    return bad


@settings(
    max_examples=max(EXAMPLES // 4, 50),
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(mutated())
def test_accepted_native_specs_are_valid_kubernetes_and_the_chart_renders_the_same(case):
    """Every object of an accepted spec passes strict kubernetes-validate and the API-server rules
    above; for a native spec (a Helm values file) the chart accepts it too and renders the same objects."""
    name, data = case
    result = CliRunner().invoke(app, ["render", "-", "--instance", INSTANCE], input=data)
    if result.exit_code != 0:
        return
    objects = [d for d in yaml.load_all(result.stdout, Loader=_load_output) if d is not None]
    for obj in objects:
        version = "1.34.0" if obj["kind"] == "ResourceClaimTemplate" else "1.33.0"
        validate_strictly(obj, version)
        assert _api_server_rules(obj) == [], (obj["kind"], obj["metadata"]["name"])
    # read as kvgen reads it (YAML 1.2, its tags): PyYAML refuses some flow mappings kvgen accepts ({0?: null}),
    # and ruamel.yaml's safe loader makes a date of `!!timestamp 2001-12-14`, which kvgen keeps as written
    docs = [d.data for d in load_documents(data, "fuzz.yaml")]
    if len(docs) != 1 or not isinstance(docs[0], dict) or "apiVersion" in docs[0]:
        return  # KAITO / KServe input: the chart takes native specs only
    if any(o["kind"] == "ResourceClaimTemplate" for o in objects):
        return  # rendered for 1.34 by kvgen only with --kube-version; the chart test covers it
    try:
        rendered = chart.objects(docs[0])
    except (helm_python.HelmRenderError, helm_python.HelmValuesError) as exc:  # pragma: no cover - a failure
        raise AssertionError(f"kvgen accepted {name} mutated, the chart refused it: {exc}") from None
    assert chart.by_identity(rendered) == chart.by_identity(objects)


def test_same_bytes_across_two_processes_with_different_hash_seeds(tmp_path):
    """Determinism across processes: every example rendered twice, in processes with different
    PYTHONHASHSEED (set and dict order, string hashing), gives the same bytes."""
    import subprocess
    import sys

    # the examples render as one tree (one command), each for its kubeVersion or kvgen's default
    specs = sorted((ROOT / "examples").glob("*.yaml"))
    outputs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-m", "kvgen", "render", "--quiet", "--instance", INSTANCE, *map(str, specs)],
            capture_output=True,
            env=env,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        outputs.append(proc.stdout)
    assert len(specs) > 25 and outputs[0] == outputs[1] and len(outputs[0]) > 100_000
