"""Celery tasks of the payouts app: long table reports and main-game par sheets."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from payouts.maingame.cache import cached_main_parsheet
from payouts.reports import table_report
from payouts.rtp import MAIN_PARSHEET_TASK
from rounds.engine import RuleSet
from tablehub.models import Report


@shared_task(acks_late=True)
def run_report(report_id: int) -> None:
    """Compute a requested table report and store it on its Report row."""
    report = Report.objects.select_related("table").filter(pk=report_id).first()
    if report is None or report.status != Report.Status.PENDING:
        return  # gone, or already done by an earlier delivery of this task
    try:
        report.result = table_report(report.table, report.start, report.end)
        report.status = Report.Status.DONE
    except Exception as exc:  # stored for whoever asked, and raised for the worker's log
        report.status, report.error = Report.Status.FAILED, f"{type(exc).__name__}: {exc}"
        report.finished_at = timezone.now()
        report.save(update_fields=["status", "error", "finished_at"])
        raise
    report.finished_at = timezone.now()
    report.save(update_fields=["status", "result", "finished_at"])


@shared_task(name=MAIN_PARSHEET_TASK, acks_late=True)
def compute_main_parsheet(rules: dict) -> None:
    """Compute a rule set's main-game par sheet into the disk cache (payouts/rtp.py, which
    sends this task by its name)."""
    cached_main_parsheet(RuleSet.from_dict(rules))
