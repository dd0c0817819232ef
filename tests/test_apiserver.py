"""What the Kubernetes API server would refuse, kvgen refuses (kvgen/plan/apiserver.py), and so does
the chart (templates/plan/_apiserver.tpl): every rule fails the CLI (exit 1, the spec path, its
file:line) and `helm template` (naming the path), and the case next to each boundary passes
both, with the same objects."""

from __future__ import annotations

import copy
import re
import textwrap

import cli_batch as cli_batch_run
import helm
import helm_python
import pytest
from conftest import ROOT, assert_refused_at_once, dump, problem_set, run_kvgen
from ruamel.yaml import YAML
from specs import NATIVE_HEAD

from kvgen.app.compiler import compile_text
from kvgen.core.errors import SpecError
from kvgen.plan import apiserver

load = YAML(typ="safe", pure=True).load

HEAD = NATIVE_HEAD


def _with_hf_token(secret: str) -> str:
    """HEAD with model.hfTokenSecret set to ``secret`` (a flow mapping)."""
    return HEAD.replace(
        "  id: meta-llama/Llama-3.1-8B-Instruct\n",
        f"  id: meta-llama/Llama-3.1-8B-Instruct\n  hfTokenSecret: {secret}\n",
    )


# an inline node without local disk: no disk budget stands between a size and kvgen's bound
INLINE = """\
name: demo
model:
  id: meta-llama/Llama-3.1-8B-Instruct
instance: {gpus: 1, gpuMemory: 80Gi, memory: 220Gi}
"""
MULTI = """\
model:
  id: deepseek-ai/DeepSeek-V3
instance:
  type: p5.48xlarge
  ephemeralStorage: 28312Gi
parallelism: {tensor: 8, pipeline: 2, nodes: 2}
"""  # the kubelet on the instance NVMe: a default EKS pool's 20 GiB would not hold the 644 GiB model cache
NATIVE = "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n"
PVC = "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n  secondary:\n    - fileSystem:\n        pvc:\n"
TIER = "kvCacheOffloading.secondary[0].fileSystem.pvc"
TOL = "scheduling:\n  tolerations:\n    - "
TAG63 = "v" + "1" * 62
NAME45 = "a" + "b" * 44
ANNOTATIONS_ROOM = apiserver._RULES["totalAnnotationSizeLimit"] - apiserver._RULES["annotationsReserve"]


def claim(body: str) -> str:
    return PVC + "          spec: " + body + "\n"


