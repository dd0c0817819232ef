"""kvgen.core.diskcache: derived data (parsed catalogs, pruned schemas) cached by content hash, safe
when the cache dir is unusable, corrupt or shared by concurrent processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT
from ruamel.yaml import YAML

from kvgen.core import diskcache
from kvgen.data import catalog


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "data"


def counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_a_second_use_reads_the_entry_instead_of_deriving_again(cache_dir):
    build, calls = counting({"a": [1, 2.5, "x", None, True]})
    assert diskcache.cached("t", (b"source",), build) == {"a": [1, 2.5, "x", None, True]}
    assert diskcache.cached("t", (b"source",), build) == {"a": [1, 2.5, "x", None, True]}
    assert len(calls) == 1
    assert len(list(cache_dir.glob("t-*.json"))) == 1


def test_a_changed_source_is_a_new_entry(cache_dir):
    build, calls = counting({"v": 1})
    diskcache.cached("t", (b"one",), build)
    build2, calls2 = counting({"v": 2})
    assert diskcache.cached("t", (b"two",), build2) == {"v": 2}
    assert len(calls2) == 1
    assert len(list(cache_dir.glob("t-*.json"))) == 2


def test_sources_are_not_confused_by_where_one_ends(cache_dir):
    assert diskcache.key("t", b"ab", b"c") != diskcache.key("t", b"a", b"bc")


def test_a_corrupt_entry_is_derived_again_and_replaced(cache_dir):
    build, calls = counting({"v": 1})
    diskcache.cached("t", (b"s",), build)
    (entry,) = cache_dir.glob("t-*.json")
    entry.write_text('{"v": ')  # truncated
    assert diskcache.cached("t", (b"s",), build) == {"v": 1}
    assert len(calls) == 2
    assert json.loads(entry.read_text()) == {"v": 1}


def test_an_unusable_cache_dir_only_means_deriving_again(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(blocker / "cache"))  # mkdir fails (as root too)
    build, calls = counting({"v": 1})
    assert diskcache.cached("t", (b"s",), build) == {"v": 1}
    assert diskcache.cached("t", (b"s",), build) == {"v": 1}
    assert len(calls) == 2


def test_off_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("KVGEN_CACHE_DIR", "off")
    assert diskcache.directory() is None
    build, calls = counting({"v": 1})
    diskcache.cached("t", (b"s",), build)
    diskcache.cached("t", (b"s",), build)
    assert len(calls) == 2


def test_a_value_json_cannot_hold_exactly_is_not_stored(cache_dir):
    build, calls = counting({"v": (1, 2)})  # a tuple would come back as a list
    assert diskcache.cached("t", (b"s",), build) == {"v": (1, 2)}
    assert diskcache.cached("t", (b"s",), build) == {"v": (1, 2)}
    assert len(calls) == 2


@pytest.mark.heavy
def test_cached_catalogs_equal_their_yaml(cache_dir):
    files = sorted((ROOT / "charts" / "kvgen" / "files").glob("*.yaml"))
    assert files
    pure = YAML(typ="safe", pure=True)
    for path in files:
        expected = pure.load(path.read_text(encoding="utf-8"))
        catalog.load.cache_clear()
        assert catalog.load(path.name) == expected  # derived, stored
        catalog.load.cache_clear()
        assert catalog.load(path.name) == expected  # read back
    assert len(list(cache_dir.glob("files-*.json"))) == len(files)
    catalog.load.cache_clear()


CONCURRENT = """
import hashlib, json, sys
from kvgen.data import catalog, kube
data = {n: catalog.load(n) for n in ("models.yaml", "instances.yaml", "runtime.yaml", "rules.yaml", "sizing.yaml")}
svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"ports": [{"port": 80}]}}
bad = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"bogus": 1}}
verdicts = [kube.validate_object(svc), kube.validate_object(bad)]
print(hashlib.sha256(json.dumps([data, verdicts], sort_keys=True).encode()).hexdigest())
"""


@pytest.mark.heavy
def test_concurrent_processes_on_an_empty_cache_agree(tmp_path):
    """Several processes deriving and storing the same entries at once: every one gets the
    same data as a process without a cache, and no partial entry is left behind."""
    env = {**os.environ, "KVGEN_CACHE_DIR": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outs = [p.communicate()[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    reference = subprocess.run(
        [sys.executable, "-c", CONCURRENT],
        env={**os.environ, "KVGEN_CACHE_DIR": "off"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert outs == [reference] * 4
    data = tmp_path / "cache" / "data"
    assert list(data.glob("files-*.json")) and list(data.glob("k8s-schema-*.json"))
    assert not list(data.glob(".tmp-*"))
