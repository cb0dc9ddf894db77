# --------------------------------------------------------------------------
# Denied imports.


class _Policy:
    """The deny list: module names (with submodules) and dotted attributes."""

    def __init__(self, names):
        self.names = frozenset(names)
        self.tops = frozenset([str.partition(name, ".")[0] for name in names])
        self.attrs = {}  # module name -> [(attribute, entry)], for "os.system"
        for name in names:
            module, dot, attr = name.rpartition(".")
            if dot:
                self.attrs.setdefault(module, []).append((attr, name))

    def denied_prefix(self, name):
        """The shortest denied entry that `name` is or lies under, else None."""
        if not self.names:
            return None
        i = 0
        while True:
            i = str.find(name, ".", i)
            prefix = name if i < 0 else name[:i]
            if prefix in self.names:
                return prefix
            if i < 0:
                return None
            i += 1

    def denies(self, name):
        """True when `name` is a denied entry or lies under one."""
        return self.denied_prefix(name) is not None


# --------------------------------------------------------------------------
# Who imports: the deny list is a policy on the candidate's own imports.  A
# module is refused when the import comes from code the harness compiled
# (candidate, setup, tests) or that the candidate built from strings; an
# installed module importing it for its own use (pathlib -> urllib.parse,
# asyncio -> socket) is let through.

_PY_VERSION = "python%d.%d" % _sys.version_info[:2]
_DIST_PACKAGES = ("/usr/local/lib/%s/dist-packages" % _PY_VERSION, "/usr/lib/python3/dist-packages",
                  "/usr/lib/%s/dist-packages" % _PY_VERSION)
_STDLIB = getattr(_sys, "_stdlib_dir", None) or "%s/lib/%s" % (_sys.base_prefix, _PY_VERSION)
_INSTALL_ROOTS = tuple(set([
    str.rstrip(root, "/") + "/"
    for root in (_sys.prefix, _sys.base_prefix, _sys.exec_prefix, _sys.base_exec_prefix, _STDLIB)
    + _DIST_PACKAGES if type(root) is str and str.startswith(root, "/") and root != "/"]))
# Frames of the import system itself, which only pass an import on.
_MACHINERY = frozenset(["<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>"])
_IMPORTLIB_INIT = _STDLIB + "/importlib/__init__.py"
_PASS_THROUGH = set()  # code objects of the harness's own import wrappers
_installed_files = {}  # co_filename -> bool


def _installed_file(filename):
    """True for a frozen stdlib module or a regular file under the installation's
    directories; False for <candidate>, <test N>, <setup>, <string>, /tmp/..."""
    if str.startswith(filename, "<frozen ") and str.endswith(filename, ">"):
        return bool(_is_frozen(filename[8:-1]))
    if not str.startswith(filename, "/") or "/." in filename or "//" in filename:
        return False
    if not [root for root in _INSTALL_ROOTS if str.startswith(filename, root)]:
        return False
    try:
        return _stat(filename).st_mode & 0o170000 == 0o100000
    except (OSError, ValueError):
        return False


def _installed_importer(frame):
    """Whether the import that reached `frame` was made by an installed module:
    the first frame outward that is not the import system's own decides."""
    steps = 0
    while frame is not None and steps < 1000:
        code = frame.f_code
        filename = code.co_filename
        if not (filename in _MACHINERY or code in _PASS_THROUGH
                or filename == _IMPORTLIB_INIT and code.co_name == "import_module"):
            known = _installed_files.get(filename)
            if known is None:
                known = _installed_files[filename] = _installed_file(filename)
            return known
        frame, steps = frame.f_back, steps + 1
    return False


def _refuse(name):
    raise ImportError("denied: " + name, name=name)


def _import_guard(policy):
    """builtins.__import__ for the candidate: sys.modules answers an import
    before any finder is asked, so a denied module that an installed module
    loaded (urllib.parse after pathlib) is refused here.  Allowed names cost
    one set lookup."""
    tops, denied_prefix, real = policy.tops, policy.denied_prefix, _real_import

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            if type(name) is str and str.partition(name, ".")[0] in tops:
                denied = denied_prefix(name)
                if denied is None and type(fromlist) in (tuple, list):
                    # from http import client, with http.client loaded already
                    for item in fromlist:
                        full = name + "." + item if type(item) is str else ""
                        if full in _modules and denied_prefix(full) is not None:
                            denied = denied_prefix(full)
                            break
                if denied is not None and not _installed_importer(_getframe(1)):
                    _refuse(denied)
        elif not _installed_importer(_getframe(1)):
            module = real(name, globals, locals, fromlist, level)
            _check_relative(module, name, fromlist, denied_prefix)
            return module
        return real(name, globals, locals, fromlist, level)

    __import__.__doc__ = real.__doc__
    _PASS_THROUGH.add(__import__.__code__)
    return __import__


def _check_relative(module, name, fromlist, denied_prefix):
    """A relative import made by candidate code (with a forged __package__),
    checked after the fact by the module it reached."""
    try:
        found = module.__spec__.name
    except BaseException:
        return
    if type(found) is not str:
        return
    names = [found]
    if not fromlist and type(name) is str and "." in name:
        names.append(found + "." + str.partition(name, ".")[2])
    if type(fromlist) in (tuple, list):
        names += [found + "." + item for item in fromlist if type(item) is str]
    for full in names:
        denied = denied_prefix(full)
        if denied is not None and (full is found or full in _modules):
            _refuse(denied)


