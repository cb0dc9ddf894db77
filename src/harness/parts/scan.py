# --------------------------------------------------------------------------
# Scan: a best-effort lint.  Aliases of imports are followed; dynamic tricks
# are not (the finder still refuses them at run time).

_DYNAMIC_CODE = ("eval", "exec", "compile")
_DYNAMIC_IMPORT = ("__import__", "importlib.import_module")
_OPEN = ("open", "io.open")
_NAMESPACE_METHODS = ("update", "setdefault", "__setitem__", "__delitem__", "pop", "clear")

# Every finding below needs an import (every alias, so every dotted name,
# comes from one) or one of these names in the source (a call or name the
# scanner knows: eval, exec, compile, open, setattr, delattr, globals(),
# vars(), __builtins__).  Keep them in step with _Scanner.
_SCAN_WORDS = ("eval", "exec", "compile", "open", "setattr", "delattr", "globals", "vars", "__builtins__")
# Modules through which an alias can reach what the scanner looks for
# (builtins.eval, sys.modules, importlib.import_module, io.open).
_SCAN_MODULES = frozenset(["builtins", "sys", "importlib", "io"])


def _scan_may_find(source, denied_tops):
    """False when the scan of source would find nothing, so that it needs no
    tree: ASCII (non-ASCII identifiers are NFKC-normalised: a fullwidth
    "eval" is eval), none of _SCAN_WORDS as a name, and every "import" in it
    on a line that is a plain import of modules whose top-level name is
    neither denied (denied_tops) nor in _SCAN_MODULES.  Every import
    statement begins its line or follows a ";" or a ":" on it, so a line
    that is anything else ("__import__", "importlib", "if x: import os", a
    docstring's prose) sends the source to the tree."""
    if not str.isascii(source):
        return True
    for word in _SCAN_WORDS:
        at = str.find(source, word)
        while at >= 0:
            end = at + len(word)
            if ((at == 0 or not _is_name_char(source[at - 1]))
                    and (end == len(source) or not _is_name_char(source[end]))):
                return True
            at = str.find(source, word, end)
    at = str.find(source, "import")
    while at >= 0:
        start = str.rfind(source, "\n", 0, at) + 1
        end = str.find(source, "\n", at)
        end = len(source) if end < 0 else end
        if not _harmless_import(source[start:end], denied_tops):
            return True
        at = str.find(source, "import", end)
    return False


def _is_name_char(c):
    return str.isalnum(c) or c == "_"


def _harmless_import(line, denied_tops):
    """True for `import a.b [as c], ...` or `from a.b import c [as d], ...`
    (or `*`, or the names in one pair of brackets) alone on its line, a
    comment allowed, when no module's top-level name is denied or in
    _SCAN_MODULES."""
    words = str.split(str.replace(str.replace(str.partition(line, "#")[0], ",", " , "), "\\", " \\ "))
    if words[:1] == ["import"]:
        return _harmless_names(words[1:], denied_tops, True)
    if len(words) < 4 or words[0] != "from" or words[2] != "import" or not _harmless_module(
            words[1], denied_tops):
        return False
    names = words[3:]
    if names == ["*"]:
        return True
    if names and str.startswith(names[0], "(") and str.endswith(names[-1], ")"):
        names = str.split(" ".join(names)[1:-1])
    return _harmless_names(names, denied_tops, False)


def _harmless_names(words, denied_tops, modules):
    """`x [as y], ...` as words: each x a module (modules) or a name."""
    items = [[]]
    for word in words:
        if word == ",":
            items.append([])
        else:
            items[-1].append(word)
    for item in items:
        if len(item) not in (1, 3) or len(item) == 3 and (item[1] != "as" or not str.isidentifier(item[2])):
            return False
        if not (_harmless_module(item[0], denied_tops) if modules else str.isidentifier(item[0])):
            return False
    return True


def _harmless_module(dotted, denied_tops):
    names = str.split(dotted, ".")
    return ([n for n in names if str.isidentifier(n)] == names and names[0] not in denied_tops
            and names[0] not in _SCAN_MODULES)


