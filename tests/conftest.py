"""Shared helpers: compile a spec given as a dict, run the CLI, find examples."""

from __future__ import annotations

import atexit
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from kvgen.app.compiler import Compiled, compile_text
from kvgen.data import kube

ROOT = Path(__file__).resolve().parent.parent

# The tests' kvgen runs (in-process and the CLI's subprocesses) keep their caches (parsed data, the
# emitter's memo, replay records) in a directory of the session's own: thousands of fuzzed specs
# once filled the user's emitter memo, and the benchmark, which reads it, measured a slower kvgen.
# The test environments (the contract and checkov venvs, scripts/*-env.sh) stay where
# scripts/test built them: KVGEN_ENV_CACHE_DIR names their parent for the scripts the tests call.
# Each pytest process has its own (an xdist worker inherits the controller's environment, so the
# owner is written beside it): a test that reads the cache sees only its own process's entries.
_OWNER = os.environ.get("PYTEST_XDIST_WORKER", "main")
if "KVGEN_CACHE_DIR" not in os.environ or os.environ.get("KVGEN_TEST_CACHE_OWNER", _OWNER) != _OWNER:
    os.environ.setdefault("KVGEN_ENV_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "kvgen"))
    os.environ["KVGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="kvgen-test-cache-")
    os.environ["KVGEN_TEST_CACHE_OWNER"] = _OWNER
    atexit.register(shutil.rmtree, os.environ["KVGEN_CACHE_DIR"], True)

# tests/tiers.py: xdist groups, the time summary, the heavy mark's drift; tests/valkey_support.py:
# the valkey_server fixture
pytest_plugins = ["tiers", "valkey_support"]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
GOLDEN = ROOT / "golden"
DEFAULT_KUBE = kube.DEFAULT_VERSION  # kvgen's --kube-version default, files/kubernetes.json
_KUBE_FIELD = re.compile(r"^kubeVersion: \"(\d+\.\d+)\"$", re.M)


# every kind kvgen renders of its own (some spec renders each): the tests that cover them all check this set
KVGEN_KINDS = frozenset(
    {
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "HTTPRoute",
        "InferencePool",
        "LeaderWorkerSet",
        "PodDisruptionBudget",
        "PodMonitor",
        "ResourceClaimTemplate",
        "Role",
        "RoleBinding",
        "ScaledObject",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
        "StatefulSet",
    }
)


def validate_strictly(obj: dict[str, Any], version: str) -> None:
    """kubernetes-validate's strict check of a built-in kind; a custom resource (PodMonitor,
    ScaledObject, ...), which it has no schema for, against kvgen's vendored CRD schema."""
    import kubernetes_validate

    from kvgen.data import kube

    if kube.crd_file(obj["kind"], obj["apiVersion"]) is not None:
        errors = kube.validate_object(obj, version.rsplit(".", 1)[0] if version.count(".") == 2 else version)
        assert errors == [], (obj["kind"], errors)
        return
    kubernetes_validate.validate(obj, version, strict=True)


def kube_version_of(example: Path) -> str:
    """The Kubernetes version an example is rendered for: the spec's kubeVersion (kvgen and the chart
    render for it when given no version), else kvgen's default."""
    m = _KUBE_FIELD.search(example.read_text(encoding="utf-8"))
    return m[1] if m else DEFAULT_KUBE


BASE: dict[str, Any] = {
    "name": "demo",
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
}


def spec(**overrides: Any) -> dict[str, Any]:
    """BASE with top-level keys replaced (deep-copied)."""
    out = copy.deepcopy(BASE)
    out.update(copy.deepcopy(overrides))
    return out


def dump(data: Any) -> str:
    import io

    from kvgen.core.plain_tags import for_yaml11_readers

    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    for_yaml11_readers(y)  # "yes", "y", "on" quoted: kvgen refuses them plain, as Helm does (YAML 1.1)
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def compile_spec(data: dict[str, Any], version: str = "1.33") -> Compiled:
    (result,) = compile_text(dump(data), "spec.yaml", version)
    return result


def kind(compiled: Compiled, k: str) -> dict[str, Any]:
    (obj,) = [o for o in compiled.objects if o["kind"] == k]
    return obj


def workload(compiled: Compiled) -> dict[str, Any]:
    """The Deployment, or the rank-0 StatefulSet of a multi-node server."""
    return [o for o in compiled.objects if o["kind"] in ("Deployment", "StatefulSet")][0]


def container(compiled: Compiled, name: str) -> dict[str, Any]:
    pod = workload(compiled)["spec"]["template"]["spec"]
    (c,) = [c for c in pod.get("containers", []) + pod.get("initContainers", []) if c["name"] == name]
    return c


def kv_transfer_config(compiled: Compiled) -> dict[str, Any] | None:
    for arg in container(compiled, "vllm")["args"]:
        if arg.startswith("--kv-transfer-config="):
            return json.loads(arg.split("=", 1)[1])
    return None


def run_kvgen(
    *args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess: exit codes, stdout and stderr as a user sees them."""
    import os

    return subprocess.run(
        [sys.executable, "-m", "kvgen", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(params=EXAMPLES, ids=[p.stem for p in EXAMPLES])
def example(request) -> Path:
    return request.param


def text_problems(text: str, version: str = "1.33", instance: str | None = None) -> set[tuple[str, str]]:
    """Every problem kvgen finds in one input (native, KAITO or KServe), as (spec path, message):
    what a test of a spec with several problems compares, rather than fragments of the output."""
    from kvgen.app.compiler import InputErrors, compile_inputs
    from kvgen.core.errors import format_path
    from kvgen.input.dialects import Options

    try:
        compile_inputs([("spec.yaml", text)], version, Options(instance))
    except InputErrors as err:
        return {(format_path(p.path), p.message) for e in err.errors for p in e.problems}
    return set()


def assert_refused_at_once(tmp_path: Path, text: str, expected: set[tuple[str, str]]) -> None:
    """kvgen finds exactly ``expected`` in ``text`` ((path, message) pairs), and the CLI refuses the
    file with all of them at once: exit 1, their count, nothing written."""
    assert text_problems(text) == expected
    f = tmp_path / "many.yaml"
    f.write_text(text)
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1
    assert f"kvgen: {len(expected)} problems found; nothing was written" in result.stderr


def problem_set(data: dict[str, Any], version: str = "1.33") -> set[tuple[str, str, str | None]]:
    """The problems kvgen finds in a native spec, as (path, message, hint): what the chart's
    problems are compared with (tests/helm.py problems)."""
    from kvgen.core.errors import SpecError

    try:
        compile_spec(data, version)
    except SpecError as err:
        return problem_triples(err)
    return set()


def problem_triples(err: Any) -> set[tuple[str, str, str | None]]:
    """A SpecError's problems as (path, message, hint), the form tests/helm.py problems gives."""
    from kvgen.core.errors import format_path

    return {(format_path(p.path), p.message, p.hint) for p in err.problems}


def distinct_names(paths: list[Path]) -> list[Path]:
    """The specs among paths whose names no earlier one has: render refuses same-named specs together."""
    from kvgen.app.compiler import compile_text

    seen: set[str] = set()
    out = []
    for p in paths:
        names = {c.spec.object_name for c in compile_text(p.read_text(), str(p), kube_version_of(p))}
        if not names & seen:
            seen |= names
            out.append(p)
    return out


# ----------------------------------------------------------------------------- the quick tier

# `scripts/test --quick` leaves out the tests marked `heavy`: the slowest of the fast tier, measured
# on 2026-12-02 (CPU seconds of the test and of the processes it waits for, every parametrization
# together; the fast tier was 641 s of CPU, the quick tier is about 50 s). Whole modules (those that
# run kvgen's CLI or a supervised child in most tests), then single test functions (>= 1.5 s in all,
# or >= 0.3 s a test). A new test that runs the CLI, Helm or Hypothesis in a loop belongs here.
HEAVY_MODULES: frozenset[str] = frozenset(
    {
        "test_chart_parity.py",  # 31 s
        "test_chart_property.py",  # Hypothesis: generated specs through kvgen and Helm
        "test_cli.py",  # 17 s
        "test_cli_conventions.py",  # 47 s
        "test_examples_tree.py",  # ~8 s: kvgen over the whole examples/ directory, three times
        "test_launcher_supervise.py",  # 9 s
        "test_output_safety.py",  # 92 s
        "test_parallel.py",  # 20 s
        "test_release.py",  # 24 s: actionlint, zizmor, check-jsonschema, helm and kvgen's CLI as subprocesses
        "test_replay.py",  # 23 s
    }
)
HEAVY_TESTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("test_chart_unknown_keys.py", "test_helm_lint_strict_still_passes_on_the_examples"),  # ~15 s, 28 tests
        ("test_chart_unknown_keys.py", "test_the_real_helm_cli_lists_every_unknown_key_with_its_path"),  # ~1 s, 1 test
        ("test_readme_commands.py", "test_a_readme_command_works_as_written"),  # ~15 s, 5 tests
        ("test_apiserver.py", "test_a_kserve_claim_without_access_modes_points_at_the_kserve_field"),  # 1.1 s, 1 test
        ("test_apiserver.py", "test_a_lowered_ephemeral_request_is_a_warning"),  # 1.2 s, 1 test
        ("test_apiserver.py", "test_an_int32_field_above_its_bound_is_refused_by_the_spec_schema"),  # 1.1 s, 3 tests
        ("test_apiserver.py", "test_chart_refuses_with_kvgens_problem"),  # 11.5 s, 50 tests
        ("test_apiserver.py", "test_cli_refuses_with_path_and_line"),  # 54.0 s, 50 tests
        ("test_apiserver.py", "test_every_api_server_problem_is_reported_at_once"),  # 1.4 s, 1 test
        ("test_apiserver.py", "test_every_size_at_8_eib_is_refused_by_cli_and_chart"),  # 3.8 s, 16 tests
        ("test_apiserver.py", "test_the_case_next_to_the_boundary_passes_both"),  # 12.1 s, 50 tests
        ("test_bad_input.py", "test_a_token_literal_is_not_a_field"),  # 1.1 s, 1 test
        ("test_bad_input.py", "test_bad_spec_is_rejected_with_path_and_line"),  # 27.2 s, 28 tests
        ("test_bad_input.py", "test_every_problem_is_reported_at_once"),  # 1.2 s, 1 test
        (
            "test_bad_input.py",
            "test_problems_of_several_files_are_all_reported_and_nothing_is_written",
        ),  # 1.2 s, 1 test
        ("test_bad_input.py", "test_unterminated_yaml_names_where_the_open_bracket_started"),  # 0.9 s, 1 test
        ("test_chart.py", "test_chart_equals_kvgen_and_golden"),  # 8.6 s, 28 tests
        ("test_chart.py", "test_chart_refuses_the_lmcache_sidecar_below_kubernetes_1_29"),  # 1.3 s, 1 test
        ("test_chart.py", "test_every_helm_object_is_valid_kubernetes"),  # 10.4 s, 28 tests
        ("test_chart.py", "test_helm_lint_strict_is_clean"),  # 8.1 s, 28 tests
        ("test_chart.py", "test_helm_rejects_what_kvgen_rejects"),  # 4.2 s, 27 tests
        ("test_chart.py", "test_notes_state_the_decision_and_reason"),  # 0.4 s, 1 test
        ("test_chart.py", "test_release_namespace_is_the_default_namespace"),  # 0.3 s, 1 test
        (
            "test_context.py",
            "test_max_num_batched_tokens_in_extra_args_widens_what_a_sliding_layer_keeps",
        ),  # 0.3 s, 1 test
        (
            "test_context_contract.py",
            "test_every_example_has_the_same_context_in_kvgen_and_the_chart",
        ),  # 6.7 s, 28 tests
        (
            "test_contract_snapshot.py",
            "test_a_required_contract_run_without_the_venv_fails_instead_of_passing",
        ),  # 9.1 s, 1 test
        (
            "test_credentials.py",
            "test_a_credential_anywhere_is_refused_by_kvgen_and_the_chart_alike",
        ),  # 4.4 s, 31 tests
        (
            "test_credentials.py",
            "test_a_credential_in_an_annotation_is_refused_by_the_cli_at_its_line",
        ),  # 0.9 s, 1 test
        (
            "test_credentials.py",
            "test_api_key_secret_becomes_vllm_api_key_from_the_secret_in_kvgen_and_the_chart",
        ),  # 0.4 s, 1 test
        ("test_credentials.py", "test_kvgen_and_the_chart_refuse_literal_credentials_alike"),  # 3.9 s, 23 tests
        ("test_credentials.py", "test_the_load_balancer_warning_is_printed"),  # 1.0 s, 1 test
        ("test_dialects.py", "test_a_file_with_only_other_objects_is_no_spec"),  # 0.8 s, 1 test
        ("test_dialects.py", "test_convert_prints_native_specs_that_render_the_same"),  # 1.7 s, 1 test
        ("test_dialects.py", "test_kserve_seed_on_a_default_gke_a2_pool_does_not_fit_its_boot_disk"),  # 1.0 s, 1 test
        (
            "test_dialects.py",
            "test_kserve_seed_renders_on_the_cli_with_instance_and_reports_what_kserve_would_do_differently",
        ),  # 1.1 s, 1 test
        (
            "test_dialects.py",
            "test_kserve_without_an_instance_type_renders_as_kserve_would_and_says_how_to_check_the_node",
        ),  # 1.1 s, 1 test
        ("test_dialects.py", "test_mixed_dialects_in_one_multi_document_file_and_across_files"),  # 2.4 s, 1 test
        ("test_dialects.py", "test_other_documents_and_unused_configmaps_are_reported_not_rendered"),  # 1.2 s, 1 test
        ("test_diskcache.py", "test_concurrent_processes_on_an_empty_cache_agree"),  # 2.5 s, 1 test
        ("test_emitter.py", "test_any_shape_same_bytes_as_ruamel_or_none"),  # 4.8 s, 1 test
        ("test_emitter.py", "test_cli_output_is_byte_identical_to_the_golden"),  # 0.8 s, 1 test
        ("test_emitter.py", "test_every_example_is_written_by_the_fast_path_and_equals_ruamel"),  # 1.2 s, 1 test
        ("test_emitter.py", "test_kvgen_shapes_same_bytes_as_ruamel_or_none"),  # 9.6 s, 1 test
        ("test_emitter.py", "test_the_fast_path_is_taken_for_most_kvgen_shapes"),  # 3.0 s, 1 test
        ("test_emitter.py", "test_the_render_saves_its_memo_in_the_cache_dir"),  # 1.3 s, 1 test
        ("test_errors.py", "test_cli_prints_problems_sorted_by_file_and_line"),  # 0.6 s, 1 test
        ("test_explain.py", "test_json_of_a_translated_input_says_where_it_came_from"),  # 0.9 s, 1 test
        ("test_explain.py", "test_json_output_has_stable_keys_and_the_hand_computed_tokens"),  # 0.8 s, 1 test
        ("test_explain.py", "test_svg_is_written"),  # 0.9 s, 1 test
        ("test_explain.py", "test_text_output_has_tables_and_a_bar_per_budget"),  # 0.9 s, 1 test
        ("test_explain.py", "test_text_output_states_the_gpu_access_mode_and_its_requirement"),  # 0.9 s, 1 test
        ("test_extra_volumes.py", "test_volumes_are_checked_against_the_kubernetes_definitions"),  # 0.9 s, 1 test
        (
            "test_fast_paths.py",
            "test_a_comment_the_round_trip_loader_cannot_place_is_a_problem_not_a_crash",
        ),  # 0.7 s, 1 test
        ("test_fast_paths.py", "test_any_text_reads_as_the_round_trip_loader_reads_it"),  # 4.4 s, 1 test
        ("test_fast_paths.py", "test_any_value_the_templates_write_reads_back_as_ruamel_reads_it"),  # 1.9 s, 1 test
        ("test_fast_paths.py", "test_random_documents_read_the_same"),  # 5.2 s, 1 test
        ("test_fast_paths.py", "test_template_output_parses_as_ruamel_parses_it"),  # 1.7 s, 28 tests
        ("test_fast_paths.py", "test_text_with_comments_reads_as_the_round_trip_loader_reads_it"),  # 3.7 s, 1 test
        (
            "test_flags.py",
            "test_every_flag_of_the_table_is_refused_in_a_native_spec_by_kvgen_and_the_chart",
        ),  # 4.4 s, 21 tests
        ("test_flags.py", "test_extra_args_vllm_refuses_are_problems_at_their_index"),  # 7.2 s, 8 tests
        (
            "test_gitops.py",
            "test_a_spec_removed_from_the_inputs_is_stale_and_removed_on_the_next_render",
        ),  # 3.0 s, 1 test
        (
            "test_gitops.py",
            "test_check_against_a_directory_never_rendered_exits_5_and_creates_nothing",
        ),  # 0.7 s, 1 test
        ("test_gitops.py", "test_check_missing_file_exits_5"),  # 1.3 s, 1 test
        ("test_gitops.py", "test_check_needs_an_output_directory"),  # 0.5 s, 1 test
        ("test_gitops.py", "test_check_stale_exits_5_with_a_unified_diff_and_writes_nothing"),  # 1.4 s, 1 test
        ("test_gitops.py", "test_check_up_to_date_exits_0_and_prints_nothing_on_stdout"),  # 1.4 s, 1 test
        ("test_gitops.py", "test_help_documents_the_stale_exit_code"),  # 0.5 s, 1 test
        ("test_gitops.py", "test_invalid_spec_in_check_mode_is_exit_1_not_stale"),  # 1.7 s, 1 test
        ("test_gitops.py", "test_no_progress_output_when_stderr_is_not_a_terminal"),  # 1.0 s, 1 test
        ("test_gitops.py", "test_render_writes_a_tree_with_a_kustomization_per_directory"),  # 2.2 s, 1 test
        ("test_golden.py", "test_golden_objects_are_valid_kubernetes"),  # 3.8 s, 28 tests
        ("test_golden.py", "test_render_is_deterministic_across_processes"),  # ~16 s: kvgen in 2 x 3 processes
        (
            "test_gpu_access.py",
            "test_dra_below_kubernetes_1_34_is_refused_with_the_spec_path_and_line",
        ),  # 1.1 s, 1 test
        ("test_gpu_access.py", "test_in_container_l1_is_the_sidecars_on_the_same_node"),  # 1.1 s, 1 test
        ("test_gpu_access.py", "test_notes_warn_when_the_server_image_differs_from_vllms"),  # 0.4 s, 1 test
        ("test_gpu_access.py", "test_the_chart_refuses_dra_below_1_34_and_renders_it_from_1_34"),  # 0.4 s, 1 test
        ("test_helm_conventions.py", "test_ci_values_cover_both_backends_and_a_multi_node_server"),  # 0.5 s, 1 test
        ("test_helm_conventions.py", "test_ci_values_lint_and_render_as_kvgen_renders_them"),  # 1.6 s, 3 tests
        ("test_helm_conventions.py", "test_helm_template_writes_block_yaml_like_the_goldens"),  # 7.5 s, 28 tests
        (
            "test_helm_conventions.py",
            "test_kvgen_names_the_objects_after_name_or_fullname_override_and_needs_one",
        ),  # 1.0 s, 1 test
        ("test_helm_conventions.py", "test_the_cli_takes_namespace_and_refuses_a_bad_one"),  # 1.7 s, 1 test
        ("test_hostile_input.py", "test_a_fifo_is_reported_as_one_without_blocking"),  # 0.9 s, 1 test
        ("test_hostile_input.py", "test_an_input_just_under_the_cap_is_read"),  # 1.8 s, 1 test
        (
            "test_hostile_input.py",
            "test_an_object_the_api_server_would_refuse_for_its_size_is_refused",
        ),  # 0.7 s, 1 test
        ("test_hostile_input.py", "test_any_string_survives_the_templates_and_the_yaml_output"),  # 1.2 s, 1 test
        ("test_hostile_input.py", "test_ctrl_c_exits_130_without_a_traceback"),  # 0.5 s, 1 test
        ("test_hostile_input.py", "test_too_many_values_are_refused"),  # 1.7 s, 1 test
        ("test_kube_validation.py", "test_broken_objects_get_the_same_verdict_from_both"),  # 13.2 s, 1 test
        ("test_kube_validation.py", "test_every_golden_object_is_valid_for_both"),  # 0.4 s, 1 test
        ("test_kube_validation.py", "test_valid_output_never_imports_the_python_validator"),  # 1.3 s, 1 test
        ("test_launcher.py", "test_any_bytes_in_proc_files_exit_0_or_2_without_traceback"),  # 1.5 s, 1 test
        ("test_launcher.py", "test_explicit_cap_bounds_l1"),  # 0.3 s, 1 test
        ("test_launcher.py", "test_the_probe_asks_the_installed_lmcache_its_own_health_path"),  # 1.4 s, 3 tests
        ("test_lws.py", "test_the_chart_refuses_what_kvgen_refuses"),  # 0.5 s, 1 test
        ("test_model_pvc.py", "test_bad_claims_are_refused_alike"),  # 0.4 s, 1 test
        ("test_operations.py", "test_a_bad_probe_value_is_refused_with_its_path"),  # 1.2 s, 1 test
        ("test_operations.py", "test_a_disruption_budget_when_there_can_be_several_replicas"),  # 2.1 s, 8 tests
        ("test_operations.py", "test_exactly_one_autoscaler"),  # 1.1 s, 1 test
        ("test_operations.py", "test_the_example_renders_every_operations_object_through_the_cli"),  # 1.2 s, 1 test
        (
            "test_operator_native.py",
            "test_an_instance_without_gpus_is_the_cpu_rule_and_a_mig_one_the_mig_rule",
        ),  # 0.4 s, 1 test
        ("test_operator_native.py", "test_explain_of_an_unknown_node_says_unknown_not_zero"),  # 2.4 s, 1 test
        (
            "test_output_property.py",
            "test_render_never_removes_or_changes_a_file_kvgen_did_not_produce",
        ),  # 2.8 s, 1 test
        ("test_pod_settings.py", "test_each_rank_of_a_multi_node_server_spreads_its_own_pods"),  # 0.3 s, 1 test
        ("test_pod_settings.py", "test_pod_settings_reach_every_pod_in_kvgen_and_the_chart"),  # 0.3 s, 1 test
        (
            "test_pod_settings.py",
            "test_security_contexts_are_checked_against_the_kubernetes_definitions",
        ),  # 1.0 s, 1 test
        (
            "test_pod_settings.py",
            "test_the_hardened_example_renders_a_service_account_and_pull_secret",
        ),  # 0.9 s, 1 test
        ("test_ports.py", "test_cli_and_chart_refuse_a_port_the_pod_already_binds"),  # 2.6 s, 12 tests
        ("test_ports.py", "test_the_cli_names_file_and_line"),  # 0.8 s, 1 test
        ("test_quantity.py", "test_every_kubernetes_quantity_has_the_reference_value"),  # 3.5 s, 1 test
        ("test_quantity.py", "test_kvgen_does_not_import_the_kubernetes_client"),  # 1.1 s, 1 test
        ("test_quantity.py", "test_numbers_have_the_reference_value"),  # 0.7 s, 1 test
        ("test_quantity.py", "test_text_kvgen_reads_has_the_reference_value"),  # 1.9 s, 1 test
        (
            "test_remote_tier.py",
            "test_bad_remote_tiers_are_refused_with_their_path_and_the_chart_agrees",
        ),  # 1.6 s, 8 tests
        ("test_rules.py", "test_decision_is_printed_on_stderr_and_the_render_succeeds"),  # 0.8 s, 1 test
        ("test_schema.py", "test_cli_prints_the_schema"),  # 0.9 s, 1 test
        ("test_schema.py", "test_committed_schema_is_not_stale"),  # 0.3 s, 1 test
        ("test_schema.py", "test_every_example_satisfies_the_schema"),  # 3.1 s, 28 tests
        ("test_sizing.py", "test_an_inline_model_or_a_catalog_row_can_say_it_is_multimodal"),  # 0.6 s, 1 test
        ("test_sizing.py", "test_the_chart_budgets_the_processor_cache_as_kvgen"),  # 1.7 s, 6 tests
        ("test_sizing.py", "test_the_chart_sizes_the_startup_budget_as_kvgen"),  # 1.2 s, 4 tests
        (
            "test_yaml_tags.py",
            "test_a_name_yaml_1_1_reads_as_a_boolean_is_quoted_and_the_chart_agrees",
        ),  # 0.7 s, 1 test
        ("test_yaml_tags.py", "test_every_example_renders_to_what_yaml_1_1_and_yaml_1_2_read_alike"),  # 2.6 s, 1 test
        ("test_yaml_tags.py", "test_every_output_loads_the_same_in_yaml_1_1_and_yaml_1_2"),  # 9.4 s, 1 test
        ("test_yaml_tags.py", "test_helm_and_kvgen_agree_on_a_value_yaml_1_1_reads_otherwise"),  # 1.5 s, 4 tests
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy = pytest.mark.heavy
    for item in items:
        name = getattr(item, "originalname", item.name)
        if item.path.name in HEAVY_MODULES or (item.path.name, name) in HEAVY_TESTS:
            item.add_marker(heavy)
