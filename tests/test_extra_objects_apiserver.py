"""extraObjects: the API server's own rules (files/apiserver.yaml `extraObjects`; kvgen/plan/extra_objects.py
api_problems and the chart's kvgen.extraObjectApi) on the user's objects of a kind kvgen has a schema for,
and on the items of a v1 List: metadata (the name by kind, labels, annotations and their size) and the pod
spec an object holds (container names, requests above limits, volumes). Each case is refused alike by
kvgen and the chart, at the object's own path; every object here passes its schema, so the strict schema
check (kvgen's face only) adds nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable

import helm
import pytest
from conftest import compile_spec, problem_set, spec

from kvgen.plan.apiserver import what

TOKEN = {"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "hf-token", "key": "HF_TOKEN"}}
VOLUME_HINT = "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir"


def _values(*objects: dict) -> dict:
    return spec(model=TOKEN, extraObjects=[copy.deepcopy(o) for o in objects])


def _both(values: dict) -> set:
    """The problems kvgen finds, which must be the chart's."""
    ours = problem_set(values)
    assert ours == helm.problems(values)
    return ours


def config_map(name: str = "settings", **metadata: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}}


def pod(name: str = "debug", **pod_spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {**pod_spec}}


def deployment(name: str = "proxy", **pod_spec: object) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {**pod_spec}},
        },
    }


def cron_job(name: str = "nightly-report", **pod_spec: object) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", **pod_spec}}}},
        },
    }


def c(name: str, **fields: object) -> dict:
    """A container."""
    return {"name": name, "image": "busybox:1.36", **fields}


def _name(path: str, value: str, fmt: str, function: str) -> tuple[str, str, None]:
    return (f"{path}.metadata.name", f"{value!r} is not {what(fmt)} (ValidateObjectMeta: {function})", None)


def _duplicate(path: str, name: str, function: str) -> tuple[str, str, None]:
    return (f"{path}.name", f"{name!r}: duplicate container name ({function})", None)


def _above(path: str, resource: str, request: str, limit: str) -> tuple[str, str, str]:
    return (
        f"{path}.resources.requests.{resource}",
        f"{request} must be less than or equal to {resource} limit of {limit} (ValidateContainerResourceRequirements)",
        f"lower {path}.resources.requests.{resource} or raise {path}.resources.limits.{resource}",
    )


def _rwop(path: str) -> tuple[str, str, str]:
    message = "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)"
    return (path, message, "keep ReadWriteOncePod alone")


def _unequal(path: str, resource: str, request: str, limit: str) -> tuple[str, str, str]:
    return (
        f"{path}.resources.requests.{resource}",
        f"{request} must be equal to {resource} limit of {limit}: it cannot be overcommitted "
        "(ValidateContainerResourceRequirements)",
        f"make {path}.resources.requests.{resource} equal to {path}.resources.limits.{resource}, or leave the request out",
    )


ROLE_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "system:ml:reader"}
TEMPLATE = "extraObjects[0].spec.template.spec"

