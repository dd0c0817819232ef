"""Lay the plan out as Kubernetes objects with the Jinja2 templates, and emit YAML.

Templates emit every value as JSON (valid YAML), so no value can break the document's
structure. The result is parsed, checked against the Kubernetes schemas, and written back
as block YAML in ruamel.yaml's round-trip style: keys in template order, documents in a fixed
order, so the same spec always gives the same bytes.

Speed: the templates' output is parsed by libyaml (PyYAML's C loader, resolving plain scalars
with ruamel.yaml's YAML 1.2 rules, as before), the templates are compiled once per content
(Jinja's bytecode cache in kvgen.core.diskcache's directory), and the YAML is written by
kvgen.render.emitter, which leaves every scalar's text to ruamel.yaml.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from kvgen.core import diskcache, paths
from kvgen.core.errors import KvgenError, OutputInvalidError
from kvgen.data import kube
from kvgen.render.emitter import Emitter

# Document order of the output.
TEMPLATES = (
    "serviceaccount.yaml.j2",
    "configmap-lmcache-launcher.yaml.j2",
    "resourceclaimtemplate.yaml.j2",
    "service.yaml.j2",
    "service-headless.yaml.j2",
    "deployment.yaml.j2",
    "statefulset.yaml.j2",
    "leaderworkerset.yaml.j2",
    "poddisruptionbudget.yaml.j2",
    "podmonitor.yaml.j2",
    "servicemonitor.yaml.j2",
    "prometheusrule.yaml.j2",
    "configmap-dashboard.yaml.j2",
    "scaledobject.yaml.j2",
    "horizontalpodautoscaler.yaml.j2",
    # routing.mode gateway: the Endpoint Picker, its InferencePool and the HTTPRoute
    # a decode server in gateway mode: its routing sidecar's ServiceAccount, Role and RoleBinding
    "routing-sidecar-serviceaccount.yaml.j2",
    "routing-sidecar-role.yaml.j2",
    "routing-sidecar-rolebinding.yaml.j2",
    "picker-serviceaccount.yaml.j2",
    "picker-role.yaml.j2",
    "picker-rolebinding.yaml.j2",
    "picker-configmap.yaml.j2",
    "picker-service.yaml.j2",
    "picker-deployment.yaml.j2",
    "picker-destinationrule.yaml.j2",  # provider istio
    "inferencepool.yaml.j2",
    "healthcheckpolicy.yaml.j2",  # provider gke
    "gcpbackendpolicy.yaml.j2",  # provider gke
    "httproute.yaml.j2",
    "extraobjects.yaml.j2",  # spec extraObjects, verbatim, last
)


# Characters a YAML stream must not hold raw: ones its reader refuses (DEL, C1 controls), and ones
# it reads as line breaks or a byte order mark (NEL, U+2028, U+2029, U+FEFF). JSON escapes only
# those below 0x20, so the rest is escaped here; \uXXXX loads back as the same value. Written as the
# characters refused (everything but \x20-\x7e, \xa0-\u2027, \u202a-\ud7ff, \ue000-\ufefe, \uff00-\ufffd and
# \U00010000-\U0010ffff): the same class, which Python's re compiles in a tenth of the time (~1 ms, not ~9,
# at every start).
_NOT_YAML = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _json(value: Any) -> str:
    return _NOT_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def _bytecode_cache() -> Any:
    """Jinja's own cache of compiled templates (keyed by each template's source checksum), or None."""
    import jinja2

    base = diskcache.directory()
    if base is None:
        return None
    directory = base / "jinja"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(directory))


@cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,  # the templates do not change during a run: no stat of each one per spec
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["json"] = _json
    return env


class _NotExact(KvgenError):
    """Text on which PyYAML's constructors could differ from ruamel.yaml's: ruamel reads it."""


_TAG = "tag:yaml.org,2002:"


@cache
def _load_all() -> Any:
    """A load_all for the templates' output, giving what ruamel.yaml's safe loader gives.

    libyaml (PyYAML's C parser and composer) resolves plain scalars with ruamel.yaml's own
    YAML 1.2 rules (true/false, null, ints, floats; never yes/no/on/off); the nodes become
    dicts, lists and strings directly, and the other scalars go through PyYAML's constructors.
    Anything those could read differently from ruamel.yaml (an int with a leading zero, a
    timestamp, a merge key, a duplicate key, another tag) is read by ruamel.yaml instead,
    as is everything when PyYAML has no libyaml."""
    exact = _ruamel_load_all()
    try:
        import yaml
        from ruamel.yaml.resolver import implicit_resolvers
    except ImportError:
        return exact
    if not getattr(yaml, "__with_libyaml__", False):
        return exact

    defaults = {
        yaml.ScalarNode: yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG,
        yaml.SequenceNode: yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG,
        yaml.MappingNode: yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    }

    from kvgen.core.plain_tags import remember

    plain_tags: dict[str, str] = {}  # a plain scalar's tag depends on its text alone: the same keys recur

    class Loader(yaml.CSafeLoader):
        yaml_implicit_resolvers: dict[Any, Any] = {}

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is yaml.ScalarNode and implicit[0]:  # a plain scalar: the resolvers decide
                tag = plain_tags.get(value)
                return remember(plain_tags, value, super().resolve(kind, value, implicit)) if tag is None else tag
            return defaults[kind]  # what BaseResolver.resolve returns for the rest (no path resolvers here)

    for versions, tag, regexp, first in implicit_resolvers:
        if (1, 2) in versions:
            Loader.add_implicit_resolver(tag, regexp, first)

    def integer(loader: Any, node: Any) -> int:
        digits = node.value.replace("_", "").lstrip("+-")
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            raise _NotExact  # YAML 1.2 (ruamel) reads 017 as 17, PyYAML as octal
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    scalars = {
        _TAG + "int": integer,
        _TAG + "float": yaml.SafeLoader.construct_yaml_float,
        _TAG + "bool": yaml.SafeLoader.construct_yaml_bool,
        _TAG + "null": yaml.SafeLoader.construct_yaml_null,
    }
    str_tag, map_tag, seq_tag = _TAG + "str", _TAG + "map", _TAG + "seq"

    def build(node: Any, loader: Any) -> Any:
        tag = node.tag
        if tag == str_tag:
            return node.value
        if tag == map_tag:
            out = {build(k, loader): build(v, loader) for k, v in node.value}
            if len(out) != len(node.value):
                raise _NotExact  # a duplicate key: ruamel refuses it
            return out
        if tag == seq_tag:
            return [build(v, loader) for v in node.value]
        construct = scalars.get(tag)
        if construct is None:
            raise _NotExact  # a timestamp, a merge key, a binary, a set, a custom tag...
        return construct(loader, node)

    def load_all(text: str) -> list[Any]:
        loader = Loader(text)
        try:
            docs = []
            while loader.check_node():
                docs.append(build(loader.get_node(), loader))
            return docs
        except (_NotExact, yaml.YAMLError, ValueError, TypeError, RecursionError):
            return list(exact(text))
        finally:
            loader.dispose()

    return load_all


SMALL_RUN = 2  # specs read by ruamel.yaml's own C loader before libyaml's faster one is imported


@cache
def _ruamel_load_all() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load_all


_rendered = 0


def objects(ctx: Mapping[str, object]) -> list[dict[str, Any]]:
    """The Kubernetes objects of one plan context, in document order.

    The first SMALL_RUN specs of a process are read by ruamel.yaml's safe loader, already
    imported for the spec, the rest by the faster ``_load_all`` (importing PyYAML costs more
    than it saves on one or two specs); both give the same objects."""
    global _rendered
    _rendered += 1
    load_all = _load_all() if _rendered > SMALL_RUN else _ruamel_load_all()
    env = environment()
    out = []
    for name in TEMPLATES:
        text = env.get_template(name).render(c=ctx)
        out += [doc for doc in load_all(text) if doc]
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
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(node, dict):
        return {k: _literal_blocks(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_literal_blocks(v) for v in node]
    if isinstance(node, str) and "\n" in node and not _NOT_YAML.search(node.replace("\n", "").replace("\t", "")):
        return LiteralScalarString(node)  # not for other characters: a block holds them raw, a quoted string escaped
    return node


# kvgen's output style; also part of the key of the emitter's memo on disk
STYLE = {"width": 4096, "mapping": 2, "sequence": 4, "offset": 2}


@cache
def _ruamel_dumper(explicit_start: bool) -> Any:
    """The reference: ruamel.yaml's round-trip dumper in kvgen's output style."""
    from ruamel.yaml import YAML

    from kvgen.core.plain_tags import for_yaml11_readers

    dumper = YAML(typ="rt")
    for_yaml11_readers(dumper)  # strings that YAML 1.1 reads otherwise (on, yes, 010) quoted; floats 1.0e+20
    dumper.default_flow_style = False
    dumper.width = STYLE["width"]  # never fold a long argument (a --kv-transfer-config JSON) across lines
    dumper.indent(mapping=STYLE["mapping"], sequence=STYLE["sequence"], offset=STYLE["offset"])
    dumper.explicit_start = explicit_start
    return dumper


def ruamel_yaml(objs: list[Any], explicit_start: bool = True) -> str:
    """The documents written by ruamel.yaml itself (the reference for kvgen.render.emitter)."""
    buf = io.StringIO()
    _ruamel_dumper(explicit_start).dump_all([_literal_blocks(o) for o in objs], buf)
    return buf.getvalue()


def _memo_sources() -> tuple[bytes, ...]:
    import ruamel.yaml

    return (b"emitter-memo 3", ruamel.yaml.__version__.encode(), json.dumps(STYLE, sort_keys=True).encode())


@cache
def _emitter() -> Emitter:
    """The emitter, with what ruamel.yaml said about scalars in earlier runs (kvgen.core.diskcache;
    keyed by ruamel.yaml's version and the style), saved again at exit when it learned more."""
    import atexit

    emitter = Emitter(lambda doc: ruamel_yaml([doc], explicit_start=False))
    stored = diskcache.read("emitter", _memo_sources())
    if stored is not None:
        emitter.load(stored)

    def save() -> None:
        if emitter.unsaved:
            diskcache.write("emitter", _memo_sources(), emitter.export())

    atexit.register(save)
    return emitter


def to_yaml(objs: list[dict[str, Any]]) -> str:
    fast = _emitter().dump_all(objs)
    return fast if fast is not None else ruamel_yaml(objs)
