"""The suite's own plumbing (tests/tiers.py): which tests share a worker, and the closing summary
that says where the time went and which `heavy` marks no longer fit the measured times."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import tiers


class FakeItem:
    """What assign_groups reads of a pytest item: its markers and its fixtures' definitions."""

    def __init__(self, fixtures: dict[str, tuple[str, str]], markers: tuple[str, ...] = ()) -> None:
        defs = {name: [SimpleNamespace(scope=scope, baseid=baseid)] for name, (scope, baseid) in fixtures.items()}
        self._fixtureinfo = SimpleNamespace(names_closure=list(fixtures), name2fixturedefs=defs)
        self.markers = list(markers)
        self.groups: list[str] = []

    def get_closest_marker(self, name: str):
        return SimpleNamespace(name=name) if name in self.markers else None

    def add_marker(self, mark) -> None:
        assert mark.name == "xdist_group"
        self.groups.append(mark.args[0])


def test_tests_sharing_a_wide_fixture_share_a_group_and_the_emulator_has_one():
    a = FakeItem({"cli_batch": ("module", "tests/test_a.py"), "tmp_path": ("function", "")})
    b = FakeItem({"cli_batch": ("module", "tests/test_a.py"), "server": ("session", "tests/test_b.py")})
    c = FakeItem({"server": ("session", "tests/test_b.py")})  # joined to a through b
    alone = FakeItem({"tmp_path": ("function", ""), "tmp_path_factory": ("session", "")})  # pytest's own
    emu = FakeItem({"cluster": ("session", "tests/test_emulator.py")}, markers=("emulator",))
    emu_plain = FakeItem({}, markers=("emulator",))
    other = FakeItem({"wheel": ("module", "tests/test_wheel.py")})
    tiers.assign_groups([a, b, c, alone, emu, emu_plain, other])
    assert a.groups == b.groups == c.groups and len(a.groups) == 1
    assert alone.groups == []  # spread one by one
    assert emu.groups == emu_plain.groups == ["emulator"]
    assert len(other.groups) == 1 and other.groups != a.groups
    assert all("/" not in g and ":" not in g for g in a.groups + other.groups)


def _times(rows: dict[str, tuple[float, str, bool]], setups: dict[str, float] | None = None) -> tiers.Times:
    t = tiers.Times()
    for nodeid, (seconds, tier, heavy) in rows.items():
        for when, duration in (("setup", (setups or {}).get(nodeid, 0.0)), ("call", seconds)):
            t.add(
                SimpleNamespace(  # type: ignore[arg-type]  # what Times reads of a TestReport
                    nodeid=nodeid,
                    when=when,
                    duration=duration,
                    user_properties=[("kvgen_tier", tier), ("kvgen_heavy", heavy)],
                )
            )
    return t


def test_the_summary_names_the_marks_that_no_longer_fit_the_measured_times():
    t = _times(
        {
            "tests/test_x.py::test_slow_loop[a]": (1.0, "quick", False),
            "tests/test_x.py::test_slow_loop[b]": (0.9, "quick", False),  # 1.9 s together: heavy
            "tests/test_x.py::test_one_slow_case[a]": (0.4, "quick", False),  # one case over 0.3 s
            "tests/test_x.py::test_fast[a]": (0.01, "quick", False),
            "tests/test_y.py::test_marked_but_fast": (0.02, "heavy", True),
            "tests/test_y.py::test_marked_and_slow": (3.0, "heavy", True),
            "tests/test_z.py::test_a_contract_test": (9.0, "contract", False),  # its own tier: not quick
            "tests/test_w.py::test_first_of_a_shared_fixture": (0.01, "quick", False),
        },
        # a module fixture's setup (one CLI run for many cases) is no slow case of the test it lands on
        setups={"tests/test_w.py::test_first_of_a_shared_fixture": 1.0},
    )
    lines = t.summary()
    text = "\n".join(lines)
    assert "tier quick" in text and "tier heavy" in text and "tier contract" in text
    heavy_at = next(i for i, line in enumerate(lines) if line.startswith("unmarked test functions"))
    light_at = next(i for i, line in enumerate(lines) if line.startswith("heavy-marked test functions"))
    named_heavy = {line.split()[-1] for line in lines[heavy_at + 1 : light_at]}
    named_light = {line.split()[-1] for line in lines[light_at + 1 :]}
    assert named_heavy == {"tests/test_x.py::test_slow_loop", "tests/test_x.py::test_one_slow_case"}
    assert named_light == {"tests/test_y.py::test_marked_but_fast"}
    assert lines[0].startswith("test seconds (setup + call + teardown, all workers): 15.3 in 8 tests")


@pytest.mark.parametrize(
    "markers,tier",
    [((), "quick"), (("heavy",), "heavy"), (("contract", "heavy"), "contract"), (("emulator",), "emulator")],
)
def test_a_test_is_in_the_first_tier_it_is_marked_for(markers, tier):
    assert tiers.tier_of(FakeItem({}, markers)) == tier


@pytest.mark.heavy
def test_a_real_xdist_run_keeps_a_fixtures_tests_on_one_worker(tmp_path):
    """pytest-xdist's loadgroup as installed (its node-id suffix is what a pytest upgrade broke once):
    the ten tests of a module-scoped fixture run on one worker, in one group; the others are not
    grouped."""
    import re
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(tiers.__file__.rsplit('/', 1)[0])!r})\npytest_plugins = ['tiers']\n"
    )
    (tmp_path / "test_shared.py").write_text(
        "import pytest, time\n"
        "@pytest.fixture(scope='module')\ndef shared():\n    return 1\n"
        "@pytest.mark.parametrize('i', range(10))\ndef test_uses(shared, i):\n    time.sleep(0.02)\n"
        "@pytest.mark.parametrize('i', range(10))\ndef test_alone(i):\n    time.sleep(0.02)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    runs = re.findall(r"\[(gw\d)\].*::(test_uses|test_alone)\[\d\](@\S+)?", done.stdout)
    uses = {(worker, group) for worker, test, group in runs if test == "test_uses"}
    alone = {group for _worker, test, group in runs if test == "test_alone"}
    assert len(runs) == 20, done.stdout[-2000:]
    # one worker, under one group (xdist's "@group" suffix of the node id); the others ungrouped
    assert len(uses) == 1 and next(iter(uses))[1].startswith("@"), done.stdout[-2000:]
    assert alone == {""}, done.stdout[-2000:]
