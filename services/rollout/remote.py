"""Episodes through the device runners: a Device whose calls travel over the topics.

`RemoteDevice` implements the Device protocol (and the harness's optional `advance`,
`call_tool`, `device_state`) by sending `action.requested` to `flywheel.actions`, keyed by its
device id, and waiting for the `observation.recorded` or `device.failed` that answers it on
`flywheel.observations`. The rollout wraps it in a Harness exactly as it wraps a SimPhone, so
planner actions (memory, skills, delegation, answers) stay in the rollout and only device work
crosses the wire. Request 0 of an episode carries the whole task instance (the runner resets
to it); the last, a `device_state` request, brings back the device part of the final state.
An answer whose screen did not change since an earlier answer of the episode names that step
(`screen_as_step`) instead of repeating the screen (a tool call leaves the screen as it was);
the device puts the screen back, and an answer naming a screen it never sent loses the device.

No call blocks forever: a request unanswered within `timeout_s` raises DeviceLost (and so
does a `device.failed` answer; a failed reset raises DeviceError), and the device then counts
as lost until the next reset, so the episode ends with a failure event at once.

`ReplyRouter` is the one reader of the observations topic per rollout: a thread that hands
each answer to the request waiting for it (matched by causation id = the request's event id).
It decodes only answers keyed by an episode with a request waiting: with several rollouts on
one topic, each decodes its own answers, not everyone's.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from devices.protocol import DeviceError, DeviceLost, TaskInstance
from schemas.actions import Action, ToolCall, Wait
from schemas.episodes import ActionRequested, DeviceFailed, ObservationRecorded
from schemas.observations import Observation, ToolResult
from schemas.topics import TOPICS, Topic
from services.dataflow.tasks import task_params_for
from streams.consumer import TypedBatchConsumer
from streams.lifecycle import Closing
from streams.producer import TypedProducer

__all__ = ["ACTIONS", "OBSERVATIONS", "RemoteDevice", "ReplyRouter"]

logger = logging.getLogger(__name__)

ACTIONS = TOPICS["flywheel.actions"]
OBSERVATIONS = TOPICS["flywheel.observations"]
SOURCE = "rollout/1.0.0"
#: The local broker holds an empty fetch for the whole max wait: keep a reply's wait short.
FETCH_MAX_WAIT_MS = 20
POLL_MS = 100
#: What request sends where its action does not matter (observe, advance, device_state).
_NO_ACTION = Wait()

Reply = ObservationRecorded | DeviceFailed


class ReplyRouter(Closing):
    """Sends requests and routes their answers: one producer, one reader thread."""

    def __init__(self, bootstrap: str, *, actions: Topic = ACTIONS,
                 observations: Topic = OBSERVATIONS, client_id: str = "rollout-remote") -> None:
        self.actions = actions
        self._waiting: dict[str, Future[Reply]] = {}
        self._episodes: Counter[bytes] = Counter()  # keys (episode ids) of the waiting requests
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # A request is sent alone and waited on: no linger (the default 5 ms batches events).
        self._producer = TypedProducer(bootstrap, client_id=client_id, linger_ms=0)
        # No group: every partition, from its end (positioned now, before any request goes
        # out, so no answer can slip past); answers to nobody's request are skipped.
        self._consumer = TypedBatchConsumer(bootstrap, [observations], None,
                                            client_id=client_id, auto_offset_reset="latest",
                                            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
                                            wanted=self._episodes.__contains__)
        self._consumer.seek_to_end()
        self._late = 0
        self._thread = threading.Thread(target=self._read, name="rollout-replies", daemon=True)
        self._thread.start()

    def request(self, event: ActionRequested, timeout_s: float) -> Reply:
        """Sends `event` and returns its answer; raises DeviceLost after `timeout_s`."""
        future: Future[Reply] = Future()
        key = event.episode_id.encode()
        with self._lock:
            self._waiting[event.event_id] = future
            self._episodes[key] += 1
        try:
            self._producer.send(self.actions, event)
            return future.result(timeout_s)
        except FutureTimeout:
            raise DeviceLost(f"{event.device_id} did not answer {event.request} (request "
                             f"{event.step} of episode {event.episode_id}) within "
                             f"{timeout_s:g} s") from None
        finally:
            with self._lock:
                self._waiting.pop(event.event_id, None)
                self._episodes[key] -= 1
                if self._episodes[key] <= 0:
                    del self._episodes[key]

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                records = self._consumer.poll_batch(POLL_MS)
            except Exception:  # waiting requests time out; the loop goes on
                logger.exception("reading replies failed")
                self._stop.wait(0.5)
                continue
            for record in records:
                event = record.event
                if not isinstance(event, (ObservationRecorded, DeviceFailed)):
                    continue
                with self._lock:
                    future = self._waiting.pop(event.causation_id or "", None)
                if future is None:
                    self._late += 1  # a second answer, or one after its request gave up
                elif not future.done():
                    future.set_result(event)

    @property
    def unmatched(self) -> int:
        """Answers no waiting request took: other rollouts' (passed over undecoded) and late ones."""
        return self._consumer.passed_over + self._late

    def close(self) -> None:
        self._stop.set()
        self._thread.join(POLL_MS / 1000 * 20)
        self._consumer.close()
        self._producer.close()


