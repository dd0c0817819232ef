"""Pods that run: every rendered pod started the way a kubelet would (tests/emulator/).

Marker `emulator`. Each test takes the objects kvgen renders (the CLI's, which are the goldens
byte for byte, and the chart's from `helm template`), starts every pod its workloads create in
the emulator (own mount, PID, network and UTS namespaces; the image's ENTRYPOINT, WORKDIR and
PATH; volumes at their mount paths; init containers, native sidecars held until their startup
probe passes; exec/httpGet/tcpSocket probes), with stand-in engines on PATH that parse their
argv with the real vLLM 0.33.0 / LMCache 0.5.6 parsers, then asserts what the running pods did:
every container ready, each vLLM reached the LMCache server(s) its config names, every rank of
a multi-node server reached its master.

Needs root (namespaces; CI runs as root) and the contract venv (the parsers). scripts/test sets
KVGEN_REQUIRE_EMULATOR=1 so that either missing fails this tier instead of skipping it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import helm
import pytest
from conftest import EXAMPLES, GOLDEN, ROOT, kube_version_of
from contract_support import contract_python_or_skip
from emulator import kubelet
from emulator.kubelet import Cluster, Group, expand
from hypothesis import HealthCheck, given, settings
from ruamel.yaml import YAML

from kvgen.app.compiler import Compiled, compile_text
from kvgen.plan import lora, model_source

load = YAML(typ="safe", pure=True).load
REQUIRE_ENV = "KVGEN_REQUIRE_EMULATOR"
VALKEY_HOST = "valkey.kv-cache.svc.cluster.local"  # examples/shared-valkey-tier.yaml's server
SECRETS = {("valkey-auth", "password"): "emulated-valkey-pw-1"}
LAUNCHER = ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py"

emulator = pytest.mark.emulator


# -- pure parts: Kubernetes' rules, no namespaces ------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("$(A)", {"A": "x"}, "x"),
        ("a$(A)b$(B)", {"A": "1", "B": "2"}, "a1b2"),
        ("$(UNSET)", {}, "$(UNSET)"),  # an undefined reference stays as written
        ("$$(A)", {"A": "x"}, "$(A)"),  # $$ escapes
        ("$$$(A)", {"A": "x"}, "$x"),
        ("$(A", {"A": "x"}, "$(A"),  # unclosed
        ("cost $5", {}, "cost $5"),
        ("$", {}, "$"),
        ("$(A)$(A)", {"A": "$(B)", "B": "no"}, "$(B)$(B)"),  # one pass: no recursive expansion
    ],
)
def test_variable_expansion_follows_kubernetes(text, env, expected):
    assert expand(text, env) == expected


def test_command_replaces_the_entrypoint_and_args_replace_cmd():
    image = kubelet.image_for("vllm/vllm-openai:v0.33.0")
    assert kubelet.container_argv({"name": "c", "args": ["m", "--x=$(V)"]}, image, {"V": "1"}) == [
        "vllm",
        "serve",
        "m",
        "--x=1",
    ]
    assert kubelet.container_argv({"name": "c", "command": ["python3"], "args": ["a"]}, image, {}) == ["python3", "a"]
    assert kubelet.container_argv({"name": "c"}, image, {}) == ["vllm", "serve"]


def test_an_image_without_facts_is_refused_not_guessed():
    with pytest.raises(kubelet.EmulatorError, match="no image facts for 'example.com/unknown:1'"):
        kubelet.image_for("example.com/unknown:1")


def test_the_kvgen_runtime_image_is_known_by_its_release_name():
    """runtime.yaml's runtimeImage.repository, tagged with the kvgen version."""
    from kvgen import __version__
    from kvgen.data import catalog

    image = f"{catalog.runtime()['runtimeImage']['repository']}:{__version__}"
    assert kubelet.image_for(image).name == "kvgen-runtime"


