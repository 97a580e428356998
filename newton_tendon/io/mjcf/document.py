"""Reading an MJCF file: XML with the line of every element (so errors can name it), MuJoCo's
number syntax, the limits on nesting depth and on how much of a value an error repeats."""

from __future__ import annotations

import logging
import os
import re
from xml.parsers import expat

logger = logging.getLogger("newton_tendon.mjcf")
"""The importer's logger (ignored attributes at debug level, MuJoCo rules with surprising outcomes
as warnings). It keeps the name of the module the importer lived in before ``newton_tendon.io``."""


class _Element:
    """A parsed XML element: tag, attributes, children, the line it starts on and the file it was
    read from (an ``<include>``d file's name, or None for the main document)."""

    __slots__ = ("tag", "attrib", "children", "line", "src")

    def __init__(self, tag: str, attrib: dict, line: int, src: str | None = None):
        self.tag = tag
        self.attrib = attrib
        self.children: list[_Element] = []
        self.line = line
        self.src = src


MJ_MINVAL = 1.0e-15
"""MuJoCo's mjMINVAL: the least mass and principal inertia it accepts for a moving body."""

MJ_TRIANGLE_RTOL = 1.0e-12
"""Slack (relative to the trace) on MuJoCo's inertia triangle inequality: float64 eigenvalue
round-off only, so ``diaginertia="1 1 2.0000001"`` fails as it does in MuJoCo."""

MAX_INCLUDES = 1000
"""Most ``<include>`` elements one document may expand (a bound on work, far above real models:
dm_control's dog has 3)."""

MAX_ECHO = 80
"""Longest attribute value, name or path (characters) an error message repeats; longer ones are cut."""

MAX_ELEMENT_DEPTH = 499
"""Deepest element nesting accepted (the root ``<mujoco>`` is depth 1), as MuJoCo 4.0's XML parser
(tinyxml2) allows: an element at depth 500, or one at depth 499 written with a separate end tag
(``<geom></geom>``, which tinyxml2 descends into), makes MuJoCo reject the file; so do we."""


def _q(value) -> str:
    """``repr(value)``, cut to about ``MAX_ECHO`` characters so a huge value cannot flood a message."""
    text = repr(value)
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[: MAX_ECHO - 3]}... ({len(str(value))} characters)"


def _path(path: str) -> str:
    """A file path for a message: whole up to ``MAX_ECHO`` characters, else its end (the file name
    and the folders nearest it, which say which file it is) after ``...``: a temporary folder 81
    characters deep cut from its start hid the file name the message is about."""
    path = str(path)
    if len(path) <= MAX_ECHO:
        return path
    return f"...{path[-(MAX_ECHO - 3):]}"


_BOM = "\ufeff"


def _looks_like_xml(source: str) -> bool:
    return source.lstrip().lstrip(_BOM).lstrip().startswith("<")


_SEPARATORS = re.compile(r"[ \t\n\r\f\v]+")
_REAL = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
    r"(?:[pP][+-]?\d+)?|(?i:inf(?:inity)?|nan))",
    re.ASCII,
)
"""A number as C's strtod (which MuJoCo uses) reads it: ASCII decimal or hex, no ``_`` digit
separators and no non-ASCII digits (both of which Python's ``float`` would accept)."""
_INT = re.compile(r"[+-]?\d+", re.ASCII)


def _tokens(text: str) -> list[str]:
    return [t for t in _SEPARATORS.split(text) if t]


def _real_token(tok: str) -> float:
    if not _REAL.fullmatch(tok):
        raise ValueError(tok)
    return float.fromhex(tok) if "x" in tok or "X" in tok else float(tok)


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (OSError, ValueError) as e:
        why = getattr(e, "strerror", None) or str(e)
        raise ValueError(f"{what}: cannot read MJCF file {_path(path)!r}: {why}") from None


