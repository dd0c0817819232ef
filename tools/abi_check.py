"""Does every compiled extension load against the torch it will run with? (the torch ABI check)

CPython loads an extension with RTLD_NOW: one undefined symbol that the libraries it links do not
export is an ImportError at import. LMCache catches that ImportError for its CUDA kernels
(``lmcache.cuda_ops``) and silently runs a pure-torch fallback, so a wheel built against one torch
and installed beside another runs without its kernels and says nothing. This check reads the ELF
files themselves (pyelftools), no GPU and no import needed:

- for each extension (``*.so`` in a wheel, a directory or given as a file): its undefined dynamic
  symbols and its DT_NEEDED libraries;
- for torch (a wheel, an installed ``torch`` package or its ``lib`` directory): the symbols each
  library in ``torch/lib`` exports, followed through their own DT_NEEDED (the dynamic linker's
  search scope of a dlopen'ed extension);
- a symbol of torch's own namespaces (``c10::``, ``at::``, ``torch::``, ``caffe2::``, ``c10d::``,
  and torch_python's ``THP*``) that the extension needs and none of those libraries exports is a
  failure, printed demangled (cxxfilt), one line each; every extension is reported, all at once.

    python -m tools.abi_check --torch TORCH [EXT ...]   # wheels, directories or .so files
    python -m tools.abi_check --lock images/lock/base.txt
        # the default image: torch and lmcache at the lock's versions, CPython 3.12 manylinux x86_64
        # wheels fetched with `pip download --no-deps` into ~/.cache/kvgen/abi/

Exit status: 0 when every extension resolves, 1 when a symbol is missing, 2 on a usage error.
The release workflow runs it on the lock of the image it builds (release.yml).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cxxfilt
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

# torch's own namespaces: a missing symbol here is an ABI break, not a system library we do not hold
TORCH_NAMESPACES = ("c10::", "at::", "torch::", "caffe2::", "c10d::")
_DEMANGLED_PREFIXES = ("typeinfo for ", "typeinfo name for ", "vtable for ", "VTT for ", "guard variable for ")
PLATFORM = ("3.12", "manylinux_2_28_x86_64")  # the vLLM image's interpreter and platform


@dataclass
class ElfSymbols:
    needed: list[str]
    defined: set[str]
    undefined: set[str]


def read_elf(path: Path) -> ElfSymbols:
    """The DT_NEEDED entries and the dynamic symbols (defined, undefined) of one shared object."""
    with path.open("rb") as handle:
        elf = ElfSymbols([], set(), set())
        image = ELFFile(handle)
        for section in image.iter_sections():
            if isinstance(section, DynamicSection):
                elf.needed += [str(tag.needed) for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]  # type: ignore[attr-defined]
        dynsym = image.get_section_by_name(".dynsym")
        for symbol in dynsym.iter_symbols() if isinstance(dynsym, SymbolTableSection) else ():
            if not symbol.name or symbol["st_info"]["bind"] == "STB_LOCAL":
                continue
            if symbol["st_shndx"] == "SHN_UNDEF":
                if symbol["st_info"]["bind"] != "STB_WEAK":  # a weak reference may stay unresolved
                    elf.undefined.add(symbol.name)
            else:
                elf.defined.add(symbol.name)
        return elf


def demangle(name: str) -> str:
    try:
        return str(cxxfilt.demangle(name))
    except cxxfilt.InvalidName:
        return name


def torch_owned(name: str) -> bool:
    """Is this symbol one that torch's libraries must provide (rather than libc, libstdc++, CUDA)?"""
    if name.startswith("THP"):
        return True
    text = demangle(name)
    for prefix in _DEMANGLED_PREFIXES:
        text = text.removeprefix(prefix)
    return text.startswith(TORCH_NAMESPACES)


@dataclass
class TorchLibs:
    """torch/lib's shared objects, read on demand, with the closure of their DT_NEEDED."""

    lib_dir: Path
    _read: dict[str, ElfSymbols] = field(default_factory=dict)

    def get(self, soname: str) -> ElfSymbols | None:
        if soname not in self._read:
            path = self.lib_dir / soname
            if not path.is_file():
                return None
            self._read[soname] = read_elf(path)
        return self._read[soname]

    def exports_for(self, needed: Iterable[str]) -> tuple[set[str], list[str]]:
        """Symbols exported by the torch libraries reachable from needed; the torch sonames found."""
        seen: list[str] = []
        queue = list(needed)
        exported: set[str] = set()
        while queue:
            soname = queue.pop(0)
            if soname in seen:
                continue
            lib = self.get(soname)
            if lib is None:
                continue  # a system or CUDA library: not torch's
            seen.append(soname)
            exported |= lib.defined
            queue += lib.needed
        return exported, seen


