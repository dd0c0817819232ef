"""kvgen: compile a validated spec into Kubernetes manifests for vLLM with KV-cache offloading."""

__version__ = "0.1.0"
