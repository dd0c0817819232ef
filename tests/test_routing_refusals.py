"""What Gateway API's HTTPRoute refuses in routing.gateway (issue 33, 2-4) is refused by kvgen and by the
chart alike, at its spec path, instead of being rendered (a bad hostname was exit 3, "a kvgen bug", and
the chart rendered it; paths and parentRefs that the CRD's CEL rules refuse were rendered by both).
The rules are Gateway API v1.5.1's (files/crds/sources.yaml): the Hostname type's pattern and maxLength
as vendored, and the CEL rules (x-kubernetes-validations, which the vendored schema leaves out) as
UPSTREAM_CEL quotes them."""

from __future__ import annotations

import copy
import itertools
import json
import re
from typing import Any

import helm
import pytest
from conftest import ROOT, compile_spec, problem_set, spec
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.data import kube
from kvgen.plan import routing

GATEWAY: dict[str, Any] = {"mode": "gateway", "gateway": {"parentRefs": [{"name": "inference-gateway"}]}}

# Gateway API v1.5.1, config/crd/standard/gateway.networking.k8s.io_httproutes.yaml (sha256 682203b1...,
# as files/crds/sources.yaml pins it), version v1: (message, rule) of the x-kubernetes-validations of
# spec.rules[].matches[].path and of spec.parentRefs, verbatim.
UPSTREAM_PATH_CEL = [
    (
        "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true",
    ),
    (
        "must not contain '//' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('//') : true",
    ),
    (
        "must not contain '/./' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('/./') : true",
    ),
    (
        "must not contain '/../' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('/../') : true",
    ),
    (
        "must not contain '%2f' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('%2f') : true",
    ),
    (
        "must not contain '%2F' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('%2F') : true",
    ),
    (
        "must not contain '#' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('#') : true",
    ),
    (
        "must not end with '/..' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.endsWith('/..') : true",
    ),
    (
        "must not end with '/.' when type one of ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? !self.value.endsWith('/.') : true",
    ),
    (
        "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
        "self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'",
    ),
    (
        "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) "
        "for types ['Exact', 'PathPrefix']",
        "(self.type in ['Exact','PathPrefix']) ? "
        'self.value.matches(r"""^(?:[-A-Za-z0-9/._~!$&\'()*+,;=:@]|[%][0-9a-fA-F]{2})+$""") : true',
    ),
]
UPSTREAM_PARENT_REFS_CEL = [
    (
        "sectionName must be specified when parentRefs includes 2 or more references to the same parent",
        "self.all(p1, self.all(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && "
        "(((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == "
        "'')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) ? "
        "((!has(p1.sectionName) || p1.sectionName == '') == (!has(p2.sectionName) || p2.sectionName == '')) : "
        "true))",
    ),
    (
        "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
        "self.all(p1, self.exists_one(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && "
        "(((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == "
        "'')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) && "
        "(((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) || p2.sectionName == '')) || "
        "(has(p1.sectionName) && has(p2.sectionName) && p1.sectionName == p2.sectionName))))",
    ),
]


def routed(**gateway: Any) -> dict[str, Any]:
    g = copy.deepcopy(GATEWAY)
    g["gateway"].update(copy.deepcopy(gateway))
    return spec(replicas=3, routing=g)


