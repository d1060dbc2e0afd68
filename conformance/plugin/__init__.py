"""The pytest plugin (``pytest11`` entry point: :mod:`conformance.plugin.hooks`)."""
