"""The names KAITO gives a preset (kaito-project/kaito v0.12; tables in charts/kvgen/files/kaito.yaml).

- ``resolve_preset``: a preset name without an organisation is one of KAITO's legacy short names
  (pkg/utils/plugin/plugin.go LegacyBuiltinToCatalog) or not registered; a Hugging Face id is
  matched to kvgen's catalog case-insensitively.
- ``served_name``: the --served-model-name KAITO passes (pkg/model/interface.go
  buildVLLMInferenceCommand L394-413): a Workspace an InferenceSet created serves under the
  InferenceSet's name, unless a MultiRoleInference created it; otherwise the preset's name, the
  lower-cased last part of its Hugging Face id (generator.go NewGenerator L318-331).
"""

from __future__ import annotations

from kvgen.data import catalog
from kvgen.input.dialects.kaito_sizing import KaitoError, data


def resolve_preset(name: str) -> str:
    """The Hugging Face id KAITO serves for ``inference.preset.name``, spelled as kvgen's catalog
    spells it when the catalog has it."""
    if "/" not in name:
        legacy = data()["legacyNames"]
        if name not in legacy:
            raise KaitoError(
                f"model is not registered: {name}",
                "use the model's Hugging Face id (ORG/NAME), or one of KAITO's short names: "
                + ", ".join(sorted(legacy)),
            )
        name = str(legacy[name])
    by_lower = {mid.lower(): mid for mid in catalog.models()}
    return by_lower.get(name.lower(), name)


def preset_name(model_id: str) -> str:
    """KAITO's VLLM.ModelName for a Hugging Face preset: the last part of the id, lower-cased."""
    return model_id.lower().rsplit("/", 1)[-1]


def served_name(model_id: str, labels: dict[str, str], inference_set: str | None = None) -> str:
    """``labels``: the Workspace's (for an InferenceSet, the ones its Workspaces get);
    ``inference_set``: the InferenceSet's own name, when converting one."""
    keys = data()["labels"]
    created_by = inference_set or labels.get(keys["inferenceSet"]) or ""
    if keys["multiRole"] in labels:
        return preset_name(model_id)
    return created_by or preset_name(model_id)


__all__ = ["preset_name", "resolve_preset", "served_name"]
