"""From a valid spec to a plan: the resolved model and node, the decision and the sizes, or
every problem found. The chart's counterpart is ``kvgen.plan`` (templates/plan/_plan.tpl).

``kvgen.context`` turns a plan into the values the object templates lay out.
"""

from __future__ import annotations

from typing import Any

from kvgen.core import quantity
from kvgen.core.errors import Path, Problem, SpecError
from kvgen.data import catalog, flags, kube
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.plan import (
    apiserver,
    extra_args,
    extra_objects,
    gpu_access,
    images,
    kvcache,
    lora,
    model_source,
    pod_settings,
    ports,
    quantization,
    remote,
    routing,
    rules,
    sizing,
    tensor_parallel,
)
from kvgen.plan.types import WORKER_SUFFIX, Facts, Plan
from kvgen.spec.models import Spec, own_rows


def _check_structure(
    spec: Spec, model: ModelInfo, instance: InstanceInfo, k8s_version: str
) -> tuple[int, list[Problem]]:
    problems: list[Problem] = []
    p = spec.parallelism
    total = p.tensor * p.pipeline * p.data
    gpus_per_pod = 0
    if total % p.nodes:
        problems.append(
            Problem(
                ("parallelism", "nodes"),
                f"tensor x pipeline x data = {total} GPUs cannot be split evenly over {p.nodes} nodes",
                "make tensor x pipeline x data a multiple of nodes",
            )
        )
    elif instance.gpus == 0:
        if total > 1 or p.nodes > 1:
            problems.append(
                Problem(
                    ("parallelism",), f"{instance.type or 'the instance'} has no GPU; parallelism must stay at 1", None
                )
            )
    else:
        gpus_per_pod = total // p.nodes
        if gpus_per_pod > instance.gpus:
            problems.append(
                Problem(
                    ("parallelism",),
                    f"tensor {p.tensor} x pipeline {p.pipeline} x data {p.data} needs {gpus_per_pod} GPUs per node, "
                    f"but {instance.type or 'the instance'} has {instance.gpus}",
                    "lower the parallel sizes, spread them over more nodes (parallelism.nodes), or pick an instance with more GPUs",
                )
            )
    problems += tensor_parallel.check(spec, model)  # vLLM 0.33's divisibility checks (files/tensor-parallel.yaml)
    if p.nodes > 1 and spec.replicas != 1 and spec.multi_node.engine == "statefulset":
        problems.append(
            Problem(
                ("replicas",),
                f"a server spanning {p.nodes} nodes is rendered as one StatefulSet; replicas must be 1",
                "render one spec per server, or set multiNode.engine: leaderworkerset (one group of nodes per replica)",
            )
        )
    a = spec.autoscaling
    if a is not None and p.nodes > 1:
        problems.append(
            Problem(
                ("autoscaling",),
                f"a server spanning {p.nodes} nodes is one pair of StatefulSets (rank 0 and ranks 1..); kvgen does not autoscale it",
                "leave autoscaling out, or autoscale single-node servers",
            )
        )
    if a is not None and a.min_replicas > a.max_replicas:
        problems.append(
            Problem(
                ("autoscaling", "minReplicas"),
                f"{a.min_replicas} is above autoscaling.maxReplicas ({a.max_replicas})",
                None,
            )
        )
    if a is not None and a.hpa is not None and a.min_replicas == 0:
        problems.append(
            Problem(
                ("autoscaling", "minReplicas"),
                "an HPA cannot scale to zero: minReplicas must be at least 1",
                "use autoscaling.keda to scale to zero",
            )
        )
    problems += model_source.check(spec, model.download_bytes)  # model.cache
    problems += lora.check(spec)  # model.lora
    # flags kvgen owns (files/managed-flags.yaml), and anything vLLM itself would refuse
    problems += extra_args.check_extra_args(list(spec.vllm.extra_args))
    problems += routing.check(spec)  # routing: its fields against its mode (docs/routing.md)
    # Kubernetes objects embedded in the spec, checked against the target version's schema
    embedded: list[tuple[tuple[str | int, ...], str, Any]] = []
    for i, tier in enumerate(spec.kv_cache_offloading.secondary):
        pvc = tier.file_system.pvc
        if pvc and pvc.spec is not None:
            embedded.append(
                (
                    ("kvCacheOffloading", "secondary", i, "fileSystem", "pvc", "spec"),
                    "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
                    pvc.spec,
                )
            )
    for i, tol in enumerate(spec.scheduling.tolerations):
        embedded.append((("scheduling", "tolerations", i), "io.k8s.api.core.v1.Toleration", tol))
    if spec.scheduling.affinity:
        embedded.append((("scheduling", "affinity"), "io.k8s.api.core.v1.Affinity", spec.scheduling.affinity))
    for i, env in enumerate(spec.vllm.env):
        if env.value_from is not None:
            embedded.append((("vllm", "env", i, "valueFrom"), "io.k8s.api.core.v1.EnvVarSource", env.value_from))
    for i, c in enumerate(spec.scheduling.topology_spread_constraints):
        embedded.append(
            (("scheduling", "topologySpreadConstraints", i), "io.k8s.api.core.v1.TopologySpreadConstraint", c)
        )
    for i, vol in enumerate(spec.pod.volumes):
        embedded.append((("pod", "volumes", i), "io.k8s.api.core.v1.Volume", vol))
    for i, m in enumerate(spec.vllm.volume_mounts):
        embedded.append((("vllm", "volumeMounts", i), "io.k8s.api.core.v1.VolumeMount", m))
    if spec.pod.security_context:
        embedded.append(
            (("pod", "securityContext"), "io.k8s.api.core.v1.PodSecurityContext", spec.pod.security_context)
        )
    if spec.pod.container_security_context:
        embedded.append(
            (
                ("pod", "containerSecurityContext"),
                "io.k8s.api.core.v1.SecurityContext",
                spec.pod.container_security_context,
            )
        )
    if a is not None and a.hpa is not None:
        for i, metric in enumerate(a.hpa.metrics):
            embedded.append((("autoscaling", "hpa", "metrics", i), "io.k8s.api.autoscaling.v2.MetricSpec", metric))
    for base, definition, data in embedded:
        for sub, message in kube.validate_definition(definition, data, k8s_version):
            problems.append(Problem((*base, *sub), message, None))
    return gpus_per_pod, problems


