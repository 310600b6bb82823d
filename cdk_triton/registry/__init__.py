"""Registration of builds in the SageMaker Model Registry (``cdk-triton register``): boto3 at run time.

``register_build`` registers one endpoint of a build: for an SME one package with the Triton image and
the recorded artifacts, for inference components one package per component, for an MME one package
whose metadata names the manifest (the unit of approval). See README.md.
"""

from cdk_triton.registry.errors import RegistryError
from cdk_triton.registry.register import RegisteredPackage, RegistrationResult, register_build

__all__ = ["RegisteredPackage", "RegistrationResult", "RegistryError", "register_build"]
