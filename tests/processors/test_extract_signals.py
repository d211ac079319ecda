"""The tools a user names in a coding session, recognised by the shape of the name and by what the session ran.

Every tool here is invented (no list of tool names can know them): what makes a name a tool is how it is
written (``X.js``, a version after it, a package install) or that the session's shell ran it.
"""

from __future__ import annotations

from processors.extract.model import Entry
from processors.extract.offline import extract
from processors.extract.signals import SessionTools, tool_names
from processors.extract.workflow import session_tools
from tests.processors.test_workflow import P, call, result, session, texts


def said(n: int, text: str) -> Entry:
    return Entry(ref=f"s#u{n}", seq=n + 500, session_key="s", message_id=f"u{n}", project=P, speaker="user",
                 role="user", time=f"2025-03-01T11:{n:02d}:00Z", text=text)


RAN = SessionTools(programs=frozenset({"zork", "pkgx"}), words=frozenset({"zork", "lintr", "typo", "pkgx"}),
                   files=frozenset({"app.js"}))


def names(text: str, ran: SessionTools = RAN) -> list[str]:
    return [shown for _key, shown in tool_names(text, ran)]


def test_a_javascript_library_name_is_a_tool_unless_it_is_a_file_the_session_touched() -> None:
    assert names("scrolling in glimmer.js is broken") == ["glimmer.js"]
    assert names("the bug is in app.js, line 40") == []  # a file the tools read or edited
    assert names("see src/glimmer.js") == []  # a path


def test_a_name_with_its_version_is_a_tool_but_a_numbered_part_is_not() -> None:
    assert names("we are on Quokka 2.4 and need Fennel v3") == ["Quokka 2.4", "Fennel v3"]
    assert names("see section 3.1 and version 1.2, it takes 2.5 hours, coverage 42.1%") == []
    assert names("bump lintr 0.9.1 please") == ["lintr 0.9.1"]  # lowercase: a word of a command the shell ran
    assert names("bump blorp 0.9.1 please") == []  # lowercase and never run: could be any word


def test_a_package_is_installed_only_with_a_program_the_session_ran() -> None:
    assert names("pkgx install -D wombat-ui then retry") == ["wombat-ui"]
    assert names("please add tests for the parser") == []  # "please" ran nothing


def test_a_program_the_shell_ran_is_named_when_typed_as_a_command() -> None:
    assert names("zork lintr fails on main") == ["zork"]
    assert names("zork is slow today") == []  # the word alone, not typed as a command


def test_the_rest_of_a_list_with_a_code_shaped_item_and_a_run_one() -> None:
    assert names("setup lintr, typo, zz_audit please") == ["lintr", "typo", "zz_audit"]
    assert names("fix handle_one, handle_two and init") == []  # identifiers, none of them ever run
    assert names("lint, test and build it") == []  # no item written as code


def test_session_tools_reads_the_shell_and_the_files() -> None:
    ran = session_tools(session(("edit", ""), ("bash", "zork lintr --strict 2>&1 | tail -5"), ("bash", "git status"),
                                ("read", f"{P}/web/App.js", "x")))
    assert ran.programs == {"zork"} and ran.words == {"zork", "lintr"}
    assert ran.files == {"x.zz", "app.js"}


def test_in_a_session_the_tools_the_user_lists_become_one_project_fact() -> None:
    s = [*session(("edit", ""), ("bash", "zork lintr"), ("edit", ""), ("bash", "zork typo")),
         said(1, "setup lintr, typo, zz_audit and move the pane to glimmer.js")]
    got = texts(extract(s, []))
    assert "The project uses glimmer.js, lintr, typo and zz_audit." in got
    assert not any("zork" in t and t.startswith("The project uses") for t in got)


def test_a_tool_the_tracking_sentence_names_is_not_repeated() -> None:
    s = [call(1, "Bash", command="bd show web-42"), result(1), said(1, "bd show web-42 and then Work on bead web-42")]
    got = texts(extract(s, []))
    assert "Work on the project is tracked as beads, with the bd command." in got
    assert not any(t.startswith("The project uses bd") for t in got)


def test_what_the_team_says_it_uses_is_named() -> None:
    assert names("In this project we use quibble and zapf for everything.", SessionTools()) == ["quibble", "zapf"]
    assert names("in this repo I lint with quibble", SessionTools()) == ["quibble"]
    assert names("I use quibble at home", SessionTools()) == []  # the user's own tool, not the project's
    assert names("we use the new API for that", SessionTools()) == []  # a description, no names
