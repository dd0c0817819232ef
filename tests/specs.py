"""Spec texts several test modules start from (conftest.BASE is the native one as a dict)."""

from __future__ import annotations

import textwrap

# The smallest valid native spec, as text: tests append top-level keys and read problems' lines.
NATIVE_HEAD = """\
name: demo
model:
  id: meta-llama/Llama-3.1-8B-Instruct
instance:
  type: Standard_NC24ads_A100_v4
"""

# A KServe LLMInferenceService whose instance type comes from kvgen's annotation; tests append
# fields under spec (indented two spaces).
LLMISVC = textwrap.dedent("""\
    apiVersion: serving.kserve.io/v1alpha2
    kind: LLMInferenceService
    metadata:
      name: qwen
      annotations: {kvgen.dev/instance-type: Standard_NC48ads_A100_v4}
    spec:
      model:
        uri: hf://Qwen/Qwen2.5-7B-Instruct
    """)