# id -> (spec text, spec path, text on the reported line, message fragment, the passing twin)
CASES: dict[str, tuple[str, str, str, str, str]] = {
    # ValidateContainerResourceRequirements
    "memory-request-above-limit": (
        HEAD + "resources:\n  vllm:\n    requests: {memory: 65Gi}\n    limits: {memory: 64Gi}\n",
        "resources.vllm.requests.memory",
        "requests: {memory: 65Gi}",
        "request 65Gi is above its limit 64Gi",
        HEAD + "resources:\n  vllm:\n    requests: {memory: 64Gi}\n    limits: {memory: 64Gi}\n",
    ),
    "cpu-request-above-limit": (
        HEAD + "resources:\n  vllm:\n    requests: {cpu: 4001m}\n    limits: {cpu: '4'}\n",
        "resources.vllm.requests.cpu",
        "requests: {cpu: 4001m}",
        "request 4001m is above its limit 4",
        HEAD + "resources:\n  vllm:\n    requests: {cpu: 4000m}\n    limits: {cpu: '4'}\n",
    ),
    "ephemeral-request-above-limit": (
        HEAD
        + "resources:\n  lmcacheServer:\n    requests: {ephemeral-storage: 101Gi}\n    limits: {ephemeral-storage: 100Gi}\n",
        "resources.lmcacheServer.requests.ephemeral-storage",
        "requests: {ephemeral-storage: 101Gi}",
        "is above its limit 100Gi",
        HEAD
        + "resources:\n  lmcacheServer:\n    requests: {ephemeral-storage: 100Gi}\n    limits: {ephemeral-storage: 100Gi}\n",
    ),
    # ValidatePersistentVolumeClaimSpec, on the claim template of each pvc.spec tier
    "claim-without-access-modes": (
        HEAD + claim("{resources: {requests: {storage: 100Gi}}}"),
        f"{TIER}.spec.accessModes",
        "spec: {resources",
        "at least 1 access mode is required",
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
    ),
    "claim-without-storage": (
        HEAD + claim("{accessModes: [ReadWriteOnce], storageClassName: nfs}"),
        f"{TIER}.spec.resources.requests.storage",
        "spec: {accessModes",
        "the claim has no storage request",
        HEAD + claim("{accessModes: [ReadWriteOnce], storageClassName: nfs, resources: {requests: {storage: 1}}}"),
    ),
    "claim-malformed-storage": (
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: 100GB}}}"),
        f"{TIER}.spec.resources.requests.storage",
        "storage: 100GB",
        "'100GB' is not a size",
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: 100G}}}"),
    ),
    "claim-zero-storage": (
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: '0'}}}"),
        f"{TIER}.spec.resources.requests.storage",
        "storage: '0'",
        "must be greater than zero",
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: '1'}}}"),
    ),
    "claim-storage-above-bound": (
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: 1025Ti}}}"),
        f"{TIER}.spec.resources.requests.storage",
        "storage: 1025Ti",
        "above kvgen's bound of 1Pi",
        HEAD + claim("{accessModes: [ReadWriteOnce], resources: {requests: {storage: 1024Ti}}}"),
    ),
    "claim-unsupported-access-mode": (
        HEAD + claim("{accessModes: [ReadWriteSometimes], resources: {requests: {storage: 100Gi}}}"),
        f"{TIER}.spec.accessModes[0]",
        "accessModes: [ReadWriteSometimes]",
        "unsupported access mode 'ReadWriteSometimes'",
        HEAD + claim("{accessModes: [ReadWriteOncePod], resources: {requests: {storage: 100Gi}}}"),
    ),
    "model-cache-read-write-once-pod-with-others": (  # issue 33: the weights cache's claim template too
        HEAD.replace(
            "  id: meta-llama/Llama-3.1-8B-Instruct\n",
            "  id: meta-llama/Llama-3.1-8B-Instruct\n  cache:\n    claimTemplate: {accessModes: [ReadWriteOncePod, ReadWriteOnce]}\n",
        ),
        "model.cache.claimTemplate.accessModes",
        "claimTemplate: {accessModes: [ReadWriteOncePod",
        "ReadWriteOncePod may not be combined",
        HEAD.replace(
            "  id: meta-llama/Llama-3.1-8B-Instruct\n",
            "  id: meta-llama/Llama-3.1-8B-Instruct\n  cache:\n    claimTemplate: {accessModes: [ReadWriteOncePod]}\n",
        ),
    ),
    "claim-read-write-once-pod-with-others": (
        HEAD + claim("{accessModes: [ReadWriteOncePod, ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
        f"{TIER}.spec.accessModes",
        "accessModes: [ReadWriteOncePod",
        "ReadWriteOncePod may not be combined",
        HEAD + claim("{accessModes: [ReadWriteMany, ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
    ),
    "claim-storage-class-name": (
        HEAD
        + claim("{storageClassName: Fast_NVMe, accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
        f"{TIER}.spec.storageClassName",
        "storageClassName: Fast_NVMe",
        "'Fast_NVMe' is not a storage class name",
        HEAD
        + claim(
            "{storageClassName: fast.nvme-1, accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"
        ),
    ),
    "claim-volume-mode": (
        HEAD + claim("{volumeMode: Directory, accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
        f"{TIER}.spec.volumeMode",
        "volumeMode: Directory",
        "unsupported volume mode 'Directory'",
        HEAD + claim("{volumeMode: Filesystem, accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}"),
    ),
    # an existing claim: its name (ValidatePersistentVolumeName) and subPath (validateLocalDescendingPath)
    "claim-ref-name": (
        HEAD + PVC + "          ref: {name: Shared_Cache}\n",
        f"{TIER}.ref.name",
        "ref: {name: Shared_Cache}",
        "'Shared_Cache' cannot name a PersistentVolumeClaim",
        HEAD + PVC + "          ref: {name: shared.cache-1}\n",
    ),
    "claim-ref-absolute-path": (
        HEAD + PVC + "          ref: {name: cache, path: /kv}\n",
        f"{TIER}.ref.path",
        "path: /kv",
        "must be a relative path",
        HEAD + PVC + "          ref: {name: cache, path: kv/..cache}\n",
    ),
    "claim-ref-path-backstep": (
        HEAD + PVC + "          ref: {name: cache, path: kv/../..}\n",
        f"{TIER}.ref.path",
        "path: kv/../..",
        "must not contain '..'",
        HEAD + PVC + "          ref: {name: cache, path: kv/cache}\n",
    ),
    # labels: ValidateLabels / IsValidLabelValue, on metadata.labels and spec.nodeSelector
    "image-tag-label-too-long": (
        HEAD + f"images:\n  vllm: {{tag: {TAG63}1}}\n",
        "images.vllm.tag",
        f"tag: {TAG63}1",
        "becomes the label app.kubernetes.io/version",
        HEAD + f"images:\n  vllm: {{tag: {TAG63}}}\n",
    ),
    "image-tag-label-trailing-dash": (
        HEAD + "images:\n  vllm: {tag: v0.33.0-}\n",
        "images.vllm.tag",
        "tag: v0.33.0-",
        "becomes the label app.kubernetes.io/version",
        HEAD + "images:\n  vllm: {tag: v0.33.0-rc1}\n",
    ),
    "image-tag-grammar": (
        HEAD + "images:\n  lmcache: {tag: .latest}\n",
        "images.lmcache.tag",
        "tag: .latest",
        "the kubelet refuses the image",
        HEAD + "images:\n  lmcache: {tag: _latest.-x}\n",
    ),
    "instance-type-label": (
        INLINE.replace("{gpus: 1,", "{type: gpu node a100, gpus: 1,"),
        "instance.type",
        "instance: {type: gpu node a100",
        "node.kubernetes.io/instance-type",
        INLINE.replace("{gpus: 1,", "{type: gpu-node_a100, gpus: 1,"),
    ),
    "node-selector-value": (
        HEAD + "scheduling:\n  nodeSelector: {pool: gpu pool}\n",
        "scheduling.nodeSelector.pool",
        "nodeSelector: {pool: gpu pool}",
        "'gpu pool' is not a label value",
        HEAD + "scheduling:\n  nodeSelector: {pool: ''}\n",
    ),
    "node-selector-value-too-long": (
        HEAD + f"scheduling:\n  nodeSelector: {{pool: {TAG63}1}}\n",
        "scheduling.nodeSelector.pool",
        "nodeSelector: {pool:",
        "is not a label value",
        HEAD + f"scheduling:\n  nodeSelector: {{pool: {TAG63}}}\n",
    ),
    "node-selector-key": (
        HEAD + "scheduling:\n  nodeSelector: {example.com/a/b: x}\n",
        "scheduling.nodeSelector.example.com/a/b",
        "nodeSelector: {example.com/a/b: x}",
        "is not a label key",
        HEAD + "scheduling:\n  nodeSelector: {example.com/A_b.c: x}\n",
    ),
    # ValidatePodSpec: ValidatePriorityClassName
    "priority-class-name": (
        HEAD + "scheduling:\n  priorityClassName: High\n",
        "scheduling.priorityClassName",
        "priorityClassName: High",
        "'High' is not a DNS-1123 subdomain",
        HEAD + "scheduling:\n  priorityClassName: high.priority\n",
    ),
    # ValidateTolerations, validateTaintEffect
    "toleration-empty-key-needs-exists": (
        HEAD + TOL + "{operator: Equal, effect: NoSchedule}\n",
        "scheduling.tolerations[0].operator",
        "operator: Equal",
        "operator must be Exists when key is empty",
        HEAD + TOL + "{operator: Exists, effect: NoSchedule}\n",
    ),
    "toleration-exists-with-value": (
        HEAD + TOL + "{key: gpu, operator: Exists, value: 'true'}\n",
        "scheduling.tolerations[0].value",
        "value: 'true'",
        "value must be empty when operator is Exists",
        HEAD + TOL + "{key: gpu, operator: Equal, value: 'true'}\n",
    ),
    "toleration-effect": (
        HEAD + TOL + "{key: gpu, operator: Exists, effect: NoScheduling}\n",
        "scheduling.tolerations[0].effect",
        "effect: NoScheduling",
        "unsupported effect 'NoScheduling'",
        HEAD + TOL + "{key: gpu, operator: Exists, effect: PreferNoSchedule}\n",
    ),
    "toleration-operator": (
        HEAD + TOL + "{key: gpu, operator: In, value: x}\n",
        "scheduling.tolerations[0].operator",
        "operator: In",
        "unsupported operator 'In'",
        HEAD + TOL + "{key: gpu, value: x}\n",
    ),
    "toleration-seconds-need-no-execute": (
        HEAD + TOL + "{key: gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}\n",
        "scheduling.tolerations[0].effect",
        "effect: NoSchedule",
        "effect must be NoExecute when tolerationSeconds is set",
        HEAD + TOL + "{key: gpu, operator: Exists, effect: NoExecute, tolerationSeconds: 30}\n",
    ),
    "toleration-key": (
        HEAD + TOL + "{key: nvidia.com/gpu/x, operator: Exists}\n",
        "scheduling.tolerations[0].key",
        "key: nvidia.com/gpu/x",
        "is not a label key",
        HEAD + TOL + "{key: nvidia.com/gpu, operator: Exists}\n",
    ),
    "toleration-value": (
        HEAD + TOL + f"{{key: gpu, value: {TAG63}1}}\n",
        "scheduling.tolerations[0].value",
        "value: v1",
        "is not a label value",
        HEAD + TOL + f"{{key: gpu, value: {TAG63}}}\n",
    ),
    # int32 replicas (apps/v1 DeploymentSpec, StatefulSetSpec)
    "replicas-beyond-int32": (
        HEAD + "replicas: 2147483648\n",
        "replicas",
        "replicas: 2147483648",
        "does not fit the Deployment's replicas, an int32",
        HEAD + "replicas: 2147483647\n",
    ),
    # the worker StatefulSet's pods: controller-revision-hash=<name>-worker-<hash> <= 63 characters
    "multi-node-name-too-long": (
        f"name: {NAME45}c\n" + MULTI,
        "name",
        f"name: {NAME45}c",
        "can never create its pods",
        f"name: {NAME45}\n" + MULTI,
    ),
    # validateEnvVarValueFrom, validateSecretKeySelector
    "hf-token-secret-name": (
        _with_hf_token("{name: HF_Token, key: token}"),
        "model.hfTokenSecret.name",
        "hfTokenSecret: {name: HF_Token",
        "'HF_Token' cannot name a Secret",
        _with_hf_token("{name: hf-token, key: token}"),
    ),
    "hf-token-secret-key": (
        _with_hf_token("{name: hf, key: ..token}"),
        "model.hfTokenSecret.key",
        "key: ..token",
        "'..token' is not a Secret key",
        _with_hf_token("{name: hf, key: .token}"),
    ),
    "env-value-and-value-from": (
        HEAD + "vllm:\n  env:\n    - {name: POD, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n",
        "vllm.env[0].valueFrom",
        "- {name: POD",
        "may not be specified when value is not empty",
        HEAD + "vllm:\n  env:\n    - {name: POD, value: '', valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n",
    ),
    "env-value-from-empty": (
        HEAD + "vllm:\n  env:\n    - {name: POD, valueFrom: {}}\n",
        "vllm.env[0].valueFrom",
        "- {name: POD",
        "must specify one of",
        HEAD + "vllm:\n  env:\n    - {name: POD, valueFrom: {configMapKeyRef: {name: cm, key: k}}}\n",
    ),
    "env-value-from-two-sources": (
        HEAD
        + "vllm:\n  env:\n    - {name: K, valueFrom: {secretKeyRef: {name: s, key: k}, configMapKeyRef: {name: c, key: k}}}\n",
        "vllm.env[0].valueFrom",
        "- {name: K",
        "may not have more than one source",
        HEAD + "vllm:\n  env:\n    - {name: K, valueFrom: {secretKeyRef: {name: s, key: k}}}\n",
    ),
    "env-secret-key-ref-name": (
        HEAD + "vllm:\n  env:\n    - {name: K, valueFrom: {secretKeyRef: {name: My Secret, key: k}}}\n",
        "vllm.env[0].valueFrom.secretKeyRef.name",
        "- {name: K",
        "'My Secret' cannot name a Secret",
        HEAD + "vllm:\n  env:\n    - {name: K, valueFrom: {secretKeyRef: {name: my-secret, key: k}}}\n",
    ),
    # issue 20: service.apiKeySecret was never checked (validateSecretKeySelector)
    "api-key-secret-name": (
        HEAD + "service:\n  apiKeySecret: {name: VLLM_Key, key: key}\n",
        "service.apiKeySecret.name",
        "apiKeySecret: {name: VLLM_Key",
        "'VLLM_Key' cannot name a Secret",
        HEAD + "service:\n  apiKeySecret: {name: vllm-key, key: key}\n",
    ),
    "api-key-secret-key": (
        HEAD + "service:\n  apiKeySecret: {name: vllm-key, key: api key}\n",
        "service.apiKeySecret.key",
        "apiKeySecret: {name: vllm-key",
        "'api key' is not a Secret key",
        HEAD + "service:\n  apiKeySecret: {name: vllm-key, key: api_key.v1}\n",
    ),
    # issue 20: a volume with two sources (validateVolumeSource: exactly one)
    "volume-with-two-sources": (
        HEAD + "pod:\n  volumes:\n    - {name: data, emptyDir: {}, configMap: {name: cm}}\n",
        "pod.volumes[0]",
        "- {name: data",
        "may not specify more than 1 volume type (configMap, emptyDir",
        HEAD + "pod:\n  volumes:\n    - {name: data, configMap: {name: cm}}\n",
    ),
    "volume-without-a-source": (
        HEAD + "pod:\n  volumes:\n    - {name: data}\n",
        "pod.volumes[0]",
        "- {name: data",
        "must specify a volume type",
        HEAD + "pod:\n  volumes:\n    - {name: data, emptyDir: {}}\n",
    ),
    # issue 20: ValidateAnnotationsSize (256 KiB of keys and values), less kvgen's reserve for its own
    "annotations-above-256-kib": (
        HEAD + "pod:\n  annotations:\n    a: " + "x" * (ANNOTATIONS_ROOM - 1) + "\n    b: x\n",
        "pod.annotations",
        "annotations:",
        f"the annotations add up to {ANNOTATIONS_ROOM + 2} bytes",
        HEAD + "pod:\n  annotations:\n    a: " + "x" * (ANNOTATIONS_ROOM - 3) + "\n    b: x\n",
    ),
    # issue 20: images.*.repository is an image reference's name (the kubelet: InvalidImageName)
    "image-repository-upper-case-path": (
        HEAD + "images:\n  vllm: {repository: vllm/VLLM-openai}\n",
        "images.vllm.repository",
        "vllm: {repository: vllm/VLLM",
        "'vllm/VLLM-openai' is not an image repository",
        HEAD + "images:\n  vllm: {repository: registry.example.com:5000/vllm/vllm-openai}\n",
    ),
    "image-repository-with-a-tag": (
        HEAD + "images:\n  lmcache: {repository: 'lmcache/standalone:v0.5.6'}\n",
        "images.lmcache.repository",
        "lmcache: {repository:",
        "is not an image repository",
        HEAD + "images:\n  lmcache: {repository: lmcache/standalone, tag: v0.5.6}\n",
    ),
    # issue 20: the LeaderWorkerSet CRD bounds replicas at 1,000,000 (exit 3 at the output check before)
    "leaderworkerset-replicas-above-the-crd-maximum": (
        "name: demo\nreplicas: 1000001\nmultiNode: {engine: leaderworkerset}\n" + MULTI,
        "replicas",
        "replicas: 1000001",
        "above the LeaderWorkerSet's bound on replicas (at most 1000000",
        "name: demo\nreplicas: 1000000\nmultiNode: {engine: leaderworkerset}\n" + MULTI,
    ),
    # issue 23: the Service's load-balancer fields (ValidateService) and the metadata knobs
    "load-balancer-class-on-a-cluster-ip": (
        HEAD + "service:\n  loadBalancerClass: service.k8s.aws/nlb\n",
        "service.loadBalancerClass",
        "loadBalancerClass: service.k8s.aws/nlb",
        "may only be used when type is 'LoadBalancer'",
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerClass: service.k8s.aws/nlb\n",
    ),
    "load-balancer-class-not-a-qualified-name": (
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerClass: aws nlb\n",
        "service.loadBalancerClass",
        "loadBalancerClass: aws nlb",
        "'aws nlb' is not a label key",
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerClass: example.com/aws_nlb\n",
    ),
    "source-ranges-on-a-node-port": (
        HEAD + "service:\n  type: NodePort\n  loadBalancerSourceRanges: [10.0.0.0/8]\n",
        "service.loadBalancerSourceRanges",
        "loadBalancerSourceRanges: [10.0.0.0/8]",
        "may only be used when type is 'LoadBalancer'",
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerSourceRanges: [10.0.0.0/8]\n",
    ),
    "source-range-not-a-cidr": (
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerSourceRanges: [10.0.0.0/8, 10.1.0.0/33]\n",
        "service.loadBalancerSourceRanges[1]",
        "loadBalancerSourceRanges: [10.0.0.0/8, 10.1.0.0/33]",
        "'10.1.0.0/33' is not an IP range in CIDR notation",
        HEAD + "service:\n  type: LoadBalancer\n  loadBalancerSourceRanges: [10.0.0.0/8, 10.1.0.0/32, 'fd00::/8']\n",
    ),
    "external-traffic-policy-on-a-cluster-ip": (
        HEAD + "service:\n  externalTrafficPolicy: Local\n",
        "service.externalTrafficPolicy",
        "externalTrafficPolicy: Local",
        "may only be set for externally-accessible services",
        HEAD + "service:\n  type: NodePort\n  externalTrafficPolicy: Local\n",
    ),
    "common-label-kvgen-sets": (
        HEAD + "commonLabels:\n  app.kubernetes.io/part-of: platform\n",
        "commonLabels.app.kubernetes.io/part-of",
        "app.kubernetes.io/part-of: platform",
        "'app.kubernetes.io/part-of' is a label kvgen sets itself",
        HEAD + "commonLabels:\n  example.com/part-of: platform\n",
    ),
    "common-label-chart-label": (
        HEAD + "commonLabels:\n  helm.sh/chart: mine\n",
        "commonLabels.helm.sh/chart",
        "helm.sh/chart: mine",
        "'helm.sh/chart' is a label kvgen sets itself",
        HEAD + "commonLabels:\n  helm.sh/owner: mine\n",
    ),
    "common-label-value": (
        HEAD + "commonLabels:\n  team: ml platform\n",
        "commonLabels.team",
        "team: ml platform",
        "'ml platform' is not a label value",
        HEAD + "commonLabels:\n  team: ml-platform\n",
    ),
    "common-annotation-kvgen-sets": (
        HEAD + "commonAnnotations:\n  kvgen.dev/warnings: none\n",
        "commonAnnotations.kvgen.dev/warnings",
        "kvgen.dev/warnings: none",
        "'kvgen.dev/warnings' is an annotation kvgen sets itself",
        HEAD + "commonAnnotations:\n  example.com/warnings: none\n",
    ),
    "common-annotations-above-256-kib": (
        HEAD + "commonAnnotations:\n  a: " + "x" * (ANNOTATIONS_ROOM - 1) + "\n  b: x\n",
        "commonAnnotations",
        "commonAnnotations:",
        f"the annotations add up to {ANNOTATIONS_ROOM + 2} bytes",
        HEAD + "commonAnnotations:\n  a: " + "x" * (ANNOTATIONS_ROOM - 3) + "\n  b: x\n",
    ),
    "service-label-key": (
        HEAD + "service:\n  labels:\n    -bad: x\n",
        "service.labels.-bad",
        "-bad: x",
        "'-bad' is not a label key",
        HEAD + "service:\n  labels:\n    good: x\n",
    ),
    "service-label-kvgen-sets": (
        HEAD + "service:\n  labels:\n    app.kubernetes.io/name: api\n",
        "service.labels.app.kubernetes.io/name",
        "app.kubernetes.io/name: api",
        "is a label kvgen sets itself",
        HEAD + "service:\n  labels:\n    example.com/name: api\n",
    ),
    "service-annotation-key": (
        HEAD + "service:\n  annotations:\n    a/b/c: x\n",
        "service.annotations.a/b/c",
        "a/b/c: x",
        "'a/b/c' is not a label key",
        HEAD + "service:\n  annotations:\n    Example.com/B: x\n",
    ),
    # issue 23: service.extraPorts (ValidateService: IsValidPortName, Duplicate value) and kvgen's own ports
    "extra-port-name": (
        HEAD + "service:\n  extraPorts:\n    - {name: web--ui, port: 80}\n",
        "service.extraPorts[0].name",
        "{name: web--ui, port: 80}",
        "'web--ui' is not a port name",
        HEAD + "service:\n  extraPorts:\n    - {name: web-ui, port: 80}\n",
    ),
    "extra-port-target-name": (
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 80, targetPort: '8080'}\n",
        "service.extraPorts[0].targetPort",
        "{name: web, port: 80, targetPort: '8080'}",
        "'8080' is not a port name",
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 80, targetPort: 9090}\n",
    ),
    "extra-port-named-http": (
        HEAD + "service:\n  extraPorts:\n    - {name: http, port: 80}\n",
        "service.extraPorts[0].name",
        "{name: http, port: 80}",
        "'http' is already the name of the API's port",
        HEAD + "service:\n  extraPorts:\n    - {name: http2, port: 80}\n",
    ),
    "extra-port-name-twice": (
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 80}\n    - {name: web, port: 81}\n",
        "service.extraPorts[1].name",
        "{name: web, port: 81}",
        "'web' is already the name of service.extraPorts[0]",
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 80}\n    - {name: web2, port: 81}\n",
    ),
    "extra-port-is-the-api-port": (
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 8000}\n",
        "service.extraPorts[0].port",
        "{name: web, port: 8000}",
        "port 8000/TCP is already service.port, the API's",
        HEAD + "service:\n  extraPorts:\n    - {name: web, port: 8000, protocol: UDP}\n",
    ),
    "extra-port-twice": (
        HEAD + "service:\n  extraPorts:\n    - {name: a, port: 80}\n    - {name: b, port: 80}\n",
        "service.extraPorts[1].port",
        "{name: b, port: 80}",
        "port 80/TCP is already service.extraPorts[0]",
        HEAD + "service:\n  extraPorts:\n    - {name: a, port: 80}\n    - {name: b, port: 81}\n",
    ),
    "extra-port-targets-the-lmcache-server": (
        HEAD + "service:\n  extraPorts:\n    - {name: cache, port: 80, targetPort: 5555}\n",
        "service.extraPorts[0].targetPort",
        "{name: cache, port: 80, targetPort: 5555}",
        "port 5555 is the LMCache MP server's request port",
        HEAD + "service:\n  extraPorts:\n    - {name: cache, port: 80, targetPort: 5556}\n",
    ),
    # kvgen's bound on sizes: nothing at or above 8 EiB reaches int64 arithmetic (the chart's)
    "empty-dir-9ei": (
        INLINE + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: 9Ei}}\n",
        "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size",
        "emptyDir: {size: 9Ei}",
        "above kvgen's bound of 1Pi",
        INLINE + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: 1Pi}}\n",
    ),
    "empty-dir-one-byte-above": (
        INLINE + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: '1125899906842625'}}\n",
        "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size",
        "emptyDir: {size:",
        "above kvgen's bound of 1Pi",
        INLINE + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: '1125899906842624'}}\n",
    ),
    "empty-dir-tiers-sum": (
        INLINE
        + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: 512Ti}}\n    - fileSystem: {emptyDir: {size: 513Ti}}\n",
        "kvCacheOffloading.secondary",
        "secondary:",
        "the emptyDir tiers add up to",
        INLINE
        + "kvCacheOffloading:\n  secondary:\n    - fileSystem: {emptyDir: {size: 512Ti}}\n    - fileSystem: {emptyDir: {size: 512Ti}}\n",
    ),
    "cpu-tier-8ei": (
        INLINE + "kvCacheOffloading:\n  backend: native\n  cpu: 8Ei\n",
        "kvCacheOffloading.cpu",
        "cpu: 8Ei",
        "above kvgen's bound of 1Pi",
        INLINE + "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n",
    ),
}


