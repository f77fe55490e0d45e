"""The checks behind ``validate``: schema structure, limits, input/output schemas, template.

Each check reads a ``SourceDoc`` and returns located diagnostics; none raises for bad input.
"""
