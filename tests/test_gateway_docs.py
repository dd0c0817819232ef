"""docs/gateways/ (issue 36): a page per Gateway implementation with the CRDs, the versions and a
Gateway manifest. Every examples/gateways/*.yaml validates against Gateway API v1.5.1's CRD schemas
(tests/data/gateways/crds, written by scripts/vendor-crds, the release of kvgen's own HTTPRoute CRD)
and attaches to the HTTPRoute kvgen renders for examples/routing-gateway.yaml; each page shows its
example file as it is, and its spec fragment renders, on that example, the objects of the provider
it names; the index names each page's GatewayClass and provider and the CRD releases kvgen validates
against; the pages are linked from the index and docs/routing.md, their relative links resolve and
each links upstream."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import test_docs
import yaml
from conftest import ROOT, compile_spec
from referencing import Resource

from kvgen.data import kube

DOCS = ROOT / "docs" / "gateways"
INDEX = DOCS / "README.md"
EXAMPLES = ROOT / "examples" / "gateways"
SPEC = ROOT / "examples" / "routing-gateway.yaml"
CRDS = Path(__file__).parent / "data" / "gateways" / "crds"
KVGEN_CRDS = ROOT / "charts" / "kvgen" / "files" / "crds" / "sources.yaml"
GATEWAY_API = "gateway.networking.k8s.io"

# page (docs/gateways/<page>.md, examples/gateways/<page>-gateway.yaml) -> its routing.gateway.provider
PAGES = {"istio": "istio", "envoy-gateway": "none", "kgateway": "none", "gke": "gke"}
# what kvgen renders beside the InferencePool, picker and HTTPRoute for each provider (docs/routing.md)
PROVIDER_KINDS = {"istio": {"DestinationRule"}, "gke": {"HealthCheckPolicy", "GCPBackendPolicy"}, "none": set()}
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```$", re.M | re.S)


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def example(page: str) -> Path:
    return EXAMPLES / f"{page}-gateway.yaml"


def gateway_of(page: str) -> dict[str, Any]:
    (gateway,) = [d for d in documents(example(page).read_text(encoding="utf-8")) if d["kind"] == "Gateway"]
    return gateway


def sources(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["crds"]


def release(kind: str, api_version: str) -> str:
    (entry,) = [e for e in sources(KVGEN_CRDS) if (e["kind"], e["apiVersion"]) == (kind, api_version)]
    return entry["release"]


def problems(obj: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """The object against the vendored Gateway API schema of its kind and apiVersion, with kvgen's
    validator (kube._validator's construction: ObjectMeta from the shipped Kubernetes definitions)."""
    (entry,) = [
        e for e in sources(CRDS / "sources.yaml") if (e["kind"], e["apiVersion"]) == (obj["kind"], obj["apiVersion"])
    ]
    schema = json.loads((CRDS / entry["file"]).read_text(encoding="utf-8"))
    registry, _ = kube._registry(kube.DEFAULT_VERSION)
    validator = jsonschema.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ registry)
    return kube._format(validator.iter_errors(obj))


def host_matches(listener_host: str, route_host: str) -> bool:
    if listener_host.startswith("*."):
        return route_host.endswith(listener_host[1:]) or route_host == listener_host
    return route_host == listener_host or (route_host.startswith("*.") and listener_host.endswith(route_host[1:]))


def admits(listener: dict[str, Any], route: dict[str, Any], gateway_namespace: str | None) -> bool:
    """Whether a listener takes this HTTPRoute (Gateway API's rules; a namespace Selector cannot be judged
    from the files and counts as no)."""
    if listener["protocol"] not in ("HTTP", "HTTPS"):
        return False
    allowed = listener.get("allowedRoutes", {})
    kinds = allowed.get("kinds")
    if kinds and not any(k.get("group", GATEWAY_API) == GATEWAY_API and k["kind"] == "HTTPRoute" for k in kinds):
        return False
    source = allowed.get("namespaces", {}).get("from", "Same")
    if source == "Selector" or (source == "Same" and route["metadata"].get("namespace") != gateway_namespace):
        return False
    hostnames = route["spec"].get("hostnames") or []
    return "hostname" not in listener or not hostnames or any(host_matches(listener["hostname"], h) for h in hostnames)