class _Scanner:
    """Findings over the candidate's AST, in source order."""

    def __init__(self, ast, policy):
        self.ast = ast
        self.policy = policy
        self.aliases = {}  # local name -> dotted name it was imported as
        self.findings = []
        self.blocked = False

    def add(self, node, code, severity, message):
        self.blocked = self.blocked or severity == "block"
        self.findings.append((node.lineno, node.col_offset, code, severity, _message(message)))

    def run(self, tree):
        nodes = self.walk(tree)
        for node in nodes:
            self.visit_import(node)
        for node in nodes:
            self.visit_use(node)
        self.findings.sort()
        return [
            {"line": f[0], "col": f[1], "code": f[2], "severity": f[3], "message": f[4]}
            for f in self.findings[:_MAX_FINDINGS]
        ]

    def walk(self, tree):
        AST = self.ast.AST
        nodes, todo = [], [tree]
        while todo:
            node = todo.pop()
            nodes.append(node)
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    todo += [v for v in value if isinstance(v, AST)]
                elif isinstance(value, AST) and field != "ctx":
                    todo.append(value)
        return nodes

    def denied_import(self, node, name, what="module"):
        self.add(node, "denied-import", "block", "import of denied %s '%s'" % (what, name))

    def visit_import(self, node):
        ast, denies = self.ast, self.policy.denies
        if type(node) is ast.Import:
            for alias in node.names:
                if denies(alias.name):
                    self.denied_import(node, alias.name)
                top = alias.name.partition(".")[0]
                self.aliases[alias.asname or top] = alias.name if alias.asname else top
        elif type(node) is ast.ImportFrom and node.module and not node.level:
            if denies(node.module):
                self.denied_import(node, node.module)
                return
            for alias in node.names:
                full = node.module + "." + alias.name
                if denies(full):
                    self.denied_import(node, full, "name")
                self.aliases[alias.asname or alias.name] = full

    def dotted(self, node):
        """'os.system' for `o.system` after `import os as o`; None when unknown."""
        ast, parts = self.ast, []
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        if type(node) is not ast.Name or node.id not in self.aliases:
            return None
        parts.append(self.aliases[node.id])
        return ".".join(reversed(parts))

    def is_namespace(self, node):
        """globals(), vars(...), builtins, __builtins__ (or their __dict__), sys.modules."""
        ast = self.ast
        if type(node) is ast.Call and type(node.func) is ast.Name:
            return node.func.id in ("globals", "vars")
        if type(node) is ast.Attribute and node.attr == "__dict__":
            node = node.value
        if type(node) is ast.Name and node.id == "__builtins__":
            return True
        return self.dotted(node) in ("builtins", "sys.modules")

    def visit_use(self, node):
        ast, t = self.ast, type(node)
        if t is ast.Attribute:
            # Flag the shortest denied prefix only: os.system, not os.system.__call__,
            # and not subprocess.run, whose import is flagged already.
            name, denies = self.dotted(node), self.policy.denies
            if name and denies(name) and not denies(self.dotted(node.value) or ""):
                self.add(node, "denied-attribute", "block", "use of denied attribute '%s'" % name)
        elif t is ast.Call:
            self.visit_call(node)
        elif t in (ast.Assign, ast.Delete):
            for target in node.targets:
                self.visit_target(target)
        elif t in (ast.AugAssign, ast.AnnAssign):
            self.visit_target(node.target)

    def visit_target(self, target):
        ast = self.ast
        if type(target) in (ast.Attribute, ast.Subscript) and self.is_namespace(target.value):
            self.add(target, "globals-tamper", "warn", "assignment into a shared namespace")
        elif type(target) is ast.Name and target.id == "__builtins__":
            self.add(target, "globals-tamper", "warn", "assignment to __builtins__")

    def visit_call(self, node):
        ast, func = self.ast, node.func
        if type(func) is ast.Name:
            name = self.aliases.get(func.id, func.id)
        else:
            name = self.dotted(func) or ""
        if str.startswith(name, "builtins."):
            name = name[9:]
        first = node.args[0] if node.args else None
        if name in _DYNAMIC_CODE:
            self.add(node, "dynamic-code", "warn", "call to %s()" % name)
        elif name in _DYNAMIC_IMPORT:
            target = first.value if type(first) is ast.Constant else None
            if type(target) is str and self.policy.denies(target):
                self.denied_import(node, target)
            else:
                self.add(node, "dynamic-import", "warn", "call to %s()" % name)
        elif name in _OPEN:
            mode = node.args[1] if len(node.args) > 1 else None
            for kw in node.keywords:
                mode = kw.value if kw.arg == "mode" else mode
            mode = mode.value if type(mode) is ast.Constant else ""
            if type(mode) is str and [c for c in "wax+" if c in mode]:
                self.add(node, "open-write", "warn", "open() for writing (mode '%s')" % mode)
        elif name in ("setattr", "delattr") and first is not None and self.is_namespace(first):
            self.add(node, "globals-tamper", "warn", "%s() on a shared namespace" % name)
        elif (type(func) is ast.Attribute and func.attr in _NAMESPACE_METHODS
              and self.is_namespace(func.value)):
            self.add(node, "globals-tamper", "warn", "%s() on a shared namespace" % func.attr)