def test_a_registry_mirror_serves_the_upstream_repositories_it_mirrors():
    """images.registry replaces the registry host; a cluster that pulls through that mirror finds
    the same image there, and only there."""
    assert kubelet.image_for("mirror.gcr.io/vllm/vllm-openai:v0.33.0", ("mirror.gcr.io",)).name == "vllm-openai"
    cpu = "harbor.internal:5000/proxy/q9t5s3a7/vllm-cpu-release-repo:v0.33.0"
    assert kubelet.image_for(cpu, ("harbor.internal:5000/proxy",)).name == "vllm-cpu"
    with pytest.raises(kubelet.EmulatorError, match="no image facts"):
        kubelet.image_for("mirror.gcr.io/vllm/vllm-openai:v0.33.0")  # a cluster without that mirror
    with pytest.raises(kubelet.EmulatorError, match="no image facts"):
        kubelet.image_for("mirror.gcr.io/vllm/vllm-openai:v0.32.0", ("mirror.gcr.io",))  # not mirrored upstream


def test_env_from_reads_the_clusters_objects_and_fails_on_a_missing_required_one():
    """envFrom: ConfigMap data and Secret keys, prefixed, before env; a source the cluster lacks
    fails the container (the kubelet's CreateContainerConfigError) unless the ref is optional."""
    pod = kubelet.Pod(
        "p-0", "p-0", "p", "ns1", {}, {}, {"containers": [], "enableServiceLinks": False}, ip="10.233.0.9"
    )
    world = kubelet.World(
        {("ns1", "cm"): {"data": {"A": "from-cm", "B": "b"}}}, [], {}, {("ns1", "sec"): {"TOKEN": "t"}}
    )
    image = kubelet.image_for("vllm/vllm-openai:v0.33.0")
    node = {"name": "n", "memory": 1, "cpus": 1}
    c = {
        "name": "c",
        "envFrom": [
            {"configMapRef": {"name": "cm"}},
            {"secretRef": {"name": "sec"}, "prefix": "X_"},
            {"secretRef": {"name": "absent", "optional": True}},
            {"configMapRef": {"name": "absent", "optional": True}},
        ],
        "env": [{"name": "B", "value": "env-wins"}],
    }
    env = kubelet.container_env(pod, c, image, world, node)
    assert (env["A"], env["B"], env["X_TOKEN"]) == ("from-cm", "env-wins", "t") and "TOKEN" not in env
    for ref in ({"configMapRef": {"name": "absent"}}, {"secretRef": {"name": "absent"}}):
        with pytest.raises(kubelet.EmulatorError, match="absent"):
            kubelet.container_env(pod, {"name": "c", "envFrom": [ref]}, image, world, node)


def test_env_resolution_uses_only_earlier_container_variables_and_field_refs():
    pod = kubelet.Pod("p-0", "p-0", "p", "ns1", {"role": "leader"}, {}, {"containers": []}, ip="10.233.0.9")
    world = kubelet.World({}, [], {("s", "k"): "sv"})
    c = {
        "name": "c",
        "env": [
            {"name": "A", "value": "$(B)-x"},  # B is defined later: stays literal
            {"name": "B", "value": "b"},
            {"name": "C", "value": "$(B)$(PATH)"},  # the image's PATH is not the kubelet's to expand
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "ROLE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['role']"}}},
            {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ],
    }
    image = kubelet.image_for("vllm/vllm-openai:v0.33.0")
    env = kubelet.container_env(pod, c, image, world, {"name": "n", "memory": 1, "cpus": 1})
    assert (env["A"], env["C"], env["IP"], env["ROLE"], env["S"]) == (
        "$(B)-x",
        "b$(PATH)",
        "10.233.0.9",
        "leader",
        "sv",
    )


def test_service_links_name_every_port_like_the_kubelet():
    svc = {"kind": "Service", "metadata": {"name": "vllm"}, "spec": {"ports": [{"name": "http", "port": 8000}]}}
    env = kubelet._service_env([svc], "default")
    assert env["VLLM_PORT"].startswith("tcp://") and env["VLLM_SERVICE_PORT_HTTP"] == "8000"


