"""The context: every value the object templates receive, as one typed structure.

It is what the chart's layout (``kvgen.layout``, templates/context/_context.tpl) builds; kvgen runs the
same layout translated (kvgen/context/layout.py, kvgen.context.run); the templates in
charts/kvgen/templates (and the Jinja2 copies generated from them into templates/) only lay it
out. The tests render both for every example and for generated specs and compare them key by key.

Rules both faces keep:
- keys are camelCase, as in the chart (Kubernetes objects inside, such as an env var's
  ``valueFrom`` or a toleration, are passed through as the spec wrote them);
- absent is said one way: the key is left out (never null, an empty string, list or map).
  A boolean is always present.
"""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

_STRICT = ConfigDict(extra="forbid", strict=True)

KubeObject = dict[str, Any]  # a piece of a Kubernetes object, passed through as data


@with_config(_STRICT)
class Resources(TypedDict):
    requests: dict[str, str | int]
    limits: dict[str, str | int]
    claims: NotRequired[list[dict[str, str]]]  # gpuAccess dra: the pod claim this container uses


@with_config(_STRICT)
class ProbeTiming(TypedDict):
    initialDelaySeconds: NotRequired[int]  # probes.*.initialDelaySeconds, when set
    periodSeconds: int
    timeoutSeconds: int
    failureThreshold: int


@with_config(_STRICT)
class ProbeSet(TypedDict):
    """vLLM's HTTP probes on /health (spec probes)."""

    startup: ProbeTiming
    readiness: ProbeTiming
    liveness: ProbeTiming


@with_config(_STRICT)
class VllmContainer(TypedDict):
    name: str
    image: str
    imagePullPolicy: NotRequired[str]  # images.vllm (images.vllmCpu) pullPolicy, when set
    command: NotRequired[list[str]]  # gpuAccess in-container: the launcher (which runs `vllm serve`)
    args: list[str]
    envFrom: NotRequired[list[KubeObject]]  # vllm.envFrom
    env: NotRequired[list[KubeObject]]
    ports: list[KubeObject]
    resources: Resources
    probes: NotRequired[ProbeSet]  # HTTP probes on vLLM's API (ranks 1.. of a multi-node server serve none)
    volumeMounts: list[KubeObject]
    securityContext: KubeObject  # files/runtime.yaml securityContext.container merged with the spec's


@with_config(_STRICT)
class Sidecar(TypedDict):
    """The LMCache MP server as a native sidecar (gpuAccess visible-devices or dra)."""

    name: str
    image: str
    imagePullPolicy: NotRequired[str]  # images.lmcache pullPolicy, else images.vllm's, when set
    command: list[str]
    args: list[str]
    env: NotRequired[list[KubeObject]]
    ports: NotRequired[list[KubeObject]]  # the server's HTTP port, when a PodMonitor scrapes it
    resources: Resources
    probeCommand: list[str]  # the startup probe: the server's health endpoint answers
    volumeMounts: list[KubeObject]
    securityContext: KubeObject


@with_config(_STRICT)
class SidecarProbe(TypedDict):
    initialDelaySeconds: int
    periodSeconds: int
    timeoutSeconds: int
    failureThreshold: int


@with_config(_STRICT)
class RoutingSidecar(TypedDict):
    """A decode server in routing.mode gateway: llm-d's routing sidecar (pd-sidecar) in front of vLLM."""

    name: str
    image: str
    command: list[str]
    args: list[str]
    env: list[KubeObject]
    ports: list[KubeObject]
    probePath: str
    liveness: SidecarProbe
    readiness: SidecarProbe
    resources: KubeObject
    securityContext: KubeObject
    volumeMounts: list[KubeObject]  # its ServiceAccount token (the pool's pods and the InferencePool it reads)


@with_config(_STRICT)
class DownloadContainer(TypedDict):
    """model.cache with download: the init container that fills the weights' claim (`hf download`)."""

    name: str
    image: str
    imagePullPolicy: NotRequired[str]
    command: list[str]
    args: list[str]
    envFrom: NotRequired[list[KubeObject]]  # vllm.envFrom
    env: list[KubeObject]
    resources: Resources
    volumeMounts: list[KubeObject]
    securityContext: KubeObject