def _guard_import_module(module, policy):
    """importlib.import_module, refusing the candidate a denied module even
    when it is in sys.modules."""
    real = getattr(module, "import_module", None)
    if real is None or getattr(real, "__code__", None) in _PASS_THROUGH:
        return
    tops, denied_prefix = policy.tops, policy.denied_prefix

    def import_module(name, package=None):
        full = name
        if type(name) is str and str.startswith(name, "."):
            stripped = str.lstrip(name, ".")
            try:
                full = _resolve_name(stripped, package, len(name) - len(stripped))
            except BaseException:
                full = None
        if type(full) is str and str.partition(full, ".")[0] in tops:
            denied = denied_prefix(full)
            if denied is not None and not _installed_importer(_getframe(1)):
                _refuse(denied)
        return real(name, package)

    import_module.__doc__ = real.__doc__
    _PASS_THROUGH.add(import_module.__code__)
    module.import_module = import_module


# os re-exports posix: denying os.system must also deny posix.system.
_REEXPORTED_FROM = {"os": "posix"}


def _denied_stub(name):
    """A stand-in for a denied attribute such as os.system: calling it raises."""
    message = "denied: " + name

    def denied(*args, **kwargs):
        raise ImportError(message, name=name)

    denied.__name__ = denied.__qualname__ = name
    return denied


def _deny_attributes(module, entries):
    for attr, name in entries:
        original = getattr(module, attr, None)
        if original is not None and type(original) is not _ModuleType:
            setattr(module, attr, _denied_stub(name))


class _PatchingLoader:
    """Runs a module's real loader, then patches the module (denied attributes
    replaced, importlib.import_module guarded)."""

    def __init__(self, loader, patch):
        self.loader = loader
        self.patch = patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)
        module.__loader__ = module.__spec__.loader = self.loader

    def __getattr__(self, name):
        return getattr(self.loader, name)


_PASS_THROUGH.add(_PatchingLoader.exec_module.__code__)


def _patcher(policy, name):
    """What to change in module `name` once it is loaded, or None."""
    entries = policy.attrs.get(name)
    guard = name == "importlib" and bool(policy.names)
    if not entries and not guard:
        return None

    def patch(module):
        if entries:
            _deny_attributes(module, entries)
        if guard:
            _guard_import_module(module, policy)

    return patch


class _DenyFinder:
    """sys.meta_path[0]: refuses denied modules to the candidate, patches
    modules with denied attributes (and importlib) as they load."""

    def __init__(self, policy):
        self.policy = policy
        self.patches = {}
        for name in list(policy.attrs) + ["importlib"]:
            patch = _patcher(policy, name)
            if patch is not None:
                self.patches[name] = patch

    def find_spec(self, name, path=None, target=None):
        if self.policy.denies(name) and not _installed_importer(_getframe(1)):
            raise ImportError("denied: " + name, name=name)
        patch = self.patches.get(name)
        if patch is None:
            return None
        for finder in list(_meta_path):
            find = getattr(finder, "find_spec", None)
            spec = None if finder is self or find is None else find(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchingLoader(spec.loader, patch)
                return spec
        return None

    def invalidate_caches(self):
        pass


def _loaded_under(modules, tops):
    """The keys of modules that are not str or whose top-level name is in tops."""
    return [name for name in list(modules) if type(name) is not str or str.partition(name, ".")[0] in tops]


# A warm worker puts the same function in C here first (zygote_native.c): it
# reads sys.modules' keys without writing their reference counts, each of
# which would copy a page in the candidate's process.
_loaded_under = globals().get("_c_loaded_under", _loaded_under)


def _install_policy(policy):
    """Before candidate code: the finder first, denied modules out of sys.modules,
    loaded modules patched, builtins.__import__ guarded."""
    _meta_path.insert(0, _DenyFinder(policy))
    for name in _loaded_under(_modules, policy.tops):  # what policy.denies may be true of
        if policy.denies(name):
            del _modules[name]
            parent, _, child = name.rpartition(".")
            if parent in _modules and not policy.denies(parent):
                try:
                    delattr(_modules[parent], child)
                except AttributeError:
                    pass
    for module_name, entries in policy.attrs.items():
        for name in (module_name, _REEXPORTED_FROM.get(module_name)):
            if name in _modules:
                _deny_attributes(_modules[name], entries)
    if policy.names:
        if "importlib" in _modules:
            _guard_import_module(_modules["importlib"], policy)
        _builtins.__import__ = _import_guard(policy)


def _quit(code=None):
    raise SystemExit(code)


def _prepare_interpreter(policy):
    """The last step before candidate code: deny list in force, exit()/quit()
    as site would define them, an empty __main__."""
    _install_policy(policy)
    for name in ("exit", "quit"):
        if not hasattr(_builtins, name):
            setattr(_builtins, name, _quit)
    _modules["__main__"] = _ModuleType("__main__")


def _denial(exc, policy):
    """The denied name behind a failure, following __cause__/__context__."""
    for _ in range(32):
        if exc is None:
            return None
        args = _exc_args(exc)
        if args and type(args[0]) is str and str.startswith(args[0], "denied: "):
            name = args[0][8:]
            if policy.denies(name):
                return name
        cause = _exc_cause(exc)
        exc = _exc_context(exc) if cause is None else cause
    return None


