"""CM013: the safety net: flag every use of an old-only name that the other rules left."""

from __future__ import annotations

import sys

import libcst as cst

from compat import _catalog
from compat.renames import CLASS_HELPERS, class_helper

from ._context import OTHER, Context
from ._facts import (
    _HOOK_MOVES,
    CONFIG_NAMES,
    HOLD_TRAINER,
    OLD_CALLBACK,
    OLD_MODULE,
    OLD_TRAINER,
    STRATEGY_HOOK_MOVES,
    missing_member,
)
from ._ids import TODO_PREFIX, Rule
from ._net import distinctive_hooks, distinctive_names, old_owner_of, uncalled_override
from ._rule import RuleCommand
from ._scopes import Binding, ClassInfo, FunctionInfo, Scope

__all__ = ["FlagOldOnlyNamesCommand"]

#: Parameters of a Callback hook that hold the running Trainer and the module it trains.
_HOOK_PARAMS = {"trainer": OLD_TRAINER, "pl_module": OLD_MODULE}
#: Attributes of a LightningModule/DataModule that hold its Trainer.
_OWN_TRAINER = frozenset({"trainer", "_trainer"})
#: Top-level packages whose classes the rules know (the old and new APIs, torch, numpy): a base
#: from one of them is not an unseen Lightning class.
_KNOWN_LIBRARIES = frozenset({_catalog.OLD_PACKAGE, *_catalog.TARGETS, "compat", "torch", "numpy"})