REFUSED: dict[str, Callable[[], tuple[list[dict], set]]] = {
    # ValidateObjectMeta: metadata.name by the kind's name function
    "name-is-a-dns-subdomain": lambda: (
        [config_map("Settings_v2")],
        {_name("extraObjects[0]", "Settings_v2", "dns1123Subdomain", "NameIsDNSSubdomain")},
    ),
    "a-service-name-is-a-dns-1035-label": lambda: (
        [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1proxy"}, "spec": {"ports": [{"port": 80}]}}],
        {_name("extraObjects[0]", "1proxy", "dns1035Label", "ValidateServiceName, NameIsDNS1035Label")},
    ),
    "a-namespace-name-is-a-dns-label": lambda: (
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.ml"}}],
        {_name("extraObjects[0]", "team.ml", "dns1123Label", "ValidateNamespaceName, NameIsDNSLabel")},
    ),
    "an-rbac-name-is-a-path-segment": lambda: (
        [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "ml/reader"}},
            {  # no DNS subdomain, and a valid name of a RoleBinding
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "system:ml:Reader"},
                "roleRef": ROLE_REF,
            },
        ],
        {_name("extraObjects[0]", "ml/reader", "pathSegmentName", "ValidateRole, IsValidPathSegmentName")},
    ),
    "a-cron-job-name-has-room-for-its-jobs-suffix": lambda: (
        [cron_job("r" * 53, containers=[c("report")])],
        {_name("extraObjects[0]", "r" * 53, "cronJobName", "ValidateCronJobCreate")},
    ),
    # ValidateLabels, ValidateAnnotations
    "label-key": lambda: (
        [config_map(labels={"-team": "ml"})],
        {
            (
                "extraObjects[0].metadata.labels.-team",
                f"'-team' is not {what('labelKey')} (ValidateObjectMeta: ValidateLabels)",
                None,
            )
        },
    ),
    "label-value": lambda: (
        [config_map(labels={"tier": "gpu pool"})],
        {
            (
                "extraObjects[0].metadata.labels.tier",
                f"'gpu pool' is not {what('labelValue')} (ValidateObjectMeta: ValidateLabels)",
                None,
            )
        },
    ),
    "annotation-key": lambda: (
        [config_map(annotations={"bad key": "x", "Example.COM/Owner": "ml"})],  # case does not matter
        {
            (
                "extraObjects[0].metadata.annotations.bad key",
                f"'bad key' is not {what('labelKey')} (ValidateObjectMeta: ValidateAnnotations)",
                None,
            )
        },
    ),
    # ValidatePodTemplateSpec: a pod template's labels and annotations (issue 33), in every kind that holds one
    "pod-template-labels": lambda: (
        [
            {
                **deployment(containers=[c("proxy")]),
                "spec": {
                    "selector": {"matchLabels": {"app": "proxy"}},
                    "template": {
                        "metadata": {"labels": {"app": "proxy", "tier": "gpu pool"}, "annotations": {"bad key": "x"}},
                        "spec": {"containers": [c("proxy")]},
                    },
                },
            },
            {
                **cron_job(containers=[c("report")]),
                "spec": {
                    "schedule": "0 3 * * *",
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "metadata": {"labels": {"-team": "ml"}},
                                "spec": {"containers": [c("report")], "restartPolicy": "Never"},
                            }
                        }
                    },
                },
            },
            {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": "debug"},
                "template": {"metadata": {"labels": {"tier": "a b"}}, "spec": {"containers": [c("debug")]}},
            },
        ],
        {
            (
                "extraObjects[0].spec.template.metadata.labels.tier",
                f"'gpu pool' is not {what('labelValue')} (ValidatePodTemplateSpec: ValidateLabels)",
                None,
            ),
            (
                "extraObjects[0].spec.template.metadata.annotations.bad key",
                f"'bad key' is not {what('labelKey')} (ValidatePodTemplateSpec: ValidateAnnotations)",
                None,
            ),
            (
                "extraObjects[1].spec.jobTemplate.spec.template.metadata.labels.-team",
                f"'-team' is not {what('labelKey')} (ValidatePodTemplateSpec: ValidateLabels)",
                None,
            ),
            (
                "extraObjects[2].template.metadata.labels.tier",
                f"'a b' is not {what('labelValue')} (ValidatePodTemplateSpec: ValidateLabels)",
                None,
            ),
        },
    ),
    "annotations-size": lambda: (
        [config_map(annotations={"example.com/blob": "x" * 262144})],
        {
            (
                "extraObjects[0].metadata.annotations",
                "the annotations add up to 262160 bytes (keys and values); the API server refuses more than 262144 "
                "in all (ValidateAnnotationsSize)",
                "keep extraObjects[0].metadata.annotations at most 262144 bytes; put large data in a ConfigMap",
            )
        },
    ),
    # ValidatePodSpec: container names
    "container-name-is-a-dns-label": lambda: (
        [deployment(containers=[c("Proxy")])],
        {
            (
                f"{TEMPLATE}.containers[0].name",
                f"'Proxy' is not {what('dns1123Label')} (validateContainerCommon: ValidateDNS1123Label)",
                None,
            )
        },
    ),
    "container-names-are-unique-among-containers-and-init-containers": lambda: (
        [deployment(initContainers=[c("proxy")], containers=[c("proxy"), c("proxy")])],
        {
            _duplicate(f"{TEMPLATE}.containers[1]", "proxy", "validateContainers"),
            _duplicate(f"{TEMPLATE}.initContainers[0]", "proxy", "validateInitContainers"),
        },
    ),
    "an-ephemeral-container-name-is-unique-too": lambda: (
        [pod(containers=[c("app")], ephemeralContainers=[c("app")])],
        {_duplicate("extraObjects[0].spec.ephemeralContainers[0]", "app", "validateEphemeralContainers")},
    ),
    # ValidatePodSpec: each container's requests at most its limits
    "requests-at-most-limits": lambda: (
        [
            deployment(
                initContainers=[c("init", resources={"requests": {"cpu": 0.75}, "limits": {"cpu": "500m"}})],
                containers=[
                    c(
                        "proxy",
                        resources={
                            "requests": {"cpu": "2", "memory": "2Gi"},
                            "limits": {"cpu": "1500m", "memory": "1Gi"},
                        },
                    ),
                    c(
                        "cache",
                        resources={
                            "requests": {"cpu": "250m", "ephemeral-storage": "20Gi"},
                            "limits": {"cpu": 0.5, "ephemeral-storage": "10G"},
                        },
                    ),
                    c("metrics", resources={"requests": {"memory": 2000000}, "limits": {"memory": "1M"}}),
                ],
            )
        ],
        {
            _above(f"{TEMPLATE}.initContainers[0]", "cpu", "0.75", "500m"),
            _above(f"{TEMPLATE}.containers[0]", "cpu", "2", "1500m"),
            _above(f"{TEMPLATE}.containers[0]", "memory", "2Gi", "1Gi"),
            _above(f"{TEMPLATE}.containers[1]", "ephemeral-storage", "20Gi", "10G"),
            _above(f"{TEMPLATE}.containers[2]", "memory", "2000000", "1M"),
        },
    ),
    # an extended resource's or hugepages' request needs a limit equal to it (helper.IsOvercommitAllowed; issue 33)
    "not-overcommittable": lambda: (
        [
            pod(
                containers=[
                    c("gpu", resources={"requests": {"nvidia.com/gpu": 1}}),
                    c("pages", resources={"requests": {"hugepages-2Mi": "1Gi"}, "limits": {"hugepages-2Mi": "2Gi"}}),
                    c("rdma", resources={"requests": {"rdma/ib": "1"}, "limits": {"rdma/ib": 2}}),
                    c("huge", resources={"requests": {"hugepages-1Gi": "2Gi"}, "limits": {"hugepages-1Gi": "2049Mi"}}),
                    # the same amounts written otherwise, and native resources, which may be overcommitted
                    c(
                        "fine",
                        resources={
                            "requests": {"hugepages-1Gi": "1Gi", "example.com/fpga": 2, "cpu": "1", "memory": "1Gi"},
                            "limits": {"hugepages-1Gi": "1024Mi", "example.com/fpga": "2", "memory": "2Gi"},
                        },
                    ),
                    c("limit-only", resources={"limits": {"nvidia.com/gpu": 1}}),
                ]
            )
        ],
        {
            (
                "extraObjects[0].spec.containers[0].resources.limits.nvidia.com/gpu",
                "required: nvidia.com/gpu cannot be overcommitted, so its request needs a limit equal to it "
                "(ValidateContainerResourceRequirements)",
                "set extraObjects[0].spec.containers[0].resources.limits.nvidia.com/gpu to the request, or give the "
                "limit alone (the request defaults to it)",
            ),
            _unequal("extraObjects[0].spec.containers[1]", "hugepages-2Mi", "1Gi", "2Gi"),
            _unequal("extraObjects[0].spec.containers[2]", "rdma/ib", "1", "2"),
            _unequal("extraObjects[0].spec.containers[3]", "hugepages-1Gi", "2Gi", "2049Mi"),
        },
    ),
    # ValidatePersistentVolumeClaimSpec: ReadWriteOncePod alone, in a claim, a StatefulSet's claim templates and a
    # pod's ephemeral volume (files/apiserver.yaml extraObjects.claimSpecs)
    "read-write-once-pod-with-others": lambda: (
        [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOncePod", "ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "store"},
                "spec": {
                    "selector": {"matchLabels": {"app": "store"}},
                    "serviceName": "store",
                    "template": {"metadata": {"labels": {"app": "store"}}, "spec": {"containers": [c("store")]}},
                    "volumeClaimTemplates": [
                        {"metadata": {"name": "ok"}, "spec": {"accessModes": ["ReadWriteOncePod"]}},
                        {"metadata": {"name": "bad"}, "spec": {"accessModes": ["ReadWriteMany", "ReadWriteOncePod"]}},
                    ],
                },
            },
            pod(
                containers=[c("app")],
                volumes=[
                    {
                        "name": "scratch",
                        "ephemeral": {
                            "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]}}
                        },
                    }
                ],
            ),
        ],
        {
            _rwop("extraObjects[0].spec.accessModes"),
            _rwop("extraObjects[1].spec.volumeClaimTemplates[1].spec.accessModes"),
            _rwop("extraObjects[2].spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes"),
        },
    ),
    # ValidateVolumes, validateVolumeSource
    "a-volume-with-two-sources": lambda: (
        [pod(containers=[c("app")], volumes=[{"name": "data", "emptyDir": {}, "configMap": {"name": "x"}}])],
        {
            (
                "extraObjects[0].spec.volumes[0]",
                "may not specify more than 1 volume type (configMap, emptyDir; validateVolumeSource)",
                VOLUME_HINT,
            )
        },
    ),
    "a-volume-without-a-source": lambda: (
        [pod(containers=[c("app")], volumes=[{"name": "data"}])],
        {("extraObjects[0].spec.volumes[0]", "must specify a volume type (validateVolumeSource)", VOLUME_HINT)},
    ),
    "volume-name-is-a-dns-label": lambda: (
        [deployment(containers=[c("proxy")], volumes=[{"name": "Cache_2", "emptyDir": {}}])],
        {(f"{TEMPLATE}.volumes[0].name", f"'Cache_2' is not {what('dns1123Label')} (ValidateVolumes)", None)},
    ),
    "volume-names-are-unique": lambda: (
        [
            deployment(
                containers=[c("proxy")], volumes=[{"name": "cache", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}]
            )
        ],
        {(f"{TEMPLATE}.volumes[1].name", "'cache': duplicate volume name (ValidateVolumes)", None)},
    ),
    # a v1 List's items, recursively; a custom resource's metadata too (the API server validates it)
    "the-items-of-a-list": lambda: (
        [
            {
                "apiVersion": "v1",
                "kind": "List",
                "metadata": {"name": "extras"},
                "items": [
                    config_map("Settings_v2"),
                    {
                        "apiVersion": "v1",
                        "kind": "List",
                        "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1proxy"}}],
                    },
                    {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "Also_Checked"}},
                ],
            }
        ],
        {
            _name("extraObjects[0].items[0]", "Settings_v2", "dns1123Subdomain", "NameIsDNSSubdomain"),
            _name(
                "extraObjects[0].items[1].items[0]", "1proxy", "dns1035Label", "ValidateServiceName, NameIsDNS1035Label"
            ),
            _name("extraObjects[0].items[2]", "Also_Checked", "dns1123Subdomain", "NameIsDNSSubdomain"),
        },
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_api_servers_rules_refuse_alike_on_both_faces(case):
    objects, expected = REFUSED[case]()  # built when run: the words name formats of files/apiserver.yaml
    assert _both(_values(*objects)) == expected


