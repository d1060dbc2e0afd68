"""The requirement catalogue: one module per spec page, each calling ``define(...)``.

Modules are imported by :func:`conformance.spec.requirements.catalogue`.
"""
