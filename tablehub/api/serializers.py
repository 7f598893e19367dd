"""Shapes of the API's requests and answers (for validation and the OpenAPI schema)."""

from __future__ import annotations

from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    class Body(serializers.Serializer):
        code = serializers.CharField()
        message = serializers.CharField()
        # DRF's serializer metaclass takes declared fields out of the class, so this does not
        # replace Serializer.fields; the stubs cannot express that.
        fields = serializers.DictField(required=False)  # type: ignore[assignment]

    error = Body()


class RoundBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField(help_text="the round's number at its table: 1, 2, ...")
    phase = serializers.CharField()
    config_version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    settled_at = serializers.DateTimeField(allow_null=True)
    deadline = serializers.DateTimeField(allow_null=True)


class TableStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    jurisdiction = serializers.CharField()
    mode = serializers.CharField()
    currency = serializers.CharField()
    boxes = serializers.IntegerField()
    is_open = serializers.BooleanField()
    config_version = serializers.IntegerField(allow_null=True)
    stations = serializers.IntegerField()
    round = RoundBriefSerializer(allow_null=True)


class ConfigInputSerializer(serializers.Serializer):
    """A new configuration version; every part is checked by tablehub/configuration.py."""

    rules = serializers.JSONField(help_text="scenario rules object; missing rules take defaults")
    limits = serializers.JSONField(help_text='{"main": ["1", "100"], "special": ["1", "25"]}')
    timers = serializers.JSONField(required=False, help_text='{"betting": 15, "decision": 15}')
    special_bets = serializers.JSONField(required=False, help_text="bet code -> paytable")
    chips = serializers.JSONField(required=False, help_text='["1", "5", "25"]')
    win_thresholds = serializers.JSONField(required=False, help_text='{"nice": "3", "big": "10"}')


class TableInputSerializer(serializers.Serializer):
    """A new table with its first configuration version (tablehub/setup.py)."""

    name = serializers.CharField(max_length=80)
    jurisdiction = serializers.CharField(help_text="the jurisdiction's code")
    boxes = serializers.IntegerField(required=False, default=3, min_value=1, max_value=9)
    currency = serializers.RegexField(r"^[A-Z]{3}$", required=False, default="USD")
    mode = serializers.ChoiceField(["dealer", "video"], required=False, default="dealer")
    shuffler = serializers.ChoiceField(
        ["continuous", "cut_card"], required=False, default="continuous"
    )
    config = ConfigInputSerializer()


class StationsInputSerializer(serializers.Serializer):
    """New stations: ``count`` of them named <prefix><n>, or these ``names``."""

    count = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    prefix = serializers.RegexField(r"^[-a-zA-Z0-9_]{1,20}$", required=False, default="s")
    names = serializers.ListField(
        child=serializers.CharField(max_length=40), required=False, max_length=1000
    )

    def validate(self, data):
        if ("count" in data) == ("names" in data):
            raise serializers.ValidationError("give count or names (one of them)")
        return data


class NewStationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    credential = serializers.CharField(help_text="shown this once; stored only as a hash")


class ReaderKeyInputSerializer(serializers.Serializer):
    key = serializers.CharField(
        required=False, min_length=16, max_length=200, help_text="default: a new random key"
    )


class ReaderKeySerializer(serializers.Serializer):
    reader_key = serializers.CharField(
        allow_null=True, help_text="the new key (shown this once), null when it was given"
    )


class ConfigSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    table = serializers.IntegerField(source="table_id")
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    rules = serializers.JSONField()
    limits = serializers.JSONField()
    timers = serializers.JSONField()
    special_bets = serializers.JSONField()
    chips = serializers.JSONField()
    win_thresholds = serializers.JSONField()


class JurisdictionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    approved_special_bets = serializers.JSONField()
    blackjack_pays = serializers.JSONField()
    max_splits = serializers.IntegerField()
    let_it_play_cap = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    max_decision_seconds = serializers.IntegerField()
    hit_on_timeout_allowed = serializers.BooleanField()
    disputes_allowed = serializers.BooleanField()
    dispute_window_seconds = serializers.IntegerField()
    min_rtp = serializers.DecimalField(max_digits=6, decimal_places=4, allow_null=True)
    stale_game_hours = serializers.IntegerField()
    required_rules = serializers.JSONField()
    # Declared fields leave the class (DRF's serializer metaclass), so this does not replace
    # Field.source; the stubs cannot express that.
    source = serializers.CharField()  # type: ignore[assignment]


class StationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    table = serializers.IntegerField(source="table_id")
    name = serializers.CharField()
    is_active = serializers.BooleanField()


class StationRoundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField(help_text="the round's number at its table: 1, 2, ...")
    table = serializers.IntegerField()
    phase = serializers.CharField()
    config_version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    settled_at = serializers.DateTimeField(allow_null=True)
    staked = serializers.CharField()
    returned = serializers.CharField()
    net = serializers.CharField(help_text="returned - staked, for the station")


class LedgerEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    round = serializers.IntegerField(source="round_id", allow_null=True)
    kind = serializers.CharField()
    amount = serializers.DecimalField(max_digits=14, decimal_places=2, coerce_to_string=True)
    key = serializers.CharField()
    created_at = serializers.DateTimeField()


def _meter_money(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=18, decimal_places=2, coerce_to_string=True, help_text=help_text
    )


class MetersSerializer(serializers.Serializer):
    """Soft meters (payouts/meters.py; docs/integrity.md, "Meters"): what the ledger moved,
    counted up since the first movement."""

    total_wagered = _meter_money("the stakes")
    total_won = _meter_money("the returns (stake and win), less those a void took back")
    games_played = serializers.IntegerField(help_text="settled rounds with a stake")
    games_won = serializers.IntegerField(help_text="settled rounds that returned more than staked")
    cash_in = _meter_money("the cash-ins")
    cash_out = _meter_money("the cash-outs")
    voided_stakes = _meter_money("the stakes voids gave back")
    tips = _meter_money("the tips to the dealer")
    house_losses = _meter_money("what voids and corrections took back beyond the credits")


class StationMetersSerializer(MetersSerializer):
    station = serializers.IntegerField()
    name = serializers.CharField()
    table = serializers.IntegerField()


class TableMetersSerializer(MetersSerializer):
    """A table's meters (the sums of its stations') and each station's."""

    table = serializers.IntegerField()
    name = serializers.CharField()
    stations = StationMetersSerializer(many=True)


class ReportRequestSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="ISO 8601, included")
    end = serializers.DateTimeField(help_text="ISO 8601, excluded")


class ReportJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    table = serializers.IntegerField(source="table_id")
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    status = serializers.CharField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    result = serializers.JSONField(allow_null=True)
