"""server/utilities/pagination: cursors on every list method the server declares."""

from __future__ import annotations

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.wire.envelope import Kind

from . import _features as F


def _declared_lists(ctx: ScenarioContext) -> list[str]:
    return [m for m, (_, cap, _) in F.LISTS.items() if F.declared(ctx.server_capabilities, cap)]


@scenario(requirements=["pagination.invalid-cursor"])
async def invalid_cursor(ctx: ScenarioContext) -> None:
    """Every declared list method, asked for a cursor the server never issued: error -32602."""
    peer = await ctx.connect()
    methods = _declared_lists(ctx)
    if not methods:
        ctx.skip("the server declares none of tools, prompts, resources (no list method to page)")
    req = "pagination.invalid-cursor"
    for method in methods:
        cursor = f"mcp-conformance-invalid-cursor-{F.unique_token()}"
        env = await F.request(peer, method, {"cursor": cursor}, timeout=ctx.timeout)
        if env is None:
            ctx.check(req, False, problem="NoAnswer", message=f"{method} with an invalid cursor got no answer within {ctx.timeout:g} s",
                      expected={"error": {"code": errors.INVALID_PARAMS}}, actual="no answer")
            continue
        if env.kind is Kind.ERROR and env.error_code == errors.METHOD_NOT_FOUND and method == "resources/templates/list":
            ctx.note(f"{method} is not implemented (-32601); its cursors are not judged", requirement=req)
            continue
        ok = env.kind is Kind.ERROR and env.error_code == errors.INVALID_PARAMS
        ctx.check(
            req,
            ok,
            problem="WrongErrorCode" if env.kind is Kind.ERROR else "InvalidCursorAccepted",
            message=(
                f"{method} with the cursor {cursor!r}, which the server never issued, was answered with "
                + (F.describe_error(env) if env.kind is Kind.ERROR else "a result")
                + ("" if ok else "; invalid cursors should give -32602 (Invalid params)")
            ),
            expected={"error": {"code": errors.INVALID_PARAMS}},
            actual=env.error if env.kind is Kind.ERROR else env.result,
            entries=[env],
        )


@scenario(requirements=["pagination.stable-cursors"])
async def follow_cursors(ctx: ScenarioContext) -> None:
    """Every declared list method followed through its `nextCursor`s: each cursor leads to a page
    (no error, no cursor twice), and a cursor sent again returns the same page."""
    peer = await ctx.connect()
    methods = _declared_lists(ctx)
    if not methods:
        ctx.skip("the server declares none of tools, prompts, resources (no list method to page)")
    req = "pagination.stable-cursors"
    paged = 0
    for method in methods:
        listing = await F.list_all(peer, method, timeout=ctx.timeout)
        first_broken = listing.error_cursor is None and (listing.error is not None or listing.problem_kind == "not-a-list")
        if not listing.pages or first_broken:
            why = F.describe_error(listing.error) if listing.error is not None else listing.problem
            ctx.note(f"{method}: the first page is not a list ({why}); its cursors are not judged", requirement=req)
            continue
        if len(listing.pages) == 1 and listing.complete:
            continue
        paged += 1
        if listing.error is not None or listing.problem_kind in ("cursor-repeats", "timeout", "not-a-list"):
            what = F.describe_error(listing.error) if listing.error is not None else listing.problem
            ctx.check(
                req,
                False,
                problem="CursorBroken",
                message=f"{method}: following the server's own nextCursor (page {len(listing.pages) + (1 if listing.error else 0)}) failed: {what}",
                expected="the next page for every nextCursor, and an end",
                actual=listing.error.error if listing.error is not None else listing.problem,
                entries=listing.envelopes()[-2:],
            )
            continue
        if listing.problem_kind == "too-many-pages":
            ctx.note(f"{method}: more than {F.MAX_PAGES} pages; stopped following", requirement=req)
        page = listing.pages[1]
        again = await F.request(peer, method, {"cursor": page.cursor}, timeout=ctx.timeout)
        key, _, ident = F.LISTS[method]
        items = again.result.get(key) if again is not None and again.kind is Kind.RESULT and isinstance(again.result, dict) else None
        first_ids = [i.get(ident) if isinstance(i, dict) else i for i in page.items]
        again_ids = [i.get(ident) if isinstance(i, dict) else i for i in items] if isinstance(items, list) else None
        ok = again_ids == first_ids
        ctx.check(
            req,
            ok,
            problem="CursorNotStable",
            message=(
                f"{method}: {len(listing.pages)} page(s) followed; the cursor of page 2 sent again returns the same page"
                if ok
                else f"{method}: the cursor of page 2 sent again returned "
                + (F.describe_error(again) if again is not None and again.kind is Kind.ERROR else "no answer" if again is None else f"other items ({again_ids})")
                + f" instead of {first_ids}"
            ),
            expected=first_ids,
            actual=again_ids if again is None or again.kind is not Kind.ERROR else again.error,
            entries=[page.env, *( [again] if again is not None else [])],
        )
    if paged == 0:
        ctx.not_reached(req, "no list the server declares spans more than one page")