def both_faces(values: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    ours = problem_set(values)
    assert helm.problems(values) == ours
    return ours


def vendored_route_schema() -> dict[str, Any]:
    path = kube.crd_file("HTTPRoute", "gateway.networking.k8s.io/v1")
    assert path is not None
    return json.loads(path.read_text(encoding="utf-8"))["properties"]["spec"]["properties"]


def route_of(values: dict[str, Any]) -> dict[str, Any]:
    (route,) = [o for o in compile_spec(values).objects if o["kind"] == "HTTPRoute"]
    assert kube.validate_object(route, "1.33") == []
    return route


# ----------------------------------------------------------------------------- hostnames (2)


def test_the_hostname_rule_is_the_vendored_crds():
    items = vendored_route_schema()["hostnames"]["items"]
    assert (items["pattern"], items["maxLength"]) == (routing.HOSTNAME_PATTERN, routing.HOSTNAME_MAX_LENGTH)
    chart = (ROOT / "charts" / "kvgen" / "templates" / "plan" / "_routing.tpl").read_text(encoding="utf-8")
    assert json.dumps(routing.HOSTNAME_PATTERN) in chart  # the chart's copy, as a Go string literal
    assert f"gt (len $h) {routing.HOSTNAME_MAX_LENGTH}" in chart


BAD_HOSTNAMES = {
    "two-wildcards": "*.*.example.com",
    "wildcard-inside": "llm.*.example.com",
    "bare-wildcard": "*",
    "uppercase": "LLM.example.com",
    "trailing-dot": "llm.example.com.",
    "leading-hyphen": "-llm.example.com",
    "underscore": "llm_1.example.com",
    "port": "llm.example.com:8080",
    "scheme": "https://llm.example.com",
    "non-ascii": "lläm.example.com",
    "empty": "",
    "final-newline": "llm.example.com\n",
    "254-characters": ".".join(["a" * 63] * 3 + ["a" * 62]),
}


@pytest.mark.heavy
def test_hostnames_the_httproute_refuses_are_refused_on_both_faces():
    hosts = ["ok.example.com", *BAD_HOSTNAMES.values()]
    found = both_faces(routed(hostnames=hosts))
    assert sorted(p for p, _m, _h in found) == sorted(f"routing.gateway.hostnames[{i}]" for i in range(1, len(hosts)))
    long = {p for p, m, _h in found if "longer than 253 characters" in m}
    assert long == {f"routing.gateway.hostnames[{hosts.index(BAD_HOSTNAMES['254-characters'])}]"}


GOOD_HOSTNAMES = [
    "llm.example.com",
    "*.example.com",
    "localhost",
    "a",
    "0-a.b-0",
    ".".join(["a" * 63] * 3 + ["a" * 61]),
]


def test_hostnames_the_httproute_takes_are_rendered():
    assert both_faces(routed(hostnames=GOOD_HOSTNAMES)) == set()
    assert route_of(routed(hostnames=GOOD_HOSTNAMES))["spec"]["hostnames"] == GOOD_HOSTNAMES


def test_a_bad_hostname_is_bad_input_at_its_line_not_a_kvgen_bug(tmp_path):
    """It was exit 3: the rendered HTTPRoute failed the CRD's schema."""
    f = tmp_path / "spec.yaml"
    text = (ROOT / "examples" / "routing-gateway.yaml").read_text(encoding="utf-8")
    assert "hostnames" not in text and "  gateway:\n" in text
    f.write_text(text.replace("  gateway:\n", "  gateway:\n    hostnames:\n      - LLM.example.com\n", 1))
    line = f.read_text().splitlines().index("      - LLM.example.com") + 1
    result = CliRunner().invoke(app, ["render", str(f)])
    assert result.exit_code == 1, result.output
    assert f"{f}:{line}:" in result.stderr and "routing.gateway.hostnames[0]" in result.stderr
    assert "nothing was written" in result.stderr


# ----------------------------------------------------------------------------- paths (3)


def _parsed(rule: str) -> tuple[str, str]:
    """A path rule's CEL text as (test, operand), the form routing.PATH_RULES holds."""
    for pattern, test in (
        (r"self\.value\.startsWith\('(.*)'\)", "startsWith"),
        (r"!self\.value\.contains\('(.*)'\)", "notContains"),
        (r"!self\.value\.endsWith\('(.*)'\)", "notEndsWith"),
        (r'self\.value\.matches\(r"""(.*)"""\)', "matches"),
    ):
        found = re.fullmatch(r"\(self\.type in \['Exact','PathPrefix'\]\) \? " + pattern + " : true", rule)
        if found:
            return test, found.group(1)
    raise AssertionError(rule)


def test_the_path_rules_are_the_crds_cel_rules_with_their_messages():
    value_rules = [(m, r) for m, r in UPSTREAM_PATH_CEL if "self.value" in r]  # the type's rule: kvgen's PathPrefix
    assert [(_parsed(r), m) for m, r in value_rules] == [((t, x), m) for t, x, m in routing.PATH_RULES]


BAD_PATHS = {
    "double-slash": ("/v1//chat", "must not contain '//'"),
    "dot-segment": ("/v1/./chat", "must not contain '/./'"),
    "dot-dot-segment": ("/v1/../chat", "must not contain '/../'"),
    "encoded-slash": ("/v1%2fchat", "must not contain '%2f'"),
    "encoded-slash-upper": ("/v1%2Fchat", "must not contain '%2F'"),
    "fragment": ("/v1#chat", "must not contain '#'"),
    "trailing-dot-dot": ("/v1/..", "must not end with '/..'"),
    "trailing-dot": ("/v1/.", "must not end with '/.'"),
    "only-a-dot": ("/.", "must not end with '/.'"),
    "query": ("/v1?x=1", "must only contain valid characters"),
    "non-ascii": ("/vé", "must only contain valid characters"),
    "bad-escape": ("/v1%zz", "must only contain valid characters"),
    "quote": ('/v1"', "must only contain valid characters"),
    "angle-bracket": ("/v1<x>", "must only contain valid characters"),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(BAD_PATHS))
def test_a_path_the_httproutes_cel_rules_refuse_is_refused_on_both_faces_in_the_crds_words(case):
    path, crd_words = BAD_PATHS[case]
    found = both_faces(routed(pathPrefix=path))
    assert {p for p, _m, _h in found} == {"routing.gateway.pathPrefix"}
    assert any(crd_words in m for _p, m, _h in found), found
    # every message quotes a rule the CRD has, whole
    crd = {m for m, _r in UPSTREAM_PATH_CEL}
    assert all(m.split(" says: ", 1)[1] in crd for _p, m, _h in found), found


def test_a_path_breaking_several_rules_gets_each_rules_message():
    found = both_faces(routed(pathPrefix="/a//b/./c/../d%2f#/."))
    assert len(found) == 7  # //, /./, /../, %2f, #, ends with /., and # is no path character


@pytest.mark.heavy
@pytest.mark.parametrize("path", ["/", "/v1", "/v1/chat/", "/a%20b", "/a%2e", "/a/.../b", "/..a/b.", "/~u/@x:1;p=2"])
def test_a_path_the_httproute_takes_is_rendered(path):
    assert both_faces(routed(pathPrefix=path)) == set()
    assert route_of(routed(pathPrefix=path))["spec"]["rules"][0]["matches"][0]["path"]["value"] == path


# ----------------------------------------------------------------------------- parentRefs (4)


def _cel_parent_refs(refs: list[dict[str, Any]]) -> list[str]:
    """The two rules of UPSTREAM_PARENT_REFS_CEL, transcribed (group and kind are kvgen's, the same for
    every reference): the messages of those that fail."""

    def same_parent(p1: dict[str, Any], p2: dict[str, Any]) -> bool:
        no_ns = lambda p: not p.get("namespace")  # noqa: E731  (!has(ns) || ns == '')
        both_ns = "namespace" in p1 and "namespace" in p2 and p1["namespace"] == p2["namespace"]
        return p1["name"] == p2["name"] and ((no_ns(p1) and no_ns(p2)) or both_ns)

    def no_section(p: dict[str, Any]) -> bool:
        return not p.get("sectionName")

    first = all((no_section(p1) == no_section(p2)) if same_parent(p1, p2) else True for p1 in refs for p2 in refs)
    second = all(
        sum(
            1
            for p2 in refs
            if same_parent(p1, p2)
            and (
                (no_section(p1) and no_section(p2))
                or ("sectionName" in p1 and "sectionName" in p2 and p1["sectionName"] == p2["sectionName"])
            )
        )
        == 1
        for p1 in refs
    )
    messages = [m for m, _r in UPSTREAM_PARENT_REFS_CEL]
    return [m for m, ok in zip(messages, (first, second), strict=True) if not ok]


POOL = [
    {"name": "gw"},
    {"name": "gw", "sectionName": "http"},
    {"name": "gw", "sectionName": "https"},
    {"name": "gw", "namespace": "infra"},
    {"name": "gw", "namespace": "infra", "sectionName": "http"},
    {"name": "other"},
]


@pytest.mark.heavy
def test_kvgen_refuses_the_parent_refs_the_crds_cel_rules_refuse_and_no_others():
    for n in (1, 2, 3):
        for refs in itertools.product(POOL, repeat=n):
            refs_list = [dict(r) for r in refs]
            cel = _cel_parent_refs(refs_list)
            found = problem_set(routed(parentRefs=refs_list))
            assert bool(cel) == bool(found), (refs_list, cel, found)
            assert {m.split(" says: ", 1)[1] for _p, m, _h in found} <= set(cel), (refs_list, found)


PARENT_REFS = {
    "repeated": ([{"name": "gw"}, {"name": "gw"}], 1, "sectionName must be unique"),
    "one-with-a-section": ([{"name": "gw", "sectionName": "http"}, {"name": "gw"}], 1, "must be specified"),
    "same-section": (
        [{"name": "gw", "sectionName": "http"}, {"name": "other"}, {"name": "gw", "sectionName": "http"}],
        2,
        "sectionName must be unique",
    ),
    "same-namespace": (
        [{"name": "gw", "namespace": "infra"}, {"name": "gw", "namespace": "infra"}],
        1,
        "sectionName must be unique",
    ),
}


@pytest.mark.parametrize("case", sorted(PARENT_REFS))
def test_two_references_to_one_gateway_the_crd_refuses_are_refused_on_both_faces(case):
    refs, index, crd_words = PARENT_REFS[case]
    ((path, message, _hint),) = both_faces(routed(parentRefs=refs))
    assert path == f"routing.gateway.parentRefs[{index}]"
    assert crd_words in message and "when parentRefs includes 2 or more references to the same parent" in message


@pytest.mark.parametrize(
    "refs",
    [
        [{"name": "gw", "sectionName": "http"}, {"name": "gw", "sectionName": "https"}],
        [{"name": "gw"}, {"name": "gw", "namespace": "infra"}],
        [{"name": "gw"}, {"name": "other"}],
    ],
    ids=["two-listeners", "two-namespaces", "two-gateways"],
)
def test_references_the_crd_takes_are_rendered(refs):
    assert both_faces(routed(parentRefs=refs)) == set()
    assert [r["name"] for r in route_of(routed(parentRefs=refs))["spec"]["parentRefs"]] == [r["name"] for r in refs]
