"""The examples in neomx's docstrings, run as tests: every module of the package is imported
and each docstring with examples is one test (what ``pytest --doctest-modules neomx`` runs,
with the same option flags, here so that ``pytest tests`` runs them too). Examples that cannot
run here are listed in SKIP with the reason."""
import doctest
import importlib
import os

import pytest

import neomx

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Modules not collected: neomx/_alias_path is the package again under the name ``mxnet`` (for
# ``neomx run``), and __main__ modules run the command line when imported.
NOT_COLLECTED = ('_alias_path', '__main__')

# Docstrings whose examples cannot run in the test suite, by doctest name, with the reason.
SKIP = {
}


def _modules():
    root = os.path.dirname(os.path.abspath(neomx.__file__))
    names = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in NOT_COLLECTED and
                         os.path.exists(os.path.join(folder, d, '__init__.py')))
        package = os.path.relpath(folder, os.path.dirname(root)).replace(os.sep, '.')
        for f in sorted(files):
            if f.endswith('.py') and f[:-3] not in NOT_COLLECTED:
                names.append(package if f == '__init__.py' else package + '.' + f[:-3])
    return names


def _docstrings():
    finder = doctest.DocTestFinder(exclude_empty=True)
    for name in _modules():
        module = importlib.import_module(name)
        for test in sorted(finder.find(module, name), key=lambda t: t.name):
            if not test.examples:
                continue
            marks = [pytest.mark.skip(reason=SKIP[test.name])] if test.name in SKIP else []
            yield pytest.param(test, id=test.name, marks=marks)


@pytest.mark.parametrize('test', list(_docstrings()))
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = []
    # Names (relu0, dense0_) are counted from 0, as in the fresh process an example shows.
    with neomx.name.NameManager():
        result = runner.run(test, out=out.append, clear_globs=True)
    assert result.failed == 0, ''.join(out)
