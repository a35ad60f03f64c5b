"""Where tasks live: a task id (or a unique prefix) -> the endpoint that holds it, references
with what is needed to reach a task again (MCP session, A2A context), and what a run records in
the task book about the tasks it saw."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.model.refs import TaskRef
    from mcptask.model.task import Task
    from mcptask.protocols.trace_context import TaskTrace
    from mcptask.session.context import Context


def observed(task: Task) -> dict[str, Any]:
    """What the book keeps of a task's state as seen: its status and message, the server's
    times and pace."""
    return {
        "status": task.status,
        "statusMessage": task.statusMessage,
        "lastUpdatedAt": task.lastUpdatedAt,
        "createdAt": task.createdAt,
        "pollInterval": task.pollInterval,
        "ttl": task.ttl,
        "inputRequests": task.inputRequests,
    }


def _ambiguous_prefix(prefix: str, hits: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{tid} ({ep})" for ep, tid in hits[:10])
    more = f" and {len(hits) - 10} more" if len(hits) > 10 else ""
    return f"{prefix!r} is the start of {len(hits)} task ids: {shown}{more}; give more of it"


def _spoken(ctx: Context, records: list[dict[str, Any] | None]) -> None:
    """The protocol the book recorded with these tasks (when they agree): the one their
    endpoint is spoken to in, unless `-p` says otherwise (`Endpoint.protocol`)."""
    names = {r.get("protocol") for r in records if r is not None}
    if len(names) == 1:
        [name] = names
        if isinstance(name, str):
            ctx.endpoint.recorded = name


class Places:
    """The task-book side of one run's context (`ctx.places`)."""

    #: sessions kept per endpoint without a task (a lost `tools/call` answer), the newest last
    SESSIONS_KEPT = 20

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        #: ids of the tasks this run has seen (over stdio, the only reachable ones)
        self.seen: set[str] = set()
        #: the clock skew the book holds for the endpoint (NaN: none), once read
        self._skew_kept: float | None = None
        #: each task's trace as this run knows it (made, read from the book, or derived)
        self.traces: dict[str, TaskTrace] = {}

    @property
    def remembers(self) -> bool:
        """The book's references reach the target's tasks again (HTTP endpoints: a stdio
        server's tasks die with its process)."""
        target = self._ctx.target
        return target.command is None and not target.ephemeral

    @property
    def records(self) -> bool:
        """What this run sees is recorded: every target but a throwaway one (the demo's);
        stdio servers too, keyed by their command line (their results outlive them)."""
        return not self._ctx.target.ephemeral

    # -- which endpoint a task id lives on -------------------------------------------------------

    def locate(self, task_id: str) -> tuple[Context, str]:
        """The context that reaches `task_id`, and the whole id (a unique prefix of at least
        four characters stands for an id the task book knows). With a target, that target;
        without one, the task book's endpoint for the id."""
        [(ctx, [found])] = self.locate_many([task_id])
        return ctx, found

    def locate_many(self, task_ids: Iterable[str]) -> list[tuple[Context, list[str]]]:
        """Task ids grouped by the context that reaches them, in the order first given."""
        from mcptask.session.targets import NoTarget

        ids = list(task_ids)
        for task_id in ids:
            if not task_id.strip():  # blank too: it would only become a request
                raise UsageError("a task id cannot be empty")
        ctx = self._ctx
        if ctx.has_target():
            expanded, known = self._expand_many(ids)
            _spoken(ctx, known)
            return [(ctx, expanded)]
        groups: dict[str, dict[str, None]] = {}
        records: dict[str, list[dict[str, Any] | None]] = {}
        found = self._ctx.book.find_many(ids)  # one read of the book, by index
        for task_id in ids:
            endpoint, full, rec = self._find(task_id, NoTarget, found.get(task_id))
            groups.setdefault(endpoint, {})[full] = None
            records.setdefault(endpoint, []).append(rec)
        out = []
        for endpoint, tasks in groups.items():
            child = ctx.at(endpoint)
            _spoken(child, records[endpoint])
            out.append((child, list(tasks)))
        return out

    def _expand_many(self, task_ids: list[str]) -> tuple[list[str], list[dict[str, Any] | None]]:
        """Each id as a whole id: the ids the book knows on this endpoint in one query per
        batch (with what their references take, the protocol among it); only the others are
        looked up as prefixes (a unique prefix of at least MIN_PREFIX characters of one of
        this endpoint's ids in the book), all in one read. (whole ids, the book's records
        where it has them)."""
        from mcptask.state.taskbook import MIN_PREFIX

        if not self.remembers or all(len(t) < MIN_PREFIX for t in task_ids):
            return task_ids, [None] * len(task_ids)
        server = self._ctx.server
        known = self._ctx.book.refs_many(server, task_ids)
        unknown = [t for t in task_ids if t not in known and len(t) >= MIN_PREFIX]
        hits = self._ctx.book.find_prefixes(server, unknown) if unknown else {}
        out: list[tuple[str, dict[str, Any] | None]] = []
        for t in task_ids:
            if t in known:
                out.append((t, known[t]))
                continue
            matches = hits.get(t, [])
            if len(matches) > 1:
                raise UsageError(_ambiguous_prefix(t, [(server, m) for m in matches]))
            out.append((matches[0] if matches else t, None))
        return [full for full, _ in out], [rec for _, rec in out]

    def _find(
        self,
        task_id: str,
        no_target: type[UsageError],
        hits: list[tuple[str, str, dict[str, Any]]] | None = None,
    ) -> tuple[str, str, dict[str, Any]]:
        """(endpoint, whole id, record) of a task the book knows, for a run without a
        target."""
        if hits is None:
            hits = self._ctx.book.find(task_id)
        if not hits:
            from mcptask.state.taskbook import MIN_PREFIX

            short = (
                f" (a prefix of a task id needs at least {MIN_PREFIX} characters)"
                if len(task_id) < MIN_PREFIX
                else ""
            )
            raise no_target(
                f"task {task_id} is not in the task book{short}, so mcptask does not know where "
                "it lives: give a target for tasks this machine has not seen (--url URL, "
                "--stdio CMD or -s NAME)"
            )
        ids = {tid for _, tid, _ in hits}
        if len(ids) > 1:
            raise UsageError(_ambiguous_prefix(task_id, [(ep, tid) for ep, tid, _ in hits]))
        if len(hits) > 1:
            where = "; ".join(sorted(ep for ep, _, _ in hits))
            raise UsageError(
                f"task {task_id} is known on {len(hits)} endpoints ({where}): pick one with "
                "--url URL or -s NAME"
            )
        return hits[0]

    def require_reachable(self, command: str, task_ids: list[str]) -> None:
        """Over stdio a task dies with the server process: a task id from the command line
        cannot be on the server this run would spawn (usage error, before spawning)."""
        if self._ctx.target.command is None:
            return
        from mcptask.session.targets import unreachable_over_stdio

        for task_id in task_ids:
            if task_id not in self.seen:
                raise unreachable_over_stdio(command, task_id)

    # -- references and records -----------------------------------------------------------------

    def ref(self, task_id: str) -> TaskRef:
        """A task's reference from the task book, with `--session`/`--context-id` on top and
        its trace: the reference of a request about the task."""
        return self.refs([task_id])[0]

    def refs(self, task_ids: Iterable[str]) -> list[TaskRef]:
        """Many references from one read of the task book (one query per batch of ids),
        each with its trace (`trace`)."""
        ids = list(task_ids)
        book = self._ctx.book.refs_many(self._ctx.server, ids) if self.remembers and ids else {}
        return self.refs_from(ids, book, traced=True)

    def known(self) -> dict[str, dict[str, Any]]:
        """Every task of the endpoint that the book knows: its status and what its reference
        takes (`TaskBook.refs_many`), in one query; nothing where the book does not reach
        the target's tasks again."""
        return self._ctx.book.refs_many(self._ctx.server) if self.remembers else {}

    def known_sessions(self) -> list[str | None]:
        """The sessions the book's tasks of the endpoint were recorded in (None: a task
        recorded without one; `--session` instead, when given), then those
        `remember_session` kept: where a session-bound server's tasks can be listed."""
        given = self._ctx.options.session
        if not self.remembers:
            return [given] if given else []
        found: list[str | None] = [given] if given else self._ctx.book.sessions(self._ctx.server)
        return list(dict.fromkeys([*found, *self.orphan_sessions()]))

    def refs_from(
        self,
        task_ids: Iterable[str],
        book: dict[str, dict[str, Any]],
        *,
        traced: bool = False,
    ) -> list[TaskRef]:
        """References of `task_ids` from records the caller read (`known`, `refs_many`),
        with `--session`/`--context-id` on top; `traced`: each with its trace (`trace`),
        for requests about the tasks (a list needs none)."""
        from mcptask.model.refs import TaskRef

        options = self._ctx.options
        protocol = self._ctx.endpoint.built
        out = []
        for task_id in task_ids:
            rec = book.get(task_id) or {}
            if protocol is not None and rec:
                protocol.recall(task_id, rec)  # what earlier runs saw of it
            session = options.session or rec.get("session")
            context = options.context_id or rec.get("contextId")
            version = rec.get("protocolVersion")
            out.append(
                TaskRef(
                    task_id=task_id,
                    session=session if isinstance(session, str) else None,
                    context_id=context if isinstance(context, str) else None,
                    version=version if isinstance(version, str) else None,
                    trace=self.trace(task_id, rec) if traced else None,
                )
            )
        return out

    def trace(self, task_id: str, rec: dict[str, Any] | None = None) -> TaskTrace:
        """A task's trace: the one this run made or read, else the one the book keeps with
        it (`rec`, its record), else ids derived from the endpoint and the task, under the
        trace the command names (`Context.name_trace`); kept in the book with the task's
        next record. A task that has a trace keeps it whatever trace is named; the named
        trace's `tracestate` goes only with requests in that trace."""
        known = self.traces.get(task_id)
        if known is not None:
            return known
        from mcptask.protocols.trace_context import TaskTrace
        from mcptask.text.traceparent import TraceIds, derived_ids

        given = self._ctx.trace_given
        parent = given.parent if given is not None else None
        ids = TraceIds.from_fields(rec) if rec and "traceId" in rec else None
        if ids is None:
            ids = derived_ids(self._ctx.server, task_id, parent)
        state = given.state if given is not None and parent is not None else None
        if parent is not None and ids.trace_id != parent.trace_id:
            state = None
        made = self.traces[task_id] = TaskTrace(ids, state)
        return made

    def new_trace(self) -> TaskTrace:
        """The trace of a task this run is about to start (`call`, `send`): a new trace, or
        a span in the one the command names; `keep_trace` once the task's id is known."""
        from mcptask.protocols.trace_context import TaskTrace
        from mcptask.text.traceparent import new_ids

        given = self._ctx.trace_given
        parent = given.parent if given is not None else None
        return TaskTrace(new_ids(parent), given.state if given is not None and parent else None)

    def keep_trace(self, ref: TaskRef, trace: TaskTrace | None) -> None:
        """The trace a new task was started in: its reference's, and this run's for it (the
        book keeps it with the task's record)."""
        if trace is not None:
            ref.trace = self.traces[ref.task_id] = trace

    def remember(self, task: Task, ref: TaskRef, **extra: Any) -> None:
        self.remember_many([(task, ref)], **extra)

    def remember_many(
        self,
        seen: list[tuple[Task, TaskRef]],
        *,
        each: dict[str, dict[str, Any]] | None = None,
        events: list[dict[str, Any]] | None = None,
        via: str | None = None,
        **extra: Any,
    ) -> None:
        """Record tasks in the task book, in one transaction; `each` adds fields to some
        tasks (by id: a watch's results, when and how each was seen), `extra` to all.
        A change of status or message is an event in the book's log; `events` adds more."""
        self.seen.update(task.taskId for task, _ in seen)
        protocol = self._ctx.endpoint.built
        if not self.records or protocol is None or not (seen or events):
            return
        from mcptask.state.taskbook import TURNS, VIA

        updates: dict[str, dict[str, Any]] = {}
        for task, ref in seen:
            fields: dict[str, Any] = (
                protocol.book_fields(ref) if self.remembers else {"protocol": protocol.name}
            )
            fields.update(observed(task))
            if ref.trace is not None:
                fields.update(ref.trace.ids.fields())
            fields.update(protocol.seen_fields(task))
            if via is not None:
                fields[VIA] = via
            if extra:
                fields.update(extra)
            mine = each.get(task.taskId) if each else None
            if mine:
                fields.update(mine)
            if task.contextId and not fields.get("contextId"):
                fields["contextId"] = task.contextId
            if task.createdAt and task.ttl is not None:  # a task lost inside it is told apart
                fields.update(createdAt=task.createdAt, ttl=task.ttl)
            turns = protocol.history_turns(task)
            if turns:
                fields[TURNS] = turns
            updates[task.taskId] = fields
        self._ctx.book.record_set(
            self._ctx.server, updates, events=events, command=self._ctx.command
        )
        self._keep_skew()

    #: a measured clock skew is written again when it moved by more than this (seconds)
    SKEW_MOVED = 0.25

    def _keep_skew(self) -> None:
        """The server's clock against this machine's, kept with the endpoint: `log` and `why`
        take it out when they order the server's times among mcptask's own."""
        skew = self._ctx.endpoint.clock_skew()
        if skew is None:
            return
        if self._skew_kept is None:
            kept = self._ctx.book.endpoint(self._ctx.server).get("clockSkew")
            self._skew_kept = float(kept) if isinstance(kept, int | float) else float("nan")
        if not abs(skew - self._skew_kept) <= self.SKEW_MOVED:  # NaN: none kept yet
            self._ctx.book.set_endpoint(self._ctx.server, clockSkew=skew)
            self._skew_kept = skew

    def note(self, task_id: str, kind: str, **fields: Any) -> None:
        """One event about a task (a cancel asked, an answer sent, an error) in the log."""
        from mcptask.model.events import event

        self.note_events([event(task_id, kind, **fields)])

    def note_events(self, events: list[dict[str, Any]]) -> None:
        """Events about tasks in the log, when this run records (`model.events.event`)."""
        if not self.records or not events:
            return
        self._ctx.book.add_events(self._ctx.server, events, command=self._ctx.command)

    def remember_session(self, session: str) -> None:
        """Keep a session in which a task may exist that the book does not know (its
        creation's answer was lost), so that `list` looks there too."""
        others = [s for s in self.orphan_sessions() if s != session]
        kept = [*others[-(self.SESSIONS_KEPT - 1) :], session]
        self._ctx.book.set_endpoint(self._ctx.server, sessions=kept)

    def orphan_sessions(self) -> list[str]:
        """The sessions `remember_session` kept for this endpoint."""
        if not self.remembers:
            return []
        kept = self._ctx.book.endpoint(self._ctx.server).get("sessions")
        return [s for s in kept if isinstance(s, str)] if isinstance(kept, list) else []