# -- the running tier -------------------------------------------------------------------------------
def _skip_or_fail(why: str) -> None:
    if os.environ.get(REQUIRE_ENV):
        pytest.fail(f"{why} ({REQUIRE_ENV} is set: the emulator tier must run)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def emu_run_dir():
    why = kubelet.available()
    if why:
        _skip_or_fail(why)
    from emulator import endpoints

    python = contract_python_or_skip()
    run_dir = Path(tempfile.mkdtemp(prefix="kvgen-emu-run-"))
    endpoints.write(run_dir / "endpoints.json")
    sock = run_dir / "parserd.sock"
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "LMCACHE_DISABLE_BANNER": "1"}
    daemon = subprocess.Popen(
        [python, str(ROOT / "tests" / "emulator" / "parserd.py"), str(sock)],
        stdout=subprocess.PIPE,
        stderr=(run_dir / "parserd.log").open("wb"),
        env=env,
    )
    assert daemon.stdout is not None
    line = daemon.stdout.readline()
    if b"ready" not in line:
        daemon.kill()
        pytest.fail(f"the parser daemon did not start: {(run_dir / 'parserd.log').read_text()[-3000:]}")
    os.chmod(run_dir, 0o755)
    yield run_dir
    daemon.terminate()
    daemon.wait(timeout=10)
    shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster(emu_run_dir):
    work = Path(tempfile.mkdtemp(prefix="kvgen-emu-pods-"))
    c = Cluster(work, emu_run_dir)
    yield c
    c.close()
    shutil.rmtree(work, ignore_errors=True)  # the pods' directories (their mounts died with their namespaces)


