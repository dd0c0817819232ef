"""tools/abi_check.py on shared objects gcc builds here: a torch whose c10_cuda_check_implementation
gained a parameter (as torch 2.14 did), an extension built against the old one, one built against the
new one, and one that links no torch at all. The real wheels' output is quoted in the closing note of
the issue that added the check (LMCache 0.5.6 against torch 2.14.0: one symbol missing)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tools import abi_check

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the shared objects")

OLD = "namespace c10 { namespace cuda { void c10_cuda_check_implementation(int, const char*, const char*, unsigned, bool); } }"
NEW = (
    "namespace c10 { namespace cuda { struct CUDAErrorLogCapture;"
    " void c10_cuda_check_implementation(int, const char*, const char*, unsigned, bool, CUDAErrorLogCapture*); } }"
)


def _so(out: Path, source: str, *link: str) -> Path:
    src = out.with_suffix(".cc")
    src.write_text(source, encoding="utf-8")
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(out), str(src), *link], check=True)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("abi")
    torch_lib = root / "torch" / "lib"
    torch_lib.mkdir(parents=True)
    # torch: libc10 (the base), libc10_cuda (links libc10) exporting the NEW signature only
    _so(torch_lib / "libc10.so", "namespace c10 { int version() { return 214; } }")
    _so(
        torch_lib / "libc10_cuda.so",
        NEW.replace("CUDAErrorLogCapture*);", "CUDAErrorLogCapture*) {}")
        + " namespace c10 { int version(); } int cuda_version() { return c10::version(); }",
        f"-L{torch_lib}",
        "-lc10",
    )
    # an old torch to link the old extension against (the ABI it was built for)
    old_lib = root / "old" / "lib"
    old_lib.mkdir(parents=True)
    _so(old_lib / "libc10_cuda.so", OLD.replace("bool);", "bool) {}"))
    _so(old_lib / "libc10.so", "namespace c10 { int version() { return 213; } }")
    call_old = OLD + ' void kernel() { c10::cuda::c10_cuda_check_implementation(0, "f", "g", 1, true); }'
    call_new = NEW + ' void kernel() { c10::cuda::c10_cuda_check_implementation(0, "f", "g", 1, true, nullptr); }'
    # c10::version from libc10 reached through libc10_cuda's own DT_NEEDED: the closure counts
    uses_base = "namespace c10 { int version(); } int base() { return c10::version(); }"
    ext = root / "ext"
    ext.mkdir()
    old_ext = _so(ext / "cuda_ops_old.so", call_old + uses_base, f"-L{old_lib}", "-lc10_cuda", "-lc10")
    new_ext = _so(ext / "cuda_ops_new.so", call_new, f"-L{torch_lib}", "-lc10_cuda")
    plain = _so(ext / "plain.so", "#include <cstring>\nint n(const char* s) { return (int)std::strlen(s); }")
    wheel = root / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(old_ext, "fake/cuda_ops_old.so")
        archive.write(plain, "fake/plain.so")
    torch_wheel = root / "torch-9.9-py3-none-any.whl"
    with zipfile.ZipFile(torch_wheel, "w") as archive:
        for lib in torch_lib.iterdir():
            archive.write(lib, f"torch/lib/{lib.name}")
    return {
        "torch": root / "torch",
        "torch_wheel": torch_wheel,
        "old": old_ext,
        "new": new_ext,
        "plain": plain,
        "wheel": wheel,
    }


def test_an_extension_built_against_the_old_signature_is_reported_with_its_symbol_demangled(built, capsys):
    assert abi_check.main(["--torch", str(built["torch"]), str(built["old"])]) == 1
    out = capsys.readouterr().out
    assert (
        "MISSING  " + str(built["old"]) + ": c10::cuda::c10_cuda_check_implementation"
        "(int, char const*, char const*, unsigned int, bool)  [_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb]"
    ) in out
    assert out.rstrip().endswith("1 torch symbol(s) missing")
    # c10::version() resolves: libc10.so is reached through libc10_cuda.so's DT_NEEDED
    assert "version" not in out.split("torch:", 1)[1].split("\n", 1)[1]


def test_an_extension_built_against_the_new_signature_loads(built, capsys):
    assert abi_check.main(["--torch", str(built["torch"] / "lib"), str(built["new"])]) == 0
    out = capsys.readouterr().out
    assert f"ok       {built['new']}: every torch symbol it needs is exported (libc10_cuda.so, libc10.so)" in out
    assert out.rstrip().endswith("every extension loads against this torch")


def test_wheels_on_both_sides_and_every_extension_reported_at_once(built, capsys):
    assert abi_check.main(["--torch", str(built["torch_wheel"]), str(built["wheel"]), str(built["new"])]) == 1
    out = capsys.readouterr().out
    assert "MISSING  fake-1.0-py3-none-any.whl:fake/cuda_ops_old.so: c10::cuda::c10_cuda_check_implementation" in out
    # a system symbol (strlen) is not torch's to provide
    assert "ok       fake-1.0-py3-none-any.whl:fake/plain.so: links no torch library" in out
    assert f"ok       {built['new']}" in out


def test_what_counts_as_a_torch_symbol():
    assert abi_check.torch_owned("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb")
    assert abi_check.torch_owned("_ZTIN3c105ErrorE")  # typeinfo for c10::Error
    assert abi_check.torch_owned("THPVariable_Wrap")
    assert not abi_check.torch_owned("strlen")
    assert not abi_check.torch_owned("_ZNSt6chrono3_V212system_clock3nowEv")  # std::


def test_the_lock_names_the_torch_and_lmcache_the_default_image_carries():
    lock = Path(__file__).resolve().parent.parent / "images" / "lock" / "base.txt"
    assert abi_check.pinned(lock, "torch") == "2.14.0"
    assert abi_check.pinned(lock, "lmcache") == "0.5.6"
