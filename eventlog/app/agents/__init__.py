"""Agents use evlog: an MCP server, Claude Code hooks, continuous capture and their setup.

* ``context``: the memory an agent should start with in a directory (project facts, then
  facts about the user, within a byte budget), read from the MEMORY.md files;
* ``hooks``: ``evlog hook claude-code``: capture on ``Stop``/``SubagentStop``/``PreCompact``/
  ``SessionEnd`` (incremental ingest of the transcript), context on ``SessionStart`` (and
  ``UserPromptSubmit``); never breaks or stalls Claude Code;
* ``setup``: ``evlog setup claude-code``: merge the hooks and the MCP server into Claude
  Code's settings files (atomic, with a backup, idempotent, ``--dry-run`` shows the diff);
* ``watch``: ``evlog watch``: follow transcript folders and ingest what grows;
* ``mcp``: ``evlog mcp``: the MCP server (stdio) with recall, remember, forget, why,
  sessions and session_messages, and the MEMORY.md files as resources;
* ``bounded``: small, bounded tool results with a "more" cursor.

Every writer here opens the workspace with a short lock timeout and holds nothing between
calls: the daemon, the MCP server, hooks and watch write to one workspace at once.
"""
