"""Warming a main-game par sheet with a broker: payouts/rtp.py sends the Celery task by its
name (a service does not import the tasks above it), and that name is the task's."""

from payouts import rtp, tasks
from rounds.engine import RuleSet
from tablehub.celery import app


class Sent:
    def __init__(self) -> None:
        self.tasks: list[tuple[str, tuple]] = []

    def send_task(self, name: str, args: tuple) -> None:
        self.tasks.append((name, args))


def test_with_a_broker_the_main_sheet_is_warmed_by_the_celery_task(settings, monkeypatch, tmp_path):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.TABLEHUB_WARM_PARSHEETS = True
    monkeypatch.setenv("TABLEHUB_PARSHEET_CACHE", str(tmp_path))  # nothing on disk
    sent = Sent()
    monkeypatch.setattr(rtp, "current_app", sent)
    rules = RuleSet(decks=6)
    rtp.warm_main_sheet(rules)
    assert sent.tasks == [("payouts.tasks.compute_main_parsheet", (rules.to_dict(),))]


def test_the_task_sent_is_the_one_that_computes_the_sheet():
    task = app.tasks[rtp.MAIN_PARSHEET_TASK]  # what a worker runs for the name rtp sends
    assert task.name == "payouts.tasks.compute_main_parsheet"
    assert (task.run.__module__, task.run.__name__) == ("payouts.tasks", "compute_main_parsheet")
    assert task.run is tasks.compute_main_parsheet.run
