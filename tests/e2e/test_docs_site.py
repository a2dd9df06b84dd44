"""The documentation: README.md and the MkDocs site under docs/ say what the code does.

* Every ```python block of README.md and of the pages under docs/ runs, in a subprocess
  whose working directory is a temporary folder (nothing is written into the repository).
  The blocks of one page run in order in one namespace, like a notebook; a failure names
  the page and the block. A ```text block right after a Python block and marked
  ``<!-- output -->`` is what that block prints, compared line by line.
  Two markers on the line before a ```python block change how it runs, and should be rare:
  ``<!-- after-demo -->``: it reads what ``./run demo`` writes (``build/patentsview/...``),
  so it runs in the folder of the demo run of this module, after it;
  ``<!-- no-run: <reason> -->``: it is not run (the reason is required).
* README.md has at most 250 lines.
* ``mkdocs build --strict`` passes (into a temporary folder) and the built pages load
  nothing from other sites.
* Every number the documentation states about the demo (how many checks, how many and
  which releases fail and why, the values quoted) is compared with a run of the demo
  checkpoint (through the command line, as a user runs it).
* The expectation reference (docs/checks/expectations.md) is generated from the running
  package: ``python tests/e2e/test_docs_site.py --write-expectations`` rewrites it.
* The command-line page names every command, every option of each and every exit code;
  each ``er-expectations`` command line in the documentation uses existing options; YAML
  blocks parse and complete suite files validate.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import typing
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

import pytest

# not support.paths: this file also runs as a script (--write-expectations), tests/ not on sys.path
REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
PV = REPO / "er_expectations" / "data" / "patentsview"
MAX_README_LINES = 250

#: Pages whose code blocks are not examples, with the reason (not run, not parsed).
NOT_EXAMPLES = {
    "docs/dev/gx-1.24-notes.md": "notes of a 2026 spike on GX internals: fragments of scripts "
                                 "kept in /tmp/gxspike, not examples of the package",
}
#: Pages whose numbers are not checked against the demo (written by hand, reviewed apart).
NOT_DEMO_CLAIMS = {"docs/SPEC.md", "docs/dev/gx-1.24-notes.md", "docs/dev/architecture.md"}


def doc_pages() -> list[Path]:
    """README.md, the package index page and every Markdown page of the site."""
    pages = [README, REPO / "PACKAGE-INDEX.md"] + sorted(p for p in DOCS.rglob("*.md") if "_ext" not in p.parts)
    return [p for p in pages if p.is_file()]


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


# -- code blocks --------------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<lang>[\w+-]*)[^\n]*$")
_MARK = re.compile(r"^\s*<!--\s*(?P<kind>output|after-demo|no-run)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$")


@dataclass
class Block:
    page: str
    index: int  # 1-based among the page's blocks of all languages
    line: int  # line of the opening fence
    lang: str
    code: str
    mark: str | None = None  # output, after-demo, no-run
    reason: str = ""
    output: str | None = None  # expected output (the ```text block marked output after it)

    @property
    def where(self) -> str:
        return f"{self.page} block {self.index} (line {self.line})"


def code_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a page, with the marker on the line before each."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body = []
        j = i + 1
        while j < len(lines) and not re.match(rf"^{re.escape(indent)}{fence}\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark = _MARK.match(previous)
        blocks.append(Block(rel(path), len(blocks) + 1, i + 1, opening["lang"].lower(), "\n".join(body) + "\n",
                            mark["kind"] if mark else None, (mark["reason"] or "") if mark else ""))
        i = j + 1
    for before, after in zip(blocks, blocks[1:], strict=False):
        if after.mark == "output":
            assert before.lang == "python" and after.lang == "text", (
                f"{after.where}: <!-- output --> marks a ```text block right after a ```python block")
            before.output = after.code
    return blocks


def python_blocks(path: Path) -> list[Block]:
    return [b for b in code_blocks(path) if b.lang in ("python", "py")]


def example_pages() -> list[str]:
    """Pages with Python blocks that run on their own (not after the demo, not marked no-run)."""
    return [rel(p) for p in doc_pages() if rel(p) not in NOT_EXAMPLES
            and any(b.mark is None for b in python_blocks(p))]


_RUNNER = r'''
import json, sys, traceback
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for block in blocks:
    print(block["separator"], flush=True)
    try:
        exec(compile(block["code"], block["where"], "exec"), namespace)
    except BaseException:
        sys.stdout.flush()
        traceback.print_exc()
        print("FAILED: " + block["where"], file=sys.stderr)
        sys.exit(1)
    sys.stdout.flush()
'''


def run_blocks(blocks: list[Block], cwd: Path, *, extra: str = "", timeout: int = 600) -> list[str]:
    """Run ``blocks`` in one fresh interpreter in ``cwd``; returns each block's stdout
    (and that of ``extra``, code the test appends in the same namespace, last)."""
    separator = "<<<er-expectations docs block>>>"
    payload = [{"code": b.code, "where": b.where, "separator": separator} for b in blocks]
    if extra:
        payload.append({"code": extra, "where": "the test's own check", "separator": separator})
    work = cwd / ".docs-runner"
    work.mkdir(exist_ok=True)
    (work / "blocks.json").write_text(json.dumps(payload), encoding="utf-8")
    (work / "runner.py").write_text(_RUNNER, encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
           "COLUMNS": "100", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, str(work / "runner.py"), str(work / "blocks.json")], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        failed = re.search(r"FAILED: (.*)", done.stderr)
        pytest.fail(f"{failed.group(1) if failed else 'a block'} failed:\n{done.stderr[-4000:]}")
    return done.stdout.split(separator + "\n")[1:]


def _same_output(expected: str, got: str) -> bool:
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip("\n").split("\n")]
    return lines(expected) == lines(got)


def check_outputs(blocks: list[Block], outputs: list[str]) -> None:
    for block, out in zip(blocks, outputs, strict=False):
        if block.output is not None:
            assert _same_output(block.output, out), (
                f"{block.where} prints something else than the ```text block after it:\n"
                f"--- page\n{block.output}--- printed\n{out}")


@pytest.mark.slow
@pytest.mark.parametrize("page", example_pages())
def test_every_python_example_runs_and_prints_what_the_page_shows(page, tmp_path):
    blocks = [b for b in python_blocks(REPO / page) if b.mark is None]
    check_outputs(blocks, run_blocks(blocks, tmp_path))


def test_markers_are_explicit_and_rare():
    no_run = []
    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES:
            continue
        text = path.read_text(encoding="utf-8")
        for line in text.split("\n"):
            if line.lstrip().startswith("<!--") and re.search(r"no-?run|after-?demo|output", line) \
                    and not _MARK.match(line):
                pytest.fail(f"{rel(path)}: marker not understood: {line.strip()!r} "
                            "(write <!-- output -->, <!-- after-demo --> or <!-- no-run: reason -->)")
        for block in python_blocks(path):
            if block.mark == "no-run":
                assert block.reason, f"{block.where}: <!-- no-run: ... --> needs a reason"
                no_run.append(block.where)
    # docs/orchestrators.md holds three (Airflow's and Dagster's own code cannot run here); the
    # rest of the site at most three
    assert len(no_run) <= 6, f"blocks not run should be rare: {no_run}"


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move details to docs/ (at most {MAX_README_LINES})"


def test_tables_have_no_blank_lines_inside():
    """A blank line inside a Markdown table ends it: the rows after it show as text."""
    for path in doc_pages():
        lines = path.read_text(encoding="utf-8").split("\n")
        fenced = False
        for i in range(1, len(lines) - 1):
            if lines[i].lstrip().startswith("```"):
                fenced = not fenced
            if fenced or lines[i].strip():
                continue
            if lines[i - 1].lstrip().startswith("|") and lines[i + 1].lstrip().startswith("|"):
                pytest.fail(f"{rel(path)} line {i + 1}: a blank line splits a table")


# -- the site builds ------------------------------------------------------------------------

@pytest.mark.slow
def test_mkdocs_builds_strictly_and_offline(tmp_path):
    if os.environ.get("CI") == "true":  # CI installs the docs extra: a missing tool is a failure
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: pip install -e '.[docs]'")
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(site)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 20
    remote = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)
    for page in pages:
        html = page.read_text(encoding="utf-8")
        found = remote.search(html)
        assert not found, f"{page.relative_to(site)} loads from another site: {found.group(0)}"
        assert "fonts.googleapis" not in html and "fonts.gstatic" not in html
    for css in site.rglob("*.css"):
        assert not re.search(r"@import\s+url\(\s*['\"]?https?:", css.read_text(encoding="utf-8")), css
    api = (site / "api.html").read_text(encoding="utf-8")
    import er_expectations as erx

    for name in PUBLIC_API:
        assert hasattr(erx, name)
        assert f'id="er_expectations.{name}"' in api, f"the API reference lacks er_expectations.{name}"
    assert "er_expectations.api." not in api and ":func:" not in api


#: The names the API reference documents (the brief of the documentation: the public API).
PUBLIC_API = ("summarize", "estimate", "exact_metrics", "cluster_errors", "estimate_by_group",
              "diff_releases", "estimate_change", "draw_sample", "check_labels", "benchmark_from_labels",
              "labelling_batch", "topup_candidates", "apply_topup", "workbench", "plan_sample_size", "simulate", "impute_ethnicity", "find_slices",
              "Release", "InputError", "error_audit", "expected_error_probabilities")


def test_api_page_documents_the_public_names_by_their_public_path():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    documented = re.findall(r"^::: (\S+)\s*$", text, re.M)
    assert sorted(documented) == sorted(f"er_expectations.{name}" for name in PUBLIC_API)


def test_every_page_is_in_the_navigation():
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for path in doc_pages():
        if path.parent == DOCS or DOCS in path.parents:
            assert f" {path.relative_to(DOCS).as_posix()}" in text, f"{rel(path)} is not in mkdocs.yml's nav"


# -- the expectation reference, generated from the package -----------------------------------

#: Family of every expectation, in the order of the reference page (a new expectation
#: must be placed here, and so gets documented).
FAMILIES: dict[str, tuple[str, ...]] = {
    "Summary statistics of the predicted clustering (SPEC 3)": (
        "expect_average_cluster_size_to_be_between", "expect_matching_rate_to_be_between",
        "expect_hill_number_to_be_between", "expect_homonymy_rate_to_be_between",
        "expect_name_variation_rate_to_be_between"),
    "Estimated performance from a benchmark (SPEC 5–6)": tuple(
        f"expect_estimated_{metric}_to_be_between" for metric in (
            "pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_precision", "cluster_recall",
            "cluster_f", "b_cubed_precision", "b_cubed_recall", "b_cubed_f", "homogeneity")),
    "The prediction against the estimated truth (SPEC 7)": ("expect_statistic_to_match_benchmark_estimate",),
    "Drift between releases (SPEC 10)": (
        "expect_statistic_change_to_be_below", "expect_estimate_change_to_be_below",
        "expect_release_agreement_to_be_between", "expect_statistic_within_control_limits"),
    "Subgroup disparity (SPEC 8)": ("expect_subgroup_disparity_to_be_below",),
    "Error analysis (SPEC 12)": ("expect_error_cause_rate_to_be_below",),
    "Slices of high error (SPEC 12.2)": ("expect_no_error_slice_above",),
    "Labelling quality control (SPEC 9)": (
        "expect_labels_removed_within_predicted_cluster", "expect_labels_sampled_record_not_removed",
        "expect_labels_added_outside_predicted_cluster", "expect_labels_record_ids_to_exist",
        "expect_labels_added_records_to_resemble_sampled_record", "expect_labels_consistent_across_draws",
        "expect_labels_true_cluster_to_match"),
}
#: Parameters of GX's own that every expectation has, and the two it refuses.
_GX_OWN = ("row_condition", "condition_parser")
_START, _END = "<!-- generated: expectations -->", "<!-- end of generated -->"


def _yaml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cell(text: str) -> str:
    """Text for a cell of a Markdown table: one line, ``|`` escaped, ``<`` and ``*`` as text."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def expectation_reference() -> str:
    """The generated part of docs/checks/expectations.md, from the registered classes."""
    from great_expectations.expectations.expectation import BatchExpectation
    from great_expectations.expectations.registry import get_expectation_impl

    import er_expectations.gx as erx_gx

    names = erx_gx.expectation_names()
    placed = [name for group in FAMILIES.values() for name in group]
    assert sorted(placed) == sorted(names), (
        f"FAMILIES of tests/e2e/test_docs_site.py must place every expectation: "
        f"missing {sorted(set(names) - set(placed))}, unknown {sorted(set(placed) - set(names))}")
    base = set(BatchExpectation.__fields__)
    out = [_START, ""]
    for family, members in FAMILIES.items():
        out += [f"## {family}", ""]
        for name in members:
            cls = get_expectation_impl(name)
            out += [f"### `{name}`", "", f"GX class `{cls.__name__}`.", "",
                    "| parameter | required or default | meaning |", "| --- | --- | --- |"]
            for key, field in cls.__fields__.items():
                if key in base or key in _GX_OWN:
                    continue
                if field.required:
                    default = "required"
                elif field.default is None:
                    default = "optional"
                else:
                    default = f"`{_yaml_value(field.default)}`"
                meaning = field.field_info.description or ""
                choices = typing.get_args(field.outer_type_) if typing.get_origin(field.outer_type_) is typing.Literal else ()
                if choices:
                    meaning += " One of " + ", ".join(f"`{_yaml_value(c)}`" for c in choices) + "."
                out.append(f"| `{key}` | {default} | {_cell(meaning)} |")
            out.append("")
    out.append(_END)
    return "\n".join(out)


