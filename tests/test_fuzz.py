"""Fuzz: mutated example specs never crash kvgen, and what it accepts the API server and the chart accept.

Hypothesis (derandomized: the same cases on every run; KVGEN_FUZZ_SEED picks another set) takes the
examples (native specs) and the operators' seeds (KAITO and KServe resources), mutates up to three places in them (a value
of the wrong type, a deletion, a huge or negative number, a wrong container, unicode, an
unknown key, a field the seed does not have drawn from kvgen's schema with a value its schema
describes, one mapping or list reused at another place (the dumper writes an anchor and its alias),
a name shaped like a path, an extraObjects item whose name, labels, containers, volumes or resources
the API server may refuse), then changes the YAML text in a quarter of the cases: an explicit tag on
a value or key, whether it fits or not (``!!int lmcache``, ``!!set 5``; ``!!omap``/``!!set`` on a
collection); a YAML 1.1 literal such as ``on``, ``y``, ``010``, ``1:20`` written plain; a
``%YAML 1.1/1.2/1.3`` or ``%TAG`` directive at the top or between documents (after ``...`` or
``---``), or a ``%TAG`` handle used; an anchor with an alias of it as a value, at a new key or in a
merge key (``<<: *a``, ``<<: [*a, *a]``), before it is defined or inside what it names; more
documents (the same twice, an empty one, another seed's, a scalar); a planted name written with a
``\\u`` escape. In a sixth of the cases it writes the same data otherwise instead (a pair moved into
``<<: {k: v}`` or overridden by one, a scalar repeated as an alias, a ``%YAML 1.2`` or ``%TAG``
directive, explicit document markers, a ``\\u`` escape): kvgen must read it as before. Sometimes it
damages the bytes. A sixth of the cases plant a credential-looking literal (each with a marker of its
own): an env value of HF_TOKEN, DB_PASSWORD or PGPASSWORD, ``--api-key=...``,
``--hf-overrides.token=...``, ``{"to\\u006ben": ...}`` JSON, an extraObjects Pod's env or a ConfigMap's
HF_TOKEN, a Secret's stringData inside a ``kind: List``, or a token shaped like hf_..., ghp_...,
AKIA..., sk-..., ``Authorization: Bearer ...`` in a label, an annotation, any string or key, KAITO's
inference config.

The oracles, each on every case of its test:

- ``render`` (EXAMPLES * 3/5 cases): exit 0 or 1, never an internal error (4), invalid output (3) or
  a traceback (specs that would be written to one place, two of one name, are a usage error by
  design: exit 2); accepted output parses as YAML objects (the same to a YAML 1.1 and a 1.2 reader),
  passes tests/fuzz_oracles.py's API-server rules (an apiVersion and a kind, names by kind, label keys
  and values, annotation keys, unique container and volume names, one source a volume, requests within
  limits, int32 replicas; a List's items each) and Gateway API's HTTPRoute rules (the hostnames
  pattern, the path CEL rules, the parentRefs sectionName rules), holds no planted literal, and the
  same data written otherwise renders the same objects.
- strict (EXAMPLES / 5): every accepted object also passes strict kubernetes-validate; a native spec
  kvgen accepts, the Helm chart renders with the same objects; one kvgen refuses, the chart refuses (a
  problem of kvgen.context, or values.schema.json), where the chart reads the same values (not an
  input kvgen refuses as YAML or reads otherwise than YAML 1.1 does, nor one without a name or with an
  empty one: Helm names it after the release) and checks the same (not extraObjects' strict schema check, which the
  chart leaves to the API server by design).
- commands (EXAMPLES / 5): ``validate``, ``explain`` (text, ``-o json``), ``convert`` and ``render -o DIR``
  on the same cases: exit 0 or 1, validate and explain exit as render does, explain's JSON parses, what
  render accepts convert accepts and the converted spec renders the same objects, and ``render -o DIR``
  writes nothing outside DIR, nothing at all when it refuses, and the objects stdout has when it accepts.
- catalogs (EXAMPLES / 8): a catalog file (examples/catalogs/*.yaml, rows of charts/kvgen/files
  under new names, rows overriding built-in ones), mutated as specs are, given with ``--catalog`` (once
  or twice) to render a spec that uses it: exit 0 or 1, the output rules above, and the chart given the
  same files (helm template -f CATALOG -f SPEC) renders the same objects.

The examples render to the same bytes in two processes with different hash seeds.

    pytest -m fuzz                                # the default size, 1,700 (CI)
    KVGEN_FUZZ_EXAMPLES=10000 pytest -m fuzz      # a longer local run
    KVGEN_FUZZ_SEED=7 ...                         # other cases than CI's (each seed its own fixed set)
    KVGEN_FUZZ_TALLY=codes.txt ...                # also write each render case's exit code (a histogram)
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import fuzz_oracles
import helm as chart
import helm_python
import pytest
import yaml
from conftest import ROOT, validate_strictly
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.core.errors import KvgenError
from kvgen.data import catalog as kv_catalog
from kvgen.data import kube as kv_kube
from kvgen.input.source import load_documents
from kvgen.render import templates as render

pytestmark = pytest.mark.fuzz

# the default size: the four property tests take about the time the two of them took at 1,700 before
EXAMPLES = int(os.environ.get("KVGEN_FUZZ_EXAMPLES", "1700"))
INSTANCE = "Standard_NC24ads_A100_v4"  # for KServe resources that name none (ignored otherwise)
SEED_FILES = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "examples" / "seeds").glob("*.yaml"))


def _load(path) -> list[Any]:
    return [d for d in YAML(typ="safe", pure=True).load_all(path.read_text()) if d is not None]


def _dump(docs: list[Any]) -> str:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump_all(docs, buf)
    return buf.getvalue()


SEEDS = {p.relative_to(ROOT).as_posix(): _load(p) for p in SEED_FILES}
SEED_TEXT = {name: _dump(docs) for name, docs in SEEDS.items()}

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


def _paths(node: Any, path: tuple = (), above: frozenset[int] = frozenset()) -> list[tuple]:
    """Every place in ``node``; a node that holds itself (the share mutation can make one: an alias inside
    what its anchor names) is not entered again."""
    out = [path]
    if id(node) in above:
        return out
    above = above | {id(node)}
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k), above)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i), above)
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
_KEY_LINE = re.compile(r"^( *)[^\s#'\"{\[\-][^\n:]*:(?: |$)", re.M)  # a block mapping's key, not a list item's
_DOCUMENT_AT = re.compile(r"^---", re.M)  # where a document after the first starts

DIRECTIVES = [
    "%YAML 1.1",
    "%YAML 1.2",
    "%YAML 1.3",
    "%YAML 2.0",
    "%YAML 1.1\n%YAML 1.1",
    "%YAML 1",
    "%YAML 1.2 # a comment",
    "%YAML 99999999999999999999.1",
    "%TAG ! tag:example.com,2000:",
    "%TAG !e! tag:example.com,2000:app/",
    "%TAG !! tag:example.com,2000:",
    "%TAG !y! tag:yaml.org,2002:",
    "%TAG !e! !",
    "%YAML 1.2\n%TAG !y! tag:yaml.org,2002:",
    "%FOO bar baz",
]
# a %TAG directive and tags that use its handle
TAG_HANDLES = [
    ("%TAG !y! tag:yaml.org,2002:", ["!y!int", "!y!str", "!y!bool", "!y!null", "!y!binary", "!y!set", "!y!merge"]),
    ("%TAG !! tag:example.com,2000:", ["!!int", "!!str", "!!map"]),
    ("%TAG ! tag:yaml.org,2002:", ["!int", "!str", "!seq"]),
    ("%TAG !e! tag:example.com,2000:app/", ["!e!foo", "!e!int", "!e!"]),
]
ANCHORS = ["a", "id001", "x-1"]
ALIAS_KEYS = ["extra", "name", "model", "spec", "kvCacheOffloading", "metadata", "env", "b"]
# the names of env vars and flags the credential layer plants; the escape layer writes them with \\u escapes
_ESCAPABLE = re.compile(
    r"(?<=[:\-\[,] )(?:HF_TOKEN|DB_PASSWORD|PGPASSWORD|VLLM_API_KEY|--api-key|--hf-token|--hf-overrides\.token)"
    r"[^\n,\]}'\"]*"
)


def _directive_mutation(draw, text: str) -> str:
    directive = draw(st.sampled_from(DIRECTIVES))
    where = draw(st.sampled_from(["top", "top", "top-bare", "after-end", "after-start", "end"]))
    if where == "top":
        return f"{directive}\n---\n{text}"
    if where == "top-bare":  # no --- after it
        return f"{directive}\n{text}"
    if where == "end":  # a last document of its own
        return f"{text}...\n{directive}\n---\n{draw(st.sampled_from(['{}', '', 'name: x', text]))}\n"
    starts = [m.start() for m in _DOCUMENT_AT.finditer(text)]
    if not starts:  # one document: a second one, after the directive
        return f"{text}{'...' if where == 'after-end' else '---'}\n{directive}\n---\n{text}"
    i = draw(st.sampled_from(starts))
    return f"{text[:i]}{'...' if where == 'after-end' else '---'}\n{directive}\n{text[i:]}"


def _tag_handle_mutation(draw, text: str) -> str:
    directive, tags = draw(st.sampled_from(TAG_HANDLES))
    at = [m.end() for m in _VALUE_AT.finditer(text)]
    if at:
        i = draw(st.sampled_from(at))
        text = f"{text[:i]}{draw(st.sampled_from(tags))} {text[i:]}"
    return f"{directive}\n---\n{text}"


def _anchor_mutation(draw, text: str) -> str:
    """An anchor on a block collection or a value, then an alias of it: a merge key, a new key, in place
    of a value; or an alias of an anchor never defined."""
    spots = [("block", m.end()) for m in _BLOCK_AT.finditer(text)] + [
        ("value", m.end()) for m in _VALUE_AT.finditer(text)
    ]
    if not spots:
        return text
    kind, i = draw(st.sampled_from(spots))
    name = draw(st.sampled_from(ANCHORS))
    text = f"{text[:i]} &{name}{text[i:]}" if kind == "block" else f"{text[:i]}&{name} {text[i:]}"
    use = draw(st.sampled_from(["merge", "merge", "merge", "merge-list", "key", "key", "value", "undefined"]))
    alias = f"*{name}" if use != "undefined" else "*nowhere"
    if use == "value":
        at = [m.end() for m in _VALUE_AT.finditer(text)]
        j = draw(st.sampled_from(at))
        scalar = _SCALAR.match(text, j)
        assert scalar is not None
        return f"{text[:j]}{alias}{text[j + scalar.end() :]}"
    lines = [(m.start(), m.group(1)) for m in _KEY_LINE.finditer(text)]
    if not lines:
        return text
    j, indent = draw(st.sampled_from(lines))
    if use == "merge-list":
        entry = f"<<: [{alias}, {alias}]"
    elif use == "key":
        entry = f"{draw(st.sampled_from(ALIAS_KEYS))}: {alias}"
    else:
        entry = f"<<: {alias}"
    return f"{text[:j]}{indent}{entry}\n{text[j:]}"


def _documents_mutation(draw, text: str) -> str:
    op = draw(st.sampled_from(["twice", "empty-after", "end-marker", "markers", "other-seed", "scalar", "list"]))
    if op == "twice":
        return f"{text}---\n{text}"
    if op == "empty-after":
        return f"{text}---\n"
    if op == "end-marker":
        return f"{text}...\n"
    if op == "markers":
        return f"---\n{text}...\n"
    if op == "other-seed":
        return f"{text}---\n{SEED_TEXT[draw(st.sampled_from(sorted(SEED_TEXT)))]}"
    if op == "scalar":
        return f"{text}--- just a string\n"
    return f"{text}---\n- a\n- b\n"


def _escape_mutation(draw, text: str) -> str:
    """A planted name or flag written as a double-quoted scalar with a \\u escape (the same string)."""
    found = list(_ESCAPABLE.finditer(text))
    if not found:
        return text
    m = draw(st.sampled_from(found))
    value = m.group()
    k = draw(st.integers(0, min(len(value), 8) - 1))
    quoted = (
        '"' + value[:k].replace("\\", "\\\\") + f"\\u{ord(value[k]):04x}" + value[k + 1 :].replace("\\", "\\\\") + '"'
    )
    return f"{text[: m.start()]}{quoted}{text[m.end() :]}"


def _text_mutation(draw, text: str) -> str:
    op = draw(
        st.sampled_from(
            ["tag", "tag", "tag-empty", "tag-key", "tag-block", "yaml11", "yaml11"]
            + ["directive", "directive", "tag-handle", "anchor", "anchor", "anchor", "documents", "escape"]
        )
    )
    if op == "directive":
        return _directive_mutation(draw, text)
    if op == "tag-handle":
        return _tag_handle_mutation(draw, text)
    if op == "anchor":
        return _anchor_mutation(draw, text)
    if op == "documents":
        return _documents_mutation(draw, text)
    if op == "escape":
        return _escape_mutation(draw, text)
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


# --- credential probes: a literal planted with a marker of its own, never to be seen in accepted output ------

_MARKER_LETTERS = "ABCDEFGHJKMNPRSTUVWXY"
# made-up tokens in well-known shapes (none is a real credential): marker -> literal
SHAPED = {
    "hf": lambda m: f"hf_{m}aB3dE5gH7jK9mN1pQ3sT5vX7z",
    "ghp": lambda m: f"ghp_{m}a1B2c3D4e5F6g7H8i9J0k1L2m3N4",
    "akia": lambda m: f"AKIA{m}ABCDEF27",
    "sk": lambda m: f"sk-proj-{m}Abc123Def456Ghi789Jkl0",
    "bearer": lambda m: f"Authorization: Bearer {m}abcdefghijklmnop12",
}


def _plain(m: str) -> str:  # a credential by the name that holds it only
    return f"s3cr3t-{m.lower()}"


CREDENTIAL_ENV = ["HF_TOKEN", "DB_PASSWORD", "PGPASSWORD", "HUGGING_FACE_HUB_TOKEN", "VLLM_API_KEY", "REDIS_PWD"]
BENIGN_ENV = ["MY_SETTING", "S3_CONFIG", "LOG_LEVEL"]


def _credential_args(token: str) -> list[list[str]]:
    return [
        [f"--api-key={token}"],
        ["--api-key", token],
        [f"--hf-token={token}"],
        [f"--api_key={token}"],
        [f"--hf-overrides.token={token}"],
        ["--hf-overrides.token", token],
        [f'--hf-overrides={{"to\\u006ben": "{token}"}}'],
        [f'--hf-overrides={{"token": "{token}"}}'],
        [f'--model-loader-extra-config={{"aws_secret_access_key": "{token}", "bucket": "b"}}'],
    ]


def _pod(name: str, **container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.37", **container}]},
    }


def _extra_objects_with(draw, token: str, shaped: bool) -> dict[str, Any]:
    name = draw(st.sampled_from(CREDENTIAL_ENV))
    choices = [
        _pod("fuzz-side", env=[{"name": name, "value": token}]),
        _pod("fuzz-side", args=[f"--api-key={token}"]),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fuzz-settings"}, "data": {name: token}},
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "fuzz-s"}, "stringData": {"k": token}}
            ],
        },
        {"apiVersion": "v1", "kind": "secret", "metadata": {"name": "fuzz-s"}, "stringData": {"token": token}},
    ]
    if shaped:  # a token's shape under names that say nothing
        choices.append(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fuzz-settings"}, "data": {"notes": token}}
        )
        choices.append(_pod("fuzz-side", env=[{"name": "MY_SETTING", "value": token}]))
    return draw(st.sampled_from(choices))


def _plant(draw, docs: list) -> tuple[str, str] | None:
    """A credential-looking literal somewhere in the documents: (marker, literal), or None when the place
    drawn is not there."""
    marker = "QZ" + draw(st.text(_MARKER_LETTERS, min_size=6, max_size=6))
    shape = draw(st.sampled_from([*SHAPED, "plain"]))
    token = _plain(marker) if shape == "plain" else SHAPED[shape](marker)
    shaped = shape != "plain"
    native = bool(docs) and isinstance(docs[0], dict) and "apiVersion" not in docs[0]
    paths = _paths(docs)
    place = draw(
        st.sampled_from(
            ["env", "env", "args", "args", "extraObjects", "extraObjects", "metadata", "leaf", "key", "kaito"]
        )
    )
    lists = {
        k: [p for p in paths if p and p[-1] == k and isinstance(_get(docs, p), list)]
        for k in ("env", "args", "extraArgs")
    }
    if place == "env":
        name = draw(st.sampled_from(CREDENTIAL_ENV + (BENIGN_ENV if shaped else [])))
        entry = {"name": name, "value": token}
        if lists["env"]:
            _get(docs, draw(st.sampled_from(lists["env"]))).append(entry)
        elif native:
            vllm = docs[0].setdefault("vllm", {})
            if not isinstance(vllm, dict):
                return None
            vllm["env"] = [entry]
        else:
            return None
    elif place == "args":
        args = draw(st.sampled_from(_credential_args(token)))
        targets = lists["args"] + lists["extraArgs"]
        if targets:
            _get(docs, draw(st.sampled_from(targets))).extend(args)
        elif native:
            vllm = docs[0].setdefault("vllm", {})
            if not isinstance(vllm, dict):
                return None
            vllm["extraArgs"] = args
        else:
            return None
    elif place == "extraObjects":
        if not native:
            return None
        objects = docs[0].get("extraObjects")
        if not isinstance(objects, list):
            objects = docs[0]["extraObjects"] = []
        objects.append(_extra_objects_with(draw, token, shaped))
    elif place == "metadata":  # a shaped token in the pod's annotations or labels (native), any metadata (others)
        if not shaped:
            return None
        field = draw(st.sampled_from(["annotations", "labels"]))
        value = {"example.com/fuzz": token} if field == "annotations" else {"fuzz": token}
        if native:
            pod = docs[0].setdefault("pod", {})
            if not isinstance(pod, dict):
                return None
            pod[field] = {**(pod[field] if isinstance(pod.get(field), dict) else {}), **value}
        else:
            metas = [p for p in paths if p and p[-1] == "metadata" and isinstance(_get(docs, p), dict)]
            if not metas:
                return None
            meta = _get(docs, draw(st.sampled_from(metas)))
            meta[field] = {**(meta.get(field) if isinstance(meta.get(field), dict) else {}), **value}
    elif place == "leaf":  # a shaped token in place of any string, or after it
        if not shaped:
            return None
        leaves = [p for p in paths if p and isinstance(_get(docs, p), str)]
        if not leaves:
            return None
        path = draw(st.sampled_from(leaves))
        _set(docs, path, draw(st.sampled_from([token, f"{_get(docs, path)} {token}"])))
    elif place == "key":  # a shaped token as a key of any mapping
        if not shaped:
            return None
        maps = [p for p in paths if isinstance(_get(docs, p), dict)]
        if not maps:
            return None
        _get(docs, draw(st.sampled_from(maps)))[token] = "x"
    else:  # KAITO's inference config: vLLM's flags as keys
        configs = [p for p in paths if p and p[-1] == "inference_config.yaml" and isinstance(_get(docs, p), str)]
        if not configs:
            return None
        path = draw(st.sampled_from(configs))
        flag = draw(st.sampled_from(["api-key", "hf-token", "api_key"]))
        _set(docs, path, f"{_get(docs, path)}\nvllm:\n  {flag}: {json.dumps(token)}\n")
    return marker, token


def _leaked(plants: tuple[tuple[str, str], ...], text: str) -> list[str]:
    """The planted literals (or their markers) found in ``text``."""
    lower = text.lower()
    return [token for marker, token in plants if token in text or marker.lower() in lower]


# --- the mutations: of the data, then of the text, then of the bytes ------------------------------------------

PATH_NAMES = ["../escape", "a/b", "..", ".", "/tmp/kvgen-fuzz-absolute", "kustomization", "a\\b", "-", "x" * 300, "~"]
# extraObjects: objects of a few kinds (one kvgen has no schema for among them) with names, labels, containers,
# volumes and resources that the API server takes or refuses
EXTRA_NAMES = ["fuzz-extra", "fuzz.extra", "Bad_Name", "UPPER", "1st", "-x", "x.", "a" * 254, "é", "a/b"]
EXTRA_LABELS = [{}, {"app": "x"}, {"a/b/c": "x"}, {"ok": "-bad"}, {"example.com/ok": "v" * 64}, {"Example.com/x": "y"}]
EXTRA_CONTAINERS = [
    [{"name": "c", "image": "busybox:1.37"}],
    [{"name": "c", "image": "busybox:1.37"}, {"name": "c", "image": "busybox:1.37"}],
    [{"name": "C_1", "image": "busybox:1.37"}],
    [{"name": "c", "image": "busybox:1.37", "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}],
    [{"name": "c", "image": "busybox:1.37", "resources": {"requests": {"cpu": "1", "example.com/dev": 1}}}],
    [{"name": "c", "image": "busybox:1.37", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}],
]
EXTRA_VOLUMES = [
    [],
    [{"name": "v", "emptyDir": {}}],
    [{"name": "v"}],
    [{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}],
]


def _extra_object(draw) -> dict[str, Any]:
    meta = {"name": draw(st.sampled_from(EXTRA_NAMES)), "labels": copy.deepcopy(draw(st.sampled_from(EXTRA_LABELS)))}
    pod = {
        "containers": copy.deepcopy(draw(st.sampled_from(EXTRA_CONTAINERS))),
        "volumes": copy.deepcopy(draw(st.sampled_from(EXTRA_VOLUMES))),
    }
    kind = draw(st.sampled_from(["ConfigMap", "Widget", "Pod", "Deployment", "Service", "List"]))
    if kind == "ConfigMap":
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "data": {"a": "b"}}
    if kind == "Widget":  # a custom resource kvgen has no schema for
        return {"apiVersion": "example.com/v1", "kind": kind, "metadata": meta, "spec": {"size": 3}}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": pod}
    if kind == "Service":
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": {"ports": [{"port": 80}]}}
    if kind == "Deployment":
        selector = {"matchLabels": {"fuzz": "x"}}
        template = {"metadata": {"labels": {"fuzz": "x"}}, "spec": pod}
        return {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": meta,
            "spec": {"selector": selector, "template": template},
        }
    inner = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": copy.deepcopy(meta), "data": {"a": "b"}}
    return {"apiVersion": "v1", "kind": "List", "metadata": {"name": "fuzz-list"}, "items": [inner]}


OPS = (
    ["plausible"] * 3
    + ["delete"] * 2
    + ["replace"] * 3
    + ["wrap", "nest", "stringify", "key", "unicode", "number"]
    + ["schema"] * 3
    + ["share", "path-name", "extra-object"]
)


def _mutate(draw, docs: list, count: int) -> list:
    for _ in range(count):
        paths = _paths(docs)[1:]  # never the stream itself
        if not paths:
            docs = [{}]
            continue
        path = draw(st.sampled_from(paths))
        value = _get(docs, path)
        op = draw(st.sampled_from(OPS))
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
        elif op == "share" and isinstance(value, (dict, list)):
            # the same mapping or list at a second place: the dumper writes an anchor and an alias of it (later
            # mutations change both places, as an edit of the anchored text would; a place inside the shared
            # node, through its other place, makes an alias inside what its anchor names)
            others = [p for p in paths if p[: len(path)] != path and path[: len(p)] != p]
            if others:
                _set(docs, draw(st.sampled_from(others)), value)
        elif op == "extra-object":
            doc = docs[path[0]]
            if isinstance(doc, dict) and "apiVersion" not in doc:
                objects = doc.get("extraObjects")
                doc["extraObjects"] = [*(objects if isinstance(objects, list) else []), _extra_object(draw)]
        elif op == "path-name":
            doc = docs[path[0]]
            if isinstance(doc, dict):
                meta = doc.get("metadata")
                where: dict[str, Any] = meta if "apiVersion" in doc and isinstance(meta, dict) else doc
                where["name"] = draw(st.sampled_from(PATH_NAMES))
        if not docs:
            docs = [{}]
    return docs


# the same data written otherwise: a key's pair moved into a merge key (<<: {k: v}) or overridden by one, a
# scalar repeated as an alias of its first occurrence, a %YAML 1.2 or %TAG directive, explicit document markers,
# a string with a \\u escape. kvgen must read each as it reads the text before (the same exit, the same output).
_PAIR_LINE = re.compile(r"^( *)([A-Za-z][-A-Za-z0-9_./]*): ([A-Za-z0-9][-A-Za-z0-9_./]*)$", re.M)
_PLAIN_STRING = re.compile(
    r"(?<=: )[A-Za-z][-A-Za-z0-9_./]*$|(?<=^- )[A-Za-z][-A-Za-z0-9_./]*$|(?<= - )[A-Za-z][-A-Za-z0-9_./]*$", re.M
)
_NOT_STRINGS = {w.lower() for w in YAML11_LITERALS} | {
    "true",
    "false",
    "null",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "nan",
    "inf",
}


_BLOCK_SCALAR = re.compile(r"^( *)(?:- )*(?:[^\n]*: )?[|>][-+0-9]*$", re.M)  # a line a literal or folded scalar follows


def _outside_block_scalars(text: str, found: list[re.Match[str]]) -> list[re.Match[str]]:
    """The matches not inside a block scalar's text (its lines look like YAML, and are a string)."""
    inside: list[tuple[int, int]] = []
    for m in _BLOCK_SCALAR.finditer(text):
        end = m.end()
        for line in re.finditer(r"\n([^\n]*)", text[m.end() :]):
            if line.group(1).strip() and len(line.group(1)) - len(line.group(1).lstrip(" ")) <= len(m.group(1)):
                break
            end = m.end() + line.end()
        inside.append((m.end(), end))
    return [f for f in found if not any(a <= f.start() < b for a, b in inside)]


