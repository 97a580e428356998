"""Kernel signature convention (docs/kernel_conventions.md), checked by reading the source.

Every ``@wp.kernel`` under ``newton_tendon/`` splits its parameter list into groups; each group
starts with a comment line ``# <Group>:`` (a short note may follow the colon) from a fixed
vocabulary, in a fixed order. Parameters whose names end in ``_in``/``_out`` are the step's input
and output state and sit in the ``State in``/``State out`` groups, which hold nothing else.

Comments are invisible to ``ast``, so the checker pairs the parameters ``ast`` finds with the
comment tokens ``tokenize`` finds inside the same parameter list. No Warp import, no compile: the
test reads text only.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize


def _repo_root() -> str:
    """The folder holding the ``newton_tendon`` package, found upwards from this file (the test may sit
    in a subfolder of tests/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    while not os.path.isdir(os.path.join(here, "newton_tendon")):
        parent = os.path.dirname(here)
        if parent == here:
            raise RuntimeError("no newton_tendon package above " + __file__)
        here = parent
    return here


ROOT = _repo_root()
PACKAGE = os.path.join(ROOT, "newton_tendon")

# The group headings, in the order they must appear in a signature (see docs/kernel_conventions.md).
GROUPS = ("Input", "Model", "Control", "Contacts", "State in", "State", "State out", "Scratch", "Output")

# Files whose kernels have not been converted yet (path relative to the repository root). The test
# still reads them: each must exist and must still break the convention somewhere, so a file
# leaves this list the day it is converted and the list can only shrink. Empty today.
NOT_YET_CONVERTED: tuple[str, ...] = ()

_HEADING = re.compile(r"#\s*(?P<label>[A-Za-z][A-Za-z ()]*?)\s*:(?:\s.*)?$")


def _is_kernel_decorator(dec: ast.expr) -> bool:
    """True for ``@wp.kernel`` and ``@wp.kernel(...)``."""
    if isinstance(dec, ast.Call):
        dec = dec.func
    return (
        isinstance(dec, ast.Attribute)
        and dec.attr == "kernel"
        and isinstance(dec.value, ast.Name)
        and dec.value.id == "wp"
    )


def _signature_comments(tokens: list[tokenize.TokenInfo], lines: list[str], node: ast.FunctionDef):
    """(line, col, text) of every standalone comment line inside ``node``'s parameter list."""
    start = (node.lineno, node.col_offset)
    i = 0
    while (tokens[i].start < start) or not (tokens[i].type == tokenize.NAME and tokens[i].string == "def"):
        i += 1
    while not (tokens[i].type == tokenize.OP and tokens[i].string == "("):
        i += 1
    depth = 0
    out = []
    for tok in tokens[i:]:
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif tok.type == tokenize.COMMENT and depth == 1:
            row, col = tok.start
            if lines[row - 1][:col].strip() == "":  # a comment line of its own, not a trailing note
                out.append((row, col, tok.string))
    return out


def check_source(source: str, filename: str = "<string>") -> list[str]:
    """Return one message per broken rule in ``source``: file, kernel, parameter and rule."""
    tree = ast.parse(source, filename)
    lines = source.splitlines()
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or not any(map(_is_kernel_decorator, node.decorator_list)):
            continue
        where = f"{filename}:{node.lineno} kernel {node.name}"
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        items = [(a.lineno, a.col_offset, "param", a.arg) for a in args]
        items += [(r, c, "comment", t) for r, c, t in _signature_comments(tokens, lines, node)]
        items.sort()
        group = None  # the heading in force
        rank = -1  # its place in GROUPS
        members = 0  # parameters under it so far
        for _row, _col, kind, text in items:
            if kind == "comment":
                m = _HEADING.match(text)
                label = m.group("label") if m else None
                if label not in GROUPS:
                    problems.append(
                        f"{where}: comment {text!r}: rule 'heading': a comment line in a parameter list must be a "
                        f"group heading '# <Group>:' with <Group> one of {', '.join(GROUPS)}"
                    )
                    continue
                if group is not None and members == 0:
                    problems.append(f"{where}: group {group!r}: rule 'empty group': no parameter under the heading")
                if GROUPS.index(label) <= rank:
                    problems.append(
                        f"{where}: group {label!r}: rule 'order': groups appear once each, in the order "
                        f"{', '.join(GROUPS)}; {label!r} comes after {group!r}"
                    )
                group, rank, members = label, max(rank, GROUPS.index(label)), 0
                continue
            name = text
            members += 1
            if group is None:
                problems.append(f"{where}: parameter {name!r}: rule 'grouped': it precedes the first group heading")
                continue
            if name.endswith("_in") and group != "State in":
                problems.append(
                    f"{where}: parameter {name!r}: rule 'suffix': a name ending in '_in' is step input state and "
                    f"belongs under '# State in:', not {group!r}"
                )
            if name.endswith("_out") and group != "State out":
                problems.append(
                    f"{where}: parameter {name!r}: rule 'suffix': a name ending in '_out' is step output state and "
                    f"belongs under '# State out:', not {group!r}"
                )
            if group == "State in" and not name.endswith("_in"):
                problems.append(f"{where}: parameter {name!r}: rule 'suffix': under '# State in:' a name ends in '_in'")
            if group == "State out" and not name.endswith("_out"):
                problems.append(
                    f"{where}: parameter {name!r}: rule 'suffix': under '# State out:' a name ends in '_out'"
                )
        if group is not None and members == 0:
            problems.append(f"{where}: group {group!r}: rule 'empty group': no parameter under the heading")
    return problems


def _package_files() -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.relpath(os.path.join(dirpath, f), ROOT).replace(os.sep, "/") for f in sorted(filenames)]
    return [f for f in out if f.endswith(".py")]