POD_SPEC = {"containers": [c("app"), c("app")]}
HOLDERS = [  # every kind that holds a pod spec, and where (files/apiserver.yaml extraObjects.podSpecs)
    ("v1", "Pod", {"spec": POD_SPEC}, "spec"),
    ("v1", "PodTemplate", {"template": {"spec": POD_SPEC}}, "template.spec"),
    ("v1", "ReplicationController", {"spec": {"template": {"spec": POD_SPEC}}}, "spec.template.spec"),
    *[
        ("apps/v1", kind, {"spec": {"selector": {}, "template": {"spec": POD_SPEC}}}, "spec.template.spec")
        for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
    ],
    ("batch/v1", "Job", {"spec": {"template": {"spec": POD_SPEC}}}, "spec.template.spec"),
    (
        "batch/v1",
        "CronJob",
        {"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}}}},
        "spec.jobTemplate.spec.template.spec",
    ),
]


@pytest.mark.heavy
def test_the_pod_spec_of_every_kind_that_holds_one_is_checked():
    objects = [
        {"apiVersion": api, "kind": kind, "metadata": {"name": f"holder-{i}"}, **body}
        for i, (api, kind, body, _where) in enumerate(HOLDERS)
    ]
    assert _both(_values(*objects)) == {
        _duplicate(f"extraObjects[{i}].{where}.containers[1]", "app", "validateContainers")
        for i, (_api, _kind, _body, where) in enumerate(HOLDERS)
    }


# ----------------------------------------------------------------------------- what the API server accepts

VALID_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "sidecar-proxy",
        "labels": {"app.kubernetes.io/name": "proxy", "tier": ""},
        "annotations": {"Example.com/Owner": "ml-platform"},
    },
    "spec": {
        "selector": {"matchLabels": {"app": "proxy"}},
        "template": {
            "metadata": {"labels": {"app": "proxy"}},
            "spec": {
                "initContainers": [c("init", resources={"requests": {"cpu": "100m"}, "limits": {"cpu": 0.1}})],
                "containers": [
                    c(
                        "proxy",
                        resources={
                            "requests": {"cpu": "250m", "memory": "256Mi", "ephemeral-storage": "1Gi"},
                            "limits": {"cpu": 0.5, "memory": "1Gi", "ephemeral-storage": "1073741824"},
                        },
                        volumeMounts=[{"name": "config", "mountPath": "/etc/envoy"}],
                    ),
                ],
                "volumes": [
                    {"name": "config", "configMap": {"name": "proxy-config"}},
                    {"name": "scratch", "emptyDir": {}},
                ],
            },
        },
    },
}