def attachment_problems(route: dict[str, Any], gateway: dict[str, Any]) -> list[str]:
    """Why a parentRef of the route does not attach to this Gateway; empty when every one does. The
    namespace of an object without one is the one it is applied in, the same for both."""
    out = []
    name, namespace = gateway["metadata"]["name"], gateway["metadata"].get("namespace")
    for ref in route["spec"]["parentRefs"]:
        where = f"parentRef {ref['name']}"
        if (ref.get("group", GATEWAY_API), ref.get("kind", "Gateway")) != (GATEWAY_API, "Gateway"):
            out.append(f"{where}: not a Gateway")
        elif ref["name"] != name:
            out.append(f"{where}: the Gateway is {name}")
        elif ref.get("namespace", route["metadata"].get("namespace")) != namespace:
            out.append(f"{where}: the Gateway is in {namespace or 'the route namespace'}")
        elif not any(
            admits(listener, route, namespace)
            for listener in gateway["spec"]["listeners"]
            if ref.get("sectionName", listener["name"]) == listener["name"]
            and ref.get("port", listener["port"]) == listener["port"]
        ):
            out.append(f"{where}: no listener of {name} admits the route")
    return out


def rendered_route(values: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    objs = compile_spec(values).objects
    (route,) = [o for o in objs if o["kind"] == "HTTPRoute"]
    return route, {o["kind"] for o in objs}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def route(spec: dict[str, Any]) -> dict[str, Any]:
    return rendered_route(spec)[0]


def yaml_blocks(page: str) -> tuple[list[str], list[str]]:
    """The page's yaml blocks: (Kubernetes manifests, kvgen spec fragments)."""
    blocks = YAML_BLOCK.findall((DOCS / f"{page}.md").read_text(encoding="utf-8"))
    manifests = [b for b in blocks if all("apiVersion" in d for d in documents(b))]
    fragments = [b for b in blocks if b not in manifests]
    return manifests, fragments


# ----------------------------------------------------------------------------- the examples


def test_every_example_has_its_page_and_every_page_its_example():
    assert sorted(p.name for p in EXAMPLES.glob("*.yaml")) == sorted(example(p).name for p in PAGES)
    assert sorted(p.stem for p in DOCS.glob("*.md") if p.name != "README.md") == sorted(PAGES)


def test_the_schemas_are_gateway_api_at_the_release_of_kvgens_httproute_crd():
    entries = sources(CRDS / "sources.yaml")
    assert {(e["kind"], e["apiVersion"]) for e in entries} >= {
        ("Gateway", f"{GATEWAY_API}/v1"),
        ("GatewayClass", f"{GATEWAY_API}/v1"),
    }
    httproute = release("HTTPRoute", f"{GATEWAY_API}/v1")
    for entry in entries:
        assert entry["release"] == httproute
        assert entry["url"].startswith(
            f"https://raw.githubusercontent.com/kubernetes-sigs/gateway-api/{httproute}/config/crd/standard/"
        )
        schema = json.loads((CRDS / entry["file"]).read_text(encoding="utf-8"))
        assert schema["properties"]["kind"]["enum"] == [entry["kind"]]
    assert sorted(e["file"] for e in entries) == sorted(p.name for p in CRDS.glob("*.json"))


@pytest.mark.parametrize("page", PAGES)
def test_the_example_validates_against_the_gateway_api_crds(page):
    docs = documents(example(page).read_text(encoding="utf-8"))
    assert [d["kind"] for d in docs].count("Gateway") == 1
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) in {
            (f"{GATEWAY_API}/v1", "Gateway"),
            (f"{GATEWAY_API}/v1", "GatewayClass"),
        }
        assert problems(doc) == []
    classes = [d["metadata"]["name"] for d in docs if d["kind"] == "GatewayClass"]
    assert not classes or classes == [
        gateway_of(page)["spec"]["gatewayClassName"]
    ]  # a class of its own is the one it uses


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("spec", "listeners", 0, "port"), "80", "'80' is not of type 'integer'"),
        (("spec", "listeners", 0, "protocol"), "HTTP 1.1", "does not match"),
        (("spec", "listeners", 0, "bogus"), True, "'bogus' was unexpected"),
        (("spec", "gatewayClassName"), None, "None is not of type 'string'"),
        (("metadata", "labelz"), {}, "'labelz' was unexpected"),
    ],
    ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_the_schema_check_refuses_a_broken_gateway(path, value, message):
    gateway = copy.deepcopy(gateway_of("istio"))
    node = gateway
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    assert [m for _, m in problems(gateway) if message in m], problems(gateway)
    del gateway["spec"]["listeners"]
    assert (("spec",), "'listeners' is a required property") in problems(gateway)