@pytest.fixture(scope="session")
def valkey(cluster):
    """A real valkey-server in the cluster's network, at the address the example's URL names."""
    from valkey_support import valkey_argv

    data = tempfile.mkdtemp(prefix="kvgen-emu-valkey-")
    proc = cluster.in_cluster(
        valkey_argv(cluster.gateway, 6379, data, "admin-pw-emu", SECRETS[("valkey-auth", "password")]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    yield {VALKEY_HOST: cluster.gateway}
    proc.terminate()
    proc.wait(timeout=10)


def _objects(text: str) -> list[dict[str, Any]]:
    return [d for d in YAML(typ="safe", pure=True).load_all(text) if d]


def _compile(example: Path) -> list[Compiled]:
    return compile_text(example.read_text(), str(example), kube_version_of(example))


def user_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the user created before installing: a ConfigMap or Secret for every envFrom source
    the rendered pods name, do not render themselves and do not mark optional (vllm.envFrom points
    at the user's own objects), each with one key whose value says where it came from."""
    rendered = {(o.get("kind"), o["metadata"]["name"]) for o in objects if isinstance(o.get("metadata"), dict)}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for pod in kubelet.pods_of(objects):
        for c in kubelet.iter_containers(pod):
            for source in c.get("envFrom") or []:
                for field_, kind, body in (
                    ("configMapRef", "ConfigMap", "data"),
                    ("secretRef", "Secret", "stringData"),
                ):
                    # an optional source is left out: the cluster need not hold it, and the pod starts
                    if (
                        field_ in source
                        and (kind, source[field_]["name"]) not in rendered
                        and not source[field_].get("optional")
                    ):
                        name = source[field_]["name"]
                        out[(kind, name)] = {
                            "apiVersion": "v1",
                            "kind": kind,
                            "metadata": {"name": name, "namespace": pod.namespace},
                            body: {"FROM_" + kind.upper(): name},
                        }
    return list(out.values())


def _start(
    cluster: Cluster,
    objects: list[dict[str, Any]],
    compiled: Compiled,
    hosts: dict[str, str] | None = None,
    staged: bool = True,
    **kw: Any,
) -> Group:
    """Start the objects on a cluster that holds the user's own envFrom sources and pulls through the
    spec's registry mirror (images.registry), as the cluster the spec was written for does; the
    weights of model.uri (and of model.cache with download: false) staged on their claims, as the
    user would have them (``staged``)."""
    registry = compiled.spec.images.registry if compiled.spec.images else None
    spec = compiled.spec
    pvc = model_source.model_pvc(spec)
    if staged and pvc is not None:  # model.uri: the user staged the model's files on the claim beforehand
        stage_model(cluster.claim(pvc[0]) / (pvc[1] or ""), spec.model.id)
    cache = spec.model.cache
    if staged and cache is not None and not cache.download:
        if cache.claim is not None:
            stage_model(cluster.claim(cache.claim.name) / model_source.cache_path(spec), spec.model.id)
        for pod in kubelet.pods_of(objects):
            for volume, claim in pod.claims.items():
                if volume == "model-weights":
                    stage_model(cluster.claim(claim), spec.model.id)
    if staged and spec.model.lora is not None:  # pvc:// adapters: the user staged their files beforehand
        for a in spec.model.lora.adapters:
            if a.uri.startswith("pvc://"):
                claim, _, path = a.uri.removeprefix("pvc://").partition("/")
                stage_adapter(cluster.claim(claim) / path.strip("/"))
            elif cache is not None and not cache.download and cache.claim is not None:  # hf:// beside the weights
                stage_adapter(
                    cluster.claim(cache.claim.name) / model_source.cache_path(spec) / "lora" / lora.dir_name(a.name)
                )
    return cluster.start(
        objects,
        node=kubelet.node_for(compiled.plan.instance),
        secrets=SECRETS,
        extra_hosts=hosts or {},
        existing=user_objects(objects),
        mirrors=(registry,) if registry else (),
        **kw,
    )


def stage_model(directory: Path, model_id: str) -> None:
    """A model directory as `hf download --local-dir` leaves it (the files vLLM reads first)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps({"_name_or_path": model_id}))
    (directory / "tokenizer.json").write_text("{}")


def stage_adapter(directory: Path) -> None:
    """A LoRA adapter directory as PEFT saves it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
    (directory / "adapter_model.safetensors").write_text("\0" * 64)


def assert_runs(group: Group, compiled: Compiled) -> None:
    assert group.ready, group.describe()
    for result in group.pods:
        for c in kubelet.iter_containers(result.pod):
            for engine in ("vllm", "lmcache", "epp"):
                report = result.report(c["name"], engine)
                if report is not None:
                    assert report.get("ok", True), f"{result.pod.name}/{c['name']}: {report}\n{group.describe()}"


def _uses_valkey(compiled: Compiled) -> bool:
    remote = getattr(compiled.spec.kv_cache_offloading, "remote", None) if compiled.spec.kv_cache_offloading else None
    return remote is not None


@emulator
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_starts_from_the_cli(example, cluster, request):
    """The CLI's objects, which are the golden file byte for byte: every golden is started here."""
    compiled = _compile(example)
    text = "".join(c.yaml for c in compiled)
    assert text == (GOLDEN / example.name).read_text(), f"golden/{example.name} is not what kvgen renders"
    hosts = request.getfixturevalue("valkey") if any(_uses_valkey(c) for c in compiled) else {}
    group = _start(cluster, _objects((GOLDEN / example.name).read_text()), compiled[0], hosts)
    assert_runs(group, compiled[0])


@emulator
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_starts_from_the_chart(example, cluster, request):
    compiled = _compile(example)
    objects = helm.objects(load(example.read_text()), kube_version=kube_version_of(example))
    hosts = request.getfixturevalue("valkey") if any(_uses_valkey(c) for c in compiled) else {}
    group = _start(cluster, objects, compiled[0], hosts)
    assert_runs(group, compiled[0])


def known_bad_launcher() -> str:
    """Today's launcher with the bug that shipped in ab41999 put back: the server command given to
    os.execv as written, so a bare `lmcache` is looked for in the working directory, not on PATH."""
    text = LAUNCHER.read_text()
    good = 'found = shutil.which(command, path=os.environ.get("PATH", os.defpath))'
    assert text.count(good) == 1, "the launcher no longer resolves the server this way: update this test"
    return text.replace(good, "found = command if os.access(command, os.X_OK) or '/' not in command else None")


@emulator
def test_a_launcher_that_execs_without_a_path_search_is_caught(cluster):
    """ab41999's launcher exec'd `lmcache` with os.execv, which does not search PATH: in the image
    (WORKDIR /vllm-workspace, which holds no engine) the sidecar exits 2, crash-loops, and vLLM
    never starts. Every lmcache-sidecar example rendered then failed this tier; this keeps it caught."""
    example = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
    (compiled,) = _compile(example)
    objects = _objects(compiled.yaml)
    (cm,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("lmcache-launcher")]
    (key,) = cm["data"]
    cm["data"][key] = known_bad_launcher()
    group = _start(cluster, objects, compiled, timeout=40)
    assert not group.ready
    (pod,) = group.pods
    log = pod.log("lmcache-mp-server")
    assert "cannot start lmcache" in log and "No such file or directory" in log, group.describe()
    assert not any(e.get("container") == "vllm" and e["event"] == "started" for e in pod.events)
    restarts = [e for e in pod.events if e["event"] == "started" and e.get("container") == "lmcache-mp-server"]
    assert len(restarts) > 1  # restarted, as a crash-looping sidecar is


@emulator
@pytest.mark.parametrize("fallback", [False, True], ids=["refused", "allowTorchFallback"])
def test_lmcache_whose_kernels_do_not_load_in_the_vllm_image_is_refused_unless_the_spec_allows(cluster, fallback):
    """Issue 32 (1): in vllm/vllm-openai:v0.33.0 LMCache 0.5.6's cuda_ops needs a symbol torch 2.14.0 no longer
    exports; LMCache would run its pure-torch fallback, which no probe sees. The launcher names the symbol and
    the sidecar never starts the server (so vLLM never starts), unless allowTorchFallback; kvgen's runtime
    image (the default: every example starts above) loads them."""
    example = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
    text = example.read_text() + "images:\n  vllm: {repository: vllm/vllm-openai, tag: v0.33.0}\n"
    if fallback:
        text = text.replace(
            "lmcache: {utilizationScope: rank}", "lmcache: {utilizationScope: rank, allowTorchFallback: true}", 1
        )
    (compiled,) = compile_text(text, "spec.yaml")
    assert ("- --kernels=optional\n" in compiled.yaml) == fallback
    group = _start(cluster, _objects(compiled.yaml), compiled, timeout=40 if not fallback else 120)
    (pod,) = group.pods
    log = pod.log("lmcache-mp-server")
    assert f"lmcache.cuda_ops needs {kubelet.KERNEL_SYMBOL}, which this image's torch (2.14.0) does not export" in log
    if fallback:
        assert_runs(group, compiled)
        assert "(allowTorchFallback: starting on the fallback)" in log
    else:
        assert not group.ready
        assert "LMCache MP server not started: LMCache's CUDA kernels do not load" in log, group.describe()
        assert not any(e.get("container") == "vllm" and e["event"] == "started" for e in pod.events)


def _sample_specs():
    from spec_strategies import specs

    return specs()


@emulator
@settings(
    max_examples=int(os.environ.get("KVGEN_EMULATOR_SAMPLES", "6")),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(spec=_sample_specs())
def test_a_sample_of_valid_specs_starts_from_both_faces(spec, cluster, valkey):
    """Generated specs (the chart parity strategy), those kvgen accepts, from the CLI and the chart."""
    from hypothesis import assume

    from kvgen.core.errors import KvgenError

    text = json.dumps(spec)
    try:
        compiled = compile_text(text, "sample.yaml", "1.34")
    except KvgenError:
        assume(False)
        return
    (c,) = compiled
    if c.spec.kv_cache_offloading and getattr(c.spec.kv_cache_offloading, "remote", None) is not None:
        assume(VALKEY_HOST in text)
    # an image of the user's own (images.*.repository): the emulator has no facts for it and does not guess
    assume(not any(isinstance(i, dict) and i.get("repository") for i in (spec.get("images") or {}).values()))
    objects = _objects(c.yaml)
    assert_runs(_start(cluster, objects, c, valkey), c)
    assert_runs(_start(cluster, helm.objects(spec, kube_version="1.34"), c, valkey), c)


@emulator
def test_nothing_outlives_a_pod(cluster):
    example = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
    (compiled,) = _compile(example)
    before = {p for p in os.listdir("/proc") if p.isdigit()}
    group = _start(cluster, _objects(compiled.yaml), compiled)
    assert group.ready, group.describe()
    ours = os.readlink("/proc/self/ns/pid")

    def leftovers() -> list[str]:
        found = []
        for pid in {p for p in os.listdir("/proc") if p.isdigit()} - before:
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                pid_namespace = os.readlink(f"/proc/{pid}/ns/pid")
            except OSError:
                continue
            # a pod's processes live in its own PID namespace: a launcher another test runs on this
            # machine at the same time (pytest-xdist's other worker) lives in ours
            if pid_namespace != ours and ("standin.py" in cmd or "podinit.py" in cmd or "lmcache_launcher" in cmd):
                found.append(cmd)
        return found

    # the kernel takes the pod's namespace down after its init is killed, promptly but not at once on a
    # loaded machine (CI once saw a stand-in 0.5 s later): a process that outlives the pod is there for good
    deadline = time.monotonic() + 15
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == []
    # and the pod's ports were its own: nothing listens on this machine's 8000 or 5555 now
    for port in (8000, 5555):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0


@emulator
def test_a_server_named_vllm_starts_because_service_links_are_off(cluster):
    """A Service named `vllm` gives every pod of the namespace VLLM_PORT=tcp://IP:8000 through the
    kubelet's service links, and vLLM refuses to start on it (vllm/envs.py get_vllm_port). kvgen
    turns service links off; with them on, the same pod must fail in the emulator."""
    text = (ROOT / "examples" / "native-arc-eviction.yaml").read_text()
    name = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:"))
    (compiled,) = compile_text(text.replace(f"name: {name}\n", "name: vllm\n", 1), "vllm.yaml", "1.33")
    objects = _objects(compiled.yaml)
    assert any(o["kind"] == "Service" and o["metadata"]["name"] == "vllm" for o in objects)
    assert_runs(_start(cluster, objects, compiled), compiled)
    for o in objects:
        if o["kind"] == "Deployment":
            del o["spec"]["template"]["spec"]["enableServiceLinks"]
    group = _start(cluster, objects, compiled, timeout=40)
    assert not group.ready
    assert "VLLM_PORT 'tcp://" in group.pods[0].log("vllm") and "appears to be a URI" in group.pods[0].log("vllm")


ROUTED = ROOT / "examples" / "routing-gateway.yaml"


def assert_picker_reached_every_server(group: Group) -> list[Any]:
    """The picker started and read the metrics of every vLLM pod on port 8000; the vLLM pods."""
    (picker,) = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "endpoint-picker"]
    report = picker.report("epp", "epp")
    assert report is not None and report["started"], group.describe()
    servers = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "vllm"]
    assert servers
    assert sorted(r["endpoint"] for r in report["reached"]) == sorted(f"{p.pod.ip}:8000" for p in servers)
    return servers


@emulator
def test_the_picker_reads_every_pool_pods_metrics(cluster):
    """routing.mode gateway (issue 25): the Endpoint Picker's stand-in (the Go binary needs an API
    server) runs the pinned router's flags and the rendered config, and becomes ready only once it
    has read vllm:num_requests_waiting and vllm:kv_cache_usage_perc from every pod of its
    InferencePool on the pool's target port (the emulator starts one replica of a Deployment: every
    server it starts)."""
    (compiled,) = _compile(ROUTED)
    group = _start(cluster, _objects(compiled.yaml), compiled)
    assert_runs(group, compiled)
    assert_picker_reached_every_server(group)


@emulator
def test_a_pool_on_a_port_no_server_serves_keeps_the_picker_unready(cluster):
    """The check bites: an InferencePool whose target port is not vLLM's leaves the picker unable to
    read the servers' metrics, so it never becomes ready."""
    (compiled,) = _compile(ROUTED)
    objects = _objects(compiled.yaml)
    (pool,) = [o for o in objects if o["kind"] == "InferencePool"]
    pool["spec"]["targetPorts"] = [{"number": 8001}]
    group = _start(cluster, objects, compiled, timeout=45)
    (picker,) = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "endpoint-picker"]
    assert not picker.ready
    assert "cannot read the pool's metrics" in picker.log("epp"), group.describe()


PD_DECODE = ROOT / "examples" / "routing-prefill-decode.yaml"


@emulator
def test_the_picker_reaches_a_decode_server_through_its_routing_sidecar(cluster):
    """A prefill/decode pair's decode server: the pool's target port is the routing sidecar's (the stand-in
    takes the pinned pd-sidecar's flags, finds its token, CA and namespace, and proxies to vLLM on 8001), and
    the picker reads vLLM's metrics through it."""
    (compiled,) = _compile(PD_DECODE)
    group = _start(cluster, _objects(compiled.yaml), compiled)
    assert_runs(group, compiled)
    servers = assert_picker_reached_every_server(group)
    sidecar = servers[0].report("llm-d-routing-sidecar", "pd-sidecar")
    assert sidecar is not None and sidecar["started"], group.describe()
    assert sidecar["checked"][0]["pool"] == "llm/qwen-pd-pool" and sidecar["checked"][0]["vllmPort"] == 8001


@emulator
def test_a_sidecar_flag_the_pinned_release_lacks_keeps_the_decode_pod_down(cluster):
    """The check bites: a flag llm-d-router v0.9.0's pd-sidecar does not define stops the sidecar (pflag's
    unknown flag), and the pod never becomes ready."""
    (compiled,) = _compile(PD_DECODE)
    objects = _objects(compiled.yaml)
    (deployment,) = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "qwen-pd"]
    (sidecar,) = deployment["spec"]["template"]["spec"]["initContainers"]
    sidecar["args"].append("--enable-prefiller-tls=true")
    group = _start(cluster, objects, compiled, timeout=45)
    server = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "vllm"][0]
    assert not server.ready
    assert "unknown flag: --enable-prefiller-tls" in server.log("llm-d-routing-sidecar"), group.describe()


