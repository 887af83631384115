"""Runtime Source: ``runtime/memories.json`` (truth) projected to USER.md / MEMORY.md and the wake snapshot.

- :mod:`.model` entries, normalization, formats, revision;
- :mod:`.ops` pure add/replace/remove, maintenance plan, packing;
- :mod:`.store` one root's durable, locked store with repair and recovery;
- :mod:`.source` the workspace's effective view (split ``runtimeUserScope``);
- :mod:`.snapshot` the wake snapshot text.
"""
