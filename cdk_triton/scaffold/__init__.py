"""``cdk-triton init``: a new project from templates shipped with the package.

``project`` (:func:`init_project`: checks, renders ``templates/``, writes; :data:`MODES`), ``commands``
(the subcommand: parse, call, print), ``errors`` (the catalogue). See README.md in this folder.
"""

from cdk_triton.scaffold.project import MODES, ScaffoldResult, init_project

__all__ = ["MODES", "ScaffoldResult", "init_project"]
