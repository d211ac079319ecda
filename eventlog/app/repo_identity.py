"""Which project a directory belongs to: the git repository, not the path.

A project's memory is kept under the path its sessions ran in (a transcript's ``cwd``), but
one repository is often checked out in several places: its worktrees (``git worktree add``)
and its clones. ``identity(path)`` says which repository a directory is in, as a set of
keys; two directories are the same project when their keys meet (``same_project``):

* ``git-root:<sha>``: the first commit of the repository's history (the root commit of the
  main HEAD; the smallest when there are several). Shared by every worktree and every clone.
* ``git-remote:<host/path>``: the ``origin`` remote's URL, normalised (scheme, user,
  ``.git`` and the ``host:path`` form dropped), so an https clone and an ssh clone match.
* ``git-dir:<path>``: the common git directory (real path). Shared by worktrees; the only
  key of a repository with no commit and no remote yet.

A directory that is in no git repository has no identity (``None``): callers fall back
to its path. The git directory is found by reading files (``.git``, ``gitdir:``,
``commondir``, ``config``); only the root commit needs ``git`` itself, run once per
repository and kept in a small cache file (``state/repo-identity.json`` of the workspace)
with each path's keys, so a worktree that was removed since is still recognised, and a
hook pays one JSON read, not a process, on its next call; one call starts at most
``MAX_GIT_CALLS`` of them. A missing ``git``, a timeout or an unreadable file just means
fewer keys.
"""

from __future__ import annotations

import json
import os
import re

from eventlog.record import FrozenRecord, Record

TYPE_CHECKING = False  # typing's, without importing it (a context hook's path)
if TYPE_CHECKING:
    from collections.abc import Iterable

CACHE_FILE = os.path.join("state", "repo-identity.json")
GIT_TIMEOUT = 2.0  # seconds for `git rev-list` (a hook must never stall)
MAX_GIT_CALLS = 4  # `git rev-list` runs one cache may start (a hook call); the other repositories wait for the next
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")
_SHA = re.compile(r"^[0-9a-f]{40,64}$")


class GitPlace(FrozenRecord):
    """Where a directory's repository is: its work tree top, its git dir and the common git dir."""

    __slots__ = ("top", "git_dir", "common_dir")
    top: str
    git_dir: str
    common_dir: str

    def __init__(self, top: str, git_dir: str, common_dir: str) -> None:
        self._freeze(top=top, git_dir=git_dir, common_dir=common_dir)


class Identity(Record):
    """A repository's keys (see the module docstring); ``keys`` is never empty."""

    __slots__ = ("place", "root", "remote", "keys")
    place: GitPlace
    root: str
    remote: str
    keys: frozenset[str]

    def __init__(self, place: GitPlace, root: str = "", remote: str = "", keys: frozenset[str] = frozenset()) -> None:
        self.place, self.root, self.remote, self.keys = place, root, remote, keys


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def git_place(path: str) -> GitPlace | None:
    """The repository ``path`` is in (walking up to the first ``.git``), found by reading files; None if none."""
    cur = os.path.realpath(path)
    while True:
        dot = os.path.join(cur, ".git")
        if os.path.isdir(dot):
            git_dir = dot
            break
        if os.path.isfile(dot):
            m = re.match(r"gitdir:\s*(.+)", _read(dot).strip())
            if m is None:
                return None
            git_dir = os.path.normpath(os.path.join(cur, m.group(1).strip()))
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
    common = _read(os.path.join(git_dir, "commondir")).strip()
    common_dir = os.path.realpath(os.path.join(git_dir, common)) if common else os.path.realpath(git_dir)
    return GitPlace(top=cur, git_dir=os.path.realpath(git_dir), common_dir=common_dir)


def normalise_remote(url: str) -> str:
    """A remote URL as ``host/path`` (lower-case host, no scheme, user, port-less ``:``, ``.git`` or ``/``)."""
    url = url.strip()
    if not url:
        return ""
    if _URL_SCHEME.match(url):
        rest = _URL_SCHEME.sub("", url)
        if url.lower().startswith("file://"):
            return os.path.realpath(rest)
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2].lower()
        host = re.sub(r":\d+$", "", host)
    else:
        m = _SCP_LIKE.match(url)
        if m is None or os.path.isabs(url) or url.startswith("."):
            return os.path.realpath(url)  # a local path: a clone of a clone on this machine
        host, path = m.group(1).lower(), m.group(2)
    path = path.strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return f"{host}/{path}"


