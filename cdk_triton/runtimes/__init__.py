"""The Triton releases' own runtimes on this machine: environments holding exactly a release's libtorch /
ONNX Runtime / TensorRT (``environments``) and the script that loads and runs artifacts in them (``probe``).

Used by the build's release-runtime check (``cdk_triton.builder.target_runtime``) and by ``cdk-triton serve
--runtime target`` (``cdk_triton.local``); the rules (pins, cache place, marker, the manifest record) are
``cdk_triton.config.target_runtime``.
"""

from cdk_triton.runtimes.environments import RuntimeEnv, RuntimeUnavailable, ensure_environment

__all__ = ["RuntimeEnv", "RuntimeUnavailable", "ensure_environment"]
