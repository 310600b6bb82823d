"""An inference-components endpoint: a variant without a model, one component per Triton model or ensemble.

``TritonComponentsEndpoint`` defines the EndpointConfig (its one production variant comes from
``variant.py`` with ``ManagedInstanceScaling`` and ``RoutingConfig`` and no ``ModelName``), the Endpoint,
and per model of the artifacts a ``TritonInferenceComponent``: its own ``TritonModel`` (SingleModel, on
the model's own archive, the MME packaging; so its own least-privilege role reading exactly that archive)
and an ``AWS::SageMaker::InferenceComponent`` naming it by ``ModelName``. Requirements, copies and their
fit are checked by ``checks/components.py`` and ``cdk_triton.config.components``; copy scaling is
``scaling.ComponentScaling``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.config import component_memory, layout, modes, placement, tables
from cdk_triton.config import components as component_rules
from cdk_triton.config import instance_pools as pool_rules
from cdk_triton.config.manifest import ModelEntry
from cdk_triton.constructs import _nag
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs._tokens import assume_role_document, is_token, pseudo, remember_stack_info
from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
from cdk_triton.constructs.checks import components as checks
from cdk_triton.constructs.checks import models as model_checks
from cdk_triton.constructs.checks.deployment import check_deployment
from cdk_triton.constructs.checks.names import check_names
from cdk_triton.constructs.deployment import (
    DeploymentGuardrails,
    render_component_deployment,
    rollback_alarm_names,
)
from cdk_triton.constructs.endpoint_base import EndpointAttributes, TritonEndpointBase
from cdk_triton.constructs.endpoint_defaults import default_endpoint_name, define_volume_key
from cdk_triton.constructs.errors import catalogued, located
from cdk_triton.constructs.inference_component import (
    ArchiveArtifacts,
    ComponentOptions,
    SettledComponent,
    TritonInferenceComponent,
    merged_options,
)
from cdk_triton.constructs.model import TritonModel
from cdk_triton.constructs.model_props import TritonMetrics, TritonModelProps, check_prop_names
from cdk_triton.constructs.name_maps import publish_name_map
from cdk_triton.constructs.scaling import TritonScaling
from cdk_triton.constructs.variant import VariantFacts, build_variant
from cdk_triton.constructs.variant import annotate as annotate_variant
from cdk_triton.constructs.variant_hosting import choose_instances
from cdk_triton.constructs.verification import (
    TritonVerification,
    VerificationCheck,
    define_verification,
    recorded_checks,
)
from cdk_triton.errors import TritonValidationError, raise_at

__all__ = ["ROUTING_STRATEGIES", "ComponentOptions", "TritonComponentsEndpoint", "TritonInferenceComponent"]

#: RoutingConfig.RoutingStrategy values both the pinned cfn-lint schema and botocore accept (botocore
#: also has KV_AWARE, which the CloudFormation schema does not list yet).
ROUTING_STRATEGIES = ("LEAST_OUTSTANDING_REQUESTS", "RANDOM", "PREFIX_AWARE")


class TritonComponentsEndpoint(TritonEndpointBase):
    """Defines an inference-components endpoint serving Triton: one component per model of the artifacts.

    The production variant has no model: ``ManagedInstanceScaling`` (min may be 0, the default when every
    component may scale in to zero copies) and ``RoutingConfig``. Each component is its own
    ``TritonModel`` (SingleModel, on the model's archive: its ensemble steps inside, its own role reading
    that archive only) referenced by ``ModelName``, with its compute requirements, copies, data cache,
    startup parameters and, with ``deployment=DeploymentGuardrails.rolling(...)``, a rolling update
    rolled back by the endpoint's alarms. The logical name -> component name map is published in SSM
    (``/cdk-triton/<endpoint>/components/000``...) and as outputs.

    Example::

        ep = TritonComponentsEndpoint(self, "Components",
            artifacts=ModelArtifacts.from_manifest("build/out/manifest.json", "components"),
            instance_type="ml.g5.xlarge",
            components={"bert": ComponentOptions(min_copies=0, max_copies=2)})
        ep.grant_invoke(my_function)
    """

    variant_name: str
    instance_type: str
    instance_count: int

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        artifacts: ModelArtifacts,
        instance_type: str | None = None,
        instance_pools: Sequence[str] | None = None,
        instance_provision_timeout: cdk.Duration | None = None,
        components: Mapping[str, ComponentOptions] | None = None,
        endpoint_name: str | None = None,
        component_prefix: str | None = None,
        variant_name: str = "AllTraffic",
        min_instances: int | None = None,
        max_instances: int | None = None,
        routing_strategy: str = "LEAST_OUTSTANDING_REQUESTS",
        volume_encryption_key: kms.IKey | None = None,
        inference_ami_version: str | None = None,
        deployment: DeploymentGuardrails | None = None,
        **model_props: Unpack[TritonModelProps],
    ) -> None:
        """Define the endpoint and its components.

        Args:
            artifacts: an ``InferenceComponents`` entry of the manifest (or an MME entry: the same
                per-model archives), ``ModelArtifacts.from_manifest(path, "components")``.
            instance_type: ``ml.<family>.<size>``; or ``instance_pools`` (exclusive with it:
                ``InstanceTypeOrPools``). Default: the manifest's, as ``TritonEndpoint``'s.
            instance_pools: up to five instance types, highest priority first (default: the manifest's
                ``instance_pools:`` when neither this nor ``instance_type`` is given), as ``TritonEndpoint``'s:
                the variant carries ``InstancePools``. Each component keeps one ``Specification`` that
                SageMaker applies on every pool (its guide, ``config.instance_pools``): its requirements are
                derived for the smallest pool and must fit every pool (``ComponentDoesNotFit`` names the
                pool); the instance bounds hold every copy on the pool that needs the most instances.
            instance_provision_timeout: ``VariantInstanceProvisionTimeoutInSeconds`` (300..3600 s), with
                ``instance_pools`` only. Default: SageMaker's.
            components: logical model name -> ``ComponentOptions`` (over the manifest's values); every
                archive of the artifacts is a component either way. Default: the manifest's values, else
                derived ones.
            endpoint_name: Default: a deterministic name from the construct path.
            component_prefix: component names are ``layout.component_name(prefix, model)``. Default: the
                endpoint name (unique per stack and stage, so two stages in one account never collide).
            variant_name: Default: AllTraffic.
            min_instances: ``ManagedInstanceScaling.MinInstanceCount``. Default: the manifest's, else 0
                when every component may scale in to 0 copies, else 1.
            max_instances: ``MaxInstanceCount``. Default: the manifest's, else the instances that hold every
                component at its most copies.
            routing_strategy: one of ``ROUTING_STRATEGIES``. Default: LEAST_OUTSTANDING_REQUESTS.
            volume_encryption_key: as ``TritonEndpoint`` (EBS-only types). Default: a new key there.
            inference_ami_version: as ``TritonEndpoint``. Default: the manifest's, else the host decision.
            deployment: ``DeploymentGuardrails.rolling(percent=... or instance_count=<copies>)``: each
                component's rolling update, rolled back by the endpoint's 5XX alarm (or rollback_alarms).
                Default: SageMaker's update.
            model_props: ``TritonModelProps`` of every component's model (image, role, metrics, vpc ...);
                metrics default to the namespace ``Triton/<component name>`` per component.
        """
        check_prop_names("TritonComponentsEndpoint", model_props)
        super().__init__(scope, construct_id)
        self._stack = remember_stack_info(self, scope)
        self._set_pools(artifacts, instance_type, instance_pools, instance_provision_timeout)
        self.variant_name = variant_name
        self.scaling: TritonScaling | None = None
        self.endpoint_name: str = endpoint_name or default_endpoint_name(self)
        self._artifacts_source = artifacts
        try:
            art = artifacts.bind(self)
        except TritonValidationError as err:
            raise located(self, err) from None
        self.artifacts = art
        self._raise(check_names(self.endpoint_name, variant_name) + self._check_source(art, routing_strategy))
        prefix = component_prefix if component_prefix is not None else self.endpoint_name
        plans = self._plan(art, dict(components or {}), prefix)
        self.min_instances, self.max_instances, self.instance_count = self._instances(
            plans,
            min_instances if min_instances is not None else art.min_instances,
            max_instances if max_instances is not None else art.max_instances,
        )
        if deployment is not None:
            self._raise(self._check_deployment(deployment, plans))
        self._define_endpoint(art, inference_ami_version, routing_strategy, volume_encryption_key)
        alarms = self._rollback_alarms(deployment)
        self._components: dict[str, TritonInferenceComponent] = {}
        holder = Construct(self, "Components")
        for plan in plans:
            self._components[plan.logical] = self._define_component(
                holder,
                plan,
                art,
                model_props,
                render_component_deployment(deployment, alarms) if deployment is not None else None,
            )
        self._component_names: dict[str, str] = {p.logical: p.name for p in plans}
        self._publish_names()

    # ------------------------------------------------------------------ checks and plans
    def _raise(self, errs: list[TritonValidationError]) -> None:
        raise_at(self, errs)

    def _set_pools(
        self,
        artifacts: ModelArtifacts,
        instance_type: str | None,
        pools: Sequence[str] | None,
        timeout: cdk.Duration | None,
    ) -> None:
        """The instance type (else the first pool), the pools (else the manifest's), their limits: the
        instance choice of the variant's hosting (``variant_hosting.choose_instances``, as ``TritonEndpoint``'s)."""
        choice = choose_instances(
            artifacts,
            instance_type=instance_type,
            instance_pools=pools,
            provision_timeout=timeout,
            instance_count=1,
        )
        self._raise(list(choice.errors))
        self._instance_choice = choice
        self.instance_pools: tuple[str, ...] = choice.instance_pools
        self.instance_provision_timeout = choice.provision_timeout
        self._provision_timeout_s = choice.provision_timeout_seconds
        self.instance_type = choice.instance_type
        self.instance_info = choice.instance_info
        #: every instance type a copy may be placed on (the pools, else the one type), and the one the
        #: derived requirements fit (the smallest pool)
        self._types = list(choice.placements)
        self._sizing_type = choice.sizing_type

    def _check_source(self, art: ArtifactsConfig, routing_strategy: str) -> list[TritonValidationError]:
        errs = []
        if not art.per_model_archives or not art.archives:
            errs.append(
                catalogued(
                    "ComponentModeNotSupported",
                    prop="artifacts",
                    value=art.mode,
                    problem="is a single-model repository: each component needs its own archive (the model "
                    "with its ensemble steps)",
                    allowed="ModelArtifacts.from_manifest(path, key) of an InferenceComponents (or MultiModel) "
                    "endpoint",
                    fix="declare the endpoint with mode: InferenceComponents in models.yaml and rebuild",
                )
            )
        if routing_strategy not in ROUTING_STRATEGIES:
            errs.append(
                catalogued(
                    "ComponentModeNotSupported",
                    prop="routing_strategy",
                    value=routing_strategy,
                    problem="is not a routing strategy CloudFormation accepts",
                    allowed=", ".join(ROUTING_STRATEGIES),
                    fix="pass one of them (LEAST_OUTSTANDING_REQUESTS suits components)",
                )
            )
        return errs

    def _plan(
        self, art: ArtifactsConfig, given: dict[str, ComponentOptions], prefix: str
    ) -> list[SettledComponent]:
        """Every component's options (props over the manifest), name, requirements and copies, checked."""
        unknown = sorted(set(given) - set(art.archives))
        errs = [
            catalogued(
                "UnknownComponent",
                prop=f"components.{name}",
                value=name,
                problem="is not a model of the artifacts",
                allowed=", ".join(sorted(art.archives)),
                fix="use the logical names of the manifest entry's models",
            )
            for name in unknown
        ]
        selected = sorted(art.archives)  # every archive is a component; options only tune them
        names = {logical: layout.component_name(prefix, logical) for logical in selected}
        errs += layout.component_name_problems(names)
        plans: list[SettledComponent] = []
        for logical in selected:
            plan, found = self._plan_one(
                art, logical, names[logical], merged_options(given.get(logical), art.components.get(logical))
            )
            errs += found
            if plan is not None:
                plans.append(plan)
        self._raise(errs)
        return plans

    def _plan_one(
        self, art: ArtifactsConfig, logical: str, name: str, o: ComponentOptions
    ) -> tuple[SettledComponent | None, list[TritonValidationError]]:
        archive = art.archives[logical]
        where = f"components.{logical}"
        timeout = int(o.startup_timeout.to_seconds()) if o.startup_timeout is not None else None
        values = component_rules.ComponentValues(
            copies=o.copies, min_copies=o.min_copies, max_copies=o.max_copies, accelerators=o.accelerators,
            cpu_cores=o.cpu_cores, memory_mb=o.min_memory_mb, max_memory_mb=o.max_memory_mb,
            data_cache=o.data_cache, startup_timeout_s=timeout,
        )  # fmt: skip
        errs = [_under(where, e) for e in component_rules.value_problems(values)]
        models = [art.built_models[n] for n in archive.models if n in art.built_models]
        sized = None if is_token(self._sizing_type) else tables.instance_type_info(self._sizing_type)
        req, found = checks.derive_requirements(
            logical, sized, cpu_instance=any(tables.instance_kind(t) == "cpu" for t in self._types),
            models=models, accelerators=o.accelerators, cpu_cores=o.cpu_cores,
            min_memory_mb=o.min_memory_mb, max_memory_mb=o.max_memory_mb,
        )  # fmt: skip
        errs += found
        # the declared memory against the models' record (config: one author with the build)
        memory_warnings, memory_errs = component_memory.memory_floor_findings(
            logical,
            o.min_memory_mb,
            {n: art.built_models[n] for n in archive.models if n in art.built_models},
        )
        errs += [_under(where, e) for e in memory_errs]
        for text in memory_warnings:
            cdk.Annotations.of(self).add_warning_v2(f"cdk-triton:{component_memory.MEMORY_BELOW_MODEL}", text)
        if req is None or errs:
            return None, errs
        for it in self._types:  # a copy may be placed on any pool: it must fit each
            errs += [
                _under(
                    where,
                    e,
                    pool=pool_rules.pool_label(self.instance_pools, it) if self.instance_pools else None,
                )
                for e in component_rules.fit_problems(
                    it,
                    component=logical,
                    accelerators=req.accelerators,
                    cpu_cores=req.cpu_cores,
                    memory_mb=req.min_memory_mb,
                    path=None,
                )
            ]  # fmt: skip  (the prop names the component)
        errs += checks.check_component_placement(
            logical, {e.name: model_checks.instance_groups_of(e) for e in models}, req.accelerators
        )
        self._warn_gpu_memory(art, logical, models, req.accelerators or 0)
        copies, lo, hi = component_rules.copy_counts(values)
        scaled = o.min_copies is not None or o.max_copies is not None
        plan = SettledComponent(
            logical=logical, name=name, options=o, requirements=req, copies=copies,
            min_copies=lo, max_copies=hi, scaled=scaled,
        )  # fmt: skip
        return plan, errs

    def _warn_gpu_memory(
        self, art: ArtifactsConfig, logical: str, models: list[ModelEntry], accelerators: int
    ) -> None:
        """``GpuMemoryOversubscribed`` when a copy's GPU-placed models outgrow the accelerators it reserves,
        on any pool it may be placed on (each model at its GPU reading on that pool's GPU, else the
        manifest's ``memory_bytes``: weights plus the activation peak at ``max_batch_size``)."""
        for it in self._types:
            if accelerators < 1 or tables.instance_kind(it) != "gpu":
                continue
            sizes = model_checks.model_sizes(
                {e.name: e for e in models}, readings=art.gpu_readings, instance_type=it
            )
            sized = {e.name: (model_checks.instance_groups_of(e), sizes.get(e.name)) for e in models}
            label = pool_rules.pool_label(self.instance_pools, it) if self.instance_pools else it
            over = placement.gpu_oversubscription(
                it, sized, gpu_count=accelerators, where=f"of component {logical}'s copy on {label}"
            )
            if over:
                cdk.Annotations.of(self).add_warning_v2(
                    "cdk-triton:GpuMemoryOversubscribed",
                    f"{over}; reserve more accelerators (ComponentOptions(accelerators=...)) or drop the pools "
                    "whose GPU is too small",
                )

    def _instances(
        self, plans: list[SettledComponent], min_instances: int | None, max_instances: int | None
    ) -> tuple[int, int, int]:
        """(min, max, initial) instances: given, else derived from the copies; checked on every pool (the
        derived maximum holds every copy on the pool that needs the most instances)."""
        to_zero = all(p.min_copies == 0 for p in plans)
        needs = [
            component_rules.CopyNeed(
                name=p.logical,
                accelerators=float(p.requirements.accelerators or 0),
                cpu_cores=float(p.requirements.cpu_cores or 0),
                memory_mb=float(p.requirements.min_memory_mb),
                copies=p.copies,
                max_copies=p.max_copies,
            )
            for p in plans
        ]
        # one author with the build (config.components.instance_problems, run on models.yaml too)
        lo, hi, at_start = 0, 1, 1
        errs: list[TritonValidationError] = []
        for it in self._types or [self.instance_type]:
            lo, hi_here, found = component_rules.instance_problems(
                it, needs, min_instances=min_instances, max_instances=max_instances,
                every_component_to_zero=to_zero,
            )  # fmt: skip
            hi = max(hi, hi_here)
            errs += [e for e in found if str(e) not in {str(x) for x in errs}]
            info = None if is_token(it) else tables.instance_type_info(it)
            if info is not None:
                at_start = max(at_start, component_rules.instances_needed(info, needs, at_max=False))
        self._raise(errs)
        return lo, hi, max(1, lo, min(at_start, hi))

    def _check_deployment(
        self, d: DeploymentGuardrails, plans: list[SettledComponent]
    ) -> list[TritonValidationError]:
        """Components roll out by copies: a rolling policy only, its batch within SageMaker's shares."""
        refused = mode_constructs.behaviour(self.hosting_mode).guardrails_problems(d)
        if refused:
            return refused
        if d.traffic_routing is not None:
            return [
                catalogued(
                    "InvalidDeploymentPolicy",
                    prop="deployment",
                    value=d.traffic_routing,
                    problem="is a blue/green policy: inference components update by a rolling policy of copies",
                    allowed="DeploymentGuardrails.rolling(percent=... or instance_count=<copies per batch>)",
                    fix="use DeploymentGuardrails.rolling(...)",
                )
            ]
        # the batch is a share of each component's copies (botocore: 5..50 % of the copy count): the fewest
        return check_deployment(d, instance_count=min((p.copies for p in plans), default=1))

    # ------------------------------------------------------------------ resources
    def _define_endpoint(
        self,
        art: ArtifactsConfig,
        inference_ami_version: str | None,
        routing_strategy: str,
        volume_encryption_key: kms.IKey | None,
    ) -> None:
        """The variant without a model (``variant.py``), the EndpointConfig with its role, the Endpoint."""
        from cdk_triton.constructs.checks.instance import check_instance, has_local_storage

        found: list[TritonValidationError] = []
        warnings: list[tuple[str, str]] = []
        for it in self._types or [self.instance_type]:  # every pool as instance_type is checked
            errs_here, warned = check_instance(
                it, None if is_token(it) else tables.instance_type_info(it), triton_version=art.triton_version,
                gpu_architectures=art.gpu_architectures, packaged_instance_types=art.packaged_instance_types,
                multi_model=False,
            )  # fmt: skip
            found += errs_here
            pooled = it != self.instance_type
            warnings += [(w, f"instance pool {it}: {m}" if pooled else m) for w, m in warned]
        built = build_variant(
            VariantFacts(
                variant_name=self.variant_name, model_name=None, instance_type=self.instance_type,
                instance_count=self.instance_count, triton_version=art.triton_version,
                inference_ami_version=inference_ami_version or art.inference_ami_version,
                managed_instance_scaling=(self.min_instances, self.max_instances),
                routing_strategy=routing_strategy,
                instance_pools=tuple((it, None) for it in self.instance_pools),
                provision_timeout_seconds=self._provision_timeout_s,
            )
        )  # fmt: skip
        self._raise(found + list(built.errors))
        for warning_id, message in warnings:
            cdk.Annotations.of(self).add_warning_v2(warning_id, message)
        annotate_variant(self, built)
        self.variant = built
        local = has_local_storage(self.instance_type, self.instance_info)
        self.volume_encryption_key, key_arn = define_volume_key(
            self, volume_encryption_key, local_storage=local, endpoint_name=self.endpoint_name,
            account=self._stack.account,
        )  # fmt: skip
        self._define_endpoint_role()
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[built.production_variant],
            execution_role_arn=self.endpoint_role.attr_arn,
            kms_key_id=key_arn,
        )
        self.endpoint_config.add_resource_dependency(self._endpoint_policy)
        _nag.acknowledge_all(
            self, [*self._role_acks, *_nag.local_storage_kms_acks(self.instance_type, local)]
        )
        self.resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=self.endpoint_name,
        )

    def _define_endpoint_role(self) -> None:
        """The EndpointConfig's ``ExecutionRoleArn``: each ``ModelName`` component runs under its own Model's
        role; this one gets only the endpoint's log group (SageMaker's examples pass a role here)."""
        self.endpoint_role = iam.CfnRole(
            self,
            "EndpointRole",
            assume_role_policy_document=assume_role_document("sagemaker.amazonaws.com"),
            description="cdk-triton: execution role of an inference-components endpoint config",
        )
        group = (
            f"arn:{pseudo().partition}:logs:{self._stack.region}:{self._stack.account}:log-group:"
            f"/aws/sagemaker/Endpoints/{self.endpoint_name}"
        )
        self._endpoint_policy = iam.CfnManagedPolicy(
            self,
            "EndpointPolicy",
            roles=[self.endpoint_role.ref],
            description="cdk-triton: the endpoint's own log group",
            policy_document={
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Sid": "EndpointLogGroup",
                        "Effect": "Allow",
                        "Action": "logs:CreateLogGroup",
                        "Resource": group,
                    },
                    {
                        "Sid": "EndpointLogStreams",
                        "Effect": "Allow",
                        "Action": ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"],
                        "Resource": f"{group}:*",
                    },
                ],
            },
        )
        flat = _nag.flatten_string(self, f"{group}:*")
        self._role_acks = [
            cdk.Acknowledgment(
                id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{flat}]",
                reason="SageMaker creates the log streams of the endpoint's own log group at run time "
                "(one per instance); the grant is limited to that one log group",
            )
        ]

    def _rollback_alarms(self, deployment: DeploymentGuardrails | None) -> list[str]:
        names, self.rollback_alarm = rollback_alarm_names(
            self, deployment, endpoint_name=self.endpoint_name, variant_name=self.variant_name
        )
        return names

    def _define_component(
        self,
        holder: Construct,
        plan: SettledComponent,
        art: ArtifactsConfig,
        model_props: TritonModelProps,
        deployment_config: dict[str, Any] | None,
    ) -> TritonInferenceComponent:
        scope = Construct(holder, plan.logical)
        mp: TritonModelProps = {**model_props}
        metrics = mp.get("metrics")
        if isinstance(metrics, TritonMetrics) and metrics.namespace is None:
            mp["metrics"] = dataclasses.replace(metrics, namespace=f"Triton/{plan.name}")
        model = TritonModel(
            scope,
            "Model",
            artifacts=ArchiveArtifacts(art, art.archives[plan.logical]),
            endpoint_name=self.endpoint_name,
            **mp,
        )
        model.grant_component_logs(plan.name)
        component = TritonInferenceComponent(
            scope,
            "Component",
            plan=plan,
            model=model,
            endpoint=self.resource,
            variant_name=self.variant_name,
            deployment_config=deployment_config,
        )
        return component

    def _publish_names(self) -> None:
        """logical name -> component name: SSM parameters (JSON, <= 4 KB each) and outputs (``name_maps``)."""
        base = f"/cdk-triton/{self.endpoint_name}/components"
        self.component_parameter_path = base
        self.component_parameters = publish_name_map(
            Construct(self, "ComponentNames"),
            base=base,
            mapping=self.component_names,
            part_description=f"cdk-triton: component names of endpoint {self.endpoint_name}",
            path_description="SSM path of the component name map",
            map_description="logical model name -> inference component name",
        )

    def add_verification(
        self,
        *,
        checks: Sequence[VerificationCheck] | None = None,
        deadline: cdk.Duration | None = None,
        log_encryption_key: kms.IKey | None = None,
    ) -> TritonVerification:
        """Verify every deploy: invoke each component with its recorded sample (``InferenceComponentName``
        = its real name, from the spec's ``Components`` map) and compare; a wrong answer fails the update,
        which rolls back. A component autoscaling scaled in to zero copies is skipped and reported by the
        handler (``DescribeInferenceComponent``), never invoked.

        Args:
            checks: Default: every component whose archive has a recorded sample (logical names).
            deadline: Default: 10 minutes (a component scaled to zero copies needs its scale-out within it).
            log_encryption_key: as ``TritonEndpoint.add_verification``.
        """
        recorded = list(checks) if checks is not None else recorded_checks(self, self._artifacts_source)
        return define_verification(
            self,
            mode=modes.INFERENCE_COMPONENTS.name,
            checks=recorded,
            components=self.component_names,
            component_arns=[c.component_arn for c in self.components.values()],
            verified=[
                self.endpoint_config,
                *(r for c in self.components.values() for r in (c.model.resource, c.resource)),
                *self.component_parameters,
            ],
            artifacts_key_arn=self.artifacts.kms_key_arn,
            deadline=deadline,
            log_encryption_key=log_encryption_key,
        )

    # ------------------------------------------------------------------ facts and refusals
    @property
    def endpoint_arn(self) -> str:
        return self.resource.ref

    @property
    def attr_endpoint_name(self) -> str:
        return self.resource.attr_endpoint_name

    @property
    def gpu_count(self) -> int:
        """GPUs per instance; with instance pools, the fewest of any pool (``TritonEndpoint.gpu_count``'s rule)."""
        return self._instance_choice.gpu_count

    @property
    def hosting_mode(self) -> modes.HostingMode:
        """``InferenceComponents`` (its row of ``config.modes``)."""
        return modes.INFERENCE_COMPONENTS

    @property
    def component_names(self) -> dict[str, str]:
        """Logical (model) name -> InferenceComponentName."""
        return self._component_names

    @property
    def components(self) -> dict[str, TritonInferenceComponent]:
        """Logical (model) name -> its inference component."""
        return self._components

    @property
    def attributes(self) -> EndpointAttributes:
        """This endpoint's attributes (its mode, its component names), to import it in another stack."""
        return dataclasses.replace(super().attributes, component_names=dict(self.component_names))

    @property
    def metrics_namespace(self) -> str | None:
        """None: Triton's own metrics are published per component (``component.model.metrics_namespace``)."""
        return None

    def component(self, name: str) -> TritonInferenceComponent:
        """A component by its logical name or its component name (KeyError when neither)."""
        if name in self.components:
            return self.components[name]
        for c in self.components.values():
            if c.component_name == name:
                return c
        raise KeyError(name)

    def auto_scale(self, *, min_capacity: int = 1, max_capacity: int) -> TritonScaling:
        """Refused: managed instance scaling owns the instances of a components endpoint; scale copies
        with ``ComponentOptions(min_copies=..., max_copies=...)`` or ``component(name).auto_scale(...)``."""
        refusal = self.hosting_mode.auto_scale
        if refusal is None:  # pragma: no cover - the row refuses it
            return super().auto_scale(min_capacity=min_capacity, max_capacity=max_capacity)
        raise refusal.error(
            prop="auto_scale",
            value=(min_capacity, max_capacity),
            allowed="copy scaling per component; the instance range as min_instances / max_instances",
            fix="pass ComponentOptions(min_copies=..., max_copies=...) or call endpoint.component(name)"
            ".auto_scale(...), and min_instances / max_instances on the endpoint",
        ).at(self.node.path)

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """``sagemaker:InvokeEndpoint`` on the endpoint ARN (InvokeEndpoint authorizes on the endpoint;
        the component is a header of the call)."""
        return super().grant_invoke(grantee)


#: config's names of a component's settings -> the ComponentOptions field that sets them here.
_OPTION_NAMES = {"memory_mb": "min_memory_mb", "startup_timeout_s": "startup_timeout"}


def _under(where: str, e: TritonValidationError, *, pool: str | None = None) -> TritonValidationError:
    """A config-layer error of one component with its prop as ``components.<model>.<option>`` (the
    construct path is added when raised); ``pool``: the instance pool it concerns, named in the problem."""
    key = e.prop.rsplit(" ", 1)[-1]  # "copies", or "component 'x' memory_mb" (fit_problems)
    return catalogued(
        e.code,
        prop=f"{where}.{_OPTION_NAMES.get(key, key)}",
        value=e.value,
        problem=f"{pool}: {e.problem} (a copy may be placed on any pool)" if pool else e.problem,
        allowed=e.allowed,
        fix=e.fix.replace(key, _OPTION_NAMES.get(key, key)),
    )