def _check_file(rel: str) -> list[str]:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return check_source(fh.read(), rel)


def test_kernel_signatures_follow_the_convention():
    """Every kernel under newton_tendon/ (outside NOT_YET_CONVERTED) groups its parameters by the rules."""
    files = [f for f in _package_files() if f not in NOT_YET_CONVERTED]
    kernels = 0
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            kernels += fh.read().count("@wp.kernel")
    assert kernels > 0, "the checker found no kernel: the package layout changed under it"
    problems = [p for f in files for p in _check_file(f)]
    assert not problems, "kernel signature convention (docs/kernel_conventions.md):\n" + "\n".join(problems)


def test_not_yet_converted_list_is_current():
    """Each allow-listed file exists and still breaks the rules; once converted it must leave the list."""
    for rel in NOT_YET_CONVERTED:
        assert os.path.exists(os.path.join(ROOT, rel)), f"{rel} is in NOT_YET_CONVERTED but does not exist"
        assert _check_file(rel), f"{rel} follows the kernel convention now: remove it from NOT_YET_CONVERTED"


GOOD = '''
import warp as wp

@wp.kernel(enable_backward=False)
def integrate(
    # Model:
    body_mass: wp.array(dtype=float),
    dt: float,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    # State out: the next pose
    body_q_out: wp.array(dtype=wp.transform),
    # Scratch:
    body_delta: wp.array(dtype=wp.spatial_vector),  # a trailing note is fine
):
    pass
'''

BAD = '''
import warp as wp

def not_a_kernel(x, y_out):  # ignored: no @wp.kernel
    pass

@wp.kernel
def bad(
    body_mass: wp.array(dtype=float),
    # State out:
    body_q: wp.array(dtype=wp.transform),
    # Model:
    dt: float,
    # Misc:
    body_qd_in: wp.array(dtype=wp.spatial_vector),
    # Output:
):
    pass
'''


def test_checker_accepts_a_good_kernel():
    """The reference signature of docs/kernel_conventions.md passes."""
    assert check_source(GOOD) == []


def test_checker_flags_a_bad_kernel():
    """Each rule fires on a deliberately broken signature, naming the kernel and parameter."""
    problems = check_source(BAD, "bad.py")
    text = "\n".join(problems)
    assert all("bad.py:" in p and "kernel bad" in p for p in problems), text
    assert "parameter 'body_mass': rule 'grouped'" in text, text
    assert "parameter 'body_q': rule 'suffix': under '# State out:'" in text, text
    assert "group 'Model': rule 'order'" in text, text
    assert "comment '# Misc:': rule 'heading'" in text, text
    assert "parameter 'body_qd_in': rule 'suffix'" in text, text
    assert "group 'Output': rule 'empty group'" in text, text
    assert "not_a_kernel" not in text, text
