"""evlog's version: the one place it is written (pyproject.toml reads it as its dynamic version).

``evlog --version``, the MCP server's ``serverInfo`` and the wheel's metadata all come from
``__version__`` here, so a release bumps this line and nothing else.
"""

__version__ = "0.3.0.dev0"