@pytest.mark.heavy
def test_a_valid_deployment_is_accepted_and_one_change_refused_on_both_faces():
    assert _both(_values(VALID_DEPLOYMENT)) == set()
    changed = copy.deepcopy(VALID_DEPLOYMENT)
    changed["spec"]["template"]["spec"]["initContainers"][0]["name"] = "proxy"
    assert _both(_values(changed)) == {_duplicate(f"{TEMPLATE}.initContainers[0]", "proxy", "validateInitContainers")}


VALID_LIST = {
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {"name": "extras"},
    "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "proxy"}, "spec": {"ports": [{"port": 80}]}},
        {  # no DNS subdomain, and a valid name of a ClusterRole
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "system:ml:Reader"},
        },
        {  # any name
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": "Node CSR #1"},
            "spec": {"request": "LS0tLS1CRUdJTg==", "signerName": "example.com/serving"},
        },
        {"apiVersion": "v1", "kind": "List", "items": [config_map("proxy-config", labels={"app": "proxy"})]},
        cron_job("r" * 52, containers=[c("report")]),
    ],
}


@pytest.mark.heavy
def test_a_valid_list_is_accepted_and_one_change_refused_on_both_faces():
    assert _both(_values(VALID_LIST)) == set()
    changed = copy.deepcopy(VALID_LIST)
    changed["items"][3]["items"][0]["metadata"]["labels"] = {"app": "proxy!"}
    assert _both(_values(changed)) == {
        (
            "extraObjects[0].items[3].items[0].metadata.labels.app",
            f"'proxy!' is not {what('labelValue')} (ValidateObjectMeta: ValidateLabels)",
            None,
        )
    }