@with_config(_STRICT)
class Pod(TypedDict):
    selector: dict[str, str]
    labels: dict[str, str]
    annotations: dict[str, str]
    nodeSelector: NotRequired[dict[str, str]]
    tolerations: NotRequired[list[KubeObject]]
    affinity: NotRequired[KubeObject]
    priorityClassName: NotRequired[str]
    runtimeClassName: NotRequired[str]
    schedulerName: NotRequired[str]  # scheduling.schedulerName
    terminationGracePeriodSeconds: NotRequired[int]  # pod.terminationGracePeriodSeconds
    topologySpreadConstraints: NotRequired[list[KubeObject]]  # a labelSelector left out is the pod's selector
    serviceAccountName: NotRequired[str]
    automountServiceAccountToken: bool
    imagePullSecrets: NotRequired[list[dict[str, str]]]
    securityContext: KubeObject  # files/runtime.yaml securityContext.pod merged with the spec's
    resourceClaims: NotRequired[list[dict[str, str]]]
    download: NotRequired[DownloadContainer]  # model.cache with download: the first init container
    loraDownloads: NotRequired[list[DownloadContainer]]  # model.lora's hf:// adapters with it, one each
    sidecar: NotRequired[Sidecar]
    routingSidecar: NotRequired[RoutingSidecar]  # a decode server in routing.mode gateway
    vllm: VllmContainer
    volumes: list[KubeObject]


@with_config(_STRICT)
class RollingUpdate(TypedDict):
    maxSurge: int | str
    maxUnavailable: int | str


@with_config(_STRICT)
class Strategy(TypedDict):
    """A Deployment's strategy (deployment.strategy over wiring.deploymentStrategy)."""

    type: str  # RollingUpdate or Recreate
    rollingUpdate: NotRequired[RollingUpdate]  # RollingUpdate


@with_config(_STRICT)
class Workload(TypedDict):
    kind: str  # Deployment, StatefulSet (rank 0, then ranks 1.. of a multi-node server) or LeaderWorkerSet
    name: str
    replicas: int  # a Deployment's (not rendered when an autoscaler sets them); a LeaderWorkerSet's: its groups
    progressDeadlineSeconds: NotRequired[int]  # a Deployment: the startup budget plus a margin
    strategy: NotRequired[Strategy]  # a Deployment
    ordinalsStart: NotRequired[int]  # ranks 1..: pod-index is the node rank
    size: NotRequired[int]  # LeaderWorkerSet: pods per group (the server's nodes)
    restartPolicy: NotRequired[str]  # LeaderWorkerSet: wiring.lws.restartPolicy (files/runtime.yaml)
    pod: Pod  # LeaderWorkerSet: the leader's (rank 0)
    workerPod: NotRequired[Pod]  # LeaderWorkerSet: ranks 1..
    # model.cache.claimTemplate: each pod's claim of the weights, and its persistentVolumeClaimRetentionPolicy
    volumeClaimTemplates: NotRequired[list[KubeObject]]
    claimRetention: NotRequired[dict[str, str]]


@with_config(_STRICT)
class ServiceAccount(TypedDict):
    """pod.serviceAccount.create: the ServiceAccount kvgen renders."""

    name: str
    automountToken: bool


@with_config(_STRICT)
class Service(TypedDict):
    name: str  # the spec's name; routing.naming kserve: NAME-kserve-workload-svc
    type: str
    port: int
    selector: dict[str, str]
    labels: dict[str, str]  # the objects' labels, service.labels over them
    ports: list[KubeObject]  # http (the API), then service.extraPorts
    annotations: NotRequired[dict[str, str]]  # commonAnnotations, service.annotations over them
    loadBalancerClass: NotRequired[str]
    externalTrafficPolicy: NotRequired[str]
    loadBalancerSourceRanges: NotRequired[list[str]]
    sessionAffinity: NotRequired[str]  # routing.mode sessionAffinity: ClientIP
    sessionAffinityConfig: NotRequired[KubeObject]


