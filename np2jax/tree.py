"""What one file's conversion needs to know about the other files of the converted tree.

A function that changes its argument in place (NJ209) is rewritten to return it, and every
call assigns the result. When its calls are in other modules, the definition and all those
calls must be rewritten together, or none of them: the tree is converted assuming none is;
the functions refused only because other files use them are then assumed rewritable and
the tree converted again, each is checked (definition rewritten, every call rewritten) and
the ones that failed are dropped, until nothing changes. A file is processed again only
when its view of the tree (ModuleContext) changed.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from np2jax.files import is_notebook

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTRIBUTE = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_TOP_DEFINITION = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass(frozen=True)
class ModuleContext:
    """The tree as one file sees it."""

    name: str = ""  # the module's dotted name ("" for a lone source text)
    is_package: bool = False  # an __init__.py: relative imports start from the package itself
    external_names: frozenset = frozenset()  # identifiers other files of the tree use
    # identifiers of this file other files of the tree read or write as an attribute
    # (`.rng`, `.w`): a local variable of the same name elsewhere is none of them
    external_attributes: frozenset = frozenset()
    # names of this module other files of the tree may reach through an import of it (the
    # tree's import graph: `from this import f`, or `import this` and a word `f` in the
    # importing file); a same-named function of another module is not one of them
    imported_names: frozenset = frozenset()
    # functions of other modules rewritten to return their argument: qualified name ->
    # (position of the parameter, its name); calls to them here must assign the result
    external_mutators: tuple = ()
    # functions of this module rewritten together with their calls in other modules
    exported_mutators: frozenset = frozenset()
    # what functions of other modules do with their arguments and returns (FileResult.effects):
    # (qualified name, every return a fresh JAX array, ((position or None, name), ...) of
    # the parameters it only reads)
    external_effects: tuple = ()
    # functions of other modules kept on NumPy (keep-numpy, NJ104) whose body writes, returns
    # or keeps an argument: (qualified name, ((position or None, name), ...)); the arrays
    # calls here pass for those stay NumPy (np2jax.analysis.islands)
    external_numpy_params: tuple = ()
    # the tree's top-level module and package names, comma-separated: what marks its modules
    # for --interface numpy (NJ105: a caller in a module of the same tree gets JAX arrays)
    tree: str = ""
    # with --jit: decorators of the tree that may sit above jax.jit (they only call, wrap
    # and inspect the function: np2jax.analysis.decorators.calls_only), named in this file:
    # (qualified name, "decorator" or "factory")
    jit_decorators: tuple = ()
    # with --jit: this module's functions that other modules of the tree call with values
    # that are not Python values (np2jax.jit.plan.external_arguments): (name, ((position or
    # None, keyword or None), ...)); none of those may become a static argument
    array_arguments: tuple = ()
    # with --jit: functions of other modules of the tree compiled with jax.jit, named in
    # this file: (qualified name, signature `def f(...): pass`, static argument names)
    compiled: tuple = ()
    # attributes other files of the tree write into in place through an object of a class
    # (`kf.H[i, j] = 1.0`, Tree.attribute_writes): every array this module's classes bind
    # to such an attribute stays NumPy (np2jax.analysis.islands), as a write of its own does
    external_attribute_writes: frozenset = frozenset()
    # this module's functions other modules of the tree pass string or object arrays
    # (np2jax.analysis.module.object_arguments): (name, the value shown) each; kept on NumPy
    given_objects: tuple = ()

    def mutator_parameter(self, qualname: str):
        return dict(self.external_mutators).get(qualname)

    def function_effects(self, qualname: str) -> tuple | None:
        """(fresh JAX returns, read-only parameters) of another module's function, or None."""
        for name, fresh, read_only in self.external_effects:
            if name == qualname:
                return fresh, read_only
        return None


def module_name(path: Path, relative: Path) -> str:
    """`pkg/sub/mod.py` -> "pkg.sub.mod"; a package's __init__.py is the package itself.
    The folders above the given root that are packages (have __init__.py) are included."""
    return module_names([(path, relative)])[path]


