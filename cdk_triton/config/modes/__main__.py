"""``python -m cdk_triton.config.modes``: print the README's "Hosting modes" table from the rows."""

from cdk_triton.config.modes import readme_table

print(readme_table())