# -- model.cache: weights that survive a restart (issue 24) -----------------------------------------
WEIGHTS_CACHE = ROOT / "examples" / "weights-cache.yaml"
HF_FILES = [  # what the hf stand-in fetches into --local-dir: less original/, metal/, consolidated* (--exclude)
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "model.safetensors.index.json",
    "model-00001-of-00001.safetensors",
]


def _downloads(group: Group) -> dict[str, dict[str, Any]]:
    """Each pod's `hf download` report (its init container's)."""
    out = {}
    for result in group.pods:
        report = result.report("model-download", "hf")
        assert report is not None, result.describe()
        out[result.pod.name] = report
    return out


@emulator
def test_weights_on_a_claim_per_pod_are_downloaded_once_and_a_restart_downloads_nothing(cluster):
    """The Done-when of issue 24: the init container fills each pod's claim once; the pods started
    again (a rollout, a reschedule: new pods, the same claims) find every file and download none,
    and vLLM serves the directory offline; a deleted claim is filled again."""
    (compiled,) = _compile(WEIGHTS_CACHE)
    objects = _objects(compiled.yaml)
    claims = [f"model-weights-{compiled.spec.object_name}-{i}" for i in range(compiled.spec.replicas)]
    cluster.wipe_claims(*claims)

    first = _start(cluster, objects, compiled)
    assert_runs(first, compiled)
    reports = _downloads(first)
    assert len(reports) == 2  # two replicas: two pods, two claims, each filled once
    for report in reports.values():
        assert report["downloaded"] == HF_FILES and report["skipped"] == []
        assert report["token_from"] == "HF_TOKEN"  # from the Secret, never --token
        assert report["facts"]["revision"] == "0e9e39f249a16976918f6564b8830bc894c89659"
    for claim in claims:
        assert (cluster.claim(claim) / "config.json").is_file()
        assert not (cluster.claim(claim) / "original").exists()

    second = _start(cluster, objects, compiled)
    assert_runs(second, compiled)
    for report in _downloads(second).values():
        assert report["downloaded"] == [] and report["skipped"] == HF_FILES  # warm restart: no download
    for result in second.pods:
        facts = result.report("vllm", "vllm")
        assert facts is not None and facts["facts"]["model"] == model_source.model_dir(compiled.spec)
        assert facts["facts"]["model"].startswith("/mnt/models/meta-llama--Llama-3.1-8B-Instruct--")  # + revision

    cluster.wipe_claims(claims[0])
    third = _start(cluster, objects, compiled)
    assert_runs(third, compiled)
    again = _downloads(third)
    assert again[f"{compiled.spec.object_name}-0"]["downloaded"] == HF_FILES
    assert again[f"{compiled.spec.object_name}-1"]["downloaded"] == []


