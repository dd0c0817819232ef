"""Regenerate the model rows of charts/kvgen/files/models.yaml from Hugging Face config.json fixtures.

    python -m tools.catalog_models [--check]

Each tests/fixtures/hf-configs/<org>--<name>.json is the config.json of the Hugging Face model
<org>/<name> (SOURCES.yaml beside them says where each copy comes from). Every field the header of
models.yaml lists is computed from it: the KV-cache geometry, the attention heads and routed experts
(what tensor parallelism must divide), the experts per token, hidden, MLP and vocabulary sizes (what vLLM's
profiling run holds in activations), the hybrid and sliding-window layer counts, the checkpoint's
quantization, embeddingParameters and maxModelLen. `weights` is the
published checkpoint size where SOURCES.yaml records one, else derived: the parameter count computed
from the config x the bytes of the checkpoint's scheme (files/quantization.yaml), and the row's
source says "derived".

The file's header and `gated:` list are kept as they are, and so are the rows marked hand-kept
(a `# hand-kept: REASON` comment line right above the row): models without a fixture. Rows are
written in id order. --check writes nothing and fails (exit 1) when the file differs from what the
fixtures give. The derivation itself is kvgen.data.hf_config (`kvgen catalog import` and `model.config`
use it too); its functions are re-exported here for the tests.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvgen.data import hf_config
from kvgen.data.hf_config import (  # noqa: F401 (re-exported: tests/test_model_catalog.py reads them here)
    CatalogError,
    Part,
    excluded_modules,
    hybrid_architectures,
    is_excluded,
    mixed_schemes,
    parameters,
    text_config,
    weights_bytes,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "hf-configs"
MODELS = ROOT / "charts" / "kvgen" / "files" / "models.yaml"
FILES = ROOT / "charts" / "kvgen" / "files"
GiB = 1024**3
HAND_KEPT = "# hand-kept:"


def _yaml() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True)


def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return _yaml().load(fh)


@dataclass(frozen=True)
class Fixture:
    model_id: str
    name: str
    config: dict[str, Any]
    quant: dict[str, Any] | None  # hf_quant_config.json (NVIDIA ModelOpt checkpoints)
    source: dict[str, Any]


def fixtures(folder: Path | None = None) -> list[Fixture]:
    """Every fixture in the folder, each with its SOURCES.yaml entry (a fixture without one is an error)."""
    folder = folder or FIXTURES
    sources = load_yaml(folder / "SOURCES.yaml")["fixtures"]
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".hf_quant_config.json"):
            continue
        name = path.stem
        if name not in sources:
            raise CatalogError(f"{path.name}: no entry in SOURCES.yaml")
        org, sep, model = name.partition("--")
        if not sep or not model:
            raise CatalogError(f"{path.name}: name it <org>--<name>.json")
        quant_path = folder / f"{name}.hf_quant_config.json"
        quant = json.loads(quant_path.read_text(encoding="utf-8")) if quant_path.exists() else None
        out.append(Fixture(f"{org}/{model}", name, json.loads(path.read_text(encoding="utf-8")), quant, sources[name]))
    missing = set(sources) - {f.name for f in out}
    if missing:
        raise CatalogError(f"SOURCES.yaml names fixtures that are not there: {', '.join(sorted(missing))}")
    return out


# ---------------------------------------------------------------- rows


def row(fixture: Fixture) -> dict[str, Any]:
    """The fixture's row (kvgen.data.hf_config.derive), with its source: the fixture and where it comes from."""
    out, notes = hf_config.derive(
        fixture.config, fixture.quant, fixture.source.get("weights"), fixture.source.get("weightsSource")
    )
    where = fixture.source
    out["source"] = "; ".join(
        [f"HF config.json: tests/fixtures/hf-configs/{fixture.name}.json ({where['repo']} {where['path']})", *notes]
    )
    return out


def generated_rows(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    problems = []
    for fixture in fixtures(folder):
        try:
            rows[fixture.model_id] = row(fixture)
        except (CatalogError, KeyError, TypeError, ValueError) as exc:
            problems.append(
                f"{fixture.name}.json: {exc!r}" if not isinstance(exc, CatalogError) else f"{fixture.name}.json: {exc}"
            )
    if problems:
        raise CatalogError("\n".join(problems))
    return rows


# ---------------------------------------------------------------- the file


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def render_row(model_id: str, fields: dict[str, Any]) -> str:
    return "".join([f"  {json.dumps(model_id)}:\n", *(f"    {k}: {_scalar(v)}\n" for k, v in fields.items())])


ROW_START = re.compile(r'^  "([^"]+)":\s*$')


def split(text: str) -> tuple[str, dict[str, str]]:
    """The file up to `models:` (header and gated list), and the hand-kept rows' text by id."""
    head, sep, body = text.partition("\nmodels:\n")
    if not sep:
        raise CatalogError(f"{MODELS}: no top-level `models:`")
    kept: dict[str, str] = {}
    lines = body.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith(HAND_KEPT):
            block = [lines[i]]
            i += 1
            match = ROW_START.match(lines[i]) if i < len(lines) else None
            if not match:
                raise CatalogError(f"{MODELS}: a '{HAND_KEPT}' comment not right above a row")
            block.append(lines[i])
            i += 1
            while i < len(lines) and lines[i].startswith("    "):
                block.append(lines[i])
                i += 1
            kept[match.group(1)] = "".join(block)
        else:
            i += 1
    return head + sep, kept


def generate(text: str, rows: dict[str, dict[str, Any]]) -> str:
    head, kept = split(text)
    both = set(kept) & set(rows)
    if both:
        raise CatalogError(
            f"hand-kept rows that now have a fixture (drop the hand-kept row): {', '.join(sorted(both))}"
        )
    blocks = {**kept, **{k: render_row(k, v) for k, v in rows.items()}}
    return head + "".join(blocks[k] for k in sorted(blocks, key=lambda k: (k.casefold(), k)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/catalog-models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when models.yaml differs from the fixtures")
    args = parser.parse_args(argv)
    try:
        text = MODELS.read_text(encoding="utf-8")
        new = generate(text, generated_rows())
    except CatalogError as exc:
        print(f"scripts/catalog-models: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            import difflib

            diff = difflib.unified_diff(
                text.splitlines(keepends=True), new.splitlines(keepends=True), str(MODELS), "regenerated", n=1
            )
            sys.stdout.writelines(diff)
            print("models.yaml differs from its fixtures: run scripts/catalog-models", file=sys.stderr)
            return 1
        return 0
    MODELS.write_text(new, encoding="utf-8")
    count = sum(1 for line in new.splitlines() if ROW_START.match(line))
    print(f"wrote {MODELS.relative_to(ROOT)}: {count} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
