"""`cdk-triton demo`: the whole path offline, on the example in this repository.

declare (build/models.yaml) -> build (build/out/manifest.json) -> synth (app.py and pipeline_app.py,
cdk-nag as a validation plugin) -> cfn-lint every template -> serve each endpoint on a real local
Triton server -> invoke every model with its sample and compare with the eager model's outputs.

Modules: ``stages`` (the stages and :func:`~cdk_triton.demo.stages.run_demo`), ``commands`` (the
subcommand: parse, run, print); both were ``cdk_triton/demo.py`` before issue 19. Importing this
package is light.
"""
