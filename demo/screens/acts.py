"""The main screen's acts on the run: a fault on the chosen worker, a task approved,
rejected or enqueued, a worker added (a part of `MainScreen`, demo/screens/main.py).

Each is one `Action` handed to the screen's `act`, which forks a playback if it must and
records it; the Session decides what it does.
"""

from core.sim.spec import WORKER_ACTIONS, AddWorker, Approve, Enqueue, Reject, WorkerState
from demo.controls import fault_now
from demo.i18n import tr, worker_name
from demo.screens.main_part import MainPart
from demo.widgets.task_table import TaskTable
from demo.widgets.worker_pane import WorkerPane


class Acts(MainPart):
    """The person's acts on workers and tasks."""

    def on_worker_pane_fault_requested(self, message: WorkerPane.FaultRequested) -> None:
        self.act(WORKER_ACTIONS[message.action](message.worker_id))

    def action_choose_worker(self) -> None:
        """The next worker becomes the one the fault keys act on."""
        ids = [w.id for w in self.shown_snapshot().workers]
        if not ids:
            self.notify(tr("no_worker", self.lang), severity="warning", timeout=3)
            return
        at = ids.index(self.chosen_worker) if self.chosen_worker in ids else -1
        self.chosen_worker = ids[(at + 1) % len(ids)]
        name = worker_name(self.chosen_worker, self.lang)
        self.notify(tr("chosen_worker", self.lang, name=name), timeout=4)
        self.changed()

    def action_fault(self, fault: str) -> None:
        """A fault's key on the chosen worker: what its word in the pane does. `u` restarts
        a dead worker and resumes a living one; `c` heals a cut network, or cuts it."""
        snap = self.shown_snapshot()
        worker = next((w for w in snap.workers if w.id == self.chosen_worker), None)
        if worker is None:
            self.notify(tr("no_worker", self.lang), severity="warning", timeout=3)
            return
        now = fault_now(
            fault, dead=worker.state == WorkerState.DEAD, partitioned=worker.partitioned
        )
        self.act(WORKER_ACTIONS[now.action](worker.id))

    def _waiting_task(self, what: str) -> str | None:
        tasks = self.shown_snapshot().tasks
        task = self.query_one("#tasks", TaskTable).waiting_selected(tasks)
        if task is None:
            self.notify(tr("no_waiting", self.lang, what=tr(what, self.lang)), severity="warning")
        return task

    def action_approve(self, task: str | None = None) -> None:
        task = task or self._waiting_task("approve")
        if task is not None:
            self.act(Approve(task))

    def action_reject(self, task: str | None = None) -> None:
        task = task or self._waiting_task("reject")
        if task is not None:
            self.act(Reject(task))

    def action_enqueue(self, kind: str = "ledger") -> None:
        session = self.session
        self.act(lambda: Enqueue(session.new_task_id(), kind=kind))

    def action_add_worker(self) -> None:
        session = self.session
        self.act(lambda: AddWorker(session.new_worker_id()))