def _generated_part(text: str) -> str:
    start, end = text.index(_START), text.index(_END)
    return text[start:end + len(_END)]


@pytest.mark.slow
def test_the_expectation_reference_is_the_one_the_package_generates():
    page = DOCS / "checks" / "expectations.md"
    expected = expectation_reference()
    assert _generated_part(page.read_text(encoding="utf-8")) == expected, (
        "docs/checks/expectations.md is out of date: run `python tests/e2e/test_docs_site.py --write-expectations`")


def write_expectation_reference() -> None:
    page = DOCS / "checks" / "expectations.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace(_generated_part(text), expectation_reference()), encoding="utf-8")


@pytest.mark.slow
def test_every_expectation_is_explained_on_its_family_page():
    import er_expectations.gx as erx_gx

    names = set(erx_gx.expectation_names())
    pages = {rel(p): p.read_text(encoding="utf-8") for p in (DOCS / "checks").glob("*.md")
             if p.name != "expectations.md"}
    for name in names:
        assert any(f"`{name}`" in text for text in pages.values()), f"no family page explains {name}"
    # and every expectation name written anywhere in the documentation exists
    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES or rel(path) == "docs/SPEC.md":
            continue
        for found in re.findall(r"\bexpect_[a-z0-9_]+\b", path.read_text(encoding="utf-8")):
            assert found in names or found in ("expect_estimated_", "expect_labels_"), (
                f"{rel(path)}: unknown expectation {found}")


