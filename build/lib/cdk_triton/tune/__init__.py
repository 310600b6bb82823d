"""``cdk-triton tune``: a configuration sweep measured where it will serve, ranked by one objective.

Modules: ``variants`` (what is compared), ``objective`` (the ranking), ``sources`` (local endpoint or
a SageMaker tuning endpoint), ``run`` (budget, repeats, progress), ``report`` (table, CSV, JSON,
plots), ``apply`` (comment-preserving write-back to models.yaml), ``prices`` (vendored price table).
Importing this package is light; the build stage, the local endpoint, matplotlib and ruamel.yaml
load only when a tuning run needs them.
"""