def module_names(files) -> dict[Path, str]:
    """module_name of each (path, relative) pair; the folders of a tree are looked at once
    each, not once a file (a warm re-check of a big tree computes these first)."""
    folders: dict[Path, Path] = {}  # a folder -> where it is, links resolved
    above: dict[Path, list[str]] = {}  # a root -> the packages that contain it
    names = {}
    for path, relative in files:
        parts = list(relative.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if path.is_symlink():
            folder = path.resolve().parent
        else:
            if path.parent not in folders:
                folders[path.parent] = path.parent.resolve()
            folder = folders[path.parent]
        root = folder.parents[len(relative.parts) - 2] if len(relative.parts) > 1 else folder
        if root not in above:
            packages, outer = [], root
            while (outer / "__init__.py").exists():
                packages.insert(0, outer.name)
                outer = outer.parent
            above[root] = packages
        names[path] = ".".join([*above[root], *parts])
    return names


def resolve(qualname: str, module: str, is_package: bool) -> str:
    """libcst writes relative imports with leading dots (".mod.f"): make them absolute."""
    if not qualname.startswith("."):
        return qualname
    dots = len(qualname) - len(qualname.lstrip("."))
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (dots - 1)] if dots > 1 else package
    return ".".join([*base, qualname.lstrip(".")]) if qualname.lstrip(".") else ".".join(base)


