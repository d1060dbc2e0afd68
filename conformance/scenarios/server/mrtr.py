"""basic/patterns/mrtr (2026-07-28): a tool that answers with an InputRequiredResult is retried
with inputResponses and the echoed requestState (also on a new HTTP connection), without the
responses, and with an extra, unrequested response."""

from __future__ import annotations

from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario

from ._stateless import CLIENT_CAPABILITIES_KEY, FULL_CAPS, Answer, ask, describe, input_candidates, input_requests_of, input_responses, is_input_required, list_tools, verdict

V = "2026-07-28"
LEGACY = "multi round-trip requests are new in 2026-07-28 (earlier revisions send server-to-client requests)"
MAX_ROUNDS = 4
EXTRA_KEY = "mcp-conformance-unrequested"


NOT_RESPONSES = "mcp-conformance: not an InputResponses object"
FOREIGN_STATE = "mcp-conformance: a requestState this server never issued"


def _params(name: str, result: Any, responses: Any, *, extra: dict[str, Any] | None = None, state: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if isinstance(responses, dict):
        params["inputResponses"] = {**responses, **(extra or {})}
    elif responses is not None:
        params["inputResponses"] = responses  # a probe: not an InputResponses object
    issued = result.get("requestState") if isinstance(result, dict) else None
    if state is not None:
        params["requestState"] = state  # a probe: a state the server did not issue
    elif isinstance(issued, str):
        params["requestState"] = issued  # echoed exactly, as the client MUST
    return params


def _tampered(state: str) -> str:
    """``state`` with characters changed in its middle and at its end (the same length and alphabet
    where possible), so that anything that protects or parses it notices."""
    if not state:
        return "x"
    swap = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                         "BCDEFGHIJKLMNOPQRSTUVWXYZAbcdefghijklmnopqrstuvwxyza1234567890")
    mid = len(state) // 2
    out = state[:mid] + state[mid].translate(swap) + state[mid + 1:]
    out = out[:-1] + out[-1].translate(swap)
    return out if out != state else state + "x"


async def _call(peer: Any, name: str, params: dict[str, Any] | None = None) -> Answer:
    return await ask(peer, "tools/call", params or {"name": name, "arguments": {}}, meta={CLIENT_CAPABILITIES_KEY: FULL_CAPS})


async def _complete(peer: Any, retry_peer: Any, name: str, first: Answer) -> tuple[Answer, int]:
    """Fulfil every round (up to MAX_ROUNDS) starting from ``first``; the first retry goes to
    ``retry_peer``.  Returns the last answer and the number of retries."""
    ans, rounds, target = first, 0, retry_peer
    while is_input_required(ans) and rounds < MAX_ROUNDS:
        result = ans.result
        ans = await _call(target, name, _params(name, result, input_responses(input_requests_of(result))))
        rounds += 1
        target = peer
    return ans, rounds


