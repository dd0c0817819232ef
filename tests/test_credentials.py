"""No secret in Git: literal credentials are refused by kvgen and the chart alike, for native,
KAITO and KServe input; an API key comes from a Secret (service.apiKeySecret), and a
LoadBalancer without one is warned about."""

from __future__ import annotations

import helm
import helm_python
import pytest
from conftest import ROOT, compile_spec, container, dump, spec

from kvgen.app.compiler import compile_text
from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.plan.build import LOAD_BALANCER_WARNING
from kvgen.plan.extra_objects import SECRET_HINT

SEEDS = ROOT / "examples" / "seeds"
SECRET = {"name": "vllm-api-key", "key": "VLLM_API_KEY"}

# vllm settings -> whether they hold a literal credential
VLLM = {
    "env HF_TOKEN literal": ({"env": [{"name": "HF_TOKEN", "value": "hf_abc"}]}, True),
    "env HUGGING_FACE_HUB_TOKEN literal": ({"env": [{"name": "HUGGING_FACE_HUB_TOKEN", "value": "hf_abc"}]}, True),
    "env HF_API_TOKEN literal": ({"env": [{"name": "HF_API_TOKEN", "value": "hf_abc"}]}, True),
    "env VLLM_API_KEY literal": ({"env": [{"name": "VLLM_API_KEY", "value": "sk"}]}, True),
    "env *_API_KEY literal": ({"env": [{"name": "OPENAI_API_KEY", "value": "sk"}]}, True),
    "env *_TOKEN lower case": ({"env": [{"name": "wandb_token", "value": "x"}]}, True),
    "env *_SECRET literal": ({"env": [{"name": "S3_SECRET", "value": "x"}]}, True),
    "env *_PASSWORD literal": ({"env": [{"name": "DB_PASSWORD", "value": "x"}]}, True),
    "env *_SECRET_ACCESS_KEY literal": ({"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "x"}]}, True),
    "env HF_TOKEN from a Secret": (
        {"env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]},
        False,
    ),
    "env HF_TOKEN empty": ({"env": [{"name": "HF_TOKEN", "value": ""}]}, False),
    "env not a credential": (
        {
            "env": [
                {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"},
                {"name": "TOKENIZERS_PARALLELISM", "value": "false"},
            ]
        },
        False,
    ),
    "--api-key=literal": ({"extraArgs": ["--api-key=sk-123"]}, True),
    "--api-key literal": ({"extraArgs": ["--api-key", "sk-123"]}, True),
    "--api-key two literals": ({"extraArgs": ["--api-key", "$(VLLM_API_KEY)", "sk-2"]}, True),
    "--api_key=literal": ({"extraArgs": ["--api_key=sk-123"]}, True),
    "--api-ke=literal (abbreviated)": ({"extraArgs": ["--api-ke=sk-123"]}, True),
    "--hf-token=literal": ({"extraArgs": ["--hf-token=hf_abc"]}, True),
    "--hf-token literal": ({"extraArgs": ["--enable-chunked-prefill", "--hf-token", "hf_abc"]}, True),
    "--api-key=$(VAR)": ({"extraArgs": ["--api-key=$(VLLM_API_KEY)"]}, False),
    "--api-key $(VAR)": ({"extraArgs": ["--api-key", "$(MY_KEY)", "--max-num-seqs=8"]}, False),
    "--hf-token alone (use the login cache)": ({"extraArgs": ["--hf-token", "--max-num-seqs=8"]}, False),
    "a literal after another flag": ({"extraArgs": ["--served-model-name", "sk-looks-like-a-key"]}, False),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(VLLM))
def test_kvgen_and_the_chart_refuse_literal_credentials_alike(case):
    settings, literal = VLLM[case]
    values = spec(vllm=settings)
    try:
        compile_spec(values)
        ours = None
    except SpecError as exc:
        ours = str(exc)
    try:
        helm.render(values)
        theirs = None
    except helm_python.HelmRenderError as exc:
        theirs = str(exc)
    if not literal:
        assert ours is None and theirs is None, ours or theirs
        return
    assert ours is not None and "a literal value would be committed with the spec" in ours, ours
    assert theirs is not None and "a literal value would be committed with the spec" in theirs, theirs
    assert ("Secret" in ours) and ("Secret" in theirs)


def test_the_credential_flags_are_real_vllm_flags():
    from kvgen.data import flags

    options = flags.vllm_snapshot().vllm["serve"]["options"]
    flags = catalog.load("credentials.yaml")["flags"]
    assert set(flags) == {"--hf-token", "--api-key"}
    assert all(options[f]["takes_value"] for f in flags)


def test_a_kserve_literal_is_refused_at_the_field_written():
    text = (
        (SEEDS / "kserve-qwen2-7b.yaml")
        .read_text()
        .replace(
            "      - name: main\n",
            "      - name: main\n        args: [--max-num-seqs=8, --api-key=sk-live]\n        env:\n"
            "          - {name: OPENAI_API_KEY, value: sk-1}\n"
            "          - {name: VLLM_ADDITIONAL_ARGS, value: '--hf-token hf_x'}\n",
        )
    )
    text = text.replace(
        "  name: qwen2-7b-kv-cache-offloading\n",
        "  name: qwen2-7b-kv-cache-offloading\n  annotations: {kvgen.dev/instance-type: Standard_NC24ads_A100_v4}\n",
    )
    with pytest.raises(SpecError) as err:
        compile_text(text, "svc.yaml")
    rendered = [p.render() for p in err.value.problems]
    assert len(rendered) == 3, rendered
    assert any(
        r.startswith("svc.yaml:17:34: spec.template.containers[0].args[1]: --api-key takes a credential")
        for r in rendered
    )
    assert any(
        r.startswith("svc.yaml:19:13: spec.template.containers[0].env[0]: OPENAI_API_KEY carries a credential")
        for r in rendered
    )
    assert any(
        r.startswith("svc.yaml:20:42: spec.template.containers[0].env[1].value: the value of --hf-token")
        for r in rendered
    )


def test_a_kaito_literal_in_the_inference_config_is_refused_at_its_line():
    text = (
        (SEEDS / "kaito-gemma-4-12b.yaml")
        .read_text()
        .replace(
            "    kv_cache_cpu_memory_utilization: 0.25\n",
            "    kv_cache_cpu_memory_utilization: 0.25\n    vllm:\n      api-key: sk-abc\n",
        )
    )
    with pytest.raises(SpecError) as err:
        compile_text(text, "kaito.yaml")
    (problem,) = err.value.problems
    assert problem.render().startswith(
        "kaito.yaml:10:7: data.inference_config.yaml.vllm.api-key: --api-key takes a credential"
    )


def test_api_key_secret_becomes_vllm_api_key_from_the_secret_in_kvgen_and_the_chart():
    token = {"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "hf", "key": "HF_TOKEN"}}  # gated
    values = spec(model=token, service={"type": "LoadBalancer", "apiKeySecret": SECRET})
    compiled = compile_spec(values)
    env = container(compiled, "vllm")["env"]
    assert {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": SECRET}} in env
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compiled.objects)
    assert LOAD_BALANCER_WARNING not in compiled.plan.warnings
    notes = next(t for name, t in helm.render(values).items() if name.endswith("NOTES.txt"))
    assert "Warning" not in notes


@pytest.mark.heavy
@pytest.mark.parametrize(
    "service,extra,warned",
    [
        ({"type": "LoadBalancer"}, {}, True),
        ({"type": "ClusterIP"}, {}, False),
        ({"type": "LoadBalancer", "apiKeySecret": SECRET}, {}, False),
        ({"type": "LoadBalancer"}, {"env": [{"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": SECRET}}]}, False),
        ({"type": "LoadBalancer"}, {"extraArgs": ["--api-key=$(MY_KEY)"]}, False),
    ],
)
def test_a_load_balancer_without_an_api_key_is_warned_about_by_kvgen_and_the_chart(service, extra, warned):
    values = spec(service=service, vllm=extra)
    compiled = compile_spec(values)
    assert (LOAD_BALANCER_WARNING in compiled.plan.warnings) == warned
    notes = next(t for name, t in helm.render(values).items() if name.endswith("NOTES.txt"))
    assert (f"Warning: {LOAD_BALANCER_WARNING}" in notes.splitlines()) == warned


@pytest.mark.heavy
def test_the_load_balancer_warning_is_printed(tmp_path):
    from conftest import run_kvgen

    f = tmp_path / "lb.yaml"
    f.write_text(dump(spec(service={"type": "LoadBalancer"})))
    result = run_kvgen("render", str(f))
    assert result.returncode == 0
    assert f"kvgen: demo: warning: {LOAD_BALANCER_WARNING}" in result.stderr


# ----------------------------------------------------------------------------- issue 20: tokens anywhere

# made-up tokens of each well-known shape (none is a real credential)
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
AWS_ID = "AKIA" + "ABCDEFGHIJKLMNOP"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ01"
OPENAI = "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345Pqr678"
SLACK = "xoxb-" + "123456789012-abcdefghij"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJrdmdlbiJ9.c2lnbmF0dXJl"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB...\n-----END RSA PRIVATE KEY-----"
# made-up tokens in the shapes real scanners (gitleaks, detect-secrets) know
AWS_TEMP_ID = "ASIA" + "ABCDEFGHIJKLMN23"
TOKEN_URL = "https://" + "a1b2c3d4e5f6a7b8c9d0e1f2a3" + "@github.com/acme/private.git"
BEARER = "Authorization: Bearer " + "abcdefghijklmnopqrstuvwx12"
GITLAB = "glpat-" + "abcdefghij0123456789"
GOOGLE = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
STRIPE = "sk_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AZURE_KEY = "AccountKey=" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4=="
SENDGRID = "SG." + "a1B2c3D4e5F6g7H8i9J0k1" + "." + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V"


def _env(name: str, value: str) -> dict:
    return {"vllm": {"env": [{"name": name, "value": value}]}}


def _pod(**container) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "side"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.37", **container}]},
    }


def _config_map(data: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data}


# spec overrides -> the spec path of the one problem (None: no credential, the spec is accepted)
ANYWHERE = {
    # bare names and suffixes the name rules missed
    "env PASSWORD": (_env("PASSWORD", "hunter2"), "vllm.env[0].value"),
    "env TOKEN": (_env("TOKEN", "abc"), "vllm.env[0].value"),
    "env API_KEY": (_env("API_KEY", "abc"), "vllm.env[0].value"),
    "env *_PASSWD": (_env("DB_PASSWD", "abc"), "vllm.env[0].value"),
    "env *_PWD": (_env("REDIS_PWD", "abc"), "vllm.env[0].value"),
    "env AWS_ACCESS_KEY_ID": (_env("AWS_ACCESS_KEY_ID", "abc"), "vllm.env[0].value"),
    # a token's shape under any name, in any field
    "hf_ token under another name": (_env("MY_SETTING", HF), "vllm.env[0].value"),
    "AWS key id in an env value": (_env("S3_CONFIG", f"id={AWS_ID}"), "vllm.env[0].value"),
    "GitHub token in an arg": ({"vllm": {"extraArgs": [f"--served-model-name={GITHUB}"]}}, "vllm.extraArgs[0]"),
    "GitHub fine-grained token": (_env("GIT_URL_AUTH", GITHUB_PAT), "vllm.env[0].value"),
    "OpenAI key": (_env("LLM_BACKEND", OPENAI), "vllm.env[0].value"),
    "Slack token in an annotation": (
        {"pod": {"annotations": {"example.com/notify": SLACK}}},
        "pod.annotations.example.com/notify",
    ),
    "JWT in an annotation": ({"pod": {"annotations": {"example.com/auth": JWT}}}, "pod.annotations.example.com/auth"),
    "AWS key id in a label": ({"pod": {"labels": {"owner": AWS_ID}}}, "pod.labels.owner"),
    "hf_ token as a label key": ({"pod": {"labels": {HF: "x"}}}, f"pod.labels.{HF}"),
    "private key in an env value": (_env("TLS_KEY", PEM), "vllm.env[0].value"),
    "user:pass@ in an image": (
        {"images": {"vllm": {"repository": "robot:s3cret@registry.example.com/vllm/vllm-openai"}}},
        "images.vllm.repository",
    ),
    "user:pass@ in a URL": (_env("HF_ENDPOINT", "https://user:s3cret@hf-mirror.example.com"), "vllm.env[0].value"),
    # credentials inside JSON options
    "--hf-overrides token": ({"vllm": {"extraArgs": ['--hf-overrides={"token": "abc"}']}}, "vllm.extraArgs[0]"),
    "--model-loader-extra-config": (
        {"vllm": {"extraArgs": ["--model-loader-extra-config", '{"aws_secret_access_key": "abc", "bucket": "b"}']}},
        "vllm.extraArgs[1]",
    ),
    # issue 33: names and shapes the table missed
    "env PGPASSWORD": (_env("PGPASSWORD", "abc"), "vllm.env[0].value"),
    "env SECRET_KEY": (_env("SECRET_KEY", "abc"), "vllm.env[0].value"),
    "env PRIVATE_KEY": (_env("PRIVATE_KEY", "abc"), "vllm.env[0].value"),
    "env *_PRIVATE_KEY": (_env("SIGNING_PRIVATE_KEY", "abc"), "vllm.env[0].value"),
    "env *_APIKEY": (_env("OPENAI_APIKEY", "abc"), "vllm.env[0].value"),
    "a token as a URL's user name": (_env("GIT_REMOTE", TOKEN_URL), "vllm.env[0].value"),
    "an Authorization header in an annotation": (
        {"pod": {"annotations": {"example.com/probe-header": BEARER}}},
        "pod.annotations.example.com/probe-header",
    ),
    "AWS temporary key id": (_env("S3_CONFIG", AWS_TEMP_ID), "vllm.env[0].value"),
    "GitLab token": (_env("GIT_CONFIG", GITLAB), "vllm.env[0].value"),
    "Google API key": (_env("MAPS", GOOGLE), "vllm.env[0].value"),
    "Stripe key": (_env("BILLING", STRIPE), "vllm.env[0].value"),
    "npm token": (_env("REGISTRY_CONFIG", NPM), "vllm.env[0].value"),
    "Azure storage key": (_env("AZ_CONN", "DefaultEndpointsProtocol=https;" + AZURE_KEY), "vllm.env[0].value"),
    "SendGrid key": (_env("MAIL", SENDGRID), "vllm.env[0].value"),
    # vLLM's dotted form of a JSON option, and a key written with JSON escapes
    "--hf-overrides.token=": ({"vllm": {"extraArgs": ["--hf-overrides.token=abc"]}}, "vllm.extraArgs[0]"),
    "--hf-overrides.token VALUE": ({"vllm": {"extraArgs": ["--hf-overrides.token", "abc"]}}, "vllm.extraArgs[1]"),
    "an escaped JSON key": ({"vllm": {"extraArgs": ['--hf-overrides={"to\\u006ben": "abc"}']}}, "vllm.extraArgs[0]"),
    # extraObjects: containers' env and args, and a ConfigMap (read with envFrom), by the same rules
    "extraObjects: a Pod's HF_TOKEN": (
        {"extraObjects": [_pod(env=[{"name": "HF_TOKEN", "value": "abc"}])]},
        "extraObjects[0].spec.containers[0].env[0].value",
    ),
    "extraObjects: a Pod's DB_PASSWORD": (
        {"extraObjects": [_pod(env=[{"name": "DB_PASSWORD", "value": "abc"}])]},
        "extraObjects[0].spec.containers[0].env[0].value",
    ),
    "extraObjects: a Pod's --api-key": (
        {"extraObjects": [_pod(args=["--api-key=abc"])]},
        "extraObjects[0].spec.containers[0].args[0]",
    ),
    "extraObjects: a ConfigMap's VLLM_API_KEY": (
        {"extraObjects": [_config_map({"VLLM_API_KEY": "abc", "LOG_LEVEL": "info"})]},
        "extraObjects[0].data.VLLM_API_KEY",
    ),
    "extraObjects: a ConfigMap in a List": (
        {"extraObjects": [{"apiVersion": "v1", "kind": "List", "items": [_config_map({"HF_TOKEN": "abc"})]}]},
        "extraObjects[0].items[0].data.HF_TOKEN",
    ),
    # issue 33: legitimate values the rules refused
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": (_env("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"), None),
    "PAD_TOKEN": (_env("PAD_TOKEN", "<pad>"), None),
    "BOS_TOKEN": (_env("BOS_TOKEN", "<s>"), None),
    "MAX_NUM_TOKEN": (_env("MAX_NUM_TOKEN", "4096"), None),
    "a long kebab-case sk- name": (
        {"vllm": {"extraArgs": ["--served-model-name", "sk-llama-3-1-8b-instruct-for-the-search-team-v2"]}},
        None,
    ),
    "an ASIA... label value": ({"pod": {"labels": {"region": "ASIAPACIFICSOUTHEAST"}}}, None),
    "basic in prose": ({"pod": {"annotations": {"example.com/note": "basic configuration-management"}}}, None),
    "a ConfigMap of settings": ({"extraObjects": [_config_map({"PAD_TOKEN": "<pad>", "LOG": "x"})]}, None),
    # legitimate values
    "model id": ({"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}}, None),
    "image digest": ({"images": {"vllm": {"digest": "sha256:" + "0123456789abcdef" * 4}}}, None),
    "image with a registry port": (
        {"images": {"vllm": {"repository": "registry.example.com:5000/vllm/vllm-openai"}}},
        None,
    ),
    "hf_transfer": (_env("HF_HUB_ENABLE_HF_TRANSFER", "1"), None),
    "a short sk- name": ({"vllm": {"extraArgs": ["--served-model-name", "sk-looks-like-a-key"]}}, None),
    "$(NAME) in a JSON option": ({"vllm": {"extraArgs": ['--hf-overrides={"token": "$(HF_TOKEN)"}']}}, None),
    "special tokens in a JSON option": (
        {"vllm": {"extraArgs": ['--hf-overrides={"pad_token": "<pad>", "eos_token": "</s>"}']}},
        None,
    ),
    "vault annotation": ({"pod": {"annotations": {"vault.hashicorp.com/agent-inject-token": "true"}}}, None),
    "a base64 annotation": ({"pod": {"annotations": {"example.com/config": "eyJhIjogMX0="}}}, None),
    "user@ without a password": (_env("HF_ENDPOINT", "https://mirror@hf.example.com"), None),
    "PWD": (_env("PWD", "/srv"), None),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(ANYWHERE))
def test_a_credential_anywhere_is_refused_by_kvgen_and_the_chart_alike(case):
    overrides, path = ANYWHERE[case]
    values = spec(**{k: v if isinstance(v, list) else {**spec().get(k, {}), **v} for k, v in overrides.items()})
    if path is None:
        compile_spec(values)  # accepted
        assert helm.problems(values) == set()
        return
    from conftest import problem_set

    ours = problem_set(values)
    assert [p for p, _m, _h in ours] == [path], ours
    ((_p, message, hint),) = ours
    assert "credential" in message and "Secret" in (hint or "") + message
    secrets = (HF, AWS_ID, GITHUB, GITHUB_PAT, OPENAI, SLACK, JWT, "hunter2", "s3cret")
    assert not any(s in message or s in (hint or "") for s in secrets)  # never repeated
    assert helm.problems(values) == ours


@pytest.mark.heavy
def test_a_credential_in_an_annotation_is_refused_by_the_cli_at_its_line(tmp_path):
    from conftest import run_kvgen

    f = tmp_path / "s.yaml"
    f.write_text(dump(spec(pod={"annotations": {"example.com/x": "ok", "example.com/auth": JWT}})))
    result = run_kvgen("render", str(f))
    assert result.returncode == 1 and result.stdout == ""
    line = next(i + 1 for i, t in enumerate(f.read_text().splitlines()) if "example.com/auth" in t)
    assert (
        f"{f}:{line}:" in result.stderr and "pod.annotations.example.com/auth: holds a JSON Web Token" in result.stderr
    )
    assert JWT not in result.stderr


@pytest.mark.heavy
def test_every_shape_finds_its_sample_and_the_project_files_hold_none():
    """Each pattern of credentials.yaml matches its made-up token; no example spec, seed or golden
    output (sha256 digests, the launcher's hash, base64-looking data kvgen writes) holds a shape."""
    import re

    shapes = catalog.load("credentials.yaml")["shapes"]
    samples = [
        HF,
        AWS_ID,
        AWS_TEMP_ID,
        GITHUB,
        OPENAI,
        SLACK,
        JWT,
        PEM,
        "https://u:p@h",
        TOKEN_URL,
        BEARER,
        GITLAB,
        GOOGLE,
        STRIPE,
        NPM,
        AZURE_KEY,
        SENDGRID,
        "u:p@registry.example.com/x",
    ]
    assert len(shapes) == len(samples)
    for shape, sample in zip(shapes, samples, strict=True):
        assert re.search(shape["pattern"], sample), shape["what"]
        assert not shape.get("also") or re.search(shape["also"], sample), shape["what"]
    texts = [p.read_text() for d in ("examples", "golden") for p in sorted((ROOT / d).rglob("*.yaml"))]
    for shape in shapes:
        assert not any(re.search(shape["pattern"], line) for t in texts for line in t.splitlines()), shape["what"]


@pytest.mark.heavy
@pytest.mark.parametrize(
    "objects,path",
    [
        (
            [{"apiVersion": "v1", "kind": "secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}],
            "extraObjects[0].stringData",
        ),
        (
            [{"apiVersion": "v1", "kind": "Secret ", "metadata": {"name": "s"}, "data": {"k": "dg=="}}],
            "extraObjects[0].data",
        ),
        (
            [
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "metadata": {"name": "bundle"},
                    "items": [
                        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}
                    ],
                }
            ],
            "extraObjects[0].items[0].stringData",
        ),
    ],
    ids=["kind secret", "kind 'Secret '", "a Secret in a List"],
)
def test_a_secrets_values_are_refused_however_its_kind_is_written_and_inside_a_list(objects, path):
    """Issue 33: the Secret refusal looked for kind == "Secret" at the top level only."""
    from conftest import problem_set

    values = spec(extraObjects=objects)
    ours = problem_set(values)
    assert (path, next(m for p, m, _h in ours if p == path), SECRET_HINT) in ours
    assert any(p == path and "kvgen never writes secret values" in m for p, m, _h in ours)
    assert helm.problems(values) == ours


PLANTED_KEY = "hf_QZAAAAAAaB3dE5gH7jK9mN1pQ3sT5vX7z"
KAITO_WITH_A_KEY = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: inference-params}}
{PLANTED_KEY}: x
data: {{inference_config.yaml: "kv_cache_cpu_memory_utilization: 0\\n"}}
---
apiVersion: kaito.sh/v1beta1
kind: InferenceSet
metadata: {{name: gemma}}
spec:
  replicas: 1
  labelSelector: {{matchLabels: {{apps: gemma}}}}
  template:
    inference: {{config: inference-params, preset: {{name: google/gemma-4-12B-it}}}}
    resource: {{instanceType: Standard_NC24ads_A100_v4}}
"""


@pytest.mark.heavy
@pytest.mark.parametrize("command", [["render"], ["explain", "-o", "json"], ["explain"], ["validate"]])
def test_a_credential_written_as_a_key_of_a_foreign_input_is_never_repeated(tmp_path, command):
    """Found by the fuzzer (issue 34's CI): a KAITO ConfigMap's unknown key shaped like a token was echoed in
    the "not honoured" warning, on stderr and in explain -o json's input warnings."""
    from conftest import run_kvgen

    path = tmp_path / "kaito.yaml"
    path.write_text(KAITO_WITH_A_KEY, encoding="utf-8")
    result = run_kvgen(*command, str(path))
    assert result.returncode == 0, result.stderr
    assert PLANTED_KEY not in result.stdout + result.stderr
    assert "<credential left out>: not honoured" in result.stdout + result.stderr