@emulator
def test_an_empty_claim_is_not_a_model_and_vllm_does_not_start(cluster):
    """download: false on an empty claim: vLLM's stand-in refuses /mnt/models without config.json,
    so the restart proof above cannot pass on files that were never written."""
    text = WEIGHTS_CACHE.read_text().replace(
        "      storageClassName: managed-csi-premium\n",
        "      storageClassName: managed-csi-premium\n    download: false\n",
    )
    (compiled,) = compile_text(text, "spec.yaml")
    assert "model-download" not in compiled.yaml
    claims = [f"model-weights-{compiled.spec.object_name}-{i}" for i in range(compiled.spec.replicas)]
    cluster.wipe_claims(*claims)
    group = _start(cluster, _objects(compiled.yaml), compiled, staged=False, timeout=20)
    assert not group.ready
    assert "holds no config.json" in group.describe()


# -- model.lora: adapters served beside the model (issue 37) ----------------------------------------

LORA = ROOT / "examples" / "lora-adapters.yaml"


@emulator
@pytest.mark.parametrize("face", ["cli", "chart"])
def test_lora_adapters_are_fetched_and_served_under_their_names(face, cluster):
    """The two adapters of examples/lora-adapters.yaml: the hf:// one downloaded by its own init container
    (its adapter files only) onto the weights' claim, the pvc:// one read from its claim's mount; vLLM's
    stand-in parses the flags with the real parser, loads each adapter directory as vLLM does at start
    (adapter_config.json and the tensors) and lists the adapters in /v1/models under their names, the
    base model their parent (vllm/entrypoints/openai/models/serving.py)."""
    (compiled,) = _compile(LORA)
    objects = _objects(compiled.yaml) if face == "cli" else helm.objects(load(LORA.read_text()))
    group = _start(cluster, objects, compiled)
    assert_runs(group, compiled)
    (server,) = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "vllm"]
    report = server.report("lora-download-0", "hf")
    assert report is not None  # the claim outlives a pod: a second start finds the files (skipped)
    assert sorted(report["downloaded"] + report["skipped"]) == ["adapter_config.json", "adapter_model.safetensors"]
    served = server.report("vllm", "vllm")  # the pods are gone once started: what GET /v1/models answered
    assert served is not None, group.describe()
    models = {m["id"]: m for m in served["models"]["data"]}
    assert set(models) == {"meta-llama/Llama-3.1-8B-Instruct", "sql", "support-tone"}
    assert models["sql"]["root"] == "/mnt/models/meta-llama--Llama-3.1-8B-Instruct/lora/sql"
    assert models["support-tone"]["root"] == "/mnt/lora/support-tone"
    assert {models[a]["parent"] for a in ("sql", "support-tone")} == {"meta-llama/Llama-3.1-8B-Instruct"}


