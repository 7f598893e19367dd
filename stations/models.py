"""Player stations: the terminals at a table, each with its own device credential."""

from __future__ import annotations

from django.db import models

from tablehub.tokens import check_token, hash_token


class Station(models.Model):
    table = models.ForeignKey("tablehub.Table", on_delete=models.CASCADE, related_name="stations")
    name = models.SlugField(max_length=40)
    credential = models.CharField(max_length=128, help_text="hash of the device credential")
    is_active = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "name"], name="unique_station_name")
        ]

    def __str__(self) -> str:
        return f"{self.table}/{self.name}"

    def set_credential(self, secret: str) -> None:
        self.credential = hash_token(secret)

    def check_credential(self, secret: str) -> bool:
        return check_token(secret, self.credential)


class PlayerSession(models.Model):
    """A player's time at a station, from cash-in to cash-out; the credit meter is the ledger."""

    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="sessions")
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.station} session {self.pk}"


class StationCommand(models.Model):
    """A client message already answered: a resent message (same client id) gets the same
    reply again and is not applied twice."""

    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="commands")
    client_id = models.CharField(max_length=64)
    reply = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["station", "client_id"], name="unique_client_id")
        ]

    def __str__(self) -> str:
        return f"{self.station} {self.client_id}"


class BetSlip(models.Model):
    """A station's chips on the open round, as groups in the order they were put down
    (one chip, a rebet, a double), so that undo takes back the last group."""

    round = models.ForeignKey("rounds.Round", on_delete=models.CASCADE, related_name="slips")
    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="slips")
    groups = models.JSONField(
        default=list, help_text='[[{"box": 1, "bet": "main", "amount": "5"}]]'
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "station"], name="one_slip_per_round")
        ]

    def __str__(self) -> str:
        return f"{self.station} slip for {self.round}"