def _equivalent_mutation(draw, text: str) -> str:
    op = draw(st.sampled_from(["merge", "merge", "override", "alias", "alias", "directive", "markers", "escape"]))
    if op in ("merge", "override"):
        pairs = _outside_block_scalars(text, list(_PAIR_LINE.finditer(text)))
        if not pairs:
            return text
        m = draw(st.sampled_from(pairs))
        indent, key, value = m.groups()
        if op == "merge":  # the pair itself, merged in
            return f"{text[: m.start()]}{indent}<<: {{{key}: {value}}}{text[m.end() :]}"
        other = draw(st.sampled_from(["1", "other", "[1, 2]", "{x: 1}", "null"]))  # overridden by the key written
        return f"{text[: m.start()]}{indent}<<: {{{key}: {other}}}\n{text[m.start() :]}"
    if op == "alias":
        strings: dict[str, list[re.Match[str]]] = {}
        for m in _outside_block_scalars(text, list(_PLAIN_STRING.finditer(text))):
            if m.group().lower() not in _NOT_STRINGS:
                strings.setdefault(m.group(), []).append(m)
        repeated = sorted(v for v, found in strings.items() if len(found) > 1)
        if not repeated:
            return text
        found = strings[draw(st.sampled_from(repeated))]
        first, later = found[0], draw(st.sampled_from(found[1:]))
        name = draw(st.sampled_from(ANCHORS))
        return f"{text[: first.start()]}&{name} {first.group()}{text[first.end() : later.start()]}*{name}{text[later.end() :]}"
    if op == "directive":
        return f"{draw(st.sampled_from(['%YAML 1.2', '%TAG !y! tag:yaml.org,2002:', '%TAG !e! tag:example.com,2000:']))}\n---\n{text}"
    if op == "markers":
        return f"---\n{text}...\n" if not _DOCUMENT_AT.search(text) else f"---\n{text}"
    found = [
        m
        for m in _outside_block_scalars(text, list(_PLAIN_STRING.finditer(text)))
        if m.group().lower() not in _NOT_STRINGS
    ]
    if not found:
        return text
    m = draw(st.sampled_from(found))
    k = draw(st.integers(0, len(m.group()) - 1))
    value = m.group()
    return f'{text[: m.start()]}"{value[:k]}\\u{ord(value[k]):04x}{value[k + 1 :]}"{text[m.end() :]}'