def _line_of(text: str, needle: str) -> int:
    (line,) = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line][:1]
    return line


@pytest.fixture(scope="module")
def cli_batch(tmp_path_factory) -> cli_batch_run.Batch:
    """Every bad case through the real CLI, one `kvgen validate` over all of them (each file's
    problems are reported under its own header)."""
    return cli_batch_run.run(
        "validate", {case: text for case, (text, *_rest) in CASES.items()}, tmp_path_factory.mktemp("apiserver")
    )


def test_the_cli_refuses_every_case_at_once(cli_batch):
    assert cli_batch.result.returncode == 1, cli_batch.result.stderr
    assert "Traceback" not in cli_batch.result.stderr and "internal error" not in cli_batch.result.stderr
    assert f"kvgen: {len(CASES)} problems found; nothing was written" in cli_batch.result.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_refuses_with_path_and_line(case, cli_batch):
    text, path, line_text, fragment, _ok = CASES[case]
    problems = cli_batch.problems(case)
    assert len(problems) == 1, cli_batch.blocks.get(case)  # exactly this rule, nothing else in the spec is wrong
    spec = str(cli_batch.files[case])
    assert problems[0].startswith(f"{spec}:{_line_of(text, line_text)}:"), problems
    assert f" {path}: " in problems[0] and fragment in problems[0], problems