@pytest.mark.parametrize("page", PAGES)
def test_the_example_gateway_takes_the_route_kvgen_renders_for_the_routing_example(page, route):
    assert route["spec"]["parentRefs"]
    assert attachment_problems(route, gateway_of(page)) == []


def test_the_attachment_check_refuses_a_gateway_the_route_would_not_attach_to(route):
    def changed(edit) -> list[str]:
        gateway = copy.deepcopy(gateway_of("istio"))
        edited = copy.deepcopy(route)
        edit(gateway, edited)
        return attachment_problems(edited, gateway)

    assert changed(lambda g, r: g["metadata"].update(name="other")) == [
        "parentRef inference-gateway: the Gateway is other"
    ]
    assert changed(lambda g, r: g["metadata"].update(namespace="gateway-system"))
    assert changed(lambda g, r: g["spec"]["listeners"][0].update(protocol="TCP"))
    assert changed(lambda g, r: r["spec"]["parentRefs"][0].update(sectionName="https"))
    assert changed(lambda g, r: r["spec"]["parentRefs"][0].update(port=443))
    assert changed(lambda g, r: g["spec"]["listeners"][0].update(allowedRoutes={"kinds": [{"kind": "GRPCRoute"}]}))
    assert changed(
        lambda g, r: (
            g["spec"]["listeners"][0].update(hostname="a.example.com"),
            r["spec"].update(hostnames=["b.example.com"]),
        )
    )
    # a shared Gateway in another namespace: the parentRef names it and the listener admits other namespaces
    assert changed(
        lambda g, r: (
            g["metadata"].update(namespace="gateway-system"),
            r["spec"]["parentRefs"][0].update(namespace="gateway-system"),
        )
    )
    assert not changed(
        lambda g, r: (
            g["metadata"].update(namespace="gateway-system"),
            r["spec"]["parentRefs"][0].update(namespace="gateway-system"),
            g["spec"]["listeners"][0].update(allowedRoutes={"namespaces": {"from": "All"}}),
        )
    )


# ----------------------------------------------------------------------------- the pages


@pytest.mark.parametrize("page", PAGES)
def test_the_page_shows_its_example_file_as_it_is(page):
    manifests, _ = yaml_blocks(page)
    assert manifests == [example(page).read_text(encoding="utf-8")]
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    assert f"../../examples/gateways/{example(page).name}" in test_docs.links(text)


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_spec_renders_the_providers_objects_and_a_route_to_its_gateway(page, spec):
    _, fragments = yaml_blocks(page)
    (fragment,) = fragments
    routing = yaml.safe_load(fragment)["routing"]
    assert routing["gateway"]["provider"] == PAGES[page]
    route, kinds = rendered_route({**copy.deepcopy(spec), "routing": routing})
    assert attachment_problems(route, gateway_of(page)) == []
    every = set().union(*PROVIDER_KINDS.values())
    assert kinds & every == PROVIDER_KINDS[PAGES[page]]
    assert {"InferencePool", "HTTPRoute"} <= kinds


def test_the_index_names_each_pages_gatewayclass_and_provider():
    rows = [line for line in INDEX.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    for page, provider in PAGES.items():
        (row,) = [r for r in rows if f"]({page}.md)" in r]
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert f"`{gateway_of(page)['spec']['gatewayClassName']}`" in cells[3], row
        assert cells[4] == f"`{provider}`", row


def test_the_index_installs_the_crd_releases_kvgen_validates_against():
    text = INDEX.read_text(encoding="utf-8")
    gateway_api = release("HTTPRoute", f"{GATEWAY_API}/v1")
    gie = release("InferencePool", "inference.networking.k8s.io/v1")
    assert f"kubernetes-sigs/gateway-api/releases/download/{gateway_api}/standard-install.yaml" in text
    assert f"gateway-api-inference-extension/releases/download/{gie}/manifests.yaml" in text
    assert f"Gateway API CRDs {gateway_api}" in text and f"(GIE) CRDs {gie}" in text


def test_the_pages_are_linked_from_the_index_and_the_index_from_routing():
    linked = set(test_docs.links(INDEX.read_text(encoding="utf-8")))
    assert {f"{page}.md" for page in PAGES} <= linked
    assert "gateways/README.md" in test_docs.links((ROOT / "docs" / "routing.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_the_page_links_upstream_and_its_relative_links_resolve(path):
    assert [t for t in test_docs.links(path.read_text(encoding="utf-8")) if t.startswith("https://")]
    assert test_docs.broken_links(path) == []