def statefulset_names(spec: Spec) -> list[str]:
    """The StatefulSets a multi-node server makes: rank 0, then ranks 1.. (none otherwise). A
    LeaderWorkerSet's controller makes them: the leaders' <name>, each group's workers' <name>-<group>."""
    if spec.parallelism.nodes == 1:  # model.cache.claimTemplate: the server's pods are one StatefulSet's
        c = spec.model.cache
        return [spec.object_name] if c is not None and c.claim_template is not None else []
    if spec.multi_node.engine == "leaderworkerset":
        return [spec.object_name, f"{spec.object_name}-{max(spec.replicas - 1, 0)}"]
    return [spec.object_name, f"{spec.object_name}{WORKER_SUFFIX}"]


LOAD_BALANCER_WARNING = (
    "service.type LoadBalancer exposes the OpenAI API outside the cluster without an API key: anyone who reaches "
    "it can use the model; set service.apiKeySecret (a Secret vLLM reads as VLLM_API_KEY)"
)


# docs/multi-node.md: the LeaderWorkerSet's restart policy (files/runtime.yaml wiring.lws.restartPolicy)
def lws_sidecar_restart_warning() -> str:
    policy = catalog.runtime()["wiring"]["lws"]["restartPolicy"]
    return (
        "multiNode.engine leaderworkerset recreates the whole group when any container restarts, the LMCache sidecar "
        f"included (restartPolicy {policy}; LWS v0.10 counts init containers' restarts), and every pod "
        "of it downloads the weights again into its emptyDir model cache; keep them on a claim (model.uri pvc://...)"
    )


TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")  # what huggingface_hub reads a token from


def gated_warning(spec: Spec) -> str | None:
    """A gated model (models.yaml `gated:`) with no Hugging Face token: vLLM's download fails."""
    if spec.model.hf_token_secret is not None or any(e.name in TOKEN_ENV for e in spec.vllm.env):
        return None
    if not catalog.gated(spec.model.id):
        return None
    return (
        f"{spec.model.id} is gated on Hugging Face and model.hfTokenSecret is not set: vLLM cannot download it "
        "without a token of an account that accepted the model's terms; set model.hfTokenSecret to a Secret holding one"
    )


STRICT_HINT = "change the spec so that it no longer warns, or remove strict: true to render with the warning"