def _helm_error(values) -> str:
    with pytest.raises((helm_python.HelmValuesError, helm_python.HelmRenderError)) as err:
        helm.render(values)
    return str(err.value)


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(CASES))
def test_chart_refuses_with_kvgens_problem(case):
    """The same one problem: path, message and hint."""
    text, path, _line, _fragment, _ok = CASES[case]
    (problem,) = helm.problems(load(text))
    assert problem[0] == path
    assert {problem} == problem_set(load(text))


def _objects(text: str):
    return [o for r in compile_text(text, "spec.yaml") for o in r.objects]


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_case_next_to_the_boundary_passes_both(case):
    ok = CASES[case][4]
    ours = _objects(ok)
    assert helm.by_identity(helm.objects(load(ok))) == helm.by_identity(ours)


# --------------------------------------------------------------------------- sizes


def _full_spec() -> dict:
    """A spec with every size kvgen reads set (on an inline node without local disk)."""
    size = {"memory": "1Gi", "ephemeral-storage": "1Gi"}
    return {
        "name": "demo",
        "model": {
            "id": "acme/inline",
            "architecture": "LlamaForCausalLM",
            "layers": 32,
            "kvHeads": 8,
            "headDim": 128,
            "weights": "16Gi",
        },
        "instance": {"gpus": 1, "gpuMemory": "80Gi", "memory": "220Gi", "localDisk": "1Ti"},
        "kvCacheOffloading": {
            "backend": "native",
            "cpu": "10Gi",
            "secondary": [{"fileSystem": {"emptyDir": {"size": "10Gi"}}}],
        },
        "resources": {
            "vllm": {"requests": dict(size), "limits": dict(size)},
            "lmcacheServer": {"requests": dict(size), "limits": dict(size)},
            "shm": "2Gi",
            "modelCache": "20Gi",
        },
    }