# -- the command line ---------------------------------------------------------------------

@functools.cache
def cli_help() -> dict[str, str]:
    """``er-expectations --help`` and ``er-expectations <command> --help``, through the
    installed console script's entry point (what a user runs)."""
    (main,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "er-expectations"]
    run = main.load()

    def help_of(*argv: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = run([*argv, "--help"])
        assert code == 0, argv
        return out.getvalue()

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "200"
    try:
        top = help_of()
        commands = re.search(r"\{([a-z,-]+)\}", top).group(1).split(",")

        def with_subcommands(command: str) -> str:
            # a command group (``label init|export``): its sub-commands' options are the group's
            text = help_of(command)
            group = re.search(r"^\s+\{([a-z,-]+)\}", text, re.M)
            return text + "".join(help_of(command, sub) for sub in group.group(1).split(",")) if group else text

        return {"": top, **{command: with_subcommands(command) for command in commands}}
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def long_options(help_text: str) -> set[str]:
    section = help_text.split("options:", 1)[1]
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", section)) - {"--help", "--debug"}


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)
    return {part.split("\n", 1)[0].strip(): part for part in parts[1:]}


def test_the_cli_page_names_every_command_option_and_exit_code():
    helps = cli_help()
    sections = _sections((DOCS / "cli.md").read_text(encoding="utf-8"))
    shared = next((body for title, body in sections.items() if title.startswith("Options of the table commands")), "")
    for command, text in helps.items():
        if not command:
            continue
        title = f"`er-expectations {command.split()[0]}`"  # a sub-command on its command's section
        assert title in sections, f"docs/cli.md has no section '## {title}'"
        body = sections[title]
        pool = body + (shared if "#options-of-the-table-commands" in body else "")
        missing = sorted(o for o in long_options(text) if f"`{o}" not in pool and f"{o} " not in pool)
        assert not missing, f"docs/cli.md, {title}: options not documented: {missing}"
    # the exit codes: the table of the page is the command line's own list (its --help epilog)
    epilog = helps[""].split("exit codes:", 1)[1]
    codes = {int(code) for code in re.findall(r"(?:^|;)\s*(\d+) ", epilog)}
    table = sections["Exit codes"]
    assert {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)} == codes