def _extract(wheel: Path, members: Iterable[str], into: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in members:
            archive.extract(name, into)


def torch_lib_dir(torch: Path, scratch: Path) -> Path:
    """torch/lib from a wheel (only its libraries extracted), an installed torch, or the lib dir."""
    if torch.is_file() and torch.suffix == ".whl":
        with zipfile.ZipFile(torch) as archive:
            members = [n for n in archive.namelist() if re.fullmatch(r"torch/lib/[^/]+\.so(\.[0-9.]+)?", n)]
        if not members:
            raise SystemExit(f"{torch}: no torch/lib/*.so in this wheel")
        _extract(torch, members, scratch / "torch")
        return scratch / "torch" / "torch" / "lib"
    for candidate in (torch / "lib", torch / "torch" / "lib", torch):
        if (candidate / "libc10.so").is_file():
            return candidate
    raise SystemExit(f"{torch}: not a torch wheel, an installed torch package or its lib directory (no libc10.so)")


def extensions(source: Path, scratch: Path) -> Iterator[tuple[str, Path]]:
    """(name as reported, file) of each compiled extension in a wheel, a directory or a .so."""
    if source.is_file() and source.suffix == ".whl":
        with zipfile.ZipFile(source) as archive:
            members = sorted(n for n in archive.namelist() if n.endswith(".so") or ".so." in n)
        into = scratch / ("ext-" + source.stem)
        _extract(source, members, into)
        for member in members:
            yield f"{source.name}:{member}", into / member
    elif source.is_dir():
        for path in sorted(source.rglob("*.so")):
            yield str(path), path
    elif source.is_file():
        yield str(source), source
    else:
        raise SystemExit(f"{source}: no such wheel, directory or shared object")


def check(torch: Path, sources: list[Path]) -> list[str]:
    """One line per extension (ok, or each missing symbol) and a summary; failures start with 'MISSING'."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kvgen-abi-") as tmp:
        libs = TorchLibs(torch_lib_dir(torch, Path(tmp)))
        lines.append(f"torch: {torch.name} ({libs.lib_dir})")
        for source in sources:
            for name, path in extensions(source, Path(tmp)):
                elf = read_elf(path)
                exported, reached = libs.exports_for(elf.needed)
                missing = sorted(s for s in elf.undefined - exported if torch_owned(s))
                if not reached:
                    lines.append(f"ok       {name}: links no torch library")
                elif not missing:
                    lines.append(f"ok       {name}: every torch symbol it needs is exported ({', '.join(reached)})")
                for symbol in missing:
                    lines.append(f"MISSING  {name}: {demangle(symbol)}  [{symbol}]")
    failed = sum(line.startswith("MISSING") for line in lines)
    lines.append(f"{failed} torch symbol(s) missing" if failed else "every extension loads against this torch")
    return lines


def pinned(lock: Path, package: str) -> str:
    match = re.search(rf"^{re.escape(package)}==([^\s;]+)", lock.read_text(encoding="utf-8"), re.MULTILINE)
    if match is None:
        raise SystemExit(f"{lock}: no {package}== pin")
    return match.group(1)


def download(requirement: str, dest: Path) -> Path:
    """The CPython 3.12 manylinux x86_64 wheel of one pinned requirement (cached)."""
    name, version = requirement.split("==")
    dest.mkdir(parents=True, exist_ok=True)
    found = sorted(dest.glob(f"{name}-{version}-*.whl"))
    if not found:
        python, platform = PLATFORM
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                python,
                "--platform",
                platform,
                "--dest",
                str(dest),
                requirement,
            ],
            check=True,
        )
        found = sorted(dest.glob(f"{name}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip download {requirement}: no wheel in {dest}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--torch", type=Path, help="a torch wheel, an installed torch package, or torch/lib")
    ap.add_argument("--lock", type=Path, help="a lock file (images/lock/*.txt): check its lmcache against its torch")
    ap.add_argument("extensions", nargs="*", type=Path, help="wheels, directories or .so files")
    opts = ap.parse_args(argv)
    if opts.lock is not None:
        cache = Path(os.environ.get("KVGEN_CACHE_DIR", Path.home() / ".cache" / "kvgen")) / "abi"
        opts.torch = opts.torch or download(f"torch=={pinned(opts.lock, 'torch')}", cache)
        opts.extensions = opts.extensions or [download(f"lmcache=={pinned(opts.lock, 'lmcache')}", cache)]
    if opts.torch is None or not opts.extensions:
        ap.error("give --torch and at least one extension, or --lock")
    lines = check(opts.torch, opts.extensions)
    print("\n".join(lines))
    return 1 if any(line.startswith("MISSING") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