@pytest.mark.heavy
def test_a_custom_resources_name_is_held_to_the_api_servers_rule_too():
    """Found by the fuzzer (issue 33): a kind kvgen has no schema for (a CRD it does not vendor) was rendered
    with the warning only, though the API server validates a custom resource's metadata as any object's
    (apiextensions: ValidateObjectMetaAccessor with NameIsDNSSubdomain)."""
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "Bad_Name"}}
    found = _both(_values(widget))
    assert (
        "extraObjects[0].metadata.name",
        f"'Bad_Name' is not {what('dns1123Subdomain')} (ValidateObjectMeta: NameIsDNSSubdomain)",
        None,
    ) in found
    assert _both(_values({**widget, "metadata": {"name": "good-name"}})) == set()


# ----------------------------------------------------------------------------- a List's items are objects of their own
# kubectl and Helm create each item of a v1 List and no object for the List itself, so each item needs what
# an extraObjects item needs. Found by the fuzzer (issue 33): items with `apiVersion: 2`, no kind, or a plain
# string were rendered by both faces, and the API server refused them.

REQUIRED_KIND = "required: the object's kind, a string such as NetworkPolicy"
REQUIRED_API = "required: the object's API group and version, a string such as networking.k8s.io/v1"
NOT_AN_OBJECT = "an object kubectl and Helm create: a mapping with apiVersion, kind and metadata.name"