def _size_paths() -> list[tuple]:
    from kvgen.input.source import load_documents
    from kvgen.plan.validate import parse_spec

    (doc,) = load_documents(dump(_full_spec()), "spec.yaml")
    spec, problems = parse_spec(doc)
    assert spec is not None and not problems
    return [path for path, _value in apiserver.sizes(spec)]


SIZE_PATHS = _size_paths()


def test_every_size_of_the_spec_is_found():
    # the walker finds each Size field of the models (the chart lists the same paths)
    assert len(SIZE_PATHS) == 16
    assert ("kvCacheOffloading", "secondary", 0, "fileSystem", "emptyDir", "size") in SIZE_PATHS
    assert ("resources", "lmcacheServer", "limits", "ephemeral-storage") in SIZE_PATHS


def _set(data: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.mark.heavy
@pytest.mark.parametrize("path", SIZE_PATHS, ids=[".".join(map(str, p)) for p in SIZE_PATHS])
def test_every_size_at_8_eib_is_refused_by_cli_and_chart(path):
    from kvgen.core.errors import format_path

    values = _set(_full_spec(), path, "8Ei")
    text = dump(values)
    with pytest.raises(SpecError) as err:
        compile_text(text, "spec.yaml")
    dotted = format_path(path)
    problems = [p for p in err.value.problems if format_path(p.path) == dotted]
    assert problems and "above kvgen's bound of 1Pi" in problems[0].message, err.value
    assert problems[0].location is not None and problems[0].location.line == _line_of(text, "8Ei")
    assert f"  {dotted}: " in _helm_error(values)


def test_an_integer_size_above_the_bound_is_refused_by_the_chart_schema():
    values = _set(_full_spec(), ("resources", "shm"), 2**63)
    with pytest.raises(SpecError):
        compile_text(dump(values), "spec.yaml")
    assert "/resources/shm" in _helm_error(values)


def test_no_negative_size_reaches_the_chart_output():
    """Before the bound, `helm template` rendered an 8Ei CPU tier as a negative size."""
    values = load(INLINE + "kvCacheOffloading:\n  backend: native\n  cpu: 8Ei\n")
    message = _helm_error(values)
    assert "kvCacheOffloading.cpu" in message


# --------------------------------------------------------------------------- computed requests


def _container(objs, name):
    (workload,) = [o for o in objs if o["kind"] == "Deployment"]
    pod = workload["spec"]["template"]["spec"]
    (c,) = [c for c in pod["containers"] + pod.get("initContainers", []) if c["name"] == name]
    return c["resources"]


@pytest.mark.heavy
def test_a_computed_request_is_lowered_to_an_explicit_limit():
    """kvgen computes 6 CPUs and 17Gi of ephemeral storage for this vLLM container; limits
    below them become the requests (the API server refuses a request above its limit)."""
    text = HEAD + "resources:\n  vllm:\n    limits: {cpu: 1500m, ephemeral-storage: 10Gi}\n"
    res = _container(_objects(text), "vllm")
    assert res["requests"]["cpu"] == "1500m" and res["limits"]["cpu"] == "1500m"
    assert res["requests"]["ephemeral-storage"] == "10Gi" and res["limits"]["ephemeral-storage"] == "10Gi"
    assert helm.by_identity(helm.objects(load(text))) == helm.by_identity(_objects(text))
    # limits above the computed requests leave them alone
    roomy = _container(
        _objects(HEAD + "resources:\n  vllm:\n    limits: {cpu: '64', ephemeral-storage: 500Gi}\n"), "vllm"
    )
    assert roomy["requests"]["cpu"] == "6" and roomy["requests"]["ephemeral-storage"] == "17Gi"


@pytest.mark.heavy
def test_a_lowered_ephemeral_request_is_a_warning(tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_text(HEAD + "resources:\n  vllm:\n    limits: {ephemeral-storage: 10Gi}\n")
    result = run_kvgen("validate", str(f))
    assert result.returncode == 0, result.stderr
    assert "resources.vllm: ephemeral-storage 10Gi is below the 17Gi of its emptyDir volumes" in result.stderr


# --------------------------------------------------------------------------- all at once, dialects


@pytest.mark.heavy
def test_every_api_server_problem_is_reported_at_once(tmp_path):
    text = HEAD + textwrap.dedent("""\
        replicas: 2147483648
        images:
          vllm: {tag: "bad tag"}
        scheduling:
          priorityClassName: High
          nodeSelector: {pool: gpu pool}
          tolerations:
            - {operator: Equal}
        kvCacheOffloading:
          backend: native
          cpu: 9Ei
          secondary:
            - fileSystem:
                pvc:
                  spec: {storageClassName: nfs}
        """)
    assert_refused_at_once(
        tmp_path,
        text,
        {
            ("replicas", "2147483648 does not fit the Deployment's replicas, an int32 (at most 2147483647)"),
            (
                "images.vllm.tag",
                "'bad tag' becomes the label app.kubernetes.io/version, which must be a label value: at most 63 characters, letters, digits, '-', '_' or '.', starting and ending with a letter or digit (ValidateLabels, IsValidLabelValue)",
            ),
            (
                "images.vllm.tag",
                "'bad tag' is not an image tag: at most 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'; the kubelet refuses the image (InvalidImageName) and the pod never starts",
            ),
            (
                "scheduling.priorityClassName",
                "'High' is not a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' or '.', starting and ending with a letter or digit (ValidatePodSpec: ValidatePriorityClassName)",
            ),
            (
                "scheduling.nodeSelector.pool",
                "'gpu pool' is not a label value: at most 63 characters, letters, digits, '-', '_' or '.', starting and ending with a letter or digit (ValidatePodSpec: ValidateLabels)",
            ),
            (
                "scheduling.tolerations[0].operator",
                'operator must be Exists when key is empty (which means "match all values and all keys") (ValidateTolerations)',
            ),
            (
                "kvCacheOffloading.cpu",
                "9Ei is above kvgen's bound of 1Pi for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)",
            ),
            (
                f"{TIER}.spec.accessModes",
                "at least 1 access mode is required; the API server refuses a claim without one (ValidatePersistentVolumeClaimSpec)",
            ),
            (
                f"{TIER}.spec.resources.requests.storage",
                "the claim has no storage request; the API server refuses it (ValidatePersistentVolumeClaimSpec: resources[storage] is required)",
            ),
        },
    )
    assert "9 problem(s)" in _helm_error(load(text))


@pytest.mark.heavy
def test_a_kserve_claim_without_access_modes_points_at_the_kserve_field(tmp_path):
    """The KServe guide's pvc.spec snippet has no accessModes (the seed adds them)."""
    seed = (ROOT / "examples" / "seeds" / "kserve-pvc-spec-nvme.yaml").read_text()
    text = seed.replace("              accessModes: [ReadWriteOnce]\n", "")
    assert text != seed
    f = tmp_path / "kserve.yaml"
    f.write_text(text)
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1
    line = _line_of(text, "            spec:")
    assert re.search(
        rf"{re.escape(str(f))}:{line}:\d+: spec\.kvCacheOffloading\.secondary\[0\]\.fileSystem\.pvc\.spec\.accessModes: "
        r"at least 1 access mode is required",
        result.stderr,
    ), result.stderr


# --------------------------------------------------------------------------- the validators


@pytest.mark.parametrize(
    "value,ok",
    [
        ("", True),
        ("a", True),
        ("MyValue", True),
        ("my_value", True),
        ("12345", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("-a", False),
        ("a-", False),
        ("a b", False),
        ("a/b", False),
        ("é", False),
    ],
)
def test_label_values(value, ok):
    assert apiserver.is_label_value(value) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("pool", True),
        ("example.com/MyName", True),
        ("node.kubernetes.io/instance-type", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("/name", False),
        ("Example.com/name", False),
        ("a/b/c", False),
        ("example.com/", False),
        ("", False),
    ],
)
def test_label_keys(value, ok):
    assert apiserver.is_label_key(value) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("hf-token", True),
        ("a.b-c", True),
        ("a" * 253, True),
        ("a" * 254, False),
        ("HF", False),
        ("-a", False),
        ("a_b", False),
        ("", False),
    ],
)
def test_dns1123_subdomains(value, ok):
    assert apiserver.is_dns1123_subdomain(value) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("HF_TOKEN", True),
        ("key.name", True),
        (".token", True),
        ("..token", False),
        ("..", False),
        (".", False),
        ("a b", False),
        ("", False),
    ],
)
def test_secret_keys(value, ok):
    assert apiserver.is_config_map_key(value) is ok


