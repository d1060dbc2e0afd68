"""server/utilities/caching (2026-07-28): caching hints on cacheable results."""

from __future__ import annotations

from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.wire.envelope import Envelope, Kind

from . import _features as F

REQS = ("caching.hints.required", "caching.ttl.non-negative", "caching.scope.same-across-pages")
SCOPES = ("public", "private")


@scenario(requirements=list(REQS), since="2026-07-28")
async def hints(ctx: ScenarioContext) -> None:
    """server/discover, every page of each declared list method and resources/read of a listed
    resource carry an integer `ttlMs` >= 0 and a `cacheScope` of public or private, the same
    scope on every page of a list."""
    peer = await ctx.connect()
    answers: list[tuple[str, Envelope]] = []
    env = await F.request(peer, "server/discover", timeout=ctx.timeout)
    if env is not None:
        answers.append(("server/discover", env))
    first_uri = None
    for method, (_, cap, _) in F.LISTS.items():
        if not F.declared(ctx.server_capabilities, cap):
            continue
        listing = await F.list_all(peer, method, timeout=ctx.timeout)
        pages = [p.env for p in listing.pages if _complete(p.env)]
        answers.extend((method, e) for e in pages)
        if method == "resources/list" and first_uri is None:
            first_uri = next((r.get("uri") for r in listing.items if isinstance(r, dict) and isinstance(r.get("uri"), str)), None)
        if len(pages) > 1:
            scopes = [e.result.get("cacheScope") for e in pages]
            same = len({repr(s) for s in scopes}) == 1
            ctx.check(
                "caching.scope.same-across-pages",
                same,
                problem="CacheScopeVaries",
                message=(
                    f"{method}: {len(pages)} pages, all with cacheScope {scopes[0]!r}"
                    if same
                    else f"{method}: the pages carry different cacheScope values {scopes}"
                ),
                expected=f"one cacheScope for all {len(pages)} pages",
                actual=scopes,
                entries=pages,
            )
    if first_uri is not None:
        env = await F.request(peer, "resources/read", {"uri": first_uri}, timeout=ctx.timeout)
        if env is not None:
            answers.append((f"resources/read {first_uri}", env))
    ctx.not_reached("caching.scope.same-across-pages", "no list the server declares spans more than one page")
    judged = 0
    for what, env in answers:
        if not _complete(env):
            continue
        judged += 1
        result = env.result
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        ttl_ok = isinstance(ttl, int) and not isinstance(ttl, bool)
        scope_ok = scope in SCOPES
        ctx.check(
            "caching.hints.required",
            ttl_ok and scope_ok,
            problem="CachingHintsMissing",
            message=(
                f"{what}: ttlMs {ttl!r}, cacheScope {scope!r}"
                if ttl_ok and scope_ok
                else f"{what}: the result lacks valid caching hints (ttlMs {_shown(result, 'ttlMs')}, cacheScope {_shown(result, 'cacheScope')})"
            ),
            expected={"ttlMs": "<integer >= 0>", "cacheScope": "public | private"},
            actual={"ttlMs": result.get("ttlMs", "<absent>"), "cacheScope": result.get("cacheScope", "<absent>")},
            json_path="$.result",
            entries=[env],
        )
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
            ctx.check(
                "caching.ttl.non-negative",
                ttl >= 0,
                problem="NegativeTtl",
                message=f"{what}: ttlMs is {ttl}" + (" (negative)" if ttl < 0 else ""),
                expected=">= 0",
                actual=ttl,
                json_path="$.result.ttlMs",
                entries=[env],
            )
    if judged == 0:
        for rid in REQS:
            ctx.not_reached(rid, "no cacheable result was answered")


def _complete(env: Envelope | None) -> bool:
    return env is not None and env.kind is Kind.RESULT and isinstance(env.result, dict) and env.result.get("resultType", "complete") == "complete"


def _shown(result: dict, key: str) -> Any:
    return repr(result[key]) if key in result else "absent"