def _command_lines(text: str) -> list[str]:
    lines, current = [], ""
    for line in text.split("\n"):
        current += " " + line.strip()
        if current.endswith("\\"):
            current = current[:-1]
            continue
        if current.strip():
            lines.append(current.strip())
        current = ""
    return lines


def test_every_command_line_in_the_docs_uses_existing_options():
    helps = cli_help()
    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES:
            continue
        for block in code_blocks(path):
            if block.lang not in ("bash", "sh", "shell", "console"):
                continue
            for line in _command_lines(block.code):
                line = line.split("#", 1)[0]
                found = re.search(r"(?:^|\s|/)er-expectations\s+([a-z-]+)(.*)", line)
                if not found:
                    continue
                command, rest = found.groups()
                assert command in helps, f"{block.where}: no command {command!r}: {line}"
                sub = re.match(r"\s+([a-z-]+)", rest)
                if sub and f"{command} {sub.group(1)}" in helps:
                    command, rest = f"{command} {sub.group(1)}", rest[sub.end():]
                for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                    assert option in long_options(helps[command]) | {"--help", "--debug"}, (
                        f"{block.where}: er-expectations {command} has no option {option}")


# -- YAML blocks -----------------------------------------------------------------------------

def test_yaml_blocks_parse():
    from ruamel.yaml import YAML

    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES:
            continue
        for block in code_blocks(path):
            if block.lang in ("yaml", "yml"):
                try:
                    YAML(typ="safe").load(block.code)
                except Exception as error:  # noqa: BLE001 - any YAML error fails the test
                    pytest.fail(f"{block.where}: not valid YAML: {error}")


