"""``cdk-triton init``: a new project from templates shipped with the package.

``project`` (:func:`init_project`: checks, renders ``templates/``, writes; :data:`TEMPLATES` by hosting mode), ``commands``
(the subcommand: parse, call, print), ``errors`` (the catalogue). See README.md in this folder.
"""

from cdk_triton.scaffold.project import TEMPLATES, ScaffoldResult, init_project, scaffold_mode

__all__ = ["TEMPLATES", "ScaffoldResult", "init_project", "scaffold_mode"]
