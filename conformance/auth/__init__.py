"""The suite's own OAuth authorization server (I/O: a loopback Starlette app on uvicorn).

:mod:`.core` is the logic, sans I/O (requests in, responses out, a request log, token minting);
:mod:`.server` hosts it on 127.0.0.1; :mod:`.context` is what a run hands its scenarios (the
authorization server, the resource the server under test serves, the token every connection
carries); :mod:`.browser` is the headless browser a client under test gets as ``BROWSER`` (run by
path, standard library only).  Nothing here imports the roles, the runtime or pytest.
"""