@pytest.mark.slow
def test_complete_suite_files_in_the_docs_validate(tmp_path):
    (main,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "er-expectations"]
    run = main.load()
    checked = 0
    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES:
            continue
        for block in code_blocks(path):
            if block.lang in ("yaml", "yml") and block.code.startswith("suite:"):
                file = tmp_path / f"suite{checked}.yml"
                file.write_text(block.code, encoding="utf-8")
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = run(["validate", str(file)])
                assert code == 0, f"{block.where}: er-expectations validate refuses it:\n{err.getvalue()}"
                checked += 1
    assert checked >= 1


# -- the bundled data, as the pages describe it ---------------------------------------------

@pytest.fixture(scope="module")
def data_facts() -> dict[str, int]:
    import pandas as pd

    predictions = pd.read_parquet(PV / "predictions.parquet")
    benchmark = pd.read_parquet(PV / "benchmark.parquet")
    labels = pd.read_parquet(PV / "labels.parquet")
    return {
        "records": len(pd.read_parquet(PV / "records.parquet", columns=["mention_id"])),
        "releases": sum(c.startswith("inventor_id_") for c in predictions.columns),
        "benchmark_clusters": benchmark["benchmark_id"].nunique(),
        "benchmark_records": int(benchmark["benchmark_id"].notna().sum()),  # the file also lists the other known records (SPEC 14)
        "labels": len(labels),
    }


def test_the_data_facts_of_the_pages(data_facts):
    readme = README.read_text(encoding="utf-8")
    assert (f"{data_facts['records']:,} inventor mentions, one predicted inventor per mention in each\n"
            f"of the {data_facts['releases']} releases, and a benchmark of {data_facts['benchmark_clusters']} "
            "hand-resolved inventors") in readme
    assert f"validate the {data_facts['releases']} bundled PatentsView releases" in readme
    start = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert (f"{data_facts['records']:,} inventor mentions (`records.parquet`), "
            f"the predicted inventor of each in {data_facts['releases']} releases") in start
    assert (f"{data_facts['benchmark_clusters']} inventors sampled with probability proportional to their "
            f"number of mentions, {data_facts['benchmark_records']:,} mentions in all") in start
    assert f"{data_facts['labels']} labelled draws" in start


# -- the demo ---------------------------------------------------------------------------------

NUMBER_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve", "thirteen", "fourteen", "fifteen"]


@dataclass
class DemoRun:
    root: Path  # what the repository root is to ./run demo
    output: str
    releases: list[str]
    checks: int  # checks per release
    rows: dict[str, dict[str, object]]  # release -> passed, status, failed critical, failed warning/info
    failed: list[str]  # releases that failed a critical check
    suite: dict  # the demo suite file, parsed

    def history(self, label: str) -> dict[str, dict]:
        """The latest stored result of one check for every release (``er-expectations history``)."""
        done = subprocess.run([_console(), "history", str(self.root / "checkpoints" / "patentsview.yml"),
                               "--expectation", label, "--format", "json"],
                              capture_output=True, text=True, timeout=300, cwd=self.root)
        assert done.returncode == 0, done.stderr
        series = json.loads(done.stdout)["series"]
        for row in series:
            row["details"] = json.loads(row.pop("details_json") or "{}")
        return {row["release"]: row for row in series}

    def threshold(self, expectation: str, key: str, **match: object) -> object:
        (entry,) = [e for e in self.suite["expectations"] if e["expectation"] == expectation
                    and all(e.get(k) == v for k, v in match.items())]
        return entry[key]


def _console() -> str:
    found = Path(sys.executable).with_name("er-expectations")
    return str(found) if found.exists() else shutil.which("er-expectations") or "er-expectations"


def _labels(cell: str) -> list[str]:
    return [] if cell.strip() == "-" else [x.strip() for x in re.split(r",\s+(?![^()]*\))", cell.strip())]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> DemoRun:
    """``./run demo`` in a copy: the demo checkpoint and suite, the bundled data in place."""
    from ruamel.yaml import YAML

    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "suites", root / "suites")
    (root / "checkpoints").mkdir()
    text = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    assert "../er_expectations/data/patentsview" in text and "project_dir: ../build/patentsview" in text
    (root / "checkpoints" / "patentsview.yml").write_text(
        text.replace("../er_expectations/data/patentsview", PV.as_posix()), encoding="utf-8")
    done = subprocess.run([_console(), "run", "checkpoints/patentsview.yml", "--no-progress"],
                          cwd=root, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "250"})
    assert done.returncode == 1, f"the demo should exit 1 (critical failures):\n{done.stdout}\n{done.stderr}"
    out = done.stdout
    header = next(line for line in out.split("\n") if line.startswith("release "))
    starts = [header.index(h) for h in ("release", "passed", "status", "skipped", "failed critical", "errors",
                                        "failed warning/info")]
    rows: dict[str, dict[str, object]] = {}
    for line in out.split("\n"):
        if re.match(r"^\d{4}-\d{2}-\d{2} ", line):
            cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None], strict=True)]
            passed, total = map(int, cells[1].split("/"))
            rows[cells[0]] = {"passed": passed, "total": total, "status": cells[2],
                              "skipped": 0 if cells[3] == "-" else int(cells[3]),
                              "critical": _labels(cells[4]), "errors": _labels(cells[5]),
                              "warning": _labels(cells[6])}
    summary = re.search(r"(\d+) of (\d+) release\(s\) passed; (\d+) failed a critical expectation: ([^\n]*)\.", out)
    failed = [x.strip() for x in summary.group(4).split(",")]
    assert int(summary.group(2)) == len(rows) and int(summary.group(3)) == len(failed)
    assert sorted(r for r, row in rows.items() if row["critical"]) == sorted(failed)
    # "passed/evaluated": a skipped check is not evaluated, so evaluated + skipped is the suite's size
    checks = {row["total"] + row["skipped"] for row in rows.values()}
    assert len(checks) == 1
    suite = YAML(typ="safe").load((REPO / "suites" / "patentsview.yml").read_text(encoding="utf-8"))
    return DemoRun(root, out, list(rows), checks.pop(), rows, failed, suite)