@dataclass
class Tree:
    """Module names and shared identifiers of the files converted together."""

    names: dict[Path, str] = field(default_factory=dict)
    words: dict[Path, set] = field(default_factory=dict)
    texts: dict[Path, str] = field(default_factory=dict)
    marked: bool = False  # the contexts name the tree (ModuleContext.tree: --interface numpy)
    _syntax: dict = field(default_factory=dict, repr=False, compare=False)  # Tree.syntax

    def syntax(self, path: Path) -> ast.Module | None:
        """The file's ast, parsed once for the tree's passes before the pipeline's (--jit's
        decorator scan in np2jax.engine, then the import graph, Tree._imported, which lets
        them go); None for a notebook or a file that does not parse."""
        if path not in self._syntax:
            self._syntax[path] = None if is_notebook(path) else _parsed(self.texts[path])
        return self._syntax[path]

    @classmethod
    def of(cls, files, sources, marked: bool = False) -> "Tree":
        tree = cls(marked=marked)
        readable = [item for item in files if item.path in sources]
        tree.names = module_names((item.path, item.relative) for item in readable)
        for item in readable:
            tree.texts[item.path] = sources[item.path].text
            tree.words[item.path] = set(_IDENTIFIER.findall(tree.texts[item.path]))
        return tree

    @cached_property
    def _attributes(self) -> dict[Path, frozenset]:
        """Path -> the identifiers its text reads or writes as attributes (`.rng`)."""
        return {path: frozenset(_ATTRIBUTE.findall(text)) for path, text in self.texts.items()}

    @cached_property
    def _attributes_named(self) -> Counter:
        """How many files name each identifier as an attribute."""
        return Counter(word for found in self._attributes.values() for word in found)

    @cached_property
    def _using(self) -> Counter:
        """How many files may use each identifier from another file: a file whose top
        level defines a function or class of that name uses its own (unless it reads the
        name as an attribute, `ops.w`, or imports it)."""
        return Counter(word for path, found in self.words.items()
                       for word in found - self._own_definitions(path))

    def _own_definitions(self, path: Path) -> set:
        """The names of the functions and classes the file's top level defines that the
        file neither imports nor reads as another object's attribute."""
        text = self.texts.get(path, "")
        if is_notebook(path):
            return set()
        return {name for name in _TOP_DEFINITION.findall(text)
                if not re.search(rf"\.\s*{name}\b|\bimport\b[^\n]*\b{name}\b", text)}

    def context(self, path: Path, accepted: dict[str, tuple], effects: dict | None = None,
                numpy_params: dict | None = None,
                jit_decorators: dict | None = None,
                array_arguments: dict | None = None,
                compiled: dict | None = None,
                given_objects: dict | None = None) -> ModuleContext:
        """`effects`: path -> {qualified name: effects of another module's function the
        file's analysis asked about} (np2jax.engine.tree_effects); `numpy_params`:
        qualified name -> the parameters of a function kept on NumPy that must get NumPy
        arrays (np2jax.engine.tree_numpy_params); `jit_decorators`: qualified name -> kind
        of the tree's decorators that may sit above jax.jit (np2jax.engine.tree_jit_decorators);
        `given_objects`: qualified name -> the string or object array other files pass the
        function (np2jax.engine.tree_object_arguments)."""
        using = self._using
        own_definitions = self._own_definitions(path)
        own = self.names.get(path, "")
        words = self.words.get(path, ())
        return ModuleContext(
            compiled=tuple(sorted(
                (q, signature, tuple(static)) for q, (signature, static) in (compiled or {}).items()
                if q.rsplit(".", 1)[0] != own and (q.rsplit(".", 1)[1] in words or is_notebook(path)))),
            array_arguments=tuple(sorted(
                (q.rsplit(".", 1)[1], tuple(sorted(found, key=repr)))
                for q, found in (array_arguments or {}).items() if q.rsplit(".", 1)[0] == own)),
            jit_decorators=tuple(sorted(
                (q, kind) for q, kind in (jit_decorators or {}).items()
                if q.rsplit(".", 1)[1] in words or is_notebook(path))),
            external_numpy_params=tuple(sorted(
                (q, p) for q, p in (numpy_params or {}).items()
                if q.rsplit(".", 1)[0] != own and self._may_refer(path, q))),
            external_effects=tuple(sorted((q, fresh, read_only) for q, (fresh, read_only)
                                          in (effects or {}).get(path, {}).items()
                                          if q.rsplit(".", 1)[0] != own)),
            name=own, is_package=path.name == "__init__.py",
            external_names=frozenset(w for w in self.words.get(path, ())
                                     if using[w] > (w not in own_definitions)),
            external_attributes=frozenset(
                w for w in self.words.get(path, ())
                if self._attributes_named[w] > (w in self._attributes.get(path, ()))),
            imported_names=self._imported.get(own, frozenset()) & frozenset(
                self.words.get(path, ())) if own else frozenset(
                w for w in self.words.get(path, ()) if using[w] > 1),
            external_mutators=tuple(sorted((q, p) for q, p in accepted.items()
                                           if q.rsplit(".", 1)[0] != own
                                           and self._may_refer(path, q))),
            exported_mutators=frozenset(q.rsplit(".", 1)[1] for q in accepted
                                        if q.rsplit(".", 1)[0] == own),
            tree=self._roots if self.marked else "",
            external_attribute_writes=frozenset().union(*(
                names for other, names in self._attribute_writes.items() if other != path))
            & frozenset(words),
            given_objects=tuple(sorted(
                (q.rsplit(".", 1)[1], shown) for q, shown in (given_objects or {}).items()
                if q.rsplit(".", 1)[0] == own)),
        )

    @cached_property
    def _attribute_writes(self) -> dict[Path, frozenset]:
        """Path -> the attributes its code writes into in place through an object other
        than `self`: `kf.H[i, j] = 1.0`, `model.w[0] += v` (attribute_writes)."""
        found = {}
        for path, text in self.texts.items():
            if is_notebook(path) or not _ATTRIBUTE_STORE.search(text):
                continue  # no `name.attr[...] =` in the text: not worth a parse
            parsed = _parsed(text)
            if parsed is not None:
                found[path] = attribute_writes(parsed)
        return found

    @cached_property
    def _roots(self) -> str:
        return ",".join(sorted({name.split(".")[0] for name in self.names.values() if name}))

    @cached_property
    def _imported(self) -> dict[str, frozenset]:
        """Module name -> the names other files of the tree may reach through importing it
        (np2jax.tree.imports_of: every word of a file that imports the module as a module,
        star-imports it or may import dynamically)."""
        found: dict[str, set] = {}
        modules = set(self.names.values())
        for path, text in self.texts.items():
            own = self.names.get(path, "")
            words = self.words.get(path, set())
            for module, names in imports_of(text, own, path.name == "__init__.py", modules,
                                            is_notebook(path),
                                            parsed=lambda path=path: self.syntax(path)).items():
                if module == own:
                    continue
                if names is ...:  # star-imported, maybe to be re-exported: every name
                    names = set().union(*(self.words.get(p, set()) for p, n in self.names.items()
                                          if n == module))
                found.setdefault(module, set()).update(words if names is None else names)
        self._syntax.clear()  # the last pass to read them (after --jit's decorator scan): an
        # ast weighs many times its text, and the pipeline parses each file on its own
        return {module: frozenset(names) for module, names in found.items()}

    def _may_refer(self, path: Path, qualname: str) -> bool:
        """Whether the file's outcome can depend on the function being rewritten: its name
        is in the text, as np2jax.pipeline's pre-filter and the analysis need it. Told of
        the others, the file would be processed again for nothing. A notebook's JSON may
        spell a name with escapes: it is told of every function."""
        text = self.texts.get(path)
        return text is None or is_notebook(path) or qualname.rsplit(".", 1)[1] in text

    def defining_path(self, qualname: str) -> Path | None:
        module = qualname.rsplit(".", 1)[0]
        return next((p for p, n in self.names.items() if n == module), None)

    def defined_at(self, qualname: str) -> str | None:
        """The qualified name where the tree's function `qualname` is defined, re-exports
        followed (`from .helpers import f`, `from .helpers import *` in a package's
        __init__.py); None when no module of the tree defines it."""
        pending, seen = [qualname], set()
        while pending and len(seen) < 32:
            current = pending.pop(0)
            if current in seen:
                continue
            seen.add(current)
            module, _, name = current.rpartition(".")
            path = self.defining_path(current)
            if path is None or is_notebook(path):
                continue
            text = self.texts[path]
            if re.search(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b", text, re.MULTILINE):
                return current
            syntax = _parsed(text)
            for statement in syntax.body if syntax is not None else ():
                if isinstance(statement, ast.ImportFrom):
                    base = resolve("." * statement.level + (statement.module or ""), module,
                                   path.name == "__init__.py")
                    for alias in statement.names:
                        if alias.name == "*":
                            pending.append(f"{base}.{name}")
                        elif (alias.asname or alias.name) == name:
                            pending.append(f"{base}.{alias.name}")
        return None

    def unsettled(self, accepted: dict, results: dict, failed: set) -> set[str]:
        """The accepted functions whose rewrite did not happen everywhere it had to: the
        definition, and every reference from other files as a call assigning the result."""
        bad = set()
        for qualname in accepted:
            module, name = qualname.rsplit(".", 1)
            defining = self.defining_path(qualname)
            result = results.get(defining)
            if result is None or ("def", name) not in result.applied_keys:
                bad.add(qualname)
                continue
            total = 0
            for _path, other in results.items():
                references = other.tree_references.get(qualname, 0)
                total += references
                if references != other.applied_keys.count(("call", qualname)):
                    bad.add(qualname)
            if total == 0 or any(name in self.words.get(path, ()) for path in failed):
                bad.add(qualname)  # mentioned elsewhere, but never as a call we understood
        return bad


_ATTRIBUTE_STORE = re.compile(r"\w\.\w+\s*\[[^\n]*\]\s*[-+*/%@&|^<>]*=[^=]")


def attribute_writes(tree: ast.Module) -> frozenset:
    """The attributes a module writes into in place through an object other than `self`
    (`kf.H[i, j] = 1.0`, `model.w[0] += v`, `a.b.c[1:] = 0`: c): another file's class may
    bind them to arrays, which a JAX array could not take."""
    found = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        stack = list(targets)
        while stack:
            target = stack.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                stack.extend(target.elts)
                continue
            if not isinstance(target, ast.Subscript):
                continue
            base = target.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Attribute) and not (
                    isinstance(base.value, ast.Name) and base.value.id == "self"):
                found.add(base.attr)
    return frozenset(found)