@pytest.mark.heavy
def test_a_lists_items_need_what_an_object_needs_on_both_faces():
    malformed = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": 2, "kind": "ConfigMap", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "metadata": {"name": "b"}},
            "just a string",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
            {"apiVersion": "v1", "kind": "List", "items": 5},
        ],
    }
    assert _both(_values(malformed)) == {
        ("extraObjects[0].items[0].apiVersion", REQUIRED_API, None),
        ("extraObjects[0].items[1].kind", REQUIRED_KIND, None),
        ("extraObjects[0].items[2]", NOT_AN_OBJECT, None),
        ("extraObjects[0].items[3].metadata.name", "required: the object's name, a string", None),
        (
            "extraObjects[0].items[4].items",
            "a List's items: a list of objects, each with apiVersion, kind and metadata.name",
            None,
        ),
    }


@pytest.mark.heavy
def test_a_list_needs_no_name_and_its_items_are_counted_as_objects_on_both_faces():
    """A List has no object of its own (so no metadata.name); its items are deduplicated with the other items,
    compared with kvgen's own objects and warned about as any object."""
    unnamed = {"apiVersion": "v1", "kind": "List", "items": [config_map("proxy-config")]}
    assert _both(_values(unnamed)) == set()
    twice = _values(unnamed, config_map("proxy-config"))
    assert _both(twice) == {
        (
            "extraObjects[1].metadata.name",
            "ConfigMap 'proxy-config' is also extraObjects[0].items[0]: the same object twice",
            "remove one of them, or rename it",
        )
    }
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    values = _values({"apiVersion": "v1", "kind": "List", "items": [config_map("proxy-config"), widget]})
    expected = ["extraObjects[0].items[1]: example.com/v1 Widget is not validated: kvgen has no schema for it"]
    assert compile_spec(values).plan.warnings == expected
    assert helm.objects_and_warnings(values)[1] == expected


@pytest.mark.heavy
def test_a_list_item_that_is_one_of_kvgens_own_objects_is_refused_on_both_faces():
    values = _values({"apiVersion": "v1", "kind": "List", "items": [config_map("x")]})
    own = f"{values['name']}"
    values["extraObjects"][0]["items"][0] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": own}}
    found = _both(values)
    assert {p[0] for p in found} == {"extraObjects[0].items[0].metadata.name"}
    assert "is kvgen's own v1 Service" in next(iter(found))[1]
