"""Every message the server sent during the run, on every connection: JSON-RPC 2.0 and valid
against the official schema of the version (runs last in each version)."""

from __future__ import annotations

import re
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Kind, dumps, parse_envelope

from ._framing import claimed_by_transport
from ._helpers import closing_round_trip, repaired_for_schema, response_shape_problems
from .sampling import bad_sampling_messages

_SAMPLING_MESSAGE = re.compile(r"\$\.result\.inputRequests\.[^.\[]+\.params\.messages\[\d+\](\.role)?")


def _sampling_role_content(finding: Any) -> bool:
    """A schema finding that says what sampling.message.role-content says: a sampling message's
    role not "user" or "assistant", or its role or content missing."""
    if not _SAMPLING_MESSAGE.fullmatch(str(finding.json_path or "")):
        return False
    path = str(finding.schema_path or "")
    return path.endswith("/Role/enum") or (path.endswith("/SamplingMessage/required")
                                           and ("'role'" in str(finding) or "'content'" in str(finding)))

MAX_REPORTED = 20
_UNREADABLE_CODES = (errors.PARSE_ERROR, errors.INVALID_REQUEST)
_IGNORED_PROBLEMS = ("duplicate key", "UTF-8 byte order mark")


def _null_id_error(env) -> bool:
    """An error response with id null to a request whose id could not be read: JSON-RPC 2.0
    requires exactly that, though no MCP schema allows a null id (GUIDE: 'Parse-error id')."""
    return env.kind is Kind.ERROR and env.id is None and env.error_code in _UNREADABLE_CODES


def _idless_http_error(env, entry) -> bool:
    """An error response without id as the body of an HTTP error status: the streamable HTTP
    transport allows it ('The HTTP response body MAY comprise a JSON-RPC error response that has
    no id', 2025-03-26 and later), though the 2025-03-26 and 2025-06-18 schemas require an id."""
    status = entry.meta.get("http_status")
    return env.kind is Kind.ERROR and env.id is MISSING and isinstance(status, int) and status >= 400


def _revalidate_with_id(env, version: str, peer) -> list[Any]:
    from conformance.schema.validate import validate

    value = dict(env.value)
    value["id"] = 0
    return list(validate(value, version, "server-to-client"))


