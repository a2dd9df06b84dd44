"""``er-expectations label links PROJECT [list|add NAME|revoke NAME|lead|rotate]``: the workbench's links (issue 31).

A project's port, secret and personal links live in its access file
(:mod:`er_expectations.labelling.access`). The lead issues one personal link per labeller
(``add``; the link is printed once, only its digest is kept), revokes one (``revoke``: its
holder is told to ask the lead), prints the lead's own link (``lead``) or replaces the
project's secret (``rotate``: the lead's old link stops working; personal links are kept).
A running workbench takes every change at once. Tokens are printed only by ``add``, ``lead``
and ``rotate``, the commands that ask for them.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from er_expectations.core.errors import InputError

__all__ = ["ACTIONS", "add_links_command", "cmd_label_links"]

#: What ``label links`` does.
ACTIONS = ("list", "add", "revoke", "lead", "rotate")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _address(folder: Path, public_url: str | None):
    """The access file with a port (a free one kept now, when the workbench never ran)."""
    from er_expectations.labelling.access import ensure_access, set_address

    access = ensure_access(folder) if public_url is None else set_address(folder, public_url=public_url)
    if access.port is None:
        access = set_address(folder, port=_free_port())
    return access


def _note_local(access) -> None:
    if not access.public_url:
        print("note: this link opens the workbench on this machine only; for labellers on other machines, give "
              "the address they open with --public-url (e.g. https://label.example.org behind a reverse proxy; "
              "docs/workbench.md#a-team-on-one-machine)", file=sys.stderr)


def cmd_label_links(args: argparse.Namespace) -> int:
    from er_expectations.labelling.access import (
        ACCESS_FILE,
        add_link,
        lead_url,
        link_url,
        load_access,
        revoke_link,
        rotate_secret,
    )
    from er_expectations.labelling.project import CONFIG_FILE

    folder = Path(args.project)
    if not (folder / CONFIG_FILE).is_file():
        raise InputError(f"{folder}: no {CONFIG_FILE} here; give a labelling project folder ('er-expectations label "
                         "init')")
    action = args.action
    if (action in ("add", "revoke")) != (args.name is not None):
        raise InputError(f"label links {action}: " + (f"give the labeller's name: 'label links {folder} {action} NAME'"
                                                      if args.name is None else f"takes no name (got {args.name!r})"))
    if args.renew and action != "add":
        raise InputError(f"--renew is for 'label links {folder} add NAME'; leave it out")
    if action == "list":
        access = load_access(folder) if args.public_url is None else _address(folder, args.public_url)
        if access is None:
            print(f"{folder}: no links yet ({ACCESS_FILE} is made by the first 'label serve' or 'label links "
                  "add NAME')")
            return 0
        where = access.public_url or (f"http://127.0.0.1:{access.port}" if access.port else "no port yet")
        print(f"workbench of {folder} at {where}; the lead's link: 'er-expectations label links {folder} lead'")
        if not access.links:
            print("no personal links yet: issue one with 'er-expectations label links PROJECT add NAME'")
        for x in access.links:
            state = "active" if x.active else f"revoked {x.revoked_at}"
            print(f"  {x.name}: {state} (issued {x.created_at})")
        return 0
    access = _address(folder, args.public_url)
    if action == "add":
        access, token = add_link(folder, args.name, renew=args.renew)
        print(f"personal link of {args.name.strip()} (printed once: only its digest is kept; 'add --renew' issues a "
              f"new one):\n    {link_url(access, token)}")
        _note_local(access)
    elif action == "revoke":
        revoke_link(folder, args.name)
        print(f"{args.name.strip()}'s link is revoked: it opens nothing now (its holder is told to ask the lead); "
              "their answers stay in the store")
    elif action == "rotate":
        access = rotate_secret(folder)
        print(f"new project secret: the lead's old link stops working now (personal links are kept). The lead's "
              f"link:\n    {lead_url(access)}")
    else:  # lead
        print(f"the lead's link (every page, the lead's view included):\n    {lead_url(access)}")
    return 0


def add_links_command(commands: argparse._SubParsersAction) -> None:
    """Add ``label links`` to the ``label`` sub-commands."""
    p = commands.add_parser(
        "links", help="the workbench's links: one per labeller, the lead's, revoke, rotate (team mode)",
        description="The workbench keeps its port and its links across restarts (in PROJECT/workbench-access.json, "
        "mode 0600). Without an action: list the personal links (never their tokens). 'add NAME' issues NAME's "
        "personal link (printed once; the name comes from the link, no sign-in), 'revoke NAME' stops it, 'lead' "
        "prints the lead's link, 'rotate' replaces the lead's link. A running workbench takes each change at once.")
    p.add_argument("project", help="the project folder")
    p.add_argument("action", nargs="?", default="list", choices=ACTIONS,
                   help="list (the default), add NAME, revoke NAME, lead or rotate")
    p.add_argument("name", nargs="?", default=None, help="with add and revoke: the labeller's name (kept with each "
                   "of their answers)")
    p.add_argument("--renew", action="store_true",
                   help="with add: replace the labeller's link (the old one stops working)")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="the address labellers open (e.g. https://label.example.org behind a reverse proxy), kept "
                   "for the links and accepted by the server; '' forgets it")
    p.set_defaults(func=cmd_label_links)