def _parse(text, name: str, src: str | None) -> _Element:
    """The root element of one XML document (``name`` for messages; ``src`` recorded on every element)."""
    # Byte view of the document for the depth check (expat parses a str as UTF-8, so its byte
    # indices are into this encoding).
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    parser = expat.ParserCreate()
    stack: list[_Element] = []
    roots: list[_Element] = []

    def too_deep(tag, line):
        raise ValueError(
            f"{name}:{line}: <{tag[:MAX_ECHO]}>: element nesting is too deep (more than "
            f"{MAX_ELEMENT_DEPTH} levels; MuJoCo's XML parser rejects it too)"
        )

    def start(tag, attrs):
        el = _Element(tag, dict(attrs), parser.CurrentLineNumber, src)
        if len(stack) >= MAX_ELEMENT_DEPTH:
            too_deep(tag, el.line)
        (stack[-1].children if stack else roots).append(el)
        stack.append(el)

    def end(tag):
        # At the last allowed depth only an empty-element tag (<x/>) passes: its end event comes
        # right after the "/>" (an element this deep has no children, the depth check saw to that).
        if len(stack) == MAX_ELEMENT_DEPTH:
            i = parser.CurrentByteIndex
            if data[i - 2 : i] != b"/>":
                too_deep(tag, stack[-1].line)
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except expat.ExpatError as e:
        raise ValueError(f"{name}:{e.lineno}: malformed XML: {expat.ErrorString(e.code)}") from None
    return roots[0]


class _Doc:
    """One MJCF document, its ``<include>`` elements expanded.

    ``<include file="F"/>`` is replaced by the children of the root element of F, wherever it stands,
    as MuJoCo 4.0 does. F is looked up relative to the main file's folder first and, when it is not
    there, relative to the folder of the file that includes it (measured against MuJoCo 4.0: both
    forms load there); a string source's folder is the working directory. Included files may include
    others. Including one file twice (a cycle too) is an error, as in MuJoCo ("already included"),
    and so is an include with children or without ``file``. Errors in an included element name that
    file and line."""

    def __init__(self, source):
        if isinstance(source, os.PathLike) or (isinstance(source, str) and not _looks_like_xml(source)):
            path = os.fspath(source)
            text = _read(path, "add_mjcf")
            self.name = _path(path)
            self.folder = os.path.dirname(os.path.abspath(path))
        elif isinstance(source, (str, bytes)):
            # A leading byte-order mark is legal XML (MuJoCo accepts it); expat wants it off a str.
            text = source.lstrip(_BOM) if isinstance(source, str) else source
            self.name = "<string>"
            self.folder = os.getcwd()
        else:
            raise TypeError(f"add_mjcf: source must be a path or an XML string, got {type(source).__name__}")
        self.root = _parse(text, self.name, None)
        if self.root.tag != "mujoco":
            raise ValueError(f"{self.where(self.root)}: the root element must be <mujoco>")
        self.included: list[str] = []
        """The included files, as resolved (absolute paths), in the order they were read."""
        self._expand(self.root, self.folder)

    def _expand(self, el: _Element, folder: str):
        """Replace every ``<include>`` below ``el`` (read from a file in ``folder``) by its file's content."""
        children = []
        for child in el.children:
            if child.tag != "include":
                self._expand(child, folder)
                children.append(child)
                continue
            file = child.attrib.get("file")
            if file is None:
                raise ValueError(f"{self.where(child)}: attribute file (the file to include) is required")
            if child.children:
                raise ValueError(f"{self.where(child)}: an include cannot have child elements")
            extra = sorted(set(child.attrib) - {"file"})
            if extra:
                raise ValueError(f"{self.where(child)}: unsupported attribute {_q(extra[0])}")
            path = os.path.normpath(os.path.join(self.folder, file))
            if not os.path.isfile(path):
                path = os.path.normpath(os.path.join(folder, file))
            if path in self.included:
                raise ValueError(f"{self.where(child)}: file {_q(file)} is already included (MuJoCo rejects it too)")
            if len(self.included) >= MAX_INCLUDES:
                raise ValueError(f"{self.where(child)}: more than {MAX_INCLUDES} includes")
            self.included.append(path)
            shown = _path(path)
            root = _parse(_read(path, self.where(child)), shown, shown)
            self._expand(root, os.path.dirname(path))
            children.extend(root.children)
        el.children = children

    def where(self, el: _Element) -> str:
        name = el.attrib.get("name")
        tag = el.tag[:MAX_ECHO]
        label = f"<{tag} name={_q(name)}>" if name is not None else f"<{tag}>"
        return f"{el.src or self.name}:{el.line}: {label}"
