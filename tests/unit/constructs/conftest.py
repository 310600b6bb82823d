"""The construct tests' session fixture: cfn-lint once over every template the session synthesized.

``support.template()`` adds each synthesized template to ``support.REGISTRY``; at the end of the
session this fixture's finalizer runs cfn-lint over all of them in one process and fails the
session (an error in the last test's teardown) on any finding. No test has to run last.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.constructs.support import REGISTRY, cfn_lint


@pytest.fixture(scope="session", autouse=True)
def cfn_lint_every_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    clean, output = cfn_lint(REGISTRY.templates, REGISTRY.files, tmp_path_factory.mktemp("cfn-lint"))
    if not clean:
        pytest.fail(f"cfn-lint found problems in the synthesized templates:\n{output}", pytrace=False)