class FlagOldOnlyNamesCommand(RuleCommand):
    """Flag, after every other rule, each use of a name only the old API had (the safety net).

    The rules rewrite what the table names; this rule asks the catalogs (the 1.2-1.5 releases
    and the target) about everything that survived them, so that recall does not depend on the
    rules someone remembered to write. A member used on an object whose class is known (``self``
    in a subclass of an old class, ``trainer``/``pl_module`` in a ``Callback`` hook,
    ``self.trainer``/``self._trainer`` in a module, a name spelled or annotated like an old
    class, ``trainer.training_type_plugin``) gets a TODO when some old release had it and the
    class it becomes on the target lacks it: ``self.determine_ddp_device_ids()`` in a plugin
    re-based on ``DDPStrategy``, ``trainer.running_sanity_check`` in a callback. A member used on
    an object of unknown class, in a file that uses the old API, gets one when the name is
    distinctive: a public member of an old Trainer, module, callback, plugin or accelerator class
    that no class of either target has, with an inner underscore, neither a builtin nor a name
    other libraries use (``obj.accelerator_connector``, not ``obj.setup``). An override, in a
    subclass of an old class, of a method the old framework called and the new base never calls
    (``configure_ddp`` and ``set_world_ranks`` on ``DDPStrategy``) gets one naming where the code
    goes now.

    Names the file binds itself (its classes' members, attributes it assigns), sites another
    rule already rewrote or marked, and names the target still has are left alone. The example
    shows this rule alone.

    Before::

        from pytorch_lightning import Callback
        from pytorch_lightning.plugins import DDPPlugin

        class Plugin(DDPPlugin):
            def configure_ddp(self):
                self._model = wrap(self.model, self.determine_ddp_device_ids())

        class Printer(Callback):
            def on_train_batch_end(self, trainer, pl_module, *args):
                if not trainer.running_sanity_check:
                    print(trainer.progress_bar_dict)

    After::

        from pytorch_lightning import Callback
        from pytorch_lightning.plugins import DDPPlugin

        class Plugin(DDPPlugin):
            # TODO(compat.migrate): CM013 `DDPStrategy` never calls `configure_ddp` (the 1.x ...
            def configure_ddp(self):
                # TODO(compat.migrate): CM013 `DDPStrategy` has no `determine_ddp_device_ids` ...
                self._model = wrap(self.model, self.determine_ddp_device_ids())

        class Printer(Callback):
            def on_train_batch_end(self, trainer, pl_module, *args):
                # TODO(compat.migrate): CM013 `Trainer` has no `running_sanity_check` (it was on ...
                if not trainer.running_sanity_check:
                    # TODO(compat.migrate): CM013 `Trainer` has no `progress_bar_dict` (it was on ...
                    print(trainer.progress_bar_dict)
    """

    RULE = Rule.CM013
    RUNS_AFTER = tuple(rule for rule in Rule if rule != "CM013")

    def run(self, ctx: Context) -> None:
        if not ctx.uses_old_api and not self._old_classes(ctx):
            return
        done = self._done(ctx)
        self._todo_statements: dict[int, tuple[bool, list[str]]] = {}
        # The user's own names: members of the file's other classes and attributes it assigns.
        # Members of its subclasses of old classes are theirs only on `self`: a rule may rename
        # the override (`def predict` -> `def predict_step`), and `module.predict(...)` is still
        # the old API then.
        stores = {a.attr.value for a, _, store in ctx.analysis.attributes if store}
        own = stores | {n for c in ctx.analysis.classes if not ctx.user_old(c, new=True) for n in c.body.bindings}
        self._own_self = own | {n for c in ctx.analysis.classes for n in c.body.bindings}
        called = {a.attr.value for a, _, store in ctx.analysis.attributes if not store}
        self._overrides(ctx, done, called)
        functions = {id(f.node): f for f in ctx.analysis.functions}
        distinctive = distinctive_names()
        for attribute, scope, _ in ctx.analysis.attributes:
            name = attribute.attr.value
            if name in own or id(attribute) in ctx.answered or self._covered(ctx, attribute, name, done):
                continue
            local = ctx.local_base(attribute.value, scope)
            if local is not None and ctx.class_defines(local, name):
                continue  # `Model.add_argparse_args(...)` on a class of this file that defines it
            earlier = self._earlier(ctx, attribute, name)
            if earlier is not None:
                ctx.edits.todo(attribute, self.RULE, earlier)
                continue
            typed = self._typed(ctx, attribute.value, name, scope, functions)
            if typed is not None:
                old, new, exact = typed
                hint = missing_member(old, new, name, exact) if new else None
                if hint is not None:
                    ctx.edits.todo(attribute, self.RULE, hint)
                    continue
                if name not in distinctive:
                    continue
            if name in distinctive and ctx.uses_old_api and self._unknown(ctx, attribute.value, scope):
                hint = self._helper_hint(name) or (
                    f"`.{name}` is Lightning 1.x API (on `{old_owner_of(name)}`), gone from {self._where()}: "
                    "if this is a Lightning object, replace it (docs/migration.md) or drop it"
                )
                ctx.edits.todo(attribute, self.RULE, hint)

    def _helper_hint(self, name: str) -> str | None:
        """The hint for a class helper of 1.x (``X.from_argparse_args``) on a class not known here."""
        helpers = [h for h in CLASS_HELPERS if h.member == name]
        if not helpers:
            return None
        owners = ", ".join(f"`{h.owner.rpartition('.')[2]}`" for h in helpers)
        function = helpers[0].target(self.target)
        how = f"call `{function}(<the class>, ...)`" if function else helpers[0].hint
        return f"`.{name}` was a classmethod of {owners} in 1.x, gone from {self._where()}: if this is one, {how}"

    def _where(self) -> str:
        return "`strategies`" if self.target == "strategies" else "Lightning 2.x"

    @staticmethod
    def _old_classes(ctx: Context) -> bool:
        return any(ctx.user_old(info, new=True) for info in ctx.analysis.classes)

    # -- what the other rules did ------------------------------------------------------------

    @staticmethod
    def _done(ctx: Context) -> dict[int, list[str]]:
        """Statement (and expression) id -> the messages of the edits and TODOs other rules left on
        it; minus a statement's id -> those of its TODOs."""
        done: dict[int, list[str]] = {}
        for site, message, todo in ctx.edits.recorded():
            statement = id(ctx.analysis.statement(site))
            done.setdefault(statement, []).append(message)
            if todo:
                done.setdefault(-statement, []).append(message)
            if not hasattr(site, "leading_lines"):
                done.setdefault(id(site), []).append(message)
        return done

    def _covered(self, ctx: Context, node: cst.CSTNode, name: str, done: dict[int, list[str]]) -> bool:
        """Whether a rule already speaks of ``name`` here, or another rule's TODO (now, or from an
        earlier run) is on the statement: a person reads that statement anyway."""
        statement = ctx.analysis.statement(node)
        if -id(statement) in done or any(name in message for message in done.get(id(statement), ())):
            return True
        current: cst.CSTNode | None = node
        while current is not None and current is not statement:
            if id(current) in done:  # a rule's edit or TODO on this expression (or around it)
                return True
            current = ctx.analysis.parent(current)
        return self._other_todo(ctx, statement)

    def _other_todo(self, ctx: Context, statement: cst.CSTNode) -> bool:
        """Whether the statement's code (its leading comments included) holds another rule's TODO."""
        return self._comments(ctx, statement)[0]

    def _comments(self, ctx: Context, statement: cst.CSTNode) -> tuple[bool, list[str]]:
        """``(another rule's TODO is there, the hints of this rule's TODOs there)`` for a
        statement's code (its leading comments included, a compound statement's blocks not)."""
        if not ctx.todo_comments:  # a first run: no TODO anywhere, nothing to generate code for
            return False, []
        key = id(statement)
        if key not in self._todo_statements:
            code = ctx.analysis.module.code_for_node(_header(statement))
            own = f"{TODO_PREFIX}{self.RULE} "
            lines = [line.strip() for line in code.splitlines() if TODO_PREFIX in line]
            self._todo_statements[key] = (
                any(own not in line for line in lines),
                [line.partition(own)[2] for line in lines if own in line],
            )
        return self._todo_statements[key]

    def _earlier(self, ctx: Context, node: cst.CSTNode, name: str) -> str | None:
        """The hint of this rule's TODO about ``name`` left on the statement by an earlier run
        (kept as it is: a second run must not word it differently)."""
        hints = self._comments(ctx, ctx.analysis.statement(node))[1]
        return next((h for h in hints if f"`{name}`" in h or f"`.{name}`" in h), None)

    # -- receivers ---------------------------------------------------------------------------

    def _new(self, ctx: Context, old: str) -> str | None:
        entry = ctx.table.object(old)
        return ctx.table.new(entry) if entry is not None and ctx.table.auto(entry) else None

    def _typed(
        self, ctx: Context, value: cst.BaseExpression, name: str, scope: Scope, functions: dict[int, FunctionInfo]
    ) -> tuple[str, str | None, bool] | None:
        """``(old class, its new class, exact)`` of the object ``value`` (whose ``name`` is used)
        when it can be typed."""
        if isinstance(value, cst.Name):
            bound = ctx.bindings(value, scope)
            if len(bound) == 1 and bound[0].owner is not None:  # `self` in a method
                old = ctx.user_old(bound[0].owner, new=True)
                if old is None or not self._sees_bases(ctx, bound[0].owner):
                    return None
                if name in self._own_self:
                    return None  # a member the file's classes define
                return old, self._new(ctx, old), True
            if len(bound) == 1 and value.value in _HOOK_PARAMS and self._in_callback(ctx, bound[0], functions):
                old = _HOOK_PARAMS[value.value]
                return old, self._new(ctx, old), value.value == "trainer"
        if isinstance(value, cst.Attribute) and value.attr.value in _OWN_TRAINER and isinstance(value.value, cst.Name):
            for binding in ctx.bindings(value.value, scope):
                old = ctx.user_old(binding.owner, new=True) if binding.owner is not None else None
                if old is not None and ctx.table.ancestors(old) & HOLD_TRAINER:
                    return OLD_TRAINER, self._new(ctx, OLD_TRAINER), True
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
            if value.value.value.lower().strip("_") in CONFIG_NAMES:
                return None
        origin, sure = ctx.receiver_of(value, scope, new=True)
        if isinstance(origin, str) and sure != "config":
            return origin, self._new(ctx, origin), False
        return None

    @staticmethod
    def _sees_bases(ctx: Context, info: ClassInfo) -> bool:
        """Whether every base of the class is the library's or a class of this file (so its
        members are all known here); a user base in another file may define anything."""
        for arg in info.node.bases:
            origin = ctx.class_origin(arg.value, info.scope, new=True)
            if isinstance(arg.value, cst.Name):
                bound = ctx.bindings(arg.value, info.scope)
                if len(bound) == 1 and bound[0].kind == "class":
                    continue
            if origin is None or (isinstance(origin, str) and ctx.qualname(arg.value, info.scope) in ctx.user_classes):
                return False
        return True

    @staticmethod
    def _in_callback(ctx: Context, binding: Binding, functions: dict[int, FunctionInfo]) -> bool:
        if binding.kind != "param":
            return False
        info = functions.get(id(binding.scope.node))
        old = ctx.user_old(info.cls, new=True) if info is not None and info.cls is not None else None
        return old is not None and OLD_CALLBACK in ctx.table.ancestors(old)

    @staticmethod
    def _unknown(ctx: Context, value: cst.BaseExpression, scope: Scope) -> bool:
        """Whether ``value`` may be a Lightning object: not known to be another class, not a
        configuration object (``cfg.trainer``)."""
        root = value
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        if isinstance(root, cst.Name) and root.value.lower().strip("_") in CONFIG_NAMES:
            return False
        if ctx.receiver(value, scope, new=True) is not OTHER:
            return True
        # Known to be another class: trusted for the file's own classes, not for a class imported
        # from a library the tree does not hold (bolts' datamodules derive from the old ones).
        return isinstance(root, cst.Name) and any(b.kind == "import" for b in ctx.bindings(root, scope))

    # -- overrides ---------------------------------------------------------------------------

    def _overrides(self, ctx: Context, done: dict[int, list[str]], called: set[str]) -> None:
        for info in ctx.analysis.classes:
            old = ctx.user_old(info, new=True)
            if old is None and ctx.uses_old_api:
                self._unknown_base_hooks(ctx, info, done, called)
            new = self._new(ctx, old) if old is not None else None
            if old is None or not new:
                continue
            for statement in info.node.body.body:
                if not isinstance(statement, cst.FunctionDef):
                    continue
                name = statement.name.value
                if name in ctx.table.members or name in called or self._covered(ctx, statement, name, done):
                    continue  # the table's rules, the class's own calls, or CM011
                if any(class_helper(owner, name) for owner in ctx.table.ancestors(old)):
                    continue  # a class helper (`add_argparse_args`) that code calls, not a hook
                hint = self._earlier(ctx, statement, name) or uncalled_override(old, new, name, self.target)
                if hint is not None:
                    ctx.edits.todo(statement.name, self.RULE, hint)

    def _unknown_base_hooks(self, ctx: Context, info: ClassInfo, done: dict[int, list[str]], called: set[str]) -> None:
        """TODOs on overrides of distinctive old hooks (``distinctive_hooks``) in a class whose
        bases this file cannot see (imported from another library: NeMo's ``ModelPT``): no
        class of the target calls them, so if the base is a Lightning class, the code is dead."""
        bases = [arg.value for arg in info.node.bases if arg.keyword is None]
        if not bases or any(not self._unseen_base(ctx, base, info.scope) for base in bases):
            return
        hooks = distinctive_hooks()
        for statement in info.node.body.body:
            if not isinstance(statement, cst.FunctionDef):
                continue
            name = statement.name.value
            if name not in hooks or name in called or self._covered(ctx, statement, name, done):
                continue
            moved = _HOOK_MOVES.get(name) or STRATEGY_HOOK_MOVES.get(name)
            where = f"move its code to `{moved}`" if moved else "move its code where it still runs"
            base = ctx.analysis.module.code_for_node(bases[0])
            hint = self._earlier(ctx, statement, name) or (
                f"`{name}` is a Lightning 1.x hook (on `{old_owner_of(name)}`) that {self._where()} never "
                f"calls: if `{base}` is a Lightning class, {where}, or drop it"
            )
            ctx.edits.todo(statement.name, self.RULE, hint)

    @staticmethod
    def _unseen_base(ctx: Context, base: cst.BaseExpression, scope: Scope) -> bool:
        """Whether ``base`` is a class imported from a library the rules know nothing of (not
        torch, not the standard library, not a class of this file)."""
        if ctx.class_origin(base, scope, new=True) is not OTHER:
            return False  # an old class (the other checks), or nothing known
        if isinstance(base, cst.Name) and any(b.kind == "class" for b in ctx.bindings(base, scope)):
            return False  # a class of this file
        qualname = ctx.qualname(base, scope)
        if qualname is None:
            return False
        top = qualname.partition(".")[0]
        return top not in _KNOWN_LIBRARIES and top not in sys.stdlib_module_names


_PASS = cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])


def _header(statement: cst.CSTNode) -> cst.CSTNode:
    """A compound statement without its blocks (a TODO inside the body is about the body)."""
    if not isinstance(statement, cst.BaseCompoundStatement):
        return statement
    blocks = {"body": _PASS}
    for field in ("orelse", "finalbody"):
        if hasattr(statement, field):
            blocks[field] = None  # type: ignore[assignment]
    if hasattr(statement, "handlers"):
        blocks["handlers"] = ()  # type: ignore[assignment]
    return statement.with_changes(**blocks)