def _uniform(draw, n: int) -> int:
    """0 .. n-1, each as often: Hypothesis's integers() favour the bounds (integers(0, 5) is 0 in two cases of
    five), sampled_from draws evenly. The common choice is 0, where shrinking goes."""
    return draw(st.sampled_from(range(n)))


def _serialize(draw, docs: list) -> tuple[bytes, bytes | None]:
    """The documents' YAML text, mutated: (the input, the text it must read as, or None)."""
    text = _dump(docs)
    layer = _uniform(draw, 12)
    if layer >= 9:  # a quarter: the text's own mutations
        for _ in range(draw(st.sampled_from([1, 1, 2]))):
            text = _text_mutation(draw, text)
    elif layer >= 7:  # a sixth: the same data, written otherwise
        same = _equivalent_mutation(draw, text)
        if same != text:
            return same.encode("utf-8"), text.encode("utf-8")
    data = text.encode("utf-8")
    damage = _uniform(draw, 30)
    if damage == 29 and data:  # cut short
        data = data[: _uniform(draw, len(data))]
    elif damage == 28:  # foreign bytes
        at = _uniform(draw, len(data) + 1)
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data, None


class Case(NamedTuple):
    seed: str  # the file mutated
    data: bytes  # the input
    plants: tuple[tuple[str, str], ...]  # (marker, literal) of each credential-looking literal planted
    same_as: bytes | None = None  # the text this one must read as (the same data written otherwise)

    def __repr__(self) -> str:  # what Hypothesis prints of a failing case
        same = "" if self.same_as is None else f"\n--- the same data as:\n{self.same_as.decode()}"
        plants = [t for _m, t in self.plants]
        return f"Case({self.seed!r}, plants={plants!r}):\n{self.data.decode('utf-8', 'replace')}{same}"