@scenario(requirements=["basic.schema.messages-valid", "basic.messages.jsonrpc"], order=1000)
async def inbound_messages_valid(ctx: ScenarioContext) -> None:
    """Every inbound message of every connection of this version (the run so far and one more
    round trip): a JSON-RPC 2.0 message, valid against the version's schema."""
    peer = await ctx.connect()
    await closing_round_trip(ctx, peer)
    counted = 0
    bad = {"basic.schema.messages-valid": 0, "basic.messages.jsonrpc": 0}
    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue  # its messages belong to another version's schema
        problem = conn.peer.validation_problem
        if problem:
            raise RuntimeError(problem)
        for entry in conn.transcript.entries:
            if entry.direction != Direction.IN:
                continue
            counted += 1
            if claimed_by_transport(entry, ctx.transport, ctx.version):
                continue  # stdout noise / not UTF-8: a transport rule's (stdio_transport.py), not this one's
            env = entry.envelope
            framing = entry.meta.get("problem")
            if env is not None and not framing and _shape_only(env):
                continue  # a response whose only fault is its shape: reported by jsonrpc.response_shapes
            if env is None or env.kind in (Kind.PARSE_ERROR, Kind.INVALID) or framing:
                if env is not None and env.kind not in (Kind.PARSE_ERROR, Kind.INVALID) and framing:
                    pass  # a framing problem on a readable message is the transport's rule, not this one
                else:
                    bad["basic.messages.jsonrpc"] += 1
                    if bad["basic.messages.jsonrpc"] <= MAX_REPORTED:
                        why = [p for p in (env.problems if env is not None else []) if not p.startswith(_IGNORED_PROBLEMS)]
                        if framing:
                            why.insert(0, framing)
                        ctx.check(
                            "basic.messages.jsonrpc",
                            False,
                            problem="NotJsonRpcMessage",
                            message=(f"the server sent {_raw(entry.raw, 60)!r} on {conn.label}"
                                     + (f" ({entry.meta['stream']})" if entry.meta.get("stream") else "")
                                     + f", which is not a JSON-RPC 2.0 message: {'; '.join(why) or 'unreadable'}"),
                            expected="a JSON-RPC 2.0 request, notification or response",
                            actual=_raw(entry.raw),
                            entries=[entry.seq],
                            peer=conn.peer,
                        )
                    continue
            findings = list(entry.findings)
            if findings and (_null_id_error(env) or _idless_http_error(env, entry)):
                findings = _revalidate_with_id(env, ctx.version, conn.peer)
            if findings and repaired_for_schema(env.value) is not MISSING:
                findings = _revalidate_repaired(env.value, ctx.version)
            # an array where the version has no batching answers a batch we sent: batching.batch_refused judges it
            findings = [f for f in findings if f.schema_path != "rule:batch-not-allowed"]
            # an InputRequiredResult without inputRequests or requestState, or asking for something
            # that is no input request: mrtr.input-required.non-empty and mrtr.input-requests.kinds
            findings = [f for f in findings if not _claimed_by_mrtr(f, env)]
            # a sampling input request's message without a role or content: sampling.message.role-content judges it
            if findings and env.kind is Kind.RESULT and bad_sampling_messages(env.result):
                findings = [f for f in findings if not _sampling_role_content(f)]
            if findings:
                bad["basic.schema.messages-valid"] += 1
                if bad["basic.schema.messages-valid"] <= MAX_REPORTED:
                    first = findings[0]
                    answering = entry.meta.get("answering")
                    ctx.check(
                        "basic.schema.messages-valid",
                        False,
                        problem="SchemaMismatch",
                        message=(
                            f"{env.kind.value}{f' to {answering}' if answering else ''} on {conn.label} does not match the "
                            f"{ctx.version} schema: " + "; ".join(str(f) for f in findings[:3])
                            + (f" (+{len(findings) - 3} more)" if len(findings) > 3 else "")
                        ),
                        expected=first.definition or first.schema_path,
                        actual=[f.to_json() for f in findings[:5]],
                        json_path=first.json_path,
                        entries=[entry.seq],
                        peer=conn.peer,
                    )
    n_conn = len([c for c in ctx.connections() if not (c.info and c.info.unsupported) and c.peer.inbound])
    for req, n in bad.items():
        if n == 0:
            ctx.check(req, True, message=f"{counted} inbound message(s) on {n_conn} connection(s) checked")
        elif n > MAX_REPORTED:
            ctx.note(f"{n} bad messages in all; the first {MAX_REPORTED} are reported", requirement=req)


_INPUT_REQUEST_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")


def _claimed_by_mrtr(finding, env) -> bool:
    if finding.schema_path == "rule:input-required-empty":
        return True
    result = env.value.get("result") if env is not None and isinstance(env.value, dict) else None
    reqs = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(reqs, dict) or not str(finding.json_path).startswith("$.result.inputRequests"):
        return False
    path = str(finding.json_path)
    alien = [k for k, v in reqs.items() if not (isinstance(v, dict) and v.get("method") in _INPUT_REQUEST_METHODS)]
    for k in alien:
        for head in (f"$.result.inputRequests[{k!r}]", f'$.result.inputRequests["{k}"]', f"$.result.inputRequests.{k}"):
            if path == head or path.startswith((head + ".", head + "[")):
                return True
    return False


def _shape_only(env) -> bool:
    """A response (or a batch of them) that is not a JSON-RPC message only because of the shape
    rules jsonrpc.response_shapes reports (result xor error); anything else wrong still counts."""
    values = env.value if env.kind is Kind.BATCH else [env.value]
    if env.kind not in (Kind.INVALID, Kind.BATCH) or not isinstance(values, list):
        return False
    if not any(response_shape_problems(v) for v in values):
        return False
    for v in values:
        fixed = repaired_for_schema(v)
        probe = parse_envelope(dumps(fixed if fixed is not MISSING else v))
        if probe.kind in (Kind.INVALID, Kind.PARSE_ERROR):
            return False
    return True


def _revalidate_repaired(value, version: str) -> list[Any]:
    """Schema findings of a response once the shape faults jsonrpc.response_shapes reports are
    repaired (they are reported there, under their own requirements)."""
    from conformance.schema.validate import validate

    fixed = repaired_for_schema(value)
    if isinstance(fixed, dict) and fixed.get("id", 0) is None:
        fixed["id"] = 0
    return list(validate(fixed, version, "server-to-client"))


def _raw(raw: bytes | None, limit: int = 300) -> str:
    if raw is None:
        return ""
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return text + (f"... ({len(raw)} bytes)" if len(raw) > limit else "")
