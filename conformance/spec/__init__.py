"""Pure data about the protocol: versions and feature gates, methods, error codes, ``_meta`` keys,
requirements, and the outcomes their levels grade to (:mod:`.outcomes`)."""