# the tiers a spec can set (kvCacheOffloading.<field>), in the order a warning names them
TIER_FIELDS = ("cpu", "cpuMemoryUtilization", "secondary", "remote")


def dropped_tiers_warning(spec: Spec, decision: rules.Decision) -> str | None:
    """The tiers the spec sets that a capability rule drops (offloading off for a reason other than
    the spec's own switch, disabled-by-config): no fallback goes unsaid."""
    if decision.enabled or decision.reason_code == "disabled-by-config":
        return None
    o = spec.kv_cache_offloading
    values: dict[str, object] = {
        "cpu": o.cpu,
        "cpuMemoryUtilization": o.cpu_memory_utilization,
        "secondary": o.secondary or None,
        "remote": o.remote,
    }
    fields = [f"kvCacheOffloading.{k}" for k in TIER_FIELDS if values[k] is not None]
    if not fields:
        return None
    text = (
        f"{', '.join(fields)} {'is' if len(fields) == 1 else 'are'} dropped: KV-cache offloading is off "
        f"(rule {decision.reason_code}: {decision.reason})"
    )
    if decision.reason_code == "cpu-instance":
        text += f", sized by VLLM_CPU_KVCACHE_SPACE={sizing.CPU_BACKEND_KV_SPACE_GIB} GiB"
    return text


def shared_tier_revision_warning(spec: Spec, offloading: bool) -> list[str]:
    """A shared tier and a model vLLM downloads by id at a --revision: LMCache keys the entries by the id alone."""
    o, rev = spec.kv_cache_offloading, model_source.revision(spec)
    if not offloading or o.backend != "lmcache" or o.remote is None or model_source.local(spec) or not rev:
        return []
    return [
        f"kvCacheOffloading.remote: LMCache keys the shared tier by the model vLLM serves ({spec.model.id}), not by "
        f"its revision ({rev}): another revision of it on the same server would read these entries; serve it from "
        "model.cache, whose directory names the revision"
    ]


def gpu_memory_warning(spec: Spec, instance: InstanceInfo) -> list[str]:
    """instance.gpuMemory given for a GPU files/instances.yaml gpuModels knows: which figure kvgen plans from."""
    if spec.instance.gpu_memory is None or not instance.gpu_reported_bytes:
        return []
    return [
        f"instance.gpuMemory is taken as the marketed size of {instance.gpu_model}: kvgen plans from the "
        f"{quantity.format_bytes(instance.gpu_reported_bytes)} it reports to CUDA (files/instances.yaml gpuModels; "
        "vLLM's total_memory), not from gpuMemory"
    ]


def has_api_key(spec: Spec) -> bool:
    """vLLM requires a key: from service.apiKeySecret, a VLLM_API_KEY env var, or --api-key
    (which the credential check allows only as a $(VAR) reference)."""
    return (
        spec.service.api_key_secret is not None
        or any(e.name == "VLLM_API_KEY" for e in spec.vllm.env)
        or any(flags.flag_name(a) == "--api-key" for a in spec.vllm.extra_args)
    )


def related(path: Path, paths: list[Path]) -> bool:
    """``path`` is one of ``paths``, or above or below one."""
    return any(path[: len(p)] == p or p[: len(path)] == path for p in paths)


# the problems of a complete plan whose pod does not fit its node (kvgen explain still shows its budget)
FIT_CODES = frozenset({sizing.FIT_MEMORY, sizing.FIT_DISK, sizing.FIT_WEIGHTS, kvcache.FIT_CONTEXT})


