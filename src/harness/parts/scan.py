# --------------------------------------------------------------------------
# Scan: a best-effort lint.  Aliases of imports are followed; dynamic tricks
# are not (the finder still refuses them at run time).

_DYNAMIC_CODE = ("eval", "exec", "compile")
_DYNAMIC_IMPORT = ("__import__", "importlib.import_module")
_OPEN = ("open", "io.open")
_NAMESPACE_METHODS = ("update", "setdefault", "__setitem__", "__delitem__", "pop", "clear")

# Every finding below needs one of these words in the source: an import
# (every alias, so every dotted name, comes from one), or a call or name the
# scanner knows (eval, exec, compile, __import__, open, setattr, delattr,
# globals(), vars(), __builtins__).  Keep them in step with _Scanner.
_SCAN_WORDS = ("import", "eval", "exec", "compile", "open", "setattr", "delattr", "globals", "vars",
               "__builtins__")
# A source this short cannot nest deeper than the recursion limit that
# compiling through the tree has (each level of the tree takes at least one
# character), so skipping the tree changes no syntax verdict either.
_SCAN_SKIP_CHARS = 500


def _scan_may_find(source):
    """False when the scan of source would find nothing, so that it needs no
    tree: ASCII (non-ASCII identifiers are NFKC-normalised: a fullwidth
    "eval" is eval), short, and without any of _SCAN_WORDS."""
    if len(source) > _SCAN_SKIP_CHARS or not str.isascii(source):
        return True
    for word in _SCAN_WORDS:
        if word in source:
            return True
    return False


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


