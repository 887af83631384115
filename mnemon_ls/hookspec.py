"""What ``mnemon-ls setup`` writes into an assistant client's hooks (:mod:`mnemon_ls.clients`) and ``mnemon-ls
hook`` keeps to when it runs (:mod:`mnemon_ls.cli.hooks`): one definition for both sides. Imports nothing (the
hook runs at every prompt)."""

#: Seconds a hook may run before the client gives up on it: the ``timeout`` ``mnemon-ls setup`` writes, which the
#: ``session-start`` hook's deadline stays below.
HOOK_TIMEOUT_SECONDS = 10