@scenario(
    requirements=[
        "mrtr.retry.completes",
        "mrtr.missing-input.re-request",
        "mrtr.input-responses.ignore-unknown",
        "mrtr.no-assumed-retry",
        "mrtr.input-responses.validated",
        "mrtr.request-state.untrusted",
        "stateless.no-connection-affinity",
    ],
    since=V,
    skip_reason=LEGACY,
    capability="tools",
)
async def input_required_round_trip(ctx: ScenarioContext) -> None:
    """A tool that asks for input (every client capability declared) is retried with the answers
    and the echoed requestState until it completes; then without the answers (asked again), with
    an unrequested extra answer (ignored) and, on HTTP, on a new connection (served the same);
    called afresh after an answer left without retry (served the same); retried with answers that
    are not an InputResponses object (not taken as given) and with a requestState it never issued
    (answered, and the server keeps serving)."""
    peer = await ctx.connect()
    tools, failed = await list_tools(peer)
    candidates = sorted(input_candidates(tools), key=lambda t: 0 if t["name"].startswith("test_input_required_result") else 1)
    first: Answer | None = None
    name = ""
    for tool in candidates:
        ans = await _call(peer, tool["name"])
        if is_input_required(ans):
            first, name = ans, tool["name"]
            break
    if first is None:
        tried = ", ".join(t["name"] for t in candidates) or "none"
        why = "tools/list failed: " + describe(failed) if failed is not None else f"no tool answered with an InputRequiredResult (tried: {tried})"
        ctx.skip(f"{why}; multi round-trip requests are optional for servers")

    # 1. the whole flow on one connection
    final, rounds = await _complete(peer, peer, name, first)
    served = not final.is_error and final.env is not None
    verdict(
        ctx,
        "mrtr.retry.completes",
        served,
        problem="RetryRejected",
        passed=f"tools/call {name!r}: after {rounds} retr{'y' if rounds == 1 else 'ies'} with inputResponses and the echoed requestState: {describe(final)}",
        failed=(
            f"tools/call {name!r} asked for input; after {rounds} retr{'y' if rounds == 1 else 'ies'} with inputResponses for every "
            f"input request and the echoed requestState it was answered with {describe(final)}"
        ),
        expected="a final result (or another InputRequiredResult)",
        actual=final.error if final.is_error else "no answer",
        entries=[*first.entries(), *final.entries()],
    )
    if served and is_input_required(final):
        ctx.note(f"tools/call {name!r} still asked for input after {rounds} rounds (servers MAY ask repeatedly)", requirement="mrtr.retry.completes")

    # 2. the first retry on a new connection (HTTP): nothing but the request itself is needed
    if ctx.applies("stateless.no-connection-affinity"):
        other = await ctx.connect(fresh=True)
        start = await _call(peer, name)
        if is_input_required(start):
            moved, _ = await _complete(peer, other, name, start)
            ok = not moved.is_error and moved.env is not None
            verdict(
                ctx,
                "stateless.no-connection-affinity",
                ok or not served,
                problem="ConnectionAffinity",
                passed=f"the retry of tools/call {name!r} on a new HTTP connection: {describe(moved)}",
                failed=(
                    f"the retry of tools/call {name!r} sent on a new HTTP connection was answered with {describe(moved)}, "
                    "while the same retry on the original connection was served"
                ),
                expected="the same answer as on the original connection",
                actual=moved.error if moved.is_error else "no answer",
                entries=moved.entries(),
                peer=other,
            )
        else:
            ctx.not_reached("stateless.no-connection-affinity", f"the second call of {name!r} did not ask for input ({describe(start)})")

    # 3. the retry without the requested information
    start = await _call(peer, name)
    if is_input_required(start) and input_requests_of(start.result):
        bare = await _call(peer, name, _params(name, start.result, None))
        verdict(
            ctx,
            "mrtr.missing-input.re-request",
            bare.env is not None and not bare.is_error,
            problem="MissingInputRejected",
            passed=f"the retry of tools/call {name!r} without inputResponses: {describe(bare)}",
            failed=(
                f"the retry of tools/call {name!r} without inputResponses was answered with {describe(bare)}; the server should "
                "ask for the missing information again with a new InputRequiredResult"
            ),
            expected={"resultType": "input_required", "inputRequests": "..."},
            actual=bare.error if bare.is_error else "no answer",
            entries=[*start.entries(), *bare.entries()],
        )
    else:
        ctx.not_reached("mrtr.missing-input.re-request", f"the call of {name!r} did not come back with inputRequests ({describe(start)})")

    # 4. the retry with one more, unrequested answer
    start = await _call(peer, name)
    if is_input_required(start):
        responses = input_responses(input_requests_of(start.result))
        extra = {EXTRA_KEY: {"action": "decline"}}
        padded = await _call(peer, name, _params(name, start.result, responses, extra=extra))
        verdict(
            ctx,
            "mrtr.input-responses.ignore-unknown",
            not padded.is_error or not served,
            problem="UnrequestedInputRejected",
            passed=f"the retry of tools/call {name!r} with an extra, unrequested inputResponses entry: {describe(padded)}",
            failed=(
                f"the retry of tools/call {name!r} with an extra inputResponses entry {EXTRA_KEY!r} (never requested) was answered "
                f"with {describe(padded)}, while the same retry without it was served; unrecognised entries should be ignored"
            ),
            expected="the answer the retry gets without the extra entry",
            actual=padded.error if padded.is_error else "no answer",
            entries=[*start.entries(), *padded.entries()],
        )
    else:
        ctx.not_reached("mrtr.input-responses.ignore-unknown", f"the call of {name!r} did not ask for input ({describe(start)})")

    # 5. an InputRequiredResult left without retry: a fresh call is served all the same
    abandoned = await _call(peer, name)
    if is_input_required(abandoned):
        fresh = await _call(peer, name)
        ok = fresh.env is not None and not fresh.is_error
        verdict(
            ctx,
            "mrtr.no-assumed-retry",
            ok,
            problem="RetryAssumed",
            passed=f"tools/call {name!r} called afresh after an InputRequiredResult that was never retried: {describe(fresh)}",
            failed=(
                f"tools/call {name!r} was answered with an InputRequiredResult that the client did not retry; a fresh call of "
                f"{name!r} was then answered with {describe(fresh)}; the server may not count on the retry"
            ),
            expected="the answer the first call got (an InputRequiredResult, or a final result)",
            actual=fresh.error if fresh.is_error else "no answer",
            entries=[*abandoned.entries(), *fresh.entries()],
        )
    else:
        ctx.not_reached("mrtr.no-assumed-retry", f"the call of {name!r} did not ask for input ({describe(abandoned)})")

    # 6. answers that are not an InputResponses object
    start = await _call(peer, name)
    if is_input_required(start) and input_requests_of(start.result):
        garbled = await _call(peer, name, _params(name, start.result, NOT_RESPONSES))
        taken = garbled.is_result and not is_input_required(garbled)
        verdict(
            ctx,
            "mrtr.input-responses.validated",
            not taken,
            problem="InvalidInputResponsesAccepted",
            passed=f"the retry of tools/call {name!r} with inputResponses a string: {describe(garbled)}",
            failed=(
                f"the retry of tools/call {name!r} carried inputResponses {NOT_RESPONSES!r} (a string, not an InputResponses "
                f"object) and was answered with a final result: the server took answers it could not have parsed"
            ),
            expected="a JSON-RPC error (-32602), or an InputRequiredResult asking again",
            actual=garbled.result,
            entries=[*start.entries(), *garbled.entries()],
        )
    else:
        ctx.not_reached("mrtr.input-responses.validated", f"the call of {name!r} did not come back with inputRequests ({describe(start)})")

    # 7. a requestState the server never issued
    start = await _call(peer, name)
    issued = start.result.get("requestState") if is_input_required(start) else None
    if isinstance(issued, str):
        responses = input_responses(input_requests_of(start.result))
        forged = [await _call(peer, name, _params(name, start.result, responses, state=s)) for s in (_tampered(issued), FOREIGN_STATE)]
        after = await _call(peer, name)
        silent = [f for f in forged if f.env is None]
        verdict(
            ctx,
            "mrtr.request-state.untrusted",
            not silent and after.env is not None,
            problem="ForgedRequestStateBreaksServer",
            passed=(f"retries of tools/call {name!r} with a changed and a made-up requestState: "
                    f"{'; '.join(describe(f) for f in forged)}; the next call: {describe(after)}"),
            failed=(
                f"retries of tools/call {name!r} with a requestState the server never issued (one changed, one made up) "
                + (f"went unanswered ({len(silent)} of {len(forged)})" if silent else "were answered")
                + ("" if after.env is not None else f", and the next call of {name!r} was not answered")
                + f" within {ctx.timeout:g} s: the state is attacker-controlled input and must be handled as such"
            ),
            expected="an answer to each (a rejection, typically -32602), and the server still serving",
            actual="no answer",
            entries=[*start.entries(), *(e for f in forged for e in f.entries()), *after.entries()],
        )
    else:
        ctx.not_reached("mrtr.request-state.untrusted", f"the call of {name!r} came back without a requestState ({describe(start)})")