@emulator
def test_an_adapter_missing_from_its_claim_stops_vllm(cluster):
    """The check bites: a pvc:// adapter whose claim does not hold it (not staged) stops vLLM at start, as
    init_static_loras does."""
    (compiled,) = _compile(LORA)
    cluster.wipe_claims("lora-adapters")  # a claim outlives the pods: an earlier start may have staged it
    group = _start(cluster, _objects(compiled.yaml), compiled, staged=False, timeout=30)
    assert not group.ready
    assert "support-tone" in group.describe() and "adapter_config.json" in group.describe()


KSERVE_LORA = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: lora-multiple-adapters-test, namespace: default}
spec:
  model:
    uri: hf://Qwen/Qwen2.5-7B-Instruct
    name: Qwen/Qwen2.5-7B-Instruct
    lora:
      adapters:
        - {name: lora-adapter-1, uri: "hf://edbeeching/opt-125m-lora"}
        - {name: lora-adapter-2, uri: "hf://edbeeching/opt-125m-lora"}
      maxRank: 64
      maxAdapters: 2
      maxCpuAdapters: 4
  template:
    containers:
      - name: main
        resources: {limits: {nvidia.com/gpu: "1"}}
"""


@emulator
def test_a_kserve_service_with_two_adapters_serves_them(cluster):
    """kserve/kserve@aaac4e29 test/e2e/llmisvc/test_llm_lora_adapters.py:210-250 "multiple-lora-adapters"
    (fixture model-fb-opt-125m-with-multiple-lora, test/e2e/llmisvc/fixtures.py:451-468, on a catalog model):
    the converted service starts and its vLLM serves both adapters under their names and KServe's
    publishers/<namespace>/models/<name> aliases (pkg/controller/v1alpha2/llmisvc/workload_lora.go:152-175),
    beside the base model's two names."""
    from kvgen.input.dialects import Options

    (compiled,) = compile_text(KSERVE_LORA, "kserve.yaml", options=Options("Standard_NC24ads_A100_v4"))
    group = _start(cluster, _objects(compiled.yaml), compiled)
    assert_runs(group, compiled)
    (server,) = [p for p in group.pods if p.pod.labels.get("app.kubernetes.io/name") == "vllm"]
    served = server.report("vllm", "vllm")
    assert served is not None, group.describe()
    ids = [m["id"] for m in served["models"]["data"]]
    assert ids == [
        "Qwen/Qwen2.5-7B-Instruct",
        "publishers/default/models/Qwen/Qwen2.5-7B-Instruct",
        "lora-adapter-1",
        "publishers/default/models/lora-adapter-1",
        "lora-adapter-2",
        "publishers/default/models/lora-adapter-2",
    ]