def _word(n: int) -> str:
    return NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)


def _failing_table(demo: DemoRun) -> str:
    lines = ["| release | failed critical checks |", "| --- | --- |"]
    lines += [f"| {r} | {', '.join(demo.rows[r]['critical'])} |" for r in demo.failed]
    return "\n".join(lines)


@pytest.mark.slow
def test_the_demo_suite_has_the_checks_the_run_counts(demo):
    assert demo.checks == len(demo.suite["expectations"])
    assert len(demo.releases) == 15
    assert all(row["errors"] == [] for row in demo.rows.values())


def flat(text: str) -> str:
    """Text with every run of white space as one space (the pages wrap their lines)."""
    return " ".join(text.split())


def assert_states(page: str, text: str, *expected: str) -> None:
    for sentence in expected:
        assert flat(sentence) in flat(text), f"{page} should say: {flat(sentence)!r}"


def _precision_claim(demo: DemoRun) -> tuple[list[str], dict[str, dict]]:
    precision = demo.history("pairwise_precision")
    lumped = [r for r, row in precision.items() if not row["success"]]
    assert lumped == [r for r in demo.failed if "pairwise_precision" in demo.rows[r]["critical"]]
    return lumped, precision


def _recall_claim(demo: DemoRun) -> tuple[str, float, float]:
    recall = demo.history("pairwise_recall")
    (split,) = [r for r, row in recall.items() if not row["success"]]
    minimum = demo.threshold("expect_estimated_pairwise_recall_to_be_between", "min_value")
    return split, recall[split]["estimate"], minimum


@pytest.mark.slow
def test_readme_states_the_demo_as_it_runs(demo):
    text = README.read_text(encoding="utf-8")
    n = len(demo.failed)
    lumped, precision = _precision_claim(demo)
    first = lumped[0]
    split, recall, minimum = _recall_claim(demo)
    drift = [r for r in demo.failed if "average_cluster_size_change" in demo.rows[r]["critical"]]
    limit = demo.threshold("expect_statistic_change_to_be_below", "max_relative_change")
    gap_warned = sorted(r for r, row in demo.rows.items() if "pairwise_f_gap_by_group" in row["warning"])
    assert gap_warned == lumped  # the gap is confidently beyond 5 points only where inventors are lumped
    clean = [r for r, row in demo.rows.items() if not row["critical"] and not row["warning"] and not row["errors"]]
    assert clean == [r for r in demo.releases if "2018-05-28" <= r <= "2020-06-30"]
    assert_states(
        "README.md", text,
        f"The demo suite (`suites/patentsview.yml`) runs {demo.checks} checks on each of the "
        f"{len(demo.releases)} releases. {_word(n).capitalize()} of the {len(demo.releases)} releases fail "
        "a critical check",
        _failing_table(demo),
        f"The {_word(len(lumped))} 2017 releases lump distinct inventors (estimated pairwise precision "
        f"{precision[first]['estimate']:.3f} in {first}, with a 95 % interval down to "
        f"{precision[first]['ci_lower']:.3f})",
        f"{split} splits them (pairwise recall {recall:.3f}, its whole 95 % interval below the minimum of {minimum:g})",
        f"{_word(len(drift))} releases change the average inventor cluster size by more than "
        f"{100 * limit:g} % against the previous release",
        f"the {_word(len(clean))} releases from {clean[0]} to {clean[-1]} pass every check",
        f"is confidently beyond {100 * demo.threshold('expect_subgroup_disparity_to_be_below', 'max_disparity'):g} "
        f"points only in the {_word(len(gap_warned))} 2017 releases")
    assert all(r.startswith("2017") for r in lumped)


