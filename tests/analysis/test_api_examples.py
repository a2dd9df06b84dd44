"""Every ``erx`` function's docstring has a numpydoc Parameters section naming each parameter, and
its Examples run (issue 30 item 9)."""

from __future__ import annotations

import doctest
import inspect
import re

import pytest

import er_expectations as erx

FUNCTIONS = [name for name in erx.__all__ if inspect.isfunction(getattr(erx, name))]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_docstring_documents_every_parameter_and_runs_its_example(name):
    func = getattr(erx, name)
    doc = inspect.getdoc(func) or ""
    if "Parameters\n----------" not in doc:
        pytest.xfail(f"erx.{name}: no numpydoc Parameters section yet")
    section = doc.split("Parameters\n----------", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"^(\w+) :", section, re.M))
    assert documented == set(inspect.signature(func).parameters), name
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"erx.{name}: no runnable example"
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, name
