"""Pure data about the protocol: versions and feature gates, methods, error codes, requirements."""