@pytest.mark.slow
def test_getting_started_states_the_demo_as_it_runs(demo):
    page = "docs/getting-started.md"
    text = (REPO / page).read_text(encoding="utf-8")
    n = len(demo.failed)
    assert_states(page, text,
                  f"The suite runs {demo.checks} checks on each of the {len(demo.releases)} releases. "
                  f"{_word(n).capitalize()} of the {len(demo.releases)} releases fail a critical check",
                  f"{len(demo.releases) - n} of {len(demo.releases)} release(s) passed; {n} failed a critical "
                  f"expectation: {', '.join(demo.failed)}.")
    # the table of the failed releases: each row's releases and their failed critical checks
    table = text[text.index("| release | failed critical checks | why |"):text.index("**Drift of")]
    listed: dict[str, list[str]] = {}
    for line in table.split("\n")[2:]:
        if line.startswith("| "):
            cells = [c.strip() for c in line.strip("|").split("|")]
            for release in cells[0].split(", "):
                listed[release] = re.findall(r"`([^`]+)`", cells[1])
    assert listed == {r: demo.rows[r]["critical"] for r in demo.failed}
    lumped, precision = _precision_claim(demo)
    split, recall, minimum = _recall_claim(demo)
    limit = demo.threshold("expect_statistic_change_to_be_below", "max_relative_change")
    assert_states(page, text,
                  "estimated pairwise precision " + " and ".join(f"{precision[r]['estimate']:.3f}" for r in lumped)
                  + ", with 95 % intervals reaching down to "
                  + " and ".join(f"{precision[r]['ci_lower']:.3f}" for r in lumped),
                  f"estimated pairwise recall {recall:.3f}, its whole 95 % interval below the minimum of {minimum:g}",
                  f"it fails beyond {100 * limit:g} %.")
    # the drift of the average cluster size, release by release (fixed subset, SPEC 10)
    change = demo.history("average_cluster_size_change")
    first = demo.releases[0]
    assert change[first]["details"].get("skipped") is True
    rows = []
    for release in demo.releases[1:]:
        row = change[release]
        value = f"{100 * row['value']:+.1f} %".replace("-", "−")
        rows.append(f"| {release} | {value} | {'fails' if not row['success'] else 'passes'} |")
    assert "\n".join(rows) in text, "getting-started: the drift table is not the demo's:\n" + "\n".join(rows)
    control = demo.history("average_cluster_size_control")
    flagged = [r for r, row in control.items() if row["success"] is False]
    skipped = [r for r, row in control.items() if row["details"].get("skipped")]
    assert skipped == demo.releases[:len(skipped)]
    window = demo.threshold("expect_statistic_within_control_limits", "window")
    k = demo.threshold("expect_statistic_within_control_limits", "k")
    assert_states(page, text, f"the mean of the last {window} releases ± {k:g} standard deviations",
                  f"flags only {' and '.join(flagged)}",
                  f"the first {_word(len(skipped))} releases have too little history")
    # the gap warns only where its whole interval is beyond the limit (the 2017 releases)
    gap = demo.history("pairwise_f_gap_by_group")
    assert all(row["severity"] == "warning" for row in gap.values())
    assert sorted(r for r, row in gap.items() if row["success"] is False) == lumped
    row = gap["2021-12-30"]

    def span(releases: list[str], digits: int) -> str:
        values = sorted(abs(gap[r]["value"]) for r in releases)
        return f"{values[0]:.{digits}f} to {values[-1]:.{digits}f}"

    early = [r for r in demo.releases if r < "2017-12-26"]
    middle = [r for r in demo.releases if "2017-12-26" <= r <= "2020-09-29"]
    late = [r for r in demo.releases if r >= "2020-12-29"]
    assert_states(page, text.replace("−", "-"),
                  f"the gap is {span(early, 2)} in the {_word(len(early))} 2017 releases (lumped homonyms), "
                  f"{span(middle, 2)} from 2017-12-26 to 2020-09-29 and {span(late, 3)} since 2020-12-29; "
                  f"in 2021-12-30 the gap is {row['value']:.3f}, and {row['details']['abstained']} of the "
                  f"{row['details']['sampled_clusters']} sampled inventors have no imputed ethnicity")