def build(spec: Spec, k8s_version: str = kube.DEFAULT_VERSION) -> Plan:
    """Resolve, decide and size; raise SpecError with every problem found (not yet located in a
    file: kvgen.app.compiler does that), except that the pod does not fit its node (FIT_CODES): a plan
    complete but for that is returned with those problems in ``plan.problems``, which render refuses
    and kvgen explain shows."""
    own = own_rows(spec)
    model, problems = catalog.resolve_model(spec.model, own.get("models"))
    instance, inst_problems = catalog.resolve_instance(spec.instance, own.get("instances"))
    problems += inst_problems
    # what the API server would refuse (kvgen.plan.apiserver): before sizing, which adds sizes up
    problems += apiserver.check_spec(spec, instance, statefulset_names(spec))
    problems += remote.check(spec)  # kvCacheOffloading.remote: the lmcache backend's, a URL the resp adapter takes
    problems += extra_objects.check(spec, k8s_version)  # extraObjects: well formed, no secret values, valid
    if model is None or instance is None:  # what needs neither is checked still: every problem in one run
        raise SpecError("", problems + extra_args.check_extra_args(list(spec.vllm.extra_args)) + routing.check(spec))
    gpus_per_pod, structural = _check_structure(spec, model, instance, k8s_version)
    problems += structural
    # sizing goes on past the problems above (every problem in one run), unless it would size what is wrong:
    # GPUs that do not divide (parallelism), or weights and KV bytes whose dtype flags it cannot read
    if any(p.path[:1] == ("parallelism",) for p in structural):
        raise SpecError("", problems)
    model, dtype_problems = quantization.apply(spec, model)  # the weights' and KV's bytes (files/quantization.yaml)
    if dtype_problems:  # the flag vLLM refuses is reported once, at its index, by check_extra_args
        said = {p.path for p in problems}
        raise SpecError("", problems + [p for p in dtype_problems if p.path not in said])
    refused = [p.path for p in problems]
    decision = rules.decide(rules.Facts(spec, model, instance))
    backend = spec.kv_cache_offloading.backend if decision.enabled else None
    access = gpu_access.resolve(spec, backend)
    # a mode below its minKubeVersion (files/gpu-access.yaml); service.port on a port the pod binds
    problems += gpu_access.check(access, k8s_version) + ports.check(spec, backend)
    context_length = kvcache.context_length(spec, model, instance)
    sz = sizing.size(spec, model, instance, decision, gpus_per_pod)
    # a size or length refused above is not sized again: what sizing finds there is its consequence
    found = [p for p in sz.problems + context_length.problems if not related(p.path, refused)]
    unfit = [p for p in found if p.code in FIT_CODES]
    problems += [p for p in found if p.code not in FIT_CODES]
    if problems:
        raise SpecError("", problems + unfit)
    warnings = list(sz.warnings) + context_length.warnings + quantization.warnings(spec, model)
    warnings += gpu_memory_warning(spec, instance)
    # settings that apply only to others (files/rules.yaml warnings)
    warnings += rules.unused_settings({"spec": spec, "model": model, "instance": instance, "gpuAccess": access})
    if spec.service.type == "LoadBalancer" and not has_api_key(spec):
        warnings.append(LOAD_BALANCER_WARNING)
    lws = spec.parallelism.nodes > 1 and spec.multi_node.engine == "leaderworkerset"
    if lws and access is not None and access.mode != "in-container" and not model_source.local(spec):
        warnings.append(lws_sidecar_restart_warning())
    warnings += model_source.warnings(spec)
    warnings += lora.warnings(spec, model)
    warnings += shared_tier_revision_warning(spec, decision.enabled)
    gated = gated_warning(spec)
    if gated:
        warnings.append(gated)
    plan = Plan(spec, model, instance, decision, sz, gpus_per_pod, context_length, warnings, access, unfit, k8s_version)
    plan.warnings += gpu_access.warnings(spec, access) + images.warnings(plan)
    dropped = dropped_tiers_warning(spec, decision)
    plan.warnings += [dropped] if dropped else []
    plan.warnings += images.cpu_warnings(plan)
    plan.warnings += extra_objects.warnings(spec, k8s_version)
    plan.warnings += routing.warnings(spec)
    if spec.strict and plan.warnings:
        raise SpecError("", [*unfit, *(Problem(("strict",), w, STRICT_HINT) for w in plan.warnings)])
    plan.facts = layout_facts(plan)
    return plan


def _tier_capacities(plan: Plan) -> list[int | None]:
    """Each disk tier's capacity where kvgen knows it (an emptyDir's size, a claim template's request), while
    offloading is on."""
    if plan.backend is None:
        return []
    out: list[int | None] = []
    for tier in plan.spec.kv_cache_offloading.secondary:
        fs = tier.file_system
        if fs.empty_dir is not None:
            out.append(fs.empty_dir.size.bytes)
        elif fs.pvc is not None and fs.pvc.spec is not None:
            storage = ((fs.pvc.spec.get("resources") or {}).get("requests") or {}).get("storage")
            out.append(quantity.to_bytes(storage) if storage is not None else None)
        else:
            out.append(None)
    return out


