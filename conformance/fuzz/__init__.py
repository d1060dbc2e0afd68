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
  :mod:`conformance.outcomes`;
* :mod:`~conformance.fuzz.shrink` -- JSON-aware delta debugging, driven by the caller;
* :mod:`~conformance.fuzz.replay` -- the reproducer file format.

The I/O layer is :mod:`conformance.fuzz.engine` (pipelined driver over ``conformance.transports``)
and :mod:`conformance.fuzz.command` (``mcp-conformance fuzz``); nothing here imports them.

Direction: everything here is written for "we are the client, the target is a server".  The
oracle's expectations are keyed by the direction of the frame (``methods.C2S``), so a client
direction (we are the server, frames are mutated server-to-client requests/responses) plugs in as
another corpus + expectation table over the same judge.
"""
