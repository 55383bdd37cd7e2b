"""One turn of an agent (SPEC P1-P4, X2, T1): read, prompt, call the model and tools, deliver.

A turn, in order:

1. The person's message is added to the conversation (the same message again, a retried
   delivery, finds the turn that already answered it and runs nothing twice). A turn run
   again on a message whose earlier turn never ended (its process died: the caller knows, it
   holds the message's turn lock) marks that turn ``interrupted`` when it starts.
2. The run reads its state once (P2): the memory revision and ``MEMORY.md`` (memory-on
   conversations only), the current soul, the channel's instructions. The prompt is built from
   them by :func:`reverie.core.prompt.build_prompt`; the policy envelope is fixed (X2).
3. The session: when the revision differs from the one the conversation's transcript started
   under, a fresh transcript starts at this message (P4).
4. The model is called with the tools on offer; each tool call runs through the registry and
   its result goes back to the model, for at most ``max_tool_rounds`` rounds, then once more
   without tools so that it must answer. Before each model call the memory revision is checked
   again (P3).
5. Before delivery it is checked once more. If memory moved (a review, an admin, another turn),
   the answer is dropped and the failure notice is delivered instead; the next turn starts a
   fresh transcript. Otherwise the answer is added to the conversation and to the outbox.
   Each ending is one transaction with the turn's audit row.

A provider error ends the turn with a clear notice in the conversation's chat (the provider's
own message, which never holds a key), never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from reverie.config import Settings
from reverie.core.prompt import AgentState, ConversationView, Prompt, build_prompt
from reverie.core.secrets import redact
from reverie.errors import PermissionDenied, ReverieError
from reverie.llm.chat import ChatMessage, ChatProvider, ChatReply
from reverie.store.conversations import Conversation, ConversationStore
from reverie.store.instructions import InstructionStore
from reverie.store.memories import MemoryStore
from reverie.store.outbox import Delivery, Outbox
from reverie.store.souls import SoulStore
from reverie.store.state import SQLiteState
from reverie.store.turns import ANSWERED, TurnLog, TurnRecord

from .policy import PolicyEnvelope, request_intents
from .tools import Registry, Services, Tool, ToolContext, ToolOutcome

_log = logging.getLogger(__name__)


def _model_failure(exc: ReverieError) -> str:
    """A model failure as the chat's notice says it: whether trying again later may help (no
    answer, a busy or failing server) or not (a refused key, an unknown model, a refused
    request: an admin must change a setting), and where an admin finds why."""
    status = exc.details.get("status")
    if exc.code == "model_bad_answer":
        what, then = "its answer could not be read", "Please try again"
    elif status is None:
        what, then = "it could not be reached just now", "Please try again in a little while"
    elif status == 429 or (isinstance(status, int) and status >= 500):
        busy = "it is busy" if status == 429 else "it failed"
        what, then = f"{busy} just now", "Please try again in a little while"
    else:
        what, then = "it refused the request", "Trying again will not help until an admin fixes it"
    return f"{what}. {then}; an admin finds the reason in the server log."


__all__ = [
    "STALE_NOTICE",
    "Host",
    "TurnEvent",
    "TurnResult",
    "read_state",
    "run_turn",
]

#: Delivered instead of an answer that was built on a memory that changed under it (P3).
STALE_NOTICE = (
    "My memory changed while I was answering, so I dropped that answer rather than give you "
    "one built on what I knew before. Please send your message again."
)
#: Tool logs longer than this are cut in the conversation (the model saw them whole).
_TOOL_LOG_CHARS = 4000


class Host(Services, Protocol):
    """What a turn needs of the facade: its stores and the tool services."""

    settings: Settings
    state: SQLiteState
    memories: MemoryStore
    conversations: ConversationStore
    souls: SoulStore
    instructions: InstructionStore
    outbox: Outbox
    turns: TurnLog


@dataclass(frozen=True)
class TurnEvent:
    """Something a surface may show while a turn runs: streamed ``text``, a ``tool_call``
    and its ``tool_result``, or the ``notice`` delivered instead of an answer."""

    kind: str
    text: str = ""
    tool: str = ""
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[TurnEvent], None]


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: its audit, the answer or the notice, and what went to the outbox."""

    turn: TurnRecord
    #: The delivered answer; None when it was dropped or the model failed.
    answer: str | None
    #: The notice delivered instead (P3, a model error); None when the answer was delivered.
    notice: str | None
    deliveries: list[Delivery]
    #: True when this request was answered before (a retried delivery) and nothing ran.
    replayed: bool = False

    @property
    def outcome(self) -> str:
        """``delivered``, ``dropped_stale`` or ``model_error``."""
        return self.turn.outcome


