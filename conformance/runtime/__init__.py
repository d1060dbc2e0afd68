"""The role-free runtime: one run against one target, whichever role the suite plays (see ARCHITECTURE.md).

:mod:`.run` (the run, one item executed and graded), :mod:`.schedule`, :mod:`.judge`, :mod:`.records`,
:mod:`.signals`, :mod:`.registry` (the ``@scenario`` records), :mod:`.connect` (reaching a peer, its
processes) and :mod:`.peer` (``RawPeer``, one connection of either role).
"""
