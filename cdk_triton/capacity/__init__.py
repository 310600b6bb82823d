"""``cdk-triton capacity``: how many instances keep which models of a multi-model endpoint warm, at what cost.

From the manifest's per-model memory, the instance type's GPU and host memory and optional traffic per
model: models resident per instance, instances to keep every model warm or to reach a cache-hit ratio,
the cost of a miss (a local cold load, a CPU proxy), the cost per hour, and per model a recommendation:
an inference component (hot) or the MME (the long tail). See README.md in this folder.
"""