@with_config(_STRICT)
class Headless(TypedDict):
    """Multi-node servers: the headless Service for torch.distributed's rendezvous."""

    name: str
    port: int


@with_config(_STRICT)
class Launcher(TypedDict):
    """The LMCache launcher ConfigMap."""

    name: str
    file: str
    script: str
    sha256: str


@with_config(_STRICT)
class ClaimTemplate(TypedDict):
    """gpuAccess dra: the ResourceClaimTemplate for the pod's GPUs."""

    name: str
    request: str
    deviceClassName: str
    count: int


@with_config(_STRICT)
class DisruptionBudget(TypedDict):
    """The PodDisruptionBudget (policy/v1)."""

    name: str
    selector: dict[str, str]
    maxUnavailable: int | str


@with_config(_STRICT)
class ScrapeEndpoint(TypedDict):
    port: str
    path: str
    interval: str


@with_config(_STRICT)
class Monitor(TypedDict):
    """A PodMonitor or ServiceMonitor (monitoring.coreos.com/v1)."""

    name: str
    labels: dict[str, str]
    selector: dict[str, str]
    endpoints: list[ScrapeEndpoint]


@with_config(_STRICT)
class ScaledObject(TypedDict):
    """A KEDA ScaledObject (keda.sh/v1alpha1) with one Prometheus trigger."""

    name: str
    target: str  # the Deployment
    minReplicas: int
    maxReplicas: int
    pollingInterval: NotRequired[int]
    cooldownPeriod: NotRequired[int]
    serverAddress: str
    query: str
    threshold: str


@with_config(_STRICT)
class Hpa(TypedDict):
    """A HorizontalPodAutoscaler (autoscaling/v2)."""

    name: str
    target: str
    minReplicas: int
    maxReplicas: int
    metrics: list[KubeObject]


@with_config(_STRICT)
class InferencePool(TypedDict):
    """routing.mode gateway: the InferencePool (inference.networking.k8s.io/v1) of the servers' API pods."""

    name: str
    selector: dict[str, str]
    targetPort: int
    failureMode: str


@with_config(_STRICT)
class PickerNames(TypedDict):
    """The picker's objects' names: NAME-epp each (routing.naming kvgen), or KServe's controller's (kserve)."""

    deployment: str
    service: str
    serviceAccount: str
    role: str
    roleBinding: str
    configMap: str


@with_config(_STRICT)
class Picker(TypedDict):
    """routing.mode gateway: the Endpoint Picker's Deployment, Service, ServiceAccount, Role, RoleBinding and ConfigMap."""

    names: PickerNames
    replicas: int
    image: str
    labels: dict[str, str]
    podLabels: dict[str, str]  # the selector and commonLabels (no helm.sh/chart: a chart upgrade alone restarts no pod)
    selector: dict[str, str]
    args: list[str]
    config: str  # the EndpointPickerConfig, as JSON text
    leaderElection: bool
    leases: bool  # the Role's leases: with leader election, and always with routing.naming kserve (as KServe's Role)
    grpcPort: int
    grpcHealthPort: int
    metricsPort: int
    resources: KubeObject
    imagePullSecrets: NotRequired[list[KubeObject]]  # pod.imagePullSecrets: the picker's image's registry too
    servicePorts: NotRequired[
        list[KubeObject]
    ]  # routing.naming kserve: KServe's port names (grpc, grpc-health, metrics)


@with_config(_STRICT)
class Route(TypedDict):
    """routing.mode gateway: the HTTPRoute (gateway.networking.k8s.io/v1) to the InferencePool or the Service."""

    name: str
    parentRefs: list[KubeObject]
    hostnames: NotRequired[list[str]]
    pathPrefix: str
    requestTimeout: NotRequired[str]
    port: int
    backendRefs: list[KubeObject]  # the InferencePool (kvgen's or routing.gateway.poolRef), or the Service
    modelMatches: NotRequired[list[KubeObject]]  # rules prefix with model.lora: a match per adapter's name header
    rules: NotRequired[list[KubeObject]]  # rules kserve: KServe's route's twelve rules, whole