def read_state(host: Host, conv: Conversation) -> AgentState:
    """What a run reads at its start (P2): memory (if on), soul, channel instructions."""
    agent = host.state.get_agent(conv.agent_id)
    index: str | None = None
    revision: int | None = None
    if conv.memory_on:
        f = host.memories.read(host.state.memory_of(agent.id))
        index, revision = f.text, f.revision
    soul = host.souls.current(agent.id)
    instructions = host.instructions.instructions(agent.id, conv.channel_id)
    return AgentState(
        agent=agent.name,
        soul=soul.text,
        soul_version=soul.version,
        instructions=instructions.text,
        instructions_version=instructions.version,
        index=index,
        memory_revision=revision,
        framing=agent.memory_framing,
        memory_writable=agent.memory_writers == "conversations",
    )


def run_turn(
    host: Host,
    provider: ChatProvider,
    registry: Registry,
    conversation_id: str,
    text: str,
    *,
    author: str | None = None,
    message_id: str | None = None,
    intents: Sequence[str] = (),
    on_event: EventSink | None = None,
    stream: bool = False,
    resume: bool = False,
) -> TurnResult:
    """Run one turn of the conversation's agent on the person's message ``text``.

    ``resume``: the caller runs again the turn of a message whose turn was cut short, and
    knows that no live process runs it (it holds the message's turn lock): a turn of that
    message still ``running`` is marked ``interrupted`` in the transaction that records this
    one. Without it such a turn is left as it is (it may still be under way elsewhere).

    Raises:
        NotFound: no such conversation, or it was deleted.
        PermissionDenied: ``agent_archived``.
        RefusedInput: a bad message (as :meth:`ConversationStore.append` refuses it).
    """
    conv = host.conversations.get(conversation_id)
    if conv.memory_mode is None:
        conv = host.conversations.classify(conv.id)  # O2: classified on its next run
    agent = host.state.get_agent(conv.agent_id)
    if agent.archived:
        raise PermissionDenied(
            f"Agent {agent.name} is archived: it does not answer. Restore it to use it again.",
            code="agent_archived",
            agent=agent.name,
        )
    appended = host.conversations.append(
        conv.id, "user", text, author=author, message_id=message_id
    )
    if not appended.added:
        earlier = host.turns.for_conversation(conv.id, appended.position, appended.position + 1)
        done = [t for t in earlier if t.outcome in ANSWERED]
        if done:
            return _replay(host, done[-1])
    conv = host.conversations.get(conv.id)
    state = read_state(host, conv)
    prompt = build_prompt(
        state, ConversationView(conv.id, conv.memory_on), host.settings.prompt_index_chars
    )
    turn_id = "turn_" + uuid.uuid4().hex[:12]
    envelope = PolicyEnvelope(
        turn=turn_id,
        conversation=conv.id,
        author=author,
        channel_kind=conv.channel_kind,
        memory_injected=prompt.memory_revision is not None,
        memory_revision=prompt.memory_revision,
        intents=request_intents(text, registry.intents(), intents),
    )
    with host.state.transaction() as conn:
        session = host.turns.session(conn, conv.id, prompt.memory_revision, appended.position)
        started = time.time()
        if resume:
            host.turns.interrupt(conn, conv.id, appended.position, started)
        record = TurnRecord(
            id=turn_id,
            conversation_id=conv.id,
            agent_id=agent.id,
            session_key=session.key,
            request_position=appended.position,
            answer_position=None,
            started_at=started,
            finished_at=None,
            outcome="running",
            memory_revision=prompt.memory_revision,
            soul_version=prompt.soul_version,
            instructions_version=prompt.instructions_version,
            envelope=envelope.to_dict(),
        )
        host.turns.start(conn, record)
    turn = _Turn(host, provider, registry, conv, state, prompt, envelope, record, on_event, stream)
    return turn.run(_transcript(host, conv, session.start_position, appended.position))


