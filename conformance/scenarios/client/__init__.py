"""Client scenarios: the suite plays the server, one behaviour per run (see ``conformance.client``)."""