# --------------------------------------------------------------------------- issue 20: target bounds


def test_the_leaderworkerset_bound_is_the_vendored_crds():
    import json

    crd = json.loads((ROOT / "charts/kvgen/files/crds/leaderworkerset-leaderworkerset.x-k8s.io-v1.json").read_text())
    replicas = crd["properties"]["spec"]["properties"]["replicas"]
    assert apiserver.LWS_REPLICAS_MAX == replicas["maximum"] == 1000000


def test_the_volume_sources_are_every_field_of_a_volume_but_its_name():
    import json

    from kvgen.data import kube

    for version in ("1.28", "1.33", "1.34"):
        defs = json.loads((kube.schema_dir(version) / "_definitions.json").read_text())["$defs"]
        fields = set(defs["io.k8s.api.core.v1.Volume"]["properties"]) - {"name"}
        assert fields <= set(apiserver._RULES["volumeSources"]), version


KEDA = {"serverAddress": "http://prometheus-operated.monitoring.svc:9090"}
# an integer field of the spec that lands in an int32 of its target (ScaledObject, PodDisruptionBudget)
INT32_FIELDS = {
    "autoscaling.keda.pollingInterval": lambda n: {
        "autoscaling": {"maxReplicas": 2, "keda": {**KEDA, "pollingInterval": n}}
    },
    "autoscaling.keda.cooldownPeriod": lambda n: {
        "autoscaling": {"maxReplicas": 2, "keda": {**KEDA, "cooldownPeriod": n}}
    },
    "disruptionBudget.maxUnavailable": lambda n: {
        "replicas": 2,
        "disruptionBudget": {"enabled": True, "maxUnavailable": n},
    },
}


