"""The pure checks of the constructs, one module per subject.

Functions of plain values (and value objects such as ``DeploymentGuardrails``): no Stack, no
construct. Each returns the ``TritonValidationError`` list it found, without a construct path; the
construct that calls it locates them (``err.at(node.path)``) and raises them all at once. Findings
that should not fail synth come back as ``(warning id, message)`` pairs for ``Annotations``.

=================  ==================================================================================
names              endpoint, production variant and physical model names
instance           the instance type: shape, local storage, GPU vs release, TensorRT plans and mode
instance_pools     instance_type xor instance_pools, the pools' limits and storage kind, pools vs models
modes              a hosting mode's refusal of a feature, naming the modes that support it
variant            the production variant: instance count, volume key and size, timeouts, sampling
deployment         deployment guardrails: update policy, traffic steps and shares, timeouts, alarms
data_capture       data capture: capture modes and the destination URI
environment        raw container variables against SageMaker's Environment map
headroom           a stack's CloudFormation resources against the per-stack limit
limits             the template (size, resources, outputs, parameters, mappings) and the MME name map's SSM values
stacks             a model served from an endpoint in another stack: one account and region
imported           the attributes of an imported endpoint
monitoring         dashboards and alarms: periods, evaluation ranges, dashboard names
artifacts          model names, the MME TargetModel map, trust in a manifest after reading
models             the built models vs the image and instance type (placement, release, cache, state)
working_set        an MME's TargetModels vs its instances' usable memory (config/residency.py's rule)
=================  ==================================================================================
"""