@with_config(_STRICT)
class DestinationRule(TypedDict):
    """routing.gateway.provider istio: TLS without verification to the picker's Service."""

    name: str
    host: str


@with_config(_STRICT)
class GkePolicies(TypedDict):
    """routing.gateway.provider gke: the InferencePool's HealthCheckPolicy and GCPBackendPolicy."""

    healthPath: str
    backendTimeoutSec: int


@with_config(_STRICT)
class SidecarAccess(TypedDict):
    """The routing sidecar's ServiceAccount (the pods' own when pod.serviceAccount names one), Role and RoleBinding."""

    serviceAccount: str
    createServiceAccount: bool
    role: str
    roleBinding: str
    labels: dict[str, str]


@with_config(_STRICT)
class Routing(TypedDict):
    pool: NotRequired[InferencePool]  # absent with routing.gateway.backend service or poolRef
    picker: NotRequired[Picker]  # likewise
    sidecarAccess: NotRequired[SidecarAccess]  # a decode server: its routing sidecar's RBAC
    route: Route
    provider: str
    destinationRule: NotRequired[DestinationRule]
    gke: NotRequired[GkePolicies]


@with_config(_STRICT)
class Decision(TypedDict):
    enabled: bool
    code: NotRequired[str]  # when a rule turned offloading off
    reason: NotRequired[str]


@with_config(_STRICT)
class GpuAccess(TypedDict):
    mode: str
    summary: str
    requirement: str
    deviceClassName: NotRequired[str]  # dra


# "for" is a Python keyword: the functional form names it (and takes the strict config as an attribute)
AlertRule = TypedDict(
    "AlertRule", {"alert": str, "expr": str, "for": str, "labels": dict[str, str], "annotations": dict[str, str]}
)
AlertRule.__pydantic_config__ = _STRICT  # type: ignore[attr-defined]


@with_config(_STRICT)
class RuleGroup(TypedDict):
    name: str
    rules: list[AlertRule]


@with_config(_STRICT)
class PrometheusRule(TypedDict):
    """metrics.prometheusRule: runtime.yaml monitoring.alerts that apply to this server."""

    name: str
    labels: dict[str, str]
    groups: list[RuleGroup]


@with_config(_STRICT)
class Dashboard(TypedDict):
    """metrics.dashboard: files/dashboard.json with this server's values, as the ConfigMap holds it."""

    name: str
    labels: dict[str, str]
    file: str
    json: str


@with_config(_STRICT)
class Context(TypedDict):
    name: str
    namespace: NotRequired[str]  # absent: no metadata.namespace (kvgen without --namespace); the chart always sets it
    labels: dict[str, str]
    selector: dict[str, str]
    annotations: dict[str, str]  # the workloads' (commonAnnotations, kvgen's decision and warnings)
    commonAnnotations: NotRequired[dict[str, str]]  # every other object's, but the Service's
    service: Service
    headless: NotRequired[Headless]
    launcher: NotRequired[Launcher]
    claimTemplate: NotRequired[ClaimTemplate]
    serviceAccount: NotRequired[ServiceAccount]
    workloads: list[Workload]
    disruptionBudget: NotRequired[DisruptionBudget]
    podMonitor: NotRequired[Monitor]
    serviceMonitor: NotRequired[Monitor]
    prometheusRule: NotRequired[PrometheusRule]
    dashboard: NotRequired[Dashboard]
    scaledObject: NotRequired[ScaledObject]
    hpa: NotRequired[Hpa]
    routing: NotRequired[Routing]  # routing.mode gateway
    extraObjects: NotRequired[list[KubeObject]]  # spec extraObjects, verbatim, rendered after kvgen's objects
    # what NOTES.txt tells the user
    decision: Decision
    gpuAccess: NotRequired[GpuAccess]
    warnings: NotRequired[list[str]]  # every warning kvgen prints for the spec, in its words and order
