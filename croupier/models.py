"""Models of the croupier app: the supervisor alerts that card conservation raises
(croupier/conservation.py)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class CardAlert(models.Model):
    """A reader scan refused because the shoe cannot hold another copy of its card
    (``card_count_exceeded``): kept for the supervisor and the auditors. It names the card by
    its reader sequence number only (the card may have been read face down)."""

    table = models.ForeignKey("tablehub.Table", on_delete=models.PROTECT, related_name="+")
    shoe = models.ForeignKey("tablehub.Shoe", on_delete=models.PROTECT, related_name="alerts")
    round = models.ForeignKey(
        "rounds.Round", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reader_seq = models.PositiveIntegerField(help_text="the refused scan's sequence number")
    code = models.CharField(max_length=32)
    message = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"{self.table} shoe {self.shoe_id} reader card {self.reader_seq}: {self.code}"