_DYNAMIC = re.compile(r"\b(getattr|import_module|__import__|importlib|__dict__|vars|globals)\b")


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def from_imports(tree: ast.Module, own: str, is_package: bool) -> dict[str, str]:
    """Module-level `from M import f [as g]` of a file's ast: g -> "M.f", absolute (the
    tree follows a decorator imported through another module: `from .vector import *`,
    where vector.py imports it from utils)."""
    found = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom):
            base = resolve("." * statement.level + (statement.module or ""), own, is_package)
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{base}.{alias.name}"
    return found


def imports_of(text: str, module: str, is_package: bool, modules: set,
               notebook: bool = False, parsed=None) -> dict:
    """Module of the tree -> the names a file imports from it (`from m import f`), None
    when the file may use any of its names (it imports the module itself, `import m` or
    `from pkg import m`: `m.f` reads a name; or may look names up by string: getattr,
    importlib), or `...` for a star import (every name of the module: the file may
    re-export them). `import pkg` also reaches every module under pkg. A file without the word
    `import` imports nothing (it is not parsed). One that cannot be parsed, a notebook's JSON, or one
    that looks names up dynamically may reach every module. Relative imports are resolved
    from the file's own module name. `parsed()`: the text's ast or None (Tree.syntax, the
    tree's one parse of the file); by default the text is parsed here."""
    if notebook or _DYNAMIC.search(text):
        return dict.fromkeys(modules)
    if "import" not in text:
        return {}  # no import statement: not worth a parse (a 10 MB data module)
    tree = parsed() if parsed is not None else _parsed(text)
    if tree is None:
        return dict.fromkeys(modules)
    found: dict[str, set | None] = {}

    def whole(name: str) -> None:
        if found.get(name) is not ...:
            found[name] = None

    def some(name: str, imported: str) -> None:
        if name in found and not isinstance(found[name], set):
            return
        found.setdefault(name, set()).add(imported)

    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                prefix = parts[0] + "."  # `import a.b` binds a: a.c is reachable too
                for name in modules:
                    if name == parts[0] or name.startswith(prefix):
                        whole(name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                if node.level - 1 > len(package):
                    continue
                source = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    if source in modules:
                        found[source] = ...
                    continue
                child = f"{source}.{alias.name}" if source else alias.name
                if child in modules:
                    whole(child)
                if source in modules:
                    some(source, alias.name)
    return found