@pytest.mark.heavy
@pytest.mark.parametrize("field", sorted(INT32_FIELDS))
def test_an_int32_field_above_its_bound_is_refused_by_the_spec_schema(field):
    """Issue 20: refused by the spec (kvgen's model, the chart's values schema), not at kvgen's output check."""
    from conftest import spec

    bad = spec(**INT32_FIELDS[field](apiserver.INT32_MAX + 1))
    found = problem_set(bad)
    assert any(p.startswith(field) for p, _m, _h in found)
    try:  # the chart's templates check a plain number's bound (files/spec-checks.json), in kvgen's words
        assert helm.problems(bad) == found
    except helm_python.HelmValuesError as err:  # int-or-string: its schema's anyOf, Helm's
        assert f"/{field.replace('.', '/')}" in str(err)
    ok = spec(**INT32_FIELDS[field](apiserver.INT32_MAX))
    assert helm.by_identity(helm.objects(ok)) == helm.by_identity(_objects(dump(ok)))


@pytest.mark.heavy
def test_a_server_spans_at_most_1024_nodes_on_both_faces():
    """One LMCache server per node, each named in every rank's --kv-transfer-config: the nodes are
    bounded so that the workload stays within the API server's request limit (and kvgen never
    builds a list of 2**31 URLs: the int32 bounds this replaces were unreachable before memory ran out)."""
    from conftest import spec

    for engine in ("statefulset", "leaderworkerset"):
        values = spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge"},
            parallelism={"tensor": 8, "nodes": 1025},
            multiNode={"engine": engine},
        )
        ours = problem_set(values)
        assert [p for p, _m, _h in ours] == ["parallelism.nodes"], ours
        assert helm.problems(values) == ours  # the templates check the bound (files/spec-checks.json)


