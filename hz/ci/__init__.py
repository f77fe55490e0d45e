"""Scripts for CI systems: ``hz.ci.github`` is the GitHub Action's (``action.yml``)."""