def _replay(host: Host, record: TurnRecord) -> TurnResult:
    deliveries = host.outbox.for_task(record.id)
    answer = next((d.text for d in deliveries if d.kind == "answer"), None)
    notice = next((d.text for d in deliveries if d.kind == "notice"), None)
    return TurnResult(record, answer, notice, deliveries, replayed=True)


def _transcript(host: Host, conv: Conversation, start: int, upto: int) -> list[ChatMessage]:
    """The session's user and assistant messages, ``start`` through ``upto``; in a shared
    chat each person's message is marked with their name."""
    shared = conv.channel_kind in ("channel", "group")
    out: list[ChatMessage] = []
    for m in host.conversations.messages(conv.id, start, upto + 1):
        if m.role == "user":
            out.append(
                ChatMessage("user", f"[{m.author}] {m.text}" if shared and m.author else m.text)
            )
        elif m.role == "assistant":
            out.append(ChatMessage("assistant", m.text))
    return out


class _Turn:
    """The mutable part of one turn: the transcript, the tools' context, the costs."""

    def __init__(
        self,
        host: Host,
        provider: ChatProvider,
        registry: Registry,
        conv: Conversation,
        state: AgentState,
        prompt: Prompt,
        envelope: PolicyEnvelope,
        record: TurnRecord,
        on_event: EventSink | None,
        stream: bool,
    ) -> None:
        self.host = host
        self.provider = provider
        self.conv = conv
        self.prompt = prompt
        self.record = record
        self.emit = on_event or (lambda event: None)
        self.stream = stream
        self.offered: list[Tool] = registry.offered(
            memory_on=prompt.memory_revision is not None, memory_writable=state.memory_writable
        )
        self.registry = registry
        self.ctx = ToolContext(
            host, state.agent, conv.id, envelope, bound_revision=prompt.memory_revision
        )
        self.memory_id = (
            host.state.memory_of(conv.agent_id) if prompt.memory_revision is not None else None
        )
        self.calls: list[dict[str, Any]] = []
        self.model_calls = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.model: str | None = None

    def run(self, transcript: list[ChatMessage]) -> TurnResult:
        rounds = self.host.settings.max_tool_rounds
        specs = [t.spec for t in self.offered]
        answer = ""
        for round_ in range(rounds + 1):
            if self._memory_moved():
                return self._drop()
            tools = specs if round_ < rounds else []
            try:
                reply = self._ask(transcript, tools)
            except ReverieError as exc:  # ProviderError, translated at the llm boundary
                return self._model_error(exc)
            if not reply.tool_calls or not tools:
                answer = reply.text.strip()
                break
            transcript.append(ChatMessage("assistant", reply.text, reply.tool_calls))
            for call in reply.tool_calls:
                outcome = self._call(call)
                transcript.append(ChatMessage("tool", outcome.content(), tool_call_id=call.id))
        if self._memory_moved():
            return self._drop()
        return self._deliver(answer)

    def _ask(self, transcript: list[ChatMessage], tools: list[Any]) -> ChatReply:
        on_text = (lambda piece: self.emit(TurnEvent("text", piece))) if self.stream else None
        reply = self.provider.chat(
            self.prompt.system,
            transcript,
            tools=tools,
            max_tokens=self.host.settings.chat_answer_tokens,
            on_text=on_text,
        )
        self.model_calls += 1
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        self.model = reply.model or self.model
        return reply

    def _call(self, call: Any) -> ToolOutcome:
        self.emit(TurnEvent("tool_call", tool=call.name, data={"arguments": call.arguments}))
        outcome = self.registry.call(self.ctx, call, self.offered)
        self.calls.append(
            {"id": call.id, "name": call.name, "ok": outcome.ok, "code": outcome.code}
        )
        self.emit(
            TurnEvent("tool_result", tool=call.name, data={"ok": outcome.ok, "code": outcome.code})
        )
        # A credential the model passed (and the store refused) stays out of the log: the
        # arguments are logged as decoded, so that one written with JSON escapes ("\/",
        # "\u0067hp_") is seen as the store saw it; the model's raw text only when it was
        # no JSON object.
        decoded = isinstance(call.arguments, dict) and call.arguments
        args = json.dumps(call.arguments, ensure_ascii=False) if decoded else call.raw or "{}"
        log = redact(f"{call.name} {args}\n-> {outcome.content()}")
        if len(log) > _TOOL_LOG_CHARS:
            log = log[:_TOOL_LOG_CHARS] + " …"
        # The audit row names the call either way: a refused log line is not worth the turn.
        with contextlib.suppress(ReverieError):
            self.host.conversations.append(self.conv.id, "tool", log, author=call.name)
        return outcome

    def _memory_moved(self) -> bool:
        """P3: has memory moved past the revision this turn is bound to?"""
        if self.memory_id is None:
            return False
        return self.host.memories.current(self.memory_id).revision != self.ctx.bound_revision

    def _finish(self, outcome: str, **changes: Any) -> TurnRecord:
        return replace(
            self.record,
            outcome=outcome,
            finished_at=time.time(),
            tools=self.calls,
            model=self.model,
            model_calls=self.model_calls,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            memory_revision=self.ctx.bound_revision
            if self.prompt.memory_revision is not None
            else None,
            **changes,
        )

    def _deliver(self, answer: str) -> TurnResult:
        if not answer:
            return self._notice("model_error", "The model gave no answer. Please try again.")
        with self.host.state.transaction() as conn:
            appended = self.host.conversations.append_in(
                conn, self.conv.id, "assistant", answer, author=self.ctx.agent
            )
            self.host.outbox.enqueue(
                conn,
                agent_id=self.conv.agent_id,
                conversation_id=self.conv.id,
                channel_id=self.conv.channel_id,
                kind="answer",
                text=answer,
                task=self.record.id,
            )
            record = self._finish("delivered", answer_position=appended.position)
            self.host.turns.finish(conn, record)
        return TurnResult(record, answer, None, self.host.outbox.for_task(record.id))

    def _drop(self) -> TurnResult:
        self.emit(TurnEvent("notice", STALE_NOTICE, data={"reason": "memory_moved"}))
        return self._notice("dropped_stale", STALE_NOTICE)

    def _model_error(self, exc: ReverieError) -> TurnResult:
        # The notice is posted to whoever is in the chat and kept in the outbox: it says what
        # happened, never the endpoint, the model or what its server said (secrets are blanked
        # by the provider layer, but an address is no one's business there). That detail goes
        # to the server log, and to the surface in the event's data (the terminal shows it).
        _log.warning("turn %s: the model failed (%s): %s", self.record.id, exc.code, exc.message)
        text = f"I could not get an answer from the model: {_model_failure(exc)}"
        self.emit(TurnEvent("notice", text, data={"reason": exc.code, "detail": exc.message}))
        return self._notice("model_error", text, error=exc.code)

    def _notice(self, outcome: str, text: str, error: str | None = None) -> TurnResult:
        with self.host.state.transaction() as conn:
            self.host.outbox.enqueue(
                conn,
                agent_id=self.conv.agent_id,
                conversation_id=self.conv.id,
                channel_id=self.conv.channel_id,
                kind="notice",
                text=text,
                task=self.record.id,
            )
            record = self._finish(outcome, error=error)
            self.host.turns.finish(conn, record)
        return TurnResult(record, None, text, self.host.outbox.for_task(record.id))