# --------------------------------------------------------------------------- one table, two faces


def test_every_kind_of_row_is_known_to_both_interpreters():
    kinds = {row["check"] for row in apiserver._RULES["checks"]}
    assert kinds <= set(apiserver.KINDS)
    chart = (ROOT / "charts/kvgen/templates/plan/_apiserver.tpl").read_text()
    assert set(re.findall(r'eq \$row\.check "(\w+)"', chart)) == set(apiserver.KINDS)


def test_the_size_rows_are_every_size_of_the_spec():
    from kvgen.core.errors import format_path
    from kvgen.input.source import load_documents
    from kvgen.plan.validate import parse_spec

    values = _set(_full_spec(), ("instance", "ephemeralStorage"), "1Ti")
    (doc,) = load_documents(dump(values), "spec.yaml")
    spec, problems = parse_spec(doc)
    assert not problems
    (row,) = [r for r in apiserver._RULES["checks"] if r["check"] == "quantityMax"]
    listed = {format_path(p) for f in row["fields"] for p, _v in apiserver.matches(spec, apiserver.pattern_parts(f))}
    assert listed == {format_path(p) for p, _v in apiserver.sizes(spec)}


def test_an_instance_ephemeral_storage_above_the_bound_is_refused_by_both():
    values = _set(_full_spec(), ("instance", "ephemeralStorage"), "8Ei")
    (problem,) = [p for p in problem_set(values) if p[0] == "instance.ephemeralStorage"]
    assert problem in helm.problems(values)


NEW_ROWS = [
    {
        "fields": ["pod.serviceAccount.name", "pod.imagePullSecrets[*].name"],
        "check": "format",
        "format": "dns1123Label",
        "message": "{value} is not {what} (an example rule)",
        "hint": "drop the dots",
    },
    {
        "fields": ["replicas"],
        "when": {"field": "spec.scheduling.priorityClassName", "op": "eq", "value": "high"},
        "check": "atMost",
        "limit": 3,
        "message": "{raw} is more than {limit} replicas (an example rule)",
    },
    {
        "fields": ["scheduling.nodeSelector.*"],
        "check": "oneOf",
        "values": "taintEffects",
        "message": "{value} is not one of {values} (an example rule)",
    },
    {  # after the format row: one problem a field, the names it refused left alone
        "fields": ["pod.imagePullSecrets[*].name"],
        "check": "unique",
        "skipRefused": True,
        "message": "{value} is listed twice (an example rule)",
    },
    {
        "fields": ["scheduling"],
        "check": "exclusive",
        "keys": ["priorityClassName", "runtimeClassName", "schedulerName"],
        "at": "runtimeClassName",
        "message": "{found}: at most one of {keys} (an example rule)",
    },
    {
        "fields": ["pod.serviceAccount.name"],
        "check": "reserved",
        "names": "volumes",
        "prefixes": "volumePrefixes",
        "message": "{value} is kvgen's {reserved} (an example rule)",
    },
]


@pytest.mark.heavy
def test_a_new_row_is_a_new_rule_on_both_faces(monkeypatch):
    """Adding an API-server rule is one row of files/apiserver.yaml: both faces refuse with its words."""
    table = {**apiserver._RULES, "checks": [*apiserver._RULES["checks"], *NEW_ROWS]}
    monkeypatch.setitem(apiserver._RULES, "checks", table["checks"])
    values = load(HEAD)
    values["replicas"] = 5
    values["scheduling"] = {"priorityClassName": "high", "nodeSelector": {"pool": "gpu"}, "runtimeClassName": "nvidia"}
    secrets = [{"name": "ok"}, {"name": "a.b"}, {"name": "ok"}, {"name": "a.b"}]
    values["pod"] = {"serviceAccount": {"name": "kv-cache-secondary-7"}, "imagePullSecrets": secrets}
    expected = {
        ("pod.serviceAccount.name", "'kv-cache-secondary-7' is kvgen's kv-cache-secondary-N (an example rule)", None),
        (
            "pod.imagePullSecrets[1].name",
            f"'a.b' is not {apiserver.what('dns1123Label')} (an example rule)",
            "drop the dots",
        ),
        (
            "pod.imagePullSecrets[3].name",
            f"'a.b' is not {apiserver.what('dns1123Label')} (an example rule)",
            "drop the dots",
        ),
        ("pod.imagePullSecrets[2].name", "'ok' is listed twice (an example rule)", None),
        (
            "scheduling.runtimeClassName",
            "priorityClassName, runtimeClassName: at most one of priorityClassName, runtimeClassName, schedulerName "
            "(an example rule)",
            None,
        ),
        ("replicas", "5 is more than 3 replicas (an example rule)", None),
        (
            "scheduling.nodeSelector.pool",
            "'gpu' is not one of NoSchedule, PreferNoSchedule, NoExecute (an example rule)",
            None,
        ),
    }
    assert problem_set(values) == expected
    chart = helm.context_chart(replaced=(("files/apiserver.yaml", dump(table)),))
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values, chart_=chart)
    lines = {line.strip() for line in str(err.value).splitlines()}
    assert {f"{p}: {m}" + (f" (hint: {h})" if h else "") for p, m, h in expected} <= lines


@pytest.mark.heavy
@pytest.mark.parametrize(
    "fragment",
    [
        'images:\n  vllm:\n    tag: "v1\'x"\n',
        'scheduling:\n  nodeSelector:\n    "a\'b": x\n',
        'scheduling:\n  priorityClassName: "p\'c"\n',
        'scheduling:\n  tolerations:\n    - {key: "k\'y", operator: Exists}\n',
        'service:\n  apiKeySecret: {name: api, key: "k\'y"}\n',
        PVC + '          ref: {name: "c\'x"}\n',
        'pod:\n  labels:\n    "l\'b": x\n',
        'vllm:\n  volumeMounts:\n    - {name: "v\'x", mountPath: /data}\n',
    ],
)
def test_a_value_with_a_quote_is_worded_alike_by_both_faces(fragment):
    """Both faces quote a value with errors.quoted / kvgen.quoted: "v1'x", not 'v1'x'."""
    text = HEAD + fragment
    found = problem_set(load(text))
    assert found and any('"' in m and "'" in m for _p, m, _h in found), found
    assert helm.problems(load(text)) == found