def _lora_doc(plan: Plan) -> dict[str, Any] | None:
    """model.lora as the layout reads it (kvgen.plan.lora)."""
    spec = plan.spec
    if spec.model.lora is None:
        return None
    doc: dict[str, Any] = {
        "args": lora.args(spec),
        "volumes": lora.volumes(spec),
        "mounts": lora.mounts(spec),
        "downloads": lora.downloads(spec),
        "hostBytes": lora.host_bytes(spec, plan.model, max(1, plan.gpus_per_pod)),
    }
    gpu = lora.gpu_bytes(spec, plan.model)
    if gpu is not None:
        doc["gpuBytes"] = gpu
    return doc


def layout_facts(plan: Plan) -> Facts:
    """The decisions of the planning modules the layout needs (kvgen.plan.types.Facts), each made here, where
    it applies, so that kvgen/context/ reads the plan and calls none of them."""
    spec, o = plan.spec, plan.spec.kv_cache_offloading
    cache = spec.model.cache
    downloads = model_source.downloads(spec)
    template = cache.claim_template if cache is not None else None
    capacities = _tier_capacities(plan)
    r = spec.routing
    prefix = r.mode == "gateway" and (r.picker is None or r.picker.scorers.prefix_cache)
    picker_image = None
    if r.mode == "gateway":
        pin = catalog.runtime()["picker"]["image"]
        reference = f"{pin['repository']}@{pin['digest']}" if pin["digest"] else f"{pin['repository']}:{pin['tag']}"
        picker_image = images.relocate(reference, spec.images.registry)
    routing_sidecar_image = None
    if r.mode == "gateway" and spec.disaggregation.role == "decode":
        pin = catalog.runtime()["picker"]["sidecar"]["image"]
        reference = f"{pin['repository']}@{pin['digest']}" if pin["digest"] else f"{pin['repository']}:{pin['tag']}"
        routing_sidecar_image = images.relocate(reference, spec.images.registry)
    return Facts(
        vllm_image=images.vllm_image(plan),
        vllm_tag=images.vllm_tag(plan),
        vllm_pull_policy=images.vllm_pull_policy(plan),
        lmcache_image=images.lmcache_image(plan) if plan.sidecar else None,
        lmcache_pull_policy=images.lmcache_pull_policy(plan) if plan.sidecar else None,
        picker_image=picker_image,
        routing_sidecar_image=routing_sidecar_image,
        model_local=model_source.local(spec),
        model_dir=model_source.model_dir(spec),
        model_mount=model_source.mount(spec),
        model_volume=model_source.volume(spec),
        downloads=downloads,
        download_args=model_source.download_args(spec) if downloads else [],
        cache_path=model_source.cache_path(spec) if cache is not None and cache.claim is not None else None,
        weights_claim_size=(
            sizing.weights_claim_size(spec, plan.model) if template is not None and template.size is None else None
        ),
        extra_args=model_source.without_revision(list(spec.vllm.extra_args)) if cache else list(spec.vllm.extra_args),
        gpu_env=gpu_access.env(plan.gpu_access),
        gpu_claim_name=gpu_access.CLAIM_NAME,
        tolerations=gpu_access.tolerations(spec, plan.gpu_access),
        pod_security_context=pod_settings.pod_security_context(spec),
        container_security_context=pod_settings.container_security_context(spec),
        service_account_name=pod_settings.service_account_name(spec),
        remote_adapter=remote.adapter(o.remote) if o.remote is not None else None,
        remote_env=remote.env(o.remote),
        tier_capacities=capacities,
        startup_failure_threshold=sizing.startup_failure_threshold(spec, plan.model),
        download_seconds=sizing.download_seconds(plan.model),
        cpu_backend_kv_space_gib=sizing.CPU_BACKEND_KV_SPACE_GIB,
        lmcache_server_overhead=sizing.LMCACHE_SERVER_OVERHEAD,
        lmcache_l1_init_gib=sizing.LMCACHE_L1_INIT_GIB,
        download_cpu=sizing.DOWNLOAD_CPU,
        download_memory=sizing.DOWNLOAD_MEMORY,
        lora=_lora_doc(plan),
        block_size_tokens=routing.block_size_tokens(plan) if prefix else None,
        lru_capacity=routing.lru_capacity(plan, sum(c or 0 for c in capacities)) if prefix else None,
    )