def origin_remote(common_dir: str) -> str:
    """The normalised URL of the ``origin`` remote (else the first remote) in the repository's config; "" if none."""
    import configparser

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(_read(os.path.join(common_dir, "config")))
    except configparser.Error:
        return ""
    remotes = [s for s in parser.sections() if s.startswith("remote ")]
    remotes.sort(key=lambda s: s != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="")
        if url:
            return normalise_remote(url)
    return ""


def root_commit(common_dir: str) -> str:
    """The first commit of HEAD's history (the smallest sha if several); "" when there is none or git fails."""
    import subprocess  # here: a hook whose repositories are all in the cache never starts git, nor imports this

    try:
        out = subprocess.run(["git", "--git-dir", common_dir, "rev-list", "--max-parents=0", "HEAD"],
                             capture_output=True, text=True, timeout=GIT_TIMEOUT, check=False,
                             env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError):
        return ""
    shas = sorted(s for s in out.stdout.split() if _SHA.match(s)) if out.returncode == 0 else []
    return shas[0] if shas else ""


class IdentityCache:
    """The cache file: root commit per common git dir, keys per path (see the module docstring)."""

    def __init__(self, home: str | None) -> None:
        self.path = os.path.join(home, CACHE_FILE) if home else ""
        self.roots: dict[str, str] = {}
        self.paths: dict[str, list[str]] = {}
        self.changed = False
        self.git_calls = 0
        if self.path:
            try:
                data = json.loads(_read(self.path) or "{}")
            except ValueError:
                data = {}
            if isinstance(data, dict):
                self.roots = {k: v for k, v in (data.get("roots") or {}).items() if isinstance(v, str)}
                self.paths = {k: v for k, v in (data.get("paths") or {}).items() if isinstance(v, list)}

    def root(self, common_dir: str) -> str:
        if common_dir not in self.roots:
            if self.git_calls >= MAX_GIT_CALLS:
                return ""  # this call has run git enough: the cheaper keys still match
            self.git_calls += 1
            sha = root_commit(common_dir)
            if not sha:
                return ""  # no commit yet (or no git): ask again next time
            self.roots[common_dir] = sha
            self.changed = True
        return self.roots[common_dir]

    def remember(self, path: str, keys: frozenset[str]) -> None:
        if sorted(keys) != self.paths.get(path):
            self.paths[path] = sorted(keys)
            self.changed = True

    def save(self) -> None:
        """Write the cache if it changed (atomically); a read-only workspace just keeps no cache."""
        if not self.changed or not self.path:
            return
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"roots": self.roots, "paths": self.paths}, f, sort_keys=True)
            os.replace(tmp, self.path)
            self.changed = False
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def identity(path: str, cache: IdentityCache | None = None) -> Identity | None:
    """The repository ``path`` is in, with its keys; None when it is in none."""
    place = git_place(path)
    if place is None:
        return None
    cache = cache or IdentityCache(None)
    root = cache.root(place.common_dir)
    remote = origin_remote(place.common_dir)
    keys = {f"git-dir:{place.common_dir}"}
    if root:
        keys.add(f"git-root:{root}")
    if remote:
        keys.add(f"git-remote:{remote}")
    ident = Identity(place=place, root=root, remote=remote, keys=frozenset(keys))
    cache.remember(os.path.realpath(path), ident.keys)
    return ident


def keys_of(path: str, cache: IdentityCache) -> frozenset[str]:
    """A path's keys: from its repository if it is still there, else what the cache last saw; empty if none."""
    if os.path.isdir(path):
        ident = identity(path, cache)
        return ident.keys if ident is not None else frozenset()
    return frozenset(cache.paths.get(os.path.realpath(path), ()))


def same_project(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether two key sets name the same repository (they share a key)."""
    return not set(a).isdisjoint(b)