@st.composite
def mutated(draw) -> Case:
    name = draw(st.sampled_from(sorted(SEEDS)))
    docs = copy.deepcopy(SEEDS[name])
    plant = _uniform(draw, 6) == 5
    docs = _mutate(draw, docs, draw(st.sampled_from([0, 0, 1, 1, 2] if plant else [0, 1, 1, 1, 2, 2, 3])))
    plants = []
    if plant:
        found = _plant(draw, docs)
        if found is not None:
            plants.append(found)
    data, same_as = _serialize(draw, docs)
    return Case(name, data, tuple(plants), same_as)


# --- running kvgen, and what every accepted output must be -----------------------------------------------------

_load_output = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# KVGEN_FUZZ_SEED=N draws another set of cases (a campaign beyond CI's), the same on every run with that N
FUZZ_SEED = os.environ.get("KVGEN_FUZZ_SEED")
SETTINGS = settings(
    deadline=None,
    derandomize=FUZZ_SEED is None,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _seeded(test: Any) -> Any:
    """The property test with KVGEN_FUZZ_SEED's seed, when one is given (else derandomized)."""
    return hypothesis_seed(int(FUZZ_SEED))(test) if FUZZ_SEED is not None else test


def _kvgen(*args: str, data: bytes):
    """One CLI run, in this process. A Python warning raised while it runs (one of a library kvgen calls) is
    printed to the user's stderr, even with -q, with a path inside kvgen: none may be."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(app, list(args), input=data)
    shown = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    assert not shown, (
        f"kvgen {args[0]} printed a Python warning: {shown[0].category.__name__}: {shown[0].message}\n"
        f"{data.decode('utf-8', 'replace')}"
    )
    return result


# Specs whose output would land in one place (two of one name on stdout or in one directory, a spec named
# kustomization under -o) are a usage error by design (exit 2; tests/test_cli.py): the documents mutation
# writes a spec twice
SAME_PLACE = re.compile(r"several specs are named .* would all be written to|a spec named .* would overwrite")


def _exits_0_or_1(result, what: str, case: Any) -> None:
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    by_design = result.exit_code == 2 and SAME_PLACE.search(result.stderr) is not None
    assert not crashed and (result.exit_code in (0, 1) or by_design), (
        f"{what}: exit {result.exit_code}\n{result.output}\n{case!r}"
    )
    assert "Traceback" not in result.output and "internal error" not in result.output, f"{what}\n{result.output}"


def _objects(text: str) -> list[Any]:
    return [d for d in yaml.load_all(text, Loader=_load_output) if d is not None]


def _accepted_output(text: str, plants: tuple, what: str = "render") -> list[dict[str, Any]]:
    """The objects of an accepted output, held to the oracles every one is: YAML objects (the same to a
    YAML 1.1 and a 1.2 reader) with a kind and a name, no API-server or HTTPRoute rule broken, no planted
    literal."""
    objects = _objects(text)
    # the same data to a YAML 1.1 reader (PyYAML, as kubectl reads it) and a YAML 1.2 reader (libyaml with
    # ruamel.yaml's YAML 1.2 resolvers, kvgen's reader of its templates' output: a third of ruamel's time)
    assert objects == [d for d in render._load_all()(text) if d is not None], text[:4000]
    assert objects and all(
        isinstance(o, dict) and o.get("kind") and o.get("metadata", {}).get("name") for o in objects
    ), text[:4000]
    broken = fuzz_oracles.output_problems(objects)
    assert not broken, f"{what} accepted it, and rendered what the API server refuses: {broken}"
    assert _leaked(plants, text) == [], f"{what} wrote a planted credential: {_leaked(plants, text)}"
    return objects


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """The same objects, whatever their order."""
    return sorted(json.dumps(o, sort_keys=True) for o in a) == sorted(json.dumps(o, sort_keys=True) for o in b)


@_seeded
@settings(SETTINGS, max_examples=max(EXAMPLES * 3 // 5, 50))
@given(mutated())
def test_mutated_specs_exit_0_or_1_and_accepted_output_is_valid(case):
    result = _kvgen("render", "-", "--instance", INSTANCE, data=case.data)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    if os.environ.get("KVGEN_FUZZ_TALLY"):  # a file: one exit code per case, for a run's histogram
        with open(os.environ["KVGEN_FUZZ_TALLY"], "a") as tally:
            tally.write(f"{'crash' if crashed else result.exit_code}{' planted' if case.plants else ''}\n")
    _exits_0_or_1(result, "render", case)
    if result.exit_code == 0:
        _accepted_output(result.stdout, case.plants)
    if case.same_as is not None:  # the same data written otherwise: read the same
        before = _kvgen("render", "-", "--instance", INSTANCE, data=case.same_as)
        # the same objects (a mapping's keys in another order: a merge key's come after the keys written)
        same = result.exit_code == before.exit_code and _objects(result.stdout) == _objects(before.stdout)
        assert same, (
            f"exit {result.exit_code}, the same data written before the text's change exit {before.exit_code}:\n"
            f"{result.stderr}\n{before.stderr}\n{case!r}"
        )


# --- strict: kubernetes-validate, and the Helm chart, both ways --------------------------------------------------


def _values(data: bytes) -> dict[str, Any] | None:
    """A native spec as Helm reads it (a values file), read as kvgen reads it (YAML 1.2, its tags): None for an
    input that is no one native spec, or that kvgen refuses as YAML (a tag it does not take, a plain scalar
    YAML 1.1 reads otherwise: the chart would be given other values). PyYAML refuses some flow mappings kvgen
    accepts ({0?: null}), and ruamel.yaml's safe loader makes a date of `!!timestamp 2001-12-14`, which kvgen
    keeps as written."""
    try:
        docs = [d.data for d in load_documents(data, "fuzz.yaml")]
    except KvgenError:
        return None
    if len(docs) != 1 or not isinstance(docs[0], dict) or "apiVersion" in docs[0]:
        return None  # KAITO / KServe input: the chart takes native specs only
    return docs[0]


def _kube_version(values: dict[str, Any]) -> str:
    """The Kubernetes version kvgen renders a spec for when given none: its kubeVersion, else 1.33 (the chart is
    rendered for it, as with helm template --kube-version)."""
    version = values.get("kubeVersion")
    return version if isinstance(version, str) and re.fullmatch(r"1\.[0-9]{1,3}", version) else "1.33"


def _chart_refuses(values: dict[str, Any]) -> str | None:
    """Why the chart refuses ``values`` (its problems, or its schema's error), or None when it renders them."""
    try:
        json.dumps(values)
    except (TypeError, ValueError):
        return "no JSON"  # a key no values file can have (a YAML mapping or list as a key)
    try:
        found = chart.problems(values, kube_version=_kube_version(values))
    except helm_python.HelmValuesError as err:
        return str(err)
    except AssertionError as err:  # Helm failed without listing kvgen's problems (a template's own error)
        return f"the chart failed: {err}"
    return "\n".join(map(str, sorted(found, key=str))) or None


def _only_kvgens_schema_check(data: bytes, values: dict[str, Any]) -> bool:
    """Whether kvgen refuses a native spec for extraObjects' strict schema errors only: the one check the chart
    leaves to the API server, by design (Go templates cannot validate a Kubernetes schema;
    kvgen/plan/extra_objects.py, templates/plan/_extraobjects.tpl)."""
    from kvgen.app.compiler import InputErrors, compile_inputs
    from kvgen.data import kube
    from kvgen.input.dialects import Options

    version = _kube_version(values)
    try:
        compile_inputs([("fuzz.yaml", data.decode("utf-8"))], None, Options(INSTANCE))
    except InputErrors as err:
        problems = [p for e in err.errors for p in e.problems]
    else:
        return False
    found_objects = values.get("extraObjects")
    objects: list[Any] = found_objects if isinstance(found_objects, list) else []

    def schema_error(path: tuple, message: str) -> bool:
        if len(path) < 2 or path[0] != "extraObjects" or not isinstance(path[1], int) or path[1] >= len(objects):
            return False
        obj = objects[path[1]]
        try:
            found = kube.validate_object(obj, version)
        except Exception:  # no schema for it, or no object to validate
            return False
        return (tuple(path[2:]), message) in {(tuple(sub), m) for sub, m in found}

    return bool(problems) and all(schema_error(tuple(p.path), p.message) for p in problems)


def _strictly_valid(objects: list[dict[str, Any]]) -> None:
    """Strict validation of every object of a kind there is a schema for; an extraObjects item of a kind
    without one (a CRD kvgen does not vendor, rendered with a warning) is the API server's to judge, and
    its metadata is held to output_problems above. v1 List items each."""
    for obj in objects:
        if obj.get("apiVersion") == "v1" and obj.get("kind") == "List":
            _strictly_valid([item for item in obj.get("items") or [] if isinstance(item, dict)])
            continue
        version = "1.34.0" if obj["kind"] == "ResourceClaimTemplate" else "1.33.0"
        if kv_kube.crd_file(obj["kind"], obj["apiVersion"]) is None and not kv_kube.has_schema(
            obj["apiVersion"], obj["kind"], version
        ):
            continue
        validate_strictly(obj, version)


@_seeded
@settings(SETTINGS, max_examples=max(EXAMPLES // 5, 30))
@given(mutated())
def test_accepted_specs_are_valid_kubernetes_and_the_chart_agrees_both_ways(case):
    """Every object of an accepted spec passes strict kubernetes-validate and the oracles above; the Helm
    chart given a native spec renders the same objects when kvgen accepts it, and refuses it when kvgen does."""
    result = _kvgen("render", "-", "--instance", INSTANCE, data=case.data)
    _exits_0_or_1(result, "render", case)
    values = _values(case.data)
    if result.exit_code != 0:
        # a spec without a name (or an empty one, which Helm's templates read as unset, as its charts read
        # fullnameOverride: ""): kvgen has no release to name it after, Helm names it after the release
        if values is not None and values.get("name") not in (None, "") and not _chart_refuses(values):
            assert _only_kvgens_schema_check(case.data, values), (
                f"kvgen refused it, the chart rendered it:\n{result.stderr}\n{case!r}"
            )
        return
    objects = _accepted_output(result.stdout, case.plants)
    _strictly_valid(objects)
    if values is None:
        return  # KAITO / KServe input
    try:
        rendered = chart.objects(values, kube_version=_kube_version(values))
    except (helm_python.HelmRenderError, helm_python.HelmValuesError) as exc:  # pragma: no cover - a failure
        raise AssertionError(f"kvgen accepted it, the chart refused it: {exc}\n{case!r}") from None
    assert chart.by_identity(rendered) == chart.by_identity(objects), case


# --- every command ---------------------------------------------------------------------------------------------

COMMANDS = ["validate", "explain", "explain-json", "convert", "convert", "render-dir", "render-dir"]


def _render_dir(case: Case, stdout: Any, existing: bool) -> None:
    """render -o DIR: nothing written outside DIR (the working directory, beside DIR, above it), nothing at all
    on a refusal, and on success DIR's files hold the objects stdout has."""
    with tempfile.TemporaryDirectory(prefix="kvgen-fuzz-") as tmp:
        base = Path(tmp)
        (base / "cwd").mkdir()
        out = base / "out"
        if existing:
            out.mkdir()
        with contextlib.chdir(base / "cwd"):
            result = _kvgen("render", "-o", str(out), "-", "--instance", INSTANCE, data=case.data)
        _exits_0_or_1(result, "render -o DIR", case)
        written = sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() or p.is_symlink())
        outside = [p for p in written if not p.startswith("out/")]
        assert outside == [], f"render -o DIR wrote outside DIR: {outside}\n{case!r}"
        if result.exit_code != 0:
            assert written == [] and out.exists() == existing, f"render -o DIR refused, and wrote {written}\n{case!r}"
            return
        assert stdout.exit_code == 0, f"render -o DIR accepted what render refused:\n{stdout.stderr}\n{case!r}"
        files = [base / p for p in written if p.endswith(".yaml") and not p.endswith("/kustomization.yaml")]
        text = "".join(f.read_text(encoding="utf-8") for f in files)
        for f in files:
            assert not f.is_symlink()
        assert _same(_objects(text), _objects(stdout.stdout)), (
            f"render -o DIR wrote other objects than render\n{case!r}"
        )
        assert _leaked(case.plants, text) == []
        for p in written:
            if p.endswith("kustomization.yaml"):
                assert isinstance(yaml.safe_load((base / p).read_text(encoding="utf-8")), dict)
        json.loads((out / ".kvgen-manifest.json").read_text(encoding="utf-8"))


@_seeded
@settings(SETTINGS, max_examples=max(EXAMPLES // 5, 30))
@given(mutated(), st.sampled_from(COMMANDS), st.booleans())
def test_every_command_exits_0_or_1_and_agrees_with_render(case, command, existing_dir):
    """validate, explain (text and JSON), convert and render -o DIR on mutated inputs: exit 0 or 1, as render
    does where they check the same, and what they print or write holds to render's oracles."""
    rendered = _kvgen("render", "-", "--instance", INSTANCE, data=case.data)
    _exits_0_or_1(rendered, "render", case)
    if rendered.exit_code == 2:
        return  # specs of one name: nothing to compare
    if rendered.exit_code == 0:
        _accepted_output(rendered.stdout, case.plants)
    if command == "render-dir":
        _render_dir(case, rendered, existing_dir)
        return
    if command == "convert":
        result = _kvgen("convert", "-", "--instance", INSTANCE, data=case.data)
        _exits_0_or_1(result, "convert", case)
        if rendered.exit_code != 0:
            return
        assert result.exit_code == 0, f"render accepted it, convert refused it:\n{result.stderr}\n{case!r}"
        assert _leaked(case.plants, result.stdout) == []
        again = _kvgen("render", "-", "--instance", INSTANCE, data=result.stdout.encode("utf-8"))
        _exits_0_or_1(again, "render of convert's output", case)
        assert again.exit_code == 0, f"convert's output is refused:\n{again.stderr}\n{result.stdout}\n{case!r}"
        assert _same(_objects(again.stdout), _objects(rendered.stdout)), (
            f"convert's output renders other objects:\n{result.stdout}\n{case!r}"
        )
        return
    args = {"validate": ["validate"], "explain": ["explain"], "explain-json": ["explain", "-o", "json"]}[command]
    result = _kvgen(*args, "-", "--instance", INSTANCE, data=case.data)
    _exits_0_or_1(result, " ".join(args), case)
    assert result.exit_code == rendered.exit_code, (
        f"{' '.join(args)} exit {result.exit_code}, render exit {rendered.exit_code}:\n{result.output}\n{rendered.output}\n{case!r}"
    )
    if result.exit_code == 0:
        assert _leaked(case.plants, result.stdout) == [], f"{' '.join(args)} printed a planted credential"
        if command == "explain-json":
            json.loads(result.stdout)


# --- --catalog FILE ----------------------------------------------------------------------------------------------

_FILES = ROOT / "charts" / "kvgen" / "files"


# rows of charts/kvgen/files copied under new names (a model that fits the node: the spec is accepted unmutated)
CATALOG_ROWS = [
    ("Qwen/Qwen2.5-1.5B", "BM.GPU.H100.8"),
    ("Qwen/Qwen2-7B-Instruct", INSTANCE),
    ("Qwen/Qwen3-32B", INSTANCE),
    ("Qwen/Qwen2.5-1.5B", "a3-highgpu-8g"),
]


def _catalogs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(catalog file, a spec that uses it): the examples' catalog files; rows of charts/kvgen/files under new
    names; rows that override a few fields of built-in ones."""
    out = []
    spec_of = {"catalogs/onprem.yaml": "onprem-dgx-a100.yaml"}
    for path in sorted((ROOT / "examples" / "catalogs").glob("*.yaml")):
        (doc,) = _load(path)
        example = ROOT / "examples" / spec_of.get(path.relative_to(ROOT / "examples").as_posix(), "")
        if example.is_file():
            (spec,) = _load(example)
            spec.pop("catalog", None)
        else:
            models, instances = doc["catalog"].get("models") or {}, doc["catalog"].get("instances") or {}
            spec = {"name": "fuzz-catalog", "model": {"id": next(iter(models), "meta-llama/Llama-3.1-8B-Instruct")}}
            spec["instance"] = {"type": next(iter(instances), INSTANCE)}
        out.append((doc, spec))
    (models,) = _load(_FILES / "models.yaml")
    (instances,) = _load(_FILES / "instances.yaml")
    for k, (model, itype) in enumerate(CATALOG_ROWS):
        new_model, new_type = f"acme/fuzz-{model.split('/')[-1].lower()}", f"fuzz-{itype.lower().replace('_', '-')}"
        doc = {
            "catalog": {
                "models": {new_model: copy.deepcopy(models["models"][model])},
                "instances": {new_type: copy.deepcopy(instances["instances"][itype])},
            }
        }
        out.append((doc, {"name": f"fuzz-catalog-{k}", "model": {"id": new_model}, "instance": {"type": new_type}}))
    out.append(
        (
            {
                "catalog": {
                    "models": {"meta-llama/Llama-3.1-8B-Instruct": {"maxModelLen": 8192, "weights": "16Gi"}},
                    "instances": {INSTANCE: {"memory": "200Gi", "ephemeralStorage": "256Gi"}},
                }
            },
            {
                "name": "fuzz-override",
                "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
                "instance": {"type": INSTANCE},
            },
        )
    )
    return out


CATALOGS = _catalogs()


class CatalogCase(NamedTuple):
    catalogs: tuple[bytes, ...]  # the --catalog files, in order
    spec: bytes

    def __repr__(self) -> str:
        files = "".join(f"--- --catalog file {i}:\n{c.decode('utf-8', 'replace')}" for i, c in enumerate(self.catalogs))
        return f"CatalogCase:\n{files}--- spec:\n{self.spec.decode('utf-8', 'replace')}"


@st.composite
def catalog_cases(draw) -> CatalogCase:
    k = _uniform(draw, len(CATALOGS))
    doc, spec = copy.deepcopy(CATALOGS[k])
    if _uniform(draw, 5) == 4:  # a spec another catalog is for
        spec = copy.deepcopy(CATALOGS[_uniform(draw, len(CATALOGS))][1])
    docs = _mutate(draw, [doc], draw(st.sampled_from([0, 1, 1, 1, 2, 3])))
    files = [_serialize(draw, docs)[0]]
    if _uniform(draw, 5) == 4:  # a second file: the same rows, or another catalog's, unmutated
        files.append(_dump([copy.deepcopy(draw(st.sampled_from(CATALOGS))[0])]).encode("utf-8"))
    spec_docs = _mutate(draw, [spec], draw(st.sampled_from([0, 0, 0, 1])))
    return CatalogCase(tuple(files), _dump(spec_docs).encode("utf-8"))


def _helm_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Values files given in order (helm template -f A -f B): Helm's mergeMaps, B over A, maps key by key."""
    out = dict(a)
    for key, value in b.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _helm_merge(out[key], value)
        else:
            out[key] = value
    return out


@contextlib.contextmanager
def _catalog_rows_restored():
    """--catalog rows are merged into the process's catalog (a CLI run is one process): undone after each run."""
    saved = {k: dict(v) for k, v in kv_catalog._overlay.items()}
    try:
        yield
    finally:
        kv_catalog._overlay.clear()
        kv_catalog._overlay.update(saved)
        kv_catalog._merged.clear()


@_seeded
@settings(SETTINGS, max_examples=max(EXAMPLES // 8, 30))
@given(catalog_cases())
def test_mutated_catalog_files_exit_0_or_1_and_the_chart_renders_the_same(case):
    with tempfile.TemporaryDirectory(prefix="kvgen-fuzz-") as tmp:
        args = []
        for i, text in enumerate(case.catalogs):
            (Path(tmp) / f"catalog-{i}.yaml").write_bytes(text)
            args += ["--catalog", str(Path(tmp) / f"catalog-{i}.yaml")]
        with _catalog_rows_restored():
            result = _kvgen("render", *args, "-", data=case.spec)
    _exits_0_or_1(result, "render --catalog", case)
    if result.exit_code != 0:
        return
    objects = _accepted_output(result.stdout, (), "render --catalog")
    _strictly_valid(objects)
    values: dict[str, Any] = {}
    for text in (*case.catalogs, case.spec):
        file_values = _values(text)
        assert file_values is not None, case  # kvgen read each as one mapping
        values = _helm_merge(values, file_values)
    try:
        rendered = chart.objects(values, kube_version=_kube_version(values))
    except (helm_python.HelmRenderError, helm_python.HelmValuesError) as exc:  # pragma: no cover - a failure
        raise AssertionError(f"kvgen accepted it, the chart refused it: {exc}\n{case!r}") from None
    assert chart.by_identity(rendered) == chart.by_identity(objects), case


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