class RemoteDevice:
    """A phone served by a device runner (sim or real), driven over the topics."""

    def __init__(self, device_id: str, router: ReplyRouter, *, timeout_s: float = 10.0,
                 tools: Mapping[str, Any] | None = None) -> None:
        self.device_id = device_id
        self.router = router
        self.timeout_s = timeout_s
        if tools is None:  # a sim runner's phone has the sim's tools
            from devices.sim.tools import REGISTRY

            tools = {name: t.spec for name, t in REGISTRY.items()}
        self.tools = dict(tools)
        self.episode_id: str | None = None
        self.correlation_id: str | None = None
        self._step = 0
        self._attempt = 0  # bumped by every reset: a late failure of an abandoned call (the
        # rollout's own call timeout gave up on it) must not mark the next episode lost
        self._lost: str | None = None
        self._view: Observation | None = None  # the current view, when nothing changed since
        self._screen: tuple[int | None, list[Any]] = (None, [])  # the last screen sent in full, and its step

    def bind(self, episode_id: str, correlation_id: str | None = None) -> None:
        """Names the next episode (the rollout's episode id), before `reset`."""
        self.episode_id, self.correlation_id = episode_id, correlation_id

    # ---- Device protocol ---------------------------------------------------------------
    def reset(self, task: TaskInstance) -> Observation:
        episode_id = self.episode_id or f"{task.task_id}-{uuid.uuid4().hex[:8]}"
        self.episode_id, self._step, self._lost = episode_id, 0, None
        self._screen = (None, [])
        self._attempt += 1
        reply = self._send("observe", _NO_ACTION, task=task)
        self._view = reply.observation
        return reply.observation

    def observe(self) -> Observation:
        if self._view is None:
            self._view = self._send("observe", _NO_ACTION).observation
        return self._view

    def act(self, action: Action) -> Observation:
        self._view = None  # an act's view carries its result: observe afresh after it
        return self._send("act", action).observation

    def advance(self) -> int:
        reply = self._send("advance", _NO_ACTION)
        self._view = reply.observation
        return reply.observation.step

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        reply = self._send("call_tool", ToolCall(name=name, arguments=arguments or {}))
        self._view = reply.observation.model_copy(update={"result": None})
        result = reply.observation.result
        if result is None:
            raise DeviceError(f"{self.device_id} answered call_tool {name} without a result")
        return result

    def device_state(self) -> dict[str, Any]:
        state = self._send("device_state", _NO_ACTION).device_state
        if state is None:
            raise DeviceError(f"{self.device_id} answered a device_state request without the "
                              f"state; upgrade its runner")
        return dict(state)

    def snapshot(self) -> Any:
        raise DeviceError(f"{self.device_id} is remote: it cannot be snapshotted")

    def restore(self, snapshot: Any) -> None:
        raise DeviceError(f"{self.device_id} is remote: it cannot be restored")

    def fork(self) -> RemoteDevice:
        raise DeviceError(f"{self.device_id} is remote: it cannot be forked")

    def close(self) -> None:
        """The runner owns the phone; nothing to release here."""

    # ---- internals -----------------------------------------------------------------------
    def _send(self, kind: str, action: Action, *, task: TaskInstance | None = None
              ) -> ObservationRecorded:
        if self._lost is not None:
            raise DeviceLost(f"{self.device_id} is lost for episode {self.episode_id}: "
                             f"{self._lost}")
        if self.episode_id is None:
            raise DeviceError(f"{self.device_id}: reset() starts an episode before any call")
        event = ActionRequested(
            event_id=uuid.uuid4().hex, source=SOURCE,
            correlation_id=self.correlation_id or self.episode_id, episode_id=self.episode_id,
            device_id=self.device_id, step=self._step, action=action, request=kind,
            task_id=task.task_id if task is not None else None,
            task_params=task_params_for(task) if task is not None else None)
        self._step += 1
        attempt = self._attempt
        try:
            reply = self.router.request(event, self.timeout_s)
        except DeviceLost as error:
            if attempt == self._attempt:
                self._lost = str(error)
            raise
        if isinstance(reply, DeviceFailed):
            if attempt == self._attempt:
                self._lost = f"{reply.reason}: {reply.message}"
            if reply.reason == "reset_failed":
                raise DeviceError(f"{self.device_id} could not reset: {reply.message}")
            raise DeviceLost(f"{self.device_id} failed ({reply.reason}): {reply.message}")
        return self._with_screen(reply)

    def _with_screen(self, reply: ObservationRecorded) -> ObservationRecorded:
        """The reply with its screen: one sent in full is kept for the answers that name it by
        step (`screen_as_step`: unchanged since then), which get it back here."""
        if reply.screen_as_step is None:
            self._screen = (reply.step, reply.observation.screen)
            return reply
        step, screen = self._screen
        if reply.observation.screen:
            self._lost = "answered with a screen and a reference to an earlier one"
            raise DeviceLost(f"{self.device_id} answered step {reply.step} of episode "
                             f"{self.episode_id} with a screen and screen_as_step "
                             f"{reply.screen_as_step}; send one or the other")
        if reply.screen_as_step != step:
            self._lost = f"answered with the screen of step {reply.screen_as_step}, not sent"
            raise DeviceLost(f"{self.device_id} answered step {reply.step} of episode "
                             f"{self.episode_id} with the screen of step {reply.screen_as_step}, "
                             f"but the last screen it sent was step {step}'s")
        observation = reply.observation.model_copy(update={"screen": screen})
        return reply.model_copy(update={"observation": observation, "screen_as_step": None})
