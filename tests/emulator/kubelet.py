"""kvgen's pod emulator, the host side: start rendered pods the way a kubelet would.

Given the objects kvgen (or the chart) rendered, `Cluster.start(objects, ...)` turns each workload
into the pods its controller would create (a Deployment's one pod, a StatefulSet's ordinals, a
LeaderWorkerSet's leader and workers with the env and labels LWS injects), resolves what the
kubelet resolves from the API objects, and starts every pod of the group together, each in its own
mount, PID, network and UTS namespaces (tests/emulator/podinit.py is PID 1 there). The pods of a
group share a bridge in a network namespace of their own (10.233.0.0/24, never routed anywhere),
so a leader's address resolves and is reached the way cluster DNS and the pod network would allow.

What is resolved here, with Kubernetes' rules:
- argv: `command` replaces the image's ENTRYPOINT (and drops CMD), `args` replace CMD; `$(VAR)`
  in both expands from the container's env only (not the image's ENV); `$$` escapes; an
  undefined reference stays as written (k8s.io/kubernetes third_party/forked/golang/expansion);
- env: the image's ENV, then the container's envFrom and env in order (env values expand
  `$(VAR)` from what is defined before them); valueFrom fieldRef (metadata.name, namespace, uid,
  labels['k'], annotations['k'], spec.nodeName, spec.serviceAccountName, status.podIP,
  status.hostIP), resourceFieldRef (with divisor), configMapKeyRef from the rendered ConfigMaps,
  secretKeyRef from the test's secrets or a stand-in value; service links
  (`<SERVICE>_SERVICE_HOST`, `<SERVICE>_PORT`, ...) for the rendered Services unless the pod turns
  them off; envFrom from the rendered ConfigMaps or the ConfigMaps and Secrets the test says the
  cluster already holds (a missing source fails the container unless its ref is `optional`);
- volumes: configMap (items, modes, defaultMode), secret, emptyDir (Memory medium as tmpfs with
  its sizeLimit), projected and downwardAPI files; a persistentVolumeClaim and a StatefulSet's
  volumeClaimTemplates claim (`<template>-<pod>`) as a directory of the cluster keyed by the
  claim's name, bound empty on first use and kept across `start()` calls, as a claim outlives its
  pods (`Cluster.claim` finds one, `Cluster.wipe_claims` deletes them); an ephemeral volume as an
  empty directory of its pod (deleted with it); anything else is refused;
- probes: named ports resolved from the container's ports; the pod's periods scaled down.

Nothing is rewritten: every path a container sees is the path its spec names.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from emulator.engines import wrappers
from kvgen.core import quantity

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PODINIT = HERE / "podinit.py"
HOST_PYTHON = "/usr/bin/python3"  # podinit and the stand-ins run with the system Python, as an image's would
SUBNET = "10.233.0"  # inside namespaces this emulator makes; nothing routes it anywhere
NAMESPACE = "default"
SECRET_STANDIN = "kvgen-emulator-secret"
WORKLOADS = ("Deployment", "StatefulSet", "LeaderWorkerSet")


class EmulatorError(Exception):
    """The rendered objects ask for something a kubelet would refuse (or this emulator cannot do)."""


# -- images -----------------------------------------------------------------------------------------
# what torch 2.14.0's libc10_cuda.so no longer exports and LMCache 0.5.6's PyPI wheel needs (tools/abi_check.py)
KERNEL_SYMBOL = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb"


@dataclass(frozen=True)
class Image:
    name: str
    entrypoint: list[str]
    cmd: list[str]
    workdir: str
    env: dict[str, str]
    engines: dict[str, str]
    lmcache: str | None
    files: dict[str, dict[str, Any]]
    lmcache_kernels: bool = True  # lmcache.cuda_ops imports (False: built against another torch than the image's)
    torch: str | None = None


def images() -> list[tuple[dict[str, Any], Image]]:
    data = yaml.safe_load((HERE / "images.yaml").read_text())
    out = []
    for entry in data["images"]:
        image = Image(
            entry["name"],
            entry["entrypoint"],
            entry["cmd"],
            entry["workdir"],
            entry["env"],
            entry["engines"],
            entry.get("lmcache"),
            entry.get("files", {}),
            entry.get("lmcacheKernels", True),
            entry.get("torch"),
        )
        out.append((entry, image))
    return out


def _without_registry(name: str) -> str:
    """A reference's repository path: its first component dropped when that is a registry host
    (it holds '.' or ':', or is localhost), as container runtimes read a reference."""
    first, _, rest = name.partition("/")
    return rest if rest and ("." in first or ":" in first or first == "localhost") else name


def image_for(reference: str, mirrors: tuple[str, ...] = ()) -> Image:
    """The facts of the image a reference names. `mirrors`: registries (host[/path]) the test's
    cluster pulls through, each holding the same repositories as upstream (a pull-through cache:
    mirror.gcr.io/vllm/vllm-openai is docker.io's vllm/vllm-openai)."""
    name = reference.split("@", 1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
    mirrored = [name[len(m) + 1 :] for m in mirrors if name.startswith(m.rstrip("/") + "/")]
    for entry, image in images():
        if name in entry.get("match", ()) or entry.get("tag") == tag:
            return image
        if any(path == _without_registry(m) for path in mirrored for m in entry.get("match", ())):
            return image
    raise EmulatorError(f"no image facts for {reference!r} (tests/emulator/images.yaml)")


# -- $(VAR) expansion ------------------------------------------------------------------------------
def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' expansion: `$(NAME)` from env when defined, kept as written when not; `$$` is
    one `$`; a `$` before anything else, or an unclosed `$(`, stays as it is."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            end = text.find(")", i + 2)
            if end < 0:
                out.append(text[i:])
                break
            name = text[i + 2 : end]
            out.append(env[name] if name in env else f"$({name})")
            i = end + 1
        else:
            out.append(c + nxt)
            i += 2
    return "".join(out)


# -- pods from workloads ---------------------------------------------------------------------------
@dataclass
class Pod:
    name: str
    hostname: str
    subdomain: str | None
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    spec: dict[str, Any]
    claims: dict[str, str] = field(default_factory=dict)  # volume name -> claim (volumeClaimTemplates)
    extra_env: dict[str, str] = field(default_factory=dict)  # what a controller injects (LWS)
    ip: str = ""

    def names(self) -> list[str]:
        """The names cluster DNS (with the pod's search path) resolves to this pod."""
        if not self.subdomain:
            return [self.hostname]
        base = f"{self.hostname}.{self.subdomain}"
        return [
            self.hostname,
            base,
            f"{base}.{self.namespace}",
            f"{base}.{self.namespace}.svc",
            f"{base}.{self.namespace}.svc.cluster.local",
        ]


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["metadata"]["name"], obj["metadata"].get("namespace") or NAMESPACE


def _template_pod(name: str, hostname: str, subdomain: str | None, ns: str, template: dict[str, Any]) -> Pod:
    meta = template.get("metadata") or {}
    spec = json.loads(json.dumps(template["spec"]))
    return Pod(name, hostname, subdomain, ns, dict(meta.get("labels") or {}), dict(meta.get("annotations") or {}), spec)


def pods_of(objects: list[dict[str, Any]]) -> list[Pod]:
    """The pods the workloads' controllers would create first: one replica of a Deployment, every
    ordinal of a StatefulSet, the first group of a LeaderWorkerSet (leader and workers)."""
    pods: list[Pod] = []
    for obj in objects:
        kind = obj.get("kind")
        if kind not in WORKLOADS:
            continue
        name, ns = _meta(obj)
        spec = obj["spec"]
        if kind == "Deployment":
            pods.append(_template_pod(f"{name}-emu-0", f"{name}-emu-0", None, ns, spec["template"]))
        elif kind == "StatefulSet":
            start = int((spec.get("ordinals") or {}).get("start", 0))  # spec.ordinals.start (1.31+ GA)
            for ordinal in range(start, start + int(spec.get("replicas", 1))):
                pod_name = f"{name}-{ordinal}"
                pod = _template_pod(pod_name, pod_name, spec.get("serviceName"), ns, spec["template"])
                pod.labels["statefulset.kubernetes.io/pod-name"] = pod_name
                pod.labels["apps.kubernetes.io/pod-index"] = str(ordinal)
                pod.claims = {
                    t["metadata"]["name"]: f"{t['metadata']['name']}-{pod_name}"
                    for t in spec.get("volumeClaimTemplates") or []
                }
                pods.append(pod)
        else:
            pods += _lws_pods(name, ns, spec)
    return pods


def _lws_pods(name: str, ns: str, spec: dict[str, Any]) -> list[Pod]:
    """LeaderWorkerSet v0.10: group 0's leader `<lws>-0` and workers `<lws>-0-<i>`, subdomain the
    LWS's name (its headless Service), and the env LWS injects into every container and init
    container (pkg/utils/pod/pod_utils.go): LWS_LEADER_ADDRESS `<leader>.<lws>.<namespace>`,
    LWS_GROUP_SIZE, LWS_WORKER_INDEX; labels leaderworkerset.sigs.k8s.io/name, group-index,
    worker-index (api/leaderworkerset/v1/leaderworkerset_types.go)."""
    tmpl = spec["leaderWorkerTemplate"]
    size = int(tmpl.get("size", 1))
    leader_name = f"{name}-0"
    address = f"{leader_name}.{name}.{ns}"
    pods = []
    for index in range(size):
        template = tmpl.get("leaderTemplate") if index == 0 and tmpl.get("leaderTemplate") else tmpl["workerTemplate"]
        pod_name = leader_name if index == 0 else f"{leader_name}-{index}"
        pod = _template_pod(pod_name, pod_name, name, ns, template)
        pod.labels.update(
            {
                "leaderworkerset.sigs.k8s.io/name": name,
                "leaderworkerset.sigs.k8s.io/group-index": "0",
                "leaderworkerset.sigs.k8s.io/worker-index": str(index),
            }
        )
        pod.annotations["leaderworkerset.sigs.k8s.io/size"] = str(size)
        pod.extra_env = {"LWS_LEADER_ADDRESS": address, "LWS_GROUP_SIZE": str(size), "LWS_WORKER_INDEX": str(index)}
        # leaderWorkerTemplate.volumeClaimTemplates (LWS >= v0.8): the leader StatefulSet <lws> and the
        # group's worker StatefulSet <lws>-0 each claim <template>-<pod> per pod
        pod.claims = {
            t["metadata"]["name"]: f"{t['metadata']['name']}-{pod_name}" for t in tmpl.get("volumeClaimTemplates") or []
        }
        pods.append(pod)
    return pods


# -- env, argv, volumes -----------------------------------------------------------------------------
def _service_env(services: list[dict[str, Any]], ns: str) -> dict[str, str]:
    """The kubelet's service links: for each Service of the namespace with a cluster IP,
    <NAME>_SERVICE_HOST/_SERVICE_PORT and the docker-links style <NAME>_PORT* variables."""
    env: dict[str, str] = {}
    for i, svc in enumerate(services):
        name, sns = _meta(svc)
        spec = svc.get("spec") or {}
        if sns != ns or spec.get("clusterIP") == "None" or not spec.get("ports"):
            continue
        ip = f"10.96.0.{10 + i}"  # a stand-in cluster IP: nothing listens there
        prefix = name.upper().replace("-", "_")
        first = spec["ports"][0]
        env[f"{prefix}_SERVICE_HOST"] = ip
        env[f"{prefix}_SERVICE_PORT"] = str(first["port"])
        env[f"{prefix}_PORT"] = f"{first.get('protocol', 'TCP').lower()}://{ip}:{first['port']}"
        for port in spec["ports"]:
            proto = port.get("protocol", "TCP")
            if port.get("name"):
                env[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port["port"])
            key = f"{prefix}_PORT_{port['port']}_{proto}"
            env[key] = f"{proto.lower()}://{ip}:{port['port']}"
            env[f"{key}_PROTO"] = proto.lower()
            env[f"{key}_PORT"] = str(port["port"])
            env[f"{key}_ADDR"] = ip
    return env


def _field(pod: Pod, path: str, node: str) -> str:
    m = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if m:
        values = pod.labels if m.group(1) == "labels" else pod.annotations
        return values.get(m.group(2), "")
    known = {
        "metadata.name": pod.name,
        "metadata.namespace": pod.namespace,
        "metadata.uid": f"uid-{pod.name}",
        "spec.nodeName": node,
        "spec.serviceAccountName": pod.spec.get("serviceAccountName", "default"),
        "status.podIP": pod.ip,
        "status.podIPs": pod.ip,
        "status.hostIP": f"{SUBNET}.1",
        "status.hostIPs": f"{SUBNET}.1",
    }
    if path not in known:
        raise EmulatorError(f"pod {pod.name}: fieldRef {path!r} is not one the API server accepts")
    return known[path]


def _resource(container: dict[str, Any], ref: dict[str, Any], node_cpus: int, node_memory: int) -> str:
    resources = container.get("resources") or {}
    section, _, res = ref["resource"].partition(".")
    value = (resources.get(section) or {}).get(res)
    if value is None:  # an unset limit reports the node's allocatable
        value = str(node_cpus) if res == "cpu" else str(node_memory) if res == "memory" else "0"
    if res == "cpu":
        amount, per = _cpu(str(value)), _cpu(str(ref.get("divisor", "1")))
    else:
        amount, per = float(quantity.parse(str(value))), float(quantity.parse(str(ref.get("divisor", "1"))))
    return str(math.ceil(amount / per))


def _cpu(text: str) -> float:
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


@dataclass
class World:
    """What the API server holds besides the workloads: ConfigMaps, Services, Secrets' values."""

    configmaps: dict[tuple[str, str], dict[str, Any]]
    services: list[dict[str, Any]]
    secrets: dict[tuple[str, str], str]
    # Secrets the cluster holds, whole (namespace, name) -> {key: value}: what envFrom secretRef reads
    secret_objects: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    mirrors: tuple[str, ...] = ()

    def secret(self, name: str, key: str) -> str:
        return self.secrets.get((name, key), f"{SECRET_STANDIN}-{name}-{key}")

    def configmap_key(self, ns: str, name: str, key: str, where: str) -> str:
        cm = self.configmaps.get((ns, name))
        if cm is None or key not in (cm.get("data") or {}):
            raise EmulatorError(f"{where}: ConfigMap {name} key {key} is not among the rendered objects")
        return cm["data"][key]


def container_env(pod: Pod, c: dict[str, Any], image: Image, world: World, node: dict[str, Any]) -> dict[str, str]:
    """The process environment: image ENV, then the service links and what a controller injects,
    then envFrom and env in order; returns it with the subset the kubelet expands from."""
    own: dict[str, str] = {}
    if pod.spec.get("enableServiceLinks", True):
        own.update(_service_env(world.services, pod.namespace))
    own.update(pod.extra_env)
    where = f"pod {pod.name} container {c['name']}"
    for source in c.get("envFrom") or []:
        prefix = source.get("prefix", "")
        # A missing source is the kubelet's CreateContainerConfigError, unless the ref is optional.
        if "configMapRef" in source:
            ref = source["configMapRef"]
            cm = world.configmaps.get((pod.namespace, ref["name"]))
            if cm is None and not ref.get("optional"):
                raise EmulatorError(f"{where}: envFrom ConfigMap {ref['name']} is neither rendered nor in the cluster")
            own.update({prefix + k: str(v) for k, v in ((cm or {}).get("data") or {}).items()})
        elif "secretRef" in source:
            ref = source["secretRef"]
            data = world.secret_objects.get((pod.namespace, ref["name"]))
            if data is None and not ref.get("optional"):
                raise EmulatorError(f"{where}: envFrom Secret {ref['name']} is not in the cluster")
            own.update({prefix + k: v for k, v in (data or {}).items()})
    for var in c.get("env") or []:
        name = var["name"]
        if "value" in var:
            own[name] = expand(str(var["value"]), own)
        elif "valueFrom" in var:
            vf = var["valueFrom"]
            if "fieldRef" in vf:
                own[name] = _field(pod, vf["fieldRef"]["fieldPath"], node["name"])
            elif "resourceFieldRef" in vf:
                ref = vf["resourceFieldRef"]
                target = next(x for x in _all_containers(pod) if x["name"] == ref.get("containerName", c["name"]))
                own[name] = _resource(target, ref, node["cpus"], node["memory"])
            elif "secretKeyRef" in vf:
                own[name] = world.secret(vf["secretKeyRef"]["name"], vf["secretKeyRef"]["key"])
            elif "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                own[name] = world.configmap_key(pod.namespace, ref["name"], ref["key"], where)
            else:
                raise EmulatorError(f"{where}: env {name}: unknown valueFrom {vf}")
        else:
            own[name] = ""
    return own


def _all_containers(pod: Pod) -> list[dict[str, Any]]:
    return [*(pod.spec.get("initContainers") or []), *pod.spec["containers"]]


def container_argv(c: dict[str, Any], image: Image, env: dict[str, str]) -> list[str]:
    if c.get("command"):
        argv = [*c["command"], *(c.get("args") or [])]
    elif c.get("args") is not None:
        argv = [*image.entrypoint, *c["args"]]
    else:
        argv = [*image.entrypoint, *image.cmd]
    if not argv:
        raise EmulatorError(f"container {c['name']}: no command (the image has no ENTRYPOINT or CMD)")
    return [expand(str(a), env) for a in argv]


def _probe(c: dict[str, Any], probe: dict[str, Any] | None, env: dict[str, str]) -> dict[str, Any] | None:
    if probe is None:
        return None
    out = dict(probe)
    ports = {p["name"]: p["containerPort"] for p in c.get("ports") or [] if p.get("name")}
    for handler in ("httpGet", "tcpSocket"):
        if handler in probe:
            h = dict(probe[handler])
            port = h["port"]
            if isinstance(port, str) and not port.isdigit():
                if port not in ports:
                    raise EmulatorError(f"container {c['name']}: {handler} port {port!r} names no container port")
                port = ports[port]
            h["port"] = int(port)
            out[handler] = h
    if "exec" in probe:
        out["exec"] = list(probe["exec"]["command"])  # the kubelet does not expand $(VAR) in probes
    return out


# -- the cluster ---------------------------------------------------------------------------------------
@dataclass
class PodResult:
    pod: Pod
    ready: bool
    why: str | None
    events: list[dict[str, Any]]
    dir: Path

    def log(self, container: str) -> str:
        path = self.dir / f"{container}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def report(self, container: str, engine: str) -> dict[str, Any] | None:
        path = self.dir / "state" / container / f"{engine}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def describe(self) -> str:
        logs = "\n".join(f"--- {c['name']}\n{self.log(c['name'])[-3000:]}" for c in _all_containers(self.pod))
        return f"pod {self.pod.name}: {'ready' if self.ready else 'NOT READY: ' + str(self.why)}\n{logs}"


@dataclass
class Group:
    pods: list[PodResult]

    @property
    def ready(self) -> bool:
        return all(p.ready for p in self.pods)

    def describe(self) -> str:
        return "\n".join(p.describe() for p in self.pods)

    def pod(self, name: str) -> PodResult:
        return next(p for p in self.pods if p.pod.name == name)


def pool_members(objects: list[dict[str, Any]], pods: list[Pod]) -> dict[str, list[str]]:
    """Each InferencePool's endpoints (ip:port for every target port of every pod its selector
    matches), as the Endpoint Picker learns them from the API server."""
    out: dict[str, list[str]] = {}
    for o in objects:
        if o.get("kind") != "InferencePool":
            continue
        spec = o["spec"]
        selector = spec["selector"]["matchLabels"]
        ports = [t["number"] for t in spec["targetPorts"]]
        members = [p for p in pods if all(p.labels.get(k) == v for k, v in selector.items())]
        out[o["metadata"]["name"]] = [f"{p.ip}:{port}" for p in members for port in ports]
    return out


class Cluster:
    """One network namespace with a bridge; pods join it; the parser daemon's socket and the
    captured endpoints are shared by every pod's stand-in engines."""

    def __init__(self, workdir: Path, run_dir: Path, scale: float = 0.05):
        self.workdir = workdir
        self.run_dir = run_dir  # parserd.sock, endpoints.json
        self.scale = scale
        self._next_ip = 2
        self._pools: dict[str, list[str]] = {}
        self.holder = subprocess.Popen(["unshare", "--net", "--", "sleep", "infinity"])
        self._ns("ip", "link", "set", "lo", "up")
        self._ns("ip", "link", "add", "br0", "type", "bridge")
        self._ns("ip", "addr", "add", f"{SUBNET}.1/24", "dev", "br0")
        self._ns("ip", "link", "set", "br0", "up")
        self._count = 0
        self.claims_dir = workdir / "claims"  # persistentVolumeClaims, by name: they outlive the pods

    def claim(self, name: str) -> Path:
        """The directory of claim ``name`` (made, empty, on first use)."""
        path = self.claims_dir / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def wipe_claims(self, *names: str) -> None:
        """Delete claims (all when no name is given), as deleting the PVC would."""
        for path in [self.claims_dir / n for n in names] if names else list(self.claims_dir.glob("*")):
            shutil.rmtree(path, ignore_errors=True)

    @property
    def gateway(self) -> str:
        return f"{SUBNET}.1"

    def _ns(self, *argv: str, pid: int | None = None) -> None:
        done = subprocess.run(
            ["nsenter", "-t", str(pid or self.holder.pid), "-n", *argv], capture_output=True, text=True
        )
        if done.returncode:
            raise EmulatorError(f"{' '.join(argv)}: {done.stderr.strip()}")

    def in_cluster(self, argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        """A process in the cluster's network namespace (e.g. a Valkey server the pods reach)."""
        return subprocess.Popen(["nsenter", "-t", str(self.holder.pid), "-n", *argv], **kw)

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait()

    def _ip(self) -> str:
        ip = f"{SUBNET}.{self._next_ip}"
        self._next_ip = 2 + (self._next_ip - 1) % 250
        return ip

    # -- starting a group -------------------------------------------------------------------------
    def start(
        self,
        objects: list[dict[str, Any]],
        *,
        node: dict[str, Any],
        secrets: dict[tuple[str, str], str] | None = None,
        extra_hosts: dict[str, str] | None = None,
        timeout: float = 90.0,
        liveness_rounds: int = 2,
        files: dict[str, str] | None = None,
        existing: list[dict[str, Any]] | None = None,
        mirrors: tuple[str, ...] = (),
    ) -> Group:
        """Start every pod the objects' workloads create, together; wait until each is ready or
        failed; tear them all down; return what happened. `node`: {"name", "memory" (bytes of
        RAM), "cpus"}. `files` replaces files baked into images (tests: a known-bad launcher).
        `existing`: ConfigMaps and Secrets (stringData) the user created before, as a cluster holds
        them; `mirrors`: the registries this cluster pulls through (see image_for)."""
        existing = existing or []
        world = World(
            {(_meta(o)[1], _meta(o)[0]): o for o in [*existing, *objects] if o.get("kind") == "ConfigMap"},
            [o for o in objects if o.get("kind") == "Service"],
            dict(secrets or {}),
            {
                (_meta(o)[1], _meta(o)[0]): dict(o.get("stringData") or {})
                for o in existing
                if o.get("kind") == "Secret"
            },
            tuple(mirrors),
        )
        pods = pods_of(objects)
        if not pods:
            raise EmulatorError("the objects hold no workload")
        for pod in pods:
            pod.ip = self._ip()
        self._pools = pool_members(objects, pods)
        hosts = self._hosts(pods, world, extra_hosts or {})
        self.ready_within = max(5.0, timeout - 5)
        self._count += 1
        group_dir = Path(tempfile.mkdtemp(prefix=f"group{self._count}-", dir=self.workdir))
        procs: list[tuple[Pod, Path, subprocess.Popen[bytes]]] = []
        try:
            for pod in pods:
                pod_dir = group_dir / pod.name
                plan = self._plan(pod, pod_dir, world, node, hosts, liveness_rounds, files or {})
                (pod_dir / "plan.json").write_text(json.dumps(plan, indent=1))
                proc = subprocess.Popen(
                    [
                        "unshare",
                        "--mount",
                        "--pid",
                        "--net",
                        "--uts",
                        "--ipc",
                        "--fork",
                        "--kill-child",
                        HOST_PYTHON,
                        str(PODINIT),
                        str(pod_dir / "plan.json"),
                    ],
                    stdout=(pod_dir / "podinit.out").open("wb"),
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                self._wire(pod, proc.pid, pod_dir)
                procs.append((pod, pod_dir, proc))
            deadline = time.monotonic() + timeout
            pending = {pod.name for pod, _, _ in procs}
            while pending and time.monotonic() < deadline:
                for pod, pod_dir, proc in procs:
                    if pod.name in pending and ((pod_dir / "outcome.json").exists() or proc.poll() is not None):
                        pending.discard(pod.name)
                time.sleep(0.05)
            time.sleep(0.2 if not pending else 0)
        finally:
            for _, _, proc in procs:
                self._stop(proc)
        results = []
        for pod, pod_dir, _ in procs:
            events = (
                [json.loads(line) for line in (pod_dir / "events.jsonl").read_text().splitlines()]
                if (pod_dir / "events.jsonl").exists()
                else []
            )
            outcome_path = pod_dir / "outcome.json"
            if outcome_path.exists():
                outcome = json.loads(outcome_path.read_text())
            else:
                tail = (pod_dir / "podinit.out").read_text(errors="replace")[-2000:]
                outcome = {"ready": False, "why": f"no outcome within {timeout:g}s; podinit: {tail}"}
            results.append(PodResult(pod, outcome["ready"], outcome.get("why"), events, pod_dir))
        return Group(results)

    def _stop(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass

    def _wire(self, pod: Pod, pid: int, pod_dir: Path) -> None:
        """A veth pair: eth0 in the pod, its peer on the cluster's bridge."""
        peer = f"vh{self._count}x{pod.ip.rsplit('.', 1)[1]}"
        deadline = time.monotonic() + 10
        while True:  # unshare has made the pod's network namespace once /proc/PID/ns/net differs
            try:
                if os.readlink(f"/proc/{pid}/ns/net") != os.readlink(f"/proc/{self.holder.pid}/ns/net") and os.readlink(
                    f"/proc/{pid}/ns/net"
                ) != os.readlink("/proc/self/ns/net"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise EmulatorError(f"pod {pod.name}: no network namespace")
            time.sleep(0.01)
        self._ns("ip", "link", "add", peer, "type", "veth", "peer", "name", "eth0", "netns", str(pid))
        self._ns("ip", "link", "set", peer, "master", "br0", "up")
        self._ns("ip", "addr", "add", f"{pod.ip}/24", "dev", "eth0", pid=pid)
        self._ns("ip", "link", "set", "eth0", "up", pid=pid)
        (pod_dir / "network-ready").touch()

    def _hosts(self, pods: list[Pod], world: World, extra: dict[str, str]) -> str:
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
        for pod in pods:
            lines.append(f"{pod.ip}\t" + " ".join(pod.names()))
        for svc in world.services:  # a Service's name resolves to (one of) the pods it selects
            name, ns = _meta(svc)
            selector = (svc.get("spec") or {}).get("selector") or {}
            target = next(
                (p for p in pods if selector and all(p.labels.get(k) == v for k, v in selector.items())), None
            )
            if target is not None:
                lines.append(f"{target.ip}\t{name} {name}.{ns} {name}.{ns}.svc {name}.{ns}.svc.cluster.local")
        for host, ip in extra.items():
            lines.append(f"{ip}\t{host}")
        return "\n".join(lines) + "\n"

    def _plan(
        self,
        pod: Pod,
        pod_dir: Path,
        world: World,
        node: dict[str, Any],
        hosts: str,
        liveness_rounds: int,
        files: dict[str, str],
    ) -> dict[str, Any]:
        pod_dir.mkdir(parents=True)
        (pod_dir / "hosts").write_text(hosts)
        (pod_dir / "hostname").write_text(pod.hostname + "\n")
        search = f"{pod.namespace}.svc.cluster.local svc.cluster.local cluster.local"
        (pod_dir / "resolv.conf").write_text(f"search {search}\noptions ndots:5\n")
        available = node["memory"] - node.get("reserved", 2 * 1024**3)
        (pod_dir / "meminfo").write_text(
            f"MemTotal:       {node['memory'] // 1024} kB\nMemFree:        {available // 1024} kB\n"
            f"MemAvailable:   {available // 1024} kB\n"
        )
        volumes = self._volumes(pod, pod_dir, world)
        init, main = [], []
        for c in pod.spec.get("initContainers") or []:
            init.append(self._container(pod, c, world, node, files, sidecar=c.get("restartPolicy") == "Always"))
        for c in pod.spec["containers"]:
            main.append(self._container(pod, c, world, node, files, sidecar=False))
        return {
            "dir": str(pod_dir),
            "log": str(pod_dir / "events.jsonl"),
            "outcome": str(pod_dir / "outcome.json"),
            "hostname": pod.hostname,
            "ip": pod.ip,
            "network_ready": str(pod_dir / "network-ready"),
            "files": {
                "meminfo": str(pod_dir / "meminfo"),
                "hosts": str(pod_dir / "hosts"),
                "hostname": str(pod_dir / "hostname"),
                "resolv.conf": str(pod_dir / "resolv.conf"),
            },
            "emulator": {"dir": str(HERE), "run": str(self.run_dir)},
            "volumes": volumes,
            "init": init,
            "main": main,
            "liveness_rounds": liveness_rounds,
            "ready_within": self.ready_within,
            "scale": {"factor": self.scale, "min": 0.05, "probe_timeout_min": 2.0},
        }

    def _container(
        self, pod: Pod, c: dict[str, Any], world: World, node: dict[str, Any], files: dict[str, str], sidecar: bool
    ) -> dict[str, Any]:
        image = image_for(c["image"], world.mirrors)
        own = container_env(pod, c, image, world, node)
        # what the runtime adds (containerd's CRI: HOSTNAME, and HOME from the user's passwd entry)
        env = {"HOSTNAME": pod.hostname, **image.env, "HOME": "/root", **own}
        argv = container_argv(c, image, own)
        image_files: dict[str, dict[str, Any]] = {}
        for path, f in image.files.items():
            text = files.get(path) or (ROOT / f["source"]).read_text()
            image_files[path] = {"text": text, "mode": f["mode"]}
        for engine, directory in image.engines.items():
            image_files[f"{directory}/{engine}"] = {"text": _wrapper(engine, self._pools), "mode": 0o755}
        site = "/usr/local/lib/python3.11/dist-packages"  # on the system python3's path (the image's python)
        if image.lmcache:
            image_files[f"{site}/lmcache-{image.lmcache}.dist-info/METADATA"] = {
                "text": f"Metadata-Version: 2.1\nName: lmcache\nVersion: {image.lmcache}\n",
                "mode": 0o644,
            }
            # the package, as far as the launcher's kernel check imports it: lmcache.cuda_ops loads, or
            # fails as CPython reports an extension built against another torch (images.yaml lmcacheKernels)
            image_files[f"{site}/lmcache/__init__.py"] = {"text": "", "mode": 0o644}
            image_files[f"{site}/lmcache/cuda_ops.py"] = {
                "text": "KERNELS = 44\n"
                if image.lmcache_kernels
                else f"raise ImportError('{site}/lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so: "
                f"undefined symbol: {KERNEL_SYMBOL}')\n",
                "mode": 0o644,
            }
        if image.torch:
            image_files[f"{site}/torch-{image.torch}.dist-info/METADATA"] = {
                "text": f"Metadata-Version: 2.1\nName: torch\nVersion: {image.torch}\n",
                "mode": 0o644,
            }
        security = c.get("securityContext") or {}
        limits = (c.get("resources") or {}).get("limits") or {}
        return {
            "name": c["name"],
            "sidecar": sidecar,
            "argv": argv,
            "env": env,
            "workdir": c.get("workingDir") or image.workdir,
            "mounts": [
                {
                    "volume": m["name"],
                    "path": m["mountPath"],
                    "subPath": m.get("subPath"),
                    "readOnly": bool(m.get("readOnly")),
                }
                for m in c.get("volumeMounts") or []
            ],
            "memory_limit": quantity.to_bytes(str(limits["memory"])) if "memory" in limits else None,
            "image_files": image_files,
            "probes": {
                k: _probe(c, c.get(k), env)
                for k in ("startupProbe", "readinessProbe", "livenessProbe")
                if c.get(k) is not None
            },
            "no_new_privs": security.get("allowPrivilegeEscalation") is False,
            "drop_all": "ALL" in ((security.get("capabilities") or {}).get("drop") or []),
        }

    def _volumes(self, pod: Pod, pod_dir: Path, world: World) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for v in pod.spec.get("volumes") or []:
            name = v["name"]
            path = pod_dir / "volumes" / name
            path.mkdir(parents=True)
            entry: dict[str, Any] = {"path": str(path)}
            if "emptyDir" in v:
                ed = v["emptyDir"] or {}
                if ed.get("medium") == "Memory":
                    entry["tmpfs"] = True
                    if ed.get("sizeLimit"):
                        entry["size"] = quantity.to_bytes(str(ed["sizeLimit"]))
            elif "configMap" in v:
                self._configmap_files(pod, v["configMap"], path, world)
            elif "secret" in v:
                self._secret_files(v["secret"], path, world)
            elif "projected" in v:
                for source in v["projected"].get("sources") or []:
                    if "configMap" in source:
                        self._configmap_files(pod, source["configMap"], path, world, v["projected"].get("defaultMode"))
                    elif "secret" in source:
                        self._secret_files(source["secret"], path, world, v["projected"].get("defaultMode"))
                    elif "downwardAPI" in source:
                        self._downward(pod, source["downwardAPI"].get("items") or [], path)
                    elif "serviceAccountToken" in source:
                        self._file(path / source["serviceAccountToken"]["path"], "kvgen-emulator-token", 0o644)
                    else:
                        raise EmulatorError(f"pod {pod.name}: projected source {sorted(source)} is not emulated")
            elif "downwardAPI" in v:
                self._downward(pod, v["downwardAPI"].get("items") or [], path)
            elif "persistentVolumeClaim" in v:
                entry["path"] = str(self.claim(v["persistentVolumeClaim"]["claimName"]))  # kept across starts
            elif name in pod.claims:
                entry["path"] = str(self.claim(pod.claims[name]))
            elif "ephemeral" in v:
                pass  # a bound, empty volume, deleted with the pod
            elif "hostPath" in v:
                raise EmulatorError(f"pod {pod.name}: hostPath volume {name} is not emulated")
            else:
                raise EmulatorError(
                    f"pod {pod.name}: volume {name} has a source the emulator does not know: {sorted(v)}"
                )
            out[name] = entry
        for volume, claim in pod.claims.items():  # volumeClaimTemplates: the pod's claim <template>-<pod>
            if volume not in out:
                out[volume] = {"path": str(self.claim(claim))}
        return out

    def _file(self, path: Path, text: str, mode: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)

    def _configmap_files(
        self, pod: Pod, ref: dict[str, Any], path: Path, world: World, default: int | None = None
    ) -> None:
        cm = world.configmaps.get((pod.namespace, ref["name"]))
        if cm is None and ref["name"] == "kube-root-ca.crt":
            # every namespace has it: kube-controller-manager's root-ca-cert-publisher writes the cluster's CA
            cm = {"data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nkvgen-emulator\n-----END CERTIFICATE-----\n"}}
        if cm is None:
            if ref.get("optional"):
                return
            raise EmulatorError(f"pod {pod.name}: ConfigMap {ref['name']} is not among the rendered objects")
        data = cm.get("data") or {}
        mode = ref.get("defaultMode", default if default is not None else 0o644)
        items = ref.get("items") or [{"key": k, "path": k} for k in data]
        for item in items:
            if item["key"] not in data:
                raise EmulatorError(f"pod {pod.name}: ConfigMap {ref['name']} has no key {item['key']}")
            self._file(path / item["path"], data[item["key"]], item.get("mode", mode))

    def _secret_files(self, ref: dict[str, Any], path: Path, world: World, default: int | None = None) -> None:
        mode = ref.get("defaultMode", default if default is not None else 0o644)
        for item in ref.get("items") or []:
            self._file(
                path / item["path"],
                world.secret(ref["secretName"] if "secretName" in ref else ref["name"], item["key"]),
                item.get("mode", mode),
            )

    def _downward(self, pod: Pod, items: list[dict[str, Any]], path: Path) -> None:
        for item in items:
            if "fieldRef" in item:
                text = _field(pod, item["fieldRef"]["fieldPath"], "emulated-node")
            else:
                raise EmulatorError(f"pod {pod.name}: downwardAPI item {item} is not emulated")
            self._file(path / item["path"], text, item.get("mode", 0o644))


# the pinned Endpoint Picker's flags and plugin types, read from its source (tests/data/routing/)
PICKER_FACTS = ROOT / "tests" / "data" / "routing" / "llm-d-router-v0.9.0.json"
# the pinned routing sidecar's flags, likewise
SIDECAR_FACTS = ROOT / "tests" / "data" / "routing" / "llm-d-router-v0.9.0-pd-sidecar.json"


def _wrapper(engine: str, pools: dict[str, list[str]] | None = None) -> str:
    """The engine on the image's PATH: the stand-in, with the emulator's settings (paths as the
    container sees them: the run directory and this container's state directory). The Endpoint
    Picker's also carries the router's flags and plugin types, and each InferencePool's members
    (ip:targetPort), what the API server would list for it."""
    env = {
        "KVGEN_EMU_PARSERD": "/opt/kvgen-emulator-run/parserd.sock",
        "KVGEN_EMU_ENDPOINTS": "/opt/kvgen-emulator-run/endpoints.json",
        "KVGEN_EMU_REPORT": f"/opt/kvgen-emulator-state/{engine}.json",
        "KVGEN_EMU_TIMEOUT": "20",
    }
    if engine == "epp":
        facts = json.loads(PICKER_FACTS.read_text(encoding="utf-8"))
        env["KVGEN_EMU_EPP_FLAGS"] = json.dumps(sorted(set(facts["flags"]) - set(facts["deprecatedFlags"])))
        env["KVGEN_EMU_EPP_PLUGINS"] = json.dumps(sorted(facts["pluginTypes"]))
        env["KVGEN_EMU_POOLS"] = json.dumps(pools or {}, sort_keys=True)
    if engine == "pd-sidecar":
        facts = json.loads(SIDECAR_FACTS.read_text(encoding="utf-8"))
        env["KVGEN_EMU_PDSIDECAR_FLAGS"] = json.dumps(sorted(set(facts["flags"]) - set(facts["deprecatedFlags"])))
    return wrappers.script(engine, env, HOST_PYTHON, "/opt/kvgen-emulator/engines/standin.py")


def node_for(instance: Any) -> dict[str, Any]:
    """The node as the launcher sees it: the instance's RAM and CPUs (a kvgen InstanceInfo)."""
    return {
        "name": f"node-{instance.type or 'custom'}",
        "memory": int(instance.memory_bytes),
        "cpus": int(instance.cpu or 8),
    }


def objects_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def available() -> str | None:
    """Why the emulator cannot run here (None when it can): it needs root for namespaces."""
    if os.geteuid() != 0:
        return "the pod emulator needs root (mount, PID and network namespaces)"
    for tool in ("unshare", "nsenter", "ip", "mount", "setpriv"):
        if shutil.which(tool) is None:
            return f"the pod emulator needs {tool}"
    if not Path(HOST_PYTHON).exists():
        return f"the pod emulator needs {HOST_PYTHON}"
    return None


def iter_containers(pod: Pod) -> Iterator[dict[str, Any]]:
    yield from _all_containers(pod)
