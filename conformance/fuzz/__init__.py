"""Property-based message fuzzing with the spec as oracle (issue 11).

The pure, sans-I/O parts (no transports, no anyio/httpx/subprocess):

* :mod:`~conformance.fuzz.corpus` -- valid messages per version and method (from the official
  schemas, optionally seeded once by hypothesis-jsonschema; tool/prompt arguments from the
  target's own ``tools/list`` / ``prompts/list``);
* :mod:`~conformance.fuzz.operators` -- the registry of named mutation operators, each recording
  what it changed (:class:`~conformance.fuzz.operators.Mutation`);
* :mod:`~conformance.fuzz.generate` -- frame *i* of a campaign from ``(seed, i)`` alone;
* :mod:`~conformance.fuzz.oracle` -- expectations and judgments, pure functions over (sent frame,
  answers or a silence bounded by a barrier), citing catalogue requirements and graded with
  :mod:`conformance.spec.outcomes`;
* :mod:`~conformance.fuzz.shrink` -- JSON-aware delta debugging, driven by the caller;
* :mod:`~conformance.fuzz.replay` -- the reproducer file format.

The I/O layer is :mod:`conformance.fuzz.engine` (pipelined driver over ``conformance.transports``)
and :mod:`conformance.fuzz.client_engine`; the campaign library is :mod:`conformance.fuzz.campaign`
with its two directions (:mod:`~conformance.fuzz.server_campaign`,
:mod:`~conformance.fuzz.client_campaign`); the entries are :mod:`conformance.fuzz.command`
(``mcp-conformance fuzz``, argparse only) and :mod:`conformance.fuzz.pytest_fuzz` (``--mcp-fuzz``);
nothing here imports them.

Both directions.  Fuzzing a server (we are its client): the corpus of client-to-server messages,
the ``c2s`` operators, :func:`conformance.fuzz.oracle.expect`, the engine.  Fuzzing a client (we
play its server, ``--client-command``): :func:`conformance.fuzz.corpus.build_client_corpus`
(server-to-client messages), the ``s2c`` and ``answer`` operators
(:func:`conformance.fuzz.generate.answer_at` mutates our answers to the client's requests),
:mod:`conformance.fuzz.client_oracle` (pure: expectations and survival, judged by the same
:func:`~conformance.fuzz.oracle.judge` with ``role="client"``), :mod:`conformance.fuzz.client_engine`
(many client runs, through the client-testing harness) and :mod:`conformance.fuzz.client_campaign`.
Reports and reproducers are shared; both say whose duty they judged (``role``).
"""
