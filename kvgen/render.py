"""Lay the plan out as Kubernetes objects with the Jinja2 templates, and emit YAML.

Templates emit every value as JSON (valid YAML), so no value can break the document's
structure. The result is parsed, checked against the Kubernetes schemas, and written back
as block YAML with ruamel.yaml: keys in template order, documents in a fixed order, so the
same spec always gives the same bytes.
"""

from __future__ import annotations

import io
import json
import re
from functools import cache
from typing import Any

import jinja2
from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from kvgen import kube, paths
from kvgen.errors import OutputInvalidError

# Document order of the output.
TEMPLATES = (
    "configmap-lmcache-launcher.yaml.j2",
    "resourceclaimtemplate.yaml.j2",
    "service.yaml.j2",
    "service-headless.yaml.j2",
    "deployment.yaml.j2",
    "statefulset.yaml.j2",
)


# Characters a YAML stream must not hold raw: ones its reader refuses (DEL, C1 controls), and ones
# it reads as line breaks or a byte order mark (NEL, U+2028, U+2029, U+FEFF). JSON escapes only
# those below 0x20, so the rest is escaped here; \uXXXX loads back as the same value.
_NOT_YAML = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _json(value: Any) -> str:
    return _NOT_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["json"] = _json
    return env


def objects(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """The Kubernetes objects of one plan context, in document order."""
    loader = YAML(typ="safe", pure=True)
    out = []
    for name in TEMPLATES:
        text = environment().get_template(name).render(c=ctx)
        out += [doc for doc in loader.load_all(text) if doc]
    return out


# The API server refuses a request body, and etcd an object, above 1.5 MiB (etcd's
# --max-request-bytes default, which Kubernetes documents as the object size limit).
MAX_OBJECT_BYTES = 1536 * 1024


def oversized(objs: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(kind/name, bytes) of every object whose JSON is larger than MAX_OBJECT_BYTES."""
    out = []
    for obj in objs:
        size = len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if size > MAX_OBJECT_BYTES:
            out.append((f"{obj['kind']}/{obj['metadata']['name']}", size))
    return out


def check(objs: list[dict[str, Any]], k8s_version: str) -> None:
    """Raise OutputInvalidError listing every schema error of every object."""
    messages = []
    for obj in objs:
        for path, message in kube.validate_object(obj, k8s_version):
            where = ".".join(map(str, path)) or "(object)"
            messages.append(f"{obj['kind']}/{obj['metadata']['name']}: {where}: {message}")
    if messages:
        raise OutputInvalidError(messages)


def _literal_blocks(node: Any) -> Any:
    """Multi-line strings (the launcher script) as readable `|` blocks, when a block can hold
    them as they are."""
    if isinstance(node, dict):
        return {k: _literal_blocks(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_literal_blocks(v) for v in node]
    if isinstance(node, str) and "\n" in node and not _NOT_YAML.search(node.replace("\n", "").replace("\t", "")):
        return LiteralScalarString(node)  # not for other characters: a block holds them raw, a quoted string escaped
    return node


def to_yaml(objs: list[dict[str, Any]]) -> str:
    dumper = YAML(typ="rt")
    dumper.default_flow_style = False
    dumper.width = 4096  # never fold a long argument (a --kv-transfer-config JSON) across lines
    dumper.indent(mapping=2, sequence=4, offset=2)
    dumper.explicit_start = True
    buf = io.StringIO()
    dumper.dump_all([_literal_blocks(o) for o in objs], buf)
    return buf.getvalue()