@pytest.mark.slow
def test_statements_of_counts_match_the_demo_and_the_package(demo):
    """Every "N checks" of the pages is the demo suite's size; every "N expectations" the
    number of expectations the package registers; every "N of the 15 releases fail" the
    number of failing releases."""
    import er_expectations.gx as erx_gx

    registered = len(erx_gx.expectation_names())
    for path in doc_pages():
        if rel(path) in NOT_DEMO_CLAIMS:
            continue
        text = re.sub(r"^([ \t]*)```.*?^\1```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)  # prose only
        for n in re.findall(r"\b(\d+) checks\b", text):
            assert int(n) == demo.checks, f"{rel(path)}: '{n} checks' (the demo suite has {demo.checks})"
        for n in re.findall(r"\b(\d+) expectations\b", text):
            assert int(n) == registered, f"{rel(path)}: '{n} expectations' (the package has {registered})"
        for n in re.findall(r"\b(\w+) of the 15 releases fail", text, re.I):
            assert n.lower() in (str(len(demo.failed)), _word(len(demo.failed))), f"{rel(path)}: '{n} of the 15'"


@pytest.mark.slow
def test_blocks_that_read_the_demo_run_after_it(demo):
    for path in doc_pages():
        if rel(path) in NOT_EXAMPLES:
            continue
        blocks = [b for b in python_blocks(path) if b.mark == "after-demo"]
        if blocks:
            check_outputs(blocks, run_blocks(blocks, demo.root))


#: Observed values that docs/reading-the-reports.md quotes, with the demo release whose
#: Data Docs page shows them.
REPORT_EXAMPLES = [
    ("2022-06-30", "0.971 (133,541 records in 12,379 clusters)"),
    ("2022-06-30", "0.883 ± 0.017 (95 % BCa bootstrap CI 0.841–0.910, 401 clusters)"),
    ("2022-06-30", "predicted 0.247; true value estimated 0.134 ± 0.019 (95 % BCa bootstrap CI 0.101–0.177, 401 clusters)"),
    ("2020-09-29", "7.778 in 2020-06-30 → 6.207 (change −1.571, −20.2 %) on 111,712 records in both releases"),
    ("2020-09-29", "5349414-2 (14 of 14)"),
    ("2020-12-29", "9.960; control limits 5.773 to 8.844 (mean of 8 releases 2018-11-27–2020-09-29 "
                   "7.309 ± 3 × SD 0.512)"),
    ("2021-12-30", "-0.056 ± 0.022 (largest gap: api against the rest, adjusted p 0.009; 1 of 1 groups tested, "
                   "401 clusters, 10 in no group)"),
]


def _page_text(html: str) -> str:
    import html as html_module

    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return flat(html_module.unescape(re.sub(r"<[^>]+>", " ", text)))


def _comparable(text: str) -> str:
    """Minus signs as hyphens and no space before a semicolon (the page splits its spans)."""
    return flat(text).replace("−", "-").replace(" ;", ";")


@pytest.mark.slow
def test_reading_the_reports_quotes_the_demo_pages(demo):
    page = (DOCS / "reading-the-reports.md").read_text(encoding="utf-8")
    site = demo.root / "build" / "patentsview" / "gx" / "uncommitted" / "data_docs" / "local_site"
    for release, quoted in REPORT_EXAMPLES:
        assert _comparable(quoted) in _comparable(page.replace("`", "")), f"reading-the-reports: {quoted!r}"
        assert f"demo's release {release}" in flat(page), f"reading-the-reports: say it is from {release}"
        (html,) = list(site.glob(f"validations/**/*release_{release}.html"))
        assert _comparable(quoted) in _comparable(_page_text(html.read_text(encoding="utf-8"))), (
            f"the demo's Data Docs page of {release} does not show {quoted!r}")


# -- the GX example (it replaces tests/gx/test_gx_native.py's test of the old README's) -----------

@pytest.mark.slow
def test_the_gx_example_shows_the_numbers_of_the_api(tmp_path):
    blocks = [b for b in python_blocks(DOCS / "gx.md") if b.mark is None]
    first = next(b for b in blocks if "checkpoint.run(" in b.code)  # the checkpoint example
    check = """
import json
import er_expectations as erx
api = erx.estimate(df, prediction="inventor_id", reference="benchmark_id", record_id="mention_id",
                   metrics=["pairwise_precision"]).iloc[0]
print(json.dumps({"observed": result.result["observed_value"], "api": api.estimate,
                  "details": {k: details[k] for k in ("std_error", "ci_lower", "ci_upper")},
                  "api_details": {k: float(api[k]) for k in ("std_error", "ci_lower", "ci_upper")},
                  "success": result.success, "run": run.success, "top": len(details["top_clusters"]),
                  "min": 0.75}))
"""
    outputs = run_blocks([first], tmp_path, extra=check)
    check_outputs([first], outputs)
    got = json.loads(outputs[-1])
    assert got["observed"] == pytest.approx(got["api"], rel=1e-12)
    for key, value in got["details"].items():
        assert value == pytest.approx(got["api_details"][key], rel=1e-12)
    # the threshold (0.75, a suite parameter) is above the lower end of the interval: the
    # check fails and shows the error table, and the checkpoint run fails with it
    assert got["api_details"]["ci_lower"] < got["min"] and got["success"] is False
    assert got["top"] > 0 and got["run"] is False
    assert outputs[0].startswith("False ")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-expectations"]:
        write_expectation_reference()
        print("wrote docs/checks/expectations.md")
    else:
        print("usage: python tests/e2e/test_docs_site.py --write-expectations", file=sys.stderr)
        sys.exit(2)
